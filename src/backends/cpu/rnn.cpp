// CPU kernels for the recurrent ops RNN, GRU and LSTM. One driver walks the time steps of
// each direction; the per-op cells differ only in how a step's gates become the new state.
// The input projection of all time steps is one GEMM; each step adds one (GRU: two) GEMMs
// with the recurrence weights. float16 runs in float.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/kernel.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "ops/rnn.h"

namespace kiln::cpu {
namespace {

using ops::RnnActivation;
using ops::RnnConfig;
using ops::RnnKind;

// C[M,N] = A[M,K] * B[N,K]^T + beta * C (row-major, leading dimensions given).
template <class T>
void gemm_nt(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T beta, T* c,
             int64_t ldc) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  } else {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
  }
}

// Applies an activation to n values in place (the switch sits outside the loops).
template <class T>
void activate(const RnnActivation& act, T* v, int64_t n) {
  using Fn = RnnActivation::Fn;
  const T alpha = act.alpha, beta = act.beta;
  auto each = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) v[i] = f(v[i]);
  };
  switch (act.fn) {
    case Fn::kSigmoid: each([](T x) { return T(1) / (T(1) + std::exp(-x)); }); break;
    case Fn::kTanh: each([](T x) { return std::tanh(x); }); break;
    case Fn::kRelu: each([](T x) { return std::max(x, T(0)); }); break;
    case Fn::kAffine: each([&](T x) { return alpha * x + beta; }); break;
    case Fn::kLeakyRelu: each([&](T x) { return x >= 0 ? x : alpha * x; }); break;
    case Fn::kThresholdedRelu: each([&](T x) { return x > alpha ? x : T(0); }); break;
    case Fn::kScaledTanh: each([&](T x) { return alpha * std::tanh(beta * x); }); break;
    case Fn::kHardSigmoid: each([&](T x) { return std::clamp(alpha * x + beta, T(0), T(1)); }); break;
    case Fn::kElu: each([&](T x) { return x >= 0 ? x : alpha * (std::exp(x) - T(1)); }); break;
    case Fn::kSoftsign: each([](T x) { return x / (T(1) + std::abs(x)); }); break;
    case Fn::kSoftplus: each([](T x) { return std::log1p(std::exp(x)); }); break;
  }
}

// `clip` bounds the inputs of the activations, when given.
template <class T>
void clip_then_activate(const RnnConfig& cfg, const RnnActivation& act, T* v, int64_t n) {
  if (cfg.has_clip) {
    const T c = cfg.clip;
    for (int64_t i = 0; i < n; ++i) v[i] = std::clamp(v[i], -c, c);
  }
  activate(act, v, n);
}

// The op's tensors (already in T) with the index arithmetic of both layouts.
template <class T>
struct RnnData {
  const RnnConfig& cfg;
  int64_t seq, batch, input, hidden, dirs, gates;
  const T* x;
  const T* w;  // [dirs, gates*hidden, input]
  const T* r;  // [dirs, gates*hidden, hidden]
  const T* bias = nullptr;  // [dirs, 2*gates*hidden]: W biases then R biases
  const int32_t* lens = nullptr;
  const T* init_h = nullptr;
  const T* init_c = nullptr;
  const T* peep = nullptr;  // [dirs, 3*hidden]: i, o, f
  T* y = nullptr;
  T* y_h = nullptr;
  T* y_c = nullptr;

  int64_t x_row(int64_t t, int64_t b) const { return cfg.layout == 0 ? t * batch + b : b * seq + t; }
  int64_t y_offset(int64_t t, int d, int64_t b) const {
    return (cfg.layout == 0 ? (t * dirs + d) * batch + b : (b * seq + t) * dirs + d) * hidden;
  }
  int64_t state_offset(int d, int64_t b) const {
    return (cfg.layout == 0 ? d * batch + b : b * dirs + d) * hidden;
  }
  int64_t length(int64_t b) const { return lens ? lens[b] : seq; }
  const T* w_dir(int d) const { return w + d * gates * hidden * input; }
  const T* r_dir(int d) const { return r + d * gates * hidden * hidden; }
};

