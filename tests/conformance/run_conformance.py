#!/usr/bin/env python3
"""Runs the ONNX operator conformance suite through `kiln check` and judges it.

Passes when at least --min-pass of the tests named in required.txt pass and no test anywhere
in the suite crashes or hangs (the others may fail or be skipped with a reason)."""
import argparse
import pathlib
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--suite", required=True, help="folder with onnx-node/ and required.txt")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--min-pass", type=float, default=0.98)
    ap.add_argument("--log", help="where to write kiln check's full output")
    ap.add_argument("--opt-level", type=int, default=2, help="kiln's graph optimization level")
    ap.add_argument("--precision", default="fp32", help="GPU precision (fp16/bf16 runs need wider --rtol/--atol)")
    ap.add_argument("--rtol", type=float, help="relative tolerance passed to kiln check")
    ap.add_argument("--atol", type=float, help="absolute tolerance passed to kiln check")
    args = ap.parse_args()

    suite = pathlib.Path(args.suite)
    tests_dir = suite / "onnx-node"
    if not tests_dir.is_dir():
        print(f"conformance suite not found at {tests_dir}", file=sys.stderr)
        return 1
    required = set((suite / "required.txt").read_text().split())
    cmd = [args.kiln, "check", "--backend", args.backend, f"-O{args.opt_level}", "--precision", args.precision]
    if args.rtol is not None:
        cmd += ["--rtol", str(args.rtol)]
    if args.atol is not None:
        cmd += ["--atol", str(args.atol)]
    proc = subprocess.run(cmd + [str(tests_dir)], capture_output=True, text=True)
    out = proc.stdout
    if args.log:
        pathlib.Path(args.log).write_text(out + proc.stderr)
    results = {}
    for line in out.splitlines():
        for verdict in ("PASS", "FAIL", "SKIP"):
            if line.startswith(verdict + " "):
                name = line[5:].split(":", 1)[0]
                results[name] = (verdict, line)
    broken = [l for v, l in results.values() if v == "FAIL" and ("crashed" in l or "timed out" in l)]
    req_pass = sum(1 for n in required if results.get(n, ("MISSING",))[0] == "PASS")
    misses = [results[n][1] if n in results else f"MISSING {n}" for n in sorted(required)
              if results.get(n, ("MISSING",))[0] != "PASS"]
    total = {v: sum(1 for r in results.values() if r[0] == v) for v in ("PASS", "FAIL", "SKIP")}
    print(f"whole suite: {total['PASS']} passed, {total['FAIL']} failed, {total['SKIP']} skipped "
          f"of {len(results)} (kiln check exit {proc.returncode})")
    print(f"required: {req_pass}/{len(required)} pass ({100.0 * req_pass / len(required):.1f}%, "
          f"need {100 * args.min_pass:.0f}%)")
    for m in misses:
        print("  miss: " + m)
    for b in broken:
        print("  CRASH/HANG: " + b)
    if proc.returncode not in (0, 1) or not out.strip().splitlines()[-1:] or broken:
        print("kiln check itself failed or a test crashed", file=sys.stderr)
        return 1
    return 0 if req_pass >= args.min_pass * len(required) else 1


if __name__ == "__main__":
    sys.exit(main())
