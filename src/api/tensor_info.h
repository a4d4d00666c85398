// IR value -> public TensorInfo (name, dtype, shape with -1 and names for dynamic dims).
#pragma once
#include "ir/graph.h"
#include "kiln/session.h"

namespace kiln {

TensorInfo tensor_info_of(const ir::Value& v);

}  // namespace kiln
