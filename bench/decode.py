#!/usr/bin/env python3
"""Batch-1 generation on the CPU: sotc against Hugging Face transformers' `generate`, next to
the weight-bandwidth floor (every decode step reads every weight once: weight bytes over the
machine's measured memory bandwidth, bench/stream).

For each model (random weights from the library's config, nothing downloaded): sotc compiles
transformers' own static-cache export wrapper (TorchExportableModuleWithStaticCache: a prefill
entry of up to CACHE tokens and a one-token decode entry, the KV cache kept as state) and runs
`Compiled.generate`; the peers are `model.generate` in torch eager with its dynamic cache and,
with --torch-compile, with `cache_implementation="static"` and `torch.compile` of the forward.
Each tool runs in a process of its own. Timing: greedy generation of 1 and of NEW tokens from a
PROMPT-token prompt, RUNS times each after a warm-up; prefill = the 1-token time, decode
ms/token = (NEW-token time - 1-token time) / (NEW - 1), medians.

    python bench/decode.py [--models gpt2,llama] [--torch-compile]

Runs in the reference environment (scripts/reference-env.sh: transformers, torch); prints the
table and writes bench/results/decode.json and the table in docs/benchmarks.md.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOTC = os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc")
STREAM = os.path.join(ROOT, "bazel-bin", "bench", "stream")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

PROMPT, NEW, CACHE, RUNS, THREADS = 16, 32, 256, 5, 2
# GPT-2 124M at the library's defaults; a LLaMA-style model of about 0.3 B parameters
# (grouped-query attention, SwiGLU, RMSNorm, rotary positions).
MODELS = {
    "gpt2": ("GPT2Config", {}),
    "llama": ("LlamaConfig", dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=16,
                                  num_attention_heads=16, num_key_value_heads=4,
                                  vocab_size=32000, max_position_embeddings=2048)),
}


def build(name):
    import torch
    import transformers
    config_class, options = MODELS[name]
    torch.manual_seed(0)
    config = getattr(transformers, config_class)(**options)
    return transformers.AutoModelForCausalLM.from_config(config).eval()


def prompt_ids():
    import torch
    return torch.arange(PROMPT, dtype=torch.int64)[None] * 37 % 1000


def timed(generate):
    """(prefill s, decode s/token): medians over RUNS of generating 1 and NEW tokens."""
    generate(1), generate(NEW)  # warm-up (and torch.compile's compilations)
    one = statistics.median(_seconds(lambda: generate(1)) for _ in range(RUNS))
    many = statistics.median(_seconds(lambda: generate(NEW)) for _ in range(RUNS))
    return one, (many - one) / (NEW - 1)


def _seconds(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run_sotc(name, directory):
    import sotc
    f = sotc.load(os.path.join(directory, name + ".so"))
    prompt = prompt_ids().numpy()
    return timed(lambda n: f.generate(prompt, max_new_tokens=n))


def run_eager(name, static_compiled):
    import torch
    model = build(name)
    prompt = prompt_ids()
    options = dict(do_sample=False, pad_token_id=0)
    if static_compiled:
        options["cache_implementation"] = "static"
        model.forward = torch.compile(model.forward)
    with torch.no_grad():
        return timed(lambda n: model.generate(prompt, max_new_tokens=n, min_new_tokens=n,
                                              **options))


def prepare(name, directory):
    """Traces the static-cache wrapper (prefill and decode) and compiles it; the weight bytes
    a decode step reads (the model's parameters, tied ones once)."""
    import sotc
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache
    model = build(name)
    model.generation_config.cache_implementation = "static"
    wrapper = TorchExportableModuleWithStaticCache(model, 1, CACHE).eval()
    traces = [os.path.join(directory, f"{name}.{kind}.pb") for kind in ("prefill", "decode")]
    sotc.trace(wrapper, f"int64[1,?<={CACHE}]", cache_position=f"int64[?<={CACHE}]").save(
        traces[0])
    sotc.trace(wrapper, "int64[1,1]", cache_position="int64[1]").save(traces[1])
    start = time.perf_counter()
    subprocess.run([SOTC, "compile", *traces, "--target", "cpu", "-o",
                    os.path.join(directory, name + ".so")], check=True)
    unique = {id(p): p for p in model.parameters()}.values()
    return {"compile_s": time.perf_counter() - start,
            "parameters": sum(p.numel() for p in unique),
            "weight_bytes": sum(p.numel() * p.element_size() for p in unique)}


def child(args):
    """One measurement, in this process: prints its JSON."""
    if args.tool == "prepare":
        result = prepare(args.model, args.directory)
    else:
        prefill, decode = (run_sotc(args.model, args.directory) if args.tool == "sotc"
                           else run_eager(args.model, args.tool == "torch_compile_static"))
        result = {"prefill_s": prefill, "decode_s": decode}
    print(json.dumps(result))


def in_process_of_its_own(tool, model, directory):
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS), SOTC_NUM_THREADS=str(THREADS))
    out = subprocess.run([sys.executable, __file__, "--child", tool, model, directory],
                         capture_output=True, text=True, env=env)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def bandwidth_gbs():
    """The machine's memory bandwidth on THREADS threads (bench/stream: the best copy of three
    runs; a VM's varies from run to run)."""
    best = 0.0
    for _ in range(3):
        stream = json.loads(subprocess.run([STREAM, str(THREADS), "256"], capture_output=True,
                                           text=True, check=True).stdout)
        best = max([best] + [r["copy_gbs"] for r in stream["results"]
                             if r["threads"] == THREADS])
    return best


