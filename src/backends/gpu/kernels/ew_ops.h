// The elementwise operations kiln's GPU kernels implement, shared by the per-op layers
// (elementwise.cu: one template instance per op and dtype) and the FusedElementwise
// interpreter (fused.cu: a switch over the same op codes). Host and device code see this.
#pragma once
#include <cstdint>
#include <string>

namespace kiln::gpu::kern {

// X(name, arity): unary ops read a, binary ops a and b.
#define KILN_EW_FLOAT_UNARY(X)                                                                      \
  X(Sigmoid) X(Tanh) X(Exp) X(Log) X(Sqrt) X(Erf) X(Reciprocal) X(Floor) X(Ceil) X(Round) X(Sin)  \
  X(Cos) X(LeakyRelu) X(Elu) X(Selu) X(Celu) X(HardSigmoid) X(HardSwish) X(Softplus) X(Softsign)   \
  X(Mish) X(Gelu) X(GeluTanh) X(Swish) X(ThresholdedRelu)
#define KILN_EW_NUM_UNARY(X) X(Identity) X(Relu) X(Abs) X(Neg) X(Sign) X(Clip)
#define KILN_EW_BOOL_UNARY(X) X(Not)
#define KILN_EW_FLOAT_BINARY(X) X(Pow)
#define KILN_EW_NUM_BINARY(X) X(Add) X(Sub) X(Mul) X(Div) X(Max) X(Min) X(PRelu)
#define KILN_EW_COMPARE(X) X(Equal) X(Less) X(Greater) X(LessOrEqual) X(GreaterOrEqual)
#define KILN_EW_BOOL_BINARY(X) X(And) X(Or) X(Xor)

#define KILN_EW_ENUM(name) k##name,
enum class EwOp : uint8_t {
  KILN_EW_FLOAT_UNARY(KILN_EW_ENUM) KILN_EW_NUM_UNARY(KILN_EW_ENUM) KILN_EW_BOOL_UNARY(KILN_EW_ENUM)
  KILN_EW_FLOAT_BINARY(KILN_EW_ENUM) KILN_EW_NUM_BINARY(KILN_EW_ENUM) KILN_EW_COMPARE(KILN_EW_ENUM)
  KILN_EW_BOOL_BINARY(KILN_EW_ENUM)
  kWhere,  // only inside fused programs: a ? b : c
  kCount
};
#undef KILN_EW_ENUM

// Attribute values an op reads (alpha, beta, Clip bounds...), in the order ew_apply uses.
struct EwParams {
  double p0 = 0, p1 = 0;
};

enum class EwKind { kFloatUnary, kNumUnary, kBoolUnary, kFloatBinary, kNumBinary, kCompare, kBoolBinary, kOther };

// The op code of an ONNX op type (with its category), false when it is not one of these.
bool ew_op_from_name(const std::string& name, EwOp* op, EwKind* kind);
inline int ew_arity(EwKind k) {
  return k == EwKind::kFloatUnary || k == EwKind::kNumUnary || k == EwKind::kBoolUnary ? 1 : 2;
}

}  // namespace kiln::gpu::kern
