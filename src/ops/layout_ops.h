// Channels-last (NHWC) layout helpers shared by the layout pass, the kiln.ChannelsLastPool
// schema and its kernels. "Channels-last" generalizes NHWC to any rank: (N, spatial..., C).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/types.h"

namespace kiln::ops {

// Transpose perms between channels-first (N, C, spatial...) and channels-last (N, spatial..., C)
// for a tensor of `rank` >= 3: to_channels_last(4) = [0, 2, 3, 1], to_channels_first(4) =
// [0, 3, 1, 2]. Output axis k is input axis perm[k], as in ONNX Transpose.
std::vector<int64_t> to_channels_last_perm(int rank);
std::vector<int64_t> to_channels_first_perm(int rank);

// `t` with its dims reordered by `perm` (an unknown rank stays unknown).
ir::TensorType permute_type(const ir::TensorType& t, const std::vector<int64_t>& perm);

// The pooling ops kiln.ChannelsLastPool can compute (its `mode` attribute).
bool is_channels_last_pool_mode(const std::string& op_type);

// The plain ONNX pool node a kiln.ChannelsLastPool node stands for: op type `mode`, the same
// attributes without `mode`, same inputs and outputs (for inference and kernels to read).
ir::Node channels_first_pool_node(const ir::Node& channels_last_pool);

}  // namespace kiln::ops
