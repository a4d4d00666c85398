// CPU RMSNormalization, RotaryEmbedding and Swish. Math in double (float for fp16/bf16
// inputs' storage is widened), results converted back to the storage type.
#include <cmath>

#include "backends/cpu/kernel.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/shape_util.h"

namespace kiln::cpu {

namespace {

// Y = X / sqrt(mean(X^2 over dims axis..) + epsilon) * scale, scale broadcast to those dims.
Status run_rms_norm(KernelContext& ctx) {
  const Tensor x = ctx.input(0).to(DType::kFloat64);
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(ops::normalize_axis(ctx.node().attr_i("axis", -1), x.rank(), &axis));
  const std::vector<int64_t> norm_shape(x.shape().begin() + axis, x.shape().end());
  std::vector<int64_t> bshape;
  KILN_RETURN_IF_ERROR(ops::broadcast_shapes({norm_shape, ctx.input(1).shape()}, &bshape));
  KILN_ENSURE(bshape == norm_shape, "scale {} does not broadcast to the normalized shape {}",
              shape_to_string(ctx.input(1).shape()), shape_to_string(norm_shape));
  // Expand scale to one value per normalized element (right-aligned numpy broadcasting).
  const Tensor sc = ctx.input(1).to(DType::kFloat64);
  const int64_t inner = Tensor::numel_of(norm_shape);
  std::vector<double> scale(static_cast<size_t>(inner));
  const int off = static_cast<int>(norm_shape.size()) - sc.rank();
  for (int64_t i = 0; i < inner; ++i) {
    int64_t rem = i, src = 0, stride = 1;
    for (int d = static_cast<int>(norm_shape.size()) - 1; d >= 0; --d) {
      const int64_t idx = rem % norm_shape[d];
      rem /= norm_shape[d];
      if (d >= off) {
        const int64_t sd = sc.dim(d - off);
        if (sd != 1) src += idx * stride;
        stride *= sd;
      }
    }
    scale[i] = sc.data_as<double>()[src];
  }
  const double eps = ctx.node().attr_f("epsilon", 1e-5f);
  Tensor y(DType::kFloat64, x.shape());
  const double* xv = x.data_as<double>();
  double* yv = y.data_as<double>();
  const int64_t outer = inner == 0 ? 0 : x.numel() / inner;
  for (int64_t o = 0; o < outer; ++o) {
    double ss = 0;
    for (int64_t i = 0; i < inner; ++i) ss += xv[o * inner + i] * xv[o * inner + i];
    const double r = 1.0 / std::sqrt(ss / static_cast<double>(inner) + eps);
    for (int64_t i = 0; i < inner; ++i) yv[o * inner + i] = xv[o * inner + i] * r * scale[i];
  }
  ctx.set_output(0, y.to(ctx.input(1).dtype()));
  return Status::OK();
}

// Y = X * sigmoid(alpha * X).
Status run_swish(KernelContext& ctx) {
  const Tensor x = ctx.input(0).to(DType::kFloat64);
  const double alpha = ctx.node().attr_f("alpha", 1.0f);
  Tensor y(DType::kFloat64, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.data_as<double>()[i];
    y.data_as<double>()[i] = v / (1.0 + std::exp(-alpha * v));
  }
  ctx.set_output(0, y.to(ctx.input(0).dtype()));
  return Status::OK();
}

// Rotates the first rotary_embedding_dim features of each head by the cached angles of its
// position. X is [batch, heads, seq, head] or [batch, seq, heads*head]; the caches are
// [max_pos, rot/2] indexed by position_ids [batch, seq], or [batch, seq, rot/2] without them.
Status run_rotary_embedding(KernelContext& ctx) {
  const Tensor x = ctx.input(0).to(DType::kFloat64);
  const Tensor cosc = ctx.input(1).to(DType::kFloat64), sinc = ctx.input(2).to(DType::kFloat64);
  const bool four_d = x.rank() == 4;
  const int64_t batch = x.dim(0), seq = four_d ? x.dim(2) : x.dim(1);
  const int64_t heads = four_d ? x.dim(1) : ctx.node().attr_i("num_heads", 0);
  KILN_ENSURE(heads > 0 && (four_d || x.dim(2) % heads == 0), "num_heads {} does not divide the hidden size",
              heads);
  const int64_t head = four_d ? x.dim(3) : x.dim(2) / heads;
  int64_t rot = ctx.node().attr_i("rotary_embedding_dim", 0);
  if (rot == 0) rot = head;
  KILN_ENSURE(rot <= head && rot % 2 == 0, "rotary_embedding_dim {} must be even and <= head size {}", rot, head);
  const int64_t half = rot / 2, row = cosc.dim(-1);
  KILN_ENSURE(row >= half && sinc.dim(-1) == row, "cos/sin caches must have >= {} columns", half);
  std::vector<int64_t> pos;
  if (ctx.has_input(3)) {
    KILN_RETURN_IF_ERROR(ops::tensor_to_ints(ctx.input(3), &pos));
    KILN_ENSURE(static_cast<int64_t>(pos.size()) == batch * seq || static_cast<int64_t>(pos.size()) == seq,
                "position_ids has {} values, expected {}", pos.size(), batch * seq);
  }
  const int64_t cache_rows = cosc.numel() / row;
  const bool interleaved = ctx.node().attr_i("interleaved", 0) != 0;
  Tensor y = x.clone();
  const double* xv = x.data_as<double>();
  double* yv = y.data_as<double>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t r = pos.empty() ? b * seq + s : pos[pos.size() == static_cast<size_t>(seq) ? s : b * seq + s];
      KILN_ENSURE(r >= 0 && r < cache_rows, "position {} is outside the caches ({} rows)", r, cache_rows);
      const double* c = cosc.data_as<double>() + r * row;
      const double* sn = sinc.data_as<double>() + r * row;
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t base = four_d ? ((b * heads + h) * seq + s) * head : ((b * seq + s) * heads + h) * head;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t i1 = base + (interleaved ? 2 * i : i), i2 = base + (interleaved ? 2 * i + 1 : i + half);
          yv[i1] = c[i] * xv[i1] - sn[i] * xv[i2];
          yv[i2] = sn[i] * xv[i1] + c[i] * xv[i2];
        }
      }
    }
  ctx.set_output(0, y.to(ctx.input(0).dtype()));
  return Status::OK();
}

}  // namespace

void register_extra_nn_norm_kernels(KernelRegistry& r) {
  r.add("RMSNormalization", run_rms_norm);
  r.add("Swish", run_swish);
  r.add("RotaryEmbedding", run_rotary_embedding);
}

}  // namespace kiln::cpu
