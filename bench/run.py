#!/usr/bin/env python3
"""The benchmark suite (scripts/bench.sh runs it in the peers' environment): sotc against
numpy, jax.jit, torch eager and torch.compile on bench/workloads.py, on this machine, in one
run, next to the machine's memory limit.

Writes bench/results/latest.json (every figure), bench/results/chart.png (time relative to
the memory limit per workload and tool) and the table of docs/benchmarks.md (between its
BEGIN/END RESULTS markers). `run.py --redraw` writes the chart and the table again from
latest.json.
"""

import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOTC = os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc")
STREAM = os.path.join(ROOT, "bazel-bin", "bench", "stream")
RESULTS = os.path.join(HERE, "results")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
TOOLS = ["sotc", "numpy", "jax", "torch", "torch_compile"]
PEERS = TOOLS[1:]
THREADS = [1, 2]

sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

import measure  # noqa: E402  (its section writer; the timing runs in its own processes)


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def pinned(threads):
    """The command prefix and environment that give a process `threads` cores."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "SOTC_NUM_THREADS"):
        env[var] = str(threads)
    if threads == 1:
        env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    return ["taskset", "-c", ",".join(map(str, range(threads)))], env


def measure(args, threads):
    prefix, env = pinned(threads)
    out = subprocess.run(prefix + [sys.executable, os.path.join(HERE, "measure.py")] + args,
                         capture_output=True, text=True, env=env)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def wall(command, repeats=5):
    """The fastest wall time of a command, each in a fresh process."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def compile_sotc(name, fn, shapes, tmp):
    import sotc
    specs = {k: sotc.parse_tensor_spec(f"float32[{','.join(map(str, s))}]")
             for k, s in shapes.items()}
    trace = os.path.join(tmp, name + ".pb")
    sotc.trace(fn, **specs).save(trace)
    library = os.path.join(tmp, name + ".so")
    cpu = wall([SOTC, "compile", trace, "--target", "cpu", "-o", library])
    timing = subprocess.run([SOTC, "compile", trace, "--target", "cpu", "-o", library, "--timing"],
                            capture_output=True, text=True, check=True).stderr
    pipeline = float(re.search(r"([0-9.]+) \(100.0%\)\s+Total", timing).group(1))
    cuda = wall([SOTC, "compile", trace, "--gpu-arch", "sm_90", "-o",
                 os.path.join(tmp, name + "_cuda.fatbin")])
    return library, {"cpu_cold_s": cpu, "cpu_pipeline_s": pipeline, "cuda_cold_s": cuda}


def main():
    import workloads
    from sotc._runtime import _static_results  # the result's tensors, as the binding reads them
    os.makedirs(RESULTS, exist_ok=True)
    log("machine and memory limit")
    stream = json.loads(subprocess.run([STREAM, "2", "256"], capture_output=True, text=True,
                                       check=True).stdout)
    limit = {str(t): max(r["copy_gbs"] for r in stream["results"] if r["threads"] == t)
             for t in THREADS}  # str keys: the same after a round trip through JSON
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": measure.machine(),
              "stream": stream, "limit_gbs": limit, "workloads": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (fn, shapes) in workloads.WORKLOADS.items():
            log("workload", name)
            library, compile_times = compile_sotc(name, fn, shapes, tmp)
            # Inputs read once, the result (as the manifest gives it) written once.
            with open(library[:-len(".so")] + ".manifest.json") as f:
                results = _static_results(json.load(f))
            moved = 4 * sum(math.prod(s) for s in list(shapes.values()) + [s for _, s in results])
            entry = {"shapes": {k: list(s) for k, s in shapes.items()}, "min_bytes": moved,
                     "sotc_compile": compile_times, "peer_compile": {}, "runs": {}}
            for tool in ("jax", "torch_compile"):
                entry["peer_compile"][tool] = measure(["compile", tool, name], 2)
            for threads in THREADS:
                entry["runs"][str(threads)] = {
                    tool: measure(["run", tool, name] + ([library] if tool == "sotc" else []),
                                  threads) for tool in TOOLS}
                entry["runs"][str(threads)]["limit_s"] = moved / (limit[str(threads)] * 1e9)
                log("  ", threads, "threads:", {t: round(r.get("median_s", float("nan")) * 1e3, 2)
                                                 for t, r in entry["runs"][str(threads)].items()
                                                 if isinstance(r, dict)})
            report["workloads"][name] = entry
    with open(os.path.join(RESULTS, "latest.json"), "w") as f:
        json.dump(report, f, indent=1)
    chart(report)
    table(report)
    log("wrote", os.path.relpath(os.path.join(RESULTS, "latest.json"), ROOT), "chart.png and",
        os.path.relpath(DOC, ROOT))


