// Static tensor types in the IR: element type plus a shape whose dimensions may be
// unknown or named (dynamic), e.g. [batch, 3, 224, 224].
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/dtype.h"

namespace kiln::ir {

struct Dim {
  int64_t value = -1;  // >= 0 when known
  std::string symbol;  // name of a dynamic dimension, when the model gives one

  Dim() = default;
  Dim(int64_t v) : value(v) {}  // NOLINT(google-explicit-constructor): dims read naturally as ints
  static Dim named(std::string s) {
    Dim d;
    d.symbol = std::move(s);
    return d;
  }
  bool known() const { return value >= 0; }
  bool operator==(const Dim& o) const { return value == o.value && (known() || symbol == o.symbol); }
  std::string to_string() const;
};

struct TensorType {
  DType dtype = DType::kUndefined;
  // nullopt: rank unknown.
  std::optional<std::vector<Dim>> shape;

  TensorType() = default;
  TensorType(DType t, std::vector<Dim> s) : dtype(t), shape(std::move(s)) {}
  static TensorType of(DType t, const std::vector<int64_t>& concrete);

  bool has_rank() const { return shape.has_value(); }
  int rank() const { return shape ? static_cast<int>(shape->size()) : -1; }
  // True when every dimension is a known number.
  bool is_concrete() const;
  // The shape as numbers; only valid when is_concrete().
  std::vector<int64_t> concrete() const;
  std::string to_string() const;  // "float32[N,3,224,224]"
};

}  // namespace kiln::ir
