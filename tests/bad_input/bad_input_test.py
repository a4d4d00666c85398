#!/usr/bin/env python3
"""Bad-input tests for the kiln CLI: every case must fail cleanly.

Each case builds its bad files (broken models, broken tensors) under WORK/<case>/, runs
kiln, and checks that kiln exits with a non-zero status that is not a signal (< 128), and
that stderr is exactly one line, `kiln: error: ...`, containing the expected words.
A few `ok_*` cases check the good path the bad ones are measured against: exit 0, the
expected words on stdout, and the files `kiln run --output-dir` writes.

  bad_input_test.py --kiln KILN --work DIR --shared SHARED_DIR --case NAME
  bad_input_test.py --list          # case names, one per line (CMake reads them)
"""
import argparse
import os
import random
import subprocess
import sys

TIMEOUT_S = 60
# A real model from the ONNX conformance suite, to cut short.
CONFORMANCE_MODEL = "conformance/onnx-node/test_basic_conv_with_padding/model.onnx"


# ---------------------------------------------------------------- files the cases use

def write_model(path, text):
    """Writes an ONNX model given in ONNX's text syntax."""
    import onnx
    import onnx.parser
    model = onnx.parser.parse_model(text)
    onnx.save(model, path)
    return path


def add_model(work):
    """a + b, both float32[2,3]."""
    return write_model(os.path.join(work, "add.onnx"), """
        <ir_version: 8, opset_import: ["" : 13]>
        add_graph (float[2,3] a, float[2,3] b) => (float[2,3] c) {
            c = Add(a, b)
        }""")


def npy(work, name, array):
    import numpy as np
    path = os.path.join(work, name)
    np.save(path, array)
    return path


def float_input(work, name="a.npy", shape=(2, 3), dtype="float32"):
    import numpy as np
    return npy(work, name, np.arange(np.prod(shape), dtype=dtype).reshape(shape))


def random_bytes(path, n, seed):
    rng = random.Random(seed)
    with open(path, "wb") as f:
        f.write(bytes(rng.randrange(256) for _ in range(n)))
    return path


# ---------------------------------------------------------------- the cases
# Each returns (kiln arguments, words stderr must contain).

def case_missing_model(work, shared):
    path = os.path.join(work, "no_such_model.onnx")
    return ["run", path, "--random-inputs"], ["no_such_model.onnx", "does not exist"]


def case_empty_model(work, shared):
    path = os.path.join(work, "empty.onnx")
    open(path, "wb").close()
    return ["run", path, "--random-inputs"], ["empty.onnx", "empty"]


