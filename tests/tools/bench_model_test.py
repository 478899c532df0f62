#!/usr/bin/env python3
"""Runs `kiln bench MODEL.onnx --json` on the small encoder of tests/data/onnx on Vulkan and on
the interpreter, and checks the document's structure: every figure present and a number (or
null where documented), the per-kernel table consistent with the kernel count, and the outputs
matching the committed reference. Timings are never asserted.

Usage: bench_model_test.py path/to/kiln. The Vulkan half is skipped (exit 77 overall, when the
interpreter half passes) when there is no Vulkan device.
"""
import math
import os
import subprocess
import sys

from kiln_json import NO_DEVICE, run_json

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "onnx", "encoder")
FLOPS = 1.5e6  # any positive figure: GFLOP/s must then be a number


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check(doc, device, failures):
    where = device
    for key in ("load_ms", "first_call_ms", "compile_ms", "gflop", "gflops"):
        if not is_number(doc.get(key)):
            failures.append(f"{where}: {key} = {doc.get(key)!r}, expected a number")
    steady = doc.get("steady", {})
    for key in ("median_ms", "p90_ms", "min_ms"):
        if not is_number(steady.get(key)):
            failures.append(f"{where}: steady.{key} = {steady.get(key)!r}")
    times = steady.get("times_ms", [])
    if steady.get("calls") != 3 or len(times) != 3 or not all(is_number(t) for t in times):
        failures.append(f"{where}: steady calls {steady.get('calls')}, times {times!r}")
    elif not min(times) <= steady["median_ms"] <= steady["p90_ms"] <= max(times):
        failures.append(f"{where}: min <= median <= p90 <= max does not hold: {steady}")
    if doc.get("device") != device:
        failures.append(f"{where}: device {doc.get('device')!r}")
    if doc.get("compiles") != 1 or doc.get("graphs") != 1 or doc.get("graph_breaks") != 0:
        failures.append(f"{where}: compiles/graphs/breaks "
                        f"{doc.get('compiles')}/{doc.get('graphs')}/{doc.get('graph_breaks')}")
    if [o.get("name") for o in doc.get("outputs", [])] != ["logits"]:
        failures.append(f"{where}: outputs {doc.get('outputs')!r}")
    if "ids" not in doc.get("inputs", {}):
        failures.append(f"{where}: inputs {doc.get('inputs')!r}")
    chk = doc.get("check") or {}
    outs = chk.get("outputs", [])
    if chk.get("match") is not True or len(outs) != 1 or not is_number(outs[0].get("max_abs_diff")):
        failures.append(f"{where}: check {chk!r}")
    if doc.get("validation_errors") != 0 or doc.get("ok") is not True:
        failures.append(f"{where}: validation_errors {doc.get('validation_errors')}, "
                        f"ok {doc.get('ok')}")
    kernels = doc.get("kernels")
    profile = doc.get("profile")
    if device == "cpu":
        if kernels != 0 or profile is not None:
            failures.append(f"{where}: kernels {kernels}, profile {profile!r} on the interpreter")
        return
    if not isinstance(kernels, int) or kernels <= 0:
        failures.append(f"{where}: kernels {kernels!r}, expected a positive count")
    if profile is None:  # a device without timestamps reports none; lavapipe has them
        print(f"{where}: no per-kernel times (the device reports no timestamps)")
        return
    if profile.get("dispatches", 0) < (kernels or 0) or not is_number(profile.get("gpu_ms")):
        failures.append(f"{where}: profile {profile.get('dispatches')} dispatches, "
                        f"gpu_ms {profile.get('gpu_ms')!r}")
    top = profile.get("top_kernels", [])
    if not 0 < len(top) <= 4:
        failures.append(f"{where}: {len(top)} top kernels with --top 4")
    for k in top + profile.get("by_name", []):
        if not isinstance(k.get("name"), str) or not k["name"]:
            failures.append(f"{where}: kernel without a name: {k!r}")
        if not is_number(k.get("ms")) or not is_number(k.get("share")) or not 0 <= k["share"] <= 1:
            failures.append(f"{where}: kernel figures {k!r}")
    if [k["ms"] for k in top] != sorted((k["ms"] for k in top), reverse=True):
        failures.append(f"{where}: top kernels not sorted by time")
    counted = sum(k.get("count", 0) for k in profile.get("by_name", []))
    if counted > profile.get("dispatches", 0) or counted <= 0:
        failures.append(f"{where}: by_name counts {counted} dispatches of "
                        f"{profile.get('dispatches')}")


def main() -> int:
    model = os.path.join(DATA, "model.onnx")
    common = [model, "-i", f"ids={DATA}/1/ids.npy", "--expect", f"logits={DATA}/1/logits.npy",
              "--repeat", "3", "--top", "4", "--flops", str(FLOPS), "--json"]
    failures = []
    doc, f = run_json(sys.argv[1], ["bench"] + common + ["--device", "cpu"])
    failures += f
    check(doc, "cpu", failures)
    doc, f = run_json(sys.argv[1], ["bench"] + common + ["--device", "vulkan", "--profile", "2"])
    vulkan = doc is not None
    if vulkan:
        failures += f
        check(doc, "vulkan", failures)
    # Bad input is a clear error, not a crash.
    proc = subprocess.run([sys.argv[1], "bench", model, "--device", "cpu", "--json"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 1 or "no file for graph input 'ids" not in proc.stderr:
        failures.append(f"no -i: exit {proc.returncode}, stderr {proc.stderr!r}")
    for msg in failures:
        print("FAIL:", msg)
    if failures:
        return 1
    print("ok" if vulkan else "interpreter ok; Vulkan skipped")
    return 0 if vulkan else NO_DEVICE


if __name__ == "__main__":
    sys.exit(main())
