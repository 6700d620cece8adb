#!/usr/bin/env python3
"""One measurement in a fresh process (bench/run.py starts one per tool, workload and thread
count, pinned with taskset, so that every library sees the cores it may use from the start):

    measure.py run TOOL WORKLOAD [ARTIFACT]   steady-state times: JSON {median_s, min_s, ...}
    measure.py compile TOOL WORKLOAD          a peer's compile time in this fresh process

TOOL: sotc (ARTIFACT: the compiled .so), numpy, jax, torch (eager), torch_compile.
Timing: 3 warm-up calls, then RUNS timed calls; median and minimum. Outputs are fresh
arrays per call for every tool (what each returns); sotc is also timed writing into one
reused buffer (`out=`), which no peer here offers for a whole fused function.
"""

import atexit
import json
import os
import platform
import shutil
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools", "python"))

RUNS = 20


def inputs(shapes):
    rng = np.random.default_rng(0)
    return {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}


def machine():
    """The CPU, cores, memory, kernel and Python of this machine, for a report."""
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        memory = int(f.readline().split()[1]) // (1 << 20)
    return {"cpu": model, "cores": os.cpu_count(), "memory_gib": memory,
            "kernel": platform.release(), "python": platform.python_version()}


def write_section(doc, name, text):
    """Replaces what lies between `<!-- BEGIN {name} -->` and `<!-- END {name} -->` in `doc`."""
    with open(doc) as f:
        content = f.read()
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    content = (content[:content.index(begin) + len(begin)] + "\n" + text + "\n" +
               content[content.index(end):])
    with open(doc, "w") as f:
        f.write(content)


def timed(call, runs=RUNS, warmup=3):
    """Median and minimum of `runs` calls after `warmup` untimed ones."""
    for _ in range(warmup):
        call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    times.sort()
    return {"median_s": times[len(times) // 2], "min_s": times[0]}


def run(tool, name, artifact=None):
    import workloads
    fn, shapes = workloads.WORKLOADS[name]
    args = inputs(shapes)
    if tool == "sotc":
        import sotc
        f = sotc.load(artifact)
        result = timed(lambda: f(**args))
        out = f(**args)
        buffers = list(out) if isinstance(out, tuple) else [out]
        reused = timed(lambda: f(**args, out=buffers))
        result.update({"reused_median_s": reused["median_s"], "reused_min_s": reused["min_s"]})
        return result
    if tool == "numpy":
        f = workloads.array_api(name, np)
        return timed(lambda: f(**args))
    if tool == "jax":
        import jax
        import jax.numpy as jnp
        f = jax.jit(workloads.array_api(name, jnp, jax))
        device = {k: jnp.asarray(v) for k, v in args.items()}
        return timed(lambda: f(**device).block_until_ready())
    import torch
    tensors = {k: torch.from_numpy(v) for k, v in args.items()}
    f = torch.compile(fn) if tool == "torch_compile" else fn
    with torch.no_grad():
        return timed(lambda: f(**tensors))


def compile_time(tool, name):
    import workloads
    fn, shapes = workloads.WORKLOADS[name]
    args = inputs(shapes)
    if tool == "jax":
        import jax
        import jax.numpy as jnp
        f = jax.jit(workloads.array_api(name, jnp, jax))
        device = {k: jnp.asarray(v) for k, v in args.items()}
        start = time.perf_counter()
        f.lower(**device).compile()
        return {"compile_s": time.perf_counter() - start}
    # A cold compile, as a user's first: no cache of graphs or of built kernels to find.
    os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    cache = tempfile.mkdtemp(prefix="sotc-bench-inductor-")
    atexit.register(shutil.rmtree, cache, True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    import torch
    tensors = {k: torch.from_numpy(v) for k, v in args.items()}
    with torch.no_grad():
        fn(**tensors)  # warm the eager path first
        start = time.perf_counter()
        fn(**tensors)
        eager = time.perf_counter() - start
        f = torch.compile(fn)
        start = time.perf_counter()
        f(**tensors)
        first = time.perf_counter() - start
    return {"compile_s": first - eager}


if __name__ == "__main__":
    what, tool, name = sys.argv[1:4]
    result = run(tool, name, *sys.argv[4:]) if what == "run" else compile_time(tool, name)
    print(json.dumps(result))
