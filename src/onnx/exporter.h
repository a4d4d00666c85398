// ONNX model export: ir::Graph -> ModelProto, the inverse of the importer. Plan files store the
// optimized graph this way (kiln-domain ops, lowered precisions and layouts included), so that
// loading a plan is an import without the optimizer.
#pragma once
#include <string>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::onnx_io {

// A node whose opset differs from the model's opset for its domain (passes create nodes with
// newer semantics, e.g. Softmax with opset-13 axis rules in an opset-11 model) carries it in
// its doc_string as "kiln.opset=N"; the importer reads it back.
inline constexpr const char* kNodeOpsetTag = "kiln.opset=";

// Serializes `g` (constants as initializers with raw_data, subgraphs, dims with their symbolic
// names, opset imports of every domain used) into ModelProto bytes.
Status export_model_bytes(const ir::Graph& g, std::string* bytes);
Status export_model_file(const ir::Graph& g, const std::string& path);

}  // namespace kiln::onnx_io
