// assign_layout: runs convolutions channels-last (NHWC) for backends that prefer it
// (PassContext::prefer_channels_last), with as few Transposes as possible.
//
// Every kiln.FusedConv becomes channels_last=1. Walking the graph in order, each value
// produced channels-last keeps a channels-last "twin"; the ops after a convolution that do
// not care about layout run on the twins too, so a chain conv -> relu -> conv -> add -> pool
// needs no Transpose inside:
//   - elementwise ops whose other operands are scalars, constants (permuted at build time)
//     or channels-last themselves, and kiln.FusedElementwise with such operands;
//   - Concat of channels-last or constant inputs (its axis is remapped);
//   - Resize (given `axes`, so scales, sizes and roi stay as they are);
//   - pools, which become kiln.ChannelsLastPool (src/ops/layout_ops.cpp).
// Anything else (Reshape, Flatten, Gemm, Softmax, graph outputs, ...) reads the original
// channels-first value, which a Transpose recreates from the twin only when something reads
// it. A channels-first value a convolution reads gets one Transpose to channels-last, shared
// by all its channels-last readers. Graph inputs and outputs keep their layout.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "ops/layout_ops.h"
#include "passes/fusion_util.h"
#include "passes/passes.h"
#include "passes/pattern_util.h"

namespace kiln::passes {
namespace {

// Ops computed element by element whose input 0 is the data and any other input a
// parameter that must be a scalar (Clip's min/max).
const std::set<std::string> kUnaryOps = {
    "Abs",      "Acos",     "Asin",        "Atan",  "Cast",       "Ceil",      "Celu",        "Clip",   "Cos",
    "Cosh",     "Elu",      "Erf",         "Exp",   "Floor",      "Gelu",      "HardSigmoid", "HardSwish",
    "Identity", "IsInf",    "IsNaN",       "LeakyRelu", "Log",    "Mish",      "Neg",         "Not",    "Reciprocal",
    "Relu",     "Round",    "Selu",        "Sigmoid", "Sign",     "Sin",       "Sinh",        "Softplus", "Softsign",
    "Sqrt",     "Swish",    "Tan",         "Tanh",  "ThresholdedRelu"};
// Elementwise ops whose inputs all broadcast together.
const std::set<std::string> kBroadcastOps = {
    "Add", "And", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Div",   "Equal", "Greater", "GreaterOrEqual",
    "Less", "LessOrEqual", "Max", "Mean", "Min", "Mod", "Mul", "Or", "Pow", "PRelu", "Sub", "Sum", "Where", "Xor"};

using pattern::int_attr;
using pattern::ints_attr;
using pattern::string_attr;

// A constant of rank <= `rank`, left-padded with 1s to `rank` (as broadcasting reads it) and
// transposed channels-last.
Tensor channels_last_constant(const Tensor& c, int rank) {
  std::vector<int64_t> padded(static_cast<size_t>(rank - c.rank()), 1);
  padded.insert(padded.end(), c.shape().begin(), c.shape().end());
  const std::vector<int64_t> perm = ops::to_channels_last_perm(rank);
  std::vector<int64_t> in_strides(static_cast<size_t>(rank), 1), out_shape;
  for (int i = rank - 2; i >= 0; --i) in_strides[i] = in_strides[i + 1] * padded[i + 1];
  for (int64_t p : perm) out_shape.push_back(padded[p]);
  Tensor out = Tensor::uninitialized(c.dtype(), out_shape);
  const size_t esize = dtype_size(c.dtype());
  const auto* src = static_cast<const char*>(c.data());
  auto* dst = static_cast<char*>(out.data());
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);  // over the output
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t offset = 0;
    for (int k = 0; k < rank; ++k) offset += index[k] * in_strides[perm[k]];
    std::memcpy(dst + i * esize, src + offset * esize, esize);
    for (int k = rank - 1; k >= 0 && ++index[k] == out_shape[k]; --k) index[k] = 0;
  }
  return out;
}

bool is_scalar_like(const ir::Value& v, int rank) {
  if (!v.type.shape || v.type.rank() > rank) return false;
  return std::all_of(v.type.shape->begin(), v.type.shape->end(), [](const ir::Dim& d) { return d.known() && d.value == 1; });
}

class LayoutAssigner {
 public:
  explicit LayoutAssigner(ir::Graph& g) : g_(g) {}