// One direction's running state plus per-step scratch.
template <class T>
struct StepState {
  std::vector<T> h, c;      // [batch, hidden]
  std::vector<T> gates;     // [batch, gates*hidden]: input projection (+ biases) of this step
  std::vector<bool> active;  // batch rows whose sequence covers this step
  std::vector<T> rec, scratch;  // cell-specific buffers, kept across steps to avoid reallocation
};

// GRU with linear_before_reset keeps the recurrence bias of the h gate out of the input
// projection: it is added to the recurrent product before the reset gate multiplies it.
template <class T>
bool bias_folded(const RnnData<T>& p, int64_t gate) {
  return !(p.cfg.kind == RnnKind::kGru && p.cfg.linear_before_reset && gate == 2);
}

// X * W^T plus the biases folded into it, for every (time, batch) row in X's storage order.
template <class T>
std::vector<T> project_inputs(const RnnData<T>& p, int d) {
  const int64_t rows = p.seq * p.batch, gh = p.gates * p.hidden;
  std::vector<T> xw(static_cast<size_t>(rows * gh));
  gemm_nt<T>(rows, gh, p.input, p.x, p.input, p.w_dir(d), p.input, T(0), xw.data(), gh);
  if (!p.bias) return xw;
  const T* wb = p.bias + d * 2 * gh;
  const T* rb = wb + gh;
  std::vector<T> b(wb, wb + gh);
  for (int64_t g = 0; g < p.gates; ++g) {
    if (!bias_folded(p, g)) continue;
    for (int64_t j = g * p.hidden; j < (g + 1) * p.hidden; ++j) b[j] += rb[j];
  }
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t j = 0; j < gh; ++j) xw[row * gh + j] += b[j];
  }
  return xw;
}

// h_t = f(gates + h_{t-1} R^T)
template <class T>
void rnn_step(const RnnData<T>& p, int d, StepState<T>& s) {
  const int64_t H = p.hidden;
  gemm_nt<T>(p.batch, H, H, s.h.data(), H, p.r_dir(d), H, T(1), s.gates.data(), H);
  for (int64_t b = 0; b < p.batch; ++b) {
    if (!s.active[b]) continue;
    T* g = &s.gates[b * H];
    clip_then_activate(p.cfg, p.cfg.activation(d, 0), g, H);
    std::copy(g, g + H, &s.h[b * H]);
  }
}

// Gates z, r, h: z and r from the recurrent product; the candidate h uses the reset gate
// before (default) or after (linear_before_reset) multiplying by R_h.
template <class T>
void gru_step(const RnnData<T>& p, int d, StepState<T>& s) {
  const int64_t H = p.hidden, G = 3 * H;
  const T* r = p.r_dir(d);
  const RnnActivation& f = p.cfg.activation(d, 0);
  const RnnActivation& g = p.cfg.activation(d, 1);
  // Recurrent products of z and r (and of h with linear_before_reset), [batch, 2H or 3H].
  const int64_t rec_cols = p.cfg.linear_before_reset ? G : 2 * H;
  std::vector<T>& rec = s.rec;
  rec.resize(static_cast<size_t>(p.batch * rec_cols));
  gemm_nt<T>(p.batch, rec_cols, H, s.h.data(), H, r, H, T(0), rec.data(), rec_cols);
  std::vector<T>& reset_h = s.scratch;  // r (.) h_{t-1}
  reset_h.assign(static_cast<size_t>(p.batch * H), T(0));
  for (int64_t b = 0; b < p.batch; ++b) {
    if (!s.active[b]) continue;
    T* zr = &s.gates[b * G];
    for (int64_t j = 0; j < 2 * H; ++j) zr[j] += rec[b * rec_cols + j];
    clip_then_activate(p.cfg, f, zr, 2 * H);
    const T* rg = zr + H;
    if (p.cfg.linear_before_reset) {
      const T* rb_h = p.bias ? p.bias + d * 6 * H + 5 * H : nullptr;
      for (int64_t j = 0; j < H; ++j) {
        zr[2 * H + j] += rg[j] * (rec[b * rec_cols + 2 * H + j] + (rb_h ? rb_h[j] : T(0)));
      }
    } else {
      for (int64_t j = 0; j < H; ++j) reset_h[b * H + j] = rg[j] * s.h[b * H + j];
    }
  }
  if (!p.cfg.linear_before_reset) {
    gemm_nt<T>(p.batch, H, H, reset_h.data(), H, r + 2 * H * H, H, T(1), s.gates.data() + 2 * H, G);
  }
  for (int64_t b = 0; b < p.batch; ++b) {
    if (!s.active[b]) continue;
    T* row = &s.gates[b * G];
    T* cand = row + 2 * H;
    clip_then_activate(p.cfg, g, cand, H);
    for (int64_t j = 0; j < H; ++j) {
      T& h = s.h[b * H + j];
      h = (T(1) - row[j]) * cand[j] + row[j] * h;
    }
  }
}

