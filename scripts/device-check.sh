#!/usr/bin/env bash
# The GPU check, in two halves (tools/scripts/device_check.py):
#   bash scripts/device-check.sh --prepare   here: builds sotc and its runtime, compiles every
#                                            testdata program and the benchmark workloads for
#                                            sm_90 and records the CPU results, in build/device
#   bash scripts/device-check.sh             on the GPU machine (run with carry=["build/device"]):
#                                            sotc.load runs the fatbins through the runtime's
#                                            CUDA backend; the report goes to $OUT/device-report.txt
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--prepare" ]; then
  bash scripts/setup.sh
  bazel build //tools/sotc //runtime:libsotc_runtime.so >/dev/null
  rm -rf build/device
  python3 tools/scripts/device_check.py prepare build/device
  du -sh build/device
  exit 0
fi
[ -d build/device ] || { echo "device-check: no build/device; run --prepare first and carry it" >&2; exit 2; }
export SOTC_RUNTIME_LIBRARY="$PWD/build/device/lib/libsotc_runtime.so"
# The runtime links libcrypto.so.3; the carried copy only where the machine has none (ahead
# of the system's it could shadow a newer one that Python's own modules need).
if ! ldconfig -p | grep -q "libcrypto.so.3 "; then
  mkdir -p build/device/fallback && cp build/device/lib/libcrypto.so.3 build/device/fallback/
  export LD_LIBRARY_PATH="$PWD/build/device/fallback:${LD_LIBRARY_PATH:-}"
fi
# cuBLASLt for GEMM steps: the system's, else the one torch's wheels bring.
if ! ldconfig -p | grep -q libcublasLt.so; then
  lt=$(python3 -c "
import glob, os
try:
    import nvidia
    found = sorted(f for p in nvidia.__path__ for f in glob.glob(os.path.join(p, 'cublas', 'lib', 'libcublasLt.so.*')))
    print(found[-1] if found else '')
except ImportError:
    print('')")
  [ -n "$lt" ] && export SOTC_CUBLASLT="$lt"
fi
PYTHONUNBUFFERED=1 python3 tools/scripts/device_check.py run build/device "${OUT:-build/device-out}"
