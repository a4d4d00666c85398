#!/usr/bin/env python3
"""Exports torchvision ResNet-50 and MobileNetV2 with seeded random weights to ONNX.

Their weights are not trained (no hub downloads here): they are kiln's performance workloads and
a numerical check against ONNX Runtime. Run with Debian's /usr/bin/python3 (python3-torchvision).
Usage: export_torchvision.py OUT_DIR
"""
import sys
from pathlib import Path

import torch
import torchvision

OPSET = 13


def export(name: str, ctor, out_dir: Path) -> None:
    path = out_dir / f"{name}.onnx"
    if path.exists():
        return
    torch.manual_seed(0)
    model = ctor(weights=None).eval()
    # Random init leaves BatchNorm running stats at mean 0 / var 1; give them seeded values too so
    # the folded affine transforms are not trivial.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    dummy = torch.randn(1, 3, 224, 224)
    tmp = path.with_suffix(".onnx.tmp")
    torch.onnx.export(model, dummy, str(tmp), opset_version=OPSET, input_names=["input"],
                      output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    tmp.rename(path)
    print(f"exported {path} (torch {torch.__version__}, opset {OPSET})")


def main() -> None:
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    export("resnet50", torchvision.models.resnet50, out_dir)
    export("mobilenetv2", torchvision.models.mobilenet_v2, out_dir)


if __name__ == "__main__":
    main()
