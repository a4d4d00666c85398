#!/usr/bin/env python3
"""End-to-end tests of `kiln serve` over KServe v2 REST, with Python's standard library as the
client. Usage: serve_test.py CASE --kiln PATH --models-dir DIR, CASE one of endpoints,
bad_requests, concurrency, overload, drain, grpc (each starts its own server on a free port)."""
import argparse
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

from serve_util import Server, f32, metric_value, read_npy, tiny_request, write_npy, write_tiny_model

TMP = tempfile.mkdtemp(prefix="kiln_serve_test_")
TINY = os.path.join(TMP, "tiny.onnx")


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def kiln_run(kiln, model, input_name, npy):
    """The outputs of `kiln run` for one input file: {name: (shape, values)}."""
    out_dir = os.path.join(TMP, "run_" + os.path.basename(model))
    subprocess.run([kiln, "run", model, "--backend", "cpu", "--input", f"{input_name}={npy}", "--output-dir", out_dir],
                   check=True, stdout=subprocess.DEVNULL)
    return {f[:-4]: read_npy(os.path.join(out_dir, f)) for f in os.listdir(out_dir)}


def close(a, b, tol=1e-5):
    return len(a) == len(b) and all(abs(x - y) <= tol * (1 + abs(y)) for x, y in zip(a, b))


def case_endpoints(args):
    mnv2 = os.path.join(args.models_dir, "mobilenetv2.onnx")
    npy = os.path.join(args.models_dir, "testdata", "mobilenetv2", "input.npy")
    shape, values, raw = read_npy(npy)
    want = kiln_run(args.kiln, mnv2, "input", npy)["output"]
    with Server(args.kiln, {"mnv2": mnv2, "tiny": TINY}) as s:
        check(s.request("GET", "/v2/health/live")[0] == 200, "live")
        check(s.request("GET", "/v2/health/ready")[0] == 200, "ready")
        status, meta = s.get_json("/v2")
        check(status == 200 and meta["name"] == "kiln" and "binary_tensor_data" in meta["extensions"], meta)
        status, meta = s.get_json("/v2/models/mnv2")
        check(status == 200 and meta["name"] == "mnv2", meta)
        check(meta["inputs"] == [{"name": "input", "datatype": "FP32", "shape": [-1, 3, 224, 224]}], meta)
        check(meta["outputs"] == [{"name": "output", "datatype": "FP32", "shape": [-1, 1000]}], meta)
        version = meta["versions"][0]
        check(s.get_json(f"/v2/models/mnv2/versions/{version}")[0] == 200, "metadata of a version")
        check(s.request("GET", "/v2/models/mnv2/ready")[0] == 200, "model ready")
        check(s.request("GET", f"/v2/models/tiny/versions/{version}/ready")[0] == 200, "model version ready")

        # JSON in, JSON out: kiln run's numbers (float32 through JSON and back, exactly).
        req = {"id": "req-7", "inputs": [{"name": "input", "datatype": "FP32", "shape": shape, "data": values}]}
        status, ans, _ = s.infer("mnv2", req)
        check(status == 200, ans)
        check(ans["id"] == "req-7" and ans["model_name"] == "mnv2", "id and model echoed")
        out = ans["outputs"][0]
        check(out["name"] == "output" and out["datatype"] == "FP32" and out["shape"] == want[0], out["shape"])
        check(close(out["data"], want[1]), "JSON output differs from kiln run")

        # Binary extension both ways: the bytes of kiln run's .npy.
        req = {"inputs": [{"name": "input", "datatype": "FP32", "shape": shape, "parameters": {"binary_data_size": len(raw)}}],
               "outputs": [{"name": "output", "parameters": {"binary_data": True}}]}
        status, ans, bins = s.infer("mnv2", req, [raw])
        check(status == 200 and "data" not in ans["outputs"][0], ans)
        got = list(struct.unpack(f"<{len(bins['output']) // 4}f", bins["output"]))
        check(close(got, want[1]), "binary output differs from kiln run")

        # Nested data, requested outputs, binary_data_output for all.
        x = [[1.5, -2.0, 3.25, -4.0], [0.0, -0.5, 7.0, 8.0]]
        flat = [v for row in x for v in row]
        status, ans, _ = s.infer("tiny", tiny_request(x, 2, outputs=[{"name": "n"}]))
        check(status == 200 and [o["name"] for o in ans["outputs"]] == ["n"], ans)
        check(ans["outputs"][0]["data"] == [-v for v in flat], ans)
        status, ans, bins = s.infer("tiny", tiny_request(flat, 2, parameters={"binary_data_output": True}))
        check(status == 200 and sorted(bins) == ["n", "y"], ans)
        check(list(struct.unpack("<8f", bins["y"])) == f32([max(v, 0.0) for v in flat]), "binary relu")

        text = s.metrics()
        check(metric_value(text, "kiln_requests_total", model="mnv2") is not None, text[:2000])
        check(s.stop() == 0, "exit status after SIGTERM")


