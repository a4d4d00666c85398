#include "onnx/importer.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.h"
#include "core/file_util.h"
#include "ir/verifier.h"
#include "onnx/exporter.h"
#include "onnx/tensor_proto.h"
#include "ops/op_schema.h"

namespace kiln::onnx_io {
namespace {

struct ImportContext {
  std::string base_dir;
  std::map<std::string, int> opsets;
};

Status import_graph(const onnx::GraphProto& gp, ImportContext& ctx, ir::Graph* parent, ir::Graph* g);

Status type_from_proto(const onnx::TypeProto& tp, const std::string& what, ir::TensorType* out) {
  if (!tp.has_tensor_type()) {
    return unsupported("{} is not a tensor (sequences, maps and optionals are not supported)", what);
  }
  const auto& tt = tp.tensor_type();
  out->dtype = dtype_from_onnx(tt.elem_type());
  if (out->dtype == DType::kUndefined) {
    return unsupported("{} has ONNX element type {}, which kiln does not support", what, tt.elem_type());
  }
  if (!tt.has_shape()) {
    out->shape.reset();
    return Status::OK();
  }
  std::vector<ir::Dim> dims;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value()) {
      dims.emplace_back(d.dim_value());
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      dims.push_back(ir::Dim::named(d.dim_param()));
    } else {
      dims.emplace_back();
    }
  }
  out->shape = std::move(dims);
  return Status::OK();
}

