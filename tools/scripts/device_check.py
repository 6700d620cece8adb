#!/usr/bin/env python3
"""The GPU check: sotc's CUDA artifacts run by sotc's own runtime on a real GPU.

    device_check.py prepare DIR    (here, with sotc built) every testdata program that
                                   compiles: DIR/<p>.fatbin + manifest (sm_90), seeded input
                                   sets run through the CPU artifact for the expected results
                                   and through the fatbin on the CUDA emulator for the
                                   emulator's (DIR/<p>.npz); the benchmark workloads (bench/workloads.py)
                                   as DIR/bench_<w>.fatbin; the torch models of
                                   testdata/traces/models whose weights are committed as
                                   DIR/model_<m>.fatbin (+ weights); programs with a dynamic
                                   batch or sequence length as DIR/dyn_<d>.fatbin with their
                                   inputs and results at several sizes; the runtime library
                                   and what it links beyond libc in DIR/lib
    device_check.py run DIR [OUT]  (on the GPU machine: Python 3, numpy, torch with its CUDA
                                   libraries, the driver; nothing of sotc built) loads each
                                   fatbin with sotc.load (the C++ runtime's CUDA backend:
                                   driver API, cuBLASLt), runs it on torch CUDA tensors and on
                                   numpy arrays, compares with the CPU's and the emulator's
                                   results (the same kernels: a difference is the emulator's
                                   or the GPU's, docs/emulator.md) and, for torch
                                   code, with torch eager on the GPU; runs each model against
                                   its torch model in eval mode on the GPU; times the workloads
                                   and models against torch eager; writes OUT/device-report.txt

Ends with one line "N passed, N failed".
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests", "framework"))
sys.path.insert(0, os.path.join(ROOT, "testdata"))

FLAGS = {"36_host_callback": ["--allow-host-callbacks"]}


# Dynamic sizes (docs/dynamic-shapes.md): one fatbin each, run at several sizes of s0.
def softmax_rows(x):
    return torch.softmax(x, -1)  # noqa: F821 - torch (or its stub) bound by prepare


def attention(q, k, v):
    return torch.softmax(q @ k.transpose(-1, -2) * 0.25, -1) @ v  # noqa: F821


DYNAMIC = {  # name: (function, input specs, sizes of s0)
    "batch_softmax": (softmax_rows, ["float32[?,96]"], (1, 7, 1000)),
    "sequence_attention": (attention, ["float32[2,?,16]"] * 3, (1, 7, 300)),
    # a row of s0 a block keeps in dynamic shared memory, T bounded: 40,000 bytes at 10,000,
    # 120,000 at 30,000 (beyond 48 KiB: the kernel opts in to the device's maximum)
    "long_row_softmax": (softmax_rows, ["float32[2,?<=30000]"], (5, 3000, 10000, 30000)),
    # unbounded, the row is global memory (an output of the kernel the arena places per call)
    "unbounded_row_softmax": (softmax_rows, ["float32[2,?]"], (5, 70000)),
}
VARIANTS = ("normal", "positive", "negative")
# GPU and CPU differ in transcendental approximations and reduction order: element e of
# reference r passes when |e - r| <= RTOL * |r| + RTOL * max|R|.
RTOL = 1e-4


def flatten_tensors(value):
    """The tensors of a result structure, in order, as they are (torch stays torch)."""
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flatten_tensors(v)]
    if isinstance(value, dict):
        return [t for k in value for t in flatten_tensors(value[k])]
    return [value] if isinstance(value, np.ndarray) or hasattr(value, "detach") else []


def flatten(value):
    """The tensors of a result structure, in order, as numpy arrays."""
    return [t.detach().cpu().numpy() if hasattr(t, "detach") else t
            for t in flatten_tensors(value)]


def prepare(out):
    import sotc
    from test_programs_vs_framework import example, header, parse_input, programs
    binary = os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc")
    os.makedirs(os.path.join(out, "lib"), exist_ok=True)
    runtime = os.path.join(ROOT, "bazel-bin", "runtime", "libsotc_runtime.so")
    shutil.copy(runtime, os.path.join(out, "lib"))
    ldd = subprocess.run(["ldd", runtime], capture_output=True, text=True).stdout
    for line in ldd.splitlines():  # libcrypto: maybe missing there
        if "libcrypto" in line:
            shutil.copy(line.split("=>")[1].split()[0], os.path.join(out, "lib"))
    for name in programs():
        trace = os.path.join(ROOT, "testdata", "traces", name + ".pb")
        base = os.path.join(out, name)
        compile_ = [binary, "compile", trace] + FLAGS.get(name, [])
        if subprocess.run(compile_ + ["--gpu-arch", "sm_90", "-o", base + ".fatbin"],
                          capture_output=True).returncode:
            continue  # a program the frontend refuses, with its documented error
        subprocess.run(compile_ + ["--target", "cpu", "-o", base + "_cpu.so"], check=True)
        with open(base + "_cpu.manifest.json") as f:
            ends = [s["end"] for s in json.load(f)["segments"]]
        if any("global" in e for end in ends for e in end.get("side_effects", [])):
            # Writes a module global: the host's Python state, which the CPU tests compare
            # (tests/framework); the device has no program module to hand it.
            for f in (base + ".fatbin", base + ".cuda.manifest.json", base + "_cpu.so",
                      base + "_cpu.manifest.json"):
                os.remove(f)
            continue
        cpu = sotc.load(base + "_cpu.so")
        emulated = sotc.load(base + ".fatbin", device="emulator")  # the same kernels, here
        _, inputs = header(name)
        sets = {}
        for variant in VARIANTS:
            rng = np.random.default_rng(sum(map(ord, name + variant)))
            values = {k: example(parse_input(spec), rng, variant) for k, spec in inputs}
            for k, v in values.items():
                sets[f"{variant}/in/{k}"] = np.asarray(v) if isinstance(v, np.ndarray) else \
                    np.array(repr(v))
            for i, t in enumerate(flatten(cpu(**values))):
                sets[f"{variant}/out/{i}"] = t
            for i, t in enumerate(flatten(emulated(**values))):
                sets[f"{variant}/emulator/{i}"] = t
        np.savez(base + ".npz", **sets)
        cpu.close()
        emulated.close()
        for f in (base + "_cpu.so", base + "_cpu.manifest.json"):
            os.remove(f)
    prepare_dynamic(out, binary)
    with sotc.stub_missing_frameworks():
        import workloads
    for name, (fn, shapes) in workloads.WORKLOADS.items():
        specs = {k: sotc.parse_tensor_spec(f"float32[{','.join(map(str, s))}]")
                 for k, s in shapes.items()}
        trace = os.path.join(out, f"bench_{name}.pb")
        sotc.trace(fn, **specs).save(trace)
        subprocess.run([binary, "compile", trace, "--gpu-arch", "sm_90", "-o",
                        os.path.join(out, f"bench_{name}.fatbin")], check=True)
        os.remove(trace)
    # Models: the torch ones whose weights are committed (the device rebuilds the model itself).
    import make_model_traces
    for trace in sorted(glob.glob(os.path.join(ROOT, "testdata", "traces", "models", "*_torch.pb"))):
        weights = trace[:-len(".pb")] + ".safetensors"  # ResNet-18's (45 MB) are not carried
        if os.path.exists(weights) and \
                os.path.getsize(weights) <= make_model_traces.COMMITTED_WEIGHTS:
            name = os.path.basename(trace)[:-len(".pb")]
            subprocess.run([binary, "compile", trace, "--gpu-arch", "sm_90", "-o",
                            os.path.join(out, f"model_{name}.fatbin")], check=True)
    print(len(glob.glob(os.path.join(out, "*.fatbin"))), "fatbins in", out)


def prepare_dynamic(out, binary):
    """DIR/dyn_<name>.fatbin and its .npz: per size of s0, inputs, the CPU artifact's results
    and the emulator's."""
    import sotc
    global torch
    with sotc.stub_missing_frameworks():
        import torch
    for name, (fn, specs, sizes) in DYNAMIC.items():
        base = os.path.join(out, "dyn_" + name)
        trace = sotc.trace(fn, *specs).save(base + ".pb")
        subprocess.run([binary, "compile", trace, "--gpu-arch", "sm_90", "-o", base + ".fatbin"],
                       check=True)
        subprocess.run([binary, "compile", trace, "--target", "cpu", "-o", base + "_cpu.so"],
                       check=True)
        cpu = sotc.load(base + "_cpu.so")
        emulated = sotc.load(base + ".fatbin", device="emulator")
        rng = np.random.default_rng(len(name))
        sets = {}
        for n in sizes:
            inputs = [rng.standard_normal([n if d.startswith("?") else int(d) for d in
                                           spec[spec.index("[") + 1:-1].split(",")],
                                          np.float32) for spec in specs]
            for i, x in enumerate(inputs):
                sets[f"{n}/in/{i}"] = x
            for i, t in enumerate(flatten(cpu(*inputs))):
                sets[f"{n}/out/{i}"] = t
            for i, t in enumerate(flatten(emulated(*inputs))):
                sets[f"{n}/emulator/{i}"] = t
        np.savez(base + ".npz", **sets)
        cpu.close()
        emulated.close()
        for f in (trace, base + "_cpu.so", base + "_cpu.manifest.json"):
            os.remove(f)


