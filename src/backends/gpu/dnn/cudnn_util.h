// RAII owners of cuDNN descriptors and the dtype mapping, shared by the cuDNN layers.
#pragma once
#include <string>
#include <vector>

#include "backends/gpu/check.h"
#include "kiln/dtype.h"

namespace kiln::ops {
struct Window;
}

namespace kiln::gpu::dnn {

// CUDNN_DATA_FLOAT / HALF / BFLOAT16; false for types kiln does not run through cuDNN.
bool cudnn_dtype(DType t, cudnnDataType_t* out);

template <class H, cudnnStatus_t (*Create)(H*), cudnnStatus_t (*Destroy)(H)>
class Descriptor {
 public:
  Descriptor() { KILN_CUDNN_CHECK(Create(&h_)); }
  ~Descriptor() { Destroy(h_); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  H get() const { return h_; }
  operator H() const { return h_; }  // NOLINT(google-explicit-constructor): pass straight to cuDNN

 private:
  H h_ = nullptr;
};

using TensorDescriptor = Descriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDescriptor = Descriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDescriptor =
    Descriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;
using ActivationDescriptor =
    Descriptor<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor, cudnnDestroyActivationDescriptor>;

// Sets a packed tensor descriptor from logical dims (N, C, spatial...) for memory laid out
// channels-first (NCHW) or channels-last (NHWC).
void set_tensor(cudnnTensorDescriptor_t d, cudnnDataType_t t, const std::vector<int>& dims, bool channels_last);

// One convolution's dims as cuDNN takes them: X, W, Y (logical N, C, spatial...) and per
// spatial dim the begin pad, stride and dilation. cuDNN wants at least 2 spatial dims, so a
// 1-D problem becomes a 2-D one of height 1.
struct ConvGeometry {
  std::vector<int> x, w, y, pads, strides, dilations;
};
ConvGeometry conv_geometry(const std::vector<int64_t>& x, const std::vector<int64_t>& w, const std::vector<int64_t>& y,
                           const ops::Window& win);

// Sets `d` to cross-correlation over `g` with float accumulation, `group` groups, and the math
// type `precision` allows for `x_dtype` tensors: tensor cores for 16-bit, FMA only for strict
// fp32 (precision fp32), default (TF32 on sm_80+) for tf32. Returns that math type
// (CUDNN_FMA_MATH exactly when strict fp32).
cudnnMathType_t set_conv_descriptor(cudnnConvolutionDescriptor_t d, const ConvGeometry& g, int64_t group, DType x_dtype,
                         const std::string& precision);

}  // namespace kiln::gpu::dnn
