// lower_precision: runs the graph's float32 arithmetic in float16 or bfloat16 (build precision
// "fp16" / "bf16"), with float32 kept at the edges: graph inputs and outputs keep their dtypes
// (a Cast at each edge), weights are converted once here, and ops not known to be safe in 16
// bits stay float32 behind Casts. Kernels accumulate in float32 (GPU tensor cores, the CPU
// reference's compute_t), so only storage and elementwise rounding are 16-bit.
//
// Which ops are lowered is an allow-list: an op joins it when every float input of its
// type-parameter T may change dtype together (Resize's scales and roi, for example, stay float32:
// kFloat32Slots) and 16-bit storage is accurate enough for it. Everything else (RNNs, NMS,
// random ops, shape arithmetic) keeps float32.
#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"
#include "passes/matcher.h"
#include "passes/fusion_util.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace kiln::passes {
namespace {

const std::set<std::string>& lowerable_ops() {
  static const std::set<std::string> ops = {
      "Conv", "ConvTranspose", "FusedConv", "Gemm", "FusedGemm", "MatMul", "FusedElementwise",
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Neg", "Abs", "Reciprocal", "Sqrt",
      "Exp", "Log", "Erf", "Relu", "Sigmoid", "Tanh", "Clip", "LeakyRelu", "PRelu", "Elu", "Selu",
      "HardSigmoid", "HardSwish", "Gelu", "Softplus", "Swish", "Floor", "Ceil", "Round", "Where",
      "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ChannelsLastPool",
      "BatchNormalization", "LayerNormalization", "InstanceNormalization", "Softmax", "LogSoftmax",
      "ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum",
      "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Slice", "Split", "Pad",
      "Gather", "Expand", "Tile", "Identity", "Resize", "DepthToSpace", "SpaceToDepth",
  };
  return ops;
}

// Float inputs of lowered ops that are not the op's T and must stay float32.
bool float32_slot(const ir::Node& n, size_t input) {
  if (n.op_type == "Resize") return input == 1 || input == 2;  // roi, scales
  return false;
}

bool is_lowered(const ir::Node& n) {
  if (!lowerable_ops().count(n.op_type)) return false;
  if (!(n.domain.empty() || n.domain == "kiln")) return false;
  for (const ir::Value* v : n.inputs) {
    if (v && v->type.dtype == DType::kFloat32) return true;
  }
  return false;
}

class LowerPrecision final : public Pass {
 public:
  std::string name() const override { return "lower_precision"; }

