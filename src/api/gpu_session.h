// The CUDA backend behind the public Session interface (built only with KILN_CUDA).
#pragma once
#include <memory>

#include "api/gpu_plan.h"
#include "ir/graph.h"
#include "kiln/session.h"

namespace kiln {

// True when the CUDA backend can run here (a GPU and a working driver).
bool cuda_backend_available();

// Takes an optimized graph; builds the plan for its input shapes right away when they are all
// static (so tactic timing and unsupported-op errors happen at load). With backend "auto", a
// graph the GPU executor cannot plan (data-dependent shapes, subgraphs) runs on the CPU
// instead: at load (then *g is left to the caller and *out stays empty with an OK status), or
// at run time for shapes first seen then.
// `from_plan` (may be nullptr) brings a plan file's tactics and shape sets.
Status create_gpu_session(std::unique_ptr<ir::Graph>& g, const SessionOptions& options, std::unique_ptr<Session>* out,
                          const GpuPlanTactics* from_plan = nullptr);

}  // namespace kiln
