// Convolutions through cuDNN's graph (backend) API: the tactic family that reaches the engines
// the legacy API does not (about 6 us a layer at batch 1 against 40-50 us), including the
// runtime-fusion engines that compute act(conv + bias + z) in one kernel. ConvLayer times the
// best plan found here against the best legacy algorithm and keeps the faster.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backends/gpu/dnn/graph_conv_ops.h"

namespace kiln::gpu::dnn {

// Which convolution tactic families ConvLayer may choose from, read once from
// $KILN_CONV_TACTICS: "all" (default: time both, keep the faster), "legacy" or "graph" (only
// that family; "graph" still falls back to legacy for a conv the graph path cannot run).
enum class ConvFamilies { kAll, kLegacy, kGraph };
ConvFamilies conv_families();

// y = act(y + bias + z) by kiln's kernel, for a conv whose library call did not fuse it.
void launch_conv_epilogue(const ConvSetup& s, const LaunchArgs& a);

class GraphConv {
 public:
  // The fastest graph-API plan for the setup's convolution, timed on the scratch buffers of
  // `trial` (inputs x, w, b, z; output y; workspace of `limit` bytes). nullptr when the graph
  // path cannot take the conv or no plan finalizes and runs. `log` gets one entry a plan.
  static std::unique_ptr<GraphConv> best(const ConvSetup& s, const LaunchArgs& trial, size_t limit,
                                         std::string* log);
  // The first usable plan in cuDNN's heuristic order, untimed (tactic timing off).
  static std::unique_ptr<GraphConv> first(const ConvSetup& s, size_t limit);
  // Rebuilds the plan a cache value of cache_value() names, without timing; nullptr when it
  // does not parse or cuDNN's heuristic list no longer holds that engine at that place.
  static std::unique_ptr<GraphConv> from_cache(const ConvSetup& s, const std::string& value);
  static bool is_cache_value(const std::string& value) { return value.rfind("graph ", 0) == 0; }

  ~GraphConv();
  // Launches the plan (and kiln's epilogue when the graph does not fuse it): capturable.
  void enqueue(const LaunchArgs& a);
  std::string cache_value() const;
  std::string describe() const;  // "cudnn graph engine 12 (conv+bias+add+relu)"
  size_t workspace_bytes() const { return ws_bytes_; }
  float time_ms() const { return ms_; }

 private:
  struct Candidate;
  GraphConv(const ConvSetup& s, std::unique_ptr<ConvOpGraph> g, Candidate c);
  static std::unique_ptr<GraphConv> search(const ConvSetup& s, const LaunchArgs* trial, size_t limit,
                                           std::string* log);

  const ConvSetup& s_;
  std::unique_ptr<ConvOpGraph> g_;
  BackendDesc cfg_, plan_;
  int mode_ = 0, index_ = 0;
  int64_t engine_ = -1;
  size_t ws_bytes_ = 0;
  float ms_ = -1;
  // The variant pack of the last enqueue's pointers: rebuilt (host only) when they change.
  BackendDesc pack_;
  std::vector<void*> pack_ptrs_;
};

}  // namespace kiln::gpu::dnn
