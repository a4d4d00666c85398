// Attributes of the recurrent ops (RNN, GRU, LSTM), parsed once so shape inference and every
// backend agree on directions, activations and layouts.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

enum class RnnKind { kRnn, kGru, kLstm };

// Gates stacked in W/R: RNN 1 (i), GRU 3 (z, r, h), LSTM 4 (i, o, f, c).
int rnn_gate_count(RnnKind k);
// Activation functions per direction: RNN 1 (f), GRU 2 (f, g), LSTM 3 (f, g, h).
int rnn_activations_per_direction(RnnKind k);

// One activation function from the `activations` attribute with its alpha/beta.
struct RnnActivation {
  enum class Fn { kSigmoid, kTanh, kRelu, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu,
                  kSoftsign, kSoftplus };
  Fn fn = Fn::kSigmoid;
  float alpha = 0;
  float beta = 0;
};

struct RnnConfig {
  RnnKind kind = RnnKind::kRnn;
  enum class Direction { kForward, kReverse, kBidirectional };
  Direction direction = Direction::kForward;
  int num_directions = 1;
  int64_t hidden_size = -1;  // -1: not given (then taken from R's shape)
  bool has_clip = false;
  float clip = 0;
  bool input_forget = false;         // LSTM: couple the forget gate to the input gate
  bool linear_before_reset = false;  // GRU: apply the reset gate after the recurrent product
  int layout = 0;                    // 0: [seq, batch, ...]; 1: [batch, seq, ...] (opset 14)
  // rnn_activations_per_direction(kind) entries per direction, forward direction first.
  std::vector<RnnActivation> activations;

  // True when direction `d` (0 or 1) runs from the last time step to the first.
  bool reversed(int d) const { return direction == Direction::kReverse || d == 1; }
  const RnnActivation& activation(int d, int i) const {
    return activations[static_cast<size_t>(d * rnn_activations_per_direction(kind) + i)];
  }
};

Status parse_rnn_config(const ir::Node& node, RnnKind kind, RnnConfig* out);

}  // namespace kiln::ops