  bool apply(ir::Graph& g, const PassContext& ctx) override {
    if (ctx.precision != "fp16" && ctx.precision != "bf16") return false;
    const DType low = ctx.precision == "fp16" ? DType::kFloat16 : DType::kBFloat16;
    g_ = &g;
    casts_.clear();
    own_casts_.clear();
    std::map<const ir::Value*, DType> original;
    for (const auto& v : g.values()) original[v.get()] = v->type.dtype;

    std::vector<ir::Node*> nodes;
    for (const auto& n : g.nodes()) nodes.push_back(n.get());
    bool changed = false;
    std::set<const ir::Node*> lowered;
    for (ir::Node* n : nodes) {
      if (is_lowered(*n)) lowered.insert(n);
    }
    for (ir::Node* n : nodes) {
      if (!lowered.count(n)) continue;
      for (size_t i = 0; i < n->inputs.size(); ++i) {
        ir::Value* v = n->inputs[i];
        if (!v || v->type.dtype != DType::kFloat32 || float32_slot(*n, i)) continue;
        if (v->producer && lowered.count(v->producer)) continue;  // becomes 16-bit by inference
        replace_input(n, i, converted(v, low));
        changed = true;
      }
    }
    if (!changed) return false;
    // Readers that stay float32 (comparisons, shape ops, ...) of what a lowered node writes
    // get a Cast back now, before types are re-inferred: a Less reading one lowered and one
    // float32 input would not type-check otherwise.
    for (ir::Node* n : nodes) {
      if (lowered.count(n)) continue;
      for (size_t i = 0; i < n->inputs.size(); ++i) {
        ir::Value* v = n->inputs[i];
        if (v && v->type.dtype == DType::kFloat32 && v->producer && lowered.count(v->producer)) {
          replace_input(n, i, converted(v, DType::kFloat32));
        }
      }
    }
    KILN_ASSERT(g.topological_sort(), "lower_precision made a cycle");
    if (ctx.infer_types) {
      Status st = ctx.infer_types(g);
      KILN_ASSERT(st.ok(), "types after lowering: {}", st.to_string());
    }
    // Readers that stayed float32 get their inputs cast back.
    nodes.clear();
    for (const auto& n : g.nodes()) nodes.push_back(n.get());
    for (ir::Node* n : nodes) {
      if (lowered.count(n) || own_casts_.count(n)) continue;
      for (size_t i = 0; i < n->inputs.size(); ++i) {
        ir::Value* v = n->inputs[i];
        if (v && v->type.dtype == low && original.count(v) && original[v] == DType::kFloat32) {
          replace_input(n, i, converted(v, DType::kFloat32));
        }
      }
    }
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      ir::Value* out = g.outputs[i];
      if (out && out->type.dtype == low && original.count(out) && original[out] == DType::kFloat32) {
        restore_output(out);
      }
    }
    KILN_ASSERT(g.topological_sort(), "lower_precision made a cycle");
    remove_dead_nodes(g);
    g.remove_unused_values();
    return true;
  }

 private:

  void add_cast(ir::Value* in, ir::Value* out, DType to) {
    ir::Node* cast = g_->add_node("Cast", {in}, {out}, in->name + "/to_" + dtype_name(to));
    cast->attrs["to"] = pattern::int_attr(dtype_to_onnx(to));
    own_casts_.insert(cast);
    cast->opset = std::max(cast->opset, 13);
  }

  // Graph output `out` (now 16-bit) keeps its name and float32: its producer writes a new 16-bit
  // value that the other readers read, and a Cast writes `out`.
  void restore_output(ir::Value* out) {
    ir::TensorType low_type = out->type;
    ir::Value* low_value = g_->add_value(out->name + "_" + dtype_name(low_type.dtype), low_type);
    ir::Node* producer = out->producer;
    if (!producer) return;
    for (ir::Value*& o : producer->outputs) {
      if (o == out) o = low_value;
    }
    low_value->producer = producer;
    out->producer = nullptr;
    g_->replace_all_uses(out, low_value);  // also points the graph output at low_value...
    for (ir::Value*& o : g_->outputs) {
      if (o == low_value) o = out;  // ...which must stay `out`
    }
    add_cast(low_value, out, DType::kFloat32);
    out->type.dtype = DType::kFloat32;
  }

  // `v` in dtype `to`: a converted constant, or the output of one Cast per (value, dtype).
  ir::Value* converted(ir::Value* v, DType to) {
    auto key = std::make_pair(v, to);
    if (auto it = casts_.find(key); it != casts_.end()) return it->second;
    ir::Value* out;
    if (v->constant) {
      out = g_->add_constant(v->name + "_" + dtype_name(to), v->constant->to(to));
    } else {
      ir::TensorType type = v->type;
      type.dtype = to;
      out = g_->add_value(v->name + "_" + dtype_name(to), type);
      add_cast(v, out, to);
    }
    casts_[key] = out;
    return out;
  }

  ir::Graph* g_ = nullptr;
  std::map<std::pair<ir::Value*, DType>, ir::Value*> casts_;
  std::set<const ir::Node*> own_casts_;  // the Casts this run added (never re-cast)
};

}  // namespace

std::unique_ptr<Pass> make_lower_precision() { return std::make_unique<LowerPrecision>(); }

}  // namespace kiln::passes
