"""Every testdata program that translates compiles for the CPU into a shared library, and for
CUDA into a fatbin, with a manifest that validates against
compiler/target/manifest/manifest.schema.json, names the binary by its sha256, refers only to
buffers it defines, comes out byte-identical twice, and that `sotc inspect` accepts (for a
fatbin: SASS for each architecture defining every kernel, and PTX)."""

import glob
import hashlib
import json
import os
import subprocess

import jsonschema
import pytest


def programs(root):
    return sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(root, "testdata", "traces", "*.pb")))


@pytest.fixture(scope="module")
def schema(root):
    with open(os.path.join(root, "compiler", "target", "manifest", "manifest.schema.json")) as f:
        return json.load(f)


@pytest.mark.parametrize("target,binary,manifest_name", [("cpu", "k.so", "k.manifest.json"),
                                                         ("cuda", "k.fatbin", "k.cuda.manifest.json")])
@pytest.mark.parametrize("program", programs(os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))))
def test_compile_and_manifest(program, target, binary, manifest_name, root, sotc_bin, schema,
                              tmp_path):
    trace = os.path.join(root, "testdata", "traces", program + ".pb")
    if subprocess.run([sotc_bin, "explain", trace], cwd=root, capture_output=True).returncode:
        pytest.skip("the frontend refuses this program with its documented error")
    library = tmp_path / binary
    subprocess.run([sotc_bin, "compile", trace, "--target", target, "-o", str(library)],
                   check=True, cwd=root)
    subprocess.run([sotc_bin, "inspect", str(library)], check=True, cwd=root,
                   capture_output=True)
    text = (tmp_path / manifest_name).read_text()
    manifest = json.loads(text)
    jsonschema.validate(manifest, schema)
    assert manifest["target"]["kind"] == target
    assert manifest["binary"] == {"file": binary,
                                  "sha256": hashlib.sha256(library.read_bytes()).hexdigest()}
    with open(trace, "rb") as f:
        assert manifest["entries"][0]["trace"]["sha256"] == hashlib.sha256(f.read()).hexdigest()
    for segment in manifest["segments"]:
        for step in segment["steps"]:
            if target == "cuda" and step["kind"] == "kernel":
                # Occupancy: at most 64 registers per thread leaves room for 1024 threads per
                # multiprocessor on sm_80 and sm_90 (65536 registers).
                assert set(step["registers"]) == set(manifest["target"]["archs"]), step
                assert max(step["registers"].values()) <= 64, step
                assert step["block"] <= 1024 and step["shared_bytes"] <= 48 * 1024, step
        defined = {t["name"] for t in segment["inputs"]}
        for step in segment["steps"]:
            assert set(step["inputs"]) <= defined, step
            defined |= set(step["outputs"])
        assert {t["name"] for t in segment["outputs"]} <= defined
        for b in segment["arena"]["buffers"]:
            assert b["offset"] + b["bytes"] <= segment["arena"]["bytes"]
        assert segment["arena"]["bytes"] <= manifest["arena"]["bytes"]
        end = segment["end"]
        for successor in (end.get("on_true"), end.get("on_false"), end.get("next")):
            assert successor is None or successor < len(manifest["segments"])
    # Deterministic: the same trace and flags give the same bytes.
    again = tmp_path / "again"
    again.mkdir()
    subprocess.run([sotc_bin, "compile", trace, "--target", target, "-o", str(again / binary)],
                   check=True, cwd=root)
    assert (again / binary).read_bytes() == library.read_bytes()
    assert (again / manifest_name).read_text() == text


def test_return_values_rebuild_nested_python(root, sotc_bin, tmp_path):
    """The manifest says how outputs rebuild the Python return value: (var_3, 3) is a tuple of
    a tensor buffer and a constant; a dict keeps its keys."""
    def result(program):
        subprocess.run([sotc_bin, "compile", os.path.join(root, "testdata", "traces", program + ".pb"),
                        "--target", "cpu", "-o", str(tmp_path / (program + ".so"))], check=True, cwd=root)
        manifest = json.loads((tmp_path / (program + ".manifest.json")).read_text())
        return manifest["segments"][0]["end"]["result"]

    assert result("03_tuple") == {"tuple": [{"tensor": "var_3"}, {"constant": "3"}]}
    pairs = result("05_dict")["dict"]
    assert [k["constant"] for k, _ in pairs] == ["'scale'", "'y'", "'z'"]
    assert pairs[1][1] == {"tensor": "var_1"}
