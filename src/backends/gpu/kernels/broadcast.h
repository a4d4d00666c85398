// Per-dimension strides that map an output element to its input elements (ONNX/numpy
// broadcasting, rank <= 8). Built on the host at layer build time with dimensions merged
// where every operand is contiguous across them, read by kernels per element.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#ifdef __CUDACC__
#define KILN_HD __host__ __device__ __forceinline__
#else
#define KILN_HD inline
#endif

namespace kiln::gpu::kern {

constexpr int kMaxDims = 8;

template <int K>
struct Broadcast {
  int rank = 0;
  int64_t dims[kMaxDims] = {};        // output dimensions, merged
  int64_t strides[K][kMaxDims] = {};  // element strides of each operand; 0 where broadcast

  // Element offsets of output element i in each operand.
  KILN_HD void offsets(int64_t i, int64_t (&off)[K]) const {
    for (int k = 0; k < K; ++k) off[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t q = i / dims[d];
      const int64_t c = i - q * dims[d];
      i = q;
      for (int k = 0; k < K; ++k) off[k] += c * strides[k][d];
    }
  }
};

// Fills b for output dims `dims` and each operand's element stride per output dim, merging
// dim d into d+1 where every operand steps over d exactly as over the whole of d+1; size-1
// dims disappear. False when the merged rank exceeds kMaxDims.
template <int K>
bool make_strided(const std::vector<int64_t>& dims, const std::vector<std::array<int64_t, K>>& st, Broadcast<K>* b) {
  std::vector<int64_t> md;
  std::vector<std::array<int64_t, K>> ms;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!md.empty()) {
      bool merge = true;
      for (int k = 0; k < K; ++k) merge = merge && ms.back()[k] == st[d][k] * dims[d];
      if (merge) {
        md.back() *= dims[d];
        ms.back() = st[d];
        continue;
      }
    }
    md.push_back(dims[d]);
    ms.push_back(st[d]);
  }
  if (md.size() > static_cast<size_t>(kMaxDims)) return false;
  b->rank = static_cast<int>(md.size());
  for (int d = 0; d < b->rank; ++d) {
    b->dims[d] = md[d];
    for (int k = 0; k < K; ++k) b->strides[k][d] = ms[d][k];
  }
  return true;
}

// Dense strides of a tensor of shape s.
inline std::vector<int64_t> dense_strides(const std::vector<int64_t>& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
  return st;
}

// For an output of shape `out` and operands of shapes `in` (right-aligned; each dim equal to
// the output's or 1): strides 0 where an operand is broadcast.
template <int K>
bool make_broadcast(const std::vector<int64_t>& out, const std::array<std::vector<int64_t>, K>& in,
                    Broadcast<K>* b) {
  const int r = static_cast<int>(out.size());
  std::vector<std::array<int64_t, K>> st(r);
  for (int k = 0; k < K; ++k) {
    const int ir = static_cast<int>(in[k].size());
    int64_t s = 1;
    for (int d = r - 1; d >= 0; --d) {
      const int id = d - (r - ir);
      const int64_t len = id >= 0 ? in[k][id] : 1;
      st[d][k] = (len == 1 && out[d] != 1) ? 0 : s;
      s *= len;
    }
  }
  return make_strided<K>(out, st, b);
}

}  // namespace kiln::gpu::kern
