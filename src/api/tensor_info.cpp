#include "api/tensor_info.h"

namespace kiln {

TensorInfo tensor_info_of(const ir::Value& v) {
  TensorInfo i;
  i.name = v.name;
  i.dtype = v.type.dtype;
  i.has_shape = v.type.has_rank();
  if (v.type.shape) {
    for (const ir::Dim& d : *v.type.shape) {
      i.shape.push_back(d.known() ? d.value : -1);
      i.dim_names.push_back(d.symbol);
    }
  }
  return i;
}

}  // namespace kiln