def run_dynamic(directory, record, torch):
    """Each dynamic fatbin at each size it was prepared for, on numpy and torch CUDA inputs."""
    import sotc
    for fatbin in sorted(glob.glob(os.path.join(directory, "dyn_*.fatbin"))):
        name = os.path.basename(fatbin)[len("dyn_"):-len(".fatbin")]
        data = np.load(fatbin[:-len(".fatbin")] + ".npz")
        try:
            f = sotc.load(fatbin)
        except Exception as e:  # noqa: BLE001
            record(False, f"dynamic {name}: {e}")
            continue
        for n in sorted({int(k.split("/")[0]) for k in data.files}):
            part = lambda kind: [data[f"{n}/{kind}/{i}"] for i in range(sum(  # noqa: E731
                k.startswith(f"{n}/{kind}/") for k in data.files))]
            inputs, want, emulated = part("in"), part("out"), part("emulator")
            for kind in ("numpy", "torch"):
                args = [torch.from_numpy(x).cuda() for x in inputs] if kind == "torch" else inputs
                try:
                    got = flatten(f(*args))
                    worst = max([close(g, w) for g, w in zip(got, want)], default=0.0)
                    versus = max([close(g, e) for g, e in zip(got, emulated)], default=0.0)
                    record(len(got) == len(want) and worst <= 1 and versus <= 1,
                           f"dynamic {name} at s0={n} [{kind} inputs]: worst {worst:.3f} of the "
                           f"bound against the CPU, {versus:.3f} against the emulator")
                except Exception as e:  # noqa: BLE001
                    record(False, f"dynamic {name} at s0={n} [{kind} inputs]: "
                                  f"{type(e).__name__}: {e}")
        f.close()