  bool run() {
    std::vector<ir::Node*> order;
    for (const auto& n : g_.nodes()) order.push_back(n.get());
    bool changed = false;
    for (ir::Node* n : order) changed = visit(n) || changed;
    if (!changed) return false;
    restore_channels_first_values();
    KILN_ASSERT(g_.topological_sort(), "assign_layout created a cycle");
    g_.remove_unused_values();
    return true;
  }

 private:
  static int rank_of(const ir::Value* v) { return v ? v->type.rank() : -1; }

  bool visit(ir::Node* n) {
    if (n->domain == "kiln" && n->op_type == "FusedConv") return convert_conv(n);
    const int rank = rank_of(n->output(0));
    if (rank < 3 || !reads_native(n)) return false;
    if (n->domain.empty() && kUnaryOps.count(n->op_type)) return convert_elementwise(n, rank, /*operands=*/1);
    if (n->domain.empty() && kBroadcastOps.count(n->op_type)) return convert_elementwise(n, rank, n->inputs.size());
    if (n->domain == "kiln" && n->op_type == "FusedElementwise") return convert_elementwise(n, rank, n->inputs.size());
    if (n->domain.empty() && n->op_type == "Concat") return convert_concat(n, rank);
    if (n->domain.empty() && ops::is_channels_last_pool_mode(n->op_type)) return convert_pool(n, rank);
    if (n->domain.empty() && n->op_type == "Resize") return convert_resize(n, rank);
    return false;
  }

  // True when some input of `n` is produced channels-last by a converted node: carrying the
  // layout through `n` then saves a Transpose instead of costing one.
  bool reads_native(const ir::Node* n) const {
    return std::any_of(n->inputs.begin(), n->inputs.end(), [&](const ir::Value* v) { return v && native_.count(v); });
  }

  bool convert_conv(ir::Node* n) {
    const int rank = rank_of(n->input(0));
    if (n->attr_i("channels_last", 0) != 0 || rank < 3 || rank_of(n->output(0)) != rank) return false;
    if (n->input(3) && rank_of(n->input(3)) != rank) return false;
    set_input(n, 0, channels_last_of(n->input(0)));
    if (n->input(3)) set_input(n, 3, channels_last_of(n->input(3)));
    n->attrs["channels_last"] = int_attr(1);
    convert_outputs(n);
    return true;
  }

