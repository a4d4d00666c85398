#!/usr/bin/env python3
"""`kiln bench MODEL --backend cpu --batch 1,2 --runs 3 --min-seconds 0 --json X --plot Y.svg`:
exit 0, two points in the JSON with positive times and the documented keys, a well-formed SVG
with one line per precision in each panel. Also: a plan is benched at its own precision, a failed
point gives its error in the JSON and a non-zero exit, and `kiln profile` on the CPU is a
one-line error."""
import argparse
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

POINT_KEYS = ["precision", "batch", "runs", "p50_ms", "p90_ms", "p99_ms", "mean_ms", "min_ms", "items_per_s",
              "peak_device_bytes", "process_device_bytes", "arena_bytes", "weight_bytes", "workspace_bytes",
              "timer", "graph_captured", "end_to_end_median_ms", "error"]


def check(cond: bool, what: str) -> None:
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)


def kiln(args, *cmd):
    r = subprocess.run([args.kiln, *cmd], capture_output=True, text=True, timeout=240)
    print(f"$ kiln {' '.join(cmd)}  -> {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    js, svg = work / "bench.json", work / "bench.svg"
    for f in (js, svg):
        f.unlink(missing_ok=True)

    r = kiln(args, "bench", args.model, "--backend", "cpu", "--batch", "1,2", "--runs", "3", "--min-seconds", "0",
             "--warmup", "1", "--json", str(js), "--plot", str(svg), "--label", "test")
    check(r.returncode == 0, "kiln bench exits 0")
    d = json.loads(js.read_text())
    check(list(d)[:5] == ["model", "label", "backend", "date", "points"], f"top-level keys {list(d)}")
    check(d["backend"] == "cpu" and d["label"] == "test", "backend and label")
    pts = d["points"]
    check(len(pts) == 2, f"2 points, got {len(pts)}")
    check([p["batch"] for p in pts] == [1, 2], "batches 1, 2")
    for p in pts:
        check(list(p) == POINT_KEYS, f"point keys {list(p)}")
        check(p["error"] == "" and p["runs"] >= 3, f"point ran: {p}")
        check(0 < p["min_ms"] <= p["p50_ms"] <= p["p90_ms"] <= p["p99_ms"], f"positive ordered times: {p}")
        check(p["items_per_s"] > 0 and p["timer"] == "host-clock", f"throughput and timer: {p}")
    root = ET.parse(svg).getroot()
    check(root.tag.endswith("svg"), "SVG root")
    lines = [e for e in root.iter() if e.tag.endswith("polyline")]
    check(len(lines) == 2, f"one polyline per panel for one precision, got {len(lines)}")

    # A point that fails (here: a --shape naming no input) has its error in its row and in the
    # JSON, and the exit status is non-zero.
    r = kiln(args, "bench", args.model, "--backend", "cpu", "--batch", "1", "--runs", "1", "--min-seconds", "0",
             "--warmup", "0", "--shape", "nosuch=1,2", "--json", str(js))
    pts = json.loads(js.read_text())["points"]
    check(r.returncode != 0 and "nosuch" in r.stdout, "a failed point: non-zero exit, error in its row")
    check(len(pts) == 1 and "nosuch" in pts[0]["error"] and pts[0]["runs"] == 0, f"failed point in JSON: {pts}")

    # A plan carries its precision: benched as such, and --precision may only repeat it.
    plan = work / "model.plan"
    r = kiln(args, "build", args.model, "-o", str(plan), "--backend", "cpu")
    check(r.returncode == 0, "kiln build --backend cpu")
    r = kiln(args, "bench", str(plan), "--backend", "cpu", "--precision", "fp16", "--runs", "1", "--warmup", "0")
    check(r.returncode != 0 and "fp32 plan" in r.stderr, "--precision other than the plan's is an error")
    r = kiln(args, "bench", str(plan), "--backend", "cpu", "--runs", "1", "--warmup", "0", "--min-seconds", "0",
             "--json", str(js))
    pts = json.loads(js.read_text())["points"]
    check(r.returncode == 0 and [p["precision"] for p in pts] == ["fp32"], "a plan benches at its precision")

    r = kiln(args, "profile", args.model, "--backend", "cpu")
    check(r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1, "profile on the CPU: one-line error")
    print("OK")


if __name__ == "__main__":
    main()
