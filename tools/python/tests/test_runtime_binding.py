"""sotc.load: a CPU artifact as a drop-in callable for the traced function, through the
runtime library (runtime/include/sotc/runtime.h): numbers against numpy, the function's own
return structure, both sides of a tensor branch, guard failures and the eager fallback."""

import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest

import sotc


def compile_cpu(root, sotc_bin, tmp_path, program):
    library = tmp_path / (program + ".so")
    subprocess.run([sotc_bin, "compile", os.path.join(root, "testdata", "traces", program + ".pb"),
                    "--target", "cpu", "-o", str(library)], check=True, cwd=root)
    return library


@pytest.fixture(autouse=True)
def runtime_library(root):
    path = os.path.join(root, "bazel-bin", "runtime", "libsotc_runtime.so")
    if not os.path.exists(path):
        pytest.fail("libsotc_runtime.so not built: bazel build //runtime:libsotc_runtime.so")


def test_layer_norm_matches_numpy(root, sotc_bin, tmp_path):
    f = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "24_layer_norm"))
    assert f.parameters == ["x", "weight", "bias"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 256)).astype(np.float32)
    w, b = rng.standard_normal(256).astype(np.float32), rng.standard_normal(256).astype(np.float32)
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5) * w + b
    np.testing.assert_allclose(f(x, w, bias=b), expected, rtol=1e-5, atol=1e-5)


def test_array_protocol_inputs(root, sotc_bin, tmp_path):
    """Any CPU tensor with __array__ or __dlpack__ (torch, paddle, jax) binds like numpy."""
    class Wrapped:  # a minimal foreign tensor
        def __init__(self, array):
            self.array = array

        def __array__(self, dtype=None, copy=None):
            return self.array

    f = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "14_tensor_branch"))
    x = np.linspace(0.5, 4, 8, dtype=np.float32)
    np.testing.assert_allclose(f(Wrapped(x)), x * 2 + 1)


def test_return_structures(root, sotc_bin, tmp_path):
    x, y = np.arange(8, dtype=np.float32), np.full(8, 2, np.float32)
    pair = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "03_tuple"))(x, y)
    assert isinstance(pair, tuple) and pair[1] == 3  # (x * y + x * y, len(triple))
    np.testing.assert_allclose(pair[0], 2 * x * y)
    state = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "05_dict"))(x, 2.0)
    assert sorted(state) == ["scale", "y", "z"] and state["scale"] == 2.0
    np.testing.assert_allclose(state["y"], x * 2)
    np.testing.assert_allclose(state["z"], x * 2 + 1)


def test_returned_objects_are_rebuilt_of_their_class(root, sotc_bin, tmp_path, monkeypatch):
    """An object of the program's class in the result: of that class where its module is
    imported (as pickle rebuilds one, without calling __init__), else a namespace named after
    it; the attributes only the traced process had are left unset and named."""
    inputs = os.path.join(root, "tools", "sotc", "test", "Inputs")
    trace = tmp_path / "objects.pb"
    subprocess.run([sys.executable, "-m", "sotc", "trace", "objects.py:split", "--framework",
                    "torch", "-i", "x=f32[4]", "-o", str(trace)], check=True, cwd=inputs,
                   env=dict(os.environ, PYTHONPATH=os.path.join(root, "tools", "python")))
    library = tmp_path / "objects.so"
    subprocess.run([sotc_bin, "compile", str(trace), "--target", "cpu", "-o", str(library)],
                   check=True)
    x = np.arange(4, dtype=np.float32)
    plain = sotc.load(library)(x)
    assert type(plain).__name__ == "Pair" and type(plain).__module__ == "sotc.objects"
    np.testing.assert_allclose(plain.low, x - 1)
    np.testing.assert_allclose(plain.high, x * 2)
    assert plain.count == 2
    monkeypatch.syspath_prepend(inputs)
    import objects
    own = sotc.load(library)(x)
    assert type(own) is objects.Pair
    np.testing.assert_allclose(own.high, x * 2)
    manifest = sotc.load(library)._manifest
    manifest["segments"][0]["end"]["result"]["object"]["attributes"].append(
        ["device", {"host": "device(type='cpu')"}])
    result = manifest["segments"][0]["end"]["result"]
    rebuilt = sotc._runtime._rebuild(result, {n: x for n in sotc._runtime._tensor_names(result)},
                                     {})
    assert rebuilt.__sotc_unset__ == ["device"] and not hasattr(rebuilt, "device")