  // Inputs [0, operands) broadcast together; the others must be scalars.
  bool convert_elementwise(ir::Node* n, int rank, size_t operands) {
    std::vector<ir::Value*> replaced(n->inputs.size(), nullptr);
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      ir::Value* v = n->inputs[i];
      if (!v || is_scalar_like(*v, rank)) continue;
      if (i >= operands) return false;
      if (twin_.count(v) && rank_of(v) == rank) {
        replaced[i] = twin_.at(v);
      } else if (v->is_constant() && rank_of(v) <= rank) {
        replaced[i] = constant_twin(v, rank);
      } else {
        return false;
      }
    }
    for (size_t i = 0; i < replaced.size(); ++i) {
      if (replaced[i]) set_input(n, i, replaced[i]);
    }
    convert_outputs(n);
    return true;
  }

  // Inputs channels-last or constant (exporters pad channels by concatenating zeros).
  bool convert_concat(ir::Node* n, int rank) {
    for (const ir::Value* v : n->inputs) {
      if (!v || rank_of(v) != rank || (!twin_.count(v) && !v->is_constant())) return false;
    }
    int64_t axis = n->attr_i("axis", 0);
    if (axis < 0) axis += rank;
    const std::vector<int64_t> perm = ops::to_channels_last_perm(rank);
    const int64_t new_axis = std::find(perm.begin(), perm.end(), axis) - perm.begin();
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      ir::Value* v = n->inputs[i];
      set_input(n, i, twin_.count(v) ? twin_.at(v) : constant_twin(v, rank));
    }
    n->attrs["axis"] = int_attr(new_axis);
    convert_outputs(n);
    return true;
  }

  // Resize names the axes its scales/sizes/roi address (opset 18): listing the channels-first
  // axes' positions in the channels-last tensor keeps those inputs as they are.
  bool convert_resize(ir::Node* n, int rank) {
    if (n->has_attr("axes") || rank_of(n->input(0)) != rank || !native_.count(n->input(0))) return false;
    set_input(n, 0, twin_.at(n->input(0)));
    n->attrs["axes"] = ints_attr(ops::to_channels_first_perm(rank));
    n->opset = std::max(n->opset, 18);
    convert_outputs(n);
    return true;
  }

  bool convert_pool(ir::Node* n, int rank) {
    // MaxPool's Indices output would index the channels-first tensor: leave such pools alone.
    if (n->outputs.size() != 1 || rank_of(n->input(0)) != rank || !native_.count(n->input(0))) return false;
    set_input(n, 0, twin_.at(n->input(0)));
    n->attrs["mode"] = string_attr(n->op_type);
    n->op_type = "ChannelsLastPool";
    n->domain = "kiln";
    convert_outputs(n);
    return true;
  }

  // The channels-last twin of `v`, made by a Transpose the first time it is asked for.
  ir::Value* channels_last_of(ir::Value* v) {
    if (auto it = twin_.find(v); it != twin_.end()) return it->second;
    const int rank = rank_of(v);
    ir::Value* t = g_.add_value(v->name + "_nhwc", ops::permute_type(v->type, ops::to_channels_last_perm(rank)));
    ir::Node* tr = g_.add_node("Transpose", {v}, {t}, v->name + "/to_nhwc");
    tr->attrs["perm"] = ints_attr(ops::to_channels_last_perm(rank));
    twin_[v] = t;
    return t;
  }

  ir::Value* constant_twin(ir::Value* c, int rank) {
    auto key = std::make_pair(c, rank);
    if (auto it = constant_twins_.find(key); it != constant_twins_.end()) return it->second;
    ir::Value* t = g_.add_constant(c->name + "_nhwc", channels_last_constant(*c->constant, rank));
    t->type = ir::TensorType::of(t->constant->dtype(), t->constant->shape());
    constant_twins_[key] = t;
    return t;
  }

  void set_input(ir::Node* n, size_t slot, ir::Value* to) {
    if (n->inputs[slot] != to) replace_input(n, slot, to);
  }

  // `n` now writes channels-last values; the original values lose their producer until
  // restore_channels_first_values() gives them a Transpose (if anything still reads them).
  void convert_outputs(ir::Node* n) {
    for (ir::Value*& out : n->outputs) {
      if (!out) continue;
      const int rank = rank_of(out);
      KILN_ASSERT(rank >= 3, "{}: channels-last output of rank {}", n->describe(), rank);
      ir::Value* twin = g_.add_value(out->name + "_nhwc", ops::permute_type(out->type, ops::to_channels_last_perm(rank)));
      out->producer = nullptr;
      twin->producer = n;
      twin_[out] = twin;
      native_.insert(out);
      orphans_.push_back(out);
      out = twin;
    }
  }

  void restore_channels_first_values() {
    std::set<const ir::Value*> implicit;
    for (const auto& n : g_.nodes()) implicit.insert(n->implicit_inputs.begin(), n->implicit_inputs.end());
    for (ir::Value* v : orphans_) {
      const bool graph_output = std::find(g_.outputs.begin(), g_.outputs.end(), v) != g_.outputs.end();
      if (v->consumers.empty() && !graph_output && !implicit.count(v)) continue;
      ir::Node* tr = g_.add_node("Transpose", {twin_.at(v)}, {v}, v->name + "/to_nchw");
      tr->attrs["perm"] = ints_attr(ops::to_channels_first_perm(rank_of(v)));
    }
  }

  ir::Graph& g_;
  std::map<const ir::Value*, ir::Value*> twin_;   // channels-first value -> its channels-last twin
  std::set<const ir::Value*> native_;             // values whose twin a converted node produces
  std::vector<ir::Value*> orphans_;               // those values, in order
  std::map<std::pair<const ir::Value*, int>, ir::Value*> constant_twins_;
};

class AssignLayout final : public Pass {
 public:
  std::string name() const override { return "assign_layout"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    const bool has_conv = std::any_of(g.nodes().begin(), g.nodes().end(), [](const auto& n) {
      return n->domain == "kiln" && n->op_type == "FusedConv" && n->attr_i("channels_last", 0) == 0;
    });
    if (!has_conv) return false;
    if (!LayoutAssigner(g).run()) return false;
    if (!g.opsets.count("kiln")) g.opsets["kiln"] = 1;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_assign_layout() { return std::make_unique<AssignLayout>(); }

}  // namespace kiln::passes
