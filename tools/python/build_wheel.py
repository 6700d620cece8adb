#!/usr/bin/env python3
"""Builds sotc's two wheels, byte for byte the same from the same inputs:

    build_wheel.py runtime OUT.whl libsotc_runtime.so sotc/__init__.py sotc/...
        the tracer and the runtime binding (sotc/*.py) with the runtime library beside them
        (sotc/libsotc_runtime.so, found first by sotc.load): `pip install` traces and runs
    build_wheel.py compiler OUT.whl sotc-binary sotc_compiler/__init__.py sotc_compiler/...
        the `sotc` command (sotc_compiler/bin/sotc) behind a console script `sotc`

Both are tagged linux_x86_64 here; scripts/build-wheels.sh vendors the libraries they load
outside the manylinux set (auditwheel repair) and tags them manylinux. The runtime library
and the compiler are loaded with ctypes or run as a program, not imported, so a wheel serves
any Python 3. Standard library only.
"""

import base64
import hashlib
import os
import re
import sys
import zipfile

# Fixed timestamps and order: the same inputs give the same wheel, byte for byte.
EPOCH = (1980, 1, 1, 0, 0, 0)
HERE = os.path.dirname(os.path.abspath(__file__))
# The OpenBLAS GEMM steps run on where no other loads: the one scripts/setup.sh installs,
# from PyPI, which the runtime finds beside its own package (runtime/src/cpu/GemmLibraries.cpp).
OPENBLAS = "scipy-openblas32==0.3.34.481.3"


def version_of(sources):
    path = next(s for s in sources if os.path.basename(s) == "_version.py")
    with open(path) as f:
        return re.search(r'__version__ = "([^"]+)"', f.read()).group(1)


def write_wheel(out, name, version, summary, files, requires=(), scripts=()):
    """files: [(path in the wheel, bytes)]; scripts: [(command, module:function)]."""
    dist = f"{name}-{version}.dist-info"
    metadata = (f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n"
                f"Summary: {summary}\nRequires-Python: >=3.8\n" +
                "".join(f"Requires-Dist: {r}\n" for r in requires))
    wheel = (f"Wheel-Version: 1.0\nGenerator: sotc build_wheel.py\nRoot-Is-Purelib: false\n"
             "Tag: py3-none-linux_x86_64\n")
    files = list(files) + [(f"{dist}/METADATA", metadata.encode()),
                           (f"{dist}/WHEEL", wheel.encode())]
    if scripts:
        entry_points = "[console_scripts]\n" + "".join(f"{c} = {f}\n" for c, f in scripts)
        files.append((f"{dist}/entry_points.txt", entry_points.encode()))
    record = ""
    for path, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(data)}\n"
    record += f"{dist}/RECORD,,\n"
    files.append((f"{dist}/RECORD", record.encode()))
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            info = zipfile.ZipInfo(path, EPOCH)
            executable = path.endswith(".so") or "/bin/" in path
            info.external_attr = (0o755 if executable else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    os.replace(tmp, out)


def package_files(package, sources):
    return [(f"{package}/{os.path.basename(s)}", open(s, "rb").read()) for s in sorted(sources)]


def runtime(out, library, sources):
    with open(os.path.join(HERE, "pyproject.toml")) as f:
        requires = re.findall(r'"([^"]+)"', re.findall(r"dependencies = \[(.*)\]", f.read())[0])
    requires += ["numpy", OPENBLAS]  # the binding's arrays; what GEMM steps run on
    files = package_files("sotc", sources)
    files.append(("sotc/libsotc_runtime.so", open(library, "rb").read()))
    write_wheel(out, "sotc", version_of(sources),
                "sotc's tracer and runtime: trace a Python tensor function, run what "
                "`sotc compile` built from it", files, requires)


def compiler(out, binary, sources, version):
    files = package_files("sotc_compiler", sources)
    files.append(("sotc_compiler/bin/sotc", open(binary, "rb").read()))
    write_wheel(out, "sotc_compiler", version,
                "sotc's compiler: `sotc compile` a trace into a CPU library or a CUDA fatbin, "
                "with MLIR and LLVM inside", files, [f"sotc=={version}"],
                [("sotc", "sotc_compiler:main")])


if __name__ == "__main__":
    if len(sys.argv) < 5 or sys.argv[1] not in ("runtime", "compiler"):
        sys.exit(__doc__)
    if sys.argv[1] == "runtime":
        runtime(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:  # the compiler's version is the tracer's: one release
        version = version_of([os.path.join(HERE, "sotc", "_version.py")])
        compiler(sys.argv[2], sys.argv[3], sys.argv[4:], version)
