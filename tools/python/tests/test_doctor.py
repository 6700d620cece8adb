"""python -m sotc doctor (what this machine has for sotc) and the compiler's commands run
through `python -m sotc`: found in a checkout, refused with a clear line without one."""

import os
import subprocess
import sys

import sotc.__main__ as cli
from sotc import _doctor


def test_doctor_reports_every_piece(root):
    result = subprocess.run([sys.executable, "-m", "sotc", "doctor"], capture_output=True,
                            text=True, cwd=root,
                            env=dict(os.environ, PYTHONPATH=os.path.join(root, "tools", "python")))
    assert result.returncode == 0, result.stderr
    rows = {k.strip(): v.strip() for k, v in
            (line.split("  ", 1) for line in result.stdout.splitlines() if line.strip())}
    assert list(rows) == ["sotc", "compiler", "python", "cpu", "kernels", "runtime", "gemm",
                          "emulator", "cuda driver", "cuda toolkit"]
    assert rows["compiler"].startswith(os.path.join(root, "bazel-bin", "tools", "sotc", "sotc"))
    assert rows["kernels"].startswith("x86-64-v")  # this project's machines have AVX2
    assert "float64: OpenBLAS" in rows["gemm"] or rows["gemm"].startswith("OpenBLAS")


def test_the_kernel_level_follows_the_cpu_flags():
    level = lambda flags: next((n for n, needs in _doctor.LEVELS if needs <= flags), None)  # noqa
    v3 = {"avx", "avx2", "fma", "bmi2", "f16c"}
    assert level(v3) == "x86-64-v3"
    assert level(v3 | {"avx512f", "avx512bw", "avx512dq", "avx512vl"}) == "x86-64-v4"
    assert level({"sse4_2", "avx"}) is None


def test_compiler_commands_without_a_compiler(monkeypatch, capsys):
    monkeypatch.setattr(_doctor, "compiler_binary", lambda: None)
    assert cli.main(["compile", "t.pb", "-o", "k.so"]) == 2
    assert "the compiler is not installed (pip install sotc-compiler" in capsys.readouterr().err


def test_doctor_takes_no_arguments(capsys):
    assert _doctor.main(["--verbose"]) == 2
    assert "takes no arguments" in capsys.readouterr().err
