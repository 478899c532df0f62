#!/usr/bin/env python3
"""The model zoo benchmark: every model of scripts/export-zoo.py's zoo at each of its sizes on
Kiln Vulkan, on Kiln's CPU interpreter, on Kiln Vulkan over SwiftShader, on ONNX Runtime's CPU
provider (2 threads) and on ONNX Runtime's WebGPU provider (its bundled Dawn on Vulkan: lavapipe
here, as for Kiln Vulkan), in one run, interleaved: each round runs every engine once (one process each:
`kiln bench MODEL.onnx --json`, scripts/ort-bench.js), the order rotating between rounds, so
drift on a shared machine hits all engines alike. Steady times pool the timed calls of every
round (median, p90). Prints a table with the ratios, whether each engine's output matches
PyTorch's (|diff| <= 1e-4 * (1 + |expected|)), and the top kernels of every model where Kiln
Vulkan is slower than the interpreter or ONNX Runtime's WebGPU provider, or more than 2x ONNX
Runtime's CPU provider.

Usage: scripts/bench-zoo.py [--rounds 2] [--repeat 3] [--models seed,mlp] [--markdown FILE]
                            [--json FILE] [--engines vulkan,cpu,swiftshader,ort,webgpu]
                            [--peers DIR] [--ort DIR] [--kiln build/kiln] [--zoo build/zoo]
Exports the zoo first (/usr/bin/python3 scripts/export-zoo.py, which needs python3-torch and
python3-torchvision) when ZOO/manifest.json is missing. The slow engines run fewer calls:
the interpreter and ORT WebGPU run sizes above --cpu-max-gflop / --webgpu-max-gflop in the
first round only, SwiftShader skips sizes above --swiftshader-max-gflop.

ONNX Runtime comes from the ONNX Runtime peer (--peers DIR, default $KILN_ORT_PEER, else
build/ortpeer; made by ../shared/peers/setup.sh DIR: onnxruntime-node 1.30.0 and the Vulkan
layer that lets Dawn run on Mesa 22.3's lavapipe); the CPU provider may come from another
DIR/node_modules (--ort DIR, default $KILN_ORT_DIR, else ~/.cache/kiln-ort when it holds
onnxruntime-node, else the peer). SwiftShader is the ICD --swiftshader-icd (default
$SWIFTSHADER_ICD, else Debian chromium's). An engine that cannot run here is n/a, with a note.
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINES = ["vulkan", "cpu", "swiftshader", "ort", "webgpu"]
LABEL = {"vulkan": "Kiln Vulkan", "cpu": "Kiln interpreter", "swiftshader": "Kiln SwiftShader",
         "ort": "ORT CPU", "webgpu": "ORT WebGPU"}
COLUMN = {"vulkan": "Kiln Vulkan", "cpu": "interpreter", "swiftshader": "Kiln SwiftShader",
          "ort": "ORT CPU", "webgpu": "ORT WebGPU"}
ORT_PKG = ("node_modules", "onnxruntime-node")


def log(msg):
    print(f"bench-zoo: {msg}", file=sys.stderr, flush=True)


def ort_problem(ort_dir):
    """None when ONNX Runtime can run, else why not."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not ort_dir or not os.path.isdir(os.path.join(ort_dir, *ORT_PKG)):
        return (f"onnxruntime-node is not installed in {ort_dir or '(no directory)'} "
                "(npm install --ignore-scripts onnxruntime-node@1.30.0 there, --ort DIR, or the "
                "ONNX Runtime peer: --peers DIR)")
    return None


def peer_problem(peers):
    """None when the ONNX Runtime peer can run ORT's WebGPU provider, else why not."""
    if shutil.which("node") is None:
        return "node is not installed"
    setup = f"make it with ../shared/peers/setup.sh {peers}, or pass --peers DIR"
    if not os.path.isdir(os.path.join(peers, *ORT_PKG)):
        return f"no ONNX Runtime peer in {peers} ({setup})"
    manifests = glob.glob(os.path.join(peers, "layer", "*.json"))
    if not manifests:
        return f"no Vulkan layer in {peers}/layer ({setup})"
    for m in manifests:
        try:
            with open(m) as f:
                lib = json.load(f)["layer"]["library_path"]
        except (OSError, ValueError, KeyError) as e:
            return f"unreadable layer manifest {m}: {e}"
        if not os.path.exists(os.path.join(os.path.dirname(m), lib)):
            return f"the layer library {lib} of {m} is not built ({setup})"
    return None


