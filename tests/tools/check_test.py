#!/usr/bin/env python3
"""`kiln check MODEL.onnx`: every kernel matches the interpreter (exit 0); with the test-only
fault hook (KILN_CHECK_FAULT) on one kernel it names that kernel and its ONNX nodes, writes a
repro and exits 1.

Usage: check_test.py path/to/kiln tests/data/onnx/mlp
Exits 77 (ctest: skipped) when there is no Vulkan device.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def main() -> int:
    kiln, model_dir = sys.argv[1], sys.argv[2]
    model = os.path.join(model_dir, "model.onnx")
    args = ["-i", "x=" + os.path.join(model_dir, "0", "x.npy")]
    failures = []
    tmp = tempfile.mkdtemp(prefix="kiln_check_test_")
    try:
        clean = subprocess.run([kiln, "check", model, "--dump", os.path.join(tmp, "a")] + args,
                               capture_output=True, text=True)
        if "no Vulkan device" in clean.stderr:
            print("skipped:", clean.stderr.strip())
            return 77
        rows = re.findall(r"^  (k\d+_\w+)\s+f32\s+(ok|DIFF)", clean.stdout, re.M)
        if clean.returncode != 0 or not rows or any(r[1] != "ok" for r in rows):
            failures.append(f"without a fault: exit {clean.returncode}, rows {rows}")
        if "every kernel matches the interpreter" not in clean.stdout:
            failures.append("without a fault: no 'every kernel matches' summary")
        if not rows:
            print(clean.stdout, clean.stderr)
            return 1
        target = rows[len(rows) // 2][0]
        env = dict(os.environ, KILN_CHECK_FAULT=target)
        dump = os.path.join(tmp, "b")
        bad = subprocess.run([kiln, "check", model, "--dump", dump] + args,
                             capture_output=True, text=True, env=env)
        if bad.returncode != 1:
            failures.append(f"with a fault in {target}: exit {bad.returncode}, expected 1")
        m = re.search(r"first divergence: (\S+) \(from (.*)\); repro: (\S+)", bad.stdout)
        if not m or m.group(1) != target:
            failures.append(f"with a fault in {target}: first divergence {m.group(1) if m else None}")
        elif " node '" not in m.group(2):
            failures.append(f"the sources do not name the ONNX nodes: {m.group(2)}")
        else:
            repro = m.group(3)
            info = json.load(open(os.path.join(repro, "check.json")))
            if info["kernel"] != target or not os.path.exists(os.path.join(repro, target + ".comp")):
                failures.append(f"repro {repro}: {info.get('kernel')}")
            for i in info["inputs"]:
                if not i["file"] or not os.path.exists(os.path.join(repro, i["file"])):
                    failures.append(f"repro input missing: {i}")
        # The report and inspect show the divergence next to the dump.
        html = os.path.join(tmp, "report.html")
        rep = subprocess.run([kiln, "report", dump, "-o", html], capture_output=True, text=True)
        page = open(html, encoding="utf-8").read() if rep.returncode == 0 else ""
        if not re.search(r'<tr class="check-row"><td>[^<]*</td><td>' + target + "<", page):
            failures.append(f"kiln report: no check-mode row for {target} ({rep.returncode})")
        ins = subprocess.run([kiln, "inspect", dump], capture_output=True, text=True)
        if f"kernel {target} differs" not in ins.stdout or "skipped" in ins.stdout:
            failures.append("kiln inspect: no check-mode line (or a skipped folder):\n" + ins.stdout)
        if f"kernel {target} differs from the interpreter" not in bad.stderr:
            failures.append("no warning naming the kernel")
        for f in failures:
            print("FAIL:", f)
        if not failures:
            print(f"check: {len(rows)} kernels match; the fault in {target} is named")
        return 1 if failures else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
