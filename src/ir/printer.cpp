#include <fmt/format.h>

#include "ir/graph.h"

namespace kiln::ir {
namespace {

std::string value_ref(const Value* v) { return v ? "%" + v->name : "_"; }

void print_into(const Graph& g, const std::string& indent, std::string& out) {
  out += fmt::format("{}graph {} (", indent, g.name.empty() ? "main" : g.name);
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    out += fmt::format("{}{}: {}", i ? ", " : "", value_ref(g.inputs[i]), g.inputs[i]->type.to_string());
  }
  out += ")\n";
  for (const auto& v : g.values()) {
    if (v->constant) {
      out += fmt::format("{}  const {}: {}\n", indent, value_ref(v.get()), v->type.to_string());
    }
  }
  for (const auto& n : g.nodes()) {
    std::string outs, ins, attrs;
    for (const Value* v : n->outputs) outs += (outs.empty() ? "" : ", ") + value_ref(v);
    for (const Value* v : n->inputs) ins += (ins.empty() ? "" : ", ") + value_ref(v);
    for (const auto& [k, a] : n->attrs) attrs += (attrs.empty() ? "" : ", ") + k + "=" + a.to_string();
    std::string types;
    for (const Value* v : n->outputs) {
      if (v) types += (types.empty() ? "" : ", ") + v->type.to_string();
    }
    out += fmt::format("{}  {} = {}({}){}  # {} {}\n", indent, outs, n->op_type, ins,
                       attrs.empty() ? "" : " {" + attrs + "}", n->name, types);
    for (const auto& [k, a] : n->attrs) {
      if (a.g) print_into(*a.g, indent + "    ", out);
    }
  }
  std::string outs;
  for (const Value* v : g.outputs) outs += (outs.empty() ? "" : ", ") + value_ref(v);
  out += fmt::format("{}  return {}\n", indent, outs);
}

}  // namespace

std::string print_graph(const Graph& g) {
  std::string out;
  print_into(g, "", out);
  return out;
}

}  // namespace kiln::ir
