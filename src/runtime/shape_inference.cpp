#include "runtime/shape_inference.h"

#include <map>

#include "core/error.h"
#include "ops/op_schema.h"
#include "runtime/node_eval.h"

namespace kiln::runtime {
namespace {

// Values larger than this are not evaluated during inference: the goal is shape arithmetic,
// not constant folding of weights (that is the optimizer's job).
constexpr int64_t kMaxEvalElements = 4096;

using KnownValues = std::map<const ir::Value*, Tensor>;

const Tensor* known_value(const ir::Value* v, const KnownValues& known) {
  if (!v) return nullptr;
  if (v->constant) return &*v->constant;
  auto it = known.find(v);
  if (it != known.end()) return &it->second;
  return v->outer ? known_value(v->outer, known) : nullptr;
}

Status infer_into(ir::Graph& g, KnownValues& known) {
  for (auto& v : g.values()) {
    if (v->outer) v->type = v->outer->type;
  }
  for (const auto& node_ptr : g.nodes()) {
    ir::Node& node = *node_ptr;
    for (auto& [k, a] : node.attrs) {
      if (a.g) KILN_RETURN_IF_ERROR(infer_into(*a.g, known));
    }
    const ops::OpSchema* schema = ops::OpRegistry::instance().find(node.domain, node.op_type);
    if (!schema) return unsupported("{}: op is not supported", node.describe());
    ops::InferContext ctx{node, {}, {}, {}, {}};
    bool all_known = true;
    for (const ir::Value* v : node.inputs) {
      ctx.input_types.push_back(v ? &v->type : nullptr);
      const Tensor* val = known_value(v, known);
      ctx.input_values.push_back(val);
      if (v && (!val || val->numel() > kMaxEvalElements)) all_known = false;
      if (v && v->type.dtype == DType::kUndefined) {
        return invalid_model("{}: input '{}' has no known element type", node.describe(), v->name);
      }
    }
    ctx.output_types.resize(node.outputs.size());
    ctx.output_values.resize(node.outputs.size());
    KILN_RETURN_IF_ERROR(schema->infer(ctx).with_context(node.describe()));
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      ir::Value* out = node.outputs[i];
      if (!out) continue;
      out->type = ctx.output_types[i];
      if (ctx.output_values[i]) known[out] = std::move(*ctx.output_values[i]);
    }
    // Evaluate small all-constant nodes so shapes computed from them become known.
    const bool small_outputs = [&] {
      for (const auto& t : ctx.output_types) {
        if (!t.is_concrete() || ir::TensorType::of(t.dtype, {}).dtype == DType::kUndefined) return false;
        int64_t n = 1;
        for (int64_t d : t.concrete()) n *= d;
        if (n > kMaxEvalElements) return false;
      }
      return true;
    }();
    if (all_known && small_outputs && node.attrs.count("then_branch") == 0) {
      std::vector<const Tensor*> ins(ctx.input_values.begin(), ctx.input_values.end());
      std::vector<Tensor> outs;
      auto no_subgraphs = [](const ir::Graph&, std::vector<Tensor>*) {
        return Status(StatusCode::kUnsupported, "subgraphs are not evaluated during inference");
      };
      Status st;
      try {
        st = eval_node(node, ins, no_subgraphs, &outs);
      } catch (const std::exception&) {
        st = Status(StatusCode::kInternal, "evaluation failed");  // leave the value unknown
      }
      if (st.ok()) {
        for (size_t i = 0; i < node.outputs.size(); ++i) {
          if (node.outputs[i] && outs[i].defined()) known[node.outputs[i]] = std::move(outs[i]);
        }
      }
    }
  }
  return Status::OK();
}

}  // namespace

Status infer_graph_types(ir::Graph& g) {
  KnownValues known;
  return infer_into(g, known);
}

}  // namespace kiln::runtime
