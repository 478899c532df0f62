#!/usr/bin/env python3
"""`kiln report` end to end: dumps a small `kiln demo --small` run (two strategies, two
lengths: a recompile and a symbolic compile), renders the report with headless Chromium, takes
a screenshot and checks the rendered DOM: a graph SVG per compiled graph, one kernel row per
kernel, the guards, a GLSL view per kernel, and links from kernels to graph nodes.

Usage: report_test.py path/to/kiln [--screenshot OUT.png]
Exits 77 (ctest: skipped) only when there is no Vulkan device; a missing `chromium` or `dot`
fails the test (scripts/install-deps.sh installs both).
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

NO_DEVICE = 77


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return ""


def headless(browser: str, profile: str, args: list) -> subprocess.CompletedProcess:
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           f"--user-data-dir={profile}"] + args
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def main() -> int:
    kiln = sys.argv[1]
    screenshot_out = sys.argv[sys.argv.index("--screenshot") + 1] if "--screenshot" in sys.argv else ""
    browser = chromium()
    failures = []
    if not browser:
        print("FAIL: chromium is not installed (scripts/install-deps.sh installs it)")
        return 1
    if not shutil.which("dot"):
        print("FAIL: Graphviz dot is not installed (scripts/install-deps.sh installs it)")
        return 1
    tmp = tempfile.mkdtemp(prefix="kiln_report_test_")
    try:
        dump = os.path.join(tmp, "dump")
        env = dict(os.environ, KILN_DUMP_DIR=dump, KILN_DUMP_TIMINGS="1")
        demo = subprocess.run([kiln, "demo", "--small", "--strategies", "static,dynamic",
                               "--lengths", "16,32", "--repeat", "2"],
                              capture_output=True, text=True, env=env)
        if "no Vulkan device" in demo.stderr:
            print("skipped:", demo.stderr.strip())
            return NO_DEVICE
        if demo.returncode != 0:
            print(demo.stdout, demo.stderr)
            print(f"FAIL: kiln demo exited with {demo.returncode}")
            return 1

        manifests = [json.load(open(m)) for m in sorted(glob.glob(os.path.join(dump, "*", "manifest.json")))]
        kernels = sum(len(m["kernels"]) for m in manifests)
        # static: compiles at 16 and 32 (a recompile with its reason); dynamic: one symbolic compile.
        if len(manifests) != 3:
            failures.append(f"{len(manifests)} manifests, expected 3")
        if not any(m["recompile"] and "expected 16, got 32" in m["reason"] for m in manifests):
            failures.append("no recompile with its failing guard in the manifests")
        if kernels == 0:
            failures.append("no kernels in the manifests")
        for m in manifests:
            for k in m["kernels"]:
                if not k["source_nodes"] or not k["sources"]:
                    failures.append(f'{m["folder"]} {k["name"]}: no source nodes / locations')

        # kiln inspect: the listing, one kernel, and the guards of the recompile against the first.
        static = sorted(m["folder"] for m in manifests if m["function"] == "encoder_static")
        ls = subprocess.run([kiln, "inspect", dump], capture_output=True, text=True)
        if ls.returncode != 0 or not all(m["folder"] in ls.stdout for m in manifests):
            failures.append(f"kiln inspect does not list every compile ({ls.returncode})")
        kernel = manifests[0]["kernels"][0]
        one = subprocess.run([kiln, "inspect", dump, "-k", f'{manifests[0]["folder"]}/{kernel["name"]}'],
                             capture_output=True, text=True)
        if (one.returncode != 0 or "#version 450" not in one.stdout or "OpEntryPoint" not in one.stdout
                or f'%{kernel["root"]} = ' not in one.stdout):
            failures.append("kiln inspect -k: no source nodes, GLSL or disassembly")
        if len(static) == 2:
            diff = subprocess.run([kiln, "inspect", dump, "--diff-guards"] + static,
                                  capture_output=True, text=True)
            if "- size(input 0, dim 1) == 16" not in diff.stdout or "+ size(input 0, dim 1) == 32" not in diff.stdout:
                failures.append("kiln inspect --diff-guards: the changed size guard is missing:\n" + diff.stdout)
        else:
            failures.append(f"{len(static)} encoder_static compiles, expected 2")

        html = os.path.join(tmp, "report.html")
        rep = subprocess.run([kiln, "report", dump, "-o", html], capture_output=True, text=True)
        if rep.returncode != 0:
            print(rep.stdout, rep.stderr)
            print("FAIL: kiln report exited with", rep.returncode)
            return 1
        text = open(html, encoding="utf-8").read()
        if re.search(r'(src|href)="(https?:)?//', text):
            failures.append("the page loads something over the network")

        profile = os.path.join(tmp, "profile")
        dom = headless(browser, profile, ["--dump-dom", "file://" + html])
        if dom.returncode != 0 or "<body" not in dom.stdout:
            print(dom.stderr[-2000:])
            failures.append(f"chromium --dump-dom failed ({dom.returncode})")
        d = dom.stdout
        svgs = len(re.findall(r'<div class="graph"><svg', d))
        rows = len(re.findall(r'<tr class="kernel-row"', d))
        glsl = re.findall(r'<pre class="glsl">(.*?)</pre>', d, re.S)
        guards = re.findall(r'<pre class="guards">(.*?)</pre>', d, re.S)
        if svgs != len(manifests):
            failures.append(f"{svgs} graph SVGs in the DOM, expected {len(manifests)}")
        if rows != kernels:
            failures.append(f"{rows} kernel rows in the DOM, expected {kernels}")
        if len(glsl) != kernels or not all("#version 450" in g and "main" in g for g in glsl):
            failures.append(f"{len(glsl)} GLSL views (expected {kernels}, each with #version 450)")
        if len(guards) != len(manifests) or not all("size(input 0" in g or "symbolic_sizes" in g for g in guards):
            failures.append(f"{len(guards)} guard lists, expected {len(manifests)} naming input sizes")
        # Kernel -> graph node links resolve to ids inside the SVG, and graph -> kernel back.
        for target in set(re.findall(r'href="#(n-[^"]+)"', d)):
            if f'id="{target}"' not in d:
                failures.append(f"link #{target} has no target")
                break
        if not re.search(r'<a xlink:href="#k-|<a href="#k-', d) or 'class="kernel"' not in d:
            failures.append("no links from the graph to the kernels")
        if "ms / call" not in d or not re.search(r'<td class="num">0\.\d+</td>', d):
            failures.append("no kernel timings in the kernel table")

        png = os.path.join(tmp, "report.png")
        shot = headless(browser, profile, [f"--screenshot={png}", "--window-size=1280,1100",
                                           "file://" + html])
        if shot.returncode != 0 or not os.path.exists(png) or os.path.getsize(png) < 20000:
            failures.append(f"no screenshot ({shot.returncode}): {shot.stderr[-500:]}")
        elif open(png, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
            failures.append("the screenshot is not a PNG")
        elif screenshot_out:
            shutil.copyfile(png, screenshot_out)
            print("screenshot:", screenshot_out)
        for f in failures:
            print("FAIL:", f)
        if not failures:
            print(f"report: {len(manifests)} graphs, {kernels} kernel rows, {len(glsl)} GLSL views, "
                  f"{len(text)} bytes")
        return 1 if failures else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
