"""Helpers of the `kiln serve` end-to-end tests (Python standard library only): start and stop a
server, KServe v2 REST calls (JSON and binary tensor extension), .npy files, and a tiny ONNX
model written byte by byte (no onnx package needed)."""
import ast
import http.client
import json
import os
import signal
import struct
import subprocess
import threading
import time


# --- a tiny ONNX model: y = Relu(x), n = Neg(x), x float32[batch, 4] -------------------------

def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(num, payload):
    """A length-delimited protobuf field (strings, bytes, messages)."""
    if isinstance(payload, str):
        payload = payload.encode()
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _int_field(num, value):
    return _varint(num << 3) + _varint(value)


def _value_info(name, dims):
    dim_msgs = b"".join(_field(1, _field(2, d) if isinstance(d, str) else _int_field(1, d)) for d in dims)
    tensor_type = _int_field(1, 1) + _field(2, dim_msgs)  # elem_type FLOAT, shape
    return _field(1, name) + _field(2, _field(1, tensor_type))


def write_tiny_model(path):
    node = lambda op, out: _field(1, "x") + _field(2, out) + _field(3, op.lower()) + _field(4, op)
    graph = (_field(1, node("Relu", "y")) + _field(1, node("Neg", "n")) + _field(2, "tiny") +
             _field(11, _value_info("x", ["batch", 4])) + _field(12, _value_info("y", ["batch", 4])) +
             _field(12, _value_info("n", ["batch", 4])))
    model = _int_field(1, 8) + _field(2, "kiln-serve-test") + _field(7, graph) + _field(8, _int_field(2, 13))
    with open(path, "wb") as f:
        f.write(model)


# --- .npy (float32 only, what the tests need) ---------------------------------------------------

def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    if data[6] == 1:
        hlen, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        hlen, start = struct.unpack("<I", data[8:12])[0], 12
    header = ast.literal_eval(data[start:start + hlen].decode())
    assert header["descr"] == "<f4" and not header["fortran_order"], header
    shape = list(header["shape"])
    count = 1
    for d in shape:
        count *= d
    body = data[start + hlen:start + hlen + 4 * count]
    return shape, list(struct.unpack(f"<{count}f", body)), body


def write_npy(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{d}," for d in shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(f"<{len(values)}f", *values))


def f32(values):
    """Rounds Python floats to float32, as the server computes them."""
    return list(struct.unpack(f"<{len(values)}f", struct.pack(f"<{len(values)}f", *values)))


# --- the server ------------------------------------------------------------------------------

class Server:
    """`kiln serve --backend cpu` on a free port (--http-port 0; the port is read from stdout)."""

    def __init__(self, kiln, models, *args):
        cmd = [kiln, "serve", "--backend", "cpu", "--http-port", "0", "--host", "127.0.0.1"]
        if "--grpc-port" not in args:
            cmd += ["--grpc-port", "-1"]
        for name, path in models.items():
            cmd += ["--model", f"{name}={path}"]
        cmd += list(args)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.port = self.grpc_port = None
        self.lines = []
        deadline = time.time() + 180
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("kiln serve exited before it was ready:\n" + "".join(self.lines))
            self.lines.append(line)
            if line.startswith("kiln serve: HTTP on "):
                self.port = int(line.rsplit(":", 1)[1])
            if line.startswith("kiln serve: gRPC on "):
                self.grpc_port = int(line.rsplit(":", 1)[1])
            if line.startswith("kiln serve: ready"):
                break
        assert self.port, "".join(self.lines)
        # Keep reading stdout so the server never blocks on a full pipe.
        self._reader = threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True)
        self._reader.start()

    def request(self, method, path, body=None, headers=None, timeout=120):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            conn.close()

    def get_json(self, path):
        status, _, body = self.request("GET", path)
        return status, (json.loads(body) if body else None)

    def infer(self, model, request, binary_inputs=()):
        """POSTs `request` (a dict), with `binary_inputs` (bytes, in input order) after the JSON
        in the binary extension when given. Returns (status, json, {output: raw bytes})."""
        header = json.dumps(request).encode()
        body, headers = header, {"Content-Type": "application/json"}
        if binary_inputs:
            body = header + b"".join(binary_inputs)
            headers = {"Inference-Header-Content-Length": str(len(header)), "Content-Type": "application/octet-stream"}
        status, rh, data = self.request("POST", f"/v2/models/{model}/infer", body, headers)
        json_len = int(rh.get("Inference-Header-Content-Length", len(data)))
        answer = json.loads(data[:json_len])
        raw, offset = {}, json_len
        for out in answer.get("outputs", []):
            size = out.get("parameters", {}).get("binary_data_size")
            if size is not None:
                raw[out["name"]] = data[offset:offset + size]
                offset += size
        assert offset == len(data), "binary bytes that no output claims"
        return status, answer, raw

    def metrics(self):
        status, _, body = self.request("GET", "/metrics")
        assert status == 200
        return body.decode()

    def stop(self, sig=signal.SIGTERM, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        rc = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=5)
        return rc

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def metric_value(text, name, **labels):
    """The value of the sample `name{labels...}` in Prometheus text (labels may be a subset)."""
    want = [f'{k}="{v}"' for k, v in labels.items()]
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            if all(w in line for w in want):
                return float(line.rsplit(" ", 1)[1])
    return None


def tiny_request(values, rows, **extra):
    return dict({"inputs": [{"name": "x", "datatype": "FP32", "shape": [rows, 4], "data": values}]}, **extra)

