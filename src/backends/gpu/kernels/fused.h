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

// Ops only the interpreter has (beyond EwOp): Cast to fp16/bf16 rounds a register to that
// precision (Cast to float32 is a plain copy), IsNaN. Where is EwOp::kWhere.
enum class FusedExtra : uint8_t { kNone, kCopy, kRoundHalf, kRoundBf16, kIsNaN };

// The storage types of node inputs and outputs; every register holds float (bool as 0/1).
enum class FusedType : uint8_t { kF32, kF16, kBF16, kBool };

// r[dst] = op(r[a], r[b], r[c]) computed in float (kWhere reads all three).
struct FusedInstr {
  EwOp op;
  FusedExtra extra;  // when not kNone, replaces op
  uint8_t dst, a, b, c;
  float p0, p1;  // EwParams of the op
};

// Registers 0..num_inputs-1 start as the inputs' elements, the next num_imms as constants.
struct FusedProgram {
  int num_inputs = 0, num_outputs = 0, num_instrs = 0, num_imms = 0;
  FusedInstr code[kFusedMaxInstrs];
  float imms[kFusedMaxImms];
  uint8_t out_reg[kFusedMaxOutputs];
  FusedType in_type[kFusedMaxInputs];
  FusedType out_type = FusedType::kF32;
  // Contiguous case: each input is output-shaped (step 1) or one element (step 0).
  bool contiguous = true;
  uint8_t step[kFusedMaxInputs];
  Broadcast<kFusedMaxInputs> bc;  // otherwise
};

struct FusedPointers {
  const void* in[kFusedMaxInputs];
  void* out[kFusedMaxOutputs];
};

// The storage type of dtype t; false for types the interpreter cannot load or store.
bool fused_type_of(DType t, FusedType* out);
void launch_fused(const FusedProgram& prog, const FusedPointers& ptrs, int64_t n, cudaStream_t stream);

}  // namespace kiln::gpu::kern
