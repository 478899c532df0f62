#!/usr/bin/python3
"""Runs the PyTorch-exported models of tests/data/onnx through `kiln run` at every committed size
in one process and checks: the outputs match PyTorch's within 1e-4, each model with dynamic
axes compiles once for all sizes (the recurrent tagger once per sequence length), exports that
compute their shapes (swin, seq2seq, vit) run without graph breaks, two detectors (ssd,
faster_rcnn) match PyTorch, the
TopK/NonZero model runs without a break (both are device kernels; --explain shows it). No
validation-layer message may appear, and on Vulkan no graph may run on the interpreter for
want of a kernel (`interpreter_fallbacks` in the stats line; a generated model that needs one
shows the count is live).

Usage: models_test.py KILN DATA_DIR cpu|vulkan    (exit 77: no Vulkan device)
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

KILN, DATA, DEVICE = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def kiln_run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, KILN_VALIDATE="1", **(env or {})))
    if DEVICE == "vulkan" and "no Vulkan device" in p.stderr:
        print("no Vulkan device; skipped")
        sys.exit(77)
    print(" ".join(cmd))
    print(p.stdout + p.stderr)
    m = re.search(r"^stats: (.*)$", p.stdout, re.M)
    return p, dict(kv.split("=") for kv in m.group(1).split()) if m else {}


def run(model, inputs, outputs, extra=(), env=None):
    """Runs every size case of `model`; returns (stdout, stats dict, number of cases)."""
    d = os.path.join(DATA, model)
    cases = sorted(c for c in os.listdir(d) if c.isdigit())
    out = tempfile.mkdtemp(prefix="kiln-onnx-")
    cmd = [KILN, "run", os.path.join(d, "model.onnx"), "-o", out, "--device", DEVICE]
    for name in inputs:
        cmd += ["-i", name + "=" + ",".join(os.path.join(d, c, name + ".npy") for c in cases)]
    p, stats = kiln_run(cmd + list(extra), env)
    check(p.returncode == 0, "%s: kiln run exited %d" % (model, p.returncode))
    check("vulkan validation error" not in p.stderr, "%s: validation-layer messages" % model)
    check(stats.get("interpreter_fallbacks") == "0",
          "%s: %s graph(s) ran on the interpreter for want of a kernel" %
          (model, stats.get("interpreter_fallbacks")))
    for c in cases:
        for name in outputs:
            want = np.load(os.path.join(d, c, name + ".npy"))
            path = os.path.join(out, c if len(cases) > 1 else "", name + ".npy")
            if not os.path.exists(path):
                check(False, "%s case %s: %s not written" % (model, c, name))
                continue
            got = np.load(path)
            check(got.shape == want.shape,
                  "%s case %s %s: shape %s, expected %s" % (model, c, name, got.shape, want.shape))
            if got.shape == want.shape:
                err = float(np.max(np.abs(got.astype(np.float64) - want))) if got.size else 0.0
                check(err <= 1e-4, "%s case %s %s: max abs error %g > 1e-4" % (model, c, name, err))
    return p.stdout, stats, len(cases)


for model, inputs, outputs in (("mlp", ["x"], ["y"]), ("encoder", ["ids"], ["logits"]),
                               ("cnn", ["image"], ["scores"])):
    _, stats, n = run(model, inputs, outputs)
    check(stats.get("calls") == str(n), "%s: %s calls" % (model, stats.get("calls")))
    check(stats.get("compiles") == "1", "%s: %s compiles for %d sizes, expected 1" %
          (model, stats.get("compiles"), n))
    check(stats.get("dynamic_compiles") == "1", "%s: the compile is not symbolic" % model)
    check(stats.get("graph_breaks") == "0", "%s: %s graph breaks" % (model, stats.get("graph_breaks")))

# The exported encoder's kernels on a device: no matmul on the tiled kernel for want of a stored
# A (the exporter's [S, B, E] transposes and folded arithmetic are stored for the row-block
# kernel), one attention kernel per layer writing the exporter's head merge, one norm kernel
# per LayerNorm (fusion.txt of the dump says why each matmul got its kernel). Under the
# structural rule (KILN_CALIBRATE=0): with the device's measured rates, the estimate may
# rightly leave an A unstored, and rates measured on a busy machine vary from run to run.
if DEVICE == "vulkan":
    dump = tempfile.mkdtemp(prefix="kiln-dump-")
    run("encoder", ["ids"], ["logits"], ["--dump", dump], {"KILN_CALIBRATE": "0"})
    [compile_dir] = [os.path.join(dump, d) for d in os.listdir(dump)]
    kernels = sorted(f[:-5] for f in os.listdir(compile_dir) if f.endswith(".comp"))
    fusion = open(os.path.join(compile_dir, "fusion.txt")).read()
    check("tiled kernel (A not stored" not in fusion,
          "encoder: a matmul runs tiled for want of a stored A:\n" + fusion)
    count = lambda kind: sum(k.split("_", 1)[1] == kind for k in kernels)
    check(count("attention") == 2, "encoder: %d attention kernels, expected 2: %s" %
          (count("attention"), kernels))
    check(count("layer_norm") == 4, "encoder: %d norm kernels, expected 4" % count("layer_norm"))
    # The row-block kernel (subgroups of 8 lanes or more) reads a stored A: one kernel more
    # per layer than the tiled kernel, which gathers A through the exporter's transposes.
    devices = subprocess.run([KILN, "devices"], capture_output=True, text=True).stdout
    chosen = devices[devices.index("\n* ["):] if "\n* [" in devices else devices
    subgroup = int(re.search(r"subgroup size +(\d+)", chosen).group(1))
    per_layer = 8 if subgroup >= 8 else 7
    check(len(kernels) == 2 * per_layer + 3,
          "encoder: %d kernels, expected %d (%d per layer at subgroup size %d): %s" %
          (len(kernels), 2 * per_layer + 3, per_layer, subgroup, kernels))

# A recurrent text model (embedding, two-layer bidirectional LSTM, GRU, head): the layers are
# unrolled, so the sequence length is specialised (one compile per length, batch symbolic).
_, stats, n = run("tagger", ["ids"], ["tags"])
check(stats.get("compiles") == "2", "tagger: %s compiles for 2 sequence lengths" % stats.get("compiles"))
check(stats.get("graph_breaks") == "0", "tagger: %s graph breaks" % stats.get("graph_breaks"))
# A rotary-embedding decoder block: angles from arange(S) inside the graph stay symbolic.
_, stats, n = run("rotary", ["x"], ["y"])
check(stats.get("compiles") == "1", "rotary: %s compiles for %d sizes, expected 1" %
      (stats.get("compiles"), n))
check(stats.get("dynamic_compiles") == "1", "rotary: the compile is not symbolic")
check(stats.get("graph_breaks") == "0", "rotary: %s graph breaks" % stats.get("graph_breaks"))

# torchvision CNNs with random weights (mobilenet_v3_small at width 0.35, shufflenet_v2_x0_5,
# squeezenet1_1; 10 classes): batch, height and width are named dims, so each is a size symbol
# and every spatial size after a stride-2 conv or pool is an expression of them. The sizes avoid
# 1 (specialised) and keep the guards of the first trace (windows fit; squeezenet's last
# ceil-mode pool may overhang a 2-wide map by one column), so one symbolic compile serves all
# three sizes, the 97x20 one included (1 column left at the end).
for model in ("mobilenet_v3", "shufflenet", "squeezenet"):
    _, stats, n = run(model, ["image"], ["scores"])
    check(stats.get("calls") == str(n), "%s: %s calls" % (model, stats.get("calls")))
    check(stats.get("compiles") == "1", "%s: %s compiles for %d sizes, expected 1" %
          (model, stats.get("compiles"), n))
    check(stats.get("dynamic_compiles") == "1", "%s: the compile is not symbolic" % model)
    check(stats.get("graph_breaks") == "0", "%s: %s graph breaks" % (model, stats.get("graph_breaks")))

# Exports that compute their shapes from `Shape` (window padding, shifted-window masks built by
# ScatterND, Expand targets through Where(shape == -1, 1, shape), a causal mask from the target
# length, a class token expanded to the batch): the shape subgraphs fold while tracing, so no
# graph breaks. seq2seq and vit: one compile for all sizes. swin's window and patch-merging pads
# are amounts the Pad needs, guarded per size class (its three sizes fall in three).
for model, inputs, outputs, compiles in (("seq2seq", ["src", "tgt", "src_pad"], ["y"], 1),
                                         ("vit", ["image"], ["scores"], 1),
                                         ("swin", ["image"], ["scores"], 3)):
    _, stats, n = run(model, inputs, outputs)
    check(stats.get("calls") == str(n), "%s: %s calls" % (model, stats.get("calls")))
    check(stats.get("graph_breaks") == "0", "%s: %s graph breaks" % (model, stats.get("graph_breaks")))
    check(stats.get("compiles") == str(compiles), "%s: %s compiles for %d sizes, expected %d" %
          (model, stats.get("compiles"), n, compiles))
    check(stats.get("dynamic_compiles") == stats.get("compiles"), "%s: a compile is not symbolic" % model)

# Detectors from torchvision (SSD; Faster R-CNN with its RPN and RoiAlign): TopK,
# NonMaxSuppression and sizes that depend on the data (boxes above a score threshold, after NMS)
# in one model, on three images whose numbers of candidates differ. A length read as a number is
# guarded at its place in the program, so each image traces once here; on Vulkan no graph runs
# on the interpreter for want of a kernel (NMS and TopK are kernels; NMS's result length, and the
# box counts after it, stay data-dependent sizes).
for model in ("ssd", "faster_rcnn"):
    _, stats, n = run(model, ["image"], ["boxes", "scores", "labels"])
    check(stats.get("calls") == str(n), "%s: %s calls" % (model, stats.get("calls")))

# The fallback count is live: a Relu over 40 concatenated inputs, each with its own named dim,
# needs more size slots than a kernel has, so on Vulkan that graph runs on the interpreter.
if DEVICE == "vulkan":
    import onnx
    from onnx import TensorProto, helper

    d = tempfile.mkdtemp(prefix="kiln-fallback-")
    names = ["x%d" % i for i in range(40)]
    graph = helper.make_graph(
        [helper.make_node("Concat", names, ["y"], axis=0), helper.make_node("Relu", ["y"], ["z"])],
        "fallback", [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["d" + x, 3])
                     for x in names],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              os.path.join(d, "model.onnx"))
    cmd = [KILN, "run", os.path.join(d, "model.onnx"), "--device", DEVICE]
    for k, x in enumerate(names):
        np.save(os.path.join(d, x + ".npy"), np.full((2 + k % 3, 3), k, np.float32))
        cmd += ["-i", "%s=%s" % (x, os.path.join(d, x + ".npy"))]
    p, stats = kiln_run(cmd)
    check(p.returncode == 0 and stats.get("interpreter_fallbacks") == "1",
          "a graph that needs the interpreter: interpreter_fallbacks=%s, expected 1" %
          stats.get("interpreter_fallbacks"))

text, stats, n = run("select", ["x"], ["top_values", "top_indices", "positive"], ["--explain"])
# NonZero is a device kernel with a data-dependent length (a size symbol, no break); TopK is a
# device kernel (topk_indices and a gather), so the model has no break.
check("nonzero has no device lowering" not in text, "select: NonZero is reported as a break")
check(re.search(r"s\d+ = the length of nonzero at NonZero node", text),
      "select: the NonZero length is not a size symbol")
check("topk has no device lowering" not in text, "select: TopK is reported as a break")
check(stats.get("graph_breaks") == "0", "select: %s graph breaks" % stats.get("graph_breaks"))
check(re.search(r"0 graph break\(s\)", text) is not None, "select: expected no break")

# Bad command lines and inputs: one line on stderr and exit 1, never a silent run.
mlp = os.path.join(DATA, "mlp")
x0 = os.path.join(mlp, "0", "x.npy")
bad = tempfile.mkdtemp(prefix="kiln-bad-")
np.save(os.path.join(bad, "x_i32.npy"), np.load(x0).astype(np.int32))
open(os.path.join(bad, "empty.onnx"), "wb").close()
for what, cmd, message in [
        ("an input named twice", ["-i", "x=" + x0, "-i", "x=" + x0], "names input 'x' twice"),
        ("an i32 file for a FLOAT input", ["-i", "x=" + os.path.join(bad, "x_i32.npy")],
         "input 'x' is i32, the model expects FLOAT"),
]:
    p, _ = kiln_run([KILN, "run", os.path.join(mlp, "model.onnx"), "--device", DEVICE] + cmd)
    check(p.returncode == 1 and message in p.stderr,
          "%s: exit %d, stderr %r" % (what, p.returncode, p.stderr[-300:]))
for what, model, message in [
        ("a missing model file", os.path.join(bad, "missing.onnx"), "missing.onnx"),
        ("an empty model file", os.path.join(bad, "empty.onnx"), "empty.onnx: empty"),
]:
    p, _ = kiln_run([KILN, "run", model, "--device", DEVICE, "-i", "x=" + x0])
    check(p.returncode == 1 and message in p.stderr,
          "%s: exit %d, stderr %r" % (what, p.returncode, p.stderr[-300:]))

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
