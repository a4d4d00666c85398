// describe_plan (kiln/build.h): what `kiln plan-info` prints, from the plan header alone (no
// GPU needed).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "kiln/build.h"
#include "runtime/plan_file.h"

namespace kiln {
namespace {

using json = nlohmann::json;

std::string mib(const json& bytes) { return fmt::format("{:.1f} MiB", bytes.get<double>() / (1 << 20)); }

std::string shape_text(const json& dims) {
  std::vector<std::string> parts;
  for (const json& d : dims) parts.push_back(d.dump());
  return "[" + fmt::format("{}", fmt::join(parts, ",")) + "]";
}

// "gpu=NVIDIA H200, sm=90, ...": every field the GPU part recorded, as it recorded it.
std::string environment_text(const json& env) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : env.items()) parts.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  return fmt::format("{}", fmt::join(parts, ", "));
}

void describe_shape_set(const json& set, int index, const json& input_names, std::string* out) {
  std::vector<std::string> inputs;
  const json& shapes = set.at("inputs");
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::string name = i < input_names.size() ? input_names[i].get<std::string>() : "input " + std::to_string(i);
    inputs.push_back(name + " " + shape_text(shapes[i]));
  }
  *out += fmt::format("\nshape set {}: {}\n", index, fmt::join(inputs, ", "));
  if (set.contains("memory")) {
    std::vector<std::string> mem;
    for (const char* k : {"weights", "arena", "workspace", "peak"}) {
      if (set["memory"].contains(k)) mem.push_back(fmt::format("{} {}", k, mib(set["memory"][k])));
    }
    *out += fmt::format("  memory: {}\n", fmt::join(mem, ", "));
  }
  if (!set.contains("layers")) return;
  const json& layers = set["layers"];
  size_t name_w = 5, op_w = 2;
  for (const json& l : layers) {
    name_w = std::max(name_w, l.value("name", "").size());
    op_w = std::max(op_w, l.value("op", "").size());
  }
  *out += fmt::format("  layers ({}):\n    {:<{}}  {:<{}}  {}\n", layers.size(), "name", name_w, "op", op_w, "tactic");
  for (const json& l : layers) {
    *out += fmt::format("    {:<{}}  {:<{}}  {}\n", l.value("name", ""), name_w, l.value("op", ""), op_w,
                        l.value("tactic", ""));
  }
}

void describe_header(const std::string& path, const json& h, std::string* out) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  *out += fmt::format("plan: {} ({}, format {}, kiln {}, created {})\n", path, mib(json(ec ? 0 : bytes)),
                      h.value("format_version", 0), h.value("kiln_version", "?"), h.value("created", "?"));
  if (h.contains("source_model")) {
    const json& src = h["source_model"];
    *out += fmt::format("source: {} ({})\n", src.value("path", "?"), mib(src.value("bytes", json(0))));
  }
  *out += fmt::format("backend: {}, precision: {}, optimization level: {}, channels-last preferred: {}\n",
                      h.value("backend", "?"), h.value("precision", "?"), h.value("optimization_level", -1),
                      h.value("prefer_channels_last", false) ? "yes" : "no");
  if (h.contains("environment")) *out += "environment: " + environment_text(h["environment"]) + "\n";
  if (h["profiles"].empty()) *out += "profiles: none\n";
  for (const json& p : h["profiles"]) {
    *out += fmt::format("profile: {} min {} opt {} max {}\n", p.value("input", "?"), shape_text(p.at("min")),
                        shape_text(p.at("opt")), shape_text(p.at("max")));
  }
  if (h.contains("tactics")) {
    *out += fmt::format("tactics: {} recorded ({} timed at build, {} from the timing cache)\n", h["tactics"].size(),
                        h.value("tactics_timed", 0), h.value("tactics_from_cache", 0));
  }
}

}  // namespace

Status describe_plan(const std::string& plan_path, std::string* text) {
  runtime::PlanFile plan;
  KILN_RETURN_IF_ERROR(runtime::read_plan_file(plan_path, &plan));
  text->clear();
  try {
    describe_header(plan_path, plan.header, text);
    const json& sets = plan.header.value("shape_sets", json::array());
    if (sets.empty()) *text += "no shape sets (dynamic inputs without a profile: shapes are planned at run time)\n";
    const json names = plan.header.value("inputs", json::array());
    for (size_t i = 0; i < sets.size(); ++i) describe_shape_set(sets[i], static_cast<int>(i + 1), names, text);
  } catch (const json::exception& e) {
    return invalid_model("{}: corrupt plan file: the header is malformed ({})", plan_path, e.what());
  }
  return Status::OK();
}

}  // namespace kiln
