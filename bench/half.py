#!/usr/bin/env python3
"""float16 and bfloat16 on the CPU (scripts/bench.sh runs this after bench/gemm.py): workloads
of bench/workloads.py traced with half inputs, compiled for the CPU (stored in half, computed
in float32: sotc-sir-widen-half), against torch eager on the same half tensors and on float32
ones, in one run on one machine.

    half.py             every workload and half type; writes bench/results/half.json and the
                        half table of docs/benchmarks.md (between its BEGIN/END HALF RESULTS)

Each call: sotc.load's callable on torch tensors (torch tensors back), torch eager under
no_grad; median over RUNS calls after warm-up, on every core the process may use. The GB/s
column counts the half inputs read and results written once.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOTC = os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc")
RESULTS = os.path.join(HERE, "results")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
RUNS = 20
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import measure  # noqa: E402  (its timing and machine description)
import workloads  # noqa: E402

N = 2048
# name -> shapes (smaller than the float32 suite's: torch's half CPU kernels are slow)
SHAPES = {
    "softmax": {"x": (N, N)},
    "layer_norm": {"x": (N, N), "weight": (N,), "bias": (N,)},
    "rms_norm": {"x": (N, N), "weight": (N,)},
    "mlp": {"x": (256, 1024), "w1": (4096, 1024), "b1": (4096,), "w2": (1024, 4096),
            "b2": (1024,)},
}
HALVES = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def compiled(name, half, tmp):
    import sotc
    fn = workloads.WORKLOADS[name][0]
    specs = {k: sotc.parse_tensor_spec(f"{half}[{','.join(map(str, s))}]")
             for k, s in SHAPES[name].items()}
    trace = os.path.join(tmp, f"{name}_{half}.pb")
    sotc.trace(fn, **specs).save(trace)
    library = trace[:-3] + ".so"
    subprocess.run([SOTC, "compile", trace, "--target", "cpu", "-o", library], check=True)
    return sotc.load(library)


def main():
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    rng = np.random.default_rng(0)
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": measure.machine(), "torch": torch.__version__, "workloads": {}}
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
        for name, shapes in SHAPES.items():
            fn = workloads.WORKLOADS[name][0]
            f32 = {k: torch.from_numpy(rng.standard_normal(s).astype(np.float32) * 0.5)
                   for k, s in shapes.items()}
            for half, dtype in HALVES.items():
                args = {k: v.to(dtype) for k, v in f32.items()}
                f = compiled(name, half, tmp)
                result = f(**args)
                error = float((result.float() - fn(**{k: v.float() for k, v in args.items()}))
                              .abs().max())
                moved = 2 * (sum(math.prod(s) for s in shapes.values()) + result.numel())
                row = {"sotc_s": measure.timed(lambda: f(**args), runs=RUNS)["median_s"],
                       "torch_half_s": measure.timed(lambda: fn(**args), runs=RUNS)["median_s"],
                       "torch_f32_s": measure.timed(lambda: fn(**f32), runs=RUNS)["median_s"],
                       "bytes": moved, "max_abs_error_vs_f32": error}
                report["workloads"][f"{name} {half}"] = row
                print(f"{name} {half}: sotc {row['sotc_s'] * 1e3:.2f} ms, torch {half} "
                      f"{row['torch_half_s'] * 1e3:.2f} ms, torch float32 "
                      f"{row['torch_f32_s'] * 1e3:.2f} ms", file=sys.stderr, flush=True)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "half.json"), "w") as f:
        json.dump(report, f, indent=1)
    lines = [f"Run of {report['date']} on {report['machine']['cpu']} "
             f"({report['machine']['cores']} cores); torch {report['torch']}.", "",
             "| workload | dtype | sotc | torch (half) | torch (float32) | sotc / torch half | "
             "sotc GB/s |", "|---|---|---|---|---|---|---|"]
    for key, row in report["workloads"].items():
        name, half = key.split()
        lines.append(f"| {name} | {half} | {row['sotc_s'] * 1e3:.2f} ms | "
                     f"{row['torch_half_s'] * 1e3:.2f} ms | {row['torch_f32_s'] * 1e3:.2f} ms | "
                     f"{row['sotc_s'] / row['torch_half_s']:.2f} | "
                     f"{row['bytes'] / row['sotc_s'] / 1e9:.1f} |")
    measure.write_section(DOC, "HALF RESULTS", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
