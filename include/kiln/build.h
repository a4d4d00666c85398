// Plan files: `kiln build` optimizes a model once for one backend and precision, chooses the
// tactics of every layer on the GPU at hand, and writes the result, so that loading it later
// (Session::load takes a .plan like an .onnx) costs milliseconds instead of a build.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"

namespace kiln {

// Shapes one dynamic input will be called with: the plan is built (tactics timed, graphs
// ready) for min, opt and max; other shapes in the range are built on first use from the
// plan's tactics, within the session's bound on kept shapes.
struct InputProfile {
  std::string input;
  std::vector<int64_t> min, opt, max;
};

// Parses "NAME:MIN,OPT,MAX" where each of MIN/OPT/MAX is a full shape "1x3x224x224" or, for an
// input with exactly one dynamic dimension, just that dimension's value ("input:1,8,32").
// `input` is the model input the profile names (for shorthand expansion), may be nullptr.
Status parse_input_profile(const std::string& text, const TensorInfo* input, InputProfile* out);

struct BuildOptions {
  SessionOptions session;  // backend (cuda, or cpu for a graph-only plan), precision, level, ...
  std::vector<InputProfile> profiles;
  // Profiles as `--profile` texts ("NAME:MIN,OPT,MAX"), parsed by build_plan against the
  // model's inputs (so the one-value shorthand works without loading the model twice).
  std::vector<std::string> profile_specs;
};

struct BuildReport {
  double seconds = 0;          // whole build
  int shape_sets = 0;          // input-shape sets built (profile points)
  int layers = 0;              // layers of the largest shape set
  int tactics_timed = 0;       // layers whose tactic was timed now ...
  int tactics_from_cache = 0;  // ... or taken from the timing cache
  size_t plan_bytes = 0;
};

// Builds `model_path` (ONNX) into `plan_path`.
Status build_plan(const std::string& model_path, const std::string& plan_path, const BuildOptions& options,
                  BuildReport* report);

// What `kiln plan-info` prints: build options, environment, layers with tactics, and the
// memory plan (weights, arena, workspace, peak) of every shape set built.
Status describe_plan(const std::string& plan_path, std::string* text);

}  // namespace kiln
