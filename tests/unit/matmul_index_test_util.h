// Helpers for the matmul- and index-family unit tests: build tensors, run one node through
// shape inference + the CPU kernel, or run a whole text-format model (to exercise the
// importer's canonicalization of old opsets).
#pragma once
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/error.h"
#include "ir/graph.h"
#include "kiln/session.h"
#include "runtime/node_eval.h"
#include "test_models.h"

namespace kiln::mmtest {

template <class T>
Tensor make(std::vector<int64_t> shape, std::vector<T> values) {
  Tensor t(dtype_of<T>(), std::move(shape));
  KILN_ASSERT(static_cast<size_t>(t.numel()) == values.size(), "test tensor size");
  std::copy(values.begin(), values.end(), t.data_as<T>());
  return t;
}

template <class T>
std::vector<T> values(const Tensor& t) {
  EXPECT_EQ(t.dtype(), dtype_of<T>());
  return std::vector<T>(t.data_as<T>(), t.data_as<T>() + t.numel());
}

inline ir::Attribute int_attr(int64_t v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInt;
  a.i = v;
  return a;
}

inline ir::Attribute float_attr(float v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kFloat;
  a.f = v;
  return a;
}

inline ir::Attribute string_attr(std::string s) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kString;
  a.s = std::move(s);
  return a;
}

// Runs one node of `op` with `num_outputs` outputs (an undefined input Tensor is an omitted
// optional input) and returns its status.
inline Status run_op(const std::string& op, int opset, std::map<std::string, ir::Attribute> attrs,
                     const std::vector<Tensor>& inputs, std::vector<Tensor>* outs, int num_outputs = 1) {
  ir::Graph g;
  std::vector<ir::Value*> ins;
  std::vector<const Tensor*> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool present = inputs[i].defined();
    ins.push_back(present ? g.add_value("in" + std::to_string(i),
                                        ir::TensorType::of(inputs[i].dtype(), inputs[i].shape()))
                          : nullptr);
    ptrs.push_back(present ? &inputs[i] : nullptr);
  }
  std::vector<ir::Value*> out_values;
  for (int i = 0; i < num_outputs; ++i) out_values.push_back(g.add_value("out" + std::to_string(i)));
  ir::Node* node = g.add_node(op, ins, out_values, "n");
  node->opset = opset;
  node->attrs = std::move(attrs);
  auto no_subgraphs = [](const ir::Graph&, std::vector<Tensor>*) { return Status(StatusCode::kInternal, "none"); };
  return runtime::eval_node(*node, ptrs, no_subgraphs, outs);
}

// The same for a single-output op.
inline Status run_op1(const std::string& op, int opset, std::map<std::string, ir::Attribute> attrs,
                      const std::vector<Tensor>& inputs, Tensor* out) {
  std::vector<Tensor> outs;
  Status s = run_op(op, opset, std::move(attrs), inputs, &outs);
  if (s.ok()) *out = outs.at(0);
  return s;
}

// Loads a text-format model and runs it on `inputs`.
inline Status run_model(const std::string& text, const std::string& stem, const std::map<std::string, Tensor>& inputs,
                        std::vector<Tensor>* outs) {
  std::unique_ptr<Session> s;
  SessionOptions opts;
  opts.backend = "cpu";
  KILN_RETURN_IF_ERROR(Session::load(testing::write_text_model(text, stem), opts, &s));
  return s->run(inputs, outs);
}

}  // namespace kiln::mmtest
