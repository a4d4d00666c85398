// Host-side helpers shared by the kernel layer factories: a Layer whose enqueue is one
// captured launch function, rejection with a reason, and reading constant inputs.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/gpu/layer.h"
#include "core/error.h"

namespace kiln::gpu::kern {

// A layer whose launch parameters were all computed at build time and captured by `fn`.
class FnLayer final : public Layer {
 public:
  using Fn = std::function<void(const LaunchArgs&)>;
  FnLayer(std::string tactic, Fn fn, bool aliases, size_t weight_bytes)
      : tactic_(std::move(tactic)), fn_(std::move(fn)), aliases_(aliases), weight_bytes_(weight_bytes) {}
  std::string tactic() const override { return tactic_; }
  void enqueue(const LaunchArgs& args) override { fn_(args); }
  bool aliases_input0() const override { return aliases_; }
  size_t weight_bytes() const override { return weight_bytes_; }

 private:
  std::string tactic_;
  Fn fn_;
  bool aliases_;
  size_t weight_bytes_;
};

inline Status make_layer(std::unique_ptr<Layer>* out, std::string tactic, FnLayer::Fn fn, bool aliases = false,
                         size_t weight_bytes = 0) {
  *out = std::make_unique<FnLayer>(std::move(tactic), std::move(fn), aliases, weight_bytes);
  return Status::OK();
}

// Device memory a layer owns (its re-laid parameters), uploaded once at build time. Captured
// by shared_ptr in the layer's launch function, freed with the layer.
class DeviceBuffer {
 public:
  DeviceBuffer(const void* host, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

template <class T>
std::shared_ptr<DeviceBuffer> upload(const std::vector<T>& v) {
  return std::make_shared<DeviceBuffer>(v.data(), v.size() * sizeof(T));
}

// kUnsupported naming the node: the executor falls back to the CPU kernel.
template <class... Args>
Status reject(const LayerBuildContext& ctx, fmt::format_string<Args...> f, Args&&... args) {
  return unsupported(f, std::forward<Args>(args)...).with_context(ctx.node.describe());
}

// Input i as a constant, nullptr when absent or computed at run time.
inline const Tensor* constant_input(const LayerBuildContext& ctx, size_t i) {
  return i < ctx.constants.size() ? ctx.constants[i] : nullptr;
}

// A constant integer input (int32/int64) as int64 values; false when not constant.
bool constant_ints(const LayerBuildContext& ctx, size_t i, std::vector<int64_t>* v);
// A constant numeric input as doubles; false when not constant or not numeric.
bool constant_doubles(const LayerBuildContext& ctx, size_t i, std::vector<double>* v);

// Axis in [-rank, rank) made non-negative; false when out of range.
inline bool normalize_axis(int64_t* axis, int64_t rank) {
  if (*axis < -rank || *axis >= rank) return false;
  if (*axis < 0) *axis += rank;
  return true;
}

inline int64_t product(const std::vector<int64_t>& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

}  // namespace kiln::gpu::kern
