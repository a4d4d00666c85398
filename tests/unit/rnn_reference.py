#!/usr/bin/env python3
"""Prints the expected values embedded in rnn_test.cpp.

An independent numpy transcription of the ONNX RNN/GRU/LSTM equations (per direction, per
batch row, so sequence_lens is handled the obvious way). Run: python3 tests/unit/rnn_reference.py
"""
import numpy as np

ACT = {
    "sigmoid": lambda x, a, b: 1 / (1 + np.exp(-x)),
    "tanh": lambda x, a, b: np.tanh(x),
    "relu": lambda x, a, b: np.maximum(x, 0),
    "hardsigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "leakyrelu": lambda x, a, b: np.where(x >= 0, x, a * x),
}


def vals(shape, seed):
    rs = np.random.RandomState(seed)
    return np.round(rs.uniform(-1, 1, size=shape), 2)


def run(kind, X, W, R, B=None, lens=None, h0=None, c0=None, P=None, direction="forward", layout=0,
        acts=None, clip=None, input_forget=0, lbr=0):
    if layout == 1:
        X = X.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    S, Bt, _ = X.shape
    D = W.shape[0]
    G = {"rnn": 1, "gru": 3, "lstm": 4}[kind]
    H = R.shape[2]
    lens = [S] * Bt if lens is None else lens
    Y = np.zeros((S, D, Bt, H))
    Yh = np.zeros((D, Bt, H))
    Yc = np.zeros((D, Bt, H))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    for d in range(D):
        f, g, hf = [(lambda x, n=n, a=a, b=b: ACT[n](x, a, b)) for (n, a, b) in acts[d]] + [None] * (3 - len(acts[d]))
        Wd, Rd = W[d], R[d]
        Bd = np.zeros(2 * G * H) if B is None else B[d]
        Wb, Rb = Bd[:G * H], Bd[G * H:]
        for b in range(Bt):
            h = np.zeros(H) if h0 is None else h0[d, b].copy()
            c = np.zeros(H) if c0 is None else c0[d, b].copy()
            rev = direction == "reverse" or d == 1
            steps = range(lens[b] - 1, -1, -1) if rev else range(lens[b])
            for t in steps:
                x = X[t, b]
                if kind == "rnn":
                    h = f(cl(Wd @ x + Rd @ h + Wb + Rb))
                elif kind == "gru":
                    xw = Wd @ x + Wb
                    z = f(cl(xw[:H] + Rd[:H] @ h + Rb[:H]))
                    r = f(cl(xw[H:2 * H] + Rd[H:2 * H] @ h + Rb[H:2 * H]))
                    if lbr:
                        hh = g(cl(xw[2 * H:] + r * (Rd[2 * H:] @ h + Rb[2 * H:])))
                    else:
                        hh = g(cl(xw[2 * H:] + Rd[2 * H:] @ (r * h) + Rb[2 * H:]))
                    h = (1 - z) * hh + z * h
                else:
                    p = np.zeros(3 * H) if P is None else P[d]
                    gts = Wd @ x + Rd @ h + Wb + Rb
                    i = f(cl(gts[:H] + p[:H] * c))
                    fg = 1 - i if input_forget else f(cl(gts[2 * H:3 * H] + p[2 * H:] * c))
                    cc = g(cl(gts[3 * H:]))
                    c = fg * c + i * cc
                    o = f(cl(gts[H:2 * H] + p[H:2 * H] * c))
                    h = o * hf(c)
                Y[t, d, b] = h
            Yh[d, b], Yc[d, b] = h, c
    if layout == 1:
        Y = Y.transpose(2, 0, 1, 3)
        Yh, Yc = Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    return Y, Yh, Yc


def literal(v):
    s = f"{v:.7g}"
    return (s if "." in s or "e" in s else s + ".0") + "f"


def show(name, a):
    print(f"  const std::vector<float> {name} = {{" +
          ", ".join(literal(v) for v in np.asarray(a, dtype=np.float32).ravel()) + "};")


def show_all(**arrays):
    for name, a in arrays.items():
        show(name, a)


SIG_TANH3 = [("sigmoid", 0, 0), ("tanh", 0, 0), ("tanh", 0, 0)]

# Case 1: bidirectional LSTM, S=3 B=2 I=2 H=2, all optional inputs, sequence_lens [3, 2].
X, W, R = vals((3, 2, 2), 1), vals((2, 8, 2), 2), vals((2, 8, 2), 3)
B, h0, c0, P = vals((2, 16), 4), vals((2, 2, 2), 5), vals((2, 2, 2), 6), vals((2, 6), 7)
Y, Yh, Yc = run("lstm", X, W, R, B, [3, 2], h0, c0, P, "bidirectional", acts=[SIG_TANH3, SIG_TANH3])
print("// case 1: LSTM bidirectional")
show_all(x=X, w=W, r=R, b=B, h0=h0, c0=c0, p=P, y=Y, y_h=Yh, y_c=Yc)

# Case 2: reverse LSTM, layout 1, clip 0.5, input_forget, HardSigmoid/Tanh/Relu.
X, W, R = vals((2, 3, 2), 11), vals((1, 8, 2), 12), vals((1, 8, 2), 13)
Y, Yh, Yc = run("lstm", X, W, R, direction="reverse", layout=1, clip=0.5, input_forget=1,
                acts=[[("hardsigmoid", 0.3, 0.4), ("tanh", 0, 0), ("relu", 0, 0)]])
print("// case 2: LSTM reverse layout 1")
show_all(x=X, w=W, r=R, y=Y, y_h=Yh, y_c=Yc)

# Case 3: bidirectional GRU with linear_before_reset and sequence_lens [1, 3].
X, W, R, B = vals((3, 2, 2), 21), vals((2, 6, 2), 22), vals((2, 6, 2), 23), vals((2, 12), 24)
GRU_ACTS = [("sigmoid", 0, 0), ("tanh", 0, 0)]
Y, Yh, _ = run("gru", X, W, R, B, [1, 3], direction="bidirectional", acts=[GRU_ACTS, GRU_ACTS], lbr=1)
print("// case 3: GRU bidirectional linear_before_reset")
show_all(x=X, w=W, r=R, b=B, y=Y, y_h=Yh)

# Case 4: forward GRU, layout 1, reset before the product, with bias and initial_h.
X, W, R, B, h0 = vals((2, 3, 2), 31), vals((1, 6, 2), 32), vals((1, 6, 2), 33), vals((1, 12), 34), vals((2, 1, 2), 35)
Y, Yh, _ = run("gru", X, W, R, B, h0=h0, layout=1, acts=[GRU_ACTS])
print("// case 4: GRU forward layout 1")
show_all(x=X, w=W, r=R, b=B, h0=h0, y=Y, y_h=Yh)

# Case 5: reverse RNN with LeakyRelu(0.1) and sequence_lens [2, 3].
X, W, R, B = vals((3, 2, 2), 41), vals((1, 2, 2), 42), vals((1, 2, 2), 43), vals((1, 4), 44)
Y, Yh, _ = run("rnn", X, W, R, B, [2, 3], direction="reverse", acts=[[("leakyrelu", 0.1, 0)]])
print("// case 5: RNN reverse LeakyRelu")
show_all(x=X, w=W, r=R, b=B, y=Y, y_h=Yh)
