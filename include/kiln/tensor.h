// Tensor: a dense, row-major, host-memory array with shared storage.
// Copies share the buffer; `clone()` makes a deep copy.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/dtype.h"

namespace kiln {

class Tensor {
 public:
  Tensor() = default;
  // Allocates zero-filled storage for `shape`.
  Tensor(DType dtype, std::vector<int64_t> shape);
  // Allocates without zero-filling, for callers that overwrite every byte (loading weights).
  static Tensor uninitialized(DType dtype, std::vector<int64_t> shape);

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const { return shape_.at(i < 0 ? i + rank() : i); }
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }

  void* data() { return storage_.get(); }
  const void* data() const { return storage_.get(); }
  template <class T>
  T* data_as() { return static_cast<T*>(data()); }
  template <class T>
  const T* data_as() const { return static_cast<const T*>(data()); }

  // Same storage, new shape with the same element count.
  Tensor reshaped(std::vector<int64_t> shape) const;
  Tensor clone() const;
  // Element-wise conversion to another dtype (floats round to nearest even, fp8 saturates).
  Tensor to(DType t) const;

  static int64_t numel_of(const std::vector<int64_t>& shape);

 private:
  Tensor(DType dtype, std::vector<int64_t> shape, bool zero_fill);

  DType dtype_ = DType::kUndefined;
  std::vector<int64_t> shape_;
  std::shared_ptr<std::byte[]> storage_;
};

std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace kiln
