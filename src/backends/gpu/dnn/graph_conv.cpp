#include "backends/gpu/dnn/graph_conv.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/gpu/tactic_timer.h"

namespace kiln::gpu::dnn {

ConvFamilies conv_families() {
  // Read at every build, not once, so a test can force one family and then restore.
  const char* e = std::getenv("KILN_CONV_TACTICS");
  if (!e || !*e || std::strcmp(e, "all") == 0) return ConvFamilies::kAll;
  if (std::strcmp(e, "legacy") == 0) return ConvFamilies::kLegacy;
  if (std::strcmp(e, "graph") == 0) return ConvFamilies::kGraph;
  std::fprintf(stderr, "kiln: KILN_CONV_TACTICS=%s is not all, legacy or graph; timing both\n", e);
  return ConvFamilies::kAll;
}

void launch_conv_epilogue(const ConvSetup& s, const LaunchArgs& a) {
  const void* bias = s.bias() ? s.bias() : (s.has_bias_input ? a.inputs[2] : nullptr);
  const void* z = s.has_z ? a.inputs[3] : nullptr;
  launch_epilogue(s.epilogue_type, s.epilogue, a.outputs[0], bias, z, a.stream);
}

namespace {

// Plans finalized per operation graph while choosing: runtime-compiled (fusion) engines take
// a noticeable fraction of a second each to finalize, and the heuristic's first few are
// nearly always the fastest.
constexpr int kMaxPlans = 4;

// The engine configurations cuDNN's heuristic proposes, best first (empty when it has none).
std::vector<BackendDesc> engine_configs(const ConvOpGraph& g, cudnnBackendHeurMode_t mode) {
  std::vector<BackendDesc> cfgs;
  try {
    BackendDesc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g.graph)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    heur.finalize();
    int64_t count = 0;
    KILN_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      raw.push_back(cfgs.back().get());
    }
    int64_t got = 0;
    KILN_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data()));
    cfgs.resize(static_cast<size_t>(std::min(got, count)));
  } catch (const GpuError&) {
    cfgs.clear();
  }
  return cfgs;
}

struct EngineInfo {
  int64_t id = -1;
  bool usable = false;  // numerics kiln accepts for half precision and TF32
  bool rtc = false;     // compiled at run time (the fusion engines)
};

EngineInfo engine_info(cudnnBackendDescriptor_t cfg) {
  EngineInfo info;
  try {
    BackendDesc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t e = engine.get();
    int64_t n = 0;
    KILN_CUDNN_CHECK(
        cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e));
    info.id = engine.get_i64(CUDNN_ATTR_ENGINE_GLOBAL_INDEX);
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    KILN_CUDNN_CHECK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                              CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, notes));
    info.usable = true;
    // (n may count more notes than were asked for: read only those returned.)
    for (int64_t i = 0; i < std::min<int64_t>(n, CUDNN_NUMERICAL_NOTE_TYPE_COUNT); ++i) {
      // Half-precision accumulation would miss the CPU reference by far more than one
      // rounding; nondeterministic engines would make runs differ.
      if (notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION ||
          notes[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC) {
        info.usable = false;
      }
    }
    // Only for the log: an engine that cannot say stays a candidate.
    cudnnBackendBehaviorNote_t behaviour[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                 CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &n, behaviour) == CUDNN_STATUS_SUCCESS) {
      for (int64_t i = 0; i < std::min<int64_t>(n, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT); ++i)
        info.rtc |= behaviour[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
    }
  } catch (const GpuError&) {
    info.usable = false;
  }
  return info;
}

