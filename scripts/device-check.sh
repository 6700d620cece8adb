#!/usr/bin/env bash
# The GPU check, in two halves (tools/scripts/device_check.py):
#   bash scripts/device-check.sh --prepare   here: builds sotc, compiles every testdata program
#                                            for sm_90 and records the CPU results, in build/device
#   bash scripts/device-check.sh             on the GPU machine (run with carry=["build/device"]):
#                                            runs the fatbins through the CUDA driver against
#                                            them; the report goes to $OUT/device-report.txt
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--prepare" ]; then
  bash scripts/setup.sh
  bazel build //tools/sotc >/dev/null
  rm -rf build/device
  python3 tools/scripts/device_check.py prepare build/device
  ls build/device/*.fatbin | wc -l
  exit 0
fi
[ -d build/device ] || { echo "device-check: no build/device; run --prepare first and carry it" >&2; exit 2; }
python3 tools/scripts/device_check.py run build/device "${OUT:-build/device-out}"
