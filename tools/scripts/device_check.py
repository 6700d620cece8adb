#!/usr/bin/env python3
"""The GPU check: sotc's CUDA kernels on a real GPU, against the CPU artifacts' results.

    device_check.py prepare DIR    (here, with sotc built) every testdata program that translates:
                                   DIR/<p>.fatbin + manifest (sm_90), DIR/<p>.so run on seeded
                                   inputs (DIR/<p>/in/*.npy) into DIR/<p>/expected/*.npy
    device_check.py run DIR [OUT]  (on the GPU machine: Python 3, numpy, torch, the CUDA driver;
                                   nothing of sotc built) loads each fatbin through the driver
                                   API (ctypes), runs the manifest's plan (kernels from the
                                   fatbin; GEMM steps with torch.matmul, as cuBLASLt is the
                                   runtime's job), compares with the expected outputs, times
                                   every kernel, and writes OUT/device-report.txt

Ends with one line "N passed, N failed".
"""

import ctypes
import glob
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64,
          "bool": np.bool_}


def prepare(out):
    sotc = os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc")
    os.makedirs(out, exist_ok=True)
    for trace in sorted(glob.glob(os.path.join(ROOT, "testdata", "traces", "*.pb"))):
        name = os.path.basename(trace)[:-3]
        base = os.path.join(out, name)
        if subprocess.run([sotc, "compile", trace, "--gpu-arch", "sm_90", "-o", base + ".fatbin"],
                          capture_output=True).returncode:
            continue  # a program the frontend refuses, with its documented error
        subprocess.run([sotc, "compile", trace, "--target", "cpu", "-o", base + ".so"], check=True)
        with open(base + ".manifest.json") as f:
            entry = json.load(f)["entry"]["inputs"]
        rng = np.random.default_rng(7)
        os.makedirs(base + "/in", exist_ok=True)
        os.makedirs(base + "/expected", exist_ok=True)
        args = []
        for p in entry:
            if p["kind"] != "tensor":
                continue
            dtype = DTYPES.get(p["dtype"])
            if dtype is None:
                break
            if dtype == np.bool_:
                x = rng.integers(0, 2, p["shape"]).astype(np.bool_)
            elif np.issubdtype(dtype, np.integer):
                x = rng.integers(1, 5, p["shape"]).astype(dtype)
            else:
                x = rng.uniform(0.25, 2, p["shape"]).astype(dtype)  # log, sqrt: positive
            np.save(f"{base}/in/{p['name']}.npy", x)
            args += ["--input", f"{p['name']}=@{base}/in/{p['name']}.npy"]
        result = subprocess.run([sotc, "run", base + ".so", *args, "--save", base + "/expected"],
                                capture_output=True, text=True)
        os.remove(base + ".so")
        os.remove(base + ".manifest.json")  # the .so's; compile the fatbin's again
        subprocess.run([sotc, "compile", trace, "--gpu-arch", "sm_90", "-o", base + ".fatbin"],
                       check=True)
        if result.returncode:
            print(f"{name}: no CPU reference ({result.stderr.strip()})")
            os.remove(base + ".fatbin")
            os.remove(base + ".manifest.json")


