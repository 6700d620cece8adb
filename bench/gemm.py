#!/usr/bin/env python3
"""The float32 GEMMs of the benchmark models (bench/models.py; scripts/bench.sh runs this
after it): each shape's GEMM step under sotc against torch's matmul and against the machine's
float32 FMA peak, in one run on one machine.

    gemm.py             every shape; writes bench/results/gemm.json and the GEMM table of
                        docs/benchmarks.md (between its BEGIN/END GEMM RESULTS markers)
    gemm.py --torch NAME   one shape's torch time, in a fresh process (JSON)

sotc: the shape's function traced and compiled for the CPU, its GEMM step timed by
`sotc bench` (the step's median over RUNS runs, as the models run it). torch: the same
function, `torch.matmul`/`F.linear` writing into a reused `out=`, median over RUNS calls, in a
process of its own. Both on every core the process may use. Peak: `bench/fma_peak` (FMA loops
of the widest vectors the CPU has, on as many threads).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOTC = os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc")
FMA_PEAK = os.path.join(ROOT, "bazel-bin", "bench", "fma_peak")
RESULTS = os.path.join(HERE, "results")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
RUNS = 50
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import measure  # noqa: E402  (its timing)


def linear(a, w):
    return F.linear(a, w)


def matmul(a, b):
    return torch.matmul(a, b)


# name -> (model, function, shape of a, shape of b). linear: a [m, k] times w [n, k]
# transposed (the models' projections); matmul: batched, or a weight [m, k] shared by a batch
# of im2col columns [batch, k, n] (ResNet-18's convolutions at batch 8, 224x224).
SHAPES = {
    "qkv": ("transformer, gpt", linear, (1024, 256), (768, 256)),
    "attention scores": ("transformer, gpt", matmul, (64, 128, 32), (64, 32, 128)),
    "attention x values": ("transformer, gpt", matmul, (64, 128, 128), (64, 128, 32)),
    "out projection": ("transformer, gpt", linear, (1024, 256), (256, 256)),
    "mlp up": ("transformer, gpt", linear, (1024, 256), (1024, 256)),
    "mlp down": ("transformer, gpt", linear, (1024, 1024), (256, 1024)),
    "lm head (last token)": ("gpt", linear, (8, 256), (1024, 256)),
    "conv1 7x7/2": ("resnet18", matmul, (64, 147), (8, 147, 12544)),
    "layer1 3x3": ("resnet18", matmul, (64, 576), (8, 576, 3136)),
    "layer2 3x3": ("resnet18", matmul, (128, 1152), (8, 1152, 784)),
    "layer3 3x3": ("resnet18", matmul, (256, 2304), (8, 2304, 196)),
    "layer4 3x3": ("resnet18", matmul, (512, 4608), (8, 4608, 49)),
    "fc": ("resnet18", linear, (8, 512), (1000, 512)),
}


def flops(name):
    _, fn, a, b = SHAPES[name]
    if fn is linear:
        return 2.0 * a[0] * a[1] * b[0]
    batch = max(a[0] if len(a) == 3 else 1, b[0] if len(b) == 3 else 1)
    return 2.0 * batch * a[-2] * a[-1] * b[-1]


def example(name):
    import numpy as np
    rng = np.random.default_rng(0)
    _, _, a, b = SHAPES[name]
    return (rng.standard_normal(a).astype(np.float32), rng.standard_normal(b).astype(np.float32))


def torch_worker(name):
    _, fn, _, _ = SHAPES[name]
    a, b = (torch.from_numpy(x) for x in example(name))
    out = fn(a, b)
    call = ((lambda: torch.matmul(a, b, out=out)) if fn is matmul
            else (lambda: torch.addmm(out, a, b.t(), beta=0, out=out)))
    with torch.no_grad():
        return measure.timed(call, runs=RUNS, warmup=5)


GEMM_STEP = re.compile(r"^  gemm \S+: \d+ calls, min ([0-9.]+) ms, median ([0-9.]+) ms")


def sotc_gemm(name, tmp):
    """The GEMM step's median seconds under `sotc bench`, and its gemm: line."""
    import numpy as np
    import sotc
    _, fn, _, _ = SHAPES[name]
    a, b = example(name)
    stem = os.path.join(tmp, re.sub(r"\W+", "_", name))
    path = sotc.trace(fn, a, b).save(stem + ".pb")
    subprocess.run([SOTC, "compile", path, "--target", "cpu", "-o", stem + ".so"], check=True)
    np.save(stem + "_a.npy", a)
    np.save(stem + "_b.npy", b)
    names = "w" if fn is linear else "b"
    out = subprocess.run([SOTC, "bench", stem + ".so", f"--input=a=@{stem}_a.npy",
                          f"--input={names}=@{stem}_b.npy", "--repeat", str(RUNS),
                          "--warmup", "5"], check=True, capture_output=True, text=True).stdout
    steps = [GEMM_STEP.match(line) for line in out.splitlines()]
    steps = [m for m in steps if m]
    if len(steps) != 1:
        raise RuntimeError(f"{name}: expected one GEMM step in sotc bench's output:\n{out}")
    implementation = next(line[len("gemm: "):] for line in out.splitlines()
                          if line.startswith("gemm: "))
    return float(steps[0].group(2)) / 1e3, implementation


