"""The CPU target end to end: `sotc compile --target cpu` builds a shared library whose kernels,
called through their C ABI with ctypes, compute what numpy computes for the traced program."""

import ctypes
import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, weight, bias):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * weight + bias


# program -> numpy reference of its single kernel
REFERENCES = {
    "21_exp_minus_x": lambda x: np.exp(x) - x,
    "22_relu_sin": lambda x: np.maximum(np.sin(x), 0),
    "23_softmax": softmax,
    "24_layer_norm": layer_norm,
    "25_rms_norm": lambda x, weight: x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-6) * weight,
}


def specs(root, program):
    """Parameter name -> shape, from the program's '# sotc-trace:' line."""
    with open(os.path.join(root, "testdata", "programs", program + ".py")) as f:
        header = f.readline()
    return {name: [int(d) for d in dims.split(",")]
            for name, dims in re.findall(r"(\w+)=float32\[([\d,]+)\]", header)}


@pytest.mark.parametrize("program", sorted(REFERENCES))
def test_cpu_kernel_matches_numpy(program, root, sotc_bin, tmp_path):
    trace = os.path.join(root, "testdata", "traces", program + ".pb")
    library = tmp_path / "kernels.so"
    subprocess.run([sotc_bin, "compile", trace, "--target", "cpu", "-o", str(library)],
                   check=True, cwd=root)
    # The kernel's name and arguments (outputs first, then inputs), and its grid.
    text = subprocess.run([sotc_bin, "dump", "--map-expr", trace], check=True, cwd=root,
                          capture_output=True, text=True).stdout
    name, args = re.search(r"^(\w+)\((.*)\) \{$", text, re.M).groups()
    loops = subprocess.run([sotc_bin, "compile", trace, "--target", "cpu", "--compile-to", "loops"],
                           check=True, cwd=root, capture_output=True, text=True).stdout
    blocks = int(re.search(r"scf\.forall \(%\w+\) in \((\d+)\)", loops).group(1))

    rng = np.random.default_rng(7)
    shapes = specs(root, program)
    inputs = {p: rng.standard_normal(s).astype(np.float32) for p, s in shapes.items()}
    expected = REFERENCES[program](*inputs.values()).astype(np.float32)
    output = np.zeros_like(expected)
    buffers = []
    for arg in args.split(", "):
        buffers.append(output if arg.startswith("&") else inputs[arg[len("t_"):]])

    kernel = getattr(ctypes.CDLL(str(library)), name)
    kernel.argtypes = [ctypes.c_int64, ctypes.c_int64] + [ctypes.c_void_p] * len(buffers)
    # Two ranges, as the runtime's thread pool would split the grid.
    half = blocks // 2
    kernel(0, half, *[b.ctypes.data for b in buffers])
    kernel(half, blocks, *[b.ctypes.data for b in buffers])
    np.testing.assert_allclose(output, expected, rtol=2e-5, atol=2e-6)


def test_wide_rows_reuse_their_scratch(root, sotc_bin, tmp_path):
    """Softmax over 1024 rows of 4096: each row's exp values live in a 16 KiB scratch that
    the kernel reuses row after row (one per row would need 16 MiB of stack)."""
    trace = tmp_path / "softmax.pb"
    subprocess.run([sys.executable, "-m", "sotc", "trace", "testdata/programs/23_softmax.py:fn",
                    "--input", "x=float32[1024,4096]", "-o", str(trace)],
                   check=True, cwd=root, env={**os.environ, "PYTHONPATH": os.path.join(root, "tools", "python")})
    library = tmp_path / "softmax.so"
    subprocess.run([sotc_bin, "compile", str(trace), "--target", "cpu", "-o", str(library)],
                   check=True, cwd=root)
    with open(tmp_path / "softmax.manifest.json") as f:
        step = json.load(f)["segments"][0]["steps"][0]
    kernel = getattr(ctypes.CDLL(str(library)), step["symbol"])
    kernel.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
    x = np.random.default_rng(3).standard_normal((1024, 4096)).astype(np.float32)
    y = np.empty_like(x)
    kernel(0, step["grid"], y.ctypes.data, x.ctypes.data)
    np.testing.assert_allclose(y, softmax(x), rtol=2e-5, atol=1e-8)


