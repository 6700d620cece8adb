"""A fixed sample of each model suite of bench/suites.py (the same models every run: the least
hashes of their names), as CI runs them: every sampled model must compile and match its
library, or be refused with a coded error naming the construct; a wrong result or a crash
fails. `bench/suites.py` runs the whole libraries and writes docs/model-suites.md."""

import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import suites  # noqa: E402

PER_SUITE = int(os.environ.get("SOTC_SUITE_SAMPLE", "1"))
CASES = [(suite_name, name) for suite_name, cls in suites.SUITES.items()
         if suites.version(cls.package) is not None
         for name in cls().sampled(PER_SUITE)]


@pytest.mark.parametrize("suite_name,name", CASES, ids=[f"{s}-{n}" for s, n in CASES])
def test_sampled_model_is_not_wrong(suite_name, name):
    result = suites.run_isolated(suite_name, name, timeout=600)
    assert result["outcome"] in ("ok", "refused", "skipped"), result
    if result["outcome"] == "refused":
        assert suites.coded(result["cause"]), result