def table(report):
    lines = ["| GEMM | model | shape (batch x m x k x n) | GFLOP | sotc | torch | sotc / torch | "
             "sotc, % of peak | torch, % of peak |", "|---|---|---|---|---|---|---|---|---|"]
    peak = report["peak_gflops"]
    for name, row in report["shapes"].items():
        s, t = row["sotc_gflops"], row["torch_gflops"]
        lines.append(f"| {name} | {row['model']} | {row['shape']} | {row['gflop']:.3f} | "
                     f"{s:.0f} GFLOP/s | {t:.0f} GFLOP/s | {s / t:.2f} | {100 * s / peak:.0f}% | "
                     f"{100 * t / peak:.0f}% |")
    return "\n".join(lines)


def shape_text(name):
    _, fn, a, b = SHAPES[name]
    if fn is linear:
        return f"{a[0]} x {a[1]} x {b[0]}, B transposed"
    batch = max(a[0] if len(a) == 3 else 1, b[0] if len(b) == 3 else 1)
    shared = " (A shared)" if len(a) == 2 else ""
    return f"{batch} x {a[-2]} x {a[-1]} x {b[-1]}{shared}"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--torch", metavar="NAME")
    args = parser.parse_args()
    if args.torch:
        torch.set_num_threads(len(os.sched_getaffinity(0)))
        print(json.dumps(torch_worker(args.torch)))
        return 0
    cores = len(os.sched_getaffinity(0))
    peaks = [json.loads(line) for line in subprocess.run(
        [FMA_PEAK, str(cores)], check=True, capture_output=True, text=True).stdout.splitlines()]
    peak = peaks[-1]
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": measure.machine(),
              "torch": torch.__version__, "peak_gflops": peak["gflops"], "peak_isa": peak["isa"],
              "peaks": peaks, "shapes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in SHAPES:
            seconds, implementation = sotc_gemm(name, tmp)
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch", name],
                                 check=True, capture_output=True, text=True).stdout
            torch_s = json.loads(out.strip().splitlines()[-1])["median_s"]
            report["gemm"] = implementation
            report["shapes"][name] = {
                "model": SHAPES[name][0], "shape": shape_text(name), "gflop": flops(name) / 1e9,
                "sotc_s": seconds, "torch_s": torch_s, "sotc_gflops": flops(name) / seconds / 1e9,
                "torch_gflops": flops(name) / torch_s / 1e9}
            row = report["shapes"][name]
            print(f"{name}: sotc {row['sotc_gflops']:.0f}, torch {row['torch_gflops']:.0f} GFLOP/s",
                  file=sys.stderr, flush=True)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "gemm.json"), "w") as f:
        json.dump(report, f, indent=1)
    head_line = (f"Run of {report['date']} on {report['machine']['cpu']} "
                 f"({report['machine']['cores']} cores); sotc's GEMMs on "
                 f"{report['gemm']}; torch {report['torch']}; float32 FMA peak "
                 f"{peak['gflops']:.0f} GFLOP/s ({peak['isa']}, {peak['threads']} threads, "
                 "measured).")
    measure.write_section(DOC, "GEMM RESULTS", f"{head_line}\n\n{table(report)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