def case_bad_requests(args):
    with Server(args.kiln, {"tiny": TINY}, "--max-body-mb", "1") as s:
        def expect(status_want, model, body, needle, headers=None):
            status, _, data = s.request("POST", f"/v2/models/{model}/infer", body,
                                        headers or {"Content-Type": "application/json"})
            err = json.loads(data).get("error", "")
            check(status == status_want and needle in err, f"{status} {err!r}: wanted {status_want} with {needle!r}")

        good = json.dumps(tiny_request([1, 2, 3, 4], 1))
        expect(400, "tiny", b'{"inputs": [', "malformed JSON")
        expect(400, "tiny", b"[1, 2]", "JSON object")
        expect(404, "nope", good, "nope")
        expect(400, "tiny", json.dumps({"inputs": [{"name": "x", "datatype": "INT64", "shape": [1, 4],
                                                    "data": [1, 2, 3, 4]}]}), "'x'")
        expect(400, "tiny", json.dumps(tiny_request([1, 2, 3, 4, 5, 6], 1)), "'x'")  # data vs shape
        expect(400, "tiny", json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3],
                                                    "data": [1, 2, 3]}]}), "'x'")  # wrong shape
        q = {"name": "q", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]}
        expect(400, "tiny", json.dumps({"inputs": [q]}), "'x'")  # x missing
        expect(400, "tiny", json.dumps({"inputs": tiny_request([1, 2, 3, 4], 1)["inputs"] + [q]}), "'q'")  # unknown
        expect(400, "tiny", json.dumps({"inputs": []}), "inputs")  # missing input
        expect(400, "tiny", json.dumps(tiny_request(["a", 2, 3, 4], 1)), "'x'")  # wrong element type
        head = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4],
                                       "parameters": {"binary_data_size": 16}}]}).encode()
        expect(400, "tiny", head + b"\0" * 8, "'x'", {"Inference-Header-Content-Length": str(len(head))})
        expect(400, "tiny", head + b"\0" * 16, "Inference-Header-Content-Length",
               {"Inference-Header-Content-Length": "999999"})
        status, _, data = s.request("POST", "/v2/models/tiny/infer", b" " * (2 << 20))
        check(status == 413 and b"error" in data, f"oversized body: {status}")
        status, _, data = s.request("GET", "/v2/nothing")
        check(status == 404 and b"error" in data, "unknown route")
        check(s.request("GET", "/v2/models/nope")[0] == 404, "unknown model metadata")
        check(s.request("GET", "/v2/models/nope/ready")[0] == 404, "unknown model ready")

        # A per-request timeout of 1 us has expired before the request runs: an error, not silence.
        status, ans, _ = s.infer("tiny", tiny_request([1, 2, 3, 4], 1, parameters={"timeout": 1}))
        check(status == 504 and "error" in ans, f"timeout: {status} {ans}")

        # A client that disconnects mid-body: the server drops it and keeps serving.
        with socket.create_connection(("127.0.0.1", s.port)) as sock:
            sock.sendall(b"POST /v2/models/tiny/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"inp")
        status, ans, _ = s.infer("tiny", tiny_request([1, -2, 3, -4], 1))
        check(status == 200 and ans["outputs"][0]["data"] == [1, 0, 3, 0], "served after a disconnect")
        text = s.metrics()
        check((metric_value(text, "kiln_requests_total", model="tiny", status="400") or 0) >= 10, "400s counted")
        check('model="nope"' not in text, "an unknown model's name became a metric label")
        check(s.stop() == 0, "exit status after SIGTERM")


def run_clients(n_threads, per_thread, fn):
    """Runs fn(thread, i) from n_threads threads; returns every result (each request once)."""
    results, lock = [], threading.Lock()

    def worker(t):
        for i in range(per_thread):
            try:
                r = fn(t, i)
            except Exception as e:  # a lost or broken answer is a result too, to report
                r = (False, repr(e))
            with lock:
                results.append(r)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=300)
    return results


