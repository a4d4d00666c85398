// A graph pass: a small object with a name that rewrites a graph in place and says whether it
// changed anything. Passes never execute graphs themselves; what they need computed (constant
// folding) or re-derived (tensor types) comes through the PassContext, which the builder fills
// from the runtime, so the dependency arrow stays passes -> ops -> ir.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::passes {

// Computes a node's outputs from constant inputs (nullptr for absent optional inputs).
using NodeEvaluator =
    std::function<Status(const ir::Node&, const std::vector<const Tensor*>&, std::vector<Tensor>*)>;
// Re-derives every value's type (dtype and shape) from the graph inputs.
using TypeInferrer = std::function<Status(ir::Graph&)>;

struct PassContext {
  std::string backend = "cpu";     // the backend the graph is optimized for: "cpu", "cuda", "hip"
  std::string precision = "fp32";  // the build precision: "fp32", "tf32", "fp16", "bf16", "int8", "fp8"
  // The backend runs convolutions faster channels-last (NHWC); the layout pass honours it.
  bool prefer_channels_last = false;
  // Constant folding does not create a constant larger than this (bytes) unless it replaces
  // constants at least as large, so weights are never duplicated.
  int64_t fold_size_limit_bytes = 1 << 20;
  NodeEvaluator evaluate;  // may be empty: passes that need it then do nothing
  TypeInferrer infer_types;
};

class Pass {
 public:
  virtual ~Pass() = default;
  // snake_case, as used by --disable-pass and in --dump-passes output.
  virtual std::string name() const = 0;
  // Rewrites `g`; returns true if anything changed. Must be deterministic and idempotent.
  // Values the pass creates get their types set by the pass (copied from the values they
  // replace where it can); the pass manager re-infers all types after a pass that changed
  // the graph. Broken invariants throw (core/error.h); user errors cannot reach a pass.
  virtual bool apply(ir::Graph& g, const PassContext& ctx) = 0;
};

}  // namespace kiln::passes