// Gates i, o, f, c with optional peepholes; input_forget couples f to 1 - i.
template <class T>
void lstm_step(const RnnData<T>& p, int d, StepState<T>& s) {
  const int64_t H = p.hidden, G = 4 * H;
  gemm_nt<T>(p.batch, G, H, s.h.data(), H, p.r_dir(d), H, T(1), s.gates.data(), G);
  const RnnActivation& f = p.cfg.activation(d, 0);
  const RnnActivation& g = p.cfg.activation(d, 1);
  const RnnActivation& h_act = p.cfg.activation(d, 2);
  const T* peep = p.peep ? p.peep + d * 3 * H : nullptr;
  std::vector<T>& cell_out = s.scratch;  // h(C_t)
  cell_out.resize(static_cast<size_t>(H));
  for (int64_t b = 0; b < p.batch; ++b) {
    if (!s.active[b]) continue;
    T* gi = &s.gates[b * G];
    T* go = gi + H;
    T* gf = gi + 2 * H;
    T* gc = gi + 3 * H;
    T* c = &s.c[b * H];
    if (peep) {
      for (int64_t j = 0; j < H; ++j) {
        gi[j] += peep[j] * c[j];
        gf[j] += peep[2 * H + j] * c[j];
      }
    }
    clip_then_activate(p.cfg, f, gi, H);
    if (p.cfg.input_forget) {
      for (int64_t j = 0; j < H; ++j) gf[j] = T(1) - gi[j];
    } else {
      clip_then_activate(p.cfg, f, gf, H);
    }
    clip_then_activate(p.cfg, g, gc, H);
    for (int64_t j = 0; j < H; ++j) c[j] = gf[j] * c[j] + gi[j] * gc[j];
    if (peep) {
      for (int64_t j = 0; j < H; ++j) go[j] += peep[H + j] * c[j];
    }
    clip_then_activate(p.cfg, f, go, H);
    std::copy(c, c + H, cell_out.begin());
    activate(h_act, cell_out.data(), H);
    for (int64_t j = 0; j < H; ++j) s.h[b * H + j] = go[j] * cell_out[j];
  }
}

// Initial state of direction d: the given tensor, or zeros.
template <class T>
std::vector<T> initial_state(const RnnData<T>& p, const T* given, int d) {
  std::vector<T> st(static_cast<size_t>(p.batch * p.hidden), T(0));
  if (!given) return st;
  for (int64_t b = 0; b < p.batch; ++b) {
    std::copy_n(given + p.state_offset(d, b), p.hidden, &st[b * p.hidden]);
  }
  return st;
}

