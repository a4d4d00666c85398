// ONNX ConvTranspose through cuDNN. A transposed convolution is the backward-data pass of the
// ordinary convolution with the same window: y = ConvTranspose(x, W) is
// dx = cudnnConvolutionBackwardData(w = W, dy = x) written to dx = y. W's ONNX layout
// [C_in, C_out/group, k...] is exactly the forward filter [K, C/group, k...] of that
// convolution, so the weights go to cuDNN as they are (NCHW; assign_layout leaves this op alone).
// Bias is kiln's epilogue after the call. 1-D runs as 2-D with height 1; 3-D falls back.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "backends/gpu/device.h"
#include "backends/gpu/dnn/cudnn_util.h"
#include "backends/gpu/dnn/epilogue.h"
#include "backends/gpu/layer.h"
#include "backends/gpu/tactic_timer.h"
#include "core/error.h"
#include "ops/conv_pool.h"

namespace kiln::gpu::dnn {
namespace {

const float kOne = 1.0f, kZero = 0.0f;

// Strict fp32 promises results within summation-order error of the CPU reference; the FFT and
// non-fused Winograd transforms add their own rounding (see exact_enough in conv_layer.cpp).
bool exact_enough(cudnnConvolutionBwdDataAlgo_t a) {
  return a != CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT && a != CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING &&
         a != CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}

std::string join(const std::vector<int>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

EpilogueType epilogue_type_of(DType t) {
  return t == DType::kFloat16 ? EpilogueType::kFloat16 : t == DType::kBFloat16 ? EpilogueType::kBFloat16 : EpilogueType::kFloat32;
}

// Descriptors and owned weights, worked out once from the node and its concrete shapes.
struct TransposeSetup {
  std::string node_name, summary, cache_key;
  cudnnHandle_t handle = nullptr;
  TensorDescriptor x_desc, y_desc;  // x is cuDNN's dy, y its dx
  FilterDescriptor w_desc;
  ConvDescriptor conv_desc;
  size_t x_bytes = 0, y_bytes = 0, w_bytes = 0;
  bool strict_fp32 = false, has_bias = false;
  EpilogueType epilogue_type = EpilogueType::kFloat32;
  EpilogueParams epilogue;
  DeviceBuffer w_own, b_own;  // the layer's copies of constant W and B (empty: read LaunchArgs)
};

Status create_setup(LayerBuildContext& ctx, std::unique_ptr<TransposeSetup>* out) {
  const ir::Node& node = ctx.node;
  auto reject = [&](const std::string& why) { return unsupported("{}", why).with_context(node.describe()); };
  const TensorDesc& x = ctx.inputs[0];
  const TensorDesc& w = ctx.inputs[1];
  const TensorDesc& y = ctx.outputs[0];
  cudnnDataType_t dt;
  if (!cudnn_dtype(x.dtype, &dt)) return reject(fmt::format("cuDNN ConvTranspose does not take {}", dtype_name(x.dtype)));
  for (size_t i = 1; i < ctx.inputs.size(); ++i) {
    if (ctx.inputs[i].present() && ctx.inputs[i].dtype != x.dtype) return reject("mixed input dtypes");
  }
  const int nsp = static_cast<int>(x.shape.size()) - 2;
  if (nsp != 1 && nsp != 2) return reject(fmt::format("{} spatial dims (the cuDNN path takes 1 or 2)", nsp));
  if (w.shape.size() != x.shape.size() || y.shape.size() != x.shape.size()) return reject("X, W and Y ranks differ");
  if (node.attr_i("channels_last", 0) != 0) return reject("channels-last ConvTranspose");
  const int64_t group = node.attr_i("group", 1);
  if (group < 1 || x.shape[1] != w.shape[0] || y.shape[1] != w.shape[1] * group) {
    return reject("W does not fit X, Y and group");
  }

  ops::WindowAttrs wa;
  KILN_RETURN_IF_ERROR(ops::read_window_attrs(node, nsp, &wa).with_context(node.describe()));
  const std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  const std::vector<int64_t> in_sp(x.shape.begin() + 2, x.shape.end());
  ops::Window win;
  KILN_RETURN_IF_ERROR(ops::resolve_transpose_window(wa, kernel, in_sp, &win).with_context(node.describe()));

  // Output position o is the "full" transposed position o + pad_begin, which is what cuDNN's
  // backward data computes with padding pad_begin for a dx of Y's size; the end pad and
  // output_padding only change that size. cuDNN accepts the pair when the forward convolution
  // of Y's size gives X's size back (checked below); otherwise the host fallback runs.
  for (int d = 0; d < nsp; ++d) {
    if (win.pad_begin(d) < 0) return reject("negative pads (cuDNN takes pads >= 0)");
  }
  const ConvGeometry geo = conv_geometry(x.shape, w.shape, y.shape, win);  // 1-D: height 1
  const std::vector<int>&xd = geo.x, &yd = geo.y, &wd = geo.w, &pads = geo.pads, &strides = geo.strides,
                        &dils = geo.dilations;

  auto s = std::make_unique<TransposeSetup>();
  s->node_name = node.describe();
  s->handle = ctx.device.cudnn();
  set_tensor(s->x_desc, dt, xd, false);
  set_tensor(s->y_desc, dt, yd, false);
  KILN_CUDNN_CHECK(cudnnSetFilterNdDescriptor(s->w_desc, dt, CUDNN_TENSOR_NCHW, static_cast<int>(wd.size()), wd.data()));
  const cudnnMathType_t math = set_conv_descriptor(s->conv_desc, geo, group, x.dtype, ctx.options.precision);
  s->strict_fp32 = math == CUDNN_FMA_MATH;

  std::vector<int> back(yd.size());
  if (cudnnGetConvolutionNdForwardOutputDim(s->conv_desc, s->y_desc, s->w_desc, static_cast<int>(back.size()),
                                            back.data()) != CUDNN_STATUS_SUCCESS ||
      back != xd) {
    return reject(fmt::format("pads {} / output {} not expressible as cuDNN backward data",
                              join(std::vector<int>(win.pads.begin(), win.pads.end()), ","), join(yd, "x")));
  }

  s->x_bytes = x.bytes();
  s->y_bytes = y.bytes();
  s->w_bytes = w.bytes();
  if (const Tensor* wt = ctx.constants[1]) {
    s->w_own = DeviceBuffer(wt->nbytes());
    s->w_own.upload(wt->data(), wt->nbytes());
  }
  const int64_t m = y.shape[1];
  s->has_bias = ctx.inputs.size() > 2 && ctx.inputs[2].present();
  if (s->has_bias && ctx.constants[2]) {
    const size_t bytes = static_cast<size_t>(m) * dtype_size(x.dtype);
    s->b_own = DeviceBuffer(bytes);
    s->b_own.upload(ctx.constants[2]->data(), bytes);
  }
  s->epilogue_type = epilogue_type_of(x.dtype);
  s->epilogue.n = y.numel();
  s->epilogue.channels = m;
  s->epilogue.inner = y.shape[0] * m == 0 ? 1 : y.numel() / (y.shape[0] * m);
  s->cache_key = fmt::format("convtranspose NCHW {} x{} w{} y{} p{} s{} d{} g{} math{}", dtype_name(x.dtype),
                             join(xd, "x"), join(wd, "x"), join(yd, "x"), join(pads, ","), join(strides, ","),
                             join(dils, ","), group, static_cast<int>(math));
  s->summary = fmt::format("{} {} s{} d{} g{}", dtype_name(x.dtype), join(std::vector<int>(wd.begin() + 2, wd.end()), "x"),
                           join(strides, "x"), join(dils, "x"), group);
  *out = std::move(s);
  return Status::OK();
}

class ConvTransposeLayer final : public Layer {
 public:
  explicit ConvTransposeLayer(std::unique_ptr<TransposeSetup> s) : s_(std::move(s)) {}

  std::string tactic() const override { return tactic_; }
  size_t workspace_bytes() const override { return ws_bytes_; }
  size_t weight_bytes() const override { return s_->w_own.bytes() + s_->b_own.bytes(); }
  bool reads_constant_input(size_t i) const override {
    return !((i == 1 && s_->w_own.data()) || (i == 2 && s_->b_own.data()));
  }

  // Chooses the algorithm; kUnsupported when cuDNN offers none usable (bf16 on some builds).
  Status choose(Device& dev, const LayerBuildOptions& opt) {
    std::string timing;
    if (opt.cache && from_cache(*opt.cache)) {
      timing = "; from the timing cache";
    } else if (opt.time_tactics) {
      KILN_RETURN_IF_ERROR(find(dev, &timing));
      if (opt.cache) {
        opt.cache->put(s_->cache_key, fmt::format("algo={} math={} ws={} ms={}", static_cast<int>(algo_),
                                                  static_cast<int>(math_), ws_bytes_, time_ms_));
      }
      if (!opt.verbose) timing.clear();
    } else {
      KILN_RETURN_IF_ERROR(heuristic(dev));
    }
    tactic_ = fmt::format("cudnn convtranspose bwd-data algo {}{} ({}, ws {} KiB{}{})", static_cast<int>(algo_),
                          s_->has_bias ? " + kiln epilogue" : "", s_->summary, ws_bytes_ / 1024,
                          time_ms_ > 0 ? fmt::format(", {:.3f} ms", time_ms_) : "", timing);
    if (opt.verbose) std::fprintf(stderr, "kiln: %s: %s\n", s_->node_name.c_str(), tactic_.c_str());
    return Status::OK();
  }

  void enqueue(const LaunchArgs& a) override {
    KILN_CUDNN_CHECK(cudnnSetStream(s_->handle, a.stream));
    const void* w = s_->w_own.data() ? s_->w_own.data() : a.inputs[1];
    KILN_CUDNN_CHECK(cudnnConvolutionBackwardData(s_->handle, &kOne, s_->w_desc, w, s_->x_desc, a.inputs[0],
                                                  s_->conv_desc, algo_, a.workspace, ws_bytes_, &kZero, s_->y_desc,
                                                  a.outputs[0]));
    if (s_->has_bias) {
      const void* b = s_->b_own.data() ? s_->b_own.data() : a.inputs[2];
      launch_epilogue(s_->epilogue_type, s_->epilogue, a.outputs[0], b, nullptr, a.stream);
    }
  }

 private:
  bool usable(cudnnConvolutionBwdDataAlgo_t algo, cudnnMathType_t math) const {
    return !s_->strict_fp32 || (math != CUDNN_TENSOR_OP_MATH && exact_enough(algo));
  }

  // Times every algorithm cuDNN offers on zeroed scratch buffers within the workspace limit.
  Status find(Device& dev, std::string* timing) {
    const size_t limit = workspace_limit();
    DeviceBuffer x(std::max<size_t>(s_->x_bytes, 1)), y(std::max<size_t>(s_->y_bytes, 1)), ws(limit);
    KILN_CUDA_CHECK(cudaMemset(x.data(), 0, x.bytes()));
    DeviceBuffer w_scratch;
    const void* w = s_->w_own.data();
    if (!w) {
      w_scratch = DeviceBuffer(std::max<size_t>(s_->w_bytes, 1));
      KILN_CUDA_CHECK(cudaMemset(w_scratch.data(), 0, w_scratch.bytes()));
      w = w_scratch.data();
    }
    KILN_CUDA_CHECK(cudaDeviceSynchronize());  // the memsets above ran on the legacy stream
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int returned = 0;
    const cudnnStatus_t st = cudnnFindConvolutionBackwardDataAlgorithmEx(
        dev.cudnn(), s_->w_desc, w, s_->x_desc, x.data(), s_->conv_desc, s_->y_desc, y.data(),
        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf, ws.data(), limit);
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    if (st != CUDNN_STATUS_SUCCESS) {
      return unsupported("cuDNN cannot run this backward data: {}", cudnnGetErrorString(st)).with_context(s_->node_name);
    }
    bool found = false;
    for (int i = 0; i < returned; ++i) {
      const auto& p = perf[i];
      *timing += fmt::format(" algo{}={}", static_cast<int>(p.algo),
                             p.status == CUDNN_STATUS_SUCCESS ? fmt::format("{:.3f}ms", p.time) : "n/a");
      if (found || p.status != CUDNN_STATUS_SUCCESS || p.memory > limit || !usable(p.algo, p.mathType)) continue;
      found = true;
      take(p.algo, p.mathType, p.memory, p.time);
    }
    if (!found) return unsupported("cuDNN offers no usable algorithm ({})", *timing).with_context(s_->node_name);
    *timing = ";" + *timing;
    return Status::OK();
  }

  // Untimed builds: cuDNN's heuristic, first usable proposal.
  Status heuristic(Device& dev) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int returned = 0;
    KILN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(dev.cudnn(), s_->w_desc, s_->x_desc, s_->conv_desc,
                                                                 s_->y_desc, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                                 &returned, perf));
    for (int i = 0; i < returned; ++i) {
      const auto& p = perf[i];
      if (p.status != CUDNN_STATUS_SUCCESS || p.memory > workspace_limit() || !usable(p.algo, p.mathType)) continue;
      take(p.algo, p.mathType, p.memory, -1);
      return Status::OK();
    }
    return unsupported("cuDNN's heuristic proposes no usable algorithm").with_context(s_->node_name);
  }