def swiftshader_problem(icd):
    if not os.path.isfile(icd):
        return f"no SwiftShader ICD at {icd} (Debian's chromium package, or --swiftshader-icd)"
    return None


def plan(engine, args):
    """(timed calls per round, GFLOP limit or None, what happens above it: 'first' | 'skip')."""
    if engine == "cpu":
        return args.cpu_repeat, args.cpu_max_gflop, "first"
    if engine == "webgpu":
        return args.webgpu_repeat or args.repeat, args.webgpu_max_gflop, "first"
    if engine == "swiftshader":
        return args.swiftshader_repeat, args.swiftshader_max_gflop, "skip"
    return args.repeat, None, None


def run_engine(engine, args, zoo, size, model_path, first_round):
    """One process of one engine: its JSON document, or {"error": ...}."""
    inputs = [f"{n}={os.path.join(zoo, p)}" for n, p in size["inputs"].items()]
    expects = [f"{n}={os.path.join(zoo, p)}" for n, p in size["expected"].items()]
    env = dict(os.environ)
    repeat = plan(engine, args)[0]
    if engine in ("ort", "webgpu"):
        cmd = ["node", os.path.join(ROOT, "scripts", "ort-bench.js"), model_path,
               "--repeat", str(repeat), "--warmup", "1", "--threads", "2"]
        if engine == "webgpu":
            cmd += ["--ep", "webgpu", "--layers", os.path.join(args.peers, "layer")]
        pkg = args.ort if engine == "ort" else args.peers
        env["NODE_PATH"] = os.path.join(pkg, "node_modules")
    else:
        if engine == "swiftshader":
            env["VK_ICD_FILENAMES"] = args.swiftshader_icd
        cmd = [args.kiln, "bench", model_path, "--json",
               "--device", "cpu" if engine == "cpu" else "vulkan",
               "--repeat", str(repeat), "--warmup", "0" if engine == "cpu" else "1",
               "--flops", str(size["flops"]),
               "--profile", "1" if engine == "vulkan" and first_round else "0"]
    for spec in inputs:
        cmd += ["-i", spec]
    for spec in expects:
        cmd += ["--expect", spec]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout} s"}
    except OSError as e:
        return {"error": f"cannot run {cmd[0]}: {e.strerror}"}
    wall = time.monotonic() - t0
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        lines = [l for l in proc.stderr.strip().splitlines() if l.strip()]
        tool = [l for l in lines if l.startswith(("kiln bench:", "ort-bench:"))]
        return {"error": (tool or lines or [f"exit {proc.returncode}, no output"])[0]}
    doc["process_s"] = wall
    if proc.returncode != 0:
        doc["error"] = f"exit {proc.returncode}"
    device = (doc.get("machine") or {}).get("device") or ""
    if engine == "swiftshader" and "swiftshader" not in device.lower():
        doc["error"] = f"ran on {device or 'an unknown device'}, not SwiftShader"
    return doc


