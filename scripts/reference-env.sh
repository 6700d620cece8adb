#!/usr/bin/env bash
# Makes (once) the virtual environment with the reference frameworks that the end-to-end
# numerics test compares sotc with: paddlepaddle and torch CPU wheels from PyPI
# (tests/framework/requirements.txt, about 6 GB, 2 minutes). It lives outside the checkout
# ($SOTC_REFERENCE_ENV, default ~/.cache/sotc/reference-env) so clones share it, and is
# rebuilt when the requirements change. Prints the environment's python.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
requirements="$here/tests/framework/requirements.txt"
env="${SOTC_REFERENCE_ENV:-$HOME/.cache/sotc/reference-env}"
stamp="$env/.sotc-requirements"
if [ ! -x "$env/bin/python" ]; then
  echo "reference-env: installing paddlepaddle and torch into $env (once)" >&2
  rm -rf "$env"
  python3 -m venv "$env"
  "$env/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" >&2
  cp "$requirements" "$stamp"
elif ! cmp -s "$requirements" "$stamp"; then
  # Changed requirements update the environment in place (pip installs what differs).
  echo "reference-env: updating $env to tests/framework/requirements.txt" >&2
  "$env/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" >&2
  cp "$requirements" "$stamp"
fi
echo "$env/bin/python"
