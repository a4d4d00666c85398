// Conversion between ONNX TensorProto and kiln Tensors (typed fields, raw_data and external data).
#pragma once
#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace onnx {
class TensorProto;
}

namespace kiln::onnx_io {

// Reads a TensorProto. `base_dir` resolves external data locations (the model's folder).
Status tensor_from_proto(const onnx::TensorProto& p, const std::string& base_dir, Tensor* out);
void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* p);

}  // namespace kiln::onnx_io
