#include "tensor_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace kiln::cli {
namespace {

// Rows of classifier scores: [K] or [N,K] with a small batch N, floating point, K >= 5.
// Returns the number of rows (0 when the tensor does not look like scores).
int64_t score_rows(const Tensor& t) {
  constexpr int64_t kMaxRows = 8;  // more rows than this is not a batch of images to read
  if (!dtype_is_float(t.dtype())) return 0;
  const auto& s = t.shape();
  if (s.empty() || s.back() < 5) return 0;
  if (s.size() == 1) return 1;
  return s.size() == 2 && s[0] <= kMaxRows ? s[0] : 0;
}

std::string top5(const double* v, int64_t n) {
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  // NaN sorts last so it never hides a real score.
  auto greater = [&](int64_t a, int64_t b) {
    if (std::isnan(v[a])) return false;
    return std::isnan(v[b]) || v[a] > v[b];
  };
  std::partial_sort(idx.begin(), idx.begin() + 5, idx.end(), greater);
  std::string s = "top-5:";
  for (int i = 0; i < 5; ++i) s += fmt::format(" {}={:.5g}", idx[i], v[idx[i]]);
  return s;
}

}  // namespace

std::string summarize_tensor(const std::string& name, const Tensor& t) {
  std::string line = fmt::format("{}: {} {}", name, dtype_name(t.dtype()), shape_to_string(t.shape()));
  if (t.numel() == 0) return line + " (empty)";
  const Tensor d = t.to(DType::kFloat64);
  const double* v = d.data_as<double>();
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  int64_t nans = 0;
  for (int64_t i = 0; i < d.numel(); ++i) {
    if (std::isnan(v[i])) {
      ++nans;
      continue;
    }
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
    sum += v[i];
  }
  const int64_t counted = d.numel() - nans;
  if (counted > 0) {
    line += fmt::format("  min {:.6g}  max {:.6g}  mean {:.6g}", lo, hi, sum / static_cast<double>(counted));
  }
  if (nans) line += fmt::format("  ({} NaN)", nans);
  const int64_t rows = score_rows(t);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t k = t.shape().back();
    line += rows == 1 ? "\n  " + top5(v, k) : fmt::format("\n  [{}] {}", r, top5(v + r * k, k));
  }
  return line;
}

}  // namespace kiln::cli
