// constant_folding: evaluates nodes whose inputs are all constants and replaces their outputs
// by constants. Walks in topological order, so a chain of such nodes (shape arithmetic feeding
// a Reshape) folds in one sweep.
#include <set>

#include "passes/cleanup_util.h"
#include "passes/matcher.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

bool is_quantize_op(const ir::Node& n) {
  return n.domain.empty() && (n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear");
}

// Whether folding `n` is allowed at all, before looking at sizes.
bool is_foldable(const ir::Node& n, const ir::Graph& g) {
  // Random ops differ between runs; Q/DQ of weights stay so that INT8 kernels see the pairs;
  // subgraphs are not evaluated here.
  if (is_random_op(n) || is_quantize_op(n) || has_subgraph(n)) return false;
  for (const ir::Value* in : n.inputs) {
    if (in && !in->constant) return false;
  }
  bool used = false;
  for (const ir::Value* out : n.outputs) used = used || (out && is_used(*out, g));
  if (!used) return false;  // dead: eliminate_dead_code removes it without evaluating it
  // An Identity that keeps a graph output's name for a constant would come back as itself.
  return !(n.op_type == "Identity" && is_graph_output(*n.output(0), g));
}

// Bytes of the constants only `n` reads: folding `n` frees them, so an output up to that
// size does not duplicate weights (a Transpose of a weight).
int64_t bytes_freed(const ir::Node& n, const ir::Graph& g) {
  int64_t freed = 0;
  std::set<const ir::Value*> seen;
  for (const ir::Value* in : n.inputs) {
    if (!in || !seen.insert(in).second || is_graph_output(*in, g)) continue;
    bool only_n = true;
    for (const ir::Node* c : in->consumers) only_n = only_n && c == &n;
    for (const auto& other : g.nodes()) {  // a subgraph capture is a read by another node
      for (const ir::Value* c : other->implicit_inputs) only_n = only_n && c != in;
    }
    if (only_n) freed += static_cast<int64_t>(in->constant->nbytes());
  }
  return freed;
}

// Output bytes from the static types, or -1 when some output shape is not concrete.
int64_t static_output_bytes(const ir::Node& n) {
  int64_t bytes = 0;
  for (const ir::Value* out : n.outputs) {
    if (!out) continue;
    if (!out->type.is_concrete() || out->type.dtype == DType::kUndefined) return -1;
    bytes += Tensor::numel_of(out->type.concrete()) * static_cast<int64_t>(dtype_size(out->type.dtype));
  }
  return bytes;
}

// Evaluates and replaces `n`; false (graph unchanged) when evaluation fails or the result is
// too large.
bool fold_node(ir::Graph& g, ir::Node* n, const PassContext& ctx) {
  auto fits = [&](int64_t bytes) { return bytes <= ctx.fold_size_limit_bytes || bytes <= bytes_freed(*n, g); };
  if (const int64_t predicted = static_output_bytes(*n); predicted >= 0 && !fits(predicted)) return false;

  std::vector<const Tensor*> inputs;
  for (const ir::Value* in : n->inputs) inputs.push_back(in ? &*in->constant : nullptr);
  std::vector<Tensor> outputs;
  if (!ctx.evaluate(*n, inputs, &outputs).ok() || outputs.size() != n->outputs.size()) return false;
  int64_t bytes = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (n->outputs[i] && !outputs[i].defined()) return false;
    if (n->outputs[i]) bytes += static_cast<int64_t>(outputs[i].nbytes());
  }
  if (!fits(bytes)) return false;

  for (size_t i = 0; i < outputs.size(); ++i) {
    if (n->outputs[i]) replace_with_constant(g, n->outputs[i], std::move(outputs[i]));
  }
  g.remove_node(n);
  return true;
}

bool fold_graph(ir::Graph& g, const PassContext& ctx) {
  std::vector<ir::Node*> order;
  for (const auto& n : g.nodes()) order.push_back(n.get());
  bool changed = false;
  for (ir::Node* n : order) {
    if (is_foldable(*n, g) && fold_node(g, n, ctx)) changed = true;
  }
  if (changed) g.remove_unused_values();
  return changed;
}

class ConstantFolding final : public Pass {
 public:
  std::string name() const override { return "constant_folding"; }
  bool apply(ir::Graph& g, const PassContext& ctx) override {
    if (!ctx.evaluate) return false;
    return for_each_graph(g, [&](ir::Graph& graph) { return fold_graph(graph, ctx); });
  }
};

}  // namespace

std::unique_ptr<Pass> make_constant_folding() { return std::make_unique<ConstantFolding>(); }

}  // namespace kiln::passes
