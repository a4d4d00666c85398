// Helpers for pass tests: build a graph from ONNX text, run one pass with the same context the
// builder gives it, print a graph in a canonical form for before/after comparisons, and check
// that a rewrite kept the numbers.
#pragma once
#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/dispatch.h"
#include "ir/graph.h"
#include "ir/verifier.h"
#include "onnx/importer.h"
#include "passes/pass.h"
#include "runtime/cpu_executor.h"
#include "runtime/node_eval.h"
#include "runtime/shape_inference.h"

namespace kiln::testing {

// Parses an ONNX text-format model and imports it with types inferred. Throws on failure.
inline std::unique_ptr<ir::Graph> graph_from_text(const std::string& text) {
  onnx::ModelProto model;
  auto parsed = onnx::OnnxParser::Parse(model, text.c_str());
  if (!parsed.IsOK()) throw std::runtime_error("bad test model: " + parsed.ErrorMessage());
  std::string bytes;
  model.SerializeToString(&bytes);
  std::unique_ptr<ir::Graph> g;
  Status st = onnx_io::import_model_bytes(bytes, ".", &g);
  if (!st.ok()) throw std::runtime_error("import failed: " + st.to_string());
  st = runtime::infer_graph_types(*g);
  if (!st.ok()) throw std::runtime_error("type inference failed: " + st.to_string());
  return g;
}

// The context the builder gives passes: CPU evaluation and static type inference.
inline passes::PassContext cpu_pass_context() {
  passes::PassContext ctx;
  ctx.evaluate = [](const ir::Node& node, const std::vector<const Tensor*>& inputs, std::vector<Tensor>* outputs) {
    auto no_subgraphs = [](const ir::Graph&, std::vector<Tensor>*) {
      return Status(StatusCode::kUnsupported, "no subgraphs");
    };
    return runtime::eval_node(node, inputs, no_subgraphs, outputs);
  };
  ctx.infer_types = [](ir::Graph& g) { return runtime::infer_graph_types(g); };
  return ctx;
}

// Runs `pass` once as the pass manager would (types re-inferred after a change) and verifies
// the graph. Returns what the pass reported.
inline bool run_pass(passes::Pass& pass, ir::Graph& g, const passes::PassContext& ctx = cpu_pass_context()) {
  const bool changed = pass.apply(g, ctx);
  if (changed) {
    Status st = ctx.infer_types(g);
    EXPECT_TRUE(st.ok()) << pass.name() << ": " << st.to_string();
  }
  Status st = ir::verify_graph(g);
  EXPECT_TRUE(st.ok()) << pass.name() << " broke the graph: " << st.to_string();
  return changed;
}

namespace detail {

inline std::string constant_text(const Tensor& t) {
  std::ostringstream os;
  os << dtype_name(t.dtype()) << "[";
  for (size_t i = 0; i < t.shape().size(); ++i) os << (i ? "," : "") << t.shape()[i];
  os << "]";
  if (t.numel() <= 8) {
    const Tensor f = t.to(DType::kFloat64);
    os << "{";
    for (int64_t i = 0; i < f.numel(); ++i) os << (i ? "," : "") << f.data_as<double>()[i];
    os << "}";
  }
  return os.str();
}

// Numbers nodes in the order a depth-first walk from the outputs finishes them, so the text
// depends on the graph's structure only, not on node names or the order of independent nodes.
struct CanonicalPrinter {
  std::map<const ir::Node*, int> id;
  std::ostringstream os;

  std::string ref(const ir::Value* v) {
    if (!v) return "_";
    if (v->constant) return "const " + constant_text(*v->constant);
    if (!v->producer) return v->outer ? "outer " + v->name : "%" + v->name;
    const ir::Node* p = v->producer;
    const auto out = std::find(p->outputs.begin(), p->outputs.end(), v) - p->outputs.begin();
    return "n" + std::to_string(id.at(p)) + (out ? "." + std::to_string(out) : "");
  }

  void visit(const ir::Node* n) {
    if (!n || id.count(n)) return;
    for (const ir::Value* in : n->inputs) {
      if (in) visit(in->producer);
    }
    const int my_id = static_cast<int>(id.size());
    id[n] = my_id;
    os << "n" << my_id << " = " << (n->domain.empty() ? "" : n->domain + ".") << n->op_type << "(";
    for (size_t i = 0; i < n->inputs.size(); ++i) os << (i ? ", " : "") << ref(n->inputs[i]);
    os << ")";
    for (const auto& [k, a] : n->attrs) {
      if (a.g) {
        CanonicalPrinter sub;
        os << " " << k << "={" << sub.print(*a.g) << "}";
      } else {
        os << " " << k << "=" << a.to_string();
      }
    }
    os << "\n";
  }

  std::string print(const ir::Graph& g) {
    for (const ir::Value* v : g.outputs) {
      if (v) visit(v->producer);
    }
    os << "return";
    for (const ir::Value* v : g.outputs) os << " " << ref(v);
    os << "\n";
    return os.str();
  }
};

}  // namespace detail

// Structure of `g` in a canonical text form: ops, attributes, how values flow, small constants
// by value. Two graphs that compute the same way print the same, whatever their names.
inline std::string canonical(const ir::Graph& g) { return detail::CanonicalPrinter{}.print(g); }

// Number of nodes of `op_type` in `g` (top level).
inline int count_ops(const ir::Graph& g, const std::string& op_type) {
  return static_cast<int>(std::count_if(g.nodes().begin(), g.nodes().end(),
                                        [&](const auto& n) { return n->op_type == op_type; }));
}

// Random inputs for every graph input (shapes must be concrete), uniform in [-2, 2] for
// floating types and small integers otherwise.
inline std::map<std::string, Tensor> random_inputs(const ir::Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::map<std::string, Tensor> inputs;
  for (const ir::Value* v : g.inputs) {
    if (!v->type.is_concrete()) throw std::runtime_error("input '" + v->name + "' has no concrete shape");
    Tensor f(DType::kFloat32, v->type.concrete());
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    for (int64_t i = 0; i < f.numel(); ++i) {
      f.data_as<float>()[i] = dtype_is_float(v->type.dtype) ? dist(rng) : static_cast<float>(static_cast<int>(dist(rng) * 2));
    }
    inputs[v->name] = f.to(v->type.dtype);
  }
  return inputs;
}

// Runs both graphs on the same random inputs and expects outputs equal within
// |a-b| <= atol + rtol*|b| (rewrites reorder float arithmetic, so exact equality is not owed).
inline void expect_same_outputs(const ir::Graph& before, const ir::Graph& after, uint32_t seed = 1,
                                double rtol = 1e-5, double atol = 1e-5) {
  const auto inputs = random_inputs(before, seed);
  std::vector<Tensor> want, got;
  Status st = runtime::CpuExecutor(before).run(inputs, &want);
  ASSERT_TRUE(st.ok()) << st.to_string();
  st = runtime::CpuExecutor(after).run(inputs, &got);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].shape(), got[i].shape()) << "output " << i;
    ASSERT_EQ(want[i].dtype(), got[i].dtype()) << "output " << i;
    const Tensor a = want[i].to(DType::kFloat64), b = got[i].to(DType::kFloat64);
    for (int64_t j = 0; j < a.numel(); ++j) {
      const double x = a.data_as<double>()[j], y = b.data_as<double>()[j];
      ASSERT_LE(std::abs(x - y), atol + rtol * std::abs(x)) << "output " << i << " element " << j;
    }
  }
}

}  // namespace kiln::testing
