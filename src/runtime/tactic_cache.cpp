#include "runtime/tactic_cache.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace kiln::runtime {

std::optional<std::string> TacticCache::find(const std::string& layer_key) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string k = full_key(layer_key);
  auto it = entries_.find(k);
  if (it == entries_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  used_[k] = it->second;
  return it->second;
}

void TacticCache::put(const std::string& layer_key, const std::string& tactic) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string k = full_key(layer_key);
  entries_[k] = tactic;
  used_[k] = tactic;
}

std::map<std::string, std::string> TacticCache::used() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

std::map<std::string, std::string> TacticCache::all() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_;
}

size_t TacticCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void TacticCache::merge(const std::map<std::string, std::string>& full_keys) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [k, v] : full_keys) entries_[k] = v;
}

Status TacticCache::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) return Status::OK();
  std::stringstream ss;
  ss << f.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("entries") || !j["entries"].is_object()) {
    return invalid_argument("timing cache '{}' is not a kiln timing cache (delete it to start afresh)", path);
  }
  std::map<std::string, std::string> loaded;
  for (const auto& [k, v] : j["entries"].items()) {
    if (!v.is_string()) return invalid_argument("timing cache '{}': entry '{}' is not a string", path, k);
    loaded[k] = v.get<std::string>();
  }
  merge(loaded);
  return Status::OK();
}

Status TacticCache::save(const std::string& path) const {
  namespace fs = std::filesystem;
  nlohmann::json j;
  j["format"] = "kiln timing cache 1";
  j["entries"] = all();
  std::error_code ec;
  const fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) return invalid_argument("cannot write timing cache '{}'", tmp);
    f << j.dump(1) << "\n";
    if (!f) return invalid_argument("cannot write timing cache '{}'", tmp);
  }
  fs::rename(tmp, p, ec);
  if (ec) return invalid_argument("cannot write timing cache '{}': {}", path, ec.message());
  return Status::OK();
}

std::string TacticCache::path_for(const std::string& option) {
  if (option == "none") return "";
  return option.empty() ? default_path() : option;
}

void TacticCache::load_or_warn(const std::string& path) {
  if (path.empty()) return;
  const Status st = load(path);
  if (!st.ok()) std::fprintf(stderr, "kiln: warning: %s; timing every layer\n", st.message().c_str());
}

std::string TacticCache::default_path() {
  if (const char* e = std::getenv("KILN_TIMING_CACHE"); e && *e) return e;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/kiln/timing_cache.json";
  return "";
}

}  // namespace kiln::runtime
