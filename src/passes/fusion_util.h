// Helpers shared by the weight-folding and epilogue-fusion passes (fold_batchnorm,
// fold_channel_affine, matmul_add_to_gemm, fuse_conv_bias_activation, fuse_gemm_activation).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/activation.h"
#include "passes/matcher.h"

namespace kiln::passes {

// The fused ops (kiln.FusedConv, kiln.FusedGemm) take float32, float16 and bfloat16.
bool is_fusable_dtype(DType t);
// Weight folding computes in double and rounds back, so any floating type works.
bool is_float_dtype(DType t);

// A constant's elements as doubles (its shape is the constant's).
std::vector<double> constant_doubles(const ir::Value& v);
// A new constant of `dtype` and `shape` holding `values` (rounded to dtype).
ir::Value* add_constant_like(ir::Graph& g, const std::string& name, DType dtype, std::vector<int64_t> shape,
                             const std::vector<double>& values);

// The per-output-channel values of a constant that an elementwise op applies to an
// [N, M, spatial...] tensor of rank `rank`: a scalar, or a constant whose dims aligned to the
// right are all 1 except the channel dim (1 or M), and not of higher rank (it must not widen
// the result). Returns false otherwise; `out` gets M values.
bool per_channel_values(const ir::Value& k, int rank, int64_t channels, std::vector<double>* out);

// Adds a copy of `src` (attributes, inputs unless given) as `domain`.`op_type`, whose output
// takes over the readers (and graph-output name) of `replaced`. Returns the new node.
ir::Node* add_replacement(ir::Graph& g, const ir::Node& src, const std::string& op_type, const std::string& domain,
                          std::vector<ir::Value*> inputs, ir::Value* replaced);

// Points input `slot` of `n` at `to` (keeping both values' consumer lists right).
void replace_input(ir::Node* n, size_t slot, ir::Value* to);

// Sets a float attribute.
void set_float_attr(ir::Node& n, const std::string& name, float v);

// The activation an ONNX node computes (Relu, Clip with constant bounds, LeakyRelu, Sigmoid,
// HardSigmoid, HardSwish, Tanh, Gelu); false for anything else.
bool activation_of_node(const ir::Node& n, ops::Activation* out);

// Folds activation `act` into `producer`; `out` is the activation's output, whose readers
// the fused node takes over. Returns false to decline.
using FuseActivation = std::function<bool(ir::Graph&, ir::Node& producer, const ops::Activation& act, ir::Value* out)>;

// Rules that fuse an activation reading the output of a node matching `producer` (an op
// pattern): one per activation node, and x * Sigmoid(x) as Silu.
std::vector<RewriteRule> activation_rules(const std::string& prefix, const Pattern& producer, FuseActivation fuse);

}  // namespace kiln::passes
