#include "core/dispatch.h"
#include "core/error.h"
#include "kiln/tensor.h"

namespace kiln {

Tensor Tensor::to(DType t) const {
  if (t == dtype_) return *this;
  Tensor out(t, shape_);
  const bool ok = dispatch<AllTypes>(dtype_, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    dispatch<AllTypes>(t, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* src = data_as<From>();
      To* dst = out.data_as<To>();
      for (int64_t i = 0; i < numel(); ++i) dst[i] = convert<To>(src[i]);
    });
  });
  KILN_ASSERT(ok, "cannot convert {} to {}", dtype_name(dtype_), dtype_name(t));
  return out;
}

}  // namespace kiln
