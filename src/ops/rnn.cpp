// Recurrent ops: RNN, GRU, LSTM (opsets 7 and 14; 14 adds `layout`). Schemas only.
#include "ops/rnn.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/error.h"
#include "ops/op_schema.h"
#include "ops/shape_util.h"

namespace kiln::ops {

int rnn_gate_count(RnnKind k) { return k == RnnKind::kRnn ? 1 : k == RnnKind::kGru ? 3 : 4; }
int rnn_activations_per_direction(RnnKind k) { return k == RnnKind::kRnn ? 1 : k == RnnKind::kGru ? 2 : 3; }

namespace {

using Fn = RnnActivation::Fn;

struct ActivationInfo {
  Fn fn;
  bool uses_alpha, uses_beta;
  float default_alpha, default_beta;  // the defaults of the same-named ONNX ops
};

// Names are matched case-insensitively, as onnxruntime does.
const std::map<std::string, ActivationInfo>& activation_table() {
  static const std::map<std::string, ActivationInfo> table = {
      {"sigmoid", {Fn::kSigmoid, false, false, 0, 0}},
      {"tanh", {Fn::kTanh, false, false, 0, 0}},
      {"relu", {Fn::kRelu, false, false, 0, 0}},
      {"affine", {Fn::kAffine, true, true, 1.0f, 0.0f}},
      {"leakyrelu", {Fn::kLeakyRelu, true, false, 0.01f, 0}},
      {"thresholdedrelu", {Fn::kThresholdedRelu, true, false, 1.0f, 0}},
      {"scaledtanh", {Fn::kScaledTanh, true, true, 1.0f, 1.0f}},
      {"hardsigmoid", {Fn::kHardSigmoid, true, true, 0.2f, 0.5f}},
      {"elu", {Fn::kElu, true, false, 1.0f, 0}},
      {"softsign", {Fn::kSoftsign, false, false, 0, 0}},
      {"softplus", {Fn::kSoftplus, false, false, 0, 0}},
  };
  return table;
}

std::vector<std::string> default_activations(RnnKind k) {
  if (k == RnnKind::kRnn) return {"Tanh"};
  if (k == RnnKind::kGru) return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

// activation_alpha/beta are consumed in order, one value per function that takes it.
Status parse_activations(const ir::Node& node, RnnConfig* cfg) {
  const int per_dir = rnn_activations_per_direction(cfg->kind);
  std::vector<std::string> names;
  if (const ir::Attribute* a = node.attr("activations")) names = a->strings;
  if (names.empty()) {
    for (int d = 0; d < cfg->num_directions; ++d) {
      for (const auto& n : default_activations(cfg->kind)) names.push_back(n);
    }
  } else if (static_cast<int>(names.size()) == per_dir && cfg->num_directions == 2) {
    names.insert(names.end(), names.begin(), names.end());  // one set given for both directions
  }
  if (static_cast<int>(names.size()) != per_dir * cfg->num_directions) {
    return invalid_argument("activations has {} entries, expected {} ({} per direction)", names.size(),
                            per_dir * cfg->num_directions, per_dir);
  }
  const std::vector<float> alphas = node.attr_floats("activation_alpha");
  const std::vector<float> betas = node.attr_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    auto it = activation_table().find(lower);
    if (it == activation_table().end()) return unsupported("activation function '{}' is not supported", name);
    const ActivationInfo& info = it->second;
    RnnActivation act{info.fn, info.default_alpha, info.default_beta};
    if (info.uses_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (info.uses_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    cfg->activations.push_back(act);
  }
  return Status::OK();
}

}  // namespace

Status parse_rnn_config(const ir::Node& node, RnnKind kind, RnnConfig* out) {
  RnnConfig cfg;
  cfg.kind = kind;
  const std::string direction = node.attr_s("direction", "forward");
  if (direction == "forward") {
    cfg.direction = RnnConfig::Direction::kForward;
  } else if (direction == "reverse") {
    cfg.direction = RnnConfig::Direction::kReverse;
  } else if (direction == "bidirectional") {
    cfg.direction = RnnConfig::Direction::kBidirectional;
    cfg.num_directions = 2;
  } else {
    return invalid_argument("direction must be forward, reverse or bidirectional, got '{}'", direction);
  }
  cfg.hidden_size = node.attr_i("hidden_size", -1);
  if (node.has_attr("hidden_size") && cfg.hidden_size <= 0) {
    return invalid_argument("hidden_size must be positive, got {}", cfg.hidden_size);
  }
  if (node.has_attr("clip")) {
    cfg.has_clip = true;
    cfg.clip = node.attr_f("clip", 0);
    if (!(cfg.clip > 0)) return invalid_argument("clip must be positive, got {}", cfg.clip);
  }
  cfg.input_forget = node.attr_i("input_forget", 0) != 0;
  cfg.linear_before_reset = node.attr_i("linear_before_reset", 0) != 0;
  const int64_t layout = node.attr_i("layout", 0);
  if (layout != 0 && layout != 1) return invalid_argument("layout must be 0 or 1, got {}", layout);
  cfg.layout = static_cast<int>(layout);
  KILN_RETURN_IF_ERROR(parse_activations(node, &cfg));
  *out = std::move(cfg);
  return Status::OK();
}

namespace {

// Input indices shared by the three ops; LSTM adds initial_c and P.
enum RnnInput { kX = 0, kW = 1, kR = 2, kB = 3, kSeqLens = 4, kInitialH = 5, kInitialC = 6, kP = 7 };

// Dim `i` of input `input` when its shape is known there, else -1.
int64_t known_dim(const InferContext& ctx, int input, int i) {
  if (!ctx.has_input(input) || !ctx.input_type(input).has_rank()) return -1;
  const auto& s = *ctx.input_type(input).shape;
  return i < static_cast<int>(s.size()) && s[i].known() ? s[i].value : -1;
}

// Checks an optional input against the expected dims (-1: not known, not checked).
Status expect_shape(const InferContext& ctx, int input, const char* name, const std::vector<int64_t>& want) {
  if (!ctx.has_input(input) || !ctx.input_type(input).has_rank()) return Status::OK();
  const ir::TensorType& t = ctx.input_type(input);
  bool ok = t.rank() == static_cast<int>(want.size());
  for (size_t i = 0; ok && i < want.size(); ++i) {
    const ir::Dim& d = (*t.shape)[i];
    ok = !(d.known() && want[i] >= 0 && d.value != want[i]);
  }
  if (!ok) return invalid_argument("input {} has shape {}, expected {}", name, t.to_string(), shape_to_string(want));
  return Status::OK();
}

ir::Dim dim_or_unknown(int64_t v) { return v >= 0 ? ir::Dim(v) : ir::Dim(); }

// The symbolic dim of X's input at `i` (keeps names like "batch" in the outputs).
ir::Dim x_dim(const InferContext& ctx, int i) {
  const ir::TensorType& x = ctx.input_type(kX);
  return x.has_rank() && x.rank() == 3 ? (*x.shape)[i] : ir::Dim();
}

Status infer_rnn(InferContext& ctx, RnnKind kind) {
  const int expected_inputs = kind == RnnKind::kLstm ? 8 : 6;
  if (ctx.num_inputs() < 3 || ctx.num_inputs() > expected_inputs || !ctx.has_input(kX) || !ctx.has_input(kW) ||
      !ctx.has_input(kR)) {
    return invalid_argument("{} takes X, W, R and up to {} optional inputs", ctx.node.op_type, expected_inputs - 3);
  }
  const int max_outputs = kind == RnnKind::kLstm ? 3 : 2;
  if (ctx.num_outputs() > max_outputs) {
    return invalid_argument("{} has at most {} outputs, got {}", ctx.node.op_type, max_outputs, ctx.num_outputs());
  }
  KILN_RETURN_IF_ERROR(expect_dtype(ctx, kX, {DType::kFloat32, DType::kFloat64, DType::kFloat16}));
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (i != kSeqLens && ctx.has_input(i) && ctx.input_type(i).dtype != ctx.input_type(kX).dtype) {
      return invalid_argument("input {} is {} but X is {}", i, dtype_name(ctx.input_type(i).dtype),
                              dtype_name(ctx.input_type(kX).dtype));
    }
  }
  if (ctx.has_input(kSeqLens)) KILN_RETURN_IF_ERROR(expect_dtype(ctx, kSeqLens, {DType::kInt32}));
  RnnConfig cfg;
  KILN_RETURN_IF_ERROR(parse_rnn_config(ctx.node, kind, &cfg));

  const int64_t g = rnn_gate_count(kind);
  const int64_t dirs = cfg.num_directions;
  const int64_t hidden = cfg.hidden_size >= 0 ? cfg.hidden_size : known_dim(ctx, kR, 2);
  const int seq_axis = cfg.layout == 0 ? 0 : 1;
  const int64_t seq = known_dim(ctx, kX, seq_axis);
  const int64_t batch = known_dim(ctx, kX, 1 - seq_axis);
  const int64_t in_size = known_dim(ctx, kX, 2);
  const int64_t gh = hidden >= 0 ? g * hidden : -1;
  KILN_RETURN_IF_ERROR(expect_shape(ctx, kX, "X", {-1, -1, -1}));
  KILN_RETURN_IF_ERROR(expect_shape(ctx, kW, "W", {dirs, gh, in_size}));
  KILN_RETURN_IF_ERROR(expect_shape(ctx, kR, "R", {dirs, gh, hidden}));
  KILN_RETURN_IF_ERROR(expect_shape(ctx, kB, "B", {dirs, gh >= 0 ? 2 * gh : -1}));
  KILN_RETURN_IF_ERROR(expect_shape(ctx, kSeqLens, "sequence_lens", {batch}));
  const std::vector<int64_t> state = cfg.layout == 0 ? std::vector<int64_t>{dirs, batch, hidden}
                                                     : std::vector<int64_t>{batch, dirs, hidden};
  KILN_RETURN_IF_ERROR(expect_shape(ctx, kInitialH, "initial_h", state));
  if (kind == RnnKind::kLstm) {
    KILN_RETURN_IF_ERROR(expect_shape(ctx, kInitialC, "initial_c", state));
    KILN_RETURN_IF_ERROR(expect_shape(ctx, kP, "P", {dirs, hidden >= 0 ? 3 * hidden : -1}));
  }
  if (const Tensor* lens = ctx.input_value(kSeqLens); lens && seq >= 0) {
    std::vector<int64_t> v;
    KILN_RETURN_IF_ERROR(tensor_to_ints(*lens, &v));
    for (int64_t l : v) {
      if (l < 0 || l > seq) return invalid_argument("sequence_lens value {} is outside [0, {}]", l, seq);
    }
  }

  const DType t = ctx.input_type(kX).dtype;
  const ir::Dim s = x_dim(ctx, seq_axis), b = x_dim(ctx, 1 - seq_axis), d(dirs), h = dim_or_unknown(hidden);
  if (cfg.layout == 0) {
    set_output(ctx, 0, t, std::vector<ir::Dim>{s, d, b, h});
  } else {
    set_output(ctx, 0, t, std::vector<ir::Dim>{b, s, d, h});
  }
  const std::vector<ir::Dim> state_dims = cfg.layout == 0 ? std::vector<ir::Dim>{d, b, h}
                                                          : std::vector<ir::Dim>{b, d, h};
  set_output(ctx, 1, t, state_dims);
  if (kind == RnnKind::kLstm) set_output(ctx, 2, t, state_dims);
  return Status::OK();
}

// Each step multiplies [batch, input] and [batch, hidden] by the gate weights, per direction;
// the elementwise gate math is a few flops per gate value.
Cost rnn_cost(const CostContext& c) {
  Cost cost;
  const std::vector<int64_t> x = c.input_types[kX]->concrete();
  const std::vector<int64_t> r = c.input_types[kR]->concrete();
  const double steps = static_cast<double>(x[0]) * static_cast<double>(x[1]);  // seq * batch in either layout
  const double gate_values = static_cast<double>(r[0]) * static_cast<double>(r[1]);  // dirs * gates * hidden
  cost.macs = steps * gate_values * static_cast<double>(x[2] + r[2]);
  cost.flops = steps * gate_values * 4;
  for (const auto& types : {c.input_types, c.output_types}) {
    for (const ir::TensorType* t : types) {
      if (t) cost.bytes += static_cast<double>(Tensor::numel_of(t->concrete()) * dtype_size(t->dtype));
    }
  }
  return cost;
}

}  // namespace

void register_rnn_ops(OpRegistry& r) {
  const std::vector<std::string> common = {"activation_alpha", "activation_beta", "activations", "clip",
                                           "direction", "hidden_size", "layout"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = common;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  auto schema = [](std::string op, RnnKind kind, std::vector<std::string> attributes) {
    return OpSchema{.op_type = std::move(op),
                    .domain = "",
                    .attributes = std::move(attributes),
                    .canonicalize = nullptr,
                    .infer = [kind](InferContext& c) { return infer_rnn(c, kind); },
                    .cost = rnn_cost};
  };
  r.add(schema("RNN", RnnKind::kRnn, common));
  r.add(schema("GRU", RnnKind::kGru, with({"linear_before_reset"})));
  r.add(schema("LSTM", RnnKind::kLstm, with({"input_forget"})));
}

}  // namespace kiln::ops
