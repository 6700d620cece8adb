#!/usr/bin/env python3
"""sotc against the CPU runtimes users deploy on: ONNX Runtime and OpenVINO (in float32 and
at its default precision, bfloat16 on CPUs with AMX or AVX-512 BF16), beside torch eager and
torch.compile, on models as users get them (torchvision's ResNet-50 and MobileNetV2 at batch 1
and 8, transformers' BERT-base, GPT-2 small and a LLaMA-style decoder of 156M parameters from
their configs, random weights). scripts/bench.sh runs it in the bench environment
(bench/requirements.txt pins the newest releases).

    peers.py [--models MODEL...] [--tools TOOL...] [--runs N]
    peers.py --worker TOOL MODEL DIR    one tool's times in a fresh process (JSON); its
                                        output is saved as DIR/TOOL.npy; TOOL `export`
                                        writes DIR/model.onnx, `trace` DIR/model.pb

Every tool runs in a process of its own on every core (no framework's spinning threads share
a process with another's), 10 warm-up calls, then the median of RUNS. ONNX Runtime and
OpenVINO run the model torch.onnx.export(dynamo=True) writes; OpenVINO converts it with
openvino.convert_model and reports the precision it resolved. Each tool's error is the
largest difference from torch eager's output over eager's largest magnitude. Writes
bench/results/peers.json and the table of docs/benchmarks.md between its BEGIN/END PEER
RESULTS markers, naming the CPU and the ISA extensions the runtimes pick from.
"""

import argparse
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
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

import measure  # noqa: E402

# name -> (library, builder: torchvision's model name or a transformers config class,
# constructor keywords, input shape); transformers models take token ids
_LLAMA_156M = {"hidden_size": 768, "intermediate_size": 2816, "num_hidden_layers": 12,
               "num_attention_heads": 12, "num_key_value_heads": 12, "vocab_size": 32000,
               "use_cache": False}
MODELS = {
    "ResNet-50, batch 1": ("torchvision", "resnet50", {}, (1, 3, 224, 224)),
    "ResNet-50, batch 8": ("torchvision", "resnet50", {}, (8, 3, 224, 224)),
    "MobileNetV2, batch 1": ("torchvision", "mobilenet_v2", {}, (1, 3, 224, 224)),
    "MobileNetV2, batch 8": ("torchvision", "mobilenet_v2", {}, (8, 3, 224, 224)),
    "BERT-base, 1 x 128": ("transformers", "BertConfig", {}, (1, 128)),
    "BERT-base, 8 x 128": ("transformers", "BertConfig", {}, (8, 128)),
    "GPT-2 small, 1 x 128": ("transformers", "GPT2Config", {"use_cache": False}, (1, 128)),
    "LLaMA-style 156M, 1 x 128": ("transformers", "LlamaConfig", _LLAMA_156M, (1, 128)),
}
TOOLS = ["torch", "torch_compile", "onnxruntime", "openvino_f32", "openvino", "sotc",
         "sotc_bf16"]
HEADINGS = {"torch": "torch eager", "torch_compile": "torch.compile",
            "onnxruntime": "ONNX Runtime", "openvino_f32": "OpenVINO f32",
            "openvino": "OpenVINO default", "sotc": "sotc",
            "sotc_bf16": "sotc --precision bf16"}
FLOAT32_PEERS = ("torch", "torch_compile", "onnxruntime", "openvino_f32")
ISA_FLAGS = ["avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_int8"]


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def build(name):
    """The model in eval mode, seeded: the library's random initialization."""
    import torch
    library, stem, kwargs, _ = MODELS[name]
    torch.manual_seed(0)
    if library == "torchvision":
        import torchvision
        return torchvision.models.get_model(stem, weights=None, **kwargs).eval()
    import transformers
    config = getattr(transformers, stem)(**kwargs)
    # The decoders with their language-model head (what generation runs), BERT's encoder.
    auto = transformers.AutoModel if stem == "BertConfig" else transformers.AutoModelForCausalLM
    return auto.from_config(config).eval()


def example(name):
    import numpy as np
    library, _, kwargs, shape = MODELS[name]
    rng = np.random.default_rng(0)
    if library == "transformers":
        return rng.integers(0, kwargs.get("vocab_size", 30000), shape).astype(np.int64)
    return rng.standard_normal(shape).astype(np.float32)


