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
