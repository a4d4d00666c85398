#include "plan_peek.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace kiln::cli {

bool peek_plan_precision(const std::string& path, std::string* precision) {
  precision->clear();
  // Layout: 8-byte magic, u32 format version, u64 header length, header JSON, ... (little-endian).
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  if (!in.read(magic, sizeof magic) || std::memcmp(magic, "KILNPLAN", 8) != 0) return false;
  uint32_t version = 0;
  uint64_t length = 0;
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (!in.read(reinterpret_cast<char*>(&version), 4) || !in.read(reinterpret_cast<char*>(&length), 8) || ec ||
      length > size) {
    return true;
  }
  std::string header(length, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(length))) return true;
  const nlohmann::json j = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("precision") && j["precision"].is_string()) *precision = j["precision"];
  return true;
}

Status plan_precisions(const std::string& path, bool given, std::vector<std::string>* precisions) {
  std::string plan_precision;
  if (!peek_plan_precision(path, &plan_precision) || plan_precision.empty()) return Status::OK();
  for (const std::string& p : *precisions) {
    if (given && p != plan_precision) {
      return {StatusCode::kInvalidArgument,
              fmt::format("--precision {}: '{}' is a {} plan; bench the .onnx or rebuild the plan with `kiln build "
                          "--precision {}`",
                          p, path, plan_precision, p)};
    }
  }
  *precisions = {plan_precision};
  return Status::OK();
}

}  // namespace kiln::cli
