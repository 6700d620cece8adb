import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def sotc_bin():
    """The sotc binary the test command built (SOTC_BIN overrides)."""
    path = os.environ.get("SOTC_BIN", os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"sotc binary not found at {path}: build it with scripts/test.sh "
                    "or bazel build //tools/sotc")
    return path
