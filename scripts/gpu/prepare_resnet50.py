#!/usr/bin/env python3
"""On the GPU machine: exports torchvision ResNet-50 (seeded random weights, as
scripts/models/export_torchvision.py does here), makes an input and ONNX Runtime's output, laid out
as a model test case (testdata/resnet50/{case.json,input.npy,ort/output.npy}).

  prepare_resnet50.py OUT_DIR
"""
import inspect
import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
import torchvision


def main() -> None:
    out = Path(sys.argv[1])
    case = out / "testdata" / "resnet50"
    (case / "ort").mkdir(parents=True, exist_ok=True)
    path = out / "resnet50.onnx"
    if not path.exists():
        torch.manual_seed(0)
        model = torchvision.models.resnet50(weights=None).eval()
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, torch.nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.1, 0.1)
                    m.running_var.uniform_(0.5, 1.5)
        extra = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
        torch.onnx.export(model, torch.randn(1, 3, 224, 224), str(path), opset_version=13,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, **extra)
    x = np.random.default_rng(0).standard_normal((2, 3, 224, 224), dtype=np.float32)
    np.save(case / "input.npy", x)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    np.save(case / "ort" / "output.npy", sess.run(None, {"input": x})[0])
    (case / "case.json").write_text(json.dumps({"model": "resnet50.onnx", "inputs": {"input": "input.npy"},
                                                "sanity": {}}))
    print(f"resnet50 ready in {out}")


if __name__ == "__main__":
    main()
