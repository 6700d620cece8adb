"""What library helpers do in Python around their tensor calls, compiled from their bytecode:
torch.nn.modules.utils' _pair/_single (itertools.repeat, isinstance against
collections.abc.Iterable), as ConvTranspose2d's forward calls them."""

import collections.abc
import itertools
import subprocess
import sys
import time

import numpy as np

import sotc


def pairs(x, size):
    # torch.nn.modules.utils._ntuple's parse, written out
    def parse(v):
        if isinstance(v, collections.abc.Iterable):
            return tuple(v)
        return tuple(itertools.repeat(v, 2))
    a, b = parse(size)
    c, d = parse((3, 4))
    seq = isinstance([1], collections.abc.Sequence) and not isinstance(x, collections.abc.Mapping)
    return x * a + b * c - d + (1.0 if seq else 0.0)


def test_repeat_and_abstract_classes_fold(sotc_bin, tmp_path):
    trace = sotc.trace(pairs, "float32[4]", 2, sotc_framework="torch").save(str(tmp_path / "t.pb"))
    library = tmp_path / "t.so"
    subprocess.run([sotc_bin, "compile", trace, "--target", "cpu", "-o", str(library)],
                   check=True, capture_output=True, text=True)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(sotc.load(library)(x, 2), x * 2 + 2 * 3 - 4 + 1.0)


def imported(x):
    # ultralytics' non_max_suppression picks torchvision's nms when it is imported
    import sys
    scale = 2.0 if "json" in sys.modules and sys.modules.get("no_such_module") is None else 3.0
    if sys.version_info >= (3, 8) and sys.platform:
        scale += 1.0
    return x * scale


def test_sys_modules_and_plain_values_are_the_traces(sotc_bin, tmp_path):
    trace = sotc.trace(imported, "float32[4]", sotc_framework="torch")
    glob = {ns.module: {g.name: g.value for g in ns.globals} for ns in trace.proto.namespaces}
    assert glob["sys"]["modules"].dict_value.items  # recorded by name, not their contents
    assert glob["sys"]["platform"].str_value == sys.platform
    assert "stdout" not in glob["sys"]  # a file stays a name
    path = trace.save(str(tmp_path / "t.pb"))
    library = tmp_path / "t.so"
    subprocess.run([sotc_bin, "compile", path, "--target", "cpu", "-o", str(library)],
                   check=True, capture_output=True, text=True)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(sotc.load(library)(x), x * 3.0)


def timed(x):
    # ultralytics' non_max_suppression: a time limit checked between two clock reads
    t = time.time()
    y = x * 2
    if time.time() - t > 2.0:
        return y * 0
    return y + (time.perf_counter_ns() - time.perf_counter_ns())


def stamped(x):
    return x * time.time()


def test_clock_reads_are_a_time_of_none_between_them(sotc_bin, tmp_path):
    library = tmp_path / "t.so"
    path = sotc.trace(timed, "float32[4]", sotc_framework="torch").save(str(tmp_path / "t.pb"))
    subprocess.run([sotc_bin, "compile", path, "--target", "cpu", "-o", str(library)],
                   check=True, capture_output=True, text=True)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(sotc.load(library)(x), x * 2)
    path = sotc.trace(stamped, "float32[4]", sotc_framework="torch").save(str(tmp_path / "s.pb"))
    r = subprocess.run([sotc_bin, "compile", path, "--target", "cpu", "-o", str(library)],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "E3005" in r.stderr and "clock reading of time.time()" in r.stderr, r.stderr
