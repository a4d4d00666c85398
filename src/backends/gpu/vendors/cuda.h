// The one place kiln's GPU code includes the vendor runtime. Kernels and layers are written
// against CUDA names; a HIP build maps them here (vendors/hip.h), never by forking sources.
#pragma once
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cublasLt.h>
#include <cudnn.h>
