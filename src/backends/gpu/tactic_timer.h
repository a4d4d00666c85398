// Times candidate implementations of a layer on the device at build time (tactic selection).
#pragma once
#include <functional>

#include "backends/gpu/vendors/cuda.h"

namespace kiln::gpu {

// Median-free but robust enough: one warm-up call, then the mean of `iters` calls, in ms.
// Returns a negative time when `fn` throws (the candidate is unusable).
float time_candidate(cudaStream_t stream, const std::function<void()>& fn, int iters = 5);

// Bytes a layer may ask for as workspace when choosing tactics: enough for the fast
// algorithms, bounded so that big models still fit.
size_t workspace_limit();

}  // namespace kiln::gpu
