#!/usr/bin/env python3
"""PyTorch peers for the ResNet-50 benchmark, run on the GPU machine in the same run as kiln.

  torch_resnet50.py --batch 1,256 --modes eager32,eager16cl,graph16cl,compile16cl --json OUT.json

Modes (torchvision ResNet-50, random weights, 224x224):
  eager32      eager FP32, TF32 off            eager32tf    eager FP32, TF32 on
  eager16cl    eager FP16 channels_last        graph16cl    the same captured in a CUDA graph
  compile16cl  torch.compile(mode="reduce-overhead") FP16 channels_last
Each point: warm-up, then >= 100 timed runs (or 5 s), each timed with CUDA events; prints and
writes median/p90/p99 latency (ms), throughput (img/s) and peak device memory (GiB).
"""
import argparse
import json
import time

import torch
import torchvision


def make_model(mode: str):
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).eval().cuda()
    half = "16" in mode
    if half:
        model = model.half()
    if "cl" in mode:
        model = model.to(memory_format=torch.channels_last)
    return model, (torch.float16 if half else torch.float32)


def runner(mode: str, model, x):
    if mode.startswith("eager"):
        return lambda: model(x)
    if mode.startswith("graph"):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            model(x)
        return g.replay
    if mode.startswith("compile"):
        compiled = torch.compile(model, mode="reduce-overhead")
        return lambda: compiled(x)
    raise ValueError(mode)


def measure(fn, min_runs=100, min_seconds=5.0, max_runs=2000):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    start = time.monotonic()
    while len(times) < max_runs and (len(times) < min_runs or time.monotonic() - start < min_seconds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]
    return {"runs": len(times), "p50_ms": pick(0.5), "p90_ms": pick(0.9), "p99_ms": pick(0.99)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", default="1,256")
    ap.add_argument("--modes", default="eager32,eager16cl,graph16cl,compile16cl")
    ap.add_argument("--min-seconds", type=float, default=5.0)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    with torch.inference_mode():
        for mode in args.modes.split(","):
            torch.backends.cuda.matmul.allow_tf32 = mode == "eager32tf"
            torch.backends.cudnn.allow_tf32 = mode == "eager32tf"
            model, dtype = make_model(mode)
            for batch in [int(b) for b in args.batch.split(",")]:
                x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype)
                if "cl" in mode:
                    x = x.to(memory_format=torch.channels_last)
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats()
                r = measure(runner(mode, model, x), min_seconds=args.min_seconds)
                r.update(engine="pytorch " + torch.__version__, mode=mode, batch=batch,
                         items_per_s=batch * 1000.0 / r["p50_ms"],
                         peak_gib=torch.cuda.max_memory_allocated() / 2**30)
                rows.append(r)
                print(f"pytorch {mode:12s} bs {batch:4d}: p50 {r['p50_ms']:8.3f} ms  p99 {r['p99_ms']:8.3f} ms  "
                      f"{r['items_per_s']:10.0f} img/s  peak {r['peak_gib']:.2f} GiB", flush=True)
            del model
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
