#!/usr/bin/env python3
"""One markdown table from `kiln bench --json` files and peer runtimes' JSON (PyTorch's
bench/torch_resnet50.py, ONNX Runtime's bench/ort_bench.py), measured in the same run.

  side_by_side.py --kiln A.json [B.json ...] --peers torch.json [ort.json ...] [--batches 1,256]
                  [--build build.json] [--title TEXT]

Rows: one per engine/mode (kiln: precision and the run's --label; peers: engine and mode), grouped
by model when there are several. Columns for the small batch S and the large batch L of
--batches: bsS p50 ms, bsS p99 ms, bsL p50 ms, bsL img/s, peak GiB. img/s is batch * 1000 / p50
for every engine alike (kiln's own JSON also has batch * runs / total time). Peak memory is the
engine's own allocations at their peak over the row's points (kiln: peak_device_bytes;
PyTorch: max_memory_allocated), "—" where not measured (CPU runtimes).
Peer JSON: a list of {"engine", "mode", "batch", "p50_ms", "p99_ms", ["peak_gib"], ["model"],
["error"]}.
"""
import argparse
import json
import sys
from pathlib import Path


def kiln_rows(path: Path):
    d = json.loads(path.read_text())
    model = Path(d.get("model", "")).stem
    label = d.get("label", "")
    for p in d["points"]:
        name = f"kiln {p['precision']}" + (f" ({label})" if label else "")
        yield {"model": model, "row": name, "batch": p["batch"], "p50_ms": p["p50_ms"], "p99_ms": p["p99_ms"],
               "peak_gib": p["peak_device_bytes"] / 2**30 if p["peak_device_bytes"] else None,
               "error": p.get("error", ""), "device": d.get("device", ""), "date": d.get("date", "")}


def peer_rows(path: Path):
    for p in json.loads(path.read_text()):
        yield {"model": p.get("model", ""), "row": f"{p['engine']} {p['mode']}", "batch": p["batch"],
               "p50_ms": p.get("p50_ms", 0), "p99_ms": p.get("p99_ms", 0), "peak_gib": p.get("peak_gib"),
               "error": p.get("error", "")}


def fmt_ms(v):
    return f"{v:.3f}" if v else "—"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", nargs="*", default=[])
    ap.add_argument("--peers", nargs="*", default=[])
    ap.add_argument("--batches", default="1,256")
    ap.add_argument("--build", help="JSON with plan build times: {\"cold_s\", \"warm_s\", \"precision\"}")
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    small, large = (int(b) for b in args.batches.split(","))
    points = []
    for files, rows in ((args.kiln, kiln_rows), (args.peers, peer_rows)):
        for f in files:
            try:
                points += list(rows(Path(f)))
            except (OSError, ValueError, KeyError) as e:  # a step that failed before writing its JSON
                print(f"side_by_side.py: skipping {f}: {e}", file=sys.stderr)

    # (model, row) -> {batch: point}, in first-seen order.
    table = {}
    for p in points:
        table.setdefault((p["model"], p["row"]), {})[p["batch"]] = p
    models = {m for m, _ in table}
    if len(models) > 1:  # group by model, engines in first-seen order within each
        order = {m: i for i, m in enumerate(dict.fromkeys(m for m, _ in table))}
        table = dict(sorted(table.items(), key=lambda kv: order[kv[0][0]]))
    device = next((p["device"] for p in points if p.get("device")), "")
    date = next((p["date"] for p in points if p.get("date")), "")
    if args.title:
        print(f"### {args.title}\n")
    if device or date:
        print(f"{device} {date}".strip() + "\n")
    head = ["model"] if len(models) > 1 else []
    head += ["engine, mode", f"bs {small} p50 ms", f"bs {small} p99 ms", f"bs {large} p50 ms", f"bs {large} img/s",
             "peak GiB"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for (model, row), by_batch in table.items():
        s, l = by_batch.get(small, {}), by_batch.get(large, {})
        errors = [p["error"] for p in (s, l) if p.get("error")]
        peaks = [p["peak_gib"] for p in by_batch.values() if p.get("peak_gib")]
        large_ips = large * 1000.0 / l["p50_ms"] if l.get("p50_ms") else 0
        cells = [model] if len(models) > 1 else []
        cells += [row, fmt_ms(s.get("p50_ms")), fmt_ms(s.get("p99_ms")), fmt_ms(l.get("p50_ms")),
                  (f"{large_ips:,.0f}" if large_ips >= 100 else f"{large_ips:.1f}") if large_ips else "—", f"{max(peaks):.2f}" if peaks else "—"]
        if errors:
            cells[-1] += " (error: " + errors[0].replace("|", "/")[:80] + ")"
        print("| " + " | ".join(cells) + " |")
    if args.build and Path(args.build).is_file():
        b = json.loads(Path(args.build).read_text())
        secs = lambda k: f"{b[k]:.1f} s" if b.get(k) is not None else "failed"
        print(f"\nkiln build ({b.get('precision', '')}, --profile {b.get('profile', '')}): cold (fresh timing "
              f"cache) {secs('cold_s')}, warm (timing cache filled) {secs('warm_s')}")
    print("\nimg/s = batch x 1000 / p50 for every engine. kiln's timer is in its JSON (gpu-events: device "
          "events around the network, inputs resident); PyTorch: CUDA events around the forward; ONNX Runtime: "
          "host clock around run().")

if __name__ == "__main__":
    main()
