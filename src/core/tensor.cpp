#include "kiln/tensor.h"

#include <cstring>
#include <new>

#include "core/error.h"

namespace kiln {
namespace {

// 64-byte alignment so vectorized kernels (and a later pinned-copy path) may assume it.
constexpr size_t kAlign = 64;

std::shared_ptr<std::byte[]> allocate(size_t nbytes, bool zero_fill) {
  const size_t padded = (nbytes + kAlign - 1) / kAlign * kAlign;
  auto* p = static_cast<std::byte*>(::operator new[](padded == 0 ? kAlign : padded, std::align_val_t(kAlign)));
  if (zero_fill) std::memset(p, 0, padded == 0 ? kAlign : padded);
  return std::shared_ptr<std::byte[]>(p, [](std::byte* q) { ::operator delete[](q, std::align_val_t(kAlign)); });
}

}  // namespace

int64_t Tensor::numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : Tensor(dtype, std::move(shape), true) {}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape, bool zero_fill) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_) KILN_ASSERT(d >= 0, "negative dimension in {}", shape_to_string(shape_));
  storage_ = allocate(nbytes(), zero_fill);
}

Tensor Tensor::uninitialized(DType dtype, std::vector<int64_t> shape) { return Tensor(dtype, std::move(shape), false); }

int64_t Tensor::numel() const { return numel_of(shape_); }

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  KILN_ASSERT(numel_of(shape) == numel(), "reshape {} -> {}", shape_to_string(shape_), shape_to_string(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = uninitialized(dtype_, shape_);
  if (nbytes() > 0) std::memcpy(t.data(), data(), nbytes());
  return t;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace kiln
