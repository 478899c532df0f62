#!/usr/bin/env python3
"""`kiln demo --background --json` and `kiln precompile`: background compilation end to end.

The demo part checks what served each first call, that both the interpreter's answer and the
compiled kernels' match, and the bound fields (not their values: timings are not asserted).
The precompile part fills a fresh cache directory, then runs the model in a new process on it
and checks that the compiled graph was a cache hit with no kernel compiled, and that with
KILN_PREWARM=1 the device recreates the stored pipelines as it opens and warms each with an
empty dispatch (under the validation layer, like every test).

Usage: background_tools_test.py path/to/kiln path/to/model_dir. Exits 77 (ctest: skipped)
when there is no Vulkan device.
"""
import os
import subprocess
import sys
import tempfile

from kiln_json import NO_DEVICE, run_json

SERVED = {"interp", "cover", "compiled"}


def demo(kiln: str, failures: list) -> bool:
    doc, fails = run_json(kiln, ["demo", "--small", "--json", "--background", "--strategies",
                                 "static,auto", "--lengths", "16,32,48", "--repeat", "2"])
    if doc is None:
        return False
    failures += fails
    if not doc["config"].get("background"):
        failures.append("config.background is not set")
    compiles = {s["strategy"]: s["compiles"] for s in doc["summary"]}
    if compiles != {"static": 3, "auto": 2}:
        failures.append(f"compiles in the sweep {compiles}, expected static 3, auto 2")
    for row in doc["rows"]:
        where = f'{row["strategy"]} S={row["seq_len"]}'
        if "error" in row:
            failures.append(f'{where}: {row["error"]}')
        if row.get("served") not in SERVED:
            failures.append(f'{where}: served {row.get("served")!r}')
        if not row["on_device"]:
            failures.append(f"{where}: the steady calls did not run compiled kernels")
        for key in ("worst_ms", "bound_ms", "steady_ms"):
            if not isinstance(row.get(key), (int, float)) or row[key] <= 0:
                failures.append(f"{where}: {key} = {row.get(key)!r}")
        want = "match" if row["seq_len"] == 16 else "skipped"
        if row["check"] != want:
            failures.append(f'{where}: check {row["check"]}, expected {want}')
    # A new static size always traces: its first call cannot have run compiled kernels.
    for row in doc["rows"]:
        if row["strategy"] == "static" and row["served"] == "compiled":
            failures.append(f'static S={row["seq_len"]}: a new size was served compiled')
    if doc["validation_errors"] != 0:
        failures.append(f'{doc["validation_errors"]} validation-layer errors')
    return True


def npy_shape(path: str) -> tuple:
    """The shape in a .npy header (version 1 or 2), without numpy."""
    with open(path, "rb") as f:
        head = f.read(12)
        size = int.from_bytes(head[8:10], "little") if head[6] == 1 else int.from_bytes(
            head[8:12], "little")
        f.seek(10 if head[6] == 1 else 12)
        header = f.read(size).decode("latin1")
    shape = header.split("'shape':")[1].split(")")[0].strip(" (")
    return tuple(int(d) for d in shape.split(",") if d.strip())


def precompile(kiln: str, model_dir: str, failures: list) -> None:
    with tempfile.TemporaryDirectory() as cache:
        model = os.path.join(model_dir, "model.onnx")
        x = os.path.join(model_dir, "0", "x.npy")
        pre = subprocess.run([kiln, "precompile", model, "--cache-dir", cache, "--shape",
                              "x=" + "x".join(str(d) for d in npy_shape(x))],
                             capture_output=True, text=True)
        sys.stderr.write(pre.stderr)
        print(pre.stdout, end="")
        if pre.returncode != 0:
            failures.append(f"kiln precompile exited with {pre.returncode}")
            return
        if "compiled " not in pre.stdout:
            failures.append("kiln precompile printed no compiled call")
        args = [kiln, "run", model, "-i", "x=" + x]
        env = dict(os.environ, KILN_CACHE_DIR=cache, KILN_LOGS="cache")
        run = subprocess.run(args, capture_output=True, text=True, env=env)
        if run.returncode != 0:
            sys.stderr.write(run.stderr)
            failures.append(f"kiln run on the precompiled cache exited with {run.returncode}")
            return
        if "hit, no kernel compiled" not in run.stderr:
            sys.stderr.write(run.stderr)
            failures.append("kiln run on the precompiled cache compiled kernels")
        # KILN_PREWARM=1: the device recreates the stored pipeline set as it opens and
        # dispatches each pipeline once with an empty grid (the driver's first-dispatch compile).
        env["KILN_PREWARM"] = "1"
        run = subprocess.run(args, capture_output=True, text=True, env=env)
        created = [l for l in run.stderr.splitlines() if "pipelines created ahead" in l]
        if run.returncode != 0 or not created or " 0 of " in created[0]:
            sys.stderr.write(run.stderr)
            failures.append("KILN_PREWARM=1 did not recreate the precompiled pipelines")
        elif "and warmed" not in created[0]:
            sys.stderr.write(run.stderr)
            failures.append("KILN_PREWARM=1 recreated the pipelines but did not warm them")


def main() -> int:
    failures = []
    if not demo(sys.argv[1], failures):
        return NO_DEVICE
    precompile(sys.argv[1], sys.argv[2], failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
