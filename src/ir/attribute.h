// Node attributes, mirroring ONNX AttributeProto (ints, floats, strings, tensors, subgraphs).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::ir {

class Graph;

struct Attribute {
  enum class Kind { kInt, kFloat, kString, kTensor, kGraph, kInts, kFloats, kStrings };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  float f = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;

  std::string to_string() const;
};

const char* attribute_kind_name(Attribute::Kind k);

}  // namespace kiln::ir