def test_tensor_branch_both_sides(root, sotc_bin, tmp_path):
    f = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "14_tensor_branch"))
    x = np.linspace(0.5, 4, 8, dtype=np.float32)
    np.testing.assert_allclose(f(x), x * 2 + 1)
    np.testing.assert_allclose(f(-x), x + 1)


def test_guard_failures_and_fallback(root, sotc_bin, tmp_path):
    f = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "11_if_python"))
    x = np.ones(8, np.float32)
    f(x)  # mode and factor as traced
    with pytest.raises(sotc.GuardError, match=r"mode: expected 'scale', got 'other'"):
        f(x, mode="other")
    with pytest.raises(sotc.GuardError, match=r"x: expected float32\[8\], got float64\[8\]") as e:
        f(np.ones(8), factor=4)
    assert [m["parameter"] for m in e.value.mismatches] == ["x", "factor"]
    assert e.value.mismatches[1]["compiled_for"] == "3" and e.value.mismatches[1]["got"] == "4"
    assert e.value.mismatches[1]["guard"].startswith("g")
    assert str(e.value).splitlines()[1].split() == ["input", "compiled", "for", "got", "guard"]
    eager = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "11_if_python"),
                      fallback=lambda x, mode="scale", factor=3: "eager")
    assert eager(x, mode="other") == "eager"


def test_bad_artifacts(tmp_path):
    with pytest.raises(sotc.SotcError, match="E8001"):
        sotc.load(tmp_path / "nothing.so")


def test_manifest_named_by_the_runtime(tmp_path):
    """The runtime's C API says where an artifact's manifest lies (its one naming rule,
    contract/ArtifactFiles.h), with room for any path length."""
    from sotc import _runtime
    lib = _runtime._runtime()
    lib.sotc_manifest_path.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.sotc_manifest_path.restype = ctypes.c_size_t

    def manifest_of(path):
        size = lib.sotc_manifest_path(path.encode(), None, 0) + 1
        out = ctypes.create_string_buffer(size)
        lib.sotc_manifest_path(path.encode(), out, size)
        return out.value.decode()
    long_dir = str(tmp_path / ("d" * 200))
    assert manifest_of(long_dir + "/k.so") == long_dir + "/k.manifest.json"
    assert manifest_of("k.fatbin") == "k.cuda.manifest.json"
    assert manifest_of("k.cuda.manifest.json") == "k.cuda.manifest.json"


def test_manifest_sizes_parsed_by_the_runtime():
    """The binding reads a manifest's sizes with the runtime's parser (sotc_parse_size), the
    one the runtime checked the manifest with."""
    from sotc import _runtime
    assert _runtime._parsed_dim("16*s0*s1^2") == (16, ((-1, 1), (-2, 2)))
    assert _runtime._parsed_dim("s1") == (1, ((-2, 1),))
    assert _runtime._parsed_dim(-3) == (1, ((-3, 1),)) and _runtime._parsed_dim(8) == (8, ())
    with pytest.raises(sotc.SotcError, match="E8001"):
        _runtime._parsed_dim("s0*s0")


def test_an_artifact_is_described_by_the_runtime_alone(root, sotc_bin, tmp_path, capsys,
                                                      monkeypatch):
    """The binding describes an artifact by the manifest the runtime read and checked
    (sotc_manifest) and never opens the file: it may be removed once loaded, host callbacks
    and all still run."""
    library = tmp_path / "host.so"
    subprocess.run([sotc_bin, "compile", os.path.join(root, "testdata", "traces",
                                                      "36_host_callback.pb"),
                    "--allow-host-callbacks", "--target", "cpu", "-o", str(library)],
                   check=True, capture_output=True)
    real_open = open

    def no_manifest(path, *args, **kwargs):
        assert not str(path).endswith(".manifest.json"), f"the binding opened {path}"
        return real_open(path, *args, **kwargs)
    monkeypatch.setattr("builtins.open", no_manifest)
    f = sotc.load(library)
    os.remove(tmp_path / "host.manifest.json")
    assert f.info()["target"] == "cpu" and f.parameters == ["x"]
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    z, y = f(x)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    assert capsys.readouterr().out == f"y: {y}\n"
    np.testing.assert_allclose(z, np.sin(np.exp(x)) * 2, rtol=1e-6)
    with pytest.raises(sotc.SotcError, match="E8001"):  # loading again needs the file
        sotc.load(library)


