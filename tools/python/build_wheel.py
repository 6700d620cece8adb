#!/usr/bin/env python3
"""Builds the sotc wheel: the tracer and the runtime binding (sotc/*.py) with the runtime
library beside them (sotc/libsotc_runtime.so, found first by sotc.load), so one
`pip install sotc-*.whl` traces and runs. The library is loaded with ctypes, not imported, so
the wheel is for any Python 3 on x86-64 Linux (its glibc: the build machine's or newer).

    build_wheel.py OUT.whl libsotc_runtime.so sotc/__init__.py sotc/... (standard library only)
"""

import base64
import hashlib
import os
import re
import sys
import zipfile

# Fixed timestamps and order: the same inputs give the same wheel, byte for byte.
EPOCH = (1980, 1, 1, 0, 0, 0)


def main(out, library, sources):
    package = {os.path.basename(s): s for s in sources}
    with open(package["_version.py"]) as f:
        version = re.search(r'__version__ = "([^"]+)"', f.read()).group(1)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyproject.toml")) as f:
        requires = re.findall(r'"([^"]+)"', re.findall(r"dependencies = \[(.*)\]", f.read())[0])
    requires.append("numpy")  # the runtime binding's arrays
    dist = f"sotc-{version}.dist-info"
    files = [(f"sotc/{name}", open(path, "rb").read()) for name, path in sorted(package.items())]
    files.append(("sotc/libsotc_runtime.so", open(library, "rb").read()))
    metadata = (f"Metadata-Version: 2.1\nName: sotc\nVersion: {version}\n"
                "Summary: sotc's tracer and runtime: trace a Python tensor function, run what "
                "`sotc compile` built from it\nRequires-Python: >=3.8\n" +
                "".join(f"Requires-Dist: {r}\n" for r in requires))
    wheel = ("Wheel-Version: 1.0\nGenerator: sotc build_wheel.py\nRoot-Is-Purelib: false\n"
             "Tag: py3-none-linux_x86_64\n")
    files += [(f"{dist}/METADATA", metadata.encode()), (f"{dist}/WHEEL", wheel.encode())]
    record = ""
    for name, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{name},sha256={digest},{len(data)}\n"
    record += f"{dist}/RECORD,,\n"
    files.append((f"{dist}/RECORD", record.encode()))
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            info = zipfile.ZipInfo(name, EPOCH)
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    os.replace(tmp, out)


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
