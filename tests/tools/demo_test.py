#!/usr/bin/env python3
"""Runs `kiln demo --small --json` and checks the seed's compile counts and the interpreter check.

Usage: demo_test.py path/to/kiln. Exits 77 (ctest: skipped) when there is no Vulkan device.
"""
import json
import sys

from kiln_json import NO_DEVICE, run_json

EXPECTED_COMPILES = {"static": 5, "dynamic": 1, "auto": 2, "warm-up": 0}


def main() -> int:
    doc, failures = run_json(sys.argv[1], ["demo", "--small", "--json"])
    if doc is None:
        return NO_DEVICE
    summary = {s["strategy"]: s for s in doc["summary"]}
    for name, want in EXPECTED_COMPILES.items():
        got = summary.get(name, {}).get("compiles")
        if got != want:
            failures.append(f"{name}: {got} compiles in the timed sweep, expected {want}")
    if summary.get("warm-up", {}).get("warmup_compiles") != 5:
        failures.append("warm-up: expected 5 compiles in the warm-up sweep")
    lengths = doc["config"]["lengths"]
    for row in doc["rows"]:
        where = f'{row["strategy"]} S={row["seq_len"]}'
        if "error" in row:
            failures.append(f'{where}: {row["error"]}')
        want = "match" if row["seq_len"] == min(lengths) else "skipped"
        if row["check"] != want:
            failures.append(f'{where}: check {row["check"]}, expected {want}')
        if row["kernels"] <= 0:
            failures.append(f"{where}: no kernels reported")
    if len(doc["rows"]) != len(EXPECTED_COMPILES) * len(lengths):
        failures.append(f'{len(doc["rows"])} rows')
    if doc["validation_errors"] != 0:
        failures.append(f'{doc["validation_errors"]} validation-layer errors')
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(json.dumps(doc["summary"], indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