// False when cuDNN cannot finalize this configuration for the graph (common: the heuristic
// lists engines whose support checks fail for the exact shapes).
bool finalize_plan(cudnnHandle_t h, cudnnBackendDescriptor_t cfg, BackendDesc* plan, size_t* ws) {
  try {
    BackendDesc p(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    p.set_handle(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, h).set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
    if (p.try_finalize() != CUDNN_STATUS_SUCCESS) return false;
    *ws = static_cast<size_t>(p.get_i64(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE));
    *plan = std::move(p);
    return true;
  } catch (const GpuError&) {
    return false;
  }
}

// Data pointers in the order of g.uids, then the workspace.
std::vector<void*> data_pointers(const ConvSetup& s, const ConvOpGraph& g, const LaunchArgs& a) {
  std::vector<void*> p;
  for (int64_t uid : g.uids) {
    const void* ptr = nullptr;
    switch (uid) {
      case kUidX:
        ptr = a.inputs[0];
        break;
      case kUidW:
        ptr = s.weights() ? s.weights() : a.inputs[1];
        break;
      case kUidB:
        ptr = s.bias() ? s.bias() : a.inputs[2];
        break;
      case kUidZ:
        ptr = a.inputs[3];
        break;
      case kUidY:
        ptr = a.outputs[0];
        break;
      default:
        break;
    }
    p.push_back(const_cast<void*>(ptr));  // cuDNN's variant pack takes void* for all
  }
  p.push_back(a.workspace);
  return p;
}

BackendDesc variant_pack(const ConvOpGraph& g, std::vector<void*> ptrs) {
  void* ws = ptrs.back();
  ptrs.pop_back();
  BackendDesc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(g.uids.size()),
           g.uids.data())
      .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(ptrs.size()),
           ptrs.data())
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
  pack.finalize();
  return pack;
}

void execute(cudnnHandle_t h, const BackendDesc& plan, const BackendDesc& pack, cudaStream_t stream) {
  KILN_CUDNN_CHECK(cudnnSetStream(h, stream));
  KILN_CUDNN_CHECK(cudnnBackendExecute(h, plan.get(), pack.get()));
}

}  // namespace

struct GraphConv::Candidate {
  BackendDesc cfg, plan;  // the plan may refer to its engine configuration: kept together
  int mode = CUDNN_HEUR_MODE_A, index = 0;
  int64_t engine = -1;
  size_t ws = 0;
  float ms = -1;
};

GraphConv::GraphConv(const ConvSetup& s, std::unique_ptr<ConvOpGraph> g, Candidate c)
    : s_(s),
      g_(std::move(g)),
      cfg_(std::move(c.cfg)),
      plan_(std::move(c.plan)),
      mode_(c.mode),
      index_(c.index),
      engine_(c.engine),
      ws_bytes_(c.ws),
      ms_(c.ms) {}

// The variant pack, plan and configuration go before the graph whose descriptors they were made from.
GraphConv::~GraphConv() {
  pack_ = BackendDesc();
  plan_ = BackendDesc();
  cfg_ = BackendDesc();
}

std::unique_ptr<GraphConv> GraphConv::best(const ConvSetup& s, const LaunchArgs& trial, size_t limit,
                                           std::string* log) {
  return search(s, &trial, limit, log);
}

std::unique_ptr<GraphConv> GraphConv::first(const ConvSetup& s, size_t limit) {
  return search(s, nullptr, limit, nullptr);
}

std::unique_ptr<GraphConv> GraphConv::search(const ConvSetup& s, const LaunchArgs* trial, size_t limit,
                                             std::string* log) {
  if (const std::string why = graph_conv_unsupported(s); !why.empty()) {
    if (log) *log += " graph: " + why;
    return nullptr;
  }
  // The fused graph when cuDNN can express the epilogue, and conv alone + kiln's epilogue
  // (the fusion engines do not cover every shape).
  std::vector<bool> variants;
  if (graph_can_fuse_epilogue(s)) variants.push_back(true);
  if (s.needs_epilogue()) variants.push_back(false);
  std::unique_ptr<ConvOpGraph> best_graph;
  Candidate best;
  for (const bool fuse : variants) {
    std::unique_ptr<ConvOpGraph> g;
    try {
      g = build_conv_op_graph(s, fuse);
    } catch (const GpuError& e) {
      if (log) *log += fmt::format(" graph {}: {}", fuse ? "fused" : "conv", e.what());
      continue;
    }
    BackendDesc pack;
    if (trial) {
      try {
        pack = variant_pack(*g, data_pointers(s, *g, *trial));
      } catch (const GpuError&) {
        continue;
      }
    }
    bool best_here = false;
    int plans = 0;
    // The fallback list only when mode A offers nothing usable.
    for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
      if (plans > 0) break;
      std::vector<BackendDesc> cfgs = engine_configs(*g, mode);
      for (size_t i = 0; i < cfgs.size() && plans < kMaxPlans; ++i) {
        const EngineInfo info = engine_info(cfgs[i].get());
        if (!info.usable) continue;
        Candidate c;
        c.mode = mode;
        c.index = static_cast<int>(i);
        c.engine = info.id;
        if (!finalize_plan(s.handle, cfgs[i].get(), &c.plan, &c.ws) || c.ws > limit) continue;
        c.cfg = std::move(cfgs[i]);
        ++plans;
        if (!trial) return std::unique_ptr<GraphConv>(new GraphConv(s, std::move(g), std::move(c)));
        c.ms = time_candidate(trial->stream, [&] {
          execute(s.handle, c.plan, pack, trial->stream);
          if (!fuse && s.needs_epilogue()) launch_conv_epilogue(s, *trial);
        });
        if (log) {
          *log += fmt::format(" graph {}{} e{}{}={}", g->ops, fuse ? "" : "+epilogue", c.engine,
                              info.rtc ? "rtc" : "", c.ms >= 0 ? fmt::format("{:.4f}ms", c.ms) : "failed");
        }
        if (c.ms >= 0 && (best.ms < 0 || c.ms < best.ms)) {
          best = std::move(c);
          best_here = true;
        }
      }
    }
    if (best_here) best_graph = std::move(g);
  }
  if (!best_graph) return nullptr;
  return std::unique_ptr<GraphConv>(new GraphConv(s, std::move(best_graph), std::move(best)));
}

