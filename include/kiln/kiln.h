// kiln's public C++ API: everything an embedding application needs.
#pragma once
#include "kiln/build.h"
#include "kiln/dtype.h"
#include "kiln/session.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
