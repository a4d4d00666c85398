// The timing cache: what tactic won for a layer of given shapes, dtypes and attributes on a
// given GPU with given library versions. Layers look their key up before timing candidates
// and record the winner after, so a rebuild (or a plan load, whose tactics travel inside the
// plan) skips the timing. Plain host code: a string map, saved as JSON.
#pragma once
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "kiln/status.h"

namespace kiln::runtime {

class TacticCache {
 public:
  // `environment` names the GPU and library versions ("NVIDIA H200 sm_90 cuda 13.0 cudnn
  // 9.14.0 cublas 13.1.0"); it prefixes every key, so entries of another GPU or version never
  // match.
  explicit TacticCache(std::string environment = "") : environment_(std::move(environment)) {}

  const std::string& environment() const { return environment_; }
  // `layer_key` describes the layer (op, shapes, dtypes, layout, attributes that matter).
  std::optional<std::string> find(const std::string& layer_key) const;
  void put(const std::string& layer_key, const std::string& tactic);
  // Entries looked up or put since construction (a plan stores only the ones it uses).
  std::map<std::string, std::string> used() const;
  std::map<std::string, std::string> all() const;
  size_t size() const;
  void merge(const std::map<std::string, std::string>& full_keys);

  int hits() const { return hits_; }
  int misses() const { return misses_; }

  // Missing file: empty cache, OK. Corrupt file: an error naming it (the caller may go on
  // without a cache).
  Status load(const std::string& path);
  // Writes atomically (temporary file + rename), creating the folder.
  Status save(const std::string& path) const;

  // Where the cache lives by default: $KILN_TIMING_CACHE, else ~/.cache/kiln/timing_cache.json
  // ("" when neither HOME nor the variable is set).
  static std::string default_path();
  // The file for a --timing-cache option: "" -> default_path(), "none" -> "" (no file).
  static std::string path_for(const std::string& option);
  // load(path) when `path` is not empty; a corrupt file only warns (the cache is an
  // optimization: every layer is then timed).
  void load_or_warn(const std::string& path);

 private:
  std::string full_key(const std::string& layer_key) const { return environment_ + " | " + layer_key; }

  std::string environment_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> entries_;
  mutable std::map<std::string, std::string> used_;
  mutable int hits_ = 0, misses_ = 0;
};

}  // namespace kiln::runtime
