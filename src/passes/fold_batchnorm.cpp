// fold_batchnorm: inference BatchNormalization after Conv, ConvTranspose or Gemm folds into the
// producer's weights and bias. BN computes y = s * (x - mean) + bias with
// s = scale / sqrt(var + epsilon), one value per channel (dim 1 of its input), so
//   W'[channel c] = s[c] * W[channel c],   B' = s * (B - mean) + bias.
// Where the channel sits in W: Conv [M, C/g, k...] dim 0; ConvTranspose [C, M/g, k...]
// dim 1 within each group's block of rows; Gemm's output column n is B's column (row under
// transB), and C folds as s * beta * C + (bias - s * mean) with beta then 1.
//
// Only when every BN parameter and the producer's W and B (or C) are constants, the
// producer's output is read by the BN alone, and the BN is in inference mode with one output.
#include <cmath>

#include "passes/fusion_util.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

bool is_inference_bn(const ir::Node& n) {
  if (n.attr_i("training_mode", 0) != 0) return false;
  for (size_t i = 1; i < n.outputs.size(); ++i) {
    if (n.outputs[i]) return false;
  }
  return true;
}

bool has_constant_weights(const ir::Node& n) {
  const ir::Value* w = n.input(1);
  const ir::Value* b = n.input(2);
  return w && w->is_constant() && is_float_dtype(w->type.dtype) && (!b || b->is_constant());
}

// The folded per-channel scale s and shift t (y = s * x + t) of a BN, or false when its
// parameters are not [C] vectors of the same length.
bool bn_affine(const Match& m, std::vector<double>* s, std::vector<double>* t) {
  const std::vector<double> scale = constant_doubles(*m.value("scale")), bias = constant_doubles(*m.value("bias")),
                            mean = constant_doubles(*m.value("mean")), var = constant_doubles(*m.value("var"));
  const size_t c = scale.size();
  if (c == 0 || bias.size() != c || mean.size() != c || var.size() != c) return false;
  const double eps = m.root->attr_f("epsilon", 1e-5f);
  s->resize(c);
  t->resize(c);
  for (size_t i = 0; i < c; ++i) {
    (*s)[i] = scale[i] / std::sqrt(var[i] + eps);
    (*t)[i] = bias[i] - mean[i] * (*s)[i];
  }
  return true;
}

// Bias B' = s * B + t over `c` channels (B absent reads as zeros).
std::vector<double> folded_bias(const ir::Value* b, const std::vector<double>& s, const std::vector<double>& t) {
  std::vector<double> out = t;
  if (b) {
    const std::vector<double> v = constant_doubles(*b);
    for (size_t i = 0; i < out.size(); ++i) out[i] += s[i] * v[i];
  }
  return out;
}

// Conv / ConvTranspose: scales W per output channel and folds the bias. Returns false when
// the channel counts disagree.
bool fold_conv(const ir::Node& conv, const std::vector<double>& s, const std::vector<double>& t,
               std::vector<double>* w, std::vector<double>* b) {
  const std::vector<int64_t>& shape = conv.input(1)->constant->shape();
  const int64_t channels = static_cast<int64_t>(s.size());
  if (shape.size() < 2) return false;
  const ir::Value* bias = conv.input(2);
  if (bias && bias->constant->numel() != channels) return false;
  const int64_t group = conv.attr_i("group", 1);
  const int64_t ksize = Tensor::numel_of({shape.begin() + 2, shape.end()});
  const bool transpose = conv.op_type == "ConvTranspose";
  if ((transpose ? shape[1] * group : shape[0]) != channels || group < 1 || shape[0] % group != 0) return false;
  *w = constant_doubles(*conv.input(1));
  for (size_t i = 0; i < w->size(); ++i) {
    const int64_t row = static_cast<int64_t>(i) / (shape[1] * ksize);  // W's dim 0
    const int64_t col = (static_cast<int64_t>(i) / ksize) % shape[1];  // W's dim 1
    const int64_t c = transpose ? row / (shape[0] / group) * shape[1] + col : row;
    (*w)[i] *= s[c];
  }
  *b = folded_bias(bias, s, t);
  return true;
}

// Gemm: scales B's output columns; the new C (shape in `c_shape`) is s * beta * C + t.
bool fold_gemm(const ir::Node& gemm, const std::vector<double>& s, const std::vector<double>& t,
               std::vector<double>* w, std::vector<double>* c, std::vector<int64_t>* c_shape) {
  const std::vector<int64_t>& shape = gemm.input(1)->constant->shape();
  const int64_t n = static_cast<int64_t>(s.size());
  const bool tb = gemm.attr_i("transB", 0) != 0;
  if (shape.size() != 2 || shape[tb ? 0 : 1] != n) return false;
  *w = constant_doubles(*gemm.input(1));
  for (size_t i = 0; i < w->size(); ++i) (*w)[i] *= s[tb ? i / shape[1] : i % shape[1]];
  const ir::Value* cv = gemm.input(2);
  const double beta = gemm.attr_f("beta", 1.0f);
  if (!cv || beta == 0) {
    *c = t;
    *c_shape = {n};
    return true;
  }
  const std::vector<int64_t>& cs = cv->constant->shape();
  if (cs.size() > 2) return false;
  const int64_t rows = cs.size() == 2 ? cs[0] : 1, cols = cs.empty() ? 1 : cs.back();
  if (cols != 1 && cols != n) return false;
  const std::vector<double> old = constant_doubles(*cv);
  c->resize(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) (*c)[r * n + j] = s[j] * beta * old[r * cols + (cols == 1 ? 0 : j)] + t[j];
  }
  *c_shape = cs.size() == 2 ? std::vector<int64_t>{rows, n} : std::vector<int64_t>{n};
  return true;
}

bool fold(ir::Graph& g, const Match& m) {
  ir::Node& producer = *m.node("producer");
  std::vector<double> s, t, w, b;
  if (!bn_affine(m, &s, &t)) return false;
  std::vector<int64_t> b_shape = {static_cast<int64_t>(s.size())};
  const bool ok = producer.op_type == "Gemm" ? fold_gemm(producer, s, t, &w, &b, &b_shape)
                                             : fold_conv(producer, s, t, &w, &b);
  if (!ok) return false;
  const ir::Value* old_w = producer.input(1);
  const DType dtype = old_w->type.dtype;
  ir::Value* new_w = add_constant_like(g, old_w->name + "_bn", dtype, old_w->constant->shape(), w);
  ir::Value* new_b = add_constant_like(g, m.root->name + "_bias", dtype, b_shape, b);
  ir::Node* n = add_replacement(g, producer, producer.op_type, producer.domain, {producer.input(0), new_w, new_b},
                                m.root->output(0));
  if (n->op_type == "Gemm") set_float_attr(*n, "beta", 1.0f);
  return true;
}

class FoldBatchNorm final : public Pass {
 public:
  std::string name() const override { return "fold_batchnorm"; }
  bool apply(ir::Graph& g, const PassContext&) override {
    auto producer = Pattern::any_of({"Conv", "ConvTranspose", "Gemm"}).where(has_constant_weights).bind("producer");
    auto bn = Pattern::op("BatchNormalization",
                          {producer, Pattern::constant().bind("scale"), Pattern::constant().bind("bias"),
                           Pattern::constant().bind("mean"), Pattern::constant().bind("var")})
                  .where(is_inference_bn);
    return apply_rules(g, {{"batchnorm_into_weights", bn, fold}});
  }
};

}  // namespace

std::unique_ptr<Pass> make_fold_batchnorm() { return std::make_unique<FoldBatchNorm>(); }

}  // namespace kiln::passes
