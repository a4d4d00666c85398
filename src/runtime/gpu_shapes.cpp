#include "runtime/gpu_shapes.h"

#include "core/error.h"
#include "ops/op_schema.h"
#include "runtime/node_eval.h"

namespace kiln::runtime {
namespace {

// Host evaluation at build is for shape arithmetic and small constant subgraphs the optimizer
// left; big ones would cost host memory and build time better spent on the GPU.
constexpr int64_t kMaxFoldElements = 1 << 20;

bool has_subgraph(const ir::Node& n) {
  for (const auto& [k, a] : n.attrs) {
    if (a.g) return true;
  }
  return false;
}

}  // namespace

Status infer_concrete_types(const ir::Graph& g, const std::vector<ir::TensorType>& input_types, ConcreteTypes* out) {
  KILN_ASSERT(input_types.size() == g.inputs.size(), "{} input types for {} inputs", input_types.size(), g.inputs.size());
  for (size_t i = 0; i < g.inputs.size(); ++i) out->types[g.inputs[i]] = input_types[i];
  auto value_of = [&](const ir::Value* v) -> const Tensor* {
    if (v->constant) return &*v->constant;
    auto it = out->folded.find(v);
    return it == out->folded.end() ? nullptr : &it->second;
  };
  for (const auto& node_ptr : g.nodes()) {
    const ir::Node& node = *node_ptr;
    const ops::OpSchema* schema = ops::OpRegistry::instance().find(node.domain, node.op_type);
    if (!schema) return unsupported("{}: op is not supported", node.describe());
    ops::InferContext ctx{node, {}, {}, {}, {}};
    bool all_known = !has_subgraph(node);
    for (const ir::Value* v : node.inputs) {
      if (!v) {
        ctx.input_types.push_back(nullptr);
        ctx.input_values.push_back(nullptr);
        continue;
      }
      if (v->constant) out->types[v] = ir::TensorType::of(v->constant->dtype(), v->constant->shape());
      auto it = out->types.find(v);
      KILN_ASSERT(it != out->types.end(), "{}: input '{}' has no type yet", node.describe(), v->name);
      ctx.input_types.push_back(&it->second);
      const Tensor* val = value_of(v);
      ctx.input_values.push_back(val);
      all_known = all_known && val != nullptr;
    }
    ctx.output_types.resize(node.outputs.size());
    ctx.output_values.resize(node.outputs.size());
    KILN_RETURN_IF_ERROR(schema->infer(ctx).with_context(node.describe()));
    bool small = true;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const ir::Value* o = node.outputs[i];
      if (!o) continue;
      const ir::TensorType& t = ctx.output_types[i];
      if (!t.is_concrete()) {
        return unsupported("{}: output '{}' has shape {}, which depends on tensor data; the GPU executor needs every "
                           "shape known when it plans (run this model with --backend cpu)",
                           node.describe(), o->name, t.to_string());
      }
      out->types[o] = t;
      small = small && Tensor::numel_of(t.concrete()) <= kMaxFoldElements;
    }
    bool folded = false;
    if (all_known && small) {
      std::vector<Tensor> outs;
      auto no_subgraphs = [](const ir::Graph&, std::vector<Tensor>*) { return Status(StatusCode::kUnsupported, ""); };
      Status st;
      try {
        st = eval_node(node, ctx.input_values, no_subgraphs, &outs);
      } catch (const std::exception&) {
        st = Status(StatusCode::kInternal, "");  // leave it to run on the device
      }
      if (st.ok()) {
        for (size_t i = 0; i < node.outputs.size(); ++i) {
          if (node.outputs[i]) out->folded[node.outputs[i]] = std::move(outs[i]);
        }
        folded = true;
      }
    }
    if (!folded) out->nodes.push_back(&node);
  }
  return Status::OK();
}

}  // namespace kiln::runtime
