#include "serve/batch_tensors.h"

#include <cstring>

namespace kiln::serve {
namespace {

// Bytes of one dim-0 row of a tensor of this shape.
size_t row_bytes(const Tensor& t) {
  auto shape = t.shape();
  shape[0] = 1;
  return static_cast<size_t>(Tensor::numel_of(shape)) * dtype_size(t.dtype());
}

}  // namespace

Tensor concat_rows(const std::vector<const Tensor*>& parts) {
  std::vector<int64_t> shape = parts.front()->shape();
  shape[0] = 0;
  for (const Tensor* p : parts) shape[0] += p->dim(0);
  Tensor out = Tensor::uninitialized(parts.front()->dtype(), shape);
  auto* dst = static_cast<std::byte*>(out.data());
  for (const Tensor* p : parts) {
    std::memcpy(dst, p->data(), p->nbytes());
    dst += p->nbytes();
  }
  return out;
}

bool split_rows(const Tensor& batch, const std::vector<int64_t>& rows, std::vector<Tensor>* pieces) {
  int64_t total = 0;
  for (int64_t r : rows) total += r;
  if (batch.rank() == 0 || batch.dim(0) != total) return false;
  const size_t stride = row_bytes(batch);
  const auto* src = static_cast<const std::byte*>(batch.data());
  pieces->clear();
  for (int64_t r : rows) {
    std::vector<int64_t> shape = batch.shape();
    shape[0] = r;
    Tensor piece = Tensor::uninitialized(batch.dtype(), shape);
    std::memcpy(piece.data(), src, piece.nbytes());
    src += static_cast<size_t>(r) * stride;
    pieces->push_back(std::move(piece));
  }
  return true;
}

}  // namespace kiln::serve