class Driver:
    """The few CUDA driver calls a plan needs."""

    def __init__(self):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        c = ctypes
        self.cuda.cuModuleLoadData.argtypes = [c.POINTER(c.c_void_p), c.c_char_p]
        self.cuda.cuModuleGetFunction.argtypes = [c.POINTER(c.c_void_p), c.c_void_p, c.c_char_p]
        self.cuda.cuLaunchKernel.argtypes = [c.c_void_p] + [c.c_uint] * 7 + [c.c_void_p] * 3
        self.cuda.cuCtxSetCurrent.argtypes = [c.c_void_p]
        self.check(self.cuda.cuInit(0), "cuInit")
        device, self.context = ctypes.c_int(), ctypes.c_void_p()
        self.check(self.cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
        self.check(self.cuda.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), device),
                   "cuDevicePrimaryCtxRetain")
        self.check(self.cuda.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def check(self, rc, what):
        if rc:
            name = ctypes.c_char_p()
            self.cuda.cuGetErrorName(rc, ctypes.byref(name))
            raise RuntimeError(f"{what}: {name.value.decode() if name.value else rc}")

    def module(self, image):
        module = ctypes.c_void_p()
        self.check(self.cuda.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
        return module

    def function(self, module, name):
        f = ctypes.c_void_p()
        self.check(self.cuda.cuModuleGetFunction(ctypes.byref(f), module, name.encode()),
                   "cuModuleGetFunction " + name)
        return f

    def launch(self, f, grid, block, pointers):
        # cuLaunchKernel takes the address of each argument: here, of each device pointer.
        args = [ctypes.c_void_p(p) for p in pointers]
        params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        self.check(self.cuda.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, None, params, None),
                   "cuLaunchKernel")


def run_plan(driver, torch, manifest, module, inputs, timings):
    """The manifest's segments on the GPU; the returned tensors by name."""
    segments = manifest["segments"]
    buffers = {p["buffer"]: inputs[p["name"]] for p in manifest["entry"]["inputs"]
               if p["kind"] == "tensor" and p["buffer"]}
    index = 0
    while True:
        seg = segments[index]
        for b in seg["arena"]["buffers"] + seg["outputs"]:
            if b["name"] not in buffers:
                buffers[b["name"]] = torch.empty(b["shape"], dtype=getattr(torch, b["dtype"]),
                                                 device="cuda")
        for step in seg["steps"]:
            if step["kind"] == "gemm":
                a, b = buffers[step["inputs"][0]], buffers[step["inputs"][1]]
                if step["transpose_a"]:
                    a = a.transpose(-1, -2)
                if step["transpose_b"]:
                    b = b.transpose(-1, -2)
                c = torch.matmul(a, b)
                if step["epilogue"]["bias"]:
                    c = c + buffers[step["epilogue"]["bias"]]
                if step["epilogue"]["activation"] == "relu":
                    c = torch.relu(c)
                elif step["epilogue"]["activation"] == "gelu_tanh":
                    c = torch.nn.functional.gelu(c, approximate="tanh")
                buffers[step["outputs"][0]].copy_(c.reshape(buffers[step["outputs"][0]].shape))
                continue
            f = driver.function(module, step["symbol"])
            pointers = [buffers[n].data_ptr() for n in step["outputs"] + step["inputs"]]
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            driver.launch(f, step["grid"], step["block"], pointers)
            end.record()
            torch.cuda.synchronize()
            timings.append((step["symbol"], start.elapsed_time(end),
                            sum(buffers[n].numel() * buffers[n].element_size()
                                for n in set(step["outputs"] + step["inputs"]))))
        end = seg["end"]
        if end["kind"] == "branch":
            taken = bool(buffers[end["condition"]].reshape(-1)[0].item())
            args = end["true_args"] if taken else end["false_args"]
            index = end["on_true"] if taken else end["on_false"]
            buffers = {t["name"]: buffers[a] for t, a in zip(segments[index]["inputs"], args)}
            continue
        if end["kind"] != "return":
            raise RuntimeError(f"{seg['name']} ends in a host callback")
        return buffers


def run(directory, out):
    try:
        import torch
        driver = Driver()
    except (ImportError, OSError, RuntimeError) as e:
        print(f"device-check: no GPU to check on ({e})", file=sys.stderr)
        return 2
    lines, passed, failed = [], 0, 0
    for fatbin in sorted(glob.glob(os.path.join(directory, "*.fatbin"))):
        name = os.path.basename(fatbin)[:-len(".fatbin")]
        base = fatbin[:-len(".fatbin")]
        with open(base + ".manifest.json") as f:
            manifest = json.load(f)
        try:
            with open(fatbin, "rb") as f:
                module = driver.module(f.read())
            inputs = {os.path.basename(p)[:-4]: torch.from_numpy(np.load(p)).cuda()
                      for p in glob.glob(base + "/in/*.npy")}
            timings = []
            buffers = run_plan(driver, torch, manifest, module, inputs, timings)
            worst = 0.0
            for path in glob.glob(base + "/expected/*.npy"):
                want = np.load(path)
                got = buffers[os.path.basename(path)[:-4]].cpu().numpy()
                if want.dtype.kind == "f":
                    worst = max(worst, float(np.max(np.abs(got - want) /
                                                    np.maximum(1, np.abs(want)), initial=0)))
                elif not np.array_equal(got, want):
                    worst = float("inf")
            ok = worst <= 1e-4
            passed, failed = passed + ok, failed + (not ok)
            lines.append(f"{'PASS' if ok else 'FAIL'} {name}: max relative error {worst:.2e}")
            for symbol, ms, moved in timings:
                lines.append(f"    {symbol}: {ms:.3f} ms, {moved / ms / 1e6:.1f} GB/s")
        except Exception as e:  # noqa: BLE001 - one program's failure is a report line
            failed += 1
            lines.append(f"FAIL {name}: {e}")
    lines.append(f"{passed} passed, {failed} failed")
    text = "\n".join(lines) + "\n"
    print(text, end="")
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
