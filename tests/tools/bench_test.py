#!/usr/bin/env python3
"""Runs `kiln bench --quick --json` and checks the document's structure: every benchmark is
there, ran without error, and reports numeric values. Timings are never asserted.

Usage: bench_test.py path/to/kiln. Exits 77 (ctest: skipped) when there is no Vulkan device.
"""
import json
import math
import sys

from kiln_json import NO_DEVICE, run_json

# Per benchmark: metrics that must be numbers (the others may be null: "n/a", e.g. a figure
# the runtime does not report yet).
REQUIRED = {
    "chain": ["fused_ms", "unfused_ms", "fused_kernels", "unfused_kernels"],
    "copy": ["fused_ms", "copy_ms", "fused_gbps", "copy_gbps"],
    "gemm": ["ab_ms", "abt_ms", "atb_ms", "ab_gflops", "abt_gflops", "atb_gflops"],
    "conv": ["device_ms", "cpu_ms", "kernels", "cpu_gflops", "max_abs_diff"],
    "overhead": ["call_us", "cpu_call_us", "submissions_per_call", "dispatches_per_call",
                 "command_buffers_recorded_per_call", "buffer_allocations_per_call",
                 "memory_allocations_per_call"],
    "start": ["cold_first_call_ms", "warm_first_call_ms", "cold_process_ms", "warm_process_ms"],
    "memory": ["weights_mib", "peak_mib", "first_call_peak_mib", "peak_over_weights",
               "largest_live_mib", "arena_mib"],
}
# Benchmarks whose headline figure must be a number.
FIGURE_REQUIRED = ["chain", "copy", "gemm", "conv", "overhead", "start", "memory"]


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def main() -> int:
    doc, failures = run_json(sys.argv[1], ["bench", "--quick", "--json"])
    if doc is None:
        return NO_DEVICE
    if not doc.get("quick"):
        failures.append("quick is not set in the document")
    for key in ("cpu", "cores", "date"):
        if key not in doc.get("machine", {}):
            failures.append(f"machine.{key} missing")
    benchmarks = doc.get("benchmarks", {})
    for name, metrics in REQUIRED.items():
        b = benchmarks.get(name)
        if b is None:
            failures.append(f"{name}: missing")
            continue
        if "error" in b:
            failures.append(f'{name}: {b["error"]}')
        for key, value in b["metrics"].items():
            if value is not None and not is_number(value):
                failures.append(f"{name}.{key}: {value!r} is neither a number nor null")
            if key not in b["units"]:
                failures.append(f"{name}.{key}: no unit")
        for key in metrics:
            if not is_number(b["metrics"].get(key)):
                failures.append(f'{name}.{key}: {b["metrics"].get(key)!r}, expected a number')
        fig = b.get("figure", {})
        for key in ("key", "label", "value", "unit", "goal_op", "goal", "met"):
            if key not in fig:
                failures.append(f"{name}.figure.{key} missing")
        if name in FIGURE_REQUIRED and not is_number(fig.get("value")):
            failures.append(f'{name}.figure.value: {fig.get("value")!r}, expected a number')
        if fig.get("value") is not None and fig.get("goal") is not None and fig.get("met") is None:
            failures.append(f"{name}.figure.met: null although value and goal are numbers")
    if set(benchmarks) != set(REQUIRED):
        failures.append(f"benchmarks {sorted(benchmarks)}, expected {sorted(REQUIRED)}")
    over = benchmarks.get("overhead", {}).get("metrics", {})
    if over.get("dispatches_per_call") != 1:
        failures.append(f'overhead: {over.get("dispatches_per_call")} dispatches per call, '
                        "expected 1")
    if doc.get("validation_errors") != 0:
        failures.append(f'{doc.get("validation_errors")} validation-layer errors')
    if doc.get("ok") is not True:
        failures.append("ok is not true")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(json.dumps({n: b["figure"] for n, b in benchmarks.items()}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
