#!/usr/bin/env python3
"""ONNX Runtime (CPU execution provider) for context beside kiln on the GPU machine, where it is
the only other runtime for models like PP-OCR. Random float inputs of the given shapes.

  ort_bench.py --model ppocr_det.onnx --shape x=1,3,640,640 --batch 1,16 [--threads 16]
               [--min-runs 20] [--min-seconds 3] [--json OUT.json]

Dim 0 of every input becomes each --batch value in turn. Each point: 3 warm-up runs, then at
least --min-runs timed runs and --min-seconds, each timed with the host clock around run();
median/p90/p99 by nearest rank (as kiln bench). JSON: a list of {"engine", "mode", "model",
"batch", "runs", "p50_ms", "p90_ms", "p99_ms", "items_per_s", "error"} (side_by_side.py reads it).
"""
import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort


def nearest_rank(sorted_ms, q):
    return sorted_ms[max(0, math.ceil(q * len(sorted_ms)) - 1)]


def parse_shapes(specs):
    shapes = {}
    for spec in specs:
        name, dims = spec.split("=", 1)
        shapes[name] = [int(d) for d in dims.split(",")]
    return shapes


def measure(sess, feeds, min_runs, min_seconds):
    for _ in range(3):
        sess.run(None, feeds)
    times = []
    start = time.monotonic()
    while len(times) < min_runs or time.monotonic() - start < min_seconds:
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1000.0)
    return sorted(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--shape", action="append", default=[], help="NAME=d0,d1,... (d0 is replaced by the batch)")
    ap.add_argument("--batch", default="1")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--min-runs", type=int, default=20)
    ap.add_argument("--min-seconds", type=float, default=3.0)
    ap.add_argument("--json")
    args = ap.parse_args()

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(args.model, opts, providers=["CPUExecutionProvider"])
    shapes = parse_shapes(args.shape)
    for i in sess.get_inputs():  # static inputs need no --shape
        shapes.setdefault(i.name, [d if isinstance(d, int) else 1 for d in i.shape])
    rng = np.random.default_rng(0)
    model = Path(args.model).stem
    rows = []
    for batch in [int(b) for b in args.batch.split(",")]:
        row = {"engine": f"onnxruntime {ort.__version__} cpu", "mode": f"{args.threads} threads", "model": model,
               "batch": batch, "runs": 0, "p50_ms": 0, "p90_ms": 0, "p99_ms": 0, "items_per_s": 0, "error": ""}
        try:
            feeds = {name: rng.uniform(-1, 1, [batch] + dims[1:]).astype(np.float32) for name, dims in shapes.items()}
            t = measure(sess, feeds, args.min_runs, args.min_seconds)
            row.update(runs=len(t), p50_ms=nearest_rank(t, 0.5), p90_ms=nearest_rank(t, 0.9),
                       p99_ms=nearest_rank(t, 0.99))
            row["items_per_s"] = batch * 1000.0 / row["p50_ms"]
        except Exception as e:  # one failed point is reported in its row; the others still run
            row["error"] = str(e).splitlines()[0]
        rows.append(row)
        print(f"onnxruntime {model} bs {batch:3d}: p50 {row['p50_ms']:9.3f} ms  p99 {row['p99_ms']:9.3f} ms  "
              f"{row['items_per_s']:8.1f} img/s {row['error']}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