def table(report):
    bandwidth = report["bandwidth_gbs"]
    lines = [f"{report['machine']['cpu']}, {THREADS} threads, {bandwidth:.1f} GB/s measured "
             f"(bench/stream); prompt {PROMPT} tokens, {NEW} new tokens, cache {CACHE}, "
             "float32, batch 1, greedy.", "",
             "| model | parameters | weight floor ms/token | tool | prefill ms | decode ms/token "
             "(x floor) | tokens/s | bandwidth GB/s |", "|---|---|---|---|---|---|---|---|"]
    for name, model in report["models"].items():
        floor = model["weight_bytes"] / bandwidth / 1e6
        for tool, label in (("sotc", "sotc"), ("eager", "HF generate, torch eager"),
                            ("torch_compile_static", "HF generate, static cache, "
                                                     "torch.compile")):
            r = model.get(tool)
            if r is None:
                continue
            head = f"| {name} | {model['parameters'] / 1e6:.0f} M | {floor:.1f} | {label} |"
            if "error" in r:
                lines.append(f"{head} failed: {r['error'][:80]} | | | |")
                continue
            ms = r["decode_s"] * 1e3
            lines.append(f"{head} {r['prefill_s'] * 1e3:.1f} | {ms:.1f} ({ms / floor:.2f}x) | "
                         f"{1e3 / ms:.1f} | {model['weight_bytes'] / r['decode_s'] / 1e9:.1f} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--torch-compile", action="store_true",
                        help="also time HF generate with a static cache under torch.compile")
    parser.add_argument("--child", nargs=3, metavar=("TOOL", "MODEL", "DIR"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.tool, args.model, args.directory = args.child
        return child(args)
    import measure
    report = {"machine": measure.machine(), "bandwidth_gbs": bandwidth_gbs(), "models": {}}
    tools = ["sotc", "eager"] + (["torch_compile_static"] if args.torch_compile else [])
    with tempfile.TemporaryDirectory() as directory:
        for name in args.models.split(","):
            model = report["models"][name] = in_process_of_its_own("prepare", name, directory)
            if "error" in model:
                sys.exit(f"{name}: {model['error']}")
            for tool in tools:
                model[tool] = in_process_of_its_own(tool, name, directory)
                print(name, tool, model[tool], file=sys.stderr, flush=True)
    text = table(report)
    print(text)
    with open(os.path.join(HERE, "results", "decode.json"), "w") as f:
        json.dump(report, f, indent=1)
    measure.write_section(os.path.join(ROOT, "docs", "benchmarks.md"), "DECODE", text)


if __name__ == "__main__":
    main()
