// RAII owners of cuDNN descriptors and the dtype mapping, shared by the cuDNN layers.
#pragma once
#include <vector>

#include "backends/gpu/check.h"
#include "kiln/dtype.h"

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

}  // namespace kiln::gpu::dnn
