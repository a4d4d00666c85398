#include "backends/gpu/dnn/cudnn_util.h"

namespace kiln::gpu::dnn {

bool cudnn_dtype(DType t, cudnnDataType_t* out) {
  switch (t) {
    case DType::kFloat32: *out = CUDNN_DATA_FLOAT; return true;
    case DType::kFloat16: *out = CUDNN_DATA_HALF; return true;
    case DType::kBFloat16: *out = CUDNN_DATA_BFLOAT16; return true;
    default: return false;
  }
}

void set_tensor(cudnnTensorDescriptor_t d, cudnnDataType_t t, const std::vector<int>& dims, bool channels_last) {
  const int nb = static_cast<int>(dims.size());
  std::vector<int> strides(nb);
  if (!channels_last) {
    int s = 1;
    for (int i = nb - 1; i >= 0; --i) {
      strides[i] = s;
      s *= dims[i];
    }
  } else {
    // Memory order N, spatial..., C.
    int s = 1;
    strides[1] = s;
    s *= dims[1];
    for (int i = nb - 1; i >= 2; --i) {
      strides[i] = s;
      s *= dims[i];
    }
    strides[0] = s;
  }
  KILN_CUDNN_CHECK(cudnnSetTensorNdDescriptor(d, t, nb, dims.data(), strides.data()));
}

}  // namespace kiln::gpu::dnn
