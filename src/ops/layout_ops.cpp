// Layout ops of the "kiln" domain, created by the assign_layout pass:
//
//   kiln.ChannelsLastPool(X) -> Y   attribute mode: MaxPool, AveragePool, LpPool,
//                                   GlobalAveragePool, GlobalMaxPool or GlobalLpPool
//
// The pooling op named by `mode` (with its own attributes) computed on a channels-last input
// X (N, spatial..., C), giving a channels-last Y. One op with a mode rather than one op per
// pool: inference, cost and kernels all delegate to the plain pool's, so they cannot disagree.
#include "ops/layout_ops.h"

#include <algorithm>

#include "core/error.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

constexpr const char* kPoolModes[] = {"MaxPool",           "AveragePool",   "LpPool",
                                      "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"};

const OpSchema& plain_pool_schema(const std::string& mode) {
  const OpSchema* s = OpRegistry::instance().find("", mode);
  KILN_ASSERT(s != nullptr, "pool op {} is not registered", mode);
  return *s;
}

Status infer_channels_last_pool(InferContext& ctx) {
  const std::string mode = ctx.node.attr_s("mode", "");
  KILN_ENSURE(is_channels_last_pool_mode(mode), "attribute mode '{}' is not a pooling op", mode);
  KILN_ENSURE(ctx.num_inputs() == 1 && ctx.has_input(0), "expects exactly one input");
  // MaxPool's Indices output would index the channels-first tensor: not offered.
  KILN_ENSURE(ctx.num_outputs() == 1, "has {} outputs; only Y is supported", ctx.num_outputs());
  const ir::TensorType& x = ctx.input_type(0);
  if (!x.has_rank()) {
    set_output(ctx, 0, x.dtype, std::nullopt);
    return Status::OK();
  }
  KILN_ENSURE(x.rank() >= 3, "input has rank {}; channels-last pooling needs (N, spatial..., C)", x.rank());
  const ir::Node plain = channels_first_pool_node(ctx.node);
  const ir::TensorType x_first = permute_type(x, to_channels_first_perm(x.rank()));
  InferContext inner{plain, {&x_first}, {nullptr}, {}, {}};
  inner.output_types.resize(1);
  inner.output_values.resize(1);
  KILN_RETURN_IF_ERROR(plain_pool_schema(mode).infer(inner));
  ctx.output_types[0] = permute_type(inner.output_types[0], to_channels_last_perm(x.rank()));
  return Status::OK();
}

Cost channels_last_pool_cost(const CostContext& c) {
  const ir::Node plain = channels_first_pool_node(c.node);
  const int rank = c.input_types[0]->rank();
  const ir::TensorType x = permute_type(*c.input_types[0], to_channels_first_perm(rank));
  const ir::TensorType y = permute_type(*c.output_types[0], to_channels_first_perm(rank));
  const OpSchema& s = plain_pool_schema(plain.op_type);
  CostContext inner{plain, {&x}, {&y}};
  if (s.cost) return s.cost(inner);
  Cost cost;
  cost.flops = static_cast<double>(Tensor::numel_of(y.concrete()));
  return cost;
}

}  // namespace

std::vector<int64_t> to_channels_last_perm(int rank) {
  KILN_ASSERT(rank >= 3, "channels-last layout needs rank >= 3, not {}", rank);
  std::vector<int64_t> perm{0};
  for (int i = 2; i < rank; ++i) perm.push_back(i);
  perm.push_back(1);
  return perm;
}

std::vector<int64_t> to_channels_first_perm(int rank) {
  KILN_ASSERT(rank >= 3, "channels-last layout needs rank >= 3, not {}", rank);
  std::vector<int64_t> perm{0, rank - 1};
  for (int i = 1; i < rank - 1; ++i) perm.push_back(i);
  return perm;
}

ir::TensorType permute_type(const ir::TensorType& t, const std::vector<int64_t>& perm) {
  if (!t.shape) return t;
  KILN_ASSERT(t.shape->size() == perm.size(), "perm of rank {} for type {}", perm.size(), t.to_string());
  std::vector<ir::Dim> dims;
  for (int64_t p : perm) dims.push_back((*t.shape)[static_cast<size_t>(p)]);
  return ir::TensorType(t.dtype, std::move(dims));
}

bool is_channels_last_pool_mode(const std::string& op_type) {
  return std::find(std::begin(kPoolModes), std::end(kPoolModes), op_type) != std::end(kPoolModes);
}

ir::Node channels_first_pool_node(const ir::Node& channels_last_pool) {
  ir::Node plain = channels_last_pool;
  plain.op_type = channels_last_pool.attr_s("mode", "");
  plain.domain.clear();
  plain.attrs.erase("mode");
  return plain;
}

void register_layout_ops(OpRegistry& r) {
  // Every attribute any of the modes takes; the plain pool's inference rejects wrong values.
  r.add({.op_type = "ChannelsLastPool",
         .domain = "kiln",
         .attributes = {"mode", "auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "p",
                        "pads", "storage_order", "strides"},
         .infer = infer_channels_last_pool,
         .cost = channels_last_pool_cost});
}

}  // namespace kiln::ops