def close(got, want):
    """The largest error relative to RTOL's bound (<= 1 passes)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return float("inf")
    if want.dtype.kind != "f":
        return 0.0 if np.array_equal(got, want) else float("inf")
    finite = np.isfinite(want)
    if not np.array_equal(np.isfinite(got), finite):
        return float("inf")
    if not finite.any():
        return 0.0
    scale = float(np.abs(want[finite]).max())
    bound = RTOL * np.abs(want[finite]) + RTOL * scale + 1e-30
    return float(np.max(np.abs(got[finite] - want[finite]) / bound))


def run(directory, out):
    try:
        import torch
        assert torch.cuda.is_available(), "torch sees no CUDA device"
        import sotc
    except (ImportError, AssertionError) as e:
        print(f"device-check: no GPU to check on ({e})", file=sys.stderr)
        return 2
    lines, passed, failed = [], 0, 0

    def record(ok, text):
        nonlocal passed, failed
        passed, failed = passed + bool(ok), failed + (not ok)
        lines.append(("PASS " if ok else "FAIL ") + text)
        print(lines[-1], flush=True)

    lines.append(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    for fatbin in sorted(glob.glob(os.path.join(directory, "[0-9]*.fatbin"))):
        name = os.path.basename(fatbin)[:-len(".fatbin")]
        data = np.load(fatbin[:-len(".fatbin")] + ".npz")
        try:
            f = sotc.load(fatbin)
        except Exception as e:  # noqa: BLE001 - one program's failure is a report line
            record(False, f"{name}: {e}")
            continue
        for variant in VARIANTS:
            inputs = {k.split("/")[2]: data[k] for k in data.files if k.startswith(variant + "/in/")}
            values = {k: (v if v.dtype.kind != "U" else eval(str(v))) for k, v in inputs.items()}
            want = [data[f"{variant}/out/{i}"] for i in range(sum(
                k.startswith(variant + "/out/") for k in data.files))]
            # What the CUDA emulator computed from the same fatbin (docs/emulator.md).
            emulated = [data[f"{variant}/emulator/{i}"] for i in range(sum(
                k.startswith(variant + "/emulator/") for k in data.files))]
            for kind in ("torch", "numpy"):
                if kind == "numpy" and variant != "normal":
                    continue
                args = {k: torch.from_numpy(v).cuda() if kind == "torch" and
                        isinstance(v, np.ndarray) else v for k, v in values.items()}
                try:
                    got = flatten(f(**args))
                    worst = max([close(g, w) for g, w in zip(got, want)], default=0.0)
                    versus = max([close(g, e) for g, e in zip(got, emulated)], default=0.0)
                    ok = len(got) == len(want) == len(emulated) and worst <= 1 and versus <= 1
                    record(ok, f"{name} [{variant}, {kind} inputs]: {len(got)} results, "
                               f"worst {worst:.3f} of the bound against the CPU, "
                               f"{versus:.3f} against the emulator")
                except Exception as e:  # noqa: BLE001
                    record(False, f"{name} [{variant}, {kind} inputs]: {type(e).__name__}: {e}")
        f.close()
    run_dynamic(directory, record, torch)
    with sotc.stub_missing_frameworks():
        import workloads

    def median_time(call):
        times = []
        for i in range(23):
            torch.cuda.synchronize()
            start = time.perf_counter()
            call()
            torch.cuda.synchronize()
            if i >= 3:
                times.append(time.perf_counter() - start)
        return sorted(times)[len(times) // 2]

    # The device's limit: a device-to-device copy of 1 GiB (read once, written once).
    a = torch.empty(1 << 28, device="cuda")
    b = torch.empty_like(a)
    copy = 2 * a.numel() * 4 / median_time(lambda: b.copy_(a))
    del a, b
    lines.append(f"device-to-device copy: {copy / 1e9:.0f} GB/s")
    lines.append("workloads (float32, median of 20 after 3 warm-up runs; GB/s of the minimum "
                 "bytes: inputs read once, outputs written once; x: time over the copy's):")
    for name, (fn, shapes) in workloads.WORKLOADS.items():
        try:
            f = sotc.load(os.path.join(directory, f"bench_{name}.fatbin"))
            gen = torch.Generator(device="cuda").manual_seed(0)
            args = {k: torch.randn(s, device="cuda", generator=gen) * 0.1 for k, s in shapes.items()}
            want, got = fn(**args), f(**args)
            worst = close(flatten(got)[0], flatten(want)[0])
            record(worst <= 1, f"bench {name} vs torch eager: worst {worst:.3f} of the bound")
            moved = sum(a.numel() * 4 for a in args.values()) + want.numel() * 4
            reused = [torch.empty_like(torch.as_tensor(t)) for t in flatten_tensors(got)]
            calls = [("sotc (reused out)", lambda: f(**args, out=reused)),
                     ("sotc", lambda: f(**args)), ("torch eager", lambda: fn(**args))]
            if name in ("softmax", "layer_norm", "rms_norm"):  # the norms' target: torch.compile
                compiled = torch.compile(fn)
                calls.append(("torch.compile", lambda: compiled(**args)))
            for label, call in calls:
                median = median_time(call)
                lines.append(f"    {name} {label}: {median * 1e3:.3f} ms, "
                             f"{moved / median / 1e9:.0f} GB/s, "
                             f"{median / (moved / copy):.2f}x")
                print(lines[-1], flush=True)
        except Exception as e:  # noqa: BLE001
            record(False, f"bench {name}: {type(e).__name__}: {e}")
    # Models against torch eager on the GPU (full float32: no TF32 in cuDNN's convolutions).
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    lines.append("models (median of 20 after 3 warm-up runs):")
    for fatbin in sorted(glob.glob(os.path.join(directory, "model_*.fatbin"))):
        name = os.path.basename(fatbin)[len("model_"):-len(".fatbin")]
        try:
            import make_model_traces
            model = make_model_traces.make_model(name).cuda()
            spec = sotc.parse_tensor_spec(make_model_traces.header(name)[1][0].partition("=")[2])
            gen = torch.Generator(device="cuda").manual_seed(0)
            shape = [d.size for d in spec.dims]
            if sotc._specs.dtype_name(spec.dtype).startswith("int"):  # token ids
                x = torch.randint(0, 32, shape, device="cuda", generator=gen)
            else:
                x = torch.randn(shape, device="cuda", generator=gen)
            f = sotc.load(fatbin)
            with torch.no_grad():
                want = model(x)
                worst = close(flatten(f(x))[0], flatten(want)[0])
                record(worst <= 1, f"model {name} vs torch eager: worst {worst:.3f} of the bound")
                for label, call in (("sotc", lambda: f(x)), ("torch eager", lambda: model(x))):
                    lines.append(f"    {name} {label}: {median_time(call) * 1e3:.3f} ms")
                    print(lines[-1], flush=True)
        except Exception as e:  # noqa: BLE001
            record(False, f"model {name}: {type(e).__name__}: {e}")
    lines.append(f"{passed} passed, {failed} failed")
    text = "\n".join(lines) + "\n"
    print(lines[-1])
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "device-report.txt"), "w") as f:
        f.write(text)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "prepare":
        prepare(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "."))
    else:
        sys.exit(__doc__)
