// Conv and kiln.FusedConv through cuDNN's convolution API. The algorithm is chosen by timing
// every one cuDNN offers for the exact shapes (cudnnFindConvolutionForwardAlgorithmEx within
// the workspace limit). act(conv + bias + z) is one cuDNN call when the activation is Relu
// (cudnnConvolutionBiasActivationForward); any other epilogue is kiln's kernel after the conv.
// The graph-API family (graph_conv.h) is timed against that choice and kept when faster.
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include "backends/gpu/device.h"
#include "backends/gpu/dnn/conv_setup.h"
#include "backends/gpu/dnn/epilogue.h"
#include "backends/gpu/dnn/graph_conv.h"
#include "backends/gpu/tactic_timer.h"

namespace kiln::gpu::dnn {
namespace {

const float kOne = 1.0f, kZero = 0.0f;

// Strict fp32 promises results within ordinary summation-order error of the CPU reference;
// FFT and non-fused Winograd transforms add their own rounding (1e-4 relative and worse).
bool exact_enough(cudnnConvolutionFwdAlgo_t a) {
  return a != CUDNN_CONVOLUTION_FWD_ALGO_FFT && a != CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING &&
         a != CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}

class ConvLayer final : public Layer {
 public:
  explicit ConvLayer(std::unique_ptr<ConvSetup> s) : s_(std::move(s)) {}

  std::string tactic() const override { return tactic_; }
  size_t workspace_bytes() const override { return graph_ ? graph_->workspace_bytes() : ws_bytes_; }
  size_t weight_bytes() const override { return s_->owned_bytes(); }
  bool reads_constant_input(size_t i) const override { return !s_->owns_input(i); }

