// CPU kernels that grow, crop or re-block spatial dims: Pad, CenterCropPad, DepthToSpace,
// SpaceToDepth.
#include "backends/cpu/tensor.h"
#include "backends/cpu/tensor_copy.h"
#include "core/error.h"
#include "ops/shape_util.h"
#include "ops/tensor.h"

namespace kiln::cpu {
namespace {

Status pad_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  ops::PadMode mode;
  KILN_RETURN_IF_ERROR(ops::parse_pad_mode(ctx.node().attr_s("mode", "constant"), &mode));
  std::vector<int64_t> pads, axes, begin, end;
  KILN_RETURN_IF_ERROR(ops::tensor_to_ints(ctx.input(1), &pads));
  if (ctx.has_input(3)) KILN_RETURN_IF_ERROR(ops::tensor_to_ints(ctx.input(3), &axes));
  KILN_RETURN_IF_ERROR(ops::resolve_pads(in.rank(), pads, axes, &begin, &end));
  // The value of opsets < 11 arrives as float (see canonicalize); bring it to the data's type.
  Tensor fill;
  if (ctx.has_input(2) && ctx.input(2).numel() > 0) fill = ctx.input(2).to(in.dtype());
  const std::vector<int64_t> strides = strides_of(in.shape());
  Tensor& out = ctx.alloc_output(0);
  AxisOffsets off(in.rank());
  for (int k = 0; k < in.rank(); ++k) {
    for (int64_t i = 0; i < out.dim(k); ++i) {
      const int64_t src = ops::pad_source_index(mode, i - begin[k], in.dim(k));
      off[k].push_back(src < 0 ? -1 : src * strides[k]);
    }
  }
  gather_axes(in, off, fill.defined() ? fill.data() : nullptr, &out);
  return Status::OK();
}

Status center_crop_pad_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.alloc_output(0);
  const std::vector<int64_t> strides = strides_of(in.shape());
  AxisOffsets off(in.rank());
  for (int k = 0; k < in.rank(); ++k) {
    // Crop takes the middle (floor of half the excess before it); pad centres the input
    // with the smaller half of the padding before it.
    const int64_t d = in.dim(k), s = out.dim(k);
    const int64_t shift = d >= s ? (d - s) / 2 : -((s - d) / 2);
    for (int64_t i = 0; i < s; ++i) {
      const int64_t src = i + shift;
      off[k].push_back(src >= 0 && src < d ? src * strides[k] : -1);
    }
  }
  gather_axes(in, off, nullptr, &out);
  return Status::OK();
}

// DepthToSpace and SpaceToDepth are a transpose of a 6-D view of the input.
Status block_transpose(KernelContext& ctx, const std::vector<int64_t>& view,
                       const std::vector<int64_t>& perm) {
  const Tensor in = ctx.input(0).reshaped(view);
  Tensor& out = ctx.alloc_output(0);
  std::vector<int64_t> out_view;
  for (int64_t p : perm) out_view.push_back(view[p]);
  Tensor out6 = out.reshaped(out_view);  // shares out's storage
  gather_axes(in, transpose_offsets(view, perm), nullptr, &out6);
  return Status::OK();
}

Status depth_to_space_kernel(KernelContext& ctx) {
  const auto& s = ctx.input(0).shape();
  const int64_t b = ctx.node().attr_i("blocksize", 0);
  const int64_t n = s[0], c = s[1] / (b * b), h = s[2], w = s[3];
  if (ctx.node().attr_s("mode", "DCR") == "CRD")
    return block_transpose(ctx, {n, c, b, b, h, w}, {0, 1, 4, 2, 5, 3});
  return block_transpose(ctx, {n, b, b, c, h, w}, {0, 3, 4, 1, 5, 2});
}

Status space_to_depth_kernel(KernelContext& ctx) {
  const auto& s = ctx.input(0).shape();
  const int64_t b = ctx.node().attr_i("blocksize", 0);
  return block_transpose(ctx, {s[0], s[1], s[2] / b, b, s[3] / b, b}, {0, 3, 5, 1, 2, 4});
}

}  // namespace

void register_tensor_pad_kernels(KernelRegistry& r) {
  r.add("Pad", pad_kernel);
  r.add("CenterCropPad", center_crop_pad_kernel);
  r.add("DepthToSpace", depth_to_space_kernel);
  r.add("SpaceToDepth", space_to_depth_kernel);
}

}  // namespace kiln::cpu
