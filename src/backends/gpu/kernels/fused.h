// kiln.FusedElementwise on the GPU: the node's body (a chain of elementwise ops) becomes a small
// register program at build time; one kernel interprets it per output element, so a whole chain
// is one launch with no intermediate tensors in memory.
#pragma once
#include <cstdint>

#include "backends/gpu/kernels/broadcast.h"
#include "backends/gpu/kernels/ew_ops.h"
#include "backends/gpu/vendors/cuda.h"
#include "kiln/dtype.h"

namespace kiln::gpu::kern {

constexpr int kFusedMaxInputs = 8;
constexpr int kFusedMaxOutputs = 4;
constexpr int kFusedMaxInstrs = 32;
constexpr int kFusedMaxRegs = 16;
constexpr int kFusedMaxImms = 8;

// r[dst] = op(r[a], r[b], r[c]) computed in float (kWhere reads all three).
struct FusedInstr {
  EwOp op;
  uint8_t dst, a, b, c;
  float p0, p1;  // EwParams of the op
};

// Registers 0..num_inputs-1 start as the inputs' elements, the next num_imms as constants.
struct FusedProgram {
  int num_inputs = 0, num_outputs = 0, num_instrs = 0, num_imms = 0;
  FusedInstr code[kFusedMaxInstrs];
  float imms[kFusedMaxImms];
  uint8_t out_reg[kFusedMaxOutputs];
  // Contiguous case: each input is output-shaped (step 1) or one element (step 0).
  bool contiguous = true;
  uint8_t step[kFusedMaxInputs];
  Broadcast<kFusedMaxInputs> bc;  // otherwise
};

struct FusedPointers {
  const void* in[kFusedMaxInputs];
  void* out[kFusedMaxOutputs];
};

// Whether the interpreter runs in storage type t (inputs and outputs all of type t).
bool fused_supported(DType t);
void launch_fused(DType t, const FusedProgram& prog, const FusedPointers& ptrs, int64_t n, cudaStream_t stream);

}  // namespace kiln::gpu::kern