def case_concurrency(args):
    with Server(args.kiln, {"tiny": TINY}, "--max-batch", "8", "--max-queue-delay-us", "20000") as s:
        def one(t, i):
            x = [t * 100.0 + i, -1.0 - t, 0.5 * i, float(-i)]
            status, ans, _ = s.infer("tiny", tiny_request(x, 1, id=f"{t}-{i}"))
            ok = status == 200 and ans["id"] == f"{t}-{i}" and ans["outputs"][0]["data"] == f32([max(v, 0.0) for v in x])
            return ok, status

        n_threads, per_thread = 16, 8
        results = run_clients(n_threads, per_thread, one)
        check(len(results) == n_threads * per_thread, f"{len(results)} answers")
        check(all(ok for ok, _ in results), f"wrong answers: {[r for r in results if not r[0]][:5]}")
        text = s.metrics()
        batches = metric_value(text, "kiln_batch_size_count", model="tiny")
        singles = metric_value(text, "kiln_batch_size_bucket", model="tiny", le="1")
        check(batches is not None and singles is not None and batches > singles,
              f"no batch larger than 1: count {batches}, le=1 {singles}")
        check(metric_value(text, "kiln_requests_total", model="tiny", status="200") == n_threads * per_thread, "counted")
        print(f"concurrency: {n_threads * per_thread} requests in {batches:.0f} batches")
        check(s.stop() == 0, "exit status after SIGTERM")


def mnv2_binary_request(args):
    shape, _, raw = read_npy(os.path.join(args.models_dir, "testdata", "mobilenetv2", "input.npy"))
    req = {"inputs": [{"name": "input", "datatype": "FP32", "shape": shape,
                       "parameters": {"binary_data_size": len(raw)}}],
           "parameters": {"binary_data_output": True}}
    return req, raw


def case_overload(args):
    mnv2 = os.path.join(args.models_dir, "mobilenetv2.onnx")
    req, raw = mnv2_binary_request(args)
    with Server(args.kiln, {"mnv2": mnv2}, "--max-queue", "1", "--max-batch", "1") as s:
        def one(t, i):
            start = time.time()
            status, _, _ = s.infer("mnv2", req, [raw])
            return status, time.time() - start

        results = run_clients(12, 1, one)
        statuses = sorted(st for st, _ in results)
        check(len(results) == 12 and set(statuses) <= {200, 503}, statuses)
        check(200 in statuses and 503 in statuses, f"wanted both 200 and 503: {statuses}")
        slowest_ok = max(t for st, t in results if st == 200)
        fastest_503 = min(t for st, t in results if st == 503)
        check(fastest_503 < slowest_ok, f"503 not at once: {fastest_503:.3f}s vs {slowest_ok:.3f}s")
        print(f"overload: {statuses.count(200)} answered, {statuses.count(503)} refused with 503")
        check(s.request("GET", "/v2/health/live")[0] == 200, "still live")
        check(s.stop() == 0, "exit status after SIGTERM")


