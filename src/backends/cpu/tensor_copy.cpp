#include "backends/cpu/tensor_copy.h"

#include <algorithm>
#include <cstring>

#include "core/dispatch.h"
#include "core/error.h"

namespace kiln::cpu {
namespace {

// Calls f(Tag<U>{}) with an unsigned integer type U of `size` bytes.
template <class F>
void dispatch_by_size(size_t size, F&& f) {
  switch (size) {
    case 1:
      f(Tag<uint8_t>{});
      break;
    case 2:
      f(Tag<uint16_t>{});
      break;
    case 4:
      f(Tag<uint32_t>{});
      break;
    case 8:
      f(Tag<uint64_t>{});
      break;
    default:
      KILN_ASSERT(false, "no copy loop for {}-byte elements", size);
  }
}

template <class U>
class Gatherer {
 public:
  Gatherer(const U* in, U* out, const AxisOffsets& offsets, U fill)
      : in_(in), out_(out), off_(offsets), fill_(fill) {
    // block_[k]: elements of the output under one index of axis k-1.
    block_.assign(off_.size() + 1, 1);
    for (size_t k = off_.size(); k-- > 0;) block_[k] = block_[k + 1] * static_cast<int64_t>(off_[k].size());
    const auto& last = off_.back();
    contiguous_last_ = last[0] >= 0;
    for (size_t i = 1; i < last.size() && contiguous_last_; ++i)
      contiguous_last_ = last[i] == last[0] + int64_t(i);
  }

  void run(size_t axis, int64_t base) {
    const auto& o = off_[axis];
    if (axis + 1 == off_.size()) {
      if (contiguous_last_) {
        std::memcpy(out_, in_ + base + o[0], o.size() * sizeof(U));
        out_ += o.size();
      } else {
        for (int64_t x : o) *out_++ = x < 0 ? fill_ : in_[base + x];
      }
      return;
    }
    for (int64_t x : o) {
      if (x < 0) {
        out_ = std::fill_n(out_, block_[axis + 1], fill_);
      } else {
        run(axis + 1, base + x);
      }
    }
  }

 private:
  const U* in_;
  U* out_;
  const AxisOffsets& off_;
  U fill_;
  std::vector<int64_t> block_;
  bool contiguous_last_ = false;
};

}  // namespace

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) s[k - 1] = s[k] * shape[k];
  return s;
}

void gather_axes(const Tensor& in, const AxisOffsets& offsets, const void* fill, Tensor* out) {
  KILN_ASSERT(static_cast<int>(offsets.size()) == out->rank(), "offsets for rank {} but output has rank {}",
              offsets.size(), out->rank());
  if (out->numel() == 0) return;
  dispatch_by_size(dtype_size(in.dtype()), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U fill_value{};
    if (fill) std::memcpy(&fill_value, fill, sizeof(U));
    if (offsets.empty()) {
      *out->data_as<U>() = *in.data_as<U>();
      return;
    }
    Gatherer<U>(in.data_as<U>(), out->data_as<U>(), offsets, fill_value).run(0, 0);
  });
}

void fill_elements(const void* value, Tensor* out) {
  dispatch_by_size(dtype_size(out->dtype()), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U v;
    std::memcpy(&v, value, sizeof(U));
    std::fill_n(out->data_as<U>(), out->numel(), v);
  });
}

AxisOffsets transpose_offsets(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& perm) {
  const std::vector<int64_t> strides = strides_of(in_shape);
  AxisOffsets off(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) {
    for (int64_t i = 0; i < in_shape[perm[k]]; ++i) off[k].push_back(i * strides[perm[k]]);
  }
  return off;
}

AxisOffsets identity_offsets(const std::vector<int64_t>& shape) {
  std::vector<int64_t> perm(shape.size());
  for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int64_t>(k);
  return transpose_offsets(shape, perm);
}

}  // namespace kiln::cpu
