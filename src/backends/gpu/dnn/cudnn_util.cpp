#include "backends/gpu/dnn/cudnn_util.h"

#include "ops/conv_pool.h"

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

ConvGeometry conv_geometry(const std::vector<int64_t>& x, const std::vector<int64_t>& w, const std::vector<int64_t>& y,
                           const ops::Window& win) {
  ConvGeometry g{{x.begin(), x.end()}, {w.begin(), w.end()}, {y.begin(), y.end()}, {}, {}, {}};
  for (int d = 0; d < win.nsp; ++d) {
    g.pads.push_back(static_cast<int>(win.pad_begin(d)));
    g.strides.push_back(static_cast<int>(win.strides[d]));
    g.dilations.push_back(static_cast<int>(win.dilations[d]));
  }
  if (win.nsp == 1) {
    for (std::vector<int>* dims : {&g.x, &g.w, &g.y}) dims->insert(dims->begin() + 2, 1);
    g.pads.insert(g.pads.begin(), 0);
    g.strides.insert(g.strides.begin(), 1);
    g.dilations.insert(g.dilations.begin(), 1);
  }
  return g;
}

cudnnMathType_t set_conv_descriptor(cudnnConvolutionDescriptor_t d, const ConvGeometry& g, int64_t group,
                                    DType x_dtype, const std::string& precision) {
  KILN_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(d, static_cast<int>(g.pads.size()), g.pads.data(), g.strides.data(),
                                                   g.dilations.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  KILN_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d, static_cast<int>(group)));
  const bool strict_fp32 = x_dtype == DType::kFloat32 && precision != "tf32";
  const cudnnMathType_t math = x_dtype != DType::kFloat32 ? CUDNN_TENSOR_OP_MATH
                               : strict_fp32              ? CUDNN_FMA_MATH
                                                          : CUDNN_DEFAULT_MATH;  // DEFAULT allows TF32 on sm_80+
  KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(d, math));
  return math;
}

}  // namespace kiln::gpu::dnn