def test_host_callbacks_run_in_python(root, sotc_bin, tmp_path, capsys):
    """print(y) and y.numpy() between compiled segments run here, on that point's values."""
    library = tmp_path / "host.so"
    subprocess.run([sotc_bin, "compile", os.path.join(root, "testdata", "traces",
                                                      "36_host_callback.pb"),
                    "--allow-host-callbacks", "--target", "cpu", "-o", str(library)],
                   check=True, cwd=root)
    f = sotc.load(library)
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    z, y = f(x)
    assert isinstance(y, np.ndarray)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    assert capsys.readouterr().out == f"y: {y}\n"
    np.testing.assert_allclose(z, np.sin(np.exp(x)) * 2, rtol=1e-6)


def test_host_callback_failure_is_raised(root, sotc_bin, tmp_path, monkeypatch):
    """A --break-on API of a framework this process lacks: the call raises, naming it.
    (tests/framework runs it with paddle.)"""
    library = tmp_path / "brk.so"
    subprocess.run([sotc_bin, "compile", os.path.join(root, "testdata", "traces", "22_relu_sin.pb"),
                    "--allow-host-callbacks", "--break-on=paddle.sin", "--target", "cpu", "-o",
                    str(library)], check=True, cwd=root)
    f = sotc.load(library)
    monkeypatch.setitem(sys.modules, "paddle", None)  # import paddle fails
    with pytest.raises(sotc.SotcError, match=r"E8006: the host callback paddle.sin is not "
                                             r"available here"):
        f(np.ones(64, np.float32))


def test_out_buffers_are_written_and_returned(root, sotc_bin, tmp_path):
    """out= takes the result's tensors' buffers: the call writes them and returns them in the
    function's structure, so a loop allocates nothing; a buffer of the wrong shape is E8005."""
    f = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "03_tuple"))
    x, y = np.arange(8, dtype=np.float32), np.full(8, 2, np.float32)
    buffer = np.zeros(8, np.float32)
    pair = f(x, y, out=buffer)
    assert pair[0] is buffer and pair[1] == 3
    np.testing.assert_allclose(buffer, 2 * x * y)
    with pytest.raises(sotc.SotcError, match=r"E8005: output buffer 0 is float32\[4\]; result "):
        f(x, y, out=np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="writable C-contiguous"):
        f(x, y, out=np.zeros(16, np.float32)[::2])


def test_unaligned_and_strided_inputs_are_copied(root, sotc_bin, tmp_path):
    f = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "14_tensor_branch"))
    raw = np.zeros(8 * 4 + 1, np.uint8)[1:].view(np.float32)  # an odd address
    raw[:] = np.linspace(0.5, 4, 8)
    assert not raw.flags.aligned
    np.testing.assert_allclose(f(raw), raw * 2 + 1)
    strided = np.linspace(0.5, 4, 16, dtype=np.float32)[::2]
    np.testing.assert_allclose(f(strided), strided * 2 + 1)


class _FakeCudaTensor:
    """What torch or cupy show of a CUDA tensor, with no GPU behind it."""

    def __init__(self, shape, typestr="<f4"):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (4096, False),
                                         "strides": None, "version": 3}


def test_cuda_tensors_are_refused_by_a_cpu_artifact(root, sotc_bin, tmp_path):
    f = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "14_tensor_branch"))
    assert f.target == "cpu"
    with pytest.raises(sotc.GuardError, match=r"x: expected float32\[8\], got float32\[8\] on a "
                                              r"CUDA device \(this artifact runs on the CPU\)"):
        f(_FakeCudaTensor((8,)))