// Runs direction d over all time steps. A batch row whose sequence is shorter keeps its state
// after its last step and gets zeros in Y beyond it; reversed directions start at its last
// valid step.
template <class T>
void run_direction(const RnnData<T>& p, int d) {
  const int64_t H = p.hidden, GH = p.gates * H;
  const std::vector<T> xw = project_inputs(p, d);
  StepState<T> s;
  s.h = initial_state(p, p.init_h, d);
  s.c = initial_state(p, p.init_c, d);
  s.gates.assign(static_cast<size_t>(p.batch * GH), T(0));
  s.active.assign(static_cast<size_t>(p.batch), false);
  std::vector<int64_t> t_of(static_cast<size_t>(p.batch));
  for (int64_t step = 0; step < p.seq; ++step) {
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t len = p.length(b);
      s.active[b] = step < len;
      if (!s.active[b]) continue;
      t_of[b] = p.cfg.reversed(d) ? len - 1 - step : step;
      std::copy_n(&xw[p.x_row(t_of[b], b) * GH], GH, &s.gates[b * GH]);
    }
    if (p.cfg.kind == RnnKind::kRnn) rnn_step(p, d, s);
    if (p.cfg.kind == RnnKind::kGru) gru_step(p, d, s);
    if (p.cfg.kind == RnnKind::kLstm) lstm_step(p, d, s);
    if (!p.y) continue;
    for (int64_t b = 0; b < p.batch; ++b) {
      if (s.active[b]) std::copy_n(&s.h[b * H], H, p.y + p.y_offset(t_of[b], d, b));
    }
  }
  for (int64_t b = 0; b < p.batch; ++b) {
    if (p.y_h) std::copy_n(&s.h[b * H], H, p.y_h + p.state_offset(d, b));
    if (p.y_c) std::copy_n(&s.c[b * H], H, p.y_c + p.state_offset(d, b));
  }
}

// Reads the inputs as T (float16 is widened to float), runs every direction and stores the
// outputs in the op's dtype.
template <class T>
Status run_rnn(KernelContext& ctx, RnnKind kind) {
  RnnConfig cfg;
  KILN_RETURN_IF_ERROR(ops::parse_rnn_config(ctx.node(), kind, &cfg));
  const DType compute = dtype_of<T>();
  auto input = [&](int i) { return ctx.has_input(i) ? ctx.input(i).to(compute) : Tensor(); };
  auto ptr = [](const Tensor& t) { return t.defined() ? t.data_as<T>() : nullptr; };
  const Tensor x = input(0), w = input(1), r = input(2), bias = input(3), init_h = input(5);
  const Tensor init_c = kind == RnnKind::kLstm ? input(6) : Tensor();
  const Tensor peep = kind == RnnKind::kLstm ? input(7) : Tensor();
  const int seq_axis = cfg.layout == 0 ? 0 : 1;
  RnnData<T> p{.cfg = cfg,
               .seq = x.dim(seq_axis),
               .batch = x.dim(1 - seq_axis),
               .input = x.dim(2),
               .hidden = r.dim(2),
               .dirs = cfg.num_directions,
               .gates = ops::rnn_gate_count(kind),
               .x = ptr(x),
               .w = ptr(w),
               .r = ptr(r)};
  p.bias = ptr(bias);
  p.lens = ctx.has_input(4) ? ctx.input(4).data_as<int32_t>() : nullptr;
  p.init_h = ptr(init_h);
  p.init_c = ptr(init_c);
  p.peep = ptr(peep);
  // Outputs in T; converted to the op's dtype at the end when that differs.
  std::vector<Tensor> outs(static_cast<size_t>(ctx.num_outputs()));
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    if (ctx.has_output(i)) outs[i] = Tensor(compute, ctx.inferred(i).concrete());
  }
  auto out_ptr = [&](int i) -> T* {
    return i < ctx.num_outputs() && outs[i].defined() ? outs[i].data_as<T>() : nullptr;
  };
  p.y = out_ptr(0);
  p.y_h = out_ptr(1);
  p.y_c = out_ptr(2);
  for (int d = 0; d < p.dirs; ++d) run_direction(p, d);
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    if (ctx.has_output(i)) ctx.set_output(i, outs[i].to(ctx.inferred(i).dtype));
  }
  return Status::OK();
}

Kernel rnn_kernel(RnnKind kind) {
  return [kind](KernelContext& ctx) -> Status {
    if (ctx.input(0).dtype() == DType::kFloat64) return run_rnn<double>(ctx, kind);
    return run_rnn<float>(ctx, kind);  // float32, and float16 widened
  };
}

}  // namespace

void register_rnn_kernels(KernelRegistry& r) {
  r.add("RNN", rnn_kernel(RnnKind::kRnn));
  r.add("GRU", rnn_kernel(RnnKind::kGru));
  r.add("LSTM", rnn_kernel(RnnKind::kLstm));
}

}  // namespace kiln::cpu
