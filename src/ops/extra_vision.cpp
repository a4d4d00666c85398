// Vision ops common in model-zoo CNNs and detectors: LRN, EyeLike, NonMaxSuppression,
// RoiAlign, MaxUnpool, Compress. Schemas and shape inference.
#include "ops/extra_vision.h"

#include "core/error.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

const std::initializer_list<DType> kIeeeFloats = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                                  DType::kBFloat16};

Status infer_lrn(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, kIeeeFloats));
  const int64_t size = ctx.node.attr_i("size", 0);
  KILN_ENSURE(size > 0, "LRN needs a positive size attribute, got {}", size);
  const auto& x = ctx.input_type(0);
  if (x.has_rank()) KILN_ENSURE(x.rank() >= 2, "LRN needs an input of rank >= 2 (N, C, ...), got {}", x.to_string());
  same_as_input(ctx, 0, 0);
  return Status::OK();
}

Status infer_eye_like(InferContext& ctx) {
  const auto& x = ctx.input_type(0);
  if (x.has_rank()) KILN_ENSURE(x.rank() == 2, "EyeLike needs a 2-D input, got {}", x.to_string());
  DType t = x.dtype;
  if (ctx.node.attrs.count("dtype")) {
    t = dtype_from_onnx(static_cast<int>(ctx.node.attr_i("dtype", 1)));
    KILN_ENSURE(t != DType::kUndefined, "EyeLike: unknown dtype {}", ctx.node.attr_i("dtype", 1));
  }
  set_output(ctx, 0, t, x.shape);
  return Status::OK();
}

Status infer_nms(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 0, {DType::kFloat32}));
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, {DType::kFloat32}));
  const int64_t cpb = ctx.node.attr_i("center_point_box", 0);
  KILN_ENSURE(cpb == 0 || cpb == 1, "center_point_box must be 0 or 1, got {}", cpb);
  const auto& boxes = ctx.input_type(0);
  const auto& scores = ctx.input_type(1);
  if (boxes.has_rank()) {
    KILN_ENSURE(boxes.rank() == 3, "NonMaxSuppression boxes must be [batch, boxes, 4], got {}", boxes.to_string());
    const ir::Dim four = (*boxes.shape)[2];
    KILN_ENSURE(!four.known() || four.value == 4, "boxes' last dim must be 4, got {}", boxes.to_string());
  }
  if (scores.has_rank())
    KILN_ENSURE(scores.rank() == 3, "NonMaxSuppression scores must be [batch, classes, boxes], got {}",
                scores.to_string());
  if (ctx.has_input(2)) KILN_RETURN_IF_ERROR(expect_dtype(ctx, 2, {DType::kInt64}));
  for (int i = 3; i < 5; ++i)
    if (ctx.has_input(i)) KILN_RETURN_IF_ERROR(expect_dtype(ctx, i, {DType::kFloat32}));
  // How many boxes survive depends on the data.
  set_output(ctx, 0, DType::kInt64, std::vector<ir::Dim>{ir::Dim(), ir::Dim(3)});
  return Status::OK();
}

Status infer_compress(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, 1, {DType::kBool}));
  const auto& x = ctx.input_type(0);
  const auto& cond = ctx.input_type(1);
  if (cond.has_rank()) KILN_ENSURE(cond.rank() == 1, "Compress condition must be 1-D, got {}", cond.to_string());
  // The selected length is known only when the condition's value is.
  ir::Dim selected;
  int64_t cond_len = -1;
  if (const Tensor* c = ctx.input_value(1)) {
    const bool* p = c->data_as<bool>();
    int64_t n = 0;
    for (int64_t i = 0; i < c->numel(); ++i) n += p[i] ? 1 : 0;
    selected = ir::Dim(n);
    cond_len = c->numel();
  }
  if (!ctx.node.attrs.count("axis")) {
    if (x.is_concrete() && cond_len >= 0)
      KILN_ENSURE(cond_len <= Tensor::numel_of(x.concrete()), "Compress condition has {} entries for {} elements",
                  cond_len, Tensor::numel_of(x.concrete()));
    set_output(ctx, 0, x.dtype, std::vector<ir::Dim>{selected});
    return Status::OK();
  }
  if (!x.has_rank()) {
    set_output(ctx, 0, x.dtype, std::nullopt);
    return Status::OK();
  }
  int64_t axis = 0;
  KILN_RETURN_IF_ERROR(normalize_axis(ctx.node.attr_i("axis", 0), x.rank(), &axis));
  std::vector<ir::Dim> s = *x.shape;
  if (s[axis].known() && cond_len >= 0)
    KILN_ENSURE(cond_len <= s[axis].value, "Compress condition has {} entries for an axis of {}", cond_len,
                s[axis].value);
  s[axis] = selected;
  set_output(ctx, 0, x.dtype, std::move(s));
  return Status::OK();
}

}  // namespace

void register_extra_vision_ops(OpRegistry& r) {
  r.add({"LRN", "", {"alpha", "beta", "bias", "size"}, nullptr, infer_lrn, nullptr});
  r.add({"EyeLike", "", {"dtype", "k"}, nullptr, infer_eye_like, nullptr});
  r.add({"NonMaxSuppression", "", {"center_point_box"}, nullptr, infer_nms, nullptr});
  r.add({"Compress", "", {"axis"}, nullptr, infer_compress, nullptr});
  register_extra_vision_pool_ops(r);
}

}  // namespace kiln::ops