def test_cuda_artifact_without_a_driver(root, sotc_bin, tmp_path, monkeypatch):
    """A fatbin on a machine without libcuda.so.1 (made sure of by SOTC_CUDA_DRIVER)."""
    fatbin = tmp_path / "branch.fatbin"
    subprocess.run([sotc_bin, "compile", os.path.join(root, "testdata", "traces",
                                                      "14_tensor_branch.pb"),
                    "--gpu-arch", "sm_90", "-o", str(fatbin)], check=True, cwd=root)
    monkeypatch.setenv("SOTC_CUDA_DRIVER", str(tmp_path / "no-libcuda.so.1"))
    with pytest.raises(sotc.SotcError, match="E8003: no CUDA driver on this machine"):
        sotc.load(fatbin)
    with pytest.raises(sotc.SotcError, match="E8003: .*branch.fatbin is a cuda artifact; it "
                                             "cannot run on cpu"):
        sotc.load(fatbin, device="cpu")


def test_guards_on_globals(root, sotc_bin, tmp_path):
    """10_globals read EPS and SCALES: with the module's globals the call checks them, and a
    changed one is a mismatch (or the fallback runs)."""
    namespace = {"EPS": 1e-5, "SCALES": (1.0, 2.0, 4.0)}
    f = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "10_globals"), globals=namespace)
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    np.testing.assert_allclose(f(x), x / (np.abs(x).max() + 1e-5) * 8, rtol=1e-6)
    namespace["SCALES"] = (1.0, 3.0, 4.0)
    with pytest.raises(sotc.GuardError, match=r"global SCALES\[1\]: expected 2.0, got 3.0 "
                                              r"\(guard g5 \(testdata/programs/10_globals.py:15\)\)"):
        f(x)
    namespace["SCALES"] = [1.0, 2.0, 4.0]
    with pytest.raises(sotc.GuardError, match=r"global SCALES: expected tuple, got list"):
        f(x)
    del namespace["EPS"]
    with pytest.raises(sotc.GuardError, match=r"global EPS: expected 1e-05, got KeyError"):
        f(x)

    module = {"EPS": 1e-5, "SCALES": (0,)}  # the fallback's module, where SCALES changed
    exec("def original(x):\n    return 'eager'", module)
    original = module["original"]
    eager = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "10_globals"), fallback=original)
    assert eager(x) == "eager"

    # With neither, nothing can check the globals: said at load.
    with pytest.warns(UserWarning, match=r"its globals EPS, SCALES had when it was traced; "
                                         r"without globals= .* or fallback= nothing checks"):
        sotc.load(compile_cpu(root, sotc_bin, tmp_path, "10_globals"))


def test_wheel_traces_and_runs(root, sotc_bin, tmp_path):
    """The pip package (//tools/python:wheel) alone: installed into a fresh environment, it
    loads a compiled artifact with the runtime library it carries."""
    wheel = os.path.join(root, "bazel-bin", "tools", "python", "sotc-0.1.0-py3-none-linux_x86_64.whl")
    if not os.path.exists(wheel):
        pytest.fail("the wheel is not built: bazel build //tools/python:wheel")
    env = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(env)], check=True)
    subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
                    "--no-index", wheel], check=True)
    library = compile_cpu(root, sotc_bin, tmp_path, "22_relu_sin")
    script = ("import numpy as np, sotc, sys\n"
              "f = sotc.load(sys.argv[1])\n"
              "x = np.linspace(-3, 3, 64, dtype=np.float32)\n"
              "assert np.allclose(f(x), np.maximum(np.sin(x), 0), atol=1e-6)\n"
              "print(sotc.__file__)\n")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SOTC_RUNTIME_LIBRARY")}
    result = subprocess.run([str(env / "bin" / "python"), "-c", script, str(library)],
                            cwd=tmp_path, env=clean, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(str(env))


def test_out_may_be_an_input(root, sotc_bin, tmp_path):
    """out= aliasing a parameter (in-place softmax): the runtime computes elsewhere and
    copies, since a kernel reads its inputs after it starts writing."""
    f = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "23_softmax"))
    x = np.random.default_rng(0).standard_normal((32, 128)).astype(np.float32)
    e = np.exp(x - x.max(-1, keepdims=True))
    expected = e / e.sum(-1, keepdims=True)
    assert f(x, out=x) is x
    np.testing.assert_allclose(x, expected, rtol=1e-6, atol=1e-7)


