#include "backends/gpu/dnn/conv_setup.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "ops/activation.h"
#include "ops/conv_pool.h"

namespace kiln::gpu::dnn {
namespace {

// (M, C/g, k...) -> (M, k..., C/g): cuDNN's channels-last filter layout (KRSC).
Tensor to_krsc(const Tensor& w) {
  const int64_t m = w.dim(0), c = w.dim(1);
  const int64_t k = w.numel() / (m * c);
  const size_t es = dtype_size(w.dtype());
  Tensor out = Tensor::uninitialized(w.dtype(), w.shape());
  const auto* src = static_cast<const char*>(w.data());
  auto* dst = static_cast<char*>(out.data());
  for (int64_t mi = 0; mi < m; ++mi) {
    for (int64_t ci = 0; ci < c; ++ci) {
      for (int64_t ki = 0; ki < k; ++ki) {
        std::memcpy(dst + ((mi * k + ki) * c + ci) * es, src + ((mi * c + ci) * k + ki) * es, es);
      }
    }
  }
  return out;
}

EpilogueType epilogue_type_of(DType t) {
  return t == DType::kFloat16 ? EpilogueType::kFloat16 : t == DType::kBFloat16 ? EpilogueType::kBFloat16 : EpilogueType::kFloat32;
}

std::string dims_text(const std::vector<int64_t>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

Status ConvSetup::create(LayerBuildContext& ctx, std::unique_ptr<ConvSetup>* out) {
  const ir::Node& node = ctx.node;
  auto reject = [&](const std::string& why) { return unsupported("{}", why).with_context(node.describe()); };
  const TensorDesc& x = ctx.inputs[0];
  const TensorDesc& w = ctx.inputs[1];
  const TensorDesc& y = ctx.outputs[0];
  cudnnDataType_t dt;
  if (!cudnn_dtype(x.dtype, &dt)) return reject(fmt::format("cuDNN conv does not take {}", dtype_name(x.dtype)));
  for (size_t i = 1; i < ctx.inputs.size(); ++i) {
    if (ctx.inputs[i].present() && ctx.inputs[i].dtype != x.dtype) return reject("mixed input dtypes");
  }
  const int rank = static_cast<int>(x.shape.size());
  const int nsp = rank - 2;
  if (nsp < 1 || nsp > 3) return reject(fmt::format("{} spatial dims (cuDNN path takes 1 to 3)", nsp));
  const bool cl = node.attr_i("channels_last", 0) != 0;

  auto s = std::make_unique<ConvSetup>();
  s->node_name = node.describe();
  ops::Activation act;
  if (node.op_type == "FusedConv") KILN_RETURN_IF_ERROR(ops::activation_of(node, &act).with_context(node.describe()));
  s->act.kind = static_cast<int>(act.kind);

  // Logical dims (N, C, spatial...) of X and Y whatever the memory layout.
  auto logical = [&](const std::vector<int64_t>& sh) {
    std::vector<int64_t> d = sh;
    if (cl) std::rotate(d.begin() + 1, d.end() - 1, d.end());
    return d;
  };
  const std::vector<int64_t> xl = logical(x.shape), yl = logical(y.shape);
  std::vector<int64_t> in_sp(xl.begin() + 2, xl.end());
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  ops::WindowAttrs wa;
  KILN_RETURN_IF_ERROR(ops::read_window_attrs(node, nsp, &wa).with_context(node.describe()));
  ops::Window win;
  KILN_RETURN_IF_ERROR(ops::resolve_window(wa, kernel, in_sp, &win).with_context(node.describe()));
  for (int d = 0; d < nsp; ++d) {
    if (win.pad_begin(d) != win.pad_end(d)) {
      return reject(fmt::format("asymmetric pads {} (cuDNN takes symmetric pads only)", dims_text(win.pads, ",")));
    }
  }
  const int64_t group = node.attr_i("group", 1);

  // cuDNN wants at least 2 spatial dims: a 1-D conv is a 2-D conv of height 1.
  const ConvGeometry geo = conv_geometry(xl, w.shape, yl, win);
  const std::vector<int>&xd = geo.x, &yd = geo.y, &wd = geo.w, &pads = geo.pads, &strides = geo.strides,
                        &dils = geo.dilations;
  s->handle = ctx.device.cudnn();
  set_tensor(s->x_desc, dt, xd, cl);
  set_tensor(s->y_desc, dt, yd, cl);
  KILN_CUDNN_CHECK(cudnnSetFilterNdDescriptor(s->w_desc, dt, cl ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                              static_cast<int>(wd.size()), wd.data()));
  const cudnnMathType_t math = set_conv_descriptor(s->conv_desc, geo, group, x.dtype, ctx.options.precision);
  s->strict_fp32 = math == CUDNN_FMA_MATH;

  std::vector<int> got(xd.size());
  KILN_CUDNN_CHECK(cudnnGetConvolutionNdForwardOutputDim(s->conv_desc, s->x_desc, s->w_desc,
                                                         static_cast<int>(got.size()), got.data()));
  if (got != yd) {
    throw GpuError(fmt::format("{}: cuDNN computes output dims ({}) but kiln inferred ({})", s->node_name,
                               dims_text(std::vector<int64_t>(got.begin(), got.end()), ","),
                               dims_text(std::vector<int64_t>(yd.begin(), yd.end()), ",")));
  }

  s->x_bytes = x.bytes();
  s->y_bytes = y.bytes();
  s->w_bytes = w.bytes();
  if (const Tensor* wt = ctx.constants[1]) {
    const Tensor laid = cl ? to_krsc(*wt) : *wt;
    s->w_own = DeviceBuffer(laid.nbytes());
    s->w_own.upload(laid.data(), laid.nbytes());
  } else if (cl) {
    return reject("channels-last conv with weights computed at run time (needs constant W to re-lay)");
  }
  const int64_t m = w.shape[0];
  s->has_bias_input = ctx.inputs.size() > 2 && ctx.inputs[2].present();
  s->has_z = ctx.inputs.size() > 3 && ctx.inputs[3].present();
  s->bias_bytes = static_cast<size_t>(m) * dtype_size(x.dtype);
  std::vector<int> bd(xd.size(), 1);
  bd[1] = static_cast<int>(m);
  set_tensor(s->bias_desc, dt, bd, false);
  if (s->has_bias_input && ctx.constants[2]) {
    s->b_own = DeviceBuffer(s->bias_bytes);
    s->b_own.upload(ctx.constants[2]->data(), s->bias_bytes);
  } else if (!s->has_bias_input && act.kind == ops::ActivationKind::kRelu) {
    // The fused cuDNN call always adds a bias: give it zeros.
    s->b_own = DeviceBuffer(s->bias_bytes);
    KILN_CUDA_CHECK(cudaMemset(s->b_own.data(), 0, s->bias_bytes));
    KILN_CUDA_CHECK(cudaDeviceSynchronize());  // cudaMemset runs on the legacy stream, not ours
  }
  KILN_CUDNN_CHECK(cudnnSetActivationDescriptor(s->act_desc, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));

  s->epilogue_type = epilogue_type_of(x.dtype);
  s->epilogue.activation = static_cast<int>(act.kind);
  s->epilogue.p0 = act.p0;
  s->epilogue.p1 = act.p1;
  s->epilogue.n = static_cast<int64_t>(y.numel());
  s->epilogue.channels = m;
  s->epilogue.inner = cl || yl[0] * m == 0 ? 1 : static_cast<int64_t>(y.numel() / (yl[0] * m));
  s->cache_key = fmt::format("conv {} {} x{} w{} y{} p{} s{} d{} g{} math{} act{} bias{} z{}", cl ? "NHWC" : "NCHW",
                             dtype_name(x.dtype), dims_text(std::vector<int64_t>(xd.begin(), xd.end()), "x"),
                             dims_text(std::vector<int64_t>(wd.begin(), wd.end()), "x"),
                             dims_text(std::vector<int64_t>(yd.begin(), yd.end()), "x"),
                             dims_text(std::vector<int64_t>(pads.begin(), pads.end()), ","),
                             dims_text(std::vector<int64_t>(strides.begin(), strides.end()), ","),
                             dims_text(std::vector<int64_t>(dils.begin(), dils.end()), ","), group,
                             static_cast<int>(math), s->act.kind, s->has_bias_input ? 1 : 0, s->has_z ? 1 : 0);
  s->summary = fmt::format("{} {} {} s{} d{} g{}", cl ? "NHWC" : "NCHW", dtype_name(x.dtype), dims_text(kernel, "x"),
                           dims_text(win.strides, "x"), dims_text(win.dilations, "x"), group);
  *out = std::move(s);
  return Status::OK();
}

}  // namespace kiln::gpu::dnn
