#!/usr/bin/env python3
"""The model zoo benchmark: every model of scripts/export-zoo.py's zoo at each of its sizes on
Kiln Vulkan, on Kiln's CPU interpreter and on ONNX Runtime's CPU provider (2 threads), in one
run, interleaved: each round runs every engine once (one process each: `kiln bench MODEL.onnx
--json`, scripts/ort-bench.js), the order rotating between rounds, so drift on a shared machine
hits all engines alike. Steady times pool the timed calls of every round (median, p90).
Prints a table with the ratios, whether each engine's output matches PyTorch's
(|diff| <= 1e-4 * (1 + |expected|)), and the top kernels of every model where Kiln Vulkan is
slower than the interpreter or more than 2x ONNX Runtime.

Usage: scripts/bench-zoo.py [--rounds 2] [--repeat 3] [--models seed,mlp] [--markdown FILE]
                            [--json FILE] [--ort DIR] [--kiln build/kiln] [--zoo build/zoo]
Exports the zoo first (/usr/bin/python3 scripts/export-zoo.py, which needs python3-torch and
python3-torchvision) when ZOO/manifest.json is missing. ONNX Runtime comes from DIR/node_modules
(`npm install --ignore-scripts onnxruntime-node@1.30.0` in DIR; default $KILN_ORT_DIR, else
~/.cache/kiln-ort); without node or the package its columns are n/a, with a note.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINES = ["vulkan", "cpu", "ort"]
LABEL = {"vulkan": "Kiln Vulkan", "cpu": "Kiln interpreter", "ort": "ORT CPU"}


def log(msg):
    print(f"bench-zoo: {msg}", file=sys.stderr, flush=True)


def ort_problem(ort_dir):
    """None when ONNX Runtime can run, else why not."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not ort_dir or not os.path.isdir(os.path.join(ort_dir, "node_modules",
                                                     "onnxruntime-node")):
        return (f"onnxruntime-node is not installed in {ort_dir or '(no directory)'} "
                "(npm install --ignore-scripts onnxruntime-node@1.30.0 there, or --ort DIR)")
    return None


