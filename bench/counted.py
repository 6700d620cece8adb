#!/usr/bin/env python3
"""Sizes a kernel counts (docs/dynamic-shapes.md#sizes-a-kernel-counts): a detector's
post-processing as torchvision's RetinaNet and FCOS run it -- a score threshold over N boxes,
the best 1000 of those kept (topk of a counted size), then torchvision's batched_nms over them
-- compiled once by sotc for the CPU and called with few, some and many boxes over the
threshold, against torch eager running the same function (with torchvision's C++ nms), each
in a process of its own on every core.

    counted.py          prints the table and writes it into docs/benchmarks.md (between its
                        BEGIN/END COUNTED RESULTS)

Each figure: the median of RUNS calls after warm-up. Needs the reference environment's torch
and torchvision (scripts/setup.sh) and a built sotc (bazel build //tools/sotc
//runtime:libsotc_runtime.so).
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
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
N = 20000
SELECTED = (0.01, 0.1, 0.5)  # the share of boxes over the threshold
RUNS = 30
sys.path.insert(0, HERE)

import measure  # noqa: E402  (the machine's description)

PROGRAM = '''
import torch, torchvision

def detect(boxes, scores, labels):
    keep = scores > 0.5
    b, s, l = boxes[keep], scores[keep], labels[keep]
    s, top = s.topk(min(1000, s.size(0)))  # the best candidates, sorted
    b, l = b[top], l[top]
    kept = torchvision.ops.batched_nms(b, s, l, 0.5)
    return b[kept], s[kept], l[kept]
'''

# One process per peer: its inputs made from a seed, then RUNS timed calls; prints JSON.
RUNNER = '''
import json, statistics, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import program
peer, n, runs = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
shares = json.loads(sys.argv[5])
rng = np.random.default_rng(0)
corner = rng.uniform(0, 600, (n, 2))
boxes = np.concatenate([corner, corner + rng.uniform(8, 64, (n, 2))], 1).astype(np.float32)
labels = rng.integers(0, 8, n).astype(np.int64)
if peer == "sotc":
    import sotc
    f = sotc.load(sys.argv[6])
    call = lambda *a: f(*a)
else:
    import torch
    torch.set_grad_enabled(False)
    def call(b, s, l):
        return program.detect(torch.from_numpy(b), torch.from_numpy(s), torch.from_numpy(l))
out = {}
for share in shares:
    scores = np.where(rng.random(n) < share, rng.uniform(0.55, 1, n),
                      rng.uniform(0, 0.45, n)).astype(np.float32)
    kept = len(call(boxes, scores, labels)[0])
    for _ in range(3):
        call(boxes, scores, labels)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call(boxes, scores, labels)
        times.append(time.perf_counter() - start)
    out[str(share)] = {"ms": 1e3 * statistics.median(times), "kept": kept}
print(json.dumps(out))
'''


def main():
    python = os.environ.get("SOTC_REFERENCE_PYTHON",
                            os.path.expanduser("~/.cache/sotc/reference-env/bin/python"))
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tools", "python"),
               SOTC_RUNTIME_LIBRARY=os.path.join(ROOT, "bazel-bin", "runtime",
                                                 "libsotc_runtime.so"))
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "program.py"), "w") as f:
            f.write(PROGRAM)
        with open(os.path.join(tmp, "runner.py"), "w") as f:
            f.write(RUNNER)
        trace = os.path.join(tmp, "detect.pb")
        subprocess.run([python, "-m", "sotc", "trace", "program.py:detect", "--framework",
                        "torch", "-i", f"boxes=f32[{N},4]", "-i", f"scores=f32[{N}]", "-i",
                        f"labels=i64[{N}]", "-o", trace], cwd=tmp, env=env, check=True)
        artifact = os.path.join(tmp, "detect.so")
        subprocess.run([SOTC, "compile", trace, "--target", "cpu", "-o", artifact], check=True)
        results = {}
        for peer in ("sotc", "torch"):
            r = subprocess.run([python, os.path.join(tmp, "runner.py"), tmp, peer, str(N),
                                str(RUNS), json.dumps(SELECTED), artifact], env=env,
                               check=True, capture_output=True, text=True)
            results[peer] = json.loads(r.stdout.strip().splitlines()[-1])
    machine = measure.machine()
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [f"Run of {date} on {machine['cpu']} ({machine['cores']} cores), median of {RUNS} "
             f"calls each, {N} boxes (8 classes), each peer in a process of its own.", "",
             "| boxes over the threshold | kept after top 1000 and nms | sotc | torch eager | "
             "sotc / torch |",
             "|---|---|---|---|---|"]
    for share in SELECTED:
        s, t = results["sotc"][str(share)], results["torch"][str(share)]
        assert s["kept"] == t["kept"], (share, s, t)
        lines.append(f"| {share:.0%} | {s['kept']} | {s['ms']:.3f} ms | {t['ms']:.3f} ms | "
                     f"{s['ms'] / t['ms']:.2f} |")
    table = "\n".join(lines)
    print(table)
    measure.write_section(DOC, "COUNTED RESULTS", table)


if __name__ == "__main__":
    main()
