"""Traces from CPython 3.12 and 3.13: every testdata program, traced under each (by
dis_reference.py, run with that interpreter), must disassemble as that version's dis does and
translate exactly as its committed 3.11 trace does: the same statement IR, guards and fused
kernels."""

import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "testdata"))
import make_traces  # noqa: E402

from dis_reference import ADDRESS  # noqa: E402

VERSIONS = ["3.12", "3.13"]
HERE = os.path.dirname(os.path.abspath(__file__))

# The 3.11 suite compares the other versions with the committed (3.11) traces once.
pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                                reason="run by the CPython 3.11 suite")


def interpreter(root, version):
    found = subprocess.run(["bash", os.path.join(root, "scripts", "find-python.sh"), version],
                           capture_output=True, text=True)
    if found.returncode != 0:
        pytest.fail(f"no CPython {version} here: scripts/setup.sh installs the packages into "
                    "pyenv's interpreters; install one with `pyenv install {version}`")
    return found.stdout.strip()


@pytest.fixture(scope="session")
def traces(root, tmp_path_factory):
    """{version: folder of NAME.pb and NAME.dis}, traced once per session."""
    out = {}
    for version in VERSIONS:
        folder = tmp_path_factory.mktemp("py" + version.replace(".", ""))
        result = subprocess.run([interpreter(root, version),
                                 os.path.join(HERE, "dis_reference.py"), str(folder)],
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        out[version] = folder
    return out


def dump(sotc_bin, what, path):
    result = subprocess.run([sotc_bin, "dump", what, str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("program", make_traces.programs())
def test_dump_bytecode_matches_that_versions_dis(version, program, traces, sotc_bin):
    stem = traces[version] / program[:-3]
    expected = (stem.parent / (stem.name + ".dis")).read_text()
    actual = ADDRESS.sub(" at 0x?", dump(sotc_bin, "--bytecode", stem.with_suffix(".pb")))
    assert actual.splitlines() == expected.splitlines()


def outcome(sotc_bin, args, path):
    result = subprocess.run([sotc_bin, *args, str(path)], capture_output=True, text=True)
    return result.returncode, result.stdout, result.stderr.replace(str(path), "TRACE")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("program", make_traces.programs())
def test_translates_as_the_311_trace_does(version, program, traces, sotc_bin, root):
    """The same output, or the same error at the same line (32_big_constants refuses, 36
    needs host callbacks); `explain` shows the graph breaks with their lines."""
    committed = os.path.join(root, "testdata", "traces", program[:-3] + ".pb")
    traced = traces[version] / (program[:-3] + ".pb")
    for command in (["dump", "--sir"], ["dump", "--guards"], ["dump", "--map-expr"], ["explain"]):
        for extra in ([], ["--allow-host-callbacks"]):
            args = [*command, *extra]
            assert outcome(sotc_bin, args, traced) == outcome(sotc_bin, args, committed), args


@pytest.mark.parametrize("version", VERSIONS)
def test_the_trace_records_its_version(version, traces):
    from sotc import trace_pb2
    program = make_traces.programs()[0]
    proto = trace_pb2.Trace.FromString((traces[version] / (program[:-3] + ".pb")).read_bytes())
    assert f"{proto.python.major}.{proto.python.minor}" == version