def first_output(result):
    """The first tensor of what a tool returns (a model output's first field), as numpy."""
    import numpy as np
    while not hasattr(result, "shape"):
        if isinstance(result, dict) or hasattr(result, "values"):
            result = next(iter(result.values()))
        else:
            result = result[0]
    return np.asarray(result.detach() if hasattr(result, "detach") else result)


def worker(tool, name, folder):
    import numpy as np
    x = example(name)
    onnx_path, trace_path = os.path.join(folder, "model.onnx"), os.path.join(folder, "model.pb")
    if tool in ("export", "trace", "torch", "torch_compile"):
        import torch
        model, t = build(name), torch.from_numpy(x)
    if tool == "export":
        with torch.no_grad():
            torch.onnx.export(model, (t,), onnx_path, dynamo=True, external_data=True)
        return {"path": onnx_path}
    if tool == "trace":
        import sotc
        start = time.perf_counter()
        sotc.trace(model, x).save(trace_path)
        return {"path": trace_path, "trace_s": time.perf_counter() - start}
    info = {}
    if tool in ("sotc", "sotc_bf16"):
        import sotc
        f = sotc.load(os.path.join(folder, f"{tool}.so"))
        call = lambda: f(x)  # noqa: E731
    elif tool == "onnxruntime":
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = os.cpu_count()
        session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        feed = {session.get_inputs()[0].name: x}
        call = lambda: session.run(None, feed)  # noqa: E731
        info["version"] = ort.__version__
    elif tool in ("openvino", "openvino_f32"):
        import openvino as ov
        config = {"INFERENCE_PRECISION_HINT": "f32"} if tool == "openvino_f32" else {}
        compiled = ov.Core().compile_model(ov.convert_model(onnx_path), "CPU", config)
        request = compiled.create_infer_request()
        call = lambda: request.infer({0: x}).to_tuple()  # noqa: E731
        resolved = str(compiled.get_property("INFERENCE_PRECISION_HINT"))  # <Type: 'bfloat16'>
        info["precision"] = resolved.split("'")[1] if "'" in resolved else resolved
        info["version"] = ov.get_version()
    else:
        if tool == "torch_compile":  # a cold compile, as a user's first (no inductor caches)
            os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="sotc-bench-")
        torch.set_grad_enabled(False)
        function = torch.compile(model) if tool == "torch_compile" else model
        call = lambda: function(t)  # noqa: E731
    start = time.perf_counter()
    output = call()
    info["first_call_s"] = time.perf_counter() - start
    np.save(os.path.join(folder, tool + ".npy"), first_output(output).astype(np.float32))
    return {**measure.timed(call, runs=RUNS, warmup=10), **info}


def in_fresh_process(tool, name, folder):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", tool, name,
                          folder, "--runs", str(RUNS)], capture_output=True, text=True)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def errors(folder, runs):
    """Each tool's largest difference from torch eager's output, over eager's largest
    magnitude."""
    import numpy as np
    reference = os.path.join(folder, "torch.npy")
    if not os.path.exists(reference):
        return
    ref = np.load(reference).astype(np.float64)
    scale = max(float(np.abs(ref).max()), 1e-30)
    for tool, result in runs.items():
        path = os.path.join(folder, tool + ".npy")
        if tool != "torch" and "median_s" in result and os.path.exists(path):
            got = np.load(path).astype(np.float64)
            result["error"] = (float(np.abs(got - ref).max()) / scale if got.shape == ref.shape
                               else f"shape {got.shape} != {ref.shape}")


