"""sotc's wheels (scripts/build-wheels.sh) as a user gets them: installed with pip into a fresh
virtual environment, then used with nothing of the checkout on PATH, PYTHONPATH or
LD_LIBRARY_PATH: a testdata program traced, compiled for the CPU and for CUDA, inspected, run
through sotc.load, `sotc run` and the CUDA emulator; a torch model traced by the wheel's
tracer (torch from the reference environment, as a user has their framework), compiled for
both and run, against torch; every result equal to the checkout's own build's. The wheels are manylinux (auditwheel's check),
refer to nothing of the build machine, and the same commit gives the same bytes. Prints the
wheels' sizes and the install time (docs/wheels.md records them).
"""

import json
import os
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHECKOUT_SOTC = os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc")
PROGRAM = os.path.join(ROOT, "testdata", "programs", "23_softmax.py")


def build(out):
    result = subprocess.run(["bash", os.path.join(ROOT, "scripts", "build-wheels.sh"), str(out)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return sorted(str(out / name) for name in os.listdir(out) if name.endswith(".whl"))


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    start = time.monotonic()
    paths = build(out)
    print(f"\nwheels built in {time.monotonic() - start:.0f} s:")
    for path in paths:
        print(f"  {os.path.basename(path)}: {os.path.getsize(path) / 2**20:.1f} MiB, "
              f"{sum(i.file_size for i in zipfile.ZipFile(path).infolist()) / 2**20:.0f} MiB "
              "installed")
    return paths


@pytest.fixture(scope="module")
def venv(wheels, tmp_path_factory):
    """A fresh environment with the wheels installed (their dependencies from PyPI), and how
    to run a command in it with nothing of the checkout around."""
    where = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    start = time.monotonic()
    result = subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "-q",
                             "--disable-pip-version-check", *wheels],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    print(f"\npip install of both wheels (and numpy, protobuf, scipy-openblas32): "
          f"{time.monotonic() - start:.1f} s")
    clean = {"PATH": f"{where / 'bin'}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"),
             "LANG": "C.UTF-8"}

    def run(*args, cwd):
        done = subprocess.run(list(args), cwd=cwd, env=clean, capture_output=True, text=True)
        assert done.returncode == 0, f"{args}: {done.stderr[-3000:]}"
        return done.stdout
    return run


def checkout(*args, cwd):
    subprocess.run([CHECKOUT_SOTC, *args], cwd=cwd, check=True, capture_output=True)


def test_wheels_are_manylinux_and_refer_to_no_build_path(wheels):
    names = [os.path.basename(w) for w in wheels]
    assert [n.split("-")[0] for n in names] == ["sotc", "sotc_compiler"]
    assert all("-py3-none-manylinux_" in n and n.endswith("_x86_64.whl") for n in names), names
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            for info in z.infolist():
                data = z.read(info)
                for path in (ROOT, "/execroot/", "/sandbox/"):
                    assert path.encode() not in data, f"{wheel}: {info.filename} names {path}"


def test_the_same_commit_gives_the_same_wheels(wheels, tmp_path):
    again = build(tmp_path / "again")
    for a, b in zip(wheels, again):
        with open(a, "rb") as x, open(b, "rb") as y:
            assert x.read() == y.read(), os.path.basename(a)


