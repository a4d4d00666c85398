// ONNX model import: ModelProto -> ir::Graph. Op semantics come from kiln's own op schemas
// (src/ops), which also bring older opset forms to the current one.
#pragma once
#include <memory>
#include <string>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::onnx_io {

// Oldest and newest default-domain opsets kiln accepts.
inline constexpr int kMinOpset = 1;
inline constexpr int kMaxOpset = 27;

Status import_model_file(const std::string& path, std::unique_ptr<ir::Graph>* out);
// `base_dir` resolves external data files.
Status import_model_bytes(const std::string& bytes, const std::string& base_dir, std::unique_ptr<ir::Graph>* out);

}  // namespace kiln::onnx_io
