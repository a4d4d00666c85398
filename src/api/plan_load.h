// Session creation shared by model and plan loading (session.cpp), and plan loading itself
// (plan_load.cpp).
#pragma once
#include <memory>
#include <string>

#include "api/gpu_plan.h"
#include "ir/graph.h"
#include "kiln/session.h"
#include "kiln/status.h"

namespace kiln {

// The session for an optimized graph: the GPU session for backend "cuda" (with a plan's
// tactics when `from_plan` is given; under "auto" it may leave the graph to the CPU), else the
// CPU session.
Status create_session(std::unique_ptr<ir::Graph> g, const std::string& backend, const SessionOptions& options,
                      const GpuPlanTactics* from_plan, std::unique_ptr<Session>* session);

// Loads a plan file (runtime/plan_file.h): checks it fits this machine, imports the optimized
// graph without optimizing it again, and creates the session with the plan's precision.
Status load_plan(const std::string& path, const SessionOptions& options, std::unique_ptr<Session>* session);

// Imports an ONNX model, or a plan's optimized graph (for `kiln inspect PLAN`).
Status import_model_or_plan(const std::string& path, std::unique_ptr<ir::Graph>* g);

}  // namespace kiln
