#include "ir/types.h"

namespace kiln::ir {

std::string Dim::to_string() const {
  if (known()) return std::to_string(value);
  return symbol.empty() ? "?" : symbol;
}

TensorType TensorType::of(DType t, const std::vector<int64_t>& concrete) {
  std::vector<Dim> dims(concrete.begin(), concrete.end());
  return {t, std::move(dims)};
}

bool TensorType::is_concrete() const {
  if (!shape) return false;
  for (const Dim& d : *shape) {
    if (!d.known()) return false;
  }
  return true;
}

std::vector<int64_t> TensorType::concrete() const {
  std::vector<int64_t> out;
  if (!shape) return out;
  for (const Dim& d : *shape) out.push_back(d.value);
  return out;
}

std::string TensorType::to_string() const {
  std::string s = dtype_name(dtype);
  if (!shape) return s + "[...]";
  s += "[";
  for (size_t i = 0; i < shape->size(); ++i) s += (i ? "," : "") + (*shape)[i].to_string();
  return s + "]";
}

}  // namespace kiln::ir
