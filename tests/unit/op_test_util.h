// Helpers for the op unit tests: build and read tensors, make attributes, run one node through
// schema canonicalization + shape inference + the CPU kernel, or run a whole text-format model
// (to exercise the importer's canonicalization of old opsets).
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
#include "ops/op_schema.h"
#include "runtime/node_eval.h"
#include "test_models.h"

namespace kiln::testing {

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

inline ir::Attribute ints_attr(std::vector<int64_t> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

inline ir::Attribute floats_attr(std::vector<float> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kFloats;
  a.floats = std::move(v);
  return a;
}

inline ir::Attribute strings_attr(std::vector<std::string> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kStrings;
  a.strings = std::move(v);
  return a;
}

// Runs one node of `op` at `opset` with `num_outputs` outputs (an undefined input Tensor is an
// omitted optional input; output `omit`, if >= 0, is left out) through the schema's
// canonicalize, shape inference and the CPU kernel. Returns the status, fills `outs`.
inline Status run_op(const std::string& op, int opset, std::map<std::string, ir::Attribute> attrs,
                     const std::vector<Tensor>& inputs, std::vector<Tensor>* outs, int num_outputs = 1,
                     int omit = -1) {
  ir::Graph g;
  g.opsets[""] = opset;
  std::vector<ir::Value*> ins;
  std::map<const ir::Value*, const Tensor*> fed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ir::Value* v = nullptr;
    if (inputs[i].defined()) {
      v = g.add_value("in" + std::to_string(i), ir::TensorType::of(inputs[i].dtype(), inputs[i].shape()));
      fed[v] = &inputs[i];
    }
    ins.push_back(v);
  }
  std::vector<ir::Value*> out_values;
  for (int i = 0; i < num_outputs; ++i) {
    out_values.push_back(i == omit ? nullptr : g.add_value("out" + std::to_string(i)));
  }
  ir::Node* node = g.add_node(op, ins, out_values, "n");
  node->opset = opset;
  node->attrs = std::move(attrs);
  const ops::OpSchema* schema = ops::OpRegistry::instance().find("", op);
  if (!schema) return unsupported("no schema for {}", op);
  if (schema->canonicalize) KILN_RETURN_IF_ERROR(schema->canonicalize(*node, g));
  // Canonicalization may have turned attributes into constant inputs.
  std::vector<const Tensor*> ptrs;
  for (const ir::Value* v : node->inputs) {
    ptrs.push_back(!v ? nullptr : v->constant ? &*v->constant : fed.at(v));
  }
  auto no_subgraphs = [](const ir::Graph&, std::vector<Tensor>*) { return Status(StatusCode::kInternal, "none"); };
  return runtime::eval_node(*node, ptrs, no_subgraphs, outs);
}

// The same for a single-output op.
inline Status run_op(const std::string& op, int opset, std::map<std::string, ir::Attribute> attrs,
                     const std::vector<Tensor>& inputs, Tensor* out) {
  std::vector<Tensor> outs;
  KILN_RETURN_IF_ERROR(run_op(op, opset, std::move(attrs), inputs, &outs));
  *out = outs.at(0);
  return Status::OK();
}

// Loads a text-format model (written as `<tmp>/<stem>.onnx`) into a CPU session and runs it on
// `inputs`.
inline Status run_model(const std::string& text, const std::string& stem, const std::map<std::string, Tensor>& inputs,
                        std::vector<Tensor>* outs) {
  std::unique_ptr<Session> s;
  SessionOptions opts;
  opts.backend = "cpu";
  KILN_RETURN_IF_ERROR(Session::load(write_text_model(text, stem), opts, &s));
  return s->run(inputs, outs);
}

// The same for a single-output model.
inline Status run_model(const std::string& text, const std::string& stem, const std::map<std::string, Tensor>& inputs,
                        Tensor* out) {
  std::vector<Tensor> outs;
  KILN_RETURN_IF_ERROR(run_model(text, stem, inputs, &outs));
  *out = outs.at(0);
  return Status::OK();
}

}  // namespace kiln::testing
