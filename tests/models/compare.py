#!/usr/bin/env python3
"""Compares kiln's outputs of a model test with ONNX Runtime's, then checks that kiln's outputs
make sense for the real input (the rendered text is read back, the face is found, ...).

  compare.py CASE_DIR KILN_DIR ORT_DIR [--rtol 1e-3] [--atol 1e-4] [--atol-of-range F]

CASE_DIR is models/testdata/<model> (its case.json names the model and the sanity data); the
model's name is the folder's name. Every ORT output <name>.npy must have a kiln twin with the same
shape and |kiln - ort| <= atol + rtol * |ort| everywhere (integers and bools: equal). Exits 1 on
any mismatch or failed sanity check.
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np


def compare_output(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> bool:
    if got.shape != want.shape:
        print(f"  {name}: FAIL shape {list(got.shape)}, ORT has {list(want.shape)}")
        return False
    if want.dtype.kind not in "fc" or got.dtype.kind not in "fc":
        bad = int(np.count_nonzero(got != want)) if got.dtype == want.dtype else got.size
        verdict = "ok" if bad == 0 else f"FAIL {bad} elements differ"
        print(f"  {name}: {list(want.shape)} {got.dtype} vs ORT {want.dtype}: {verdict}")
        return bad == 0
    a, b = got.astype(np.float64), want.astype(np.float64)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not np.array_equal(nan_a, nan_b):
        print(f"  {name}: FAIL NaN in {int(nan_a.sum())} kiln / {int(nan_b.sum())} ORT elements")
        return False
    a, b = np.where(nan_a, 0.0, a), np.where(nan_b, 0.0, b)
    with np.errstate(invalid="ignore"):  # inf - inf
        diff = np.where(a == b, 0.0, np.abs(a - b))
    bound = atol + rtol * np.abs(b)
    ratio = diff / bound  # <= 1 passes
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape) if ratio.size else ()
    max_abs = float(diff.max()) if diff.size else 0.0
    nonzero = np.abs(b) > 0
    max_rel = float((diff[nonzero] / np.abs(b[nonzero])).max()) if nonzero.any() else 0.0
    bad = int(np.count_nonzero(ratio > 1))
    verdict = "ok" if bad == 0 else f"FAIL {bad} of {a.size} elements out of tolerance"
    detail = ""
    if bad:
        detail = f" (worst at {list(map(int, worst))}: kiln {a[worst]:.7g}, ORT {b[worst]:.7g})"
    used = float(ratio.max()) if ratio.size else 0.0  # fraction of the tolerance used
    print(f"  {name}: {list(want.shape)} max_abs {max_abs:.3g} max_rel {max_rel:.3g} "
          f"tolerance used {used:.2f} "
          f"(ORT range {float(b.min()) if b.size else 0:.4g}..{float(b.max()) if b.size else 0:.4g})"
          f": {verdict}{detail}")
    return bad == 0


def fmt(values) -> str:
    return "[" + ", ".join(f"{float(v):.3f}" for v in values) + "]"


# --- sanity checks on kiln's outputs: each returns a list of failure messages ---

def check_classifier(outputs, sanity, models_dir):
    (logits,) = outputs.values()
    print(f"  sanity: top-1 class per image {logits.argmax(axis=1).tolist()} "
          "(random weights: the class means nothing)")
    if not np.isfinite(logits).all():
        return ["logits are not finite"]
    if np.ptp(logits) == 0:
        return ["all logits are equal"]
    return []


def check_ppocr_det(outputs, sanity, models_dir):
    (prob,) = outputs.values()
    prob = prob[0, 0]
    failures = []
    for x0, y0, x1, y1 in sanity["text_boxes"]:
        region = prob[y0:y1, x0:x1]
        covered = float((region > 0.3).mean())
        print(f"  sanity: text line box {[x0, y0, x1, y1]}: max prob {region.max():.3f}, "
              f"{covered:.0%} of it above 0.3")
        if region.max() < 0.9 or covered < 0.2:
            failures.append(f"text line at {[x0, y0, x1, y1]} not detected")
    for x0, y0, x1, y1 in sanity["blank_boxes"]:
        region = prob[y0:y1, x0:x1]
        print(f"  sanity: blank box {[x0, y0, x1, y1]}: max prob {region.max():.3f}")
        if region.max() > 0.3:
            failures.append(f"text found in the blank box {[x0, y0, x1, y1]}")
    return failures


def ctc_decode(probs: np.ndarray, alphabet) -> str:
    """Greedy CTC: best class per step, merge repeats, drop blanks (class 0)."""
    best = probs.argmax(axis=-1)
    out, prev = [], 0
    for k in best:
        if k != prev and k != 0:
            out.append(alphabet[k])
        prev = k
    return "".join(out)


def check_ppocr_rec(outputs, sanity, models_dir):
    (probs,) = outputs.values()
    keys = (models_dir / "ppocr_keys_v1.txt").read_text(encoding="utf-8").splitlines()
    alphabet = ["<blank>"] + keys + [" "]  # PP-OCR: blank first, space appended last
    if probs.shape[-1] != len(alphabet):
        return [f"{probs.shape[-1]} classes, the alphabet has {len(alphabet)}"]
    text = ctc_decode(probs[0], alphabet)
    print(f"  sanity: read {text!r}, rendered {sanity['text']!r}")
    return [] if text == sanity["text"] else ["the recognized text differs from the rendered one"]


def check_ppocr_cls(outputs, sanity, models_dir):
    (probs,) = outputs.values()
    got = probs.argmax(axis=1).tolist()
    print(f"  sanity: orientation classes {got} (0 = upright, 1 = 180 degrees), "
          f"expected {sanity['labels']}, confidences {fmt(probs.max(axis=1))}")
    return [] if got == sanity["labels"] else ["wrong text-line orientation"]


def check_blazeface(outputs, sanity, models_dir):
    # Score outputs are [1, anchors, 1] logits; the others are [1, anchors, 16] box regressions.
    logits = np.concatenate([v.ravel() for v in outputs.values() if v.shape[-1] == 1])
    with np.errstate(over="ignore"):
        score = float((1 / (1 + np.exp(-logits))).max())
    print(f"  sanity: best face score {score:.3f} on the face photo")
    return [] if score > 0.9 else ["no face found with score > 0.9"]


def check_silero_vad(outputs, sanity, models_dir):
    prob = outputs["output"].ravel()
    speech, silence = prob[sanity["speech_rows"]], prob[sanity["silence_rows"]]
    print(f"  sanity: speech probability {fmt(speech)} on speech, {fmt(silence)} on near silence")
    failures = []
    if not (speech > 0.5).all():
        failures.append("speech not detected")
    if not (silence < 0.2).all():
        failures.append("silence taken for speech")
    return failures


SANITY = {
    "resnet50": check_classifier,
    "mobilenetv2": check_classifier,
    "ppocr_det": check_ppocr_det,
    "ppocr_rec": check_ppocr_rec,
    "ppocr_cls": check_ppocr_cls,
    "blazeface": check_blazeface,
    "silero_vad": check_silero_vad,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("case_dir", type=Path)
    parser.add_argument("kiln_dir", type=Path)
    parser.add_argument("ort_dir", type=Path)
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--atol", type=float, default=1e-4)
    # Half-precision runs: an absolute tolerance that is this fraction of the output's range
    # (max |ORT|), added to --atol. fp16 keeps 11 significant bits (2^-11 relative per stored
    # value); over a network's ~50-100 roundings that compound like a random walk, errors of
    # about 1% of the activations' range are expected, and a real defect is far larger.
    parser.add_argument("--atol-of-range", type=float, default=0.0)
    args = parser.parse_args()

    model = args.case_dir.name
    case = json.loads((args.case_dir / "case.json").read_text())
    print(f"{model}: kiln vs ONNX Runtime (rtol {args.rtol:g}, atol {args.atol:g})")
    ok = True
    outputs = {}
    for want_path in sorted(args.ort_dir.glob("*.npy")):
        name = want_path.stem
        got_path = args.kiln_dir / want_path.name
        if not got_path.exists():
            print(f"  {name}: FAIL kiln wrote no {got_path}")
            ok = False
            continue
        got = np.load(got_path)
        outputs[name] = got
        want = np.load(want_path)
        atol = args.atol
        if args.atol_of_range and want.dtype.kind == "f" and want.size:
            atol += args.atol_of_range * float(np.nanmax(np.abs(want)))
        ok &= compare_output(name, got, want, args.rtol, atol)
    if not outputs:
        print("  FAIL: nothing to compare")
        return 1
    check = SANITY.get(model)
    if check and len(outputs) == len(list(args.ort_dir.glob("*.npy"))):
        failures = check(outputs, case.get("sanity", {}), args.case_dir.parents[1])
        for f in failures:
            print(f"  sanity: FAIL {f}")
        ok &= not failures
    print(f"{model}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