  // Chooses the algorithm and whether the fused call works; `ctx` buffers are scratch.
  void choose(Device& dev, const LayerBuildOptions& opt) {
    if (opt.cache && from_cache(*opt.cache)) {
      describe(opt, "; from the timing cache");
      return;
    }
    cudnnHandle_t h = dev.cudnn();
    const size_t limit = workspace_limit();
    DeviceBuffer x(s_->x_bytes), y(s_->y_bytes), ws(limit);
    KILN_CUDA_CHECK(cudaMemset(x.data(), 0, std::max<size_t>(s_->x_bytes, 1)));
    DeviceBuffer w_scratch;
    const void* w = s_->weights();
    if (!w) {
      w_scratch = DeviceBuffer(s_->w_bytes);
      KILN_CUDA_CHECK(cudaMemset(w_scratch.data(), 0, s_->w_bytes));
      w = w_scratch.data();
    }
    KILN_CUDA_CHECK(cudaDeviceSynchronize());  // the memsets above ran on the legacy stream
    std::string timing;
    if (opt.time_tactics) {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int returned = 0;
      KILN_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(h, s_->x_desc, x.data(), s_->w_desc, w, s_->conv_desc,
                                                              s_->y_desc, y.data(), CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                              &returned, perf, ws.data(), limit));
      bool found = false;
      for (int i = 0; i < returned; ++i) {
        const auto& p = perf[i];
        timing += fmt::format(" algo{}={}", static_cast<int>(p.algo),
                              p.status == CUDNN_STATUS_SUCCESS ? fmt::format("{:.3f}ms", p.time) : "n/a");
        if (found || p.status != CUDNN_STATUS_SUCCESS || p.memory > limit) continue;
        if (s_->strict_fp32 && (p.mathType == CUDNN_TENSOR_OP_MATH || !exact_enough(p.algo))) continue;
        algo_ = p.algo;
        ws_bytes_ = p.memory;
        time_ms_ = p.time;
        math_ = p.mathType;
        if (!s_->strict_fp32) KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(s_->conv_desc, p.mathType));
        found = true;
      }
      if (!found) throw GpuError(fmt::format("cuDNN offers no usable algorithm for this convolution ({})", timing));
    } else {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      int returned = 0;
      KILN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, s_->x_desc, s_->w_desc, s_->conv_desc, s_->y_desc,
                                                              CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
      if (returned == 0) throw GpuError("cuDNN's heuristic returned no convolution algorithm");
      algo_ = perf[0].algo;
      KILN_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, s_->x_desc, s_->w_desc, s_->conv_desc, s_->y_desc,
                                                               algo_, &ws_bytes_));
    }
    // Zero scratch for the inputs the layer does not own, for trial launches.
    DeviceBuffer bias_scratch, z_scratch;
    LaunchArgs trial;
    trial.inputs = {x.data(), w, nullptr, nullptr};
    if (!s_->bias() && s_->has_bias_input) {
      bias_scratch = DeviceBuffer(s_->bias_bytes);
      KILN_CUDA_CHECK(cudaMemset(bias_scratch.data(), 0, s_->bias_bytes));
      trial.inputs[2] = bias_scratch.data();
    }
    if (s_->has_z) {
      z_scratch = DeviceBuffer(s_->y_bytes);
      KILN_CUDA_CHECK(cudaMemset(z_scratch.data(), 0, std::max<size_t>(s_->y_bytes, 1)));
      trial.inputs[3] = z_scratch.data();
    }
    KILN_CUDA_CHECK(cudaDeviceSynchronize());
    trial.outputs = {y.data()};
    trial.workspace = ws.data();
    trial.stream = dev.stream();
    // The fused call supports fewer configurations than the plain one: try it once here.
    fused_ = false;
    if (s_->act.kind == 1 /* Relu */) {
      fused_ = true;
      const float ms = time_candidate(dev.stream(), [&] { enqueue_fused(trial); }, 1);
      if (ms < 0) fused_ = false;
    }
    choose_graph(opt, trial, limit, &timing);
    KILN_CUDA_CHECK(cudaStreamSynchronize(dev.stream()));
    if (opt.cache && opt.time_tactics) {
      opt.cache->put(cache_key(),
                     graph_ ? graph_->cache_value()
                            : fmt::format("algo={} math={} ws={} fused={} ms={}", static_cast<int>(algo_),
                                          static_cast<int>(math_), ws_bytes_, fused_ ? 1 : 0, time_ms_));
    }
    describe(opt, opt.verbose ? ";" + timing : "");
  }

  // Times the best graph-API plan against the legacy choice made above (the whole enqueue of
  // each, epilogue included) and keeps the faster; with KILN_CONV_TACTICS=graph, the graph
  // plan whenever one runs. Untimed builds use the graph path only when it is forced.
  void choose_graph(const LayerBuildOptions& opt, const LaunchArgs& trial, size_t limit,
                    std::string* timing) {
    const ConvFamilies families = conv_families();
    if (families == ConvFamilies::kLegacy) return;
    if (!opt.time_tactics) {
      if (families == ConvFamilies::kGraph) graph_ = GraphConv::first(*s_, limit);
      return;
    }
    auto g = GraphConv::best(*s_, trial, limit, timing);
    if (!g) return;
    const float legacy_ms =
        families == ConvFamilies::kGraph ? -1 : time_candidate(trial.stream, [&] { enqueue(trial); });
    *timing += fmt::format(" legacy={:.4f}ms", legacy_ms);
    if (legacy_ms < 0 || g->time_ms() < legacy_ms) graph_ = std::move(g);
  }

  // Takes algorithm, math type, workspace and fusion from an earlier timing of the same
  // convolution; false when the entry is missing or unreadable (then it is timed again).
  bool from_cache(runtime::TacticCache& cache) {
    const auto hit = cache.find(cache_key());
    if (!hit) return false;
    if (GraphConv::is_cache_value(*hit)) {
      graph_ = GraphConv::from_cache(*s_, *hit);
      return graph_ != nullptr;
    }
    int algo = -1, math = -1, fused = 0;
    unsigned long long ws = 0;
    float ms = -1;
    if (std::sscanf(hit->c_str(), "algo=%d math=%d ws=%llu fused=%d ms=%f", &algo, &math, &ws, &fused, &ms) != 5 ||
        algo < 0 || algo >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT || (fused && s_->act.kind != 1)) {
      return false;
    }
    algo_ = static_cast<cudnnConvolutionFwdAlgo_t>(algo);
    math_ = static_cast<cudnnMathType_t>(math);
    if (!s_->strict_fp32) KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(s_->conv_desc, math_));
    ws_bytes_ = static_cast<size_t>(ws);
    fused_ = fused != 0;
    time_ms_ = ms;
    return true;
  }

  // The winner depends on the families timed, so they are part of the key (entries written
  // before the graph family existed no longer match and are timed again once).
  std::string cache_key() const {
    const ConvFamilies f = conv_families();
    const char* families = f == ConvFamilies::kAll     ? "legacy,graph"
                           : f == ConvFamilies::kGraph ? "graph"
                                                       : "legacy";
    return s_->cache_key + " tactics=" + families;
  }

  void describe(const LayerBuildOptions& opt, const std::string& extra) {
    if (graph_) {
      tactic_ = graph_->describe() + extra;
      if (opt.verbose) std::fprintf(stderr, "kiln: %s: %s\n", s_->node_name.c_str(), tactic_.c_str());
      return;
    }
    tactic_ = fmt::format("cudnn conv algo {}{} ({}, ws {} KiB{}{})", static_cast<int>(algo_),
                          fused_ ? " fused bias+relu" : (s_->needs_epilogue() ? " + kiln epilogue" : ""), s_->summary,
                          ws_bytes_ / 1024, time_ms_ > 0 ? fmt::format(", {:.3f} ms", time_ms_) : "", extra);
    if (opt.verbose) std::fprintf(stderr, "kiln: %s: %s\n", s_->node_name.c_str(), tactic_.c_str());
  }

  void enqueue(const LaunchArgs& a) override {
    if (graph_) {
      graph_->enqueue(a);
      return;
    }
    KILN_CUDNN_CHECK(cudnnSetStream(s_->handle, a.stream));
    if (fused_) {
      enqueue_fused(a);
      return;
    }
    const void* w = s_->weights() ? s_->weights() : a.inputs[1];
    KILN_CUDNN_CHECK(cudnnConvolutionForward(s_->handle, &kOne, s_->x_desc, a.inputs[0], s_->w_desc, w, s_->conv_desc,
                                             algo_, a.workspace, ws_bytes_, &kZero, s_->y_desc, a.outputs[0]));
    if (s_->needs_epilogue()) launch_conv_epilogue(*s_, a);
  }

 private:
  void enqueue_fused(const LaunchArgs& a) {
    const void* w = s_->weights() ? s_->weights() : a.inputs[1];
    const void* bias = s_->bias() ? s_->bias() : a.inputs[2];
    const bool has_z = s_->has_z && a.inputs.size() > 3 && a.inputs[3];
    const float alpha2 = has_z ? 1.0f : 0.0f;
    // Without Z, cuDNN still reads a z pointer (scaled by 0): give it y, same descriptor.
    const void* z = has_z ? a.inputs[3] : a.outputs[0];
    KILN_CUDNN_CHECK(cudnnConvolutionBiasActivationForward(
        s_->handle, &kOne, s_->x_desc, a.inputs[0], s_->w_desc, w, s_->conv_desc, algo_, a.workspace, ws_bytes_,
        &alpha2, s_->y_desc, z, s_->bias_desc, bias, s_->act_desc, s_->y_desc, a.outputs[0]));
  }

  std::unique_ptr<ConvSetup> s_;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnMathType_t math_ = CUDNN_DEFAULT_MATH;
  size_t ws_bytes_ = 0;
  float time_ms_ = -1;
  bool fused_ = false;
  std::string tactic_;
  std::unique_ptr<GraphConv> graph_;  // the graph-API plan when it won (then it is all enqueue runs)
};

Status build_conv(LayerBuildContext& ctx, std::unique_ptr<Layer>* out) {
  std::unique_ptr<ConvSetup> setup;
  KILN_RETURN_IF_ERROR(ConvSetup::create(ctx, &setup));
  auto layer = std::make_unique<ConvLayer>(std::move(setup));
  layer->choose(ctx.device, ctx.options);
  *out = std::move(layer);
  return Status::OK();
}

}  // namespace

void register_conv_layers(LayerRegistry& r) {
  r.add("", "Conv", build_conv);
  r.add("kiln", "FusedConv", build_conv);
}

}  // namespace kiln::gpu::dnn