def test_cuda_tensor_views():
    """What the binding reads of a CUDA tensor: pointer, dtype and shape through
    __cuda_array_interface__ (torch, cupy); a strided one is refused, not copied."""
    from sotc._runtime import _cuda_view, _describe, _Value
    dense = _FakeCudaTensor((4, 8))
    assert _cuda_view(dense)[:4] == (4096, "float32", (4, 8), True)
    strided = _FakeCudaTensor((4, 8))
    strided.__cuda_array_interface__["strides"] = (64, 8)  # every other column
    assert _cuda_view(strided)[3] is False
    with pytest.raises(ValueError, match="non-contiguous CUDA tensor"):
        _describe(strided, _Value(), [], "x")
    assert _cuda_view(np.zeros(3)) is None  # host memory


def test_fresh_results_reuse_only_what_nobody_holds(root, sotc_bin, tmp_path):
    """A call returns arrays the caller owns: an earlier result still referenced (or viewed)
    is never written again, one dropped is reused (no page faults on new memory)."""
    f = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "22_relu_sin"))
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    held = [f(x * k) for k in (1, 2, 3, 4, 5)]
    view = f(x * 6)[8:]
    for k, y in zip((1, 2, 3, 4, 5), held):
        np.testing.assert_allclose(y, np.maximum(np.sin(x * k), 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(view, np.maximum(np.sin(x * 6), 0)[8:], rtol=1e-6, atol=1e-7)
    y = f(x)
    address = y.ctypes.data
    del y
    assert f(x).ctypes.data == address


def test_threads_share_one_artifact(root, sotc_bin, tmp_path):
    """Calls from several Python threads at once (ctypes lets go of the GIL while the
    kernels run) each get the sequential result, fresh arrays, out= buffers and host
    callbacks included; close() waits for the calls in flight and later calls are E8005."""
    import threading
    f = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "23_softmax"))
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((32, 128)).astype(np.float32) for _ in range(8)]
    want = [f(x).copy() for x in inputs]
    wrong = []

    def work(t):
        out = np.empty((32, 128), np.float32)
        for i in range(60):
            k = (t + i) % len(inputs)
            got = f(inputs[k], out=out) if i % 2 else f(inputs[k])
            if not np.array_equal(got, want[k]):
                wrong.append((t, i))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []

    refused, stop = [], threading.Event()

    def until_closed():
        while not stop.is_set():
            try:
                f(inputs[0])
            except sotc.SotcError as e:
                refused.append(e.code)
                return

    threads = [threading.Thread(target=until_closed) for _ in range(4)]
    for t in threads:
        t.start()
    f.close()
    stop.set()
    for t in threads:
        t.join()
    assert set(refused) <= {"E8005"}
    with pytest.raises(sotc.SotcError, match="closed"):
        f(inputs[0])


def test_bad_devices_are_coded_errors(root, sotc_bin, tmp_path):
    library = compile_cpu(root, sotc_bin, tmp_path, "22_relu_sin")
    for device, code in [(7, "E8005"), ("gpu", "E8005"), ("cuda:0", "E8003"), ("cpu:3", "E8005"),
                         ("emulator", "E8003"), ("emulator:1", "E8005")]:
        with pytest.raises(sotc.SotcError) as e:
            sotc.load(library, device=device)
        assert e.value.code == code, (device, str(e.value))


def test_info_names_what_gemm_steps_run_on(root, sotc_bin, tmp_path):
    mlp = sotc.load(compile_cpu(root, sotc_bin, tmp_path, "26_gelu_mlp")).info()
    assert mlp["target"] == "cpu"
    # "float32: oneDNN ... avx512_core kernels; float64: OpenBLAS ... SkylakeX kernels" (the
    # CBLAS alone without oneDNN), a warning after a library's kernels when they are slow ones
    gemm = mlp["gemm"]
    assert gemm.startswith(("float32: oneDNN ", "OpenBLAS ")) and " kernels" in gemm, gemm
    assert "warning" not in gemm, gemm  # setup.sh installs libraries that know this CPU
    assert mlp["kernels"] in ("x86-64-v3", "x86-64-v4")  # the library carries both
    assert sotc.load(compile_cpu(root, sotc_bin, tmp_path, "22_relu_sin")).info() == \
        {"target": "cpu", "kernels": mlp["kernels"], "gemm": ""}


