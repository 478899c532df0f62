#!/usr/bin/env node
// Times an ONNX model on ONNX Runtime (onnxruntime-node): its CPU execution provider, or its
// WebGPU provider (Dawn, which onnxruntime-node's Linux build bundles, on Vulkan), for
// scripts/bench-zoo.py's side-by-side comparison with Kiln. Not a build or test dependency.
//
// Usage: NODE_PATH=DIR/node_modules node scripts/ort-bench.js MODEL.onnx -i NAME=FILE.npy ...
//          [--expect NAME=FILE.npy ...] [--repeat N] [--warmup K] [--threads T] [--tol X]
//          [--ep cpu|webgpu] [--layers LAYERDIR]
// where DIR holds `npm install --ignore-scripts onnxruntime-node@1.30.0`. --layers enables every
// Vulkan layer whose manifest (*.json) is in LAYERDIR, before ONNX Runtime loads: the ONNX Runtime
// peer's feature layer (../shared/peers/README.md), without which Dawn refuses Mesa 22.3's
// lavapipe.
// Prints one JSON document: session creation time, first call, steady median/p90/min over N
// calls, and per expected output the max |diff| and whether |diff| <= tol * (1 + |expected|).
'use strict';
const fs = require('fs');
const path = require('path');

let ort;

function fail(msg) {
  process.stderr.write('ort-bench: ' + msg + '\n');
  process.exit(1);
}

// .npy (format 1.x/2.x/3.x, little-endian, C order) -> {type, data, dims} for ort.Tensor.
const NPY_TYPES = {
  '<f4': ['float32', Float32Array],
  '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array],
  '<i8': ['int64', BigInt64Array],
  '|b1': ['bool', Uint8Array],
  '|u1': ['uint8', Uint8Array],
  '|i1': ['int8', Int8Array],
};
function loadNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.length < 10 || buf.toString('latin1', 1, 6) !== 'NUMPY') fail(path + ': not a .npy file');
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) fail(path + ': unreadable header ' + header);
  if (fortran[1] === 'True') fail(path + ': Fortran order is not supported');
  const t = NPY_TYPES[descr[1]];
  if (!t) fail(path + ': unsupported dtype ' + descr[1]);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const off = start + headerLen;
  const bytes = buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + off + count * t[1].BYTES_PER_ELEMENT);
  const data = new t[1](bytes);  // a fresh ArrayBuffer: aligned
  return {type: t[0], data: t[0] === 'bool' ? new Uint8Array(data) : data, dims};
}

function parseArgs(argv) {
  const o = {model: null, inputs: {}, expects: {}, repeat: 5, warmup: 1, threads: 2, tol: 1e-4,
             ep: 'cpu', layers: null};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(a + ' needs a value');
      return argv[++i];
    };
    const spec = (map) => {
      const s = value();
      const eq = s.indexOf('=');
      if (eq <= 0) fail(a + ' expects NAME=FILE.npy, got ' + s);
      map[s.slice(0, eq)] = s.slice(eq + 1);
    };
    if (a === '-i' || a === '--input') spec(o.inputs);
    else if (a === '--expect') spec(o.expects);
    else if (a === '--repeat') o.repeat = Number(value());
    else if (a === '--warmup') o.warmup = Number(value());
    else if (a === '--threads') o.threads = Number(value());
    else if (a === '--tol') o.tol = Number(value());
    else if (a === '--ep') o.ep = value();
    else if (a === '--layers') o.layers = value();
    else if (!o.model) o.model = a;
    else fail('unexpected argument ' + a);
  }
  if (!o.model) fail('usage: ort-bench.js MODEL.onnx -i NAME=FILE.npy ... [--repeat N]');
  if (o.ep !== 'cpu' && o.ep !== 'webgpu') fail(`--ep ${o.ep}: expected cpu or webgpu`);
  return o;
}

