// CPU kernels for the normalization ops. Statistics are computed in double (two passes, so
// the variance does not suffer from cancellation) whatever the storage type; every op then
// applies y = x * a + b with per-slot factors.
#include <cmath>

#include "backends/cpu/kernel.h"
#include "backends/cpu/reduce.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/shape_util.h"

namespace kiln::cpu {
namespace {

template <class T>
double load(const T* p, int64_t i) {
  return static_cast<double>(static_cast<compute_t<T>>(p[i]));
}

// Population mean and variance of x over the dims marked in `reduced`, one per output slot of
// the keepdims reduction (slots numbered row-major over the kept dims).
template <class T>
void moments(const Tensor& x, const std::vector<bool>& reduced, std::vector<double>* mean, std::vector<double>* var) {
  int64_t slots = 1;
  for (int d = 0; d < x.rank(); ++d) slots *= reduced[d] ? 1 : x.dim(d);
  const int64_t count = slots == 0 ? 0 : x.numel() / slots;
  const auto strides = reduce_output_strides(x.shape(), reduced);
  const T* p = x.data_as<T>();
  mean->assign(slots, 0.0);
  var->assign(slots, 0.0);
  for_each_reduced(x.shape(), strides, [&](int64_t i, int64_t o) { (*mean)[o] += load(p, i); });
  for (double& m : *mean) m /= static_cast<double>(count);
  for_each_reduced(x.shape(), strides, [&](int64_t i, int64_t o) {
    const double d = load(p, i) - (*mean)[o];
    (*var)[o] += d * d;
  });
  for (double& v : *var) v /= static_cast<double>(count);
}

// Reads parameter tensor `t` broadcast (numpy rules, aligned right) to `shape`, row-major.
Status expand_param(const Tensor& t, const std::vector<int64_t>& shape, std::vector<double>* out) {
  std::vector<double> v;
  KILN_RETURN_IF_ERROR(ops::tensor_to_doubles(t, &v));
  const int rank = static_cast<int>(shape.size());
  KILN_ENSURE(t.rank() <= rank, "parameter of shape {} does not broadcast to {}", shape_to_string(t.shape()),
              shape_to_string(shape));
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (int d = t.rank() - 1; d >= 0; --d) {
    const int od = d + rank - t.rank();
    KILN_ENSURE(t.dim(d) == shape[od] || t.dim(d) == 1, "parameter of shape {} does not broadcast to {}",
                shape_to_string(t.shape()), shape_to_string(shape));
    if (t.dim(d) != 1) strides[od] = stride;
    stride *= t.dim(d);
  }
  out->assign(Tensor::numel_of(shape), 0.0);
  for_each_reduced(shape, strides, [&](int64_t i, int64_t o) { (*out)[i] = v[o]; });
  return Status::OK();
}

Status params(const KernelContext& ctx, int i, int64_t count, std::vector<double>* out) {
  KILN_RETURN_IF_ERROR(ops::tensor_to_doubles(ctx.input(i), out));
  KILN_ENSURE(static_cast<int64_t>(out->size()) == count, "input {} has {} elements, expected {}", i, out->size(),
              count);
  return Status::OK();
}

// Writes doubles into a floating-point tensor of any width.
void store_doubles(Tensor& t, const std::vector<double>& v) {
  dispatch<IeeeFloatTypes>(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data_as<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = convert<T>(v[i]);
  });
}

// y[o, p, i] = x[o, p, i] * a[p] + b[p] for x viewed as [outer, a.size(), inner].
template <class T>
void affine(const Tensor& x, const std::vector<double>& a, const std::vector<double>& b, int64_t inner, Tensor& y) {
  const int64_t mid = static_cast<int64_t>(a.size());
  const T* in = x.data_as<T>();
  T* out = y.data_as<T>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t p = (i / inner) % mid;
    out[i] = convert<T>(load(in, i) * a[p] + b[p]);
  }
}

// Dispatches a kernel body over the float types normalization ops accept.
template <class F>
Status for_float_types(const KernelContext& ctx, F&& f) {
  if (!dispatch<IeeeFloatTypes>(ctx.input(0).dtype(), f)) {
    return unsupported("{} does not support dtype {}", ctx.node().op_type, dtype_name(ctx.input(0).dtype()));
  }
  return Status::OK();
}

int64_t inner_size(const Tensor& x, int from) {
  int64_t n = 1;
  for (int d = from; d < x.rank(); ++d) n *= x.dim(d);
  return n;
}

