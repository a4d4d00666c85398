// Reading and writing tensors in the files users and tests exchange: NumPy .npy and
// ONNX TensorProto .pb (the format of ONNX backend-test data).
#pragma once
#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

// Reads a .npy or .pb file (chosen by extension). `name`, if given, receives the tensor
// name stored in a .pb file (empty for .npy).
Status read_tensor_file(const std::string& path, Tensor* out, std::string* name = nullptr);
Status write_npy(const std::string& path, const Tensor& t);
Status write_pb(const std::string& path, const Tensor& t, const std::string& name);

}  // namespace kiln
