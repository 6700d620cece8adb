#!/usr/bin/env python3
"""Small calls (scripts/bench.sh runs it after half.py): the time one call of a tiny compiled
function takes, where the kernels are microseconds and what surrounds them decides: sotc.load
called with numpy arrays and with torch tensors, the runtime alone (`sotc bench`: a run's
median and what it spends outside its steps), against torch eager and torch.compile in the
same process. Writes bench/results/latency.json and the latency table of docs/benchmarks.md
(between its BEGIN/END LATENCY RESULTS markers).

    latency.py        (a python with torch, numpy and the sotc package on its path)
"""

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
RESULTS = os.path.join(HERE, "results")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))
sys.path.insert(0, os.path.join(ROOT, "testdata", "models"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import measure  # noqa: E402
import sotc  # noqa: E402

CALLS = 5000


def relu_sin(x):
    return torch.relu(torch.sin(x))


def softmax(x):
    return torch.softmax(x, -1)


def block():
    import transformer_torch
    return transformer_torch.make_model()


# (name, what, the function or model, its input)
WORKLOADS = [
    ("relu_sin", "relu(sin(x)), x [64]", relu_sin, (64,)),
    ("softmax", "softmax(x, -1), x [32, 128]", softmax, (32, 128)),
    ("transformer block", "testdata's block (width 64), x [1, 16, 64]", block(), (1, 16, 64)),
]


def per_call(fn, *args):
    """Median microseconds of one call over CALLS calls, in 10 batches."""
    for _ in range(100):
        fn(*args)
    batches = []
    for _ in range(10):
        start = time.perf_counter()
        for _ in range(CALLS // 10):
            fn(*args)
        batches.append((time.perf_counter() - start) / (CALLS // 10) * 1e6)
    return float(np.median(batches))


def sotc_bench(library):
    """sotc bench's median run and time outside the steps, in microseconds."""
    out = subprocess.run([SOTC, "bench", library, "--input", "x=random", "--repeat",
                          str(CALLS)], check=True, capture_output=True, text=True).stdout
    run = float(re.search(r"^run: min [0-9.]+ ms, median ([0-9.]+) ms", out, re.M).group(1))
    outside = float(re.search(r"^outside steps: ([0-9.]+) ms", out, re.M).group(1))
    return run * 1e3, outside * 1e3


def measure_all(work):
    rows = []
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    for name, what, fn, shape in WORKLOADS:
        x = torch.from_numpy(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
        library = os.path.join(work, name.replace(" ", "_") + ".so")
        trace = sotc.trace(fn, x).save(library[:-3] + ".pb")
        subprocess.run([SOTC, "compile", trace, "--target", "cpu", "-o", library], check=True)
        f = sotc.load(library)
        compiled = torch.compile(fn)
        with torch.no_grad():
            compiled(x)  # compiles
            row = {"workload": name, "what": what,
                   "sotc numpy": per_call(f, x.numpy()),
                   "sotc torch": per_call(f, x),
                   "torch eager": per_call(fn, x),
                   "torch.compile": per_call(compiled, x)}
        row["sotc runtime"], row["outside steps"] = sotc_bench(library)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def table(rows):
    head = ("| workload | sotc.load (numpy) | sotc.load (torch) | runtime alone (outside steps) "
            "| torch eager | torch.compile |\n|---|---|---|---|---|---|\n")
    return head + "".join(
        f"| {r['workload']}: {r['what']} | {r['sotc numpy']:.1f} us | {r['sotc torch']:.1f} us "
        f"| {r['sotc runtime']:.1f} us ({r['outside steps']:.1f} us) | {r['torch eager']:.1f} us "
        f"| {r['torch.compile']:.1f} us |\n" for r in rows)


def main():
    with tempfile.TemporaryDirectory() as work:
        rows = measure_all(work)
    machine = measure.machine()
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "latency.json"), "w") as f:
        json.dump({"machine": machine, "calls": CALLS, "rows": rows}, f, indent=1)
    text = (f"Run of {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
            f"{machine['cpu']} ({machine['cores']} cores), torch {torch.__version__}, "
            f"median of {CALLS} calls each (microseconds per call).\n\n" + table(rows))
    print(text)
    measure.write_section(DOC, "LATENCY RESULTS", text)


if __name__ == "__main__":
    main()
