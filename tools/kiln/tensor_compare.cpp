#include "tensor_compare.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace kiln::cli {

CompareResult compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  CompareResult r;
  if (actual.dtype() != expected.dtype()) {
    r.ok = false;
    r.why = fmt::format("dtype {} but expected {}", dtype_name(actual.dtype()), dtype_name(expected.dtype()));
    return r;
  }
  if (actual.shape() != expected.shape()) {
    r.ok = false;
    r.why = fmt::format("shape {} but expected {}", shape_to_string(actual.shape()), shape_to_string(expected.shape()));
    return r;
  }
  const Tensor a64 = actual.to(DType::kFloat64), e64 = expected.to(DType::kFloat64);
  const double* av = a64.data_as<double>();
  const double* ev = e64.data_as<double>();
  if (!dtype_is_float(actual.dtype())) {
    // Integers and bools compare exactly (bitwise, so 64-bit values beyond 2^53 count too).
    const size_t w = dtype_size(actual.dtype());
    const auto* ab = static_cast<const char*>(actual.data());
    const auto* eb = static_cast<const char*>(expected.data());
    for (int64_t i = 0; i < actual.numel(); ++i) {
      if (std::memcmp(ab + i * w, eb + i * w, w) != 0) {
        r.ok = false;
        r.why = fmt::format("element {}: {} but expected {}", i, av[i], ev[i]);
        return r;
      }
    }
    return r;
  }
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = av[i], e = ev[i];
    if (std::isnan(e) || std::isnan(a)) {
      if (std::isnan(e) != std::isnan(a) && r.ok) {
        r.ok = false;
        r.why = fmt::format("element {}: {} but expected {}", i, a, e);
      }
      continue;
    }
    if (std::isinf(e) || std::isinf(a)) {
      if (a != e && r.ok) {
        r.ok = false;
        r.why = fmt::format("element {}: {} but expected {}", i, a, e);
      }
      continue;
    }
    const double err = std::fabs(a - e);
    r.max_abs_err = std::max(r.max_abs_err, err);
    if (e != 0) r.max_rel_err = std::max(r.max_rel_err, err / std::fabs(e));
    if (err > atol + rtol * std::fabs(e) && r.ok) {
      r.ok = false;
      r.why = fmt::format("element {}: {} but expected {} (|diff| {:.3g} > atol {} + rtol {} * |expected|)", i, a,
                          e, err, atol, rtol);
    }
  }
  return r;
}

}  // namespace kiln::cli