  // Takes an earlier timing of the same convolution; false when missing or unreadable.
  bool from_cache(runtime::TacticCache& cache) {
    const auto hit = cache.find(s_->cache_key);
    if (!hit) return false;
    int algo = -1, math = -1;
    unsigned long long ws = 0;
    float ms = -1;
    if (std::sscanf(hit->c_str(), "algo=%d math=%d ws=%llu ms=%f", &algo, &math, &ws, &ms) != 4 || algo < 0 ||
        algo >= CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT ||
        !usable(static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), static_cast<cudnnMathType_t>(math))) {
      return false;
    }
    take(static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), static_cast<cudnnMathType_t>(math), static_cast<size_t>(ws),
         ms);
    return true;
  }

  void take(cudnnConvolutionBwdDataAlgo_t algo, cudnnMathType_t math, size_t ws, float ms) {
    algo_ = algo;
    math_ = math;
    ws_bytes_ = ws;
    time_ms_ = ms;
    // Strict fp32 keeps FMA math; otherwise run with the math the algorithm was timed with.
    if (!s_->strict_fp32) KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(s_->conv_desc, math));
  }

  std::unique_ptr<TransposeSetup> s_;
  cudnnConvolutionBwdDataAlgo_t algo_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  cudnnMathType_t math_ = CUDNN_DEFAULT_MATH;
  size_t ws_bytes_ = 0;
  float time_ms_ = -1;
  std::string tactic_;
};

Status build_conv_transpose(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  std::unique_ptr<TransposeSetup> setup;
  KILN_RETURN_IF_ERROR(create_setup(ctx, &setup));
  auto layer = std::make_unique<ConvTransposeLayer>(std::move(setup));
  KILN_RETURN_IF_ERROR(layer->choose(ctx.device, ctx.options));
  *out = std::move(layer);
  return Status::OK();
}

}  // namespace

void register_conv_transpose_layer(LayerRegistry& r) { r.add("", "ConvTranspose", build_conv_transpose); }

}  // namespace kiln::gpu::dnn