def measure_model(name, tools, folder):
    runs, compiled_s = {}, {}
    ours = [t for t in ("sotc", "sotc_bf16") if t in tools]
    traced = in_fresh_process("trace", name, folder) if ours else {}
    for tool in ours:
        if "error" in traced:
            runs[tool] = {"failed": "trace: " + traced["error"]}
            continue
        start = time.perf_counter()
        done = subprocess.run([SOTC, "compile", traced["path"], "--target", "cpu", "-o",
                               os.path.join(folder, f"{tool}.so"), "--precision",
                               "bf16" if tool == "sotc_bf16" else "float32"],
                              capture_output=True, text=True)
        compiled_s[tool] = time.perf_counter() - start
        runs[tool] = {"failed": "compile: " + done.stderr.strip()[-200:]} if done.returncode else {}
    exported = {}
    if {"onnxruntime", "openvino", "openvino_f32"} & set(tools):
        exported = in_fresh_process("export", name, folder)
    for tool in TOOLS:
        if tool not in tools or runs.get(tool, {}).get("failed"):
            continue
        if tool.startswith(("onnx", "openvino")) and "error" in exported:
            runs[tool] = {"failed": "export: " + exported["error"]}
            continue
        result = in_fresh_process(tool, name, folder)
        if "error" in result:
            result = {"failed": result["error"]}
        if tool in ours and "failed" not in result:
            result.update(compile_s=compiled_s[tool], trace_s=traced["trace_s"])
        runs[tool] = result
        log(f"   {tool}: " + (f"{result['median_s'] * 1e3:.1f} ms" if "median_s" in result
                               else result["failed"]))
    errors(folder, runs)
    return runs


def isa():
    with open("/proc/cpuinfo") as f:
        flags = next((line.split(":", 1)[1].split() for line in f
                      if line.startswith("flags")), [])
    return [flag for flag in ISA_FLAGS if flag in flags]


def table(report):
    m = report["machine"]
    precision = sorted({r.get("precision") for e in report["models"].values()
                        for t, r in e["runs"].items() if t == "openvino" and r.get("precision")})
    lines = [f"Run of {report['date']} on {m['cpu']} ({m['cores']} cores, {m['memory_gib']} GiB; "
             f"{', '.join(report['isa']) or 'no AVX2'}); every tool in a process of its own on "
             f"every core, median of {report['runs']} calls after 10; float32 models, random "
             f"weights. OpenVINO default resolved to: {', '.join(precision) or '-'}. The error "
             f"is the largest difference from torch eager over eager's largest magnitude.", "",
             "| model | " + " | ".join(HEADINGS[t] for t in report["tools"]) +
             " | best float32 peer / sotc | OpenVINO default / sotc bf16 | error (OpenVINO "
             "default, sotc bf16) |",
             "|---|" + "---|" * (len(report["tools"]) + 3)]
    for name, entry in report["models"].items():
        runs = entry["runs"]

        def ms(tool):
            r = runs.get(tool, {})
            return r.get("median_s", 0) * 1e3

        def cell(tool):
            r = runs.get(tool, {})
            return f"{ms(tool):.1f}" if "median_s" in r else ("failed" if r else "-")

        def ratio(ours, peers):
            best = [ms(t) for t in peers if ms(t)]
            return f"{min(best) / ms(ours):.2f}" if best and ms(ours) else "-"

        def err(tool):
            e = runs.get(tool, {}).get("error")
            return f"{e:.1e}" if isinstance(e, float) else "-"
        lines.append(f"| {name} | " + " | ".join(cell(t) for t in report["tools"]) +
                     f" | {ratio('sotc', FLOAT32_PEERS)} | "
                     f"{ratio('sotc_bf16', ('openvino',))} | "
                     f"{err('openvino')}, {err('sotc_bf16')} |")
    return "\n".join(lines)


RUNS = 20


def main():
    global RUNS
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", nargs=3, metavar=("TOOL", "MODEL", "DIR"))
    parser.add_argument("--models", nargs="+", choices=list(MODELS), metavar="MODEL")
    parser.add_argument("--tools", nargs="+", choices=TOOLS, default=TOOLS)
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args()
    RUNS = args.runs
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return 0
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": measure.machine(), "isa": isa(), "runs": RUNS, "tools": args.tools,
              "models": {}}
    for name in args.models or MODELS:
        log("model", name)
        folder = tempfile.mkdtemp(prefix="sotc-peers-")
        try:
            report["models"][name] = {"input": list(MODELS[name][3]),
                                      "runs": measure_model(name, args.tools, folder)}
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "peers.json"), "w") as f:
        json.dump(report, f, indent=1)
    measure.write_section(DOC, "PEER RESULTS", table(report))
    print(table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
