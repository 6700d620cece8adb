"""sotc's compiler as a pip package: the `sotc` command (compile, dump, explain, inspect, run,
bench, ops) with the MLIR and LLVM libraries it loads vendored beside it (sotc_compiler.libs),
behind a console script `sotc`; `sotc doctor` is the runtime package's (`python -m sotc doctor`).
CUDA compilations call the CUDA toolkit's ptxas and fatbinary and read its libdevice, found on
the machine ($CUDA_PATH, /usr/local/cuda, or ptxas on PATH; E9008 naming what is missing)."""

import os
import sys

BINARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "sotc")


def main():
    """The console script: the sotc binary with this process's arguments (its exit status)."""
    if sys.argv[1:2] == ["doctor"]:
        from sotc._doctor import main as doctor
        sys.exit(doctor(sys.argv[2:]))
    os.execv(BINARY, [BINARY] + sys.argv[1:])