def summarize(runs):
    """Pooled steady times and the first run's other figures of one engine's rounds."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return {"error": runs[0]["error"] if runs else "not run"}
    times = [t for r in ok for t in r["steady"]["times_ms"]]
    times.sort()
    first = ok[0]
    out = {
        "median_ms": statistics.median(times),
        "p90_ms": times[max(1, -(-9 * len(times) // 10)) - 1],
        "round_medians_ms": [r["steady"]["median_ms"] for r in ok],
        "calls": len(times),
        "first_call_ms": [r["first_call_ms"] for r in ok],
        "load_ms": first.get("load_ms"),
        "check": first.get("check"),
    }
    for key in ("kernels", "graphs", "graph_breaks", "compile_ms"):
        if key in first:
            out[key] = first[key]
    profiled = [r for r in ok if r.get("profile")]
    if profiled:
        out["profile"] = profiled[0]["profile"]
    return out


def fmt_ms(v):
    if v is None:
        return "n/a"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def fmt_median(s):
    if "median_ms" in s:
        return fmt_ms(s["median_ms"])
    return "error" if "error" in s else "skipped" if "skipped" in s else "n/a"


def match_text(s):
    c = s.get("check") if s else None
    if not c:
        return "n/a"
    diff = max((o.get("max_abs_diff", float("nan")) for o in c["outputs"]), default=0)
    return f"{'yes' if c['match'] else 'NO'} ({diff:.1e})"


def ratio(a, b):
    if not a or not b or "median_ms" not in a or "median_ms" not in b:
        return None
    return a["median_ms"] / b["median_ms"]


def fmt_ratio(r):
    return "n/a" if r is None else f"{r:.2f}x"


# The ratios the table tracks: (header, numerator, denominator).
RATIOS = [("Kiln ÷ ORT CPU", "vulkan", "ort"), ("interp ÷ ORT CPU", "cpu", "ort"),
          ("Kiln ÷ interp", "vulkan", "cpu"), ("WebGPU ÷ Kiln", "webgpu", "vulkan")]


def flagged_reasons(eng):
    """Why a size's top kernels are listed: Kiln Vulkan slow against another engine."""
    why = []
    r = ratio(eng.get("vulkan"), eng.get("cpu"))
    if r is not None and r > 1:
        why.append("slower than the interpreter")
    r = ratio(eng.get("vulkan"), eng.get("ort"))
    if r is not None and r > 2:
        why.append("more than 2x ORT CPU")
    r = ratio(eng.get("webgpu"), eng.get("vulkan"))
    if r is not None and r < 1:
        why.append("slower than ORT WebGPU")
    return why


def limits_text(meta):
    parts = []
    for e in meta["engines"]:
        lim = meta["limits"].get(e)
        if not lim or lim["max_gflop"] is None:
            continue
        above = "first round only" if lim["above"] == "first" else "skipped"
        parts.append(f"{COLUMN[e]}: {lim['repeat']}, {above} above {lim['max_gflop']:g} GFLOP")
    return f" ({'; '.join(parts)})" if parts else ""


def report(results, meta):
    """Markdown: the figures table, then the top kernels of the flagged models."""
    engines = meta["engines"]
    ratios = [r for r in RATIOS if r[1] in engines and r[2] in engines]
    head = (["model", "size", "GFLOP"] + [f"{COLUMN[e]} ms" for e in engines] +
            [h for h, _, _ in ratios])
    align = ["---", "---", "---:"] + ["---:"] * (len(engines) + len(ratios))
    if "vulkan" in engines:
        head += ["Kiln GFLOP/s", "Kiln first call ms", "kernels"]
        align += ["---:"] * 3
    head += [f"{COLUMN[e]} = PyTorch" for e in engines]
    align += ["---"] * len(engines)
    lines = [
        f"{meta['machine']}; {meta['rounds']} rounds x {meta['repeat']} timed calls"
        f"{limits_text(meta)}, engines interleaved; {meta['date']}.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join(align) + "|",
    ]
    flagged = []
    for r in results:
        eng = r["engines"]
        vk = eng.get("vulkan", {})
        row = [r["model"], r["size"], f"{r['flops'] / 1e9:.2f}"]
        row += [fmt_median(eng.get(e, {})) for e in engines]
        row += [fmt_ratio(ratio(eng.get(a), eng.get(b))) for _, a, b in ratios]
        if "vulkan" in engines:
            gflops = (r["flops"] / 1e6 / vk["median_ms"]) if "median_ms" in vk else None
            row += ["n/a" if gflops is None else f"{gflops:.1f}",
                    fmt_ms(vk["first_call_ms"][0]) if vk.get("first_call_ms") else "n/a",
                    str(vk.get("kernels", "n/a"))]
        row += [match_text(eng.get(e, {})) for e in engines]
        lines.append("| " + " | ".join(row) + " |")
        if flagged_reasons(eng):
            flagged.append(r)
    errors = [(r, e, s["error"]) for r in results for e, s in r["engines"].items()
              if "error" in s]
    if errors:
        lines += ["", "Errors:", ""]
        lines += [f"- {r['model']} {r['size']} on {LABEL[e]}: {msg}" for r, e, msg in errors]
    skipped = {}
    for r in results:
        for e, s in r["engines"].items():
            if "skipped" in s:
                skipped.setdefault(e, []).append(f"{r['model']} {r['size']}")
    for e, sizes in skipped.items():
        lim = meta["limits"][e]
        lines += ["", f"{LABEL[e]} skipped the sizes above {lim['max_gflop']:g} GFLOP "
                  f"(--{e}-max-gflop): {', '.join(sizes)}."]
    for note in meta.get("notes", []):
        lines += ["", note]
    for r in flagged:
        p = r["engines"]["vulkan"].get("profile")
        if not p:
            continue
        vk = r["engines"]["vulkan"]
        lines += ["", f"Top kernels, {r['model']} {r['size']}, Kiln Vulkan "
                  f"{' and '.join(flagged_reasons(r['engines']))} (GPU timestamps of one "
                  f"profiled call: {fmt_ms(p['gpu_ms'])} ms summed over {p['dispatches']} "
                  f"dispatches; steady call {fmt_ms(vk['median_ms'])} ms):", "",
                  "| kernel | pipeline | ms | share |", "|---|---|---:|---:|"]
        for k in p["top_kernels"]:
            lines.append(f"| #{k['index']} | `{k['name']}` | {fmt_ms(k['ms'])} | "
                         f"{100 * k['share']:.1f}% |")
    return "\n".join(lines) + "\n"


