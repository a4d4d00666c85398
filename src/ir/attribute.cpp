#include "ir/attribute.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kiln::ir {

const char* attribute_kind_name(Attribute::Kind k) {
  switch (k) {
    case Attribute::Kind::kInt: return "int";
    case Attribute::Kind::kFloat: return "float";
    case Attribute::Kind::kString: return "string";
    case Attribute::Kind::kTensor: return "tensor";
    case Attribute::Kind::kGraph: return "graph";
    case Attribute::Kind::kInts: return "ints";
    case Attribute::Kind::kFloats: return "floats";
    case Attribute::Kind::kStrings: return "strings";
  }
  return "?";
}

std::string Attribute::to_string() const {
  switch (kind) {
    case Kind::kInt: return std::to_string(i);
    case Kind::kFloat: return fmt::format("{}", f);
    case Kind::kString: return "\"" + s + "\"";
    case Kind::kTensor: return fmt::format("tensor<{}{}>", dtype_name(t.dtype()), shape_to_string(t.shape()));
    case Kind::kGraph: return "<graph>";
    case Kind::kInts: return fmt::format("[{}]", fmt::join(ints, ","));
    case Kind::kFloats: return fmt::format("[{}]", fmt::join(floats, ","));
    case Kind::kStrings: return fmt::format("[{}]", fmt::join(strings, ","));
  }
  return "?";
}

}  // namespace kiln::ir