Status batch_norm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const double eps = ctx.node().attr_f("epsilon", 1e-5f);
  const double momentum = ctx.node().attr_f("momentum", 0.9f);
  const bool training = ctx.node().attr_i("training_mode", 0) != 0;
  // Parameters are per channel, or per channel and position for opset 7's spatial=0.
  const int64_t count = ctx.node().attr_i("spatial", 1) != 0 ? x.dim(1) : inner_size(x, 1);
  std::vector<double> scale, bias, mean, var;
  KILN_RETURN_IF_ERROR(params(ctx, 1, count, &scale));
  KILN_RETURN_IF_ERROR(params(ctx, 2, count, &bias));
  KILN_RETURN_IF_ERROR(params(ctx, 3, count, &mean));
  KILN_RETURN_IF_ERROR(params(ctx, 4, count, &var));
  std::vector<double> batch_mean, batch_var;
  if (training) {
    std::vector<bool> reduced(x.rank(), true);
    reduced[1] = false;
    KILN_RETURN_IF_ERROR(for_float_types(ctx, [&](auto tag) {
      moments<typename decltype(tag)::type>(x, reduced, &batch_mean, &batch_var);
    }));
    KILN_ENSURE(static_cast<int64_t>(batch_mean.size()) == count, "training mode needs per-channel parameters");
  }
  const auto& m = training ? batch_mean : mean;
  const auto& v = training ? batch_var : var;
  std::vector<double> a(count), b(count);
  for (int64_t c = 0; c < count; ++c) {
    a[c] = scale[c] / std::sqrt(v[c] + eps);
    b[c] = bias[c] - m[c] * a[c];
  }
  Tensor& y = ctx.alloc_output(0);
  if (x.numel() == 0) return Status::OK();
  KILN_RETURN_IF_ERROR(for_float_types(ctx, [&](auto tag) {
    affine<typename decltype(tag)::type>(x, a, b, x.numel() / (x.dim(0) * count), y);
  }));
  if (!training) return Status::OK();
  auto running = [&](const std::vector<double>& in, const std::vector<double>& batch) {
    std::vector<double> r(count);
    for (int64_t c = 0; c < count; ++c) r[c] = in[c] * momentum + batch[c] * (1 - momentum);
    return r;
  };
  // Outputs 1, 2: running statistics; 3, 4 (opset < 14 only): this batch's statistics.
  const std::vector<double> outs[] = {running(mean, batch_mean), running(var, batch_var), batch_mean, batch_var};
  for (int i = 1; i < ctx.num_outputs() && i <= 4; ++i) {
    if (ctx.has_output(i)) store_doubles(ctx.alloc_output(i), outs[i - 1]);
  }
  return Status::OK();
}

// Instance (groups == C, per-channel scale) and group normalization over x = (N, C, ...).
Status channel_group_norm(KernelContext& ctx, int64_t groups, bool scale_per_group) {
  const Tensor& x = ctx.input(0);
  const double eps = ctx.node().attr_f("epsilon", 1e-5f);
  const int64_t n = x.dim(0), c = x.dim(1);
  KILN_ENSURE(groups > 0 && c % groups == 0, "{} channels do not split into {} groups", c, groups);
  const int64_t spatial = inner_size(x, 2);
  const int64_t pcount = scale_per_group ? groups : c;
  std::vector<double> scale, bias, mean, var;
  KILN_RETURN_IF_ERROR(params(ctx, 1, pcount, &scale));
  KILN_RETURN_IF_ERROR(params(ctx, 2, pcount, &bias));
  const Tensor view = x.reshaped({n, groups, c / groups * spatial});
  KILN_RETURN_IF_ERROR(for_float_types(ctx, [&](auto tag) {
    moments<typename decltype(tag)::type>(view, {false, false, true}, &mean, &var);
  }));
  // Per (n, channel) factors, so the output is one affine pass over x viewed as [N*C, spatial].
  std::vector<double> a(n * c), b(n * c);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t g = ch / (c / groups);
      const int64_t stat = i * groups + g, p = scale_per_group ? g : ch;
      const double inv = 1.0 / std::sqrt(var[stat] + eps);
      a[i * c + ch] = scale[p] * inv;
      b[i * c + ch] = bias[p] - mean[stat] * scale[p] * inv;
    }
  }
  Tensor& y = ctx.alloc_output(0);
  if (x.numel() == 0) return Status::OK();
  return for_float_types(ctx, [&](auto tag) { affine<typename decltype(tag)::type>(x, a, b, spatial, y); });
}

template <class T>
void layer_norm_apply(const Tensor& x, int64_t rows, const std::vector<double>& mean, const std::vector<double>& inv,
                      const std::vector<double>& scale, const std::vector<double>& bias, Tensor& y) {
  const int64_t inner = rows == 0 ? 0 : x.numel() / rows;
  const int64_t pn = static_cast<int64_t>(scale.size());
  const T* in = x.data_as<T>();
  T* out = y.data_as<T>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t r = i / inner, p = i % pn;
    out[i] = convert<T>((load(in, i) - mean[r]) * inv[r] * scale[p] + bias[p]);
  }
}

