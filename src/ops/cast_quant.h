// Arithmetic shared by the QuantizeLinear/DequantizeLinear schemas and their kernels: how a
// scale (and zero point) tensor maps onto the elements of the quantized/dequantized tensor.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

// One scale for everything, one per slice along `axis`, or one per run of `block_size`
// elements along `axis` (the scale then has the input's shape with that dim divided).
struct QuantLayout {
  enum class Kind { kPerTensor, kPerAxis, kBlocked };
  Kind kind = Kind::kPerTensor;
  int axis = 0;  // normalized; meaningful for kPerAxis and kBlocked
  int64_t block_size = 0;
  // x viewed as [outer, axis_dim, inner] (for per-tensor the whole tensor is `inner`).
  int64_t outer = 1, axis_dim = 1, inner = 1;
  int64_t scale_axis_dim = 1;  // the scale's extent along `axis` (blocked only)
};

// Works out the layout from the node's `axis`/`block_size` attributes and the concrete shapes
// of x and the scale, checking that they fit together.
Status resolve_quant_layout(const ir::Node& node, const std::vector<int64_t>& x_shape,
                            const std::vector<int64_t>& scale_shape, QuantLayout* out);

// Calls f(element_index, scale_index) for every element of x in row-major order.
template <class F>
inline void for_each_quant_element(const QuantLayout& l, F&& f) {
  const bool blocked = l.kind == QuantLayout::Kind::kBlocked;
  int64_t i = 0;
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t a = 0; a < l.axis_dim; ++a) {
      int64_t base = 0;
      if (l.kind == QuantLayout::Kind::kPerAxis) base = a;
      if (blocked) base = (o * l.scale_axis_dim + a / l.block_size) * l.inner;
      const int64_t step = blocked ? 1 : 0;
      for (int64_t in = 0; in < l.inner; ++in) f(i++, base + in * step);
    }
  }
}

}  // namespace kiln::ops