def ms(seconds):
    return f"{seconds * 1e3:.1f}" if seconds is not None else "-"


def table(report):
    m = report["machine"]
    lines = [f"Run of {report['date']} on {m['cpu']} ({m['cores']} cores, {m['memory_gib']} GiB), "
             f"Linux {m['kernel']}, Python {m['python']}.",
             "",
             "Memory limit (STREAM-style copy, best of ordinary and non-temporal stores): " +
             ", ".join(f"{report['limit_gbs'][str(t)]:.1f} GB/s on {t} thread{'s' * (t > 1)}"
                       for t in THREADS) + ".",
             ""]
    for threads in THREADS:
        lines += [f"### {threads} thread{'s' * (threads > 1)}: median ms (x the memory limit)", "",
                  "| workload | limit | sotc (reused out) | sotc | numpy | jax.jit | torch | "
                  "torch.compile | best peer / sotc (reused) |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for name, w in report["workloads"].items():
            runs = w["runs"][str(threads)]
            limit = runs["limit_s"]

            def cell(seconds):
                return f"{ms(seconds)} ({seconds / limit:.1f}x)" if seconds else "failed"
            peers = [runs[t].get("median_s") for t in PEERS]
            best_peer = min([p for p in peers if p] or [None], key=lambda p: p or 0)
            sotc = runs["sotc"]
            ratio = (f"{best_peer / sotc['reused_median_s']:.1f}x"
                     if best_peer and sotc.get("reused_median_s") else "-")
            lines.append(f"| {name} | {ms(limit)} | {cell(sotc.get('reused_median_s'))} | "
                         f"{cell(sotc.get('median_s'))} | " +
                         " | ".join(cell(p) for p in peers) + f" | {ratio} |")
        lines.append("")
    lines += ["### Compile time (s)", "",
              "| workload | sotc --target cpu (cold process) | sotc pipeline (in process) | "
              "sotc --target cuda, sm_90 (cold) | jax lower().compile() | torch.compile |",
              "|---|---|---|---|---|---|"]
    for name, w in report["workloads"].items():
        c, p = w["sotc_compile"], w["peer_compile"]
        lines.append(f"| {name} | {c['cpu_cold_s']:.3f} | {c['cpu_pipeline_s']:.3f} | "
                     f"{c['cuda_cold_s']:.3f} | " +
                     " | ".join(f"{p[t]['compile_s']:.3f}" if "compile_s" in p[t] else "failed"
                                for t in ("jax", "torch_compile")) + " |")
    measure.write_section(DOC, "RESULTS", "\n".join(lines))


def chart(report):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(report["workloads"])
    series = [("sotc", "reused_median_s"), ("sotc", "median_s")] + [(t, "median_s") for t in PEERS]
    labels = ["sotc (reused out)", "sotc", "numpy", "jax.jit", "torch", "torch.compile"]
    fig, axes = plt.subplots(1, len(THREADS), figsize=(14, 5), sharey=True)
    width = 0.8 / len(series)
    for ax, threads in zip(axes, THREADS):
        for i, ((tool, key), label) in enumerate(zip(series, labels)):
            values = []
            for name in names:
                runs = report["workloads"][name]["runs"][str(threads)]
                seconds = runs[tool].get(key)
                values.append(seconds / runs["limit_s"] if seconds else 0)
            ax.bar([x + i * width for x in range(len(names))], values, width, label=label)
        ax.axhline(1, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(names))], names, rotation=30)
        ax.set_title(f"{threads} thread{'s' * (threads > 1)}")
    axes[0].set_ylabel("median time / memory limit (1 = one pass at STREAM speed)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"sotc and peers, float32, {report['machine']['cpu']}")
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "chart.png"), dpi=90)


if __name__ == "__main__":
    if sys.argv[1:] == ["--redraw"]:  # the chart and the table again, from latest.json
        with open(os.path.join(RESULTS, "latest.json")) as f:
            saved = json.load(f)
        chart(saved)
        table(saved)
    else:
        main()
