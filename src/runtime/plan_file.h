// The plan file container (what `kiln build` writes and Session::load reads):
//
//   8 bytes  magic "KILNPLAN"
//   u32      container format version (kPlanFormatVersion)
//   u64 + N  JSON header (build options, environment, tactics, shape sets; see build_plan.cpp)
//   u64 + M  ONNX ModelProto of the optimized graph (onnx/exporter.h)
//
// Integers are little-endian. Reading checks every length against the file size, so a
// truncated or corrupt plan is a one-line error naming the file and what is wrong.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "kiln/status.h"

namespace kiln::runtime {

inline constexpr char kPlanMagic[] = "KILNPLAN";  // the first 8 bytes (no terminator written)
inline constexpr uint32_t kPlanFormatVersion = 1;

struct PlanFile {
  nlohmann::json header = nlohmann::json::object();
  std::string graph_bytes;  // ModelProto of the optimized graph
};

// True when the file starts with the plan magic (false when it cannot be read).
bool is_plan_file(const std::string& path);

// Container bytes of `plan`, and the inverse; parse errors do not name a file.
std::string serialize_plan(const PlanFile& plan);
Status parse_plan(const std::string& bytes, PlanFile* plan);

Status write_plan_file(const std::string& path, const PlanFile& plan, size_t* bytes_written = nullptr);
Status read_plan_file(const std::string& path, PlanFile* plan);

}  // namespace kiln::runtime