def test_cuda_artifacts_run_on_the_emulator(root, sotc_bin, tmp_path):
    """device="emulator": the fatbin's own kernels and GEMM steps through the CUDA backend on
    the CUDA emulator (docs/emulator.md), on a machine without a GPU: both sides of a tensor
    branch, a layer norm's block reductions, GEMM steps, calls from several threads, and a
    kernel fault as a coded error."""
    import threading

    def fatbin(program, *flags):
        path = tmp_path / (program + "".join(flags).replace("-", "") + ".fatbin")
        subprocess.run([sotc_bin, "compile", os.path.join(root, "testdata", "traces",
                                                          program + ".pb"),
                        "--gpu-arch", "sm_90", "-o", str(path), *flags], check=True, cwd=root)
        return path

    branch = sotc.load(fatbin("14_tensor_branch"), device="emulator")
    assert branch.target == "cuda"
    x = np.array([1, 2, 3, 4, -1, -2, 0.5, 0.25], np.float32)
    np.testing.assert_array_equal(branch(x), x * 2 + 1)
    np.testing.assert_array_equal(branch(-x), x + 1)

    norm = sotc.load(fatbin("24_layer_norm"), device="emulator")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 256)).astype(np.float32)
    w, b = rng.standard_normal(256).astype(np.float32), rng.standard_normal(256).astype(np.float32)
    mean = x.mean(-1, keepdims=True)
    expected = (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(norm(x, w, b), expected, rtol=1e-5, atol=1e-5)

    mlp = sotc.load(fatbin("26_gelu_mlp"), device="emulator")
    assert mlp.info()["gemm"] == "cuBLASLt (the CUDA emulator's)"
    inputs = [rng.standard_normal(s).astype(np.float32) * 0.1
              for s in [(32, 256), (256, 1024), (1024,), (1024, 256), (256,)]]
    want = mlp(*inputs)
    wrong = []

    def work():
        for _ in range(3):
            if not np.array_equal(mlp(*inputs), want):
                wrong.append(1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []

    racy = sotc.load(fatbin("23_softmax", "--testing-break=barrier"), device="emulator")
    with pytest.raises(sotc.SotcError, match=r"E8007: CUDA emulator: reduce_max_0\S*: block "
                                             r"\(0,0,0\) thread \(\d+,0,0\): shared-memory race"):
        racy(rng.standard_normal((32, 128)).astype(np.float32))


def test_a_missed_dict_lookup_guards_the_keys(sotc_bin, tmp_path, monkeypatch):
    """A lookup that missed a global dict's key decided the path: the dict's keys are guarded,
    not only its length, so a dict of as many other keys is a mismatch, not the wrong path."""
    (tmp_path / "missed_key.py").write_text(
        "import torch\n\nSCALES = {'a': 2.0}\n\n\ndef fn(x):\n    try:\n"
        "        scale = SCALES['b']\n    except KeyError:\n        scale = 10.0\n"
        "    return x * scale\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("missed_key", None)
    with sotc.stub_missing_frameworks():
        import missed_key
    path = sotc.trace(missed_key.fn, "float32[4]").save(str(tmp_path / "t.pb"))
    library = tmp_path / "t.so"
    subprocess.run([sotc_bin, "compile", path, "--target", "cpu", "-o", str(library)],
                   check=True)
    f = sotc.load(library, globals=vars(missed_key))
    x = np.ones(4, np.float32)
    np.testing.assert_allclose(f(x), x * 10)
    missed_key.SCALES = {"b": 3.0}  # as many keys, and now the lookup would find one
    with pytest.raises(sotc.GuardError, match=r"global SCALES: expected \['a'\], got \['b'\]"):
        f(x)