// The Vulkan loader reads these when Dawn creates its instance (the first WebGPU session).
function enableLayers(dir) {
  let names;
  try {
    names = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
      return manifest.layer.name;
    });
  } catch (e) {
    fail(`--layers ${dir}: ${e.message}`);
  }
  if (!names.length) fail(`--layers ${dir}: no layer manifest (*.json) there`);
  const env = process.env;
  env.VK_LAYER_PATH = env.VK_LAYER_PATH ? `${dir}:${env.VK_LAYER_PATH}` : dir;
  const layers = (env.VK_INSTANCE_LAYERS || '').split(':').filter(Boolean);
  for (const n of names) if (!layers.includes(n)) layers.push(n);
  env.VK_INSTANCE_LAYERS = layers.join(':');
  if (!env.XDG_RUNTIME_DIR) env.XDG_RUNTIME_DIR = require('os').tmpdir();
  return names;
}

function ms(t0) {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? null : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

function percentile(v, p) {  // nearest rank
  const s = [...v].sort((a, b) => a - b);
  if (s.length === 0) return null;
  return s[Math.min(Math.max(Math.ceil(p * s.length), 1), s.length) - 1];
}

function compare(name, tensor, path, tol) {
  const want = loadNpy(path);
  const r = {name, file: path};
  if (JSON.stringify(want.dims) !== JSON.stringify(tensor.dims.map(Number))) {
    return Object.assign(r, {match: false, error: `shape [${tensor.dims}], expected [${want.dims}]`});
  }
  let maxAbs = 0, worst = 0, ok = true;
  for (let i = 0; i < want.data.length; ++i) {
    const x = Number(tensor.data[i]), y = Number(want.data[i]);
    if (x === y) continue;
    const d = Math.abs(x - y);
    if (Number.isNaN(d)) {
      if (!(Number.isNaN(x) && Number.isNaN(y))) ok = false;
      continue;
    }
    maxAbs = Math.max(maxAbs, d);
    worst = Math.max(worst, d / (1 + Math.abs(y)));
  }
  return Object.assign(r, {max_abs_diff: maxAbs, max_scaled_diff: worst, match: ok && worst <= tol});
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const layers = o.layers ? enableLayers(path.resolve(o.layers)) : [];
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    process.stderr.write('ort-bench: onnxruntime-node not found (set NODE_PATH): ' + e.message +
                         '\n');
    process.exit(3);
  }
  let t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(o.model, {
    executionProviders: [o.ep],
    intraOpNumThreads: o.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const loadMs = ms(t0);
  const feeds = {};
  for (const name of session.inputNames) {
    if (!(name in o.inputs)) fail(`no file for graph input '${name}' (-i ${name}=FILE.npy)`);
    const a = loadNpy(o.inputs[name]);
    feeds[name] = new ort.Tensor(a.type, a.data, a.dims);
  }
  t0 = process.hrtime.bigint();
  let out = await session.run(feeds);
  const firstMs = ms(t0);
  for (let i = 0; i < o.warmup; ++i) out = await session.run(feeds);
  const times = [];
  for (let i = 0; i < o.repeat; ++i) {
    t0 = process.hrtime.bigint();
    out = await session.run(feeds);
    times.push(ms(t0));
  }
  const doc = {
    engine: 'onnxruntime-node ' + (ort.env.versions ? ort.env.versions.common : ''),
    model: o.model,
    ep: o.ep,
    vulkan_layers: layers,
    threads: o.threads,
    load_ms: loadMs,
    first_call_ms: firstMs,
    steady: {calls: o.repeat, warmup: o.warmup, median_ms: median(times),
             p90_ms: percentile(times, 0.9), min_ms: percentile(times, 0), times_ms: times},
    check: null,
  };
  const names = Object.keys(o.expects);
  if (names.length) {
    const outputs = names.map((n) => {
      if (!(n in out)) fail(`the model has no output '${n}'`);
      return compare(n, out[n], o.expects[n], o.tol);
    });
    doc.check = {tol: o.tol, outputs, match: outputs.every((c) => c.match)};
  }
  process.stdout.write(JSON.stringify(doc, null, 1) + '\n');
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
