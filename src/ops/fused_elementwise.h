// kiln.FusedElementwise: a connected region of elementwise ops with one output, made by the
// fuse_elementwise pass, so a backend can run it as one kernel (a GPU backend generates one
// kernel per body). The node:
//
//   inputs   the region's inputs (graph values or constants), any number, order significant
//   output   one; shape = multidirectional broadcast of all inputs, dtype = the body output's
//   "body"   graph attribute holding the original ops, in this exact form:
//     - body.inputs[i] stands for node input i (same dtype; its shape as seen when fusing);
//     - body nodes are in topological order, default ONNX domain, each with one output, and
//       each of an op type listed below (kFusedUnaryOps, kFusedBinaryOps, Where), with its
//       ONNX attributes at the current opset (LeakyRelu alpha, Cast to, Gelu approximate...);
//     - a body node input is a body input, an earlier body node's output, or a constant with
//       exactly one element (Value::constant; Clip's bounds, scalar operands such as 0.5);
//     - every value is float16, bfloat16, float32, float64 or bool (Cast only between the
//       four float types; IsNaN, Not, And, Or, Equal, Less, Greater, Where's condition: bool);
//     - body.outputs has exactly one value, the output of a body node;
//     - no subgraphs, no values of the enclosing graph.
//   Every body value is an elementwise function of the inputs it depends on, broadcast to the
//   broadcast of their shapes (the pass checks this; scalar constants never grow a shape).
//   So evaluating the body once per output element, reading each input at that element's
//   broadcast index, computes the output.
#pragma once
#include <string>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

inline constexpr const char* kFusedDomain = "kiln";
inline constexpr const char* kFusedElementwiseOp = "FusedElementwise";

// One-input ops a body may hold (Clip additionally reads its optional min/max constants).
inline constexpr const char* kFusedUnaryOps[] = {
    "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Abs", "Neg", "Erf", "Reciprocal", "Floor", "Ceil", "Sin",
    "Cos", "Softplus", "HardSigmoid", "HardSwish", "LeakyRelu", "Elu", "Selu", "Clip", "Gelu", "Not", "Cast", "IsNaN"};
// Two-input ops with broadcasting (PRelu's slope broadcasts to x).
inline constexpr const char* kFusedBinaryOps[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min",
                                                  "PRelu", "And", "Or", "Equal", "Less", "Greater"};

// True for a dtype a body value may have.
bool fusable_dtype(DType t);
// True when `n` may be a body node: a listed op with the input count above, every input and
// output typed with a fusable dtype, Clip bounds one-element constants, Cast between floats.
// Max and Min qualify with exactly two inputs.
bool is_fusable_elementwise(const ir::Node& n);
// Checks a kiln.FusedElementwise node's body against the form above; errors name the node.
Status validate_fused_elementwise(const ir::Node& node);

}  // namespace kiln::ops
