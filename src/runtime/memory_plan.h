// Static memory plan: every tensor of a network (for concrete shapes) gets an offset in one
// arena, so a run allocates nothing. Two tensors may share bytes when their lifetimes (the
// steps between the one that writes a tensor and the last one that reads it) do not overlap.
// Placement is greedy by size, largest first, each into the smallest gap that fits among the
// tensors already placed whose lifetimes overlap (best fit); see plan_memory.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace kiln::runtime {

struct PlanTensor {
  std::string name;
  size_t bytes = 0;
  int first = 0;  // step that writes it (graph inputs: 0, copied in before the first layer)
  int last = 0;   // last step that reads it (graph outputs: the step count, copied out after)
  // Index of an earlier tensor whose bytes this one may reuse in place (an elementwise op
  // writing over its input, a reshape). Honoured only when that tensor is dead by the time this
  // one is written (its last use is this tensor's first step) and is at least as large.
  int may_alias = -1;
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per PlanTensor
  std::vector<bool> aliased;    // true where the tensor reuses its may_alias tensor's bytes
  size_t arena_bytes = 0;       // size of the one arena
  size_t total_bytes = 0;       // sum of the tensor sizes (what allocating each would take)

  // Arena size and reuse, then one line per tensor sorted by offset.
  std::string to_string(const std::vector<PlanTensor>& tensors) const;
};

// `alignment` (a power of two) is applied to every offset; 256 bytes suits every GPU kernel
// and vendor library kiln calls.
MemoryPlan plan_memory(const std::vector<PlanTensor>& tensors, size_t alignment = 256);

}  // namespace kiln::runtime
