// The GPU's part of a plan file (CUDA builds only): building the optimized graph's layers for
// each profile shape set (timing tactics, or taking them from the timing cache), and checking
// at load that the plan was built for this GPU and these library versions.
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/session.h"
#include "kiln/status.h"

namespace kiln {
namespace gpu {
class Device;
}

using ShapeSet = std::vector<std::vector<int64_t>>;  // one shape per graph input, in order

struct GpuPlanPart {
  // {"gpu": "NVIDIA H200", "sm": 90, "driver": "13.0", "cuda_runtime": "13.0",
  //  "cudnn": "9.14.0", "cublas": "13.1.0"}
  nlohmann::json environment;
  // Timing-cache entries (full keys) of every layer built: a plan load uses them instead of
  // timing.
  std::map<std::string, std::string> tactics;
  // One object per shape set: {"inputs": [[1,3,224,224]], "layers": [{"name","op","tactic"}],
  // "memory": {"weights", "arena", "workspace", "peak"} (bytes)}.
  nlohmann::json shape_sets = nlohmann::json::array();
  int layers = 0, tactics_timed = 0, tactics_from_cache = 0;
};

// Builds `g` (already optimized for the cuda backend and options.precision) for every shape
// set, on GPU 0.
Status build_gpu_plan_part(const ir::Graph& g, const SessionOptions& options, const std::vector<ShapeSet>& shape_sets,
                           GpuPlanPart* out);

// This machine's environment, in the form of GpuPlanPart::environment.
nlohmann::json current_gpu_environment();
// The same as one line, the timing cache's environment (prefix of every key).
std::string gpu_environment_fingerprint(gpu::Device& device);

// OK when a plan built in `built_for` runs here; otherwise a one-line error saying what
// differs (architecture, library versions) and how to rebuild.
Status check_gpu_plan_environment(const nlohmann::json& built_for, const std::string& plan_path);

// What a GPU session loaded from a plan gets: the plan's tactics (no timing for those shapes)
// and the shape sets to build right away.
struct GpuPlanTactics {
  std::map<std::string, std::string> tactics;
  std::vector<ShapeSet> shape_sets;
};

}  // namespace kiln