def case_drain(args):
    mnv2 = os.path.join(args.models_dir, "mobilenetv2.onnx")
    req, raw = mnv2_binary_request(args)
    with Server(args.kiln, {"mnv2": mnv2}, "--max-batch", "1") as s:
        results = []
        threads = [threading.Thread(target=lambda: results.append(s.infer("mnv2", req, [raw])[0])) for _ in range(4)]
        for th in threads:
            th.start()
        time.sleep(0.5)  # all four have arrived; at most one has finished (one run takes longer)
        rc = s.stop()
        for th in threads:
            th.join(timeout=60)
        check(results == [200] * 4, f"in-flight requests during SIGTERM: {results}")
        check(rc == 0, f"exit status {rc}")
        check(any("draining" in line for line in s.lines), "".join(s.lines))


def case_grpc(args):
    """The gRPC port from Python's grpcio: every RPC, outputs equal to kiln run's, error codes."""
    import grpc
    from grpc_client import Client
    mnv2 = os.path.join(args.models_dir, "mobilenetv2.onnx")
    npy = os.path.join(args.models_dir, "testdata", "mobilenetv2", "input.npy")
    shape, _, raw = read_npy(npy)
    want = kiln_run(args.kiln, mnv2, "input", npy)["output"]
    with Server(args.kiln, {"mnv2": mnv2, "tiny": TINY}, "--grpc-port", "0") as s:
        c = Client(os.path.join(args.source_dir, "proto", "kserve", "grpc_service.proto"), s.grpc_port)
        check(c.call("ServerLive").live and c.call("ServerReady").ready, "live and ready")
        check(c.call("ModelReady", name="tiny").ready, "model ready")
        meta = c.call("ServerMetadata")
        check(meta.name == "kiln" and "binary_tensor_data" in meta.extensions, meta)
        meta = c.call("ModelMetadata", name="mnv2")
        check(meta.inputs[0].name == "input" and list(meta.inputs[0].shape) == [-1, 3, 224, 224], meta)
        Input = c.msg("ModelInferRequest.InferInputTensor")
        ans = c.call("ModelInfer", model_name="mnv2", id="g1", raw_input_contents=[raw],
                     inputs=[Input(name="input", datatype="FP32", shape=shape)])
        check(ans.id == "g1" and list(ans.outputs[0].shape) == want[0], ans.outputs)
        got = list(struct.unpack(f"<{len(ans.raw_output_contents[0]) // 4}f", ans.raw_output_contents[0]))
        check(close(got, want[1]), "gRPC output differs from kiln run")
        contents = c.msg("InferTensorContents")(fp32_contents=[1, -2, 3, -4])
        ans = c.call("ModelInfer", model_name="tiny", inputs=[Input(name="x", datatype="FP32", shape=[1, 4], contents=contents)])
        check(struct.unpack("<4f", ans.raw_output_contents[[o.name for o in ans.outputs].index("y")]) == (1, 0, 3, 0), ans)

        def code_of(rpc, **fields):
            try:
                c.call(rpc, **fields)
            except grpc.RpcError as e:
                return e.code()
            return grpc.StatusCode.OK

        check(code_of("ModelReady", name="nope") == grpc.StatusCode.NOT_FOUND, "unknown model ready")
        check(code_of("ModelMetadata", name="nope") == grpc.StatusCode.NOT_FOUND, "unknown model metadata")
        check(code_of("ModelInfer", model_name="nope", inputs=[Input(name="x", datatype="FP32", shape=[1, 4], contents=contents)])
              == grpc.StatusCode.NOT_FOUND, "unknown model infer")
        check(code_of("ModelInfer", model_name="tiny", inputs=[Input(name="x", datatype="FP32", shape=[2, 4], contents=contents)])
              == grpc.StatusCode.INVALID_ARGUMENT, "wrong shape")
        c.close()
        check(s.stop() == 0, "exit status after SIGTERM")


CASES = {"endpoints": case_endpoints, "bad_requests": case_bad_requests, "concurrency": case_concurrency,
         "overload": case_overload, "drain": case_drain, "grpc": case_grpc}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=sorted(CASES))
    p.add_argument("--kiln", required=True)
    p.add_argument("--models-dir", required=True)
    p.add_argument("--source-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    args = p.parse_args()
    write_tiny_model(TINY)
    CASES[args.case](args)
    print(f"serve {args.case}: OK")


if __name__ == "__main__":
    sys.exit(main())