def default_ort(peers):
    """--ort's default: $KILN_ORT_DIR, else ~/.cache/kiln-ort when it holds onnxruntime-node,
    else the ONNX Runtime peer when it does."""
    if os.environ.get("KILN_ORT_DIR"):
        return os.environ["KILN_ORT_DIR"]
    cache = os.path.expanduser("~/.cache/kiln-ort")
    for d in (cache, peers):
        if os.path.isdir(os.path.join(d, *ORT_PKG)):
            return d
    return cache


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--kiln", default=os.path.join(ROOT, "build", "kiln"))
    ap.add_argument("--peers", default=os.environ.get(
        "KILN_ORT_PEER", os.path.join(ROOT, "build", "ortpeer")),
                    help="the ONNX Runtime peer (../shared/peers/setup.sh DIR): "
                         "onnxruntime-node and the Vulkan layer for ORT WebGPU "
                         "(default $KILN_ORT_PEER, else build/ortpeer)")
    ap.add_argument("--ort", help="DIR/node_modules has onnxruntime-node for ORT CPU (default "
                                  "$KILN_ORT_DIR, else ~/.cache/kiln-ort if it has it, else "
                                  "--peers)")
    ap.add_argument("--swiftshader-icd", default=os.environ.get(
        "SWIFTSHADER_ICD", "/usr/lib/chromium/vk_swiftshader_icd.json"),
                    help="SwiftShader's Vulkan ICD manifest (default $SWIFTSHADER_ICD, else "
                         "chromium's)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds (processes)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="timed calls per round: Kiln Vulkan, ORT CPU and (by default) ORT WebGPU")
    ap.add_argument("--cpu-repeat", type=int, default=1,
                    help="timed calls per round: Kiln's interpreter (slow)")
    ap.add_argument("--cpu-max-gflop", type=float, default=10,
                    help="sizes above this many GFLOP run the interpreter in the first round "
                         "only")
    ap.add_argument("--webgpu-repeat", type=int,
                    help="timed calls per round: ORT WebGPU (default: --repeat)")
    ap.add_argument("--webgpu-max-gflop", type=float, default=10,
                    help="sizes above this many GFLOP run ORT WebGPU in the first round only")
    ap.add_argument("--swiftshader-repeat", type=int, default=1,
                    help="timed calls per round: Kiln on SwiftShader (very slow)")
    ap.add_argument("--swiftshader-max-gflop", type=float, default=1,
                    help="sizes above this many GFLOP are skipped on SwiftShader")
    ap.add_argument("--models", help="comma-separated subset of the zoo's models")
    ap.add_argument("--engines", default=",".join(ENGINES),
                    help="comma-separated subset of " + ",".join(ENGINES))
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per process")
    ap.add_argument("--markdown", help="also write the report here")
    ap.add_argument("--json", help="also write every result here")
    args = ap.parse_args()
    args.peers = os.path.abspath(args.peers)
    args.ort = os.path.abspath(args.ort or default_ort(args.peers))

    requested = [e for e in args.engines.split(",") if e]
    unknown = [e for e in requested if e not in ENGINES]
    if unknown:
        sys.exit(f"bench-zoo: unknown engine {', '.join(unknown)} (known: {', '.join(ENGINES)})")
    requested = [e for e in ENGINES if e in requested]  # the table's column order
    manifest = os.path.join(args.zoo, "manifest.json")
    if not os.path.exists(manifest):
        log(f"no {manifest}: exporting the zoo (scripts/export-zoo.py)")
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "export-zoo.py"),
                        args.zoo], check=True)
    if not os.access(args.kiln, os.X_OK):
        sys.exit(f"bench-zoo: no kiln at {args.kiln} (build the kiln_cli target, or --kiln)")
    with open(manifest) as f:
        zoo = json.load(f)
    notes, unavailable = [], {}
    for e in requested:
        problem = (ort_problem(args.ort) if e == "ort" else peer_problem(args.peers)
                   if e == "webgpu" else swiftshader_problem(args.swiftshader_icd)
                   if e == "swiftshader" else None)
        if problem:
            unavailable[e] = problem
            notes.append(f"{LABEL[e]} skipped: {problem}.")
            log(notes[-1])
    engines = [e for e in requested if e not in unavailable]
    wanted = args.models.split(",") if args.models else None

    models = zoo["models"]
    if wanted:  # in the order given
        models = [m for w in wanted for m in models if m["name"] == w]
    results = []
    for m in models:
        path = os.path.join(args.zoo, m["model"])
        for size in m["sizes"]:
            above = {e for e in engines
                     if plan(e, args)[1] is not None and size["flops"] > plan(e, args)[1] * 1e9}
            skip = {e for e in above if plan(e, args)[2] == "skip"}
            runs = {e: [] for e in engines if e not in skip}
            live = [e for e in engines if e not in skip]
            for rnd in range(args.rounds):
                order = live[rnd % len(live):] + live[:rnd % len(live)] if live else []
                if rnd > 0:
                    order = [e for e in order if e not in above]
                for e in order:
                    log(f"{m['name']} {size['name']}: round {rnd + 1}/{args.rounds}, {LABEL[e]}")
                    doc = run_engine(e, args, args.zoo, size, path, rnd == 0)
                    if "error" in doc:
                        log(f"  error: {doc['error']}")
                    runs[e].append(doc)
            summary = {e: summarize(rs) for e, rs in runs.items()}
            for e in skip:
                summary[e] = {"skipped": f"{size['flops'] / 1e9:.2f} GFLOP > "
                                         f"--{e}-max-gflop {plan(e, args)[1]:g}"}
            for e, why in unavailable.items():
                summary[e] = {"unavailable": why}
            results.append({"model": m["name"], "size": size["name"], "flops": size["flops"],
                            "shapes": size.get("shapes"),
                            "engines": {e: summary[e] for e in requested},
                            "runs": runs})
            log(f"{m['name']} {size['name']}: " + ", ".join(
                f"{LABEL[e]} {fmt_median(s)}{' ms' if 'median_ms' in s else ''}"
                for e, s in results[-1]["engines"].items()))
            write(args, results, requested, notes)  # after every size: a partial run keeps them
    text = write(args, results, requested, notes)
    print(text)
    return 0


