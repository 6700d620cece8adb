#!/usr/bin/env python3
"""A dynamic size against static shapes (scripts/bench.sh runs this after bench/latency.py):
softmax, layer norm and the MLP of bench/workloads.py, and testdata's transformer block (whose
attention moves the batch behind the q/k/v split), traced once with a `?` batch and once per
batch size; the same block traced once with a `?` sequence length ([1, ?, 64]: the scores
T x T, softmax rows of T) and once per length; all compiled for the CPU, each called at the
same sizes, in one run on one machine.

    dynamic.py          writes bench/results/dynamic.json and the table of docs/benchmarks.md
                        (between its BEGIN/END DYNAMIC RESULTS)

Each call: sotc.load's callable on numpy arrays; median over RUNS calls after warm-up, on
every core. The dynamic artifact's first call of a size makes its plan of those rows (kept for
later calls): the warm-up takes it.
"""

import json
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
RUNS = 50
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

import numpy as np  # noqa: E402

import measure  # noqa: E402  (its timing and machine description)
import workloads  # noqa: E402

WIDTH = 1024
BATCHES = (1, 64, 4096)
# name -> the shapes after the batch of each input (None: the input has no batch)
SHAPES = {
    "softmax": {"x": (WIDTH,)},
    "layer_norm": {"x": (WIDTH,), "weight": None, "bias": None},
    "mlp": {"x": (WIDTH,), "w1": None, "b1": None, "w2": None, "b2": None},
    "transformer_block": {"x": (128, 64)},  # testdata/models/transformer_torch.py
    "transformer_sequence": {"x": (64,)},  # the same block, one sequence of ? tokens
}
BLOCK_BATCHES = (1, 8, 64)
SEQUENCE_LENGTHS = (16, 128, 512)
STATIC = {  # the inputs without a batch
    "layer_norm": {"weight": (WIDTH,), "bias": (WIDTH,)},
    "mlp": {"w1": (4 * WIDTH, WIDTH), "b1": (4 * WIDTH,), "w2": (WIDTH, 4 * WIDTH),
            "b2": (WIDTH,)},
}


def compiled(name, batch, tmp):
    """The workload traced with `batch` rows ("?" for a dynamic batch), compiled for the CPU."""
    import sotc
    specs = {}
    for arg, rest in SHAPES[name].items():
        shape = [batch, *rest] if rest is not None else list(STATIC[name][arg])
        if name == "transformer_sequence":
            shape = [1, *shape]
        specs[arg] = sotc.parse_tensor_spec(f"float32[{','.join(map(str, shape))}]")
    trace = os.path.join(tmp, f"{name}_{'dyn' if batch == '?' else batch}.pb")
    if name.startswith("transformer_"):
        sys.path.insert(0, os.path.join(ROOT, "testdata", "models"))
        import transformer_torch
        sotc.trace(transformer_torch.make_model().eval(), specs["x"]).save(trace)
    else:
        with sotc.stub_missing_frameworks():
            sotc.trace(workloads.WORKLOADS[name][0], **specs).save(trace)
    library = trace[:-3] + ".so"
    subprocess.run([SOTC, "compile", trace, "--target", "cpu", "-o", library], check=True)
    return sotc.load(library)


def main():
    rng = np.random.default_rng(0)
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": measure.machine(), "rows": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in SHAPES:
            dynamic = compiled(name, "?", tmp)
            sizes = {"transformer_block": BLOCK_BATCHES,
                     "transformer_sequence": SEQUENCE_LENGTHS}.get(name, BATCHES)
            for n in sizes:
                static = compiled(name, n, tmp)
                lead = (1, n) if name == "transformer_sequence" else (n,)
                args = {arg: (rng.standard_normal((*lead, *rest)) if rest is not None
                              else rng.standard_normal(STATIC[name][arg]) * 0.05)
                        .astype(np.float32) for arg, rest in SHAPES[name].items()}
                error = float(np.abs(np.asarray(dynamic(**args)) -
                                     np.asarray(static(**args))).max())
                row = {"static_s": measure.timed(lambda: static(**args), runs=RUNS)["median_s"],
                       "dynamic_s": measure.timed(lambda: dynamic(**args), runs=RUNS)["median_s"],
                       "max_abs_difference": error}
                report["rows"][f"{name} {n}"] = row
                print(f"{name} x{n}: static {row['static_s'] * 1e3:.3f} ms, dynamic "
                      f"{row['dynamic_s'] * 1e3:.3f} ms", file=sys.stderr, flush=True)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "dynamic.json"), "w") as f:
        json.dump(report, f, indent=1)
    lines = [f"Run of {report['date']} on {report['machine']['cpu']} "
             f"({report['machine']['cores']} cores), median of {RUNS} calls each "
             f"(sotc.load on numpy arrays), rows of {WIDTH} float32 (the transformer block: "
             f"128 tokens of 64; transformer_sequence: the same block, one sequence of that "
             f"many tokens, the length dynamic).", "",
             "| workload | batch or length | static | dynamic | dynamic / static |",
             "|---|---|---|---|---|"]
    for key, row in report["rows"].items():
        name, n = key.split()
        lines.append(f"| {name} | {n} | {row['static_s'] * 1e3:.3f} ms | "
                     f"{row['dynamic_s'] * 1e3:.3f} ms | "
                     f"{row['dynamic_s'] / row['static_s']:.2f} |")
    measure.write_section(DOC, "DYNAMIC RESULTS", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
