#!/usr/bin/env python3
"""Whole models (scripts/bench.sh runs it after run.py): sotc against torch eager,
torch.compile and paddle eager on the CPU, for the pre-norm transformer block, ResNet-18 and
the GPT-style decoder of testdata/models, and for library models as users get them
(torchvision's ResNet-50, MobileNetV3-Large, MobileNetV2 and RegNetY-400MF, paddle.vision's
ResNet-50, a transformers BERT and LLaMA-style decoder, 4 layers x 256, from their configs), at
benchmark sizes, and the CNNs again at batch 1. A testdata model runs in both frameworks (sotc
compiles the torch one); a library's model in its own framework, from which sotc traces it. Each
model's work (the FLOP of its matrix products and convolutions) and the machine's float32
FMA peak come from `sotc bench` of its artifact: sotc's GFLOP/s and share of the peak.

    models.py [--paddle-python PY] [--models MODEL...]
                                       all tools; paddle eager runs under PY (a python that
                                       has paddle: the reference environment), else is skipped;
                                       --models measures only those, keeping the others' figures
    models.py --worker TOOL MODEL [ARTIFACT]   one tool's times, in a fresh process (JSON);
                                       TOOL `trace` traces MODEL into the folder ARTIFACT

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

# name -> (where it comes from, the testdata model file stem without the framework or the
# library's builder, constructor keywords (the GPT's: its module's sizes), input shape); the
# GPT's input is token ids
MODELS = {
    "transformer_block": ("testdata", "transformer", {"dim": 256, "heads": 8}, (8, 128, 256)),
    "resnet18": ("testdata", "resnet18", {}, (8, 3, 224, 224)),
    "gpt": ("testdata", "gpt",
            {"VOCAB": 1024, "CONTEXT": 128, "WIDTH": 256, "HEADS": 8, "LAYERS": 4}, (8, 128)),
    "torchvision resnet50": ("torchvision", "resnet50", {}, (8, 3, 224, 224)),
    "torchvision mobilenet_v3_large": ("torchvision", "mobilenet_v3_large", {}, (8, 3, 224, 224)),
    "torchvision mobilenet_v2": ("torchvision", "mobilenet_v2", {}, (8, 3, 224, 224)),
    # grouped convolutions of 8 channels a group and squeeze-and-excitation blocks
    "torchvision regnet_y_400mf": ("torchvision", "regnet_y_400mf", {}, (8, 3, 224, 224)),
    # one image: latency, where a call's fixed costs (binding, guards, the executor) weigh
    "resnet18 batch 1": ("testdata", "resnet18", {}, (1, 3, 224, 224)),
    "torchvision resnet50 batch 1": ("torchvision", "resnet50", {}, (1, 3, 224, 224)),
    "torchvision mobilenet_v2 batch 1": ("torchvision", "mobilenet_v2", {}, (1, 3, 224, 224)),
    "paddle.vision resnet50": ("paddle.vision", "resnet50", {}, (8, 3, 224, 224)),
    "transformers bert": ("transformers", "BertConfig",
                          {"num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4,
                           "intermediate_size": 1024, "vocab_size": 1024}, (8, 128)),
    "transformers llama": ("transformers", "LlamaConfig",
                           {"num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 8,
                            "num_key_value_heads": 4, "intermediate_size": 688,
                            "vocab_size": 1024, "use_cache": False}, (8, 128)),
}
TOOLS = ["sotc", "torch", "torch_compile", "paddle"]
# The frameworks each source's models run in; sotc traces the first.
FRAMEWORKS = {"testdata": ("torch", "paddle"), "torchvision": ("torch",),
              "paddle.vision": ("paddle",), "transformers": ("torch",)}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def build(name, framework):
    """The model `name` of `framework` (torch or paddle) in eval mode, seeded."""
    source, stem, kwargs, _ = MODELS[name]
    fw = __import__(framework)
    fw.manual_seed(0) if framework == "torch" else fw.seed(0)
    if source != "testdata":  # random weights: the library's initialization
        if source == "transformers":  # from its config, the model class the Auto map picks
            import transformers
            config = getattr(transformers, stem)(**kwargs)
            return transformers.AutoModel.from_config(config).eval()
        if source == "torchvision":
            import torchvision
            return torchvision.models.get_model(stem, weights=None, **kwargs).eval()
        import paddle.vision.models
        model = getattr(paddle.vision.models, stem)(**kwargs)
        model.eval()
        return model
    path = os.path.join(ROOT, "testdata", "models", f"{stem}_{framework}.py")
    spec = importlib.util.spec_from_file_location(f"{stem}_{framework}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
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
    rng, shape = np.random.default_rng(0), MODELS[name][3]
    if MODELS[name][1] == "gpt":
        return rng.integers(0, MODELS[name][2]["VOCAB"], shape).astype(np.int64)
    if MODELS[name][0] == "transformers":
        return rng.integers(0, MODELS[name][2]["vocab_size"], shape).astype(np.int64)
    return rng.standard_normal(shape).astype(np.float32)


def timed(call):
    # the first calls of every tool run up to 2x slower on these VMs
    return measure.timed(call, runs=RUNS, warmup=10)


def worker(tool, name, artifact=None):
    if tool == "trace":
        return trace_model(name, artifact)
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


def trace_model(name, tmp):
    """Traces the model (the torch one of a testdata model) into TMP: {path, trace_s}."""
    import sotc
    # the framework's import and the model's construction: not timed
    model = build(name, FRAMEWORKS[MODELS[name][0]][0])
    start = time.perf_counter()
    path = sotc.trace(model, example(name)).save(
        os.path.join(tmp, name.replace(" ", "_").replace(".", "_") + ".pb"))
    return {"path": path, "trace_s": time.perf_counter() - start}


def sotc_artifact(name, tmp, paddle_python):
    """Traces the model (in paddle's python for a paddle model) and compiles it for the CPU:
    (library, trace s, compile s)."""
    python = paddle_python if FRAMEWORKS[MODELS[name][0]][0] == "paddle" else sys.executable
    traced = in_fresh_process(python, "trace", name, tmp)
    if "error" in traced:
        raise RuntimeError(f"tracing {name}: {traced['error']}")
    library = traced["path"][:-len(".pb")] + ".so"
    start = time.perf_counter()
    subprocess.run([SOTC, "compile", traced["path"], "--target", "cpu", "-o", library], check=True)
    return library, traced["trace_s"], time.perf_counter() - start


def work_and_peak(library):
    """`sotc bench`'s count of the artifact's GEMM and convolution FLOP a call (nearly all of a
    model's work) and its measured float32 FMA peak of this machine, in GFLOP and GFLOP/s."""
    with open(library[:-len(".so")] + ".manifest.json") as f:
        inputs = json.load(f)["entries"][0]["inputs"]
    args = [arg for i in inputs if i["kind"] == "tensor"
            for arg in ("--input", f"{i['name']}=random")]
    out = subprocess.run([SOTC, "bench", library, *args, "--repeat", "1", "--warmup", "0"],
                         capture_output=True, text=True, check=True).stdout
    work = peak = None
    for line in out.splitlines():
        if line.startswith("work: "):
            work = float(line.split()[1])
        elif line.startswith("peak: "):
            peak = float(line.split()[1])
    return work, peak


def in_fresh_process(python, tool, name, *extra):
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", tool, name, *extra],
                         capture_output=True, text=True)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(report):
    peaks = [e["peak_gflops"] for e in report["models"].values() if e.get("peak_gflops")]
    lines = []
    if peaks:
        lines += [f"Peak: {min(peaks):.0f}-{max(peaks):.0f} GFLOP/s float32 (the FMA peak "
                  f"`sotc bench` measures on this machine's {report['cores']} cores before each "
                  "model; a row's share is of its own); GFLOP: the work of a call's matrix "
                  "products and convolutions, as `sotc bench` counts it.", ""]
    lines += ["| model | input | GFLOP | sotc | torch eager | torch.compile | paddle eager | "
              "sotc GFLOP/s (% of peak) | sotc compile (trace) | torch.compile compile |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name, entry in report["models"].items():
        runs = entry["runs"]
        work, peak = entry.get("gflop"), entry.get("peak_gflops")

        def cell(tool):
            r = runs.get(tool, {})
            return f"{r['median_s'] * 1e3:.0f} ms" if "median_s" in r else r.get("error", "-")[:40]
        speed = "-"
        if work and "median_s" in runs.get("sotc", {}):
            rate = work / runs["sotc"]["median_s"]
            speed = f"{rate:.0f}" + (f" ({100 * rate / peak:.0f}%)" if peak else "")
        compile_s = runs.get("torch_compile", {}).get("compile_s")
        lines.append(f"| {name} | {'x'.join(map(str, entry['input']))} | " +
                     (f"{work:.1f}" if work else "-") + " | " +
                     " | ".join(cell(t) for t in TOOLS) + f" | {speed}" +
                     f" | {entry['sotc_compile_s']:.1f} s ({entry['sotc_trace_s']:.1f} s) | " +
                     (f"{compile_s:.1f} s |" if compile_s is not None else "- |"))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", nargs="+", metavar="TOOL MODEL [ARTIFACT]")
    parser.add_argument("--paddle-python", default=None)
    parser.add_argument("--models", nargs="+", choices=sorted(MODELS), metavar="MODEL",
                        help="measure only these; the others keep their figures in "
                             "bench/results/models.json")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return 0
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "cores": os.cpu_count(), "models": {}}
    previous = os.path.join(RESULTS, "models.json")
    if args.models and os.path.exists(previous):
        with open(previous) as f:
            kept = json.load(f)["models"]
        report["models"] = {name: kept[name] for name in MODELS if name in kept}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models or MODELS:
            log("model", name)
            if FRAMEWORKS[MODELS[name][0]] == ("paddle",) and not args.paddle_python:
                log("   skipped: a paddle model needs --paddle-python")
                continue
            library, traced, compiled = sotc_artifact(name, tmp, args.paddle_python)
            work, peak = work_and_peak(library)
            frameworks = FRAMEWORKS[MODELS[name][0]]
            runs = {"sotc": in_fresh_process(sys.executable, "sotc", name, library)}
            for tool in ("torch", "torch_compile"):
                runs[tool] = (in_fresh_process(sys.executable, tool, name) if "torch" in frameworks
                              else {"error": "-"})
            runs["paddle"] = ({"error": "-"} if "paddle" not in frameworks
                              else in_fresh_process(args.paddle_python, "paddle", name)
                              if args.paddle_python else {"error": "no --paddle-python"})
            log("  ", {t: round(r["median_s"] * 1e3) if "median_s" in r else r["error"]
                       for t, r in runs.items()})
            report["models"][name] = {"input": list(MODELS[name][3]), "sotc_trace_s": traced,
                                      "sotc_compile_s": compiled, "gflop": work,
                                      "peak_gflops": peak, "runs": runs}
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "models.json"), "w") as f:
        json.dump(report, f, indent=1)
    measure.write_section(DOC, "MODEL RESULTS", table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