def write(args, results, engines, notes):
    machine = "unknown machine"
    for r in results:
        for doc in r["runs"].get("vulkan", []) + r["runs"].get("cpu", []):
            mm = doc.get("machine")
            if mm:
                machine = (f"{mm.get('cores')} cores ({mm.get('cpu')}), "
                           f"{mm.get('device', 'no Vulkan device')}")
                break
    swiftshader = [doc["machine"].get("device") for r in results
                   for doc in r["runs"].get("swiftshader", [])
                   if doc.get("machine") and "error" not in doc]
    if swiftshader:
        machine += f"; SwiftShader: {swiftshader[0]}"
    limits = {}
    for e in engines:
        repeat, max_gflop, above = plan(e, args)
        limits[e] = {"repeat": repeat, "max_gflop": max_gflop, "above": above}
    meta = {"machine": machine, "rounds": args.rounds, "repeat": args.repeat,
            "cpu_repeat": args.cpu_repeat, "cpu_max_gflop": args.cpu_max_gflop,
            "engines": engines, "limits": limits, "peers": args.peers, "ort": args.ort,
            "swiftshader_icd": args.swiftshader_icd,
            "date": time.strftime("%Y-%m-%d", time.gmtime()), "notes": notes}
    text = report(results, meta)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
    return text


if __name__ == "__main__":
    sys.exit(main())
