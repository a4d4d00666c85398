// Window attribute reading and output-size resolution (see conv_pool.h).
#include <algorithm>

#include "core/error.h"
#include "ops/conv_pool.h"

namespace kiln::ops {

namespace {

// Python-style floor division, needed where pads may be negative (ConvTranspose output_shape).
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return -floor_div(-a, b);
}

Status parse_auto_pad(const std::string& s, AutoPad* out) {
  if (s.empty() || s == "NOTSET")
    *out = AutoPad::kNotSet;
  else if (s == "SAME_UPPER")
    *out = AutoPad::kSameUpper;
  else if (s == "SAME_LOWER")
    *out = AutoPad::kSameLower;
  else if (s == "VALID")
    *out = AutoPad::kValid;
  else
    return invalid_argument("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", s);
  return Status::OK();
}

// Reads an ints attribute that must have `n` entries (or be absent: `dflt` repeated).
Status read_ints(const ir::Node& node, const char* name, size_t n, int64_t dflt, int64_t min_value,
                 std::vector<int64_t>* out) {
  if (!node.has_attr(name)) {
    out->assign(n, dflt);
    return Status::OK();
  }
  *out = node.attr_ints(name);
  KILN_ENSURE(out->size() == n, "attribute {} has {} values, expected {}", name, out->size(), n);
  for (int64_t v : *out) {
    KILN_ENSURE(v >= min_value, "attribute {} has value {}, expected >= {}", name, v, min_value);
  }
  return Status::OK();
}

}  // namespace

Status read_window_attrs(const ir::Node& node, int nsp, WindowAttrs* a) {
  const size_t n = static_cast<size_t>(nsp);
  a->nsp = nsp;
  KILN_RETURN_IF_ERROR(parse_auto_pad(node.attr_s("auto_pad", "NOTSET"), &a->auto_pad));
  if (node.has_attr("kernel_shape")) {
    KILN_RETURN_IF_ERROR(read_ints(node, "kernel_shape", n, 1, 1, &a->kernel));
  } else {
    a->kernel.clear();
  }
  KILN_RETURN_IF_ERROR(read_ints(node, "strides", n, 1, 1, &a->strides));
  KILN_RETURN_IF_ERROR(read_ints(node, "dilations", n, 1, 1, &a->dilations));
  // Pads may be negative only for ConvTranspose in practice; ONNX requires >= 0 everywhere.
  KILN_RETURN_IF_ERROR(read_ints(node, "pads", 2 * n, 0, 0, &a->pads));
  KILN_RETURN_IF_ERROR(read_ints(node, "output_padding", n, 0, 0, &a->output_padding));
  if (node.has_attr("output_shape")) {
    a->output_shape = node.attr_ints("output_shape");
    // ONNX allows output_shape to include N and C; keep the spatial part.
    if (a->output_shape.size() == n + 2)
      a->output_shape.erase(a->output_shape.begin(), a->output_shape.begin() + 2);
    KILN_ENSURE(a->output_shape.size() == n, "attribute output_shape has {} values, expected {}",
                a->output_shape.size(), n);
  } else {
    a->output_shape.clear();
  }
  a->ceil_mode = node.attr_i("ceil_mode", 0) != 0;
  return Status::OK();
}

// Fills the parts of a window that come straight from the attributes; outputs start unknown.
static void init_window(const WindowAttrs& a, const std::vector<int64_t>& kernel, const std::vector<int64_t>& in,
                 std::vector<int64_t> pads, Window* w) {
  KILN_ASSERT(static_cast<int>(kernel.size()) == a.nsp && static_cast<int>(in.size()) == a.nsp,
              "window rank mismatch");
  w->nsp = a.nsp;
  w->in = in;
  w->kernel = kernel;
  w->strides = a.strides;
  w->dilations = a.dilations;
  w->pads = std::move(pads);
  w->out.assign(a.nsp, -1);
}

Status resolve_window(const WindowAttrs& a, const std::vector<int64_t>& kernel,
                      const std::vector<int64_t>& in, Window* w) {
  const int nsp = a.nsp;
  init_window(a, kernel, in, a.auto_pad == AutoPad::kNotSet ? a.pads : std::vector<int64_t>(2 * nsp, 0), w);
  for (int d = 0; d < nsp; ++d) {
    KILN_ENSURE(kernel[d] >= 1, "kernel size {} along spatial dim {} must be >= 1", kernel[d], d);
    if (in[d] < 0) continue;
    const int64_t s = a.strides[d], ext = w->extent(d);
    switch (a.auto_pad) {
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        const int64_t out = ceil_div(in[d], s);
        const int64_t total = std::max<int64_t>(0, (out - 1) * s + ext - in[d]);
        const int64_t small = total / 2, big = total - small;
        w->pads[d] = a.auto_pad == AutoPad::kSameUpper ? small : big;
        w->pads[nsp + d] = a.auto_pad == AutoPad::kSameUpper ? big : small;
        w->out[d] = out;
        break;
      }
      case AutoPad::kValid:
        KILN_ENSURE(in[d] >= ext, "input size {} along spatial dim {} is smaller than the window {}", in[d],
                    d, ext);
        w->out[d] = ceil_div(in[d] - ext + 1, s);
        break;
      case AutoPad::kNotSet: {
        const int64_t span = in[d] + w->pad_begin(d) + w->pad_end(d) - ext;
        KILN_ENSURE(span >= 0, "padded input size {} along spatial dim {} is smaller than the window {}",
                    span + ext, d, ext);
        int64_t out = (a.ceil_mode ? ceil_div(span, s) : floor_div(span, s)) + 1;
        // With ceil_mode the last window must still start inside the input or its begin pad.
        if (a.ceil_mode && (out - 1) * s >= in[d] + w->pad_begin(d)) --out;
        w->out[d] = out;
        break;
      }
    }
  }
  return Status::OK();
}

Status resolve_transpose_window(const WindowAttrs& a, const std::vector<int64_t>& kernel,
                                const std::vector<int64_t>& in, Window* w) {
  const int nsp = a.nsp;
  init_window(a, kernel, in, a.pads, w);
  const bool same = a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower;
  if (a.auto_pad == AutoPad::kValid) w->pads.assign(2 * nsp, 0);
  for (int d = 0; d < nsp; ++d) {
    KILN_ENSURE(kernel[d] >= 1, "kernel size {} along spatial dim {} must be >= 1", kernel[d], d);
    KILN_ENSURE(a.output_padding[d] < std::max(a.strides[d], a.dilations[d]),
                "output_padding {} along spatial dim {} must be smaller than the stride or dilation",
                a.output_padding[d], d);
    if (in[d] < 0) continue;
    const int64_t natural = a.strides[d] * (in[d] - 1) + a.output_padding[d] + w->extent(d);
    if (!a.output_shape.empty() || same) {
      // The output size is given (or implied by SAME); pads are what makes it come out.
      const int64_t out = !a.output_shape.empty() ? a.output_shape[d] : in[d] * a.strides[d];
      const int64_t total = natural - out;
      const int64_t half = floor_div(total, 2);
      w->pads[d] = a.auto_pad == AutoPad::kSameUpper ? half : total - half;
      w->pads[nsp + d] = a.auto_pad == AutoPad::kSameUpper ? total - half : half;
      w->out[d] = out;
    } else {
      w->out[d] = natural - w->pad_begin(d) - w->pad_end(d);
    }
    KILN_ENSURE(w->out[d] >= 0, "output size {} along spatial dim {} is negative", w->out[d], d);
  }
  return Status::OK();
}

}  // namespace kiln::ops