def test_transcendentals_vectorize(root, sotc_bin, tmp_path):
    """f32 tanh, erf and log1p become inline polynomials (sotc-cpu-approximate-math: no call
    left), sin calls glibc's 8-wide AVX2 variant (with a scalar remainder: 1000 is no multiple
    of 8), and all of it still matches numpy."""
    program = tmp_path / "transcendental.py"
    program.write_text("import paddle\n\n\ndef fn(x):\n"
                       "    return paddle.tanh(x) + paddle.erf(x) + paddle.log1p(paddle.abs(x)) "
                       "+ paddle.sin(x)\n")
    trace = tmp_path / "t.pb"
    subprocess.run([sys.executable, "-m", "sotc", "trace", f"{program}:fn",
                    "--input", "x=float32[64,1000]", "-o", str(trace)],
                   check=True, cwd=root, env={**os.environ, "PYTHONPATH": os.path.join(root, "tools", "python")})
    library = tmp_path / "t.so"
    subprocess.run([sotc_bin, "compile", str(trace), "--target", "cpu", "-o", str(library)],
                   check=True, cwd=root)
    disassembly = subprocess.run(["llvm-objdump-22", "-d", str(library)], check=True,
                                 capture_output=True, text=True).stdout
    assert "<_ZGVdN8v_sinf@plt>" in disassembly
    for function in ("tanhf", "erff", "logf", "log1pf"):
        assert f"{function}@plt>" not in disassembly, function
    with open(tmp_path / "t.manifest.json") as f:
        (step,) = json.load(f)["segments"][0]["steps"]
    kernel = getattr(ctypes.CDLL(str(library)), step["symbol"])
    kernel.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
    x = np.random.default_rng(5).standard_normal((64, 1000)).astype(np.float32)
    y = np.empty_like(x)
    kernel(0, step["grid"], y.ctypes.data, x.ctypes.data)
    erf = np.vectorize(math.erf)(x.astype(np.float64))
    x64 = x.astype(np.float64)
    expected = np.tanh(x64) + erf + np.log1p(np.abs(x64)) + np.sin(x64)
    # Each term within a few ulp of its (order-1) value.
    np.testing.assert_allclose(y, expected, rtol=2e-6, atol=2e-6)


def test_polynomial_approximations_within_5_ulp(root, sotc_bin, tmp_path):
    """exp, tanh, erf, log and log1p (inline polynomials on the CPU) over their whole useful
    f32 range: at most 5 ulp from the float64 value, and inf/nan exactly where it has them."""
    program = tmp_path / "functions.py"
    program.write_text("import paddle\n\n\ndef fn(x, p):\n    return paddle.exp(x), paddle.tanh(x), "
                       "paddle.erf(x), paddle.log(p), paddle.log1p(p)\n")
    trace, library = tmp_path / "f.pb", tmp_path / "f.so"
    subprocess.run([sys.executable, "-m", "sotc", "trace", f"{program}:fn", "--input",
                    "x=float32[65536]", "--input", "p=float32[65536]", "-o", str(trace)],
                   check=True, cwd=root,
                   env={**os.environ, "PYTHONPATH": os.path.join(root, "tools", "python")})
    subprocess.run([sotc_bin, "compile", str(trace), "--target", "cpu", "-o", str(library)],
                   check=True, cwd=root)
    import sotc
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-87, 88, 32768), rng.standard_normal(32768) * 3])
    p = np.exp(rng.uniform(-80, 80, 65536))
    x, p = x.astype(np.float32), p.astype(np.float32)
    got = sotc.load(library)(x, p)
    x64, p64 = x.astype(np.float64), p.astype(np.float64)
    references = [np.exp(x64), np.tanh(x64), np.vectorize(math.erf)(x64), np.log(p64),
                  np.log1p(p64)]
    for name, g, r in zip(["exp", "tanh", "erf", "log", "log1p"], got, references):
        np.testing.assert_array_equal(np.isfinite(g), np.isfinite(r.astype(np.float32)), name)
        normal = np.isfinite(r) & (np.abs(r) < 3e38) & (np.abs(r) > 1e-37)
        ulp = np.spacing(np.abs(r[normal]).astype(np.float32)).astype(np.float64)
        worst = float((np.abs(g[normal] - r[normal]) / ulp).max())
        assert worst <= 5, f"{name}: {worst:.1f} ulp"
