// Session: load a model, set inputs, run, read outputs.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

struct SessionOptions {
  // "auto" picks the best backend present (the GPU when there is one), or "cpu".
  std::string backend = "auto";
};

// Name, element type and shape of a model input or output. A dynamic dimension is -1 and
// its symbolic name (if the model gives one) is in `dim_names`.
struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;
  bool has_shape = false;
};

class Session {
 public:
  virtual ~Session() = default;

  // Loads an ONNX model file. On failure `*session` is left empty and the Status says why.
  static Status load(const std::string& path, const SessionOptions& options,
                     std::unique_ptr<Session>* session);

  virtual const std::vector<TensorInfo>& inputs() const = 0;
  virtual const std::vector<TensorInfo>& outputs() const = 0;
  virtual std::string backend() const = 0;

  // Runs the model on `inputs` (by name); fills `outputs` in the order of outputs().
  virtual Status run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) = 0;
};

}  // namespace kiln