std::unique_ptr<GraphConv> GraphConv::from_cache(const ConvSetup& s, const std::string& value) {
  int fused = 0, mode = 0, index = 0;
  long long engine = -1;
  unsigned long long ws = 0;
  float ms = -1;
  if (std::sscanf(value.c_str(), "graph fused=%d mode=%d index=%d engine=%lld ws=%llu ms=%f", &fused, &mode,
                  &index, &engine, &ws, &ms) != 6 ||
      (mode != CUDNN_HEUR_MODE_A && mode != CUDNN_HEUR_MODE_FALLBACK) || index < 0) {
    return nullptr;
  }
  if (!graph_conv_unsupported(s).empty() || (fused && !graph_can_fuse_epilogue(s))) return nullptr;
  try {
    auto g = build_conv_op_graph(s, fused != 0);
    std::vector<BackendDesc> cfgs = engine_configs(*g, static_cast<cudnnBackendHeurMode_t>(mode));
    if (static_cast<size_t>(index) >= cfgs.size()) return nullptr;
    const EngineInfo info = engine_info(cfgs[index].get());
    if (!info.usable || info.id != engine) return nullptr;
    Candidate c;
    c.mode = mode;
    c.index = index;
    c.engine = info.id;
    c.ms = ms;
    if (!finalize_plan(s.handle, cfgs[index].get(), &c.plan, &c.ws) || c.ws > workspace_limit())
      return nullptr;
    c.cfg = std::move(cfgs[index]);
    return std::unique_ptr<GraphConv>(new GraphConv(s, std::move(g), std::move(c)));
  } catch (const GpuError&) {
    return nullptr;
  }
}

void GraphConv::enqueue(const LaunchArgs& a) {
  std::vector<void*> ptrs = data_pointers(s_, *g_, a);
  if (!pack_ || ptrs != pack_ptrs_) {
    pack_ = variant_pack(*g_, ptrs);
    pack_ptrs_ = std::move(ptrs);
  }
  execute(s_.handle, plan_, pack_, a.stream);
  if (!g_->fused && s_.needs_epilogue()) launch_conv_epilogue(s_, a);
}

std::string GraphConv::cache_value() const {
  return fmt::format("graph fused={} mode={} index={} engine={} ws={} ms={}", g_->fused ? 1 : 0, mode_,
                     index_, engine_, ws_bytes_, ms_);
}

std::string GraphConv::describe() const {
  const bool epilogue_after = !g_->fused && s_.needs_epilogue();
  const bool fused_ops = g_->fused && g_->ops != "conv";
  return fmt::format("cudnn graph engine {} ({}{}{}, {}, ws {} KiB{})", engine_, fused_ops ? "fused " : "",
                     g_->ops, epilogue_after ? " + kiln epilogue" : "", s_.summary, ws_bytes_ / 1024,
                     ms_ > 0 ? fmt::format(", {:.3f} ms", ms_) : "");
}

}  // namespace kiln::gpu::dnn
