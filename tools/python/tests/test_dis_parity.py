"""`sotc dump --bytecode` must print what CPython's dis prints, line for line, for every
testdata program (code-object addresses aside), under the running interpreter (scripts/test.sh
runs this suite under 3.11, 3.12 and 3.13)."""

import contextlib
import dis
import io
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "testdata"))
import make_traces  # noqa: E402

from dis_reference import ADDRESS, reference_dis  # noqa: E402
from sotc import trace  # noqa: E402
from sotc.__main__ import _parse_inputs, load_function  # noqa: E402


@pytest.mark.parametrize("program", make_traces.programs())
def test_dump_bytecode_matches_dis(program, root, sotc_bin, monkeypatch, tmp_path):
    monkeypatch.chdir(root)
    func, inputs = make_traces.header(os.path.join(make_traces.PROGRAMS, program))
    fn = load_function(f"testdata/programs/{program}:{func}")
    traced = trace(fn, sotc_root=root, **_parse_inputs(inputs))
    expected = reference_dis(traced, root)

    saved = traced.save(tmp_path / (program[:-3] + ".pb"))
    result = subprocess.run([sotc_bin, "dump", "--bytecode", saved], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    actual = ADDRESS.sub(" at 0x?", result.stdout)
    assert actual.splitlines() == expected.splitlines()


@pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                    reason="the committed traces are made by CPython 3.11")
def test_committed_traces_are_fresh(root):
    result = subprocess.run([sys.executable, os.path.join(root, "testdata", "make_traces.py"),
                             "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_program_has_a_trace(root):
    programs = {p[:-3] for p in make_traces.programs()}
    traces = {t[:-3] for t in os.listdir(os.path.join(root, "testdata", "traces"))
              if t.endswith(".pb")}
    assert programs == traces
    assert len(programs) >= 25


def test_wide_line_numbers_and_offsets_match_dis(tmp_path, sotc_bin):
    """Line numbers >= 1000 and offsets >= 10000 widen dis's columns; sotc must follow."""
    body = "\n".join(f"    x = x * {i} + y" for i in range(800))
    source = "\n" * 1200 + f"def wide(x, y):\n{body}\n    return x\n"
    path = tmp_path / "wide.py"
    path.write_text(source)
    namespace = {}
    exec(compile(source, str(path), "exec"), namespace)
    fn = namespace["wide"]
    assert len(fn.__code__.co_code) > 10000

    traced = trace(fn, "f32[4]", "f32[4]", sotc_root=str(tmp_path))
    saved = traced.save(tmp_path / "wide.pb")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        dis.dis(fn)
    result = subprocess.run([sotc_bin, "dump", "--bytecode", saved], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == out.getvalue().splitlines()