Status attribute_from_proto(const onnx::AttributeProto& ap, ImportContext& ctx, ir::Graph* owner,
                            const std::string& where, ir::Attribute* a) {
  using K = ir::Attribute::Kind;
  if (!ap.ref_attr_name().empty()) return unsupported("{}: attribute references (functions) are not supported", where);
  switch (ap.type()) {
    case onnx::AttributeProto::INT: a->kind = K::kInt; a->i = ap.i(); break;
    case onnx::AttributeProto::FLOAT: a->kind = K::kFloat; a->f = ap.f(); break;
    case onnx::AttributeProto::STRING: a->kind = K::kString; a->s = ap.s(); break;
    case onnx::AttributeProto::INTS:
      a->kind = K::kInts;
      a->ints.assign(ap.ints().begin(), ap.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      a->kind = K::kFloats;
      a->floats.assign(ap.floats().begin(), ap.floats().end());
      break;
    case onnx::AttributeProto::STRINGS:
      a->kind = K::kStrings;
      a->strings.assign(ap.strings().begin(), ap.strings().end());
      break;
    case onnx::AttributeProto::TENSOR:
      a->kind = K::kTensor;
      KILN_RETURN_IF_ERROR(tensor_from_proto(ap.t(), ctx.base_dir, &a->t).with_context(where));
      break;
    case onnx::AttributeProto::GRAPH: {
      a->kind = K::kGraph;
      a->g = std::make_shared<ir::Graph>();
      KILN_RETURN_IF_ERROR(import_graph(ap.g(), ctx, owner, a->g.get()).with_context(where));
      break;
    }
    default:
      return unsupported("{}: attribute '{}' has a type ({}) kiln does not support", where, ap.name(),
                         static_cast<int>(ap.type()));
  }
  return Status::OK();
}

// Finds `name` in `g`, or in an enclosing graph; in the latter case creates a proxy value in
// `g` (and in every graph in between) whose `outer` points one level up.
ir::Value* resolve(ir::Graph* g, const std::string& name) {
  if (ir::Value* v = g->find_value(name)) return v;
  if (!g->parent) return nullptr;
  ir::Value* up = resolve(g->parent, name);
  if (!up) return nullptr;
  ir::Value* proxy = g->add_value(name, up->type);
  proxy->outer = up;
  return proxy;
}

// A Constant node becomes a constant value directly: it has no inputs and nothing to run.
Status constant_node_value(const onnx::NodeProto& np, ImportContext& ctx, Tensor* out) {
  const std::string where = "node '" + np.name() + "' (Constant)";
  if (np.attribute_size() != 1) return invalid_model("{} must have exactly one value attribute", where);
  const auto& ap = np.attribute(0);
  const std::string& n = ap.name();
  if (n == "value") return tensor_from_proto(ap.t(), ctx.base_dir, out).with_context(where);
  if (n == "value_float") {
    *out = Tensor(DType::kFloat32, {});
    *out->data_as<float>() = ap.f();
  } else if (n == "value_floats") {
    *out = Tensor(DType::kFloat32, {ap.floats_size()});
    std::copy(ap.floats().begin(), ap.floats().end(), out->data_as<float>());
  } else if (n == "value_int") {
    *out = Tensor(DType::kInt64, {});
    *out->data_as<int64_t>() = ap.i();
  } else if (n == "value_ints") {
    *out = Tensor(DType::kInt64, {ap.ints_size()});
    std::copy(ap.ints().begin(), ap.ints().end(), out->data_as<int64_t>());
  } else {
    return unsupported("{}: attribute '{}' is not supported", where, n);
  }
  return Status::OK();
}

Status import_node(const onnx::NodeProto& np, ImportContext& ctx, ir::Graph* g, int index) {
  const std::string domain = np.domain() == "ai.onnx" ? "" : np.domain();
  auto opset_it = ctx.opsets.find(domain);
  int opset = opset_it == ctx.opsets.end() ? 0 : opset_it->second;
  // kiln's exporter tags a node whose opset differs from the model's (see onnx/exporter.h).
  if (np.doc_string().rfind(kNodeOpsetTag, 0) == 0) opset = std::atoi(np.doc_string().c_str() + strlen(kNodeOpsetTag));
  const std::string name = np.name().empty() ? np.op_type() + "_" + std::to_string(index) : np.name();
  const std::string op_desc = domain.empty() ? np.op_type() : domain + "." + np.op_type();
  const std::string where = fmt::format("node '{}' ({}, opset {})", name, op_desc, opset);

  if (np.op_type() == "Constant" && domain.empty()) {
    if (np.output_size() != 1) return invalid_model("{} must have one output", where);
    ir::Value* v = g->find_value(np.output(0));
    Tensor t;
    KILN_RETURN_IF_ERROR(constant_node_value(np, ctx, &t));
    v->type = ir::TensorType::of(t.dtype(), t.shape());
    v->constant = std::move(t);
    return Status::OK();
  }

  const ops::OpSchema* schema = ops::OpRegistry::instance().find(domain, np.op_type());
  if (!schema) return unsupported("{}: op is not supported by kiln", where);
  if (opset_it == ctx.opsets.end()) return invalid_model("{}: the model imports no opset for domain '{}'", where, domain);

  std::vector<ir::Value*> inputs;
  for (const std::string& in : np.input()) {
    if (in.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    ir::Value* v = resolve(g, in);
    if (!v) return invalid_model("{} reads '{}', which no node, input or initializer defines", where, in);
    inputs.push_back(v);
  }
  std::vector<ir::Value*> outputs;
  for (const std::string& out : np.output()) outputs.push_back(out.empty() ? nullptr : g->find_value(out));

  ir::Node* node = g->add_node(np.op_type(), inputs, outputs, name);
  node->domain = domain;
  node->opset = opset;
  const std::set<std::string> known(schema->attributes.begin(), schema->attributes.end());
  for (const auto& ap : np.attribute()) {
    if (!known.count(ap.name())) return unsupported("{}: attribute '{}' is not supported", where, ap.name());
    ir::Attribute a;
    KILN_RETURN_IF_ERROR(attribute_from_proto(ap, ctx, g, where, &a));
    node->attrs[ap.name()] = std::move(a);
  }
  // Values the node's subgraphs read from this graph (or above) must be alive when it runs.
  for (const auto& [k, a] : node->attrs) {
    if (!a.g) continue;
    for (const auto& v : a.g->values()) {
      if (v->outer && std::find(node->implicit_inputs.begin(), node->implicit_inputs.end(), v->outer) ==
                          node->implicit_inputs.end()) {
        node->implicit_inputs.push_back(v->outer);
      }
    }
  }
  if (schema->canonicalize) KILN_RETURN_IF_ERROR(schema->canonicalize(*node, *g).with_context(where));
  return Status::OK();
}

Status import_graph(const onnx::GraphProto& gp, ImportContext& ctx, ir::Graph* parent, ir::Graph* g) {
  g->name = gp.name();
  g->parent = parent;
  g->opsets = ctx.opsets;
  if (gp.sparse_initializer_size() > 0) return unsupported("graph '{}' has sparse initializers", gp.name());

  std::set<std::string> defined;
  for (const auto& init : gp.initializer()) {
    Tensor t;
    KILN_RETURN_IF_ERROR(tensor_from_proto(init, ctx.base_dir, &t).with_context("initializer '" + init.name() + "'"));
    if (!defined.insert(init.name()).second) return invalid_model("initializer '{}' is defined twice", init.name());
    g->add_constant(init.name(), std::move(t));
  }
  for (const auto& vi : gp.input()) {
    if (g->find_value(vi.name())) continue;  // IR < 4 lists initializers among the inputs
    ir::TensorType type;
    KILN_RETURN_IF_ERROR(type_from_proto(vi.type(), "input '" + vi.name() + "'", &type));
    if (!defined.insert(vi.name()).second) return invalid_model("input '{}' is defined twice", vi.name());
    g->inputs.push_back(g->add_value(vi.name(), std::move(type)));
  }
  // Create every node output first, so nodes may be listed out of topological order.
  for (const auto& np : gp.node()) {
    for (const std::string& out : np.output()) {
      if (out.empty()) continue;
      if (!defined.insert(out).second) {
        return invalid_model("value '{}' is produced twice (second time by node '{}')", out, np.name());
      }
      g->add_value(out);
    }
  }
  for (int i = 0; i < gp.node_size(); ++i) KILN_RETURN_IF_ERROR(import_node(gp.node(i), ctx, g, i));
  for (const auto& vi : gp.output()) {
    ir::Value* v = resolve(g, vi.name());
    if (!v) return invalid_model("graph output '{}' is never produced", vi.name());
    // Declared output types seed inference; shape inference overrides them where it knows more.
    if (vi.has_type() && v->type.dtype == DType::kUndefined && !v->constant) {
      ir::TensorType type;
      if (type_from_proto(vi.type(), "output '" + vi.name() + "'", &type).ok()) v->type = type;
    }
    g->outputs.push_back(v);
  }
  if (!g->topological_sort()) return invalid_model("graph '{}' has a cycle", gp.name());
  return Status::OK();
}

}  // namespace

Status import_model_bytes(const std::string& bytes, const std::string& base_dir, std::unique_ptr<ir::Graph>* out) {
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(std::min<size_t>(bytes.size(), INT_MAX)));
  stream.SetTotalBytesLimit(INT_MAX);
  if (bytes.empty()) return invalid_model("the file is empty");
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
    return invalid_model("not a valid ONNX model (protobuf parsing failed; truncated or not ONNX?)");
  }
  if (model.ir_version() < 3 || model.ir_version() > 20 || !model.has_graph()) {
    return invalid_model("not a valid ONNX model (ir_version {}, {} graph)", model.ir_version(),
                         model.has_graph() ? "with a" : "no");
  }
  ImportContext ctx;
  ctx.base_dir = base_dir;
  for (const auto& os : model.opset_import()) {
    const std::string d = os.domain() == "ai.onnx" ? "" : os.domain();
    ctx.opsets[d] = static_cast<int>(os.version());
  }
  auto it = ctx.opsets.find("");
  if (it == ctx.opsets.end()) return invalid_model("the model imports no default-domain (ai.onnx) opset");
  if (it->second < kMinOpset || it->second > kMaxOpset) {
    return unsupported("opset {} of the default domain is outside the supported range {}..{}", it->second,
                       kMinOpset, kMaxOpset);
  }
  if (model.functions_size() > 0) {
    for (const auto& np : model.graph().node()) {
      for (const auto& f : model.functions()) {
        if (f.name() == np.op_type() && f.domain() == np.domain()) {
          return unsupported("node '{}' calls model-local function '{}', which kiln does not support", np.name(),
                             f.name());
        }
      }
    }
  }
  auto g = std::make_unique<ir::Graph>();
  KILN_RETURN_IF_ERROR(import_graph(model.graph(), ctx, nullptr, g.get()));
  *out = std::move(g);
  return Status::OK();
}

Status import_model_file(const std::string& path, std::unique_ptr<ir::Graph>* out) {
  std::string bytes;
  KILN_RETURN_IF_ERROR(read_file_bytes(path, "model file", &bytes));
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return import_model_bytes(bytes, dir.empty() ? "." : dir, out).with_context(path);
}

}  // namespace kiln::onnx_io
