// CPU Einsum. Every operand is first reduced to the labels still needed (which also takes
// diagonals of repeated labels), then operands are contracted pairwise, left to right, each
// contraction laid out as a batched GEMM [batch, M, K] x [batch, K, N]. One strided
// "rearrange" primitive does all permuting, diagonal-taking, broadcasting and summing.
#include <algorithm>
#include <map>
#include <set>

#include "backends/cpu/matmul.h"
#include "core/error.h"
#include "ops/matmul.h"

namespace kiln::cpu {
namespace {

using LabelSizes = std::map<int, int64_t>;

template <class C>
struct Operand {
  std::vector<C> data;     // contiguous, row-major
  std::vector<int> labels;  // one per dim, unique after the first reduction
  std::vector<int64_t> dims;
};

bool contains(const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); }

// Returns src laid out as `target` labels (sizes from `sizes`), summing every src label not
// in `target`. A label repeated in src walks the diagonal; a size-1 src dim, or a target label
// src lacks, broadcasts.
template <class C>
Operand<C> rearrange(const Operand<C>& src, const std::vector<int>& target, const LabelSizes& sizes) {
  std::map<int, int64_t> stride;
  int64_t s = 1;
  for (int d = static_cast<int>(src.dims.size()) - 1; d >= 0; --d) {
    if (src.dims[d] != 1) stride[src.labels[d]] += s;
    s *= src.dims[d];
  }
  std::vector<int> loop = target;  // target labels, then the summed ones
  for (int l : src.labels) {
    if (!contains(loop, l)) loop.push_back(l);
  }
  std::vector<int64_t> loop_dims, loop_strides;
  for (int l : loop) {
    loop_dims.push_back(sizes.at(l));
    loop_strides.push_back(stride.count(l) ? stride[l] : 0);
  }
  Operand<C> out;
  out.labels = target;
  out.dims.assign(loop_dims.begin(), loop_dims.begin() + static_cast<int64_t>(target.size()));
  const int64_t out_count = Tensor::numel_of(out.dims);
  out.data.assign(static_cast<size_t>(out_count), C(0));
  const int64_t total = Tensor::numel_of(loop_dims);
  if (total == 0) return out;
  const int64_t per_out = total / out_count;  // summed elements per output element
  std::vector<int64_t> idx(loop.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < total; ++i) {
    out.data[static_cast<size_t>(i / per_out)] += src.data[static_cast<size_t>(off)];
    for (int d = static_cast<int>(loop.size()) - 1; d >= 0; --d) {
      off += loop_strides[d];
      if (++idx[d] < loop_dims[d]) break;
      off -= loop_strides[d] * loop_dims[d];
      idx[d] = 0;
    }
  }
  return out;
}

int64_t product(const std::vector<int>& labels, const LabelSizes& sizes) {
  int64_t p = 1;
  for (int l : labels) p *= sizes.at(l);
  return p;
}

// Contracts x and y over their shared labels that `keep` does not list.
template <class C>
Operand<C> contract(const Operand<C>& x, const Operand<C>& y, const std::set<int>& keep, const LabelSizes& sizes) {
  std::vector<int> batch, m, k, n;
  for (int l : x.labels) {
    if (contains(y.labels, l)) (keep.count(l) ? batch : k).push_back(l);
    else if (keep.count(l)) m.push_back(l);
  }
  for (int l : y.labels) {
    if (!contains(x.labels, l) && keep.count(l)) n.push_back(l);
  }
  auto cat = [](std::vector<int> a, const std::vector<int>& b, const std::vector<int>& c) {
    a.insert(a.end(), b.begin(), b.end());
    a.insert(a.end(), c.begin(), c.end());
    return a;
  };
  const Operand<C> xr = rearrange(x, cat(batch, m, k), sizes);
  const Operand<C> yr = rearrange(y, cat(batch, k, n), sizes);
  const int64_t nb = product(batch, sizes), nm = product(m, sizes), nk = product(k, sizes), nn = product(n, sizes);
  Operand<C> out;
  out.labels = cat(batch, m, n);
  for (int l : out.labels) out.dims.push_back(sizes.at(l));
  out.data.assign(static_cast<size_t>(nb * nm * nn), C(0));
  for (int64_t b = 0; b < nb; ++b) {
    gemm<C>(false, false, nm, nn, nk, C(1), xr.data.data() + b * nm * nk, yr.data.data() + b * nk * nn, C(0),
            out.data.data() + b * nm * nn);
  }
  return out;
}

template <class T>
Status run_einsum(KernelContext& ctx) {
  using C = compute_t<T>;
  std::vector<int> ranks;
  for (int i = 0; i < ctx.num_inputs(); ++i) ranks.push_back(ctx.input(i).rank());
  ops::EinsumSpec spec;
  KILN_RETURN_IF_ERROR(ops::parse_einsum(ctx.node().attr_s("equation", ""), ranks, &spec));

  LabelSizes sizes;
  std::vector<Operand<C>> ops(spec.inputs.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const Tensor& t = ctx.input(static_cast<int>(i));
    ops[i].labels = spec.inputs[i];
    ops[i].dims = t.shape();
    const ComputeData<T> cd(t);
    ops[i].data.assign(cd.data(), cd.data() + t.numel());
    for (size_t d = 0; d < t.shape().size(); ++d) {
      int64_t& sz = sizes.try_emplace(spec.inputs[i][d], t.dim(static_cast<int>(d))).first->second;
      if (sz == 1) sz = t.dim(static_cast<int>(d));
    }
  }
  // Labels needed after operand i: the output's and those of operands after i.
  auto needed_after = [&](size_t i) {
    std::set<int> keep(spec.output.begin(), spec.output.end());
    for (size_t j = i + 1; j < ops.size(); ++j) keep.insert(spec.inputs[j].begin(), spec.inputs[j].end());
    return keep;
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    // Keep the labels some other operand or the output uses, once each (taking diagonals).
    std::set<int> others(spec.output.begin(), spec.output.end());
    for (size_t j = 0; j < ops.size(); ++j) {
      if (j != i) others.insert(spec.inputs[j].begin(), spec.inputs[j].end());
    }
    std::vector<int> kept;
    for (int l : ops[i].labels) {
      if (others.count(l) && !contains(kept, l)) kept.push_back(l);
    }
    ops[i] = rearrange(ops[i], kept, sizes);
  }
  Operand<C> acc = std::move(ops[0]);
  for (size_t i = 1; i < ops.size(); ++i) acc = contract(acc, ops[i], needed_after(i), sizes);
  acc = rearrange(acc, spec.output, sizes);

  Tensor& y = ctx.alloc_output(0);
  KILN_ASSERT(y.numel() == static_cast<int64_t>(acc.data.size()), "Einsum produced {} values for {}",
              acc.data.size(), shape_to_string(y.shape()));
  store<T>(acc.data, &y);
  return Status::OK();
}

}  // namespace

void register_einsum_kernels(KernelRegistry& r) {
  r.add("Einsum", [](KernelContext& ctx) {
    Status st = unsupported("dtype {} is not supported", dtype_name(ctx.input(0).dtype()));
    dispatch<NumericTypes>(ctx.input(0).dtype(), [&](auto tag) { st = run_einsum<typename decltype(tag)::type>(ctx); });
    return st;
  });
}

}  // namespace kiln::cpu
