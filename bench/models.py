#!/usr/bin/env python3
"""Whole models (scripts/bench.sh runs it after run.py): sotc against torch eager,
torch.compile and paddle eager on the CPU, for the pre-norm transformer block, ResNet-18 and
the GPT-style decoder of testdata/models at benchmark sizes.

    models.py [--paddle-python PY]     all tools; paddle eager runs under PY (a python that
                                       has paddle: the reference environment), else is skipped
    models.py --worker TOOL MODEL [ARTIFACT]   one tool's times, in a fresh process (JSON)

Each tool runs in a process of its own on every core of the machine, 10 warm-up calls and
RUNS timed ones (median and minimum). sotc's figure includes its compile time (cold, the
`sotc compile` command) and the trace. Writes bench/results/models.json and the model table
of docs/benchmarks.md (between its BEGIN/END MODEL RESULTS markers).
"""

import argparse
import atexit
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOTC = os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc")
RESULTS = os.path.join(HERE, "results")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
RUNS = 10
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

import measure  # noqa: E402  (its timing, fewer runs)

# name -> (model file stem without the framework, constructor keywords (the GPT's: its
# module's sizes), input shape); the GPT's input is token ids
MODELS = {
    "transformer_block": ("transformer", {"dim": 256, "heads": 8}, (8, 128, 256)),
    "resnet18": ("resnet18", {}, (8, 3, 224, 224)),
    "gpt": ("gpt", {"VOCAB": 1024, "CONTEXT": 128, "WIDTH": 256, "HEADS": 8, "LAYERS": 4},
            (8, 128)),
}
TOOLS = ["sotc", "torch", "torch_compile", "paddle"]


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def build(name, framework):
    """The model `name` of `framework` (torch or paddle) in eval mode, seeded."""
    stem, kwargs, _ = MODELS[name]
    path = os.path.join(ROOT, "testdata", "models", f"{stem}_{framework}.py")
    spec = importlib.util.spec_from_file_location(f"{stem}_{framework}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fw = __import__(framework)
    fw.manual_seed(0) if framework == "torch" else fw.seed(0)
    if stem == "gpt":  # sized by its module's constants, which its layers read
        vars(module).update(kwargs)
        model = module.GPT()
    else:
        model = (module.Block if stem == "transformer" else module.ResNet18)(**kwargs)
    model.eval()
    return model


def example(name):
    """The model's input: normal floats, or token ids for the GPT."""
    import numpy as np
    rng, shape = np.random.default_rng(0), MODELS[name][2]
    if MODELS[name][0] == "gpt":
        return rng.integers(0, MODELS[name][1]["VOCAB"], shape).astype(np.int64)
    return rng.standard_normal(shape).astype(np.float32)


def timed(call):
    # the first calls of every tool run up to 2x slower on these VMs
    return measure.timed(call, runs=RUNS, warmup=10)


def worker(tool, name, artifact=None):
    x = example(name)
    if tool == "sotc":
        import sotc
        f = sotc.load(artifact)
        return timed(lambda: f(x))
    if tool == "paddle":
        import paddle
        model, t = build(name, "paddle"), paddle.to_tensor(x)
        with paddle.no_grad():
            return timed(lambda: model(t))
    if tool == "torch_compile":  # a cold compile, as a user's first (no inductor caches)
        os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
        cache = tempfile.mkdtemp(prefix="sotc-bench-inductor-")
        atexit.register(shutil.rmtree, cache, True)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    import torch
    model, t = build(name, "torch"), torch.from_numpy(x)
    with torch.no_grad():
        if tool == "torch":
            return timed(lambda: model(t))
        compiled = torch.compile(model)
        start = time.perf_counter()
        compiled(t)
        first = time.perf_counter() - start
        result = timed(lambda: compiled(t))
        result["compile_s"] = first - result["median_s"]
        return result


def sotc_artifact(name, tmp):
    """Traces the torch model and compiles it for the CPU: (library, trace s, compile s)."""
    import sotc
    model = build(name, "torch")  # the framework's import and the model's construction: not timed
    start = time.perf_counter()
    trace = sotc.trace(model, example(name))
    path = trace.save(os.path.join(tmp, name + ".pb"))
    traced = time.perf_counter() - start
    library = os.path.join(tmp, name + ".so")
    start = time.perf_counter()
    subprocess.run([SOTC, "compile", path, "--target", "cpu", "-o", library], check=True)
    return library, traced, time.perf_counter() - start


def in_fresh_process(python, tool, name, *extra):
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", tool, name, *extra],
                         capture_output=True, text=True)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(report):
    lines = ["| model | input | sotc | torch eager | torch.compile | paddle eager | "
             "sotc compile (trace) | torch.compile compile |", "|---|---|---|---|---|---|---|---|"]
    for name, entry in report["models"].items():
        runs = entry["runs"]

        def cell(tool):
            r = runs.get(tool, {})
            return f"{r['median_s'] * 1e3:.0f} ms" if "median_s" in r else r.get("error", "-")[:40]
        compile_s = runs.get("torch_compile", {}).get("compile_s")
        lines.append(f"| {name} | {'x'.join(map(str, entry['input']))} | " +
                     " | ".join(cell(t) for t in TOOLS) +
                     f" | {entry['sotc_compile_s']:.1f} s ({entry['sotc_trace_s']:.1f} s) | " +
                     (f"{compile_s:.1f} s |" if compile_s is not None else "- |"))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", nargs="+", metavar="TOOL MODEL [ARTIFACT]")
    parser.add_argument("--paddle-python", default=None)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return 0
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "cores": os.cpu_count(), "models": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in MODELS:
            log("model", name)
            library, traced, compiled = sotc_artifact(name, tmp)
            runs = {"sotc": in_fresh_process(sys.executable, "sotc", name, library),
                    "torch": in_fresh_process(sys.executable, "torch", name),
                    "torch_compile": in_fresh_process(sys.executable, "torch_compile", name)}
            runs["paddle"] = (in_fresh_process(args.paddle_python, "paddle", name) if args.paddle_python
                              else {"error": "no --paddle-python"})
            log("  ", {t: round(r["median_s"] * 1e3) if "median_s" in r else r["error"]
                       for t, r in runs.items()})
            report["models"][name] = {"input": list(MODELS[name][2]), "sotc_trace_s": traced,
                                      "sotc_compile_s": compiled, "runs": runs}
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "models.json"), "w") as f:
        json.dump(report, f, indent=1)
    measure.write_section(DOC, "MODEL RESULTS", table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
