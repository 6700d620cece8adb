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


class _Transformer:
    """A constructor shaped like diffusers' large transformers (Flux, Chroma): widths the
    suite's table does not name, rotary axes splitting the head."""

    def __init__(self, in_channels=None, patch_size=None, num_layers=19, num_single_layers=38,
                 attention_head_dim=128, num_attention_heads=24, joint_attention_dim=4096,
                 approximator_hidden_dim=5120, axes_dims_rope=(16, 56, 56), sample_size=128,
                 text_encoder_dim=None, vocab_size=32000):
        pass


def test_scaled_config_divides_every_width_alike():
    """Every width is divided by one power of two (the largest to at most 256), counts of
    layers go to one, a head rotary axes split keeps 16 lanes and the axes split it again,
    sizes that are not widths stay, and what the constructor needs but leaves unset is set."""
    small = suites.Diffusers().scaled_config(_Transformer)
    assert small["approximator_hidden_dim"] == 5120 // 32
    assert small["joint_attention_dim"] == 4096 // 32
    assert small["num_layers"] == small["num_single_layers"] == 1
    assert small["attention_head_dim"] == 16
    assert small["axes_dims_rope"] == (2, 2, 12)
    assert "sample_size" not in small and "vocab_size" not in small
    assert "num_attention_heads" not in small
    assert small["in_channels"] == 16 and small["patch_size"] == 2


def test_rows_in_another_order_are_told_apart_from_other_values():
    """Outputs equal to the library's up to the order of some rows (the order torch's CPU topk
    gives equal values) are reordered; a changed value, or a row that appears twice, is not."""
    import numpy as np
    want = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
    swapped = want.copy()
    swapped[0, [1, 2]] = swapped[0, [2, 1]]
    assert suites.compare([swapped], [want]) is not None
    assert "output 0 along axis 1" in suites.reordered([swapped], [want])
    changed = swapped.copy()
    changed[0, 1, 0] += 1
    assert suites.reordered([changed], [want]) is None
    doubled = want.copy()
    doubled[0, 1] = doubled[0, 2]
    assert suites.reordered([doubled], [want]) is None
