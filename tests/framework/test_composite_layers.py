"""The frameworks' composite layers as models hold them: torch.nn.LSTM/GRU/RNN and
paddle.nn.LSTM/GRU/SimpleRNN (their forward unrolled over the sequence,
compiler/frontend/RecurrentLayers.cpp), and torch's and paddle's Transformer layers (compiled
from the frameworks' own bytecode, their private helpers too): traced, compiled for the CPU,
run through sotc.load and compared with the framework's eval-mode outputs and final states
(1e-5 of their scale)."""

import subprocess

import numpy as np
import paddle
import pytest
import torch

from test_programs_vs_framework import sotc_bin  # noqa: F401

import sotc  # noqa: E402  (test_programs_vs_framework puts tools/python on the path)


def flat(value):
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in flat(v)]
    return [np.asarray(value.detach().numpy() if hasattr(value, "detach") else value.numpy())]


def torch_cases():
    torch.manual_seed(0)
    x = torch.randn(5, 2, 4)
    return {
        "torch-lstm-2-layers-bidirectional": (torch.nn.LSTM(4, 6, 2, bidirectional=True), (x,)),
        "torch-gru-batch-first": (torch.nn.GRU(4, 6, batch_first=True), (x,)),
        "torch-rnn-relu-initial-state": (torch.nn.RNN(4, 6, nonlinearity="relu"),
                                         (x, torch.randn(1, 2, 6))),
        "torch-rnn-tanh-no-bias": (torch.nn.RNN(4, 6, bias=False), (x,)),
        "torch-transformer-encoder": (torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(
            16, 4, 32, dropout=0.0, batch_first=True), 2), (torch.randn(2, 5, 16),)),
        "torch-transformer": (torch.nn.Transformer(16, 4, 1, 1, 32, dropout=0.0, batch_first=True),
                              (torch.randn(2, 5, 16), torch.randn(2, 3, 16))),
    }


def paddle_cases():
    paddle.seed(0)
    x = paddle.randn([2, 5, 4])
    return {
        "paddle-lstm-2-layers-bidirect": (paddle.nn.LSTM(4, 6, 2, direction="bidirect"), (x,)),
        "paddle-gru-time-major": (paddle.nn.GRU(4, 6, time_major=True), (x,)),
        "paddle-simple-rnn": (paddle.nn.SimpleRNN(4, 6, activation="relu"), (x,)),
        "paddle-transformer-encoder": (paddle.nn.TransformerEncoder(paddle.nn.TransformerEncoderLayer(
            16, 4, 32, dropout=0.0), 2), (paddle.randn([2, 5, 16]),)),
        "paddle-transformer": (paddle.nn.Transformer(16, 4, 1, 1, 32, dropout=0.0),
                               (paddle.randn([2, 5, 16]), paddle.randn([2, 3, 16]))),
    }


CASES = {**torch_cases(), **paddle_cases()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_composite_layer_matches_its_framework(name, sotc_bin, tmp_path):  # noqa: F811
    layer, args = CASES[name]
    layer.eval()
    if name.startswith("torch"):
        with torch.no_grad():
            want = flat(layer(*args))
    else:
        want = flat(layer(*args))
    path = sotc.trace(layer, *args).save(str(tmp_path / "rnn.pb"))
    library = str(tmp_path / "rnn.so")
    subprocess.run([sotc_bin, "compile", path, "--target", "cpu", "-o", library], check=True)
    got = flat(sotc.load(library)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        assert np.abs(g - w).max() <= 1e-5 * max(np.abs(w).max(), 1.0)
