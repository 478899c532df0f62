#!/usr/bin/python3
"""Writes the seed corpora of the libFuzzer targets (corpus/<reader>/): small valid files and
edge cases of each format. Run from anywhere with Debian's python3 (python3-numpy, python3-onnx);
the output is committed, so this only needs rerunning when a format changes."""
import io
import os
import struct

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "data", "onnx")


def write(reader, name, data):
    d = os.path.join(HERE, "corpus", reader)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# --- persistent cache files (runtime/cache/cache_file.cpp); first byte: harness mode ----------
def fnv(b, h=1469598103934665603):
    for c in b:
        h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def cache_file(kind, version, identity, key, payload, fmt=1):
    out = b"KILNCACH" + struct.pack("<IIQQIIII", fmt, kind, len(payload), fnv(payload),
                                    len(version), len(identity), len(key), 0)
    out += version + identity + key
    out += struct.pack("<Q", fnv(out))
    return out + payload


V, I, K = b"0.1.0", b"lavapipe 0.0.1", b"k1_add"  # what fuzz_cache_file.cpp expects
good = cache_file(1, V, I, K, b"\x03\x02\x23\x07" + bytes(range(28)))
for name, data in {
    "valid": b"\0" + good,
    "valid_fixup": b"\1" + good,
    "empty_payload": b"\0" + cache_file(1, V, I, K, b""),
    "wrong_key": b"\0" + cache_file(1, V, I, b"k2_mul", b"abc"),
    "foreign_driver": b"\0" + cache_file(1, V, b"radv 23.0", K, b"abc"),
    "old_kiln": b"\0" + cache_file(1, b"0.0.9", I, K, b"abc"),
    "wrong_kind": b"\1" + cache_file(3, V, I, K, b"abc"),
    "format_v2": b"\1" + cache_file(1, V, I, K, b"abc", fmt=2),
    "truncated_header": b"\0" + good[:30],
    "truncated_payload": b"\1" + good[:-5],
    "trailing_bytes": b"\1" + good + b"xx",
    "huge_lengths": b"\1" + good[:32] + b"\xff\xff\xff\x7f" * 3 + good[44:],
}.items():
    write("cache_file", name, data)


# --- .npy (runtime/io/) --------------------------------------------------------------------------
def npy(name, a, version=None):
    f = io.BytesIO()
    np.lib.format.write_array(f, a, version=version)
    write("npy", name + ".npy", f.getvalue())


npy("f32_2x3", np.arange(6, dtype="<f4").reshape(2, 3))
npy("f32_scalar", np.array(3.5, dtype="<f4"))
npy("f32_empty", np.zeros((0, 4), dtype="<f4"))
npy("f32_rank4", np.ones((1, 1, 1, 2), dtype="<f4"))
npy("f32_v2", np.arange(4, dtype="<f4"), version=(2, 0))
npy("f32_v3", np.arange(4, dtype="<f4"), version=(3, 0))
npy("f16", np.array([0.5, -1, 65504, np.nan], dtype="<f2"))
npy("i64", np.array([1, -2, 3], dtype="<i8"))
npy("i32_big_endian", np.array([[1, 2], [3, 4]], dtype=">i4"))
npy("bool", np.array([True, False, True]))
npy("f64_unsupported", np.array([1.0], dtype="<f8"))
npy("fortran_order", np.asfortranarray(np.ones((2, 3), dtype="<f4")))


# --- .onnx models and TensorProtos (runtime/onnx/) -------------------------------------------
for model in ("select", "mlp", "cnn"):  # PyTorch exports (tests/data/onnx)
    with open(os.path.join(DATA, model, "model.onnx"), "rb") as f:
        write("onnx", model + ".onnx", f.read())


def model(name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    write("onnx", name + ".onnx", m.SerializeToString())


f32 = TensorProto.FLOAT
model("add", [helper.make_node("Add", ["x", "y"], ["z"])],
      [helper.make_tensor_value_info("x", f32, [2, 3]),
       helper.make_tensor_value_info("y", f32, [3])],
      [helper.make_tensor_value_info("z", f32, None)])
# Shape arithmetic on a named dim, attributes and an int64 initializer.
model("shape_arith",
      [helper.make_node("Shape", ["x"], ["s"]),
       helper.make_node("Gather", ["s", "zero"], ["n"]),
       helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
       helper.make_node("Concat", ["n1", "four"], ["t"], axis=0),
       helper.make_node("ConstantOfShape", ["t"], ["c"]),
       helper.make_node("Add", ["x", "c"], ["a"]),
       helper.make_node("Softmax", ["a"], ["y"], axis=-1)],
      [helper.make_tensor_value_info("x", f32, ["n", 4])],
      [helper.make_tensor_value_info("y", f32, None)],
      [numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
       numpy_helper.from_array(np.array([0], dtype=np.int64), "axes"),
       numpy_helper.from_array(np.array([4], dtype=np.int64), "four")])
model("reshape_matmul",
      [helper.make_node("Reshape", ["x", "shape"], ["r"]),
       helper.make_node("MatMul", ["r", "w"], ["m"]),
       helper.make_node("Relu", ["m"], ["y"])],
      [helper.make_tensor_value_info("x", f32, [2, 2, 2])],
      [helper.make_tensor_value_info("y", f32, None)],
      [numpy_helper.from_array(np.array([2, 4], dtype=np.int64), "shape"),
       numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "w")])
t = helper.make_tensor("t", f32, [3, 4], [i * 0.5 for i in range(12)])
write("onnx", "tensor_float_data.pb", t.SerializeToString())
r = numpy_helper.from_array(np.arange(12, dtype=np.int64).reshape(3, 4), "r")
write("onnx", "tensor_raw_int64.pb", r.SerializeToString())
