"""Runs a CPU artifact's kernels for x86-64-v3 and for x86-64-v4 (SOTC_KERNEL_CPU) with
`sotc run` on the same random inputs and compares the results (compile-cpu.test):
compare_kernel_cpus.py ARTIFACT PARAMETER..."""
import os
import subprocess
import sys
import tempfile

import numpy as np

artifact = sys.argv[1]
parameters = sys.argv[2:]
results = {}
with tempfile.TemporaryDirectory() as tmp:
    for cpu in ("x86-64-v3", "x86-64-v4"):
        out = os.path.join(tmp, cpu + ".npz")
        run = subprocess.run(["sotc", "run", artifact, "-o", out] +
                             [f"--input={p}=random" for p in parameters],
                             env=dict(os.environ, SOTC_KERNEL_CPU=cpu), capture_output=True,
                             text=True)
        if run.returncode:
            assert cpu == "x86-64-v4" and "E8003" in run.stderr, run.stderr
            print(f"{cpu}: refused on this CPU (E8003)")
            continue
        with np.load(out) as saved:
            results[cpu] = {k: saved[k] for k in saved.files}
        if cpu == "x86-64-v3":
            print(f"{cpu}: ran")
            continue
        base = results["x86-64-v3"]
        assert base.keys() == results[cpu].keys()
        for name, value in results[cpu].items():
            np.testing.assert_allclose(value, base[name], rtol=1e-5, atol=1e-5)
        print(f"{cpu}: ran, within 1e-5 of x86-64-v3")
