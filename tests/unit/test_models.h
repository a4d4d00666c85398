// Test helper: writes an ONNX model given in ONNX's text format to a temporary file.
#pragma once
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace kiln::testing {

// Parses `text` (onnx/defs/parser.h syntax) and writes it as `<tmp>/<stem>.onnx`.
inline std::string write_text_model(const std::string& text, const std::string& stem) {
  onnx::ModelProto model;
  auto status = onnx::OnnxParser::Parse(model, text.c_str());
  if (!status.IsOK()) throw std::runtime_error("bad test model: " + status.ErrorMessage());
  const auto dir = std::filesystem::temp_directory_path() / "kiln_unit_tests";
  std::filesystem::create_directories(dir);
  const auto path = dir / (stem + ".onnx");
  std::ofstream f(path, std::ios::binary);
  model.SerializeToOstream(&f);
  return path.string();
}

}  // namespace kiln::testing
