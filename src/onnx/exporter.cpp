#include "onnx/exporter.h"

#include <onnx/onnx_pb.h>

#include <fstream>

#include "core/error.h"
#include "onnx/tensor_proto.h"

namespace kiln::onnx_io {
namespace {

struct ExportContext {
  std::map<std::string, int> opsets;  // the model's opset imports, domain -> version
};

// A subgraph's proxy for an enclosing graph's value is referenced by that value's name (the
// importer resolves names upwards through the enclosing graphs).
const std::string& name_of(const ir::Value* v) { return v->outer ? name_of(v->outer) : v->name; }

void type_to_proto(const ir::TensorType& type, onnx::TypeProto* tp) {
  auto* tt = tp->mutable_tensor_type();
  tt->set_elem_type(dtype_to_onnx(type.dtype));
  if (!type.shape) return;
  auto* shape = tt->mutable_shape();
  for (const ir::Dim& d : *type.shape) {
    auto* dim = shape->add_dim();
    if (d.known()) {
      dim->set_dim_value(d.value);
    } else if (!d.symbol.empty()) {
      dim->set_dim_param(d.symbol);
    }
  }
}

Status value_info(const ir::Value* v, const std::string& what, onnx::ValueInfoProto* vi) {
  vi->set_name(name_of(v));
  if (v->type.dtype == DType::kUndefined) {
    if (what == "input") return invalid_model("graph input '{}' has no element type", v->name);
    return Status::OK();  // an output's type is inferred again at import
  }
  type_to_proto(v->type, vi->mutable_type());
  return Status::OK();
}

void collect_opsets(const ir::Graph& g, std::map<std::string, int>* opsets) {
  for (const auto& [domain, version] : g.opsets) opsets->emplace(domain, version);
  for (const auto& n : g.nodes()) {
    if (!opsets->count(n->domain)) (*opsets)[n->domain] = std::max(n->opset, 1);
    for (const auto& [k, a] : n->attrs) {
      if (a.g) collect_opsets(*a.g, opsets);
    }
  }
}

Status graph_to_proto(const ir::Graph& g, const ExportContext& ctx, onnx::GraphProto* gp);

Status attribute_to_proto(const std::string& name, const ir::Attribute& a, const ExportContext& ctx,
                          onnx::AttributeProto* ap) {
  using K = ir::Attribute::Kind;
  ap->set_name(name);
  switch (a.kind) {
    case K::kInt: ap->set_type(onnx::AttributeProto::INT); ap->set_i(a.i); break;
    case K::kFloat: ap->set_type(onnx::AttributeProto::FLOAT); ap->set_f(a.f); break;
    case K::kString: ap->set_type(onnx::AttributeProto::STRING); ap->set_s(a.s); break;
    case K::kInts:
      ap->set_type(onnx::AttributeProto::INTS);
      ap->mutable_ints()->Add(a.ints.begin(), a.ints.end());
      break;
    case K::kFloats:
      ap->set_type(onnx::AttributeProto::FLOATS);
      ap->mutable_floats()->Add(a.floats.begin(), a.floats.end());
      break;
    case K::kStrings:
      ap->set_type(onnx::AttributeProto::STRINGS);
      for (const std::string& s : a.strings) ap->add_strings(s);
      break;
    case K::kTensor:
      ap->set_type(onnx::AttributeProto::TENSOR);
      tensor_to_proto(a.t, name, ap->mutable_t());
      break;
    case K::kGraph:
      ap->set_type(onnx::AttributeProto::GRAPH);
      if (!a.g) return invalid_model("graph attribute '{}' holds no graph", name);
      return graph_to_proto(*a.g, ctx, ap->mutable_g());
  }
  return Status::OK();
}

Status node_to_proto(const ir::Node& n, const ExportContext& ctx, onnx::NodeProto* np) {
  np->set_name(n.name);
  np->set_op_type(n.op_type);
  if (!n.domain.empty()) np->set_domain(n.domain);
  for (const ir::Value* v : n.inputs) np->add_input(v ? name_of(v) : "");
  for (const ir::Value* v : n.outputs) np->add_output(v ? v->name : "");
  const auto declared = ctx.opsets.find(n.domain);
  if (n.opset > 0 && (declared == ctx.opsets.end() || declared->second != n.opset)) {
    np->set_doc_string(kNodeOpsetTag + std::to_string(n.opset));
  }
  for (const auto& [name, a] : n.attrs) {
    KILN_RETURN_IF_ERROR(attribute_to_proto(name, a, ctx, np->add_attribute()).with_context(n.describe()));
  }
  return Status::OK();
}

Status graph_to_proto(const ir::Graph& g, const ExportContext& ctx, onnx::GraphProto* gp) {
  gp->set_name(g.name.empty() ? "kiln" : g.name);
  for (const auto& v : g.values()) {
    if (v->name.empty()) return invalid_model("graph '{}' has a value without a name", g.name);
    if (v->constant && !v->outer) tensor_to_proto(*v->constant, v->name, gp->add_initializer());
  }
  for (const ir::Value* v : g.inputs) KILN_RETURN_IF_ERROR(value_info(v, "input", gp->add_input()));
  for (const auto& n : g.nodes()) KILN_RETURN_IF_ERROR(node_to_proto(*n, ctx, gp->add_node()));
  for (const ir::Value* v : g.outputs) {
    if (!v) return invalid_model("graph '{}' has an omitted output", g.name);
    KILN_RETURN_IF_ERROR(value_info(v, "output", gp->add_output()));
  }
  return Status::OK();
}

}  // namespace

Status export_model_bytes(const ir::Graph& g, std::string* bytes) {
  onnx::ModelProto model;
  model.set_ir_version(onnx::IR_VERSION);
  model.set_producer_name("kiln");
  ExportContext ctx;
  collect_opsets(g, &ctx.opsets);
  if (!ctx.opsets.count("")) return invalid_model("the graph declares no default-domain opset");
  for (const auto& [domain, version] : ctx.opsets) {
    auto* os = model.add_opset_import();
    os->set_domain(domain);
    os->set_version(version);
  }
  KILN_RETURN_IF_ERROR(graph_to_proto(g, ctx, model.mutable_graph()));
  if (model.ByteSizeLong() > static_cast<size_t>(INT32_MAX)) {
    return unsupported("the optimized graph is over 2 GiB, more than one ONNX protobuf can hold");
  }
  if (!model.SerializeToString(bytes)) return invalid_model("serializing the graph failed");
  return Status::OK();
}

Status export_model_file(const ir::Graph& g, const std::string& path) {
  std::string bytes;
  KILN_RETURN_IF_ERROR(export_model_bytes(g, &bytes));
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) return invalid_argument("cannot write '{}'", path);
  return Status::OK();
}

}  // namespace kiln::onnx_io