def run_engine(engine, args, zoo, size, model_path, first_round):
    """One process of one engine: its JSON document, or {"error": ...}."""
    inputs = [f"{n}={os.path.join(zoo, p)}" for n, p in size["inputs"].items()]
    expects = [f"{n}={os.path.join(zoo, p)}" for n, p in size["expected"].items()]
    env = dict(os.environ)
    if engine == "ort":
        cmd = ["node", os.path.join(ROOT, "scripts", "ort-bench.js"), model_path,
               "--repeat", str(args.repeat), "--warmup", "1", "--threads", "2"]
        env["NODE_PATH"] = os.path.join(args.ort, "node_modules")
    else:
        repeat = args.repeat if engine == "vulkan" else args.cpu_repeat
        cmd = [args.kiln, "bench", model_path, "--json", "--device", engine,
               "--repeat", str(repeat), "--warmup", "1" if engine == "vulkan" else "0",
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


def report(results, meta):
    """Markdown: the figures table, then the top kernels of the flagged models."""
    lines = [
        f"{meta['machine']}; {meta['rounds']} rounds x {meta['repeat']} timed calls "
        f"(interpreter: {meta['cpu_repeat']}, first round only above "
        f"{meta['cpu_max_gflop']:g} GFLOP), engines interleaved; {meta['date']}.",
        "",
        "| model | size | GFLOP | Kiln Vulkan ms | interpreter ms | ORT CPU ms | "
        "Kiln ÷ interp | Kiln ÷ ORT | Kiln GFLOP/s | Kiln first call ms | kernels | "
        "Kiln = PyTorch | ORT = PyTorch |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    flagged = []
    for r in results:
        vk, cpu, ort = (r["engines"].get(e, {}) for e in ENGINES)
        med = lambda s: fmt_ms(s.get("median_ms")) if "median_ms" in s else (
            "error" if "error" in s else "n/a")
        gflops = (r["flops"] / 1e6 / vk["median_ms"]) if "median_ms" in vk else None
        first = fmt_ms(vk["first_call_ms"][0]) if vk.get("first_call_ms") else "n/a"
        lines.append(
            f"| {r['model']} | {r['size']} | {r['flops'] / 1e9:.2f} | {med(vk)} | {med(cpu)} | "
            f"{med(ort)} | {fmt_ratio(ratio(vk, cpu))} | {fmt_ratio(ratio(vk, ort))} | "
            f"{'n/a' if gflops is None else f'{gflops:.1f}'} | {first} | "
            f"{vk.get('kernels', 'n/a')} | {match_text(vk)} | {match_text(ort)} |")
        rc, ro = ratio(vk, cpu), ratio(vk, ort)
        if (rc is not None and rc > 1) or (ro is not None and ro > 2):
            flagged.append(r)
    errors = [(r, e, s["error"]) for r in results for e, s in r["engines"].items()
              if "error" in s]
    if errors:
        lines += ["", "Errors:", ""]
        lines += [f"- {r['model']} {r['size']} on {LABEL[e]}: {msg}" for r, e, msg in errors]
    for note in meta.get("notes", []):
        lines += ["", note]
    for r in flagged:
        p = r["engines"]["vulkan"].get("profile")
        if not p:
            continue
        vk = r["engines"]["vulkan"]
        lines += ["", f"Top kernels, {r['model']} {r['size']} (GPU timestamps of one profiled "
                  f"call: {fmt_ms(p['gpu_ms'])} ms summed over {p['dispatches']} dispatches; "
                  f"steady call {fmt_ms(vk['median_ms'])} ms):", "",
                  "| kernel | pipeline | ms | share |", "|---|---|---:|---:|"]
        for k in p["top_kernels"]:
            lines.append(f"| #{k['index']} | `{k['name']}` | {fmt_ms(k['ms'])} | "
                         f"{100 * k['share']:.1f}% |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    ap.add_argument("--kiln", default=os.path.join(ROOT, "build", "kiln"))
    ap.add_argument("--ort", default=os.environ.get(
        "KILN_ORT_DIR", os.path.expanduser("~/.cache/kiln-ort")))
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds (processes)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="timed calls per round: Kiln Vulkan and ORT")
    ap.add_argument("--cpu-repeat", type=int, default=1,
                    help="timed calls per round: Kiln's interpreter (slow)")
    ap.add_argument("--cpu-max-gflop", type=float, default=10,
                    help="sizes above this many GFLOP run the interpreter in the first round "
                         "only")
    ap.add_argument("--models", help="comma-separated subset of the zoo's models")
    ap.add_argument("--engines", default=",".join(ENGINES),
                    help="comma-separated subset of vulkan,cpu,ort")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per process")
    ap.add_argument("--markdown", help="also write the report here")
    ap.add_argument("--json", help="also write every result here")
    args = ap.parse_args()

    manifest = os.path.join(args.zoo, "manifest.json")
    if not os.path.exists(manifest):
        log(f"no {manifest}: exporting the zoo (scripts/export-zoo.py)")
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "export-zoo.py"),
                        args.zoo], check=True)
    if not os.access(args.kiln, os.X_OK):
        sys.exit(f"bench-zoo: no kiln at {args.kiln} (build the kiln_cli target, or --kiln)")
    with open(manifest) as f:
        zoo = json.load(f)
    engines = args.engines.split(",")
    notes = []
    if "ort" in engines:
        problem = ort_problem(args.ort)
        if problem:
            notes.append(f"ONNX Runtime skipped: {problem}.")
            log(notes[-1])
            engines.remove("ort")
    wanted = args.models.split(",") if args.models else None

    models = zoo["models"]
    if wanted:  # in the order given
        models = [m for w in wanted for m in models if m["name"] == w]
    results = []
    for m in models:
        path = os.path.join(args.zoo, m["model"])
        for size in m["sizes"]:
            runs = {e: [] for e in engines}
            for rnd in range(args.rounds):
                order = engines[rnd % len(engines):] + engines[:rnd % len(engines)]
                if rnd > 0 and size["flops"] > args.cpu_max_gflop * 1e9:
                    order = [e for e in order if e != "cpu"]
                for e in order:
                    log(f"{m['name']} {size['name']}: round {rnd + 1}/{args.rounds}, {LABEL[e]}")
                    doc = run_engine(e, args, args.zoo, size, path, rnd == 0)
                    if "error" in doc:
                        log(f"  error: {doc['error']}")
                    runs[e].append(doc)
            results.append({"model": m["name"], "size": size["name"], "flops": size["flops"],
                            "shapes": size.get("shapes"),
                            "engines": {e: summarize(rs) for e, rs in runs.items()},
                            "runs": runs})
            log(f"{m['name']} {size['name']}: " + ", ".join(
                f"{LABEL[e]} {fmt_ms(s.get('median_ms'))} ms"
                for e, s in results[-1]["engines"].items()))
            write(args, results, notes)  # after every size: a partial run keeps its figures
    text = write(args, results, notes)
    print(text)
    return 0


def write(args, results, notes):
    machine = "unknown machine"
    for r in results:
        for doc in r["runs"].get("vulkan", []) + r["runs"].get("cpu", []):
            mm = doc.get("machine")
            if mm:
                machine = (f"{mm.get('cores')} cores ({mm.get('cpu')}), "
                           f"{mm.get('device', 'no Vulkan device')}")
                break
    meta = {"machine": machine, "rounds": args.rounds, "repeat": args.repeat,
            "cpu_repeat": args.cpu_repeat, "cpu_max_gflop": args.cpu_max_gflop,
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