Status layer_norm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const double eps = ctx.node().attr_f("epsilon", 1e-5f);
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(ops::normalize_axis(ctx.node().attr_i("axis", -1), x.rank(), &axis));
  int64_t rows = 1;
  for (int d = 0; d < axis; ++d) rows *= x.dim(d);
  // Scale and bias broadcast against x; expand them over the shortest suffix of x's shape
  // that covers them, so element i of x uses element i % size of the expansion.
  int suffix = x.rank() - static_cast<int>(axis);
  suffix = std::max(suffix, ctx.input(1).rank());
  if (ctx.has_input(2)) suffix = std::max(suffix, ctx.input(2).rank());
  KILN_ENSURE(suffix <= x.rank(), "scale/bias have a higher rank than the input");
  const std::vector<int64_t> pshape(x.shape().end() - suffix, x.shape().end());
  std::vector<double> scale, bias(Tensor::numel_of(pshape), 0.0);
  KILN_RETURN_IF_ERROR(expand_param(ctx.input(1), pshape, &scale));
  if (ctx.has_input(2)) KILN_RETURN_IF_ERROR(expand_param(ctx.input(2), pshape, &bias));

  Tensor& y = ctx.alloc_output(0);
  if (x.numel() == 0) {
    for (int i = 1; i < 3; ++i) {
      if (ctx.has_output(i)) ctx.alloc_output(i);
    }
    return Status::OK();
  }
  std::vector<double> mean, var;
  const Tensor view = x.reshaped({rows, x.numel() / rows});
  KILN_RETURN_IF_ERROR(for_float_types(ctx, [&](auto tag) {
    moments<typename decltype(tag)::type>(view, {false, true}, &mean, &var);
  }));
  std::vector<double> inv(var.size());
  for (size_t r = 0; r < var.size(); ++r) inv[r] = 1.0 / std::sqrt(var[r] + eps);
  KILN_RETURN_IF_ERROR(for_float_types(ctx, [&](auto tag) {
    layer_norm_apply<typename decltype(tag)::type>(x, rows, mean, inv, scale, bias, y);
  }));
  if (ctx.has_output(1)) store_doubles(ctx.alloc_output(1), mean);
  if (ctx.has_output(2)) store_doubles(ctx.alloc_output(2), inv);
  return Status::OK();
}

template <class T>
void lp_normalize(const Tensor& x, int64_t axis, int64_t p, Tensor& y) {
  std::vector<bool> reduced(x.rank(), false);
  reduced[axis] = true;
  const auto strides = reduce_output_strides(x.shape(), reduced);
  std::vector<double> norm(x.numel() / std::max<int64_t>(x.dim(static_cast<int>(axis)), 1), 0.0);
  const T* in = x.data_as<T>();
  T* out = y.data_as<T>();
  for_each_reduced(x.shape(), strides, [&](int64_t i, int64_t o) {
    const double v = load(in, i);
    norm[o] += p == 1 ? std::fabs(v) : v * v;
  });
  if (p == 2) {
    for (double& n : norm) n = std::sqrt(n);
  }
  // A zero vector stays zero instead of becoming NaN (as ONNX Runtime does).
  for_each_reduced(x.shape(), strides, [&](int64_t i, int64_t o) {
    out[i] = convert<T>(norm[o] == 0 ? 0.0 : load(in, i) / norm[o]);
  });
}

Status lp_norm(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(ops::normalize_axis(ctx.node().attr_i("axis", -1), x.rank(), &axis));
  const int64_t p = ctx.node().attr_i("p", 2);
  Tensor& y = ctx.alloc_output(0);
  if (x.numel() == 0) return Status::OK();
  return for_float_types(ctx, [&](auto tag) { lp_normalize<typename decltype(tag)::type>(x, axis, p, y); });
}

template <class T>
void mvn_apply(const Tensor& x, const std::vector<bool>& reduced, Tensor& y) {
  std::vector<double> mean, var;
  moments<T>(x, reduced, &mean, &var);
  const T* in = x.data_as<T>();
  T* out = y.data_as<T>();
  // ONNX defines MVN as (x - mean) / (sqrt(var) + 1e-9), the epsilon outside the root.
  for_each_reduced(x.shape(), reduce_output_strides(x.shape(), reduced), [&](int64_t i, int64_t o) {
    out[i] = convert<T>((load(in, i) - mean[o]) / (std::sqrt(var[o]) + 1e-9));
  });
}

Status mvn(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<bool> reduced(x.rank(), false);
  for (int64_t a : ctx.node().attr_ints("axes", {0, 2, 3})) {
    int64_t axis = 0;
    KILN_RETURN_IF_ERROR(ops::normalize_axis(a, x.rank(), &axis));
    reduced[axis] = true;
  }
  Tensor& y = ctx.alloc_output(0);
  return for_float_types(ctx, [&](auto tag) { mvn_apply<typename decltype(tag)::type>(x, reduced, y); });
}

}  // namespace

void register_norm_kernels(KernelRegistry& r) {
  r.add("BatchNormalization", batch_norm);
  r.add("InstanceNormalization",
        [](KernelContext& ctx) { return channel_group_norm(ctx, ctx.input(0).dim(1), false); });
  r.add("GroupNormalization", [](KernelContext& ctx) {
    // Opset 18 had one scale and bias per group; opset 21 has one per channel.
    return channel_group_norm(ctx, ctx.node().attr_i("num_groups", 0), ctx.node().opset < 21);
  });
  r.add("LayerNormalization", layer_norm);
  r.add("LpNormalization", lp_norm);
  r.add("MeanVarianceNormalization", mvn);
}

}  // namespace kiln::cpu
