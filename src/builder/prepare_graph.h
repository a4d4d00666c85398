// The steps from an ONNX file to the graph a backend runs, shared by Session::load and
// build_plan so that a plan holds exactly what a session would have built.
#pragma once
#include <memory>
#include <string>

#include "ir/graph.h"
#include "kiln/session.h"
#include "kiln/status.h"

namespace kiln::builder {

// The backend a session option selects: "cuda", or "cpu" ("auto" = cuda when this kiln has the
// CUDA backend and a GPU is present). Errors for unknown names and for cuda without CUDA.
Status resolve_backend(const std::string& requested, std::string* backend);

// The precision the optimizer uses for `backend`: the CPU backend computes in the model's types.
std::string effective_precision(const SessionOptions& options, const std::string& backend);

// Imports `model_path`, infers types, verifies, and optimizes for `backend` with `options`
// (level, disabled passes, precision, channels-last, pass dumps; plus the environment's).
Status prepare_graph(const std::string& model_path, const SessionOptions& options, const std::string& backend,
                     std::unique_ptr<ir::Graph>* out);

}  // namespace kiln::builder