def test_a_program_traced_compiled_and_run_from_the_wheels(venv, tmp_path):
    run = venv
    run("python", "-m", "sotc", "trace", f"{PROGRAM}:fn", "--input", "x=f32[32,128]",
        "-o", "t.pb", cwd=tmp_path)
    run("sotc", "compile", "t.pb", "--target", "cpu", "-o", "k.so", cwd=tmp_path)
    run("python", "-m", "sotc", "compile", "t.pb", "--gpu-arch", "sm_90", "-o", "k.fatbin",
        cwd=tmp_path)
    assert "kernel" in run("sotc", "inspect", "k.so", cwd=tmp_path)
    assert "SASS sm_90" in run("sotc", "inspect", "k.fatbin", cwd=tmp_path)
    x = np.random.default_rng(0).standard_normal((32, 128)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    script = ("import numpy as np, sotc\n"
              "x = np.load('x.npy')\n"
              "np.save('cpu.npy', sotc.load('k.so')(x))\n"
              "np.save('emulated.npy', sotc.load('k.fatbin', device='emulator')(x))\n"
              "print(sotc.__file__)\n")
    where = run("python", "-c", script, cwd=tmp_path)
    assert "site-packages" in where and not where.startswith(ROOT), where
    run("sotc", "run", "k.so", "--input", "x=@x.npy", "-o", "out.npz", cwd=tmp_path)
    e = np.exp(x - x.max(-1, keepdims=True))
    expected = e / e.sum(-1, keepdims=True)
    for got in (np.load(tmp_path / "cpu.npy"), np.load(tmp_path / "emulated.npy")):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    # The checkout's own build of the same trace gives the same numbers.
    checkout("compile", "t.pb", "--target", "cpu", "-o", "ref.so", cwd=tmp_path)
    checkout("run", "ref.so", "--input", "x=@x.npy", "-o", "ref.npz", cwd=tmp_path)
    ours, theirs = np.load(tmp_path / "out.npz"), np.load(tmp_path / "ref.npz")
    assert sorted(ours.files) == sorted(theirs.files)
    for name in ours.files:
        np.testing.assert_array_equal(ours[name], theirs[name])
    np.testing.assert_array_equal(np.load(tmp_path / "cpu.npy"), ours[ours.files[0]])


# Traces testdata's torch MLP with the wheel's tracer (its package directory first on the
# path) under the reference environment's torch (a user's framework; nothing of the checkout's
# tools), and saves the input and torch's output.
TRACE_MODEL = """
import sys
sys.path.insert(0, sys.argv[1])  # the venv's site-packages: sotc from the wheel
sys.path.append(sys.argv[2])     # testdata/models: the model's own code, as a user has it
import numpy as np, torch, sotc, mlp_torch
assert sotc.__file__.startswith(sys.argv[1]), sotc.__file__
model = mlp_torch.make_model()
x = torch.from_numpy(np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32))
sotc.trace(model, x).save("mlp.pb")
np.save("x.npy", x.numpy())
with torch.no_grad():
    np.save("want.npy", model(x).numpy())
"""


def test_a_model_traced_compiled_and_run_from_the_wheels(venv, tmp_path):
    run = venv
    reference = subprocess.run(["bash", os.path.join(ROOT, "scripts", "reference-env.sh")],
                               capture_output=True, text=True)
    assert reference.returncode == 0, reference.stderr[-2000:]
    site = run("python", "-c", "import sotc, os; print(os.path.dirname(os.path.dirname("
               "sotc.__file__)))", cwd=tmp_path).strip()
    traced = subprocess.run([reference.stdout.strip(), "-c", TRACE_MODEL, site,
                             os.path.join(ROOT, "testdata", "models")], cwd=tmp_path,
                            env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")},
                            capture_output=True, text=True)
    assert traced.returncode == 0, traced.stderr[-3000:]
    run("sotc", "compile", "mlp.pb", "--target", "cpu", "-o", "mlp.so", cwd=tmp_path)
    run("sotc", "compile", "mlp.pb", "--gpu-arch", "sm_90", "-o", "mlp.fatbin", cwd=tmp_path)
    script = ("import numpy as np, sotc\n"
              "x = np.load('x.npy')\n"
              "np.save('cpu.npy', sotc.load('mlp.so')(x))\n"
              "np.save('emulated.npy', sotc.load('mlp.fatbin', device='emulator')(x))\n")
    run("python", "-c", script, cwd=tmp_path)
    want = np.load(tmp_path / "want.npy")
    for got in ("cpu.npy", "emulated.npy"):
        np.testing.assert_allclose(np.load(tmp_path / got), want, rtol=1e-5,
                                   atol=1e-5 * np.abs(want).max(), err_msg=got)
    run("sotc", "run", "mlp.so", "--input", "x=@x.npy", "-o", "out.npz", cwd=tmp_path)
    checkout("compile", "mlp.pb", "--target", "cpu", "-o", "ref.so", cwd=tmp_path)
    checkout("run", "ref.so", "--input", "x=@x.npy", "-o", "ref.npz", cwd=tmp_path)
    ours, theirs = np.load(tmp_path / "out.npz"), np.load(tmp_path / "ref.npz")
    for name in theirs.files:
        np.testing.assert_array_equal(ours[name], theirs[name])
    manifest = json.loads((tmp_path / "mlp.manifest.json").read_text())
    assert manifest["weights"]["file"] == "mlp.weights.safetensors"


def test_doctor_reports_the_installed_pieces(venv, tmp_path):
    report = venv("sotc", "doctor", cwd=tmp_path)
    print("\n" + report)
    rows = {k.strip(): v.strip() for k, v in
            (line.split("  ", 1) for line in report.splitlines() if line.strip())}
    assert "sotc_compiler/bin/sotc: sotc 0.1.0" in rows["compiler"]
    assert rows["kernels"].startswith("x86-64-v")
    # Float64 GEMM steps run on the OpenBLAS pip installed beside the wheels.
    assert "site-packages/scipy_openblas32/lib/libscipy_openblas.so" in rows["gemm"], rows["gemm"]
    assert rows["emulator"].startswith("available")
