#!/usr/bin/env python3
"""One real-model test: runs MODEL with kiln and with ONNX Runtime on the same inputs and compares.

  run_model_test.py MODEL --kiln BIN --models-dir DIR --work-dir DIR [--node NODE] [--opt-level N] [--plan]

With --plan, kiln first builds a CPU plan of the model (`kiln build --backend cpu`), describes it
(`kiln plan-info`) and runs the plan instead of the model.

Inputs and the model come from DIR (models/, filled by scripts/fetch_models.sh). ORT's outputs
are cached in DIR/testdata/MODEL/ort/ and recomputed when the model or an input changes.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def fail(message: str) -> None:
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


def run(cmd, what: str) -> None:
    start = time.monotonic()
    result = subprocess.run([str(c) for c in cmd])
    if result.returncode != 0:
        fail(f"{what} exited with {result.returncode}: {' '.join(map(str, cmd))}")
    print(f"{what}: {time.monotonic() - start:.1f} s", flush=True)


def fingerprint(files) -> dict:
    """What ORT's cached outputs were computed from."""
    return {str(f.name): [f.stat().st_size, f.stat().st_mtime_ns] for f in files}


def ort_outputs(args, model: Path, feeds, case_dir: Path) -> Path:
    ort_dir = case_dir / "ort"
    stamp = ort_dir / "stamp.json"
    sources = fingerprint([model, HERE / "ort_run.js", *(case_dir / f for f in feeds.values())])
    if stamp.exists() and json.loads(stamp.read_text()) == sources:
        print(f"ONNX Runtime outputs: cached in {ort_dir}")
        return ort_dir
    tmp = case_dir / "ort.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    run([args.node, HERE / "ort_run.js", model, tmp,
         *(f"{name}={case_dir / f}" for name, f in feeds.items())], "ONNX Runtime")
    (tmp / "stamp.json").write_text(json.dumps(sources))
    shutil.rmtree(ort_dir, ignore_errors=True)
    os.replace(tmp, ort_dir)
    return ort_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--kiln", required=True, type=Path)
    parser.add_argument("--models-dir", required=True, type=Path)
    parser.add_argument("--work-dir", required=True, type=Path)
    parser.add_argument("--node", default="node")
    parser.add_argument("--opt-level", type=int, default=2, help="kiln's graph optimization level")
    parser.add_argument("--plan", action="store_true", help="build a CPU plan and run that")
    args = parser.parse_args()

    case_dir = args.models_dir / "testdata" / args.model
    model = args.models_dir / f"{args.model}.onnx"
    for needed in (model, case_dir / "case.json"):
        if not needed.exists():
            fail(f"{needed} is missing: run scripts/fetch_models.sh first (it downloads the "
                 "models, installs ONNX Runtime and makes the inputs)")
    feeds = json.loads((case_dir / "case.json").read_text())["inputs"]

    kiln_dir = args.work_dir / "kiln"
    shutil.rmtree(kiln_dir, ignore_errors=True)
    kiln_dir.mkdir(parents=True)
    cmd = [args.kiln, "run", model, f"-O{args.opt_level}"]
    if args.plan:
        plan = args.work_dir / f"{args.model}.plan"
        run([args.kiln, "build", model, "-o", plan, "--backend", "cpu", f"-O{args.opt_level}"], "kiln build")
        run([args.kiln, "plan-info", plan], "kiln plan-info")
        cmd = [args.kiln, "run", plan]
    for name, f in feeds.items():
        cmd += ["--input", f"{name}={case_dir / f}"]
    run(cmd + ["--output-dir", kiln_dir], f"kiln run -O{args.opt_level}")

    ort_dir = ort_outputs(args, model, feeds, case_dir)
    result = subprocess.run([sys.executable, HERE / "compare.py", case_dir, kiln_dir, ort_dir])
    sys.exit(result.returncode)


if __name__ == "__main__":
    main()