def case_truncated_model(work, shared):
    with open(os.path.join(shared, CONFORMANCE_MODEL), "rb") as f:
        data = f.read()
    path = os.path.join(work, "truncated.onnx")
    with open(path, "wb") as f:
        f.write(data[: len(data) * 2 // 3])
    return ["run", path, "--random-inputs"], ["truncated.onnx", "not a valid ONNX model"]


def case_random_model(work, shared):
    path = random_bytes(os.path.join(work, "random.onnx"), 4096, seed=7)
    return ["run", path, "--random-inputs"], ["random.onnx", "not a valid ONNX model"]


def case_unsupported_op(work, shared):
    path = write_model(os.path.join(work, "unsupported.onnx"), """
        <ir_version: 8, opset_import: ["" : 13, "com.example" : 1]>
        g (float[2,3] x) => (float[2,3] y) {
            t = Relu(x)
            y = com.example.Frobnicate <strength: int = 3> (t)
        }""")
    # The ONNX text parser leaves node names empty; name the node so the error can cite it.
    import onnx
    m = onnx.load(path)
    m.graph.node[1].name = "mystery_node"
    onnx.save(m, path)
    return ["run", path, "--random-inputs"], ["mystery_node", "Frobnicate", "not supported"]


def case_inspect_unsupported_op(work, shared):
    args, words = case_unsupported_op(work, shared)
    return ["inspect", args[1]], words


def case_inconsistent_graph(work, shared):
    """Shapes that cannot broadcast: load fails in shape inference, naming the node."""
    path = write_model(os.path.join(work, "inconsistent.onnx"), """
        <ir_version: 8, opset_import: ["" : 13]>
        g (float[2,3] a, float[4,5] b) => (float[2,3] c) {
            c = Add(a, b)
        }""")
    import onnx
    m = onnx.load(path)
    m.graph.node[0].name = "bad_add"
    onnx.save(m, path)
    return ["run", path, "--random-inputs"], ["bad_add", "Add"]


def case_runtime_shape_error(work, shared):
    """Dynamic dims that only clash at run time: the error names the node."""
    import numpy as np
    path = write_model(os.path.join(work, "dynamic.onnx"), """
        <ir_version: 8, opset_import: ["" : 13]>
        g (float[N,3] a, float[M,3] b) => (float[N,3] c) {
            c = Add(a, b)
        }""")
    import onnx
    m = onnx.load(path)
    m.graph.node[0].name = "dyn_add"
    onnx.save(m, path)
    a = npy(work, "a.npy", np.zeros((2, 3), np.float32))
    b = npy(work, "b.npy", np.zeros((4, 3), np.float32))
    return ["run", path, "--input", "a=" + a, "--input", "b=" + b], ["dyn_add", "Add"]


def case_missing_input(work, shared):
    model = add_model(work)
    return ["run", model, "--input", "a=" + float_input(work)], ["input 'b'", "not given", "a float32[2,3]"]


def case_wrong_shape(work, shared):
    model = add_model(work)
    a = float_input(work, "a.npy", shape=(3, 2))
    b = float_input(work, "b.npy")
    return ["run", model, "--input", "a=" + a, "--input", "b=" + b], ["input 'a'", "shape [3,2]", "float32[2,3]"]


def case_wrong_dtype(work, shared):
    model = add_model(work)
    a = float_input(work, "a.npy", dtype="float64")
    b = float_input(work, "b.npy")
    return ["run", model, "--input", "a=" + a, "--input", "b=" + b], ["input 'a'", "dtype float64", "float32"]


def case_random_npy(work, shared):
    model = add_model(work)
    a = random_bytes(os.path.join(work, "random.npy"), 512, seed=11)
    return ["run", model, "--input", "a=" + a, "--input", "b=" + float_input(work, "b.npy")], \
        ["random.npy", "not a valid .npy"]


def case_truncated_npy(work, shared):
    model = add_model(work)
    a = float_input(work, "full.npy")
    with open(a, "rb") as f:
        data = f.read()
    cut = os.path.join(work, "truncated.npy")
    with open(cut, "wb") as f:
        f.write(data[:-7])
    return ["run", model, "--input", "a=" + cut, "--input", "b=" + float_input(work, "b.npy")], \
        ["truncated.npy", "not a valid .npy"]


def case_random_pb(work, shared):
    model = add_model(work)
    a = random_bytes(os.path.join(work, "random.pb"), 512, seed=13)
    return ["run", model, "--input", "a=" + a, "--input", "b=" + float_input(work, "b.npy")], \
        ["random.pb", "not a valid"]


def case_unknown_input_name(work, shared):
    model = add_model(work)
    return ["run", model, "--input", "zzz=" + float_input(work)], ["'zzz'", "'a', 'b'"]


def case_nonexistent_input_file(work, shared):
    model = add_model(work)
    missing = os.path.join(work, "no_such_input.npy")
    return ["run", model, "--input", "a=" + missing, "--input", "b=" + float_input(work, "b.npy")], \
        ["no_such_input.npy", "does not exist"]


def case_malformed_input_option(work, shared):
    model = add_model(work)
    return ["run", model, "--input", "just_a_name"], ["just_a_name", "NAME=FILE"]


def case_bad_shape_option(work, shared):
    model = add_model(work)
    return ["inspect", model, "--shape", "a=2,x"], ["'x'", "dimension"]


def case_shape_option_wrong_rank(work, shared):
    model = add_model(work)
    return ["inspect", model, "--shape", "a=2,3,4"], ["input 'a'", "rank 3"]


def case_unknown_subcommand_option(work, shared):
    model = add_model(work)
    return ["run", model, "--no-such-flag"], ["--no-such-flag"]


def case_unknown_pass(work, shared):
    model = add_model(work)
    return ["run", model, "--random-inputs", "--disable-pass", "no_such_pass"], ["no_such_pass", "no pass"]


def case_check_unknown_pass(work, shared):
    test_dir = os.path.dirname(os.path.join(shared, CONFORMANCE_MODEL))
    return ["check", test_dir, "--disable-pass", "no_such_pass"], ["no_such_pass", "no pass"]


def case_bad_opt_level(work, shared):
    model = add_model(work)
    return ["inspect", model, "-O7"], ["--opt-level", "7"]


# ---------------------------------------------------------------- good-path cases
# Each returns (kiln arguments, words stdout must contain, a check of the files or None).

def ok_run_output_files(work, shared):
    """Output files are DIR/<name with characters outside [A-Za-z0-9_.-] as '_'>.npy."""
    import numpy as np
    import onnx
    path = write_model(os.path.join(work, "named.onnx"), """
        <ir_version: 8, opset_import: ["" : 13]>
        g (float[1,10] x) => (float[1,10] y, float[1,10] z) {
            y = Softmax(x)
            z = Relu(x)
        }""")
    m = onnx.load(path)
    m.graph.node[0].output[0] = m.graph.output[0].name = "/fc/out:0"
    onnx.save(m, path)
    x = npy(work, "x.npy", np.linspace(-1, 1, 10, dtype=np.float32).reshape(1, 10))
    out = os.path.join(work, "out")

    def check_files():
        y = np.load(os.path.join(out, "_fc_out_0.npy"))
        z = np.load(os.path.join(out, "z.npy"))
        xs = np.load(x)
        e = np.exp(xs - xs.max())
        assert np.allclose(y, e / e.sum(), rtol=1e-5, atol=1e-6), y
        assert np.array_equal(z, np.maximum(xs, 0)), z
    return (["run", path, "--input", "x=" + x, "--output-dir", out],
            ["/fc/out:0: float32 [1,10]", "top-5: 9=", "z: float32 [1,10]", "min 0"], check_files)


def ok_run_timing(work, shared):
    return (["run", add_model(work), "--random-inputs", "--runs", "5", "--warmup", "1"],
            ["c: float32 [2,3]", "first run", "median", "p90", "runs/s"], None)


def ok_inspect(work, shared):
    path = write_model(os.path.join(work, "mlp.onnx"), """
        <ir_version: 8, opset_import: ["" : 13]>
        g (float[N,256] x) => (float[N,1000] y) <float[256,1000] W> {
            y = MatMul(x, W)
        }""")
    import numpy as np
    import onnx
    import onnx.numpy_helper
    m = onnx.load(path)
    del m.graph.initializer[:]
    m.graph.initializer.append(onnx.numpy_helper.from_array(np.ones((256, 1000), np.float32), "W"))
    onnx.save(m, path)
    # 4 x 256 x 1000 = 1.024 MMAC
    return (["inspect", path, "--shape", "x=4,256"],
            ["float32[N,256]", "[4,256]", "[4,1000]", "256,000", "0.001024"], None)


# ---------------------------------------------------------------- plan files (src/runtime/plan_file.h)

def write_plan(work, name, header=None, graph=None, version=1, cut=None):
    """A plan file: magic, u32 version, u64 + JSON header, u64 + ONNX graph (add.onnx's)."""
    import json
    import struct
    if header is None:
        header = {"format_version": 1, "kiln_version": "0.1.0", "backend": "cpu", "precision": "fp32",
                  "profiles": [], "shape_sets": []}
    if graph is None:
        with open(add_model(work), "rb") as f:
            graph = f.read()
    head = header if isinstance(header, bytes) else json.dumps(header).encode()
    data = b"KILNPLAN" + struct.pack("<I", version) + struct.pack("<Q", len(head)) + head
    data += struct.pack("<Q", len(graph)) + graph
    path = os.path.join(work, name)
    with open(path, "wb") as f:
        f.write(data[:cut] if cut is not None else data)
    return path


def case_plan_truncated(work, shared):
    path = write_plan(work, "cut.plan", cut=-10)
    return ["run", path, "--random-inputs"], ["cut.plan", "truncated plan file", "graph"]


def case_plan_truncated_header(work, shared):
    path = write_plan(work, "cut_header.plan", cut=30)
    return ["plan-info", path], ["cut_header.plan", "truncated plan file", "JSON header"]


def case_plan_garbage_json(work, shared):
    path = write_plan(work, "garbage.plan", header=b"{not json at all")
    return ["run", path, "--random-inputs"], ["garbage.plan", "not valid JSON"]


def case_plan_wrong_version(work, shared):
    path = write_plan(work, "v99.plan", version=99)
    return ["plan-info", path], ["v99.plan", "format version 99", "kiln build"]


def case_plan_garbage_graph(work, shared):
    path = write_plan(work, "badgraph.plan", graph=b"\xff" * 64)
    return ["run", path, "--random-inputs"], ["badgraph.plan", "not a valid ONNX model"]


def case_plan_cuda_on_cpu_backend(work, shared):
    header = {"kiln_version": "0.1.0", "backend": "cuda", "precision": "fp16", "profiles": [],
              "environment": {"sm": 90}, "tactics": {}, "shape_sets": []}
    path = write_plan(work, "gpu.plan", header=header)
    return ["run", path, "--random-inputs", "--backend", "cpu"], ["gpu.plan", "CUDA backend", ".onnx"]


def case_build_bad_profile(work, shared):
    return (["build", add_model(work), "-o", os.path.join(work, "x.plan"), "--backend", "cpu", "--profile", "a:1,2"],
            ["--profile 'a:1,2'", "three shapes"])


def case_build_profile_unknown_input(work, shared):
    return (["build", add_model(work), "-o", os.path.join(work, "x.plan"), "--backend", "cpu", "--profile",
             "zz:1,2,3"], ["no input 'zz'"])


def ok_build_plan_info_run(work, shared):
    plan = os.path.join(work, "add.plan")
    built = subprocess.run([sys.argv[sys.argv.index("--kiln") + 1], "build", add_model(work), "-o", plan,
                            "--backend", "cpu"], capture_output=True, text=True)
    if built.returncode != 0 or "add.plan" not in built.stdout:
        raise RuntimeError("kiln build failed: " + built.stderr)
    return ["run", plan, "--random-inputs"], ["c: float32 [2,3]"], None


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}
CASES.update({name: fn for name, fn in sorted(globals().items()) if name.startswith("ok_")})


# ---------------------------------------------------------------- the driver

def check(kiln, args, words):
    try:
        p = subprocess.run([kiln] + args, capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return [f"kiln hung (no exit within {TIMEOUT_S} s)"]
    problems = []
    if p.returncode == 0:
        problems.append("kiln exited with status 0")
    elif p.returncode < 0 or p.returncode >= 128:
        problems.append(f"kiln died of a signal (status {p.returncode})")
    lines = p.stderr.splitlines()
    if len(lines) != 1:
        problems.append(f"stderr has {len(lines)} lines, expected exactly 1")
    elif not lines[0].startswith("kiln: error: "):
        problems.append("stderr does not start with 'kiln: error: '")
    for w in words:
        if w.lower() not in p.stderr.lower():
            problems.append(f"stderr lacks '{w}'")
    if problems:
        print("command: kiln " + " ".join(args))
        print(f"exit status: {p.returncode}")
        print("stderr:\n" + p.stderr)
    return problems


def check_ok(kiln, args, words, check_files):
    try:
        p = subprocess.run([kiln] + args, capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return [f"kiln hung (no exit within {TIMEOUT_S} s)"]
    problems = []
    if p.returncode != 0:
        problems.append(f"kiln exited with status {p.returncode}")
    if p.stderr:
        problems.append("kiln wrote to stderr")
    problems += [f"stdout lacks '{w}'" for w in words if w not in p.stdout]
    if not problems and check_files:
        try:
            check_files()
        except Exception as e:  # any failure of the check is the test's failure
            problems.append(f"output files: {type(e).__name__}: {e}")
    if problems:
        print("command: kiln " + " ".join(args))
        print("stdout:\n" + p.stdout + "\nstderr:\n" + p.stderr)
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln")
    ap.add_argument("--work")
    ap.add_argument("--shared")
    ap.add_argument("--case")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    if a.case not in CASES:
        print(f"unknown case '{a.case}'; cases: {', '.join(CASES)}")
        return 2
    work = os.path.join(a.work, a.case)
    os.makedirs(work, exist_ok=True)
    if a.case.startswith("ok_"):
        problems = check_ok(a.kiln, *CASES[a.case](work, a.shared))
    else:
        problems = check(a.kiln, *CASES[a.case](work, a.shared))
    for p in problems:
        print("FAIL: " + p)
    if not problems:
        print(f"ok: {a.case}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
