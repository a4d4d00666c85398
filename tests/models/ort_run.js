#!/usr/bin/env node
// Runs an ONNX model with ONNX Runtime (CPU, from the npm package onnxruntime-node) on .npy inputs
// and writes every output as OUT_DIR/<output name>.npy: the reference that kiln's outputs are
// compared with. Output names are sanitized the way `kiln run` does it (characters outside
// [A-Za-z0-9_.-] become '_').
//
//   node ort_run.js MODEL.onnx OUT_DIR NAME=FILE.npy [NAME=FILE.npy ...]
//
// onnxruntime-node is looked up in $KILN_ORT_NODE, else in the repo's .deps/node (installed by
// scripts/fetch_models.sh).
'use strict';
const fs = require('fs');
const path = require('path');

// numpy dtype code (without byte order) <-> ONNX Runtime tensor type and typed array.
const DTYPES = [
  { npy: 'f4', ort: 'float32', array: Float32Array },
  { npy: 'f8', ort: 'float64', array: Float64Array },
  { npy: 'f2', ort: 'float16', array: Uint16Array },
  { npy: 'i1', ort: 'int8', array: Int8Array },
  { npy: 'i2', ort: 'int16', array: Int16Array },
  { npy: 'i4', ort: 'int32', array: Int32Array },
  { npy: 'i8', ort: 'int64', array: BigInt64Array },
  { npy: 'u1', ort: 'uint8', array: Uint8Array },
  { npy: 'u2', ort: 'uint16', array: Uint16Array },
  { npy: 'u4', ort: 'uint32', array: Uint32Array },
  { npy: 'u8', ort: 'uint64', array: BigUint64Array },
  { npy: 'b1', ort: 'bool', array: Uint8Array },
];

const NPY_MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]);  // "\x93NUMPY"

function fail(message) {
  process.stderr.write(`ort_run: ${message}\n`);
  process.exit(1);
}

// Reads a C-order, little-endian .npy file (format versions 1, 2 and 3).
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || !buf.subarray(0, 6).equals(NPY_MAGIC)) fail(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const dataStart = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, dataStart);
  const descr = /'descr':\s*'([^']*)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) fail(`${file}: cannot parse header ${header}`);
  if (fortran[1] === 'True') fail(`${file}: Fortran order is not supported`);
  const order = descr[1][0];
  if (order === '>') fail(`${file}: big-endian data is not supported`);
  const code = descr[1].slice(order === '<' || order === '|' || order === '=' ? 1 : 0);
  const dtype = DTYPES.find((d) => d.npy === code);
  if (!dtype) fail(`${file}: unsupported dtype ${descr[1]}`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const bytes = count * dtype.array.BYTES_PER_ELEMENT;
  if (buf.length < dataStart + bytes) fail(`${file}: truncated data`);
  // Copy so the typed array is aligned whatever the header length was.
  const data = new dtype.array(buf.buffer.slice(buf.byteOffset + dataStart,
                                                buf.byteOffset + dataStart + bytes));
  return { dtype, dims, data };
}

function writeNpy(file, dtype, dims, data) {
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  const byteOrder = dtype.array.BYTES_PER_ELEMENT === 1 ? '|' : '<';
  let header = `{'descr': '${byteOrder}${dtype.npy}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Pad with spaces so that magic + version + length + header + '\n' is a multiple of 64.
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, ' ') + '\n';
  const prefix = Buffer.alloc(10);
  NPY_MAGIC.copy(prefix, 0);
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]));
}

function loadOrt() {
  const where = process.env.KILN_ORT_NODE ||
      path.join(__dirname, '..', '..', '.deps', 'node', 'node_modules', 'onnxruntime-node');
  try {
    return require(where);
  } catch (e) {
    fail(`cannot load onnxruntime-node from ${where} (run scripts/fetch_models.sh): ${e.message}`);
  }
}

async function main() {
  const [model, outDir, ...specs] = process.argv.slice(2);
  if (!model || !outDir) fail('usage: ort_run.js MODEL.onnx OUT_DIR NAME=FILE.npy ...');
  const ort = loadOrt();
  const feeds = {};
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    if (eq <= 0) fail(`bad input '${spec}', expected NAME=FILE.npy`);
    const { dtype, dims, data } = readNpy(spec.slice(eq + 1));
    feeds[spec.slice(0, eq)] = new ort.Tensor(dtype.ort, data, dims);
  }
  // Full graph optimization is ORT's default; keep it, it's what a user of ORT gets. One thread
  // makes results reproducible run to run.
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    logSeverityLevel: 3,  // errors only: some models carry unused initializers ORT warns about
  });
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  for (const name of session.outputNames) {
    const tensor = results[name];
    const dtype = DTYPES.find((d) => d.ort === tensor.type);
    if (!dtype) fail(`output ${name}: unsupported type ${tensor.type}`);
    const file = path.join(outDir, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.npy`);
    writeNpy(file, dtype, tensor.dims, tensor.data);
    console.log(`ort_run: ${name} ${tensor.type} [${tensor.dims.join(',')}] -> ${file}`);
  }
}

main().catch((e) => fail(e.stack || String(e)));
