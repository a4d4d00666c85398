#include "passes/pattern_util.h"

#include <algorithm>
#include <cmath>

#include "ops/shape_util.h"

namespace kiln::passes::pattern {

std::optional<double> scalar_constant(const ir::Value* v) {
  if (!v || !v->constant || v->constant->numel() != 1 || !dtype_is_float(v->constant->dtype())) return std::nullopt;
  return v->constant->to(DType::kFloat64).data_as<double>()[0];
}

bool near(double got, double want, double rel_tol) { return std::abs(got - want) <= rel_tol * std::abs(want); }

Pattern scalar_near(double want) {
  return Pattern::constant().where_value([want](const ir::Value& v) {
    const auto c = scalar_constant(&v);
    return c && near(*c, want);
  });
}

bool reduce_axes(const ir::Node& n, int rank, std::vector<int64_t>* axes) {
  if (rank < 0) return false;
  axes->clear();
  const ir::Value* a = n.input(1);
  std::vector<int64_t> raw;
  if (a) {
    if (!a->constant || !ops::tensor_to_ints(*a->constant, &raw).ok()) return false;
  }
  if (raw.empty()) {
    if (n.attr_i("noop_with_empty_axes", 0) != 0) return false;
    for (int i = 0; i < rank; ++i) axes->push_back(i);
    return true;
  }
  for (int64_t r : raw) {
    int64_t axis = 0;
    if (!ops::normalize_axis(r, rank, &axis).ok()) return false;
    axes->push_back(axis);
  }
  std::sort(axes->begin(), axes->end());
  axes->erase(std::unique(axes->begin(), axes->end()), axes->end());
  return true;
}

ir::Attribute int_attr(int64_t i) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInt;
  a.i = i;
  return a;
}

ir::Attribute ints_attr(std::vector<int64_t> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

ir::Attribute float_attr(float f) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kFloat;
  a.f = f;
  return a;
}

ir::Attribute string_attr(std::string s) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kString;
  a.s = std::move(s);
  return a;
}

bool keeps_dims(const ir::Node& n) { return n.attr_i("keepdims", 1) != 0; }

bool are_trailing(const std::vector<int64_t>& axes, int rank) {
  const int k = static_cast<int>(axes.size());
  if (k == 0 || k > rank) return false;
  for (int i = 0; i < k; ++i) {
    if (axes[i] != rank - k + i) return false;
  }
  return true;
}

ir::Node* replace_with_node(ir::Graph& g, ir::Value* from, const std::string& op_type,
                            std::vector<ir::Value*> inputs, int min_opset) {
  ir::Value* out = g.add_value(from->name + "_" + op_type, from->type);
  ir::Node* n = g.add_node(op_type, std::move(inputs), {out}, from->name + "/" + op_type);
  n->opset = std::max(n->opset, min_opset);
  replace_value(g, from, out);
  return n;
}

bool only_read_by(const ir::Value& v, const std::vector<ir::Node*>& nodes, const ir::Graph& g) {
  if (is_graph_output(v, g)) return false;
  for (const auto& n : g.nodes()) {
    if (std::find(n->implicit_inputs.begin(), n->implicit_inputs.end(), &v) != n->implicit_inputs.end()) return false;
  }
  return std::all_of(v.consumers.begin(), v.consumers.end(), [&](const ir::Node* c) {
    return std::find(nodes.begin(), nodes.end(), c) != nodes.end();
  });
}

}  // namespace kiln::passes::pattern
