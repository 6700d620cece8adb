"""`sotc doctor` (python -m sotc doctor): what this machine has for sotc, one line each: the
versions, the CPU and the kernels artifacts run on it, what GEMM steps call, the CUDA driver
and its devices, the CUDA toolkit a CUDA compilation calls, the emulator. Nothing here
compiles or fails: what is missing is said, with what it costs."""

import ctypes
import os
import re
import shutil
import subprocess
import sys

from ._version import __version__

# The CPUs sotc compiles kernels for and the extensions each needs (what the manifest's
# target.features and variants list; runtime/src/Artifact.cpp chooses the same way).
LEVELS = [("x86-64-v4", {"avx512f", "avx512bw", "avx512dq", "avx512vl"}),
          ("x86-64-v3", {"avx", "avx2", "fma", "bmi2", "f16c"})]


def compiler_binary():
    """The sotc compiler: the sotc-compiler package's, else a checkout's build, else None."""
    try:
        import sotc_compiler
        if os.access(sotc_compiler.BINARY, os.X_OK):  # not in a checkout's sources
            return sotc_compiler.BINARY
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, "..", "..", "..", "bazel-bin", "tools", "sotc", "sotc")
    return os.path.abspath(built) if os.access(built, os.X_OK) else None


def cpu():
    """(model name, flags) from /proc/cpuinfo."""
    model, flags = "unknown", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model == "unknown":
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    return model, flags


def cuda_driver():
    """The driver's version and its devices, or why there are none."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "not found (no NVIDIA driver): CUDA artifacts run on device='emulator' only"
    if cuda.cuInit(0) != 0:
        return "libcuda.so.1 loads, but cuInit fails (no usable GPU)"
    version, count = ctypes.c_int(), ctypes.c_int()
    cuda.cuDriverGetVersion(ctypes.byref(version))
    cuda.cuDeviceGetCount(ctypes.byref(count))
    names = []
    for i in range(count.value):
        device, name = ctypes.c_int(), ctypes.create_string_buffer(256)
        cuda.cuDeviceGet(ctypes.byref(device), i)
        cuda.cuDeviceGetName(name, 256, device)
        names.append(f"cuda:{i} {name.value.decode()}")
    v = version.value
    return f"CUDA {v // 1000}.{v % 1000 // 10}, " + (", ".join(names) or "no devices")


def cuda_toolkit():
    """Where a CUDA compilation finds ptxas, fatbinary and libdevice (as the compiler looks:
    $CUDA_PATH, /usr/local/cuda, ptxas on PATH), and ptxas's version."""
    root = os.environ.get("CUDA_PATH")
    if not root and os.access("/usr/local/cuda/bin/ptxas", os.X_OK):
        root = "/usr/local/cuda"
    if not root and shutil.which("ptxas"):
        root = os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("ptxas"))))
    if not root:
        return "not found (no ptxas in $CUDA_PATH, /usr/local/cuda or PATH): `sotc compile " \
               "--target cpu` works, a CUDA compilation fails with E9008"
    missing = [p for p in ("bin/ptxas", "bin/fatbinary", "nvvm/libdevice/libdevice.10.bc")
               if not os.path.exists(os.path.join(root, p))]
    if missing:
        return f"{root} lacks {', '.join(missing)}: a CUDA compilation fails with E9008"
    try:
        out = subprocess.run([os.path.join(root, "bin", "ptxas"), "--version"],
                             capture_output=True, text=True, timeout=30).stdout
        release = re.search(r"release ([0-9.]+)", out)
    except (OSError, subprocess.SubprocessError):
        release = None
    return f"{root} (ptxas {release.group(1) if release else '?'}, fatbinary, libdevice)"


def report():
    """[(what, finding)] for this machine."""
    rows = [("sotc", f"{__version__} (tracer and runtime binding: {os.path.dirname(__file__)})")]
    binary = compiler_binary()
    if binary:
        try:
            version = subprocess.run([binary, "--version"], capture_output=True, text=True,
                                     timeout=60).stdout.strip().replace("\n", ", ")
        except (OSError, subprocess.SubprocessError) as e:
            version = f"does not run ({e})"
        rows.append(("compiler", f"{binary}: {version}"))
    else:
        rows.append(("compiler", "not installed: tracing and running work; compiling needs "
                                 "`pip install sotc-compiler`"))
    rows.append(("python", sys.version.split()[0] + f" ({sys.executable})"))
    model, flags = cpu()
    rows.append(("cpu", f"{model}, {os.cpu_count()} cores, "
                        f"{len(os.sched_getaffinity(0))} usable"))
    level = next((name for name, needs in LEVELS if needs <= flags), None)
    wide = [f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile") if f in flags]
    rows.append(("kernels", f"{level} ({', '.join(wide)})" if level else
                 "none: this CPU lacks AVX2/FMA, which sotc's CPU artifacts need (x86-64-v3)"))
    try:
        from ._runtime import _runtime
        lib = _runtime()
        lib.sotc_cpu_gemm_implementation.restype = ctypes.c_char_p
        rows.append(("runtime", lib._name))
        rows.append(("gemm", lib.sotc_cpu_gemm_implementation().decode()))
        rows.append(("emulator", "available: CUDA artifacts run with device='emulator'"))
    except Exception as e:  # noqa: BLE001 - the runtime library missing or not loading
        rows.append(("runtime", f"not loaded: {e}"))
    rows.append(("cuda driver", cuda_driver()))
    rows.append(("cuda toolkit", cuda_toolkit()))
    threads = os.environ.get("SOTC_NUM_THREADS")
    if threads:
        rows.append(("threads", f"SOTC_NUM_THREADS={threads}"))
    return rows


def main(argv=()):
    if argv:
        print(f"sotc doctor: takes no arguments, got {' '.join(argv)}", file=sys.stderr)
        return 2
    rows = report()
    width = max(len(what) for what, _ in rows)
    for what, finding in rows:
        print(f"{what.ljust(width)}  {finding}")
    return 0
