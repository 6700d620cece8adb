"""How models are traced and what sotc refuses, on small torch and paddle layers built here
(the testdata models cover whole networks): roots that are built-in layers, layer lists,
shared weights, a model in a module global or passed as an argument, the command line, and
the errors for what is not supported."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import paddle
import pytest
import torch
import torchvision

from test_programs_vs_framework import sotc_bin  # noqa: F401

import sotc  # noqa: E402  (test_programs_vs_framework puts tools/python on the path)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def compile_trace(sotc_bin, trace, tmp_path, name="model"):  # noqa: F811
    """Saves and compiles `trace` for the CPU; the loaded artifact, or the error text."""
    path = trace.save(str(tmp_path / f"{name}.pb"))
    result = subprocess.run([sotc_bin, "compile", path, "--target", "cpu", "-o",
                             str(tmp_path / f"{name}.so")], capture_output=True, text=True)
    if result.returncode:
        return result.stderr.strip()
    return sotc.load(str(tmp_path / f"{name}.so"))


def run_torch(model, x):
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy()


X = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)


def test_a_builtin_root_layer_is_called_as_a_whole(sotc_bin, tmp_path):  # noqa: F811
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    net.eval()
    trace = sotc.trace(net, X)
    assert trace.proto.functions[trace.proto.entry_function].qualname == "forward"
    compiled = compile_trace(sotc_bin, trace, tmp_path)
    np.testing.assert_allclose(compiled(X), run_torch(net, X), rtol=1e-5, atol=1e-6)
    assert compiled.weights == ["0.weight", "0.bias", "2.weight", "2.bias"]


class Stack(torch.nn.Module):
    """Iterates, indexes and measures a ModuleList; shares one Linear twice."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(8, 8) for _ in range(3)])
        self.shared = self.layers[0]

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        x = self.layers[len(self.layers) - 1](x)
        return self.shared(x)


def test_layer_lists_and_shared_weights(sotc_bin, tmp_path):  # noqa: F811
    torch.manual_seed(2)
    net = Stack().eval()
    trace = sotc.trace(net, X)
    # shared is layers.0: one weight, recorded once, under its first state-dict name
    assert sorted(trace.weights) == [f"layers.{i}.{p}" for i in range(3) for p in ("bias", "weight")]
    compiled = compile_trace(sotc_bin, trace, tmp_path)
    np.testing.assert_allclose(compiled(X), run_torch(net, X), rtol=1e-5, atol=1e-6)


class PaddleStack(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.layers = paddle.nn.LayerList([paddle.nn.Linear(8, 8), paddle.nn.Linear(8, 4)])
        self.act = paddle.nn.Silu()

    def forward(self, x):
        for i in range(len(self.layers)):
            x = self.act(self.layers[i](x))
        return x


def test_paddle_layer_list(sotc_bin, tmp_path):  # noqa: F811
    paddle.seed(3)
    net = PaddleStack()
    net.eval()
    compiled = compile_trace(sotc_bin, sotc.trace(net, "float32[3,8]"), tmp_path)
    expected = net(paddle.to_tensor(X)).numpy()
    np.testing.assert_allclose(compiled(X), expected, rtol=1e-5, atol=1e-6)


MODULE = textwrap.dedent('''
    import torch
    torch.manual_seed(4)
    NET = torch.nn.Linear(8, 2).eval()

    def predict(x):
        return torch.softmax(NET(x), dim=-1)

    def apply(layer, x):
        return layer(x) * 2
''')


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "uses_model.py"
    path.write_text(MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        import uses_model
        yield uses_model
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("uses_model", None)


def test_a_model_in_a_global_or_an_argument(sotc_bin, tmp_path, module):  # noqa: F811
    compiled = compile_trace(sotc_bin, sotc.trace(module.predict, X), tmp_path, "predict")
    np.testing.assert_allclose(compiled(X), run_torch(module.predict, X), rtol=1e-5, atol=1e-6)
    compiled = compile_trace(sotc_bin, sotc.trace(module.apply, module.NET, X), tmp_path, "apply")
    assert compiled.weights == ["weight", "bias"]
    expected = run_torch(lambda t: module.apply(module.NET, t), X)
    np.testing.assert_allclose(compiled(module.NET, X), expected, rtol=1e-5, atol=1e-6)
    # A layer passed in runs with its weights as they are at the call.
    other = torch.nn.Linear(8, 2).eval()
    np.testing.assert_allclose(compiled(other, X), run_torch(lambda t: module.apply(other, t), X),
                               rtol=1e-5, atol=1e-6)


def test_a_bound_forward_passed_in(sotc_bin, tmp_path):  # noqa: F811
    """`fn(net.forward, x)`: a layer's bound method is its function with the layer first."""
    net = PaddleStack()
    net.eval()

    def call(f, x):
        return f(x) + 1

    compiled = compile_trace(sotc_bin, sotc.trace(call, net.forward, X), tmp_path)
    expected = net(paddle.to_tensor(X)).numpy() + 1
    np.testing.assert_allclose(compiled(net.forward, X), expected, rtol=1e-5, atol=1e-6)


def test_the_command_line_traces_a_factory(tmp_path):
    (tmp_path / "factory.py").write_text(textwrap.dedent('''
        import torch
        def make_model():
            torch.manual_seed(5)
            return torch.nn.Sequential(torch.nn.Linear(4, 2)).eval()
    '''))
    subprocess.run([sys.executable, "-m", "sotc", "trace", "factory.py:make_model", "--input",
                    "input=f32[2,4]", "-o", "m.pb"], cwd=tmp_path, check=True,
                   env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "tools", "python")})
    trace = sotc.load(str(tmp_path / "m.pb"))
    assert trace.proto.weights_file == "m.safetensors"
    assert (tmp_path / "m.safetensors").exists()


class CausalAttention(torch.nn.Module):
    """Attention through the library call, with a causal mask passed in."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(8, 24)

    def forward(self, x, mask):
        q, k, v = self.qkv(x).reshape(3, 6, 2, 4).permute(0, 2, 1, 3)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return y.transpose(0, 1).reshape(6, 8)


def test_scaled_dot_product_attention_with_a_bool_mask(sotc_bin, tmp_path):  # noqa: F811
    torch.manual_seed(6)
    net = CausalAttention().eval()
    x = np.random.default_rng(6).standard_normal((6, 8)).astype(np.float32)
    mask = np.tril(np.ones((6, 6), bool))
    compiled = compile_trace(sotc_bin, sotc.trace(net, x, mask), tmp_path)
    with torch.no_grad():
        expected = net(torch.from_numpy(x), torch.from_numpy(mask)).numpy()
    np.testing.assert_allclose(compiled(x, mask), expected, rtol=1e-5, atol=1e-6)


class TokenModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(50, 16, padding_idx=0)
        self.head = torch.nn.Linear(16, 5)

    def forward(self, tokens):
        return self.head(torch.relu(self.embed(tokens))).mean(dim=1)


class PaddleTokenModel(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.embed = paddle.nn.Embedding(50, 16, padding_idx=3)

    def forward(self, tokens):
        return self.embed(tokens) * 2.0


def test_embeddings_pick_rows(sotc_bin, tmp_path):  # noqa: F811
    tokens = np.random.default_rng(7).integers(0, 50, (4, 9)).astype(np.int64)
    tokens[0, :3] = [0, 3, 49]  # padding rows and the last one
    torch.manual_seed(7)
    net = TokenModel().eval()
    compiled = compile_trace(sotc_bin, sotc.trace(net, tokens), tmp_path, "torch_tokens")
    with torch.no_grad():
        expected = net(torch.from_numpy(tokens)).numpy()
    np.testing.assert_allclose(compiled(tokens), expected, rtol=1e-5, atol=1e-6)
    paddle.seed(7)
    pnet = PaddleTokenModel()
    pnet.eval()
    compiled = compile_trace(sotc_bin, sotc.trace(pnet, tokens), tmp_path, "paddle_tokens")
    expected = pnet(paddle.to_tensor(tokens)).numpy()
    np.testing.assert_allclose(compiled(tokens), expected, rtol=1e-6, atol=0)


class TorchSelfAttention(torch.nn.Module):
    def __init__(self, batch_first):
        super().__init__()
        self.batch_first = batch_first
        self.attn = torch.nn.MultiheadAttention(16, 4, batch_first=batch_first)

    def forward(self, x, mask):
        out, weights = self.attn(x, x, x, attn_mask=mask)
        short, none = self.attn(x, x, x, need_weights=False)
        return out, weights, short * 2, none


class PaddleSelfAttention(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.attn = paddle.nn.MultiHeadAttention(16, 4)
        self.weighted = paddle.nn.MultiHeadAttention(16, 2, need_weights=True)

    def forward(self, x, mask):
        out, weights = self.weighted(x, attn_mask=mask)
        return self.attn(x, x, x) + out, weights


@pytest.mark.parametrize("batch_first", [True, False])
def test_torch_multihead_attention(sotc_bin, tmp_path, batch_first):  # noqa: F811
    torch.manual_seed(8)
    net = TorchSelfAttention(batch_first).eval()
    shape = (2, 5, 16) if batch_first else (5, 2, 16)  # [seq, batch, embed] by default
    x = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    mask = np.triu(np.ones((5, 5), bool), 1)  # torch: True is masked out (causal)
    compiled = compile_trace(sotc_bin, sotc.trace(net, x, mask), tmp_path, f"mha{batch_first}")
    with torch.no_grad():
        expected = net(torch.from_numpy(x), torch.from_numpy(mask))
    got = compiled(x, mask)
    assert got[3] is None and expected[3] is None
    for g, e in zip(got[:3], expected[:3]):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-5, atol=1e-6)


class HintWithoutMask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, is_causal=True, need_weights=False)[0]


class PaddedAttention(torch.nn.Module):
    """Padded batches: keys past each sequence's length masked (bool or additive), a causal
    mask with torch's is_causal hint, and positions from arange."""

    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(16, 4, batch_first=True)
        self.pos = torch.nn.Embedding(5, 16)

    def forward(self, x, padding, causal):
        x = x + self.pos(torch.arange(x.shape[1]))
        a, weights = self.attn(x, x, x, key_padding_mask=padding)
        b, _ = self.attn(x, x, x, key_padding_mask=padding.float() * -1e9, need_weights=False)
        c, _ = self.attn(x, x, x, attn_mask=causal, is_causal=True, key_padding_mask=padding)
        return a, weights, b, c


def test_torch_attention_with_padding_and_causal_masks(sotc_bin, tmp_path):  # noqa: F811
    torch.manual_seed(10)
    net = PaddedAttention().eval()
    x = np.random.default_rng(10).standard_normal((2, 5, 16)).astype(np.float32)
    padding = np.zeros((2, 5), bool)
    padding[1, 3:] = True  # the second sequence is 3 long
    causal = np.triu(np.ones((5, 5), bool), 1)
    compiled = compile_trace(sotc_bin, sotc.trace(net, x, padding, causal), tmp_path, "padded")
    with torch.no_grad():
        expected = net(*(torch.from_numpy(a) for a in (x, padding, causal)))
    for g, e in zip(compiled(x, padding, causal), expected):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-5, atol=1e-6)


def torch_depthwise_separable():
    """MobileNet's block: a depthwise 3x3 (one filter per channel), batch norm, ReLU6, a
    pointwise 1x1, batch norm."""
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False), nn.BatchNorm2d(8),
                         nn.ReLU6(), nn.Conv2d(8, 16, 1), nn.BatchNorm2d(16))


def paddle_depthwise_separable():
    nn = paddle.nn
    return nn.Sequential(nn.Conv2D(8, 8, 3, padding=1, groups=8, bias_attr=False),
                         nn.BatchNorm2D(8), nn.ReLU6(), nn.Conv2D(8, 16, 1), nn.BatchNorm2D(16))


def test_depthwise_separable_convolutions(sotc_bin, tmp_path):  # noqa: F811
    x = np.random.default_rng(11).standard_normal((2, 8, 10, 10)).astype(np.float32)
    torch.manual_seed(11)
    net = torch_depthwise_separable().eval()
    with torch.no_grad():  # statistics that are not the identity, so the folds show
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-1, 1), m.running_var.uniform_(0.5, 2)
        expected = net(torch.from_numpy(x)).numpy()
    compiled = compile_trace(sotc_bin, sotc.trace(net, x), tmp_path, "torch_dw")
    np.testing.assert_allclose(compiled(x), expected, rtol=1e-5, atol=1e-5)
    paddle.seed(11)
    pnet = paddle_depthwise_separable()
    pnet.eval()
    compiled = compile_trace(sotc_bin, sotc.trace(pnet, x), tmp_path, "paddle_dw")
    np.testing.assert_allclose(compiled(x), pnet(paddle.to_tensor(x)).numpy(), rtol=1e-5,
                               atol=1e-5)


def test_paddle_multihead_attention(sotc_bin, tmp_path):  # noqa: F811
    paddle.seed(9)
    net = PaddleSelfAttention()
    net.eval()
    x = np.random.default_rng(9).standard_normal((2, 5, 16)).astype(np.float32)
    mask = np.tril(np.ones((5, 5), bool))  # paddle: True is kept
    compiled = compile_trace(sotc_bin, sotc.trace(net, x, mask), tmp_path, "paddle_mha")
    expected = net(paddle.to_tensor(x), paddle.to_tensor(mask))
    for g, e in zip(compiled(x, mask), expected):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-5, atol=1e-6)


def test_refusals_name_what_is_not_supported(sotc_bin, tmp_path):  # noqa: F811
    with pytest.raises(sotc.TraceError, match="training mode: call .eval"):
        sotc.trace(torch.nn.Linear(2, 2), "float32[1,2]")
    # A library layer runs its forward; what it calls that has no bytecode is named.
    net = torch.nn.Sequential(torch.nn.LPPool2d(2, 2)).eval()
    error = compile_trace(sotc_bin, sotc.trace(net, "float32[1,4,8,8]"), tmp_path, "lp_pool")
    assert "E3004" in error and "torch.nn.functional.lp_pool2d" in error
    assert "torch/nn/modules/pooling.py:" in error
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect")).eval()
    error = compile_trace(sotc_bin, sotc.trace(net, "float32[1,3,8,8]"), tmp_path, "reflect")
    assert "E3004" in error and "padding_mode='reflect' is not supported" in error
    hint = HintWithoutMask().eval()
    error = compile_trace(sotc_bin, sotc.trace(hint, "float32[1,3,8]"), tmp_path, "hint")
    assert "Need attn_mask if specifying the is_causal hint" in error
    # A layer with weights built inside forward would draw them anew at every call; one that
    # holds layers is not built there either.
    def built_here(make):
        return sotc.trace(lambda x: make()(x), "float32[2,3]", sotc_framework="torch")
    error = compile_trace(sotc_bin, built_here(lambda: torch.nn.Linear(3, 2)), tmp_path, "linear")
    assert "E3002" in error and "constructing a torch.nn.Linear inside the traced code" in error
    assert ".weight would be made anew at every call" in error
    error = compile_trace(sotc_bin, built_here(lambda: torch.nn.Sequential(torch.nn.ReLU())),
                          tmp_path, "seq")
    assert "constructing a torch.nn.Sequential inside the traced code is not supported" in error


def classes_by_name(trace):
    return {c.library_name or c.qualname: c for c in trace.proto.classes}


def test_library_classes_run_their_forwards(sotc_bin, tmp_path):  # noqa: F811
    """torchvision's ResNet and BasicBlock are recorded with their methods and compiled from
    their bytecode; the layer table's leaves (Conv2d, BatchNorm2d) by name alone, whatever
    their library bases (_BatchNorm) define; weights keep their state-dict names."""
    torch.manual_seed(3)
    model = torchvision.models.resnet18(num_classes=10).eval()
    trace = sotc.trace(model, "float32[1,3,32,32]")
    classes = classes_by_name(trace)
    resnet = classes["torchvision.models.ResNet"]
    assert {"forward", "_forward_impl"} <= {m.name for m in resnet.members}
    assert "forward" in {m.name for m in classes["torchvision.models.resnet.BasicBlock"].members}
    for leaf in ("torch.nn.Conv2d", "torch.nn.BatchNorm2d", "torch.nn.Linear"):
        assert not classes[leaf].members, leaf
    assert trace.proto.functions[trace.proto.entry_function].qualname == "ResNet.forward"
    compiled = compile_trace(sotc_bin, trace, tmp_path)
    assert sorted(compiled.weights) == sorted(model.state_dict())
    x = np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.testing.assert_allclose(compiled(x), run_torch(model, x), rtol=1e-4, atol=1e-4)


class BlocksInAList(paddle.nn.Layer):
    """Sublayers added by name and also kept in a plain list (paddle.vision's ShuffleNetV2)."""

    def __init__(self):
        super().__init__()
        self.blocks = []
        for i in range(2):
            block = paddle.nn.Sequential(paddle.nn.Linear(8, 8), paddle.nn.ReLU())
            self.blocks.append(self.add_sublayer(f"stage_{i}", block))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def test_weights_are_named_by_their_path_from_the_model(sotc_bin, tmp_path):  # noqa: F811
    paddle.seed(4)
    model = BlocksInAList()
    model.eval()
    trace = sotc.trace(model, "float32[3,8]")
    assert sorted(trace.weights) == sorted(model.state_dict())
    compiled = compile_trace(sotc_bin, trace, tmp_path)
    want = model(paddle.to_tensor(X)).numpy()
    np.testing.assert_allclose(compiled(X), want, rtol=1e-5, atol=1e-6)


class OwnLinear(torch.nn.Linear):
    """A subclass of a layer-table leaf with a forward of its own: the forward runs."""

    def forward(self, x):
        return super().forward(x) * 2 + 1


@pytest.mark.parametrize("make", [lambda: torch.nn.Hardswish(), lambda: torch.nn.Softplus(),
                                  lambda: torch.nn.Sequential(OwnLinear(8, 8), torch.nn.Hardsigmoid())],
                         ids=["Hardswish", "Softplus", "own-linear"])
def test_framework_layers_outside_the_table(sotc_bin, tmp_path, make):  # noqa: F811
    """torch.nn classes the layer table does not list compile from their forwards too (what
    they call is an operator: Softplus's F.softplus)."""
    torch.manual_seed(5)
    model = make().eval()
    result = compile_trace(sotc_bin, sotc.trace(model, X), tmp_path)
    np.testing.assert_allclose(result(X), run_torch(model, X), rtol=1e-5, atol=1e-6)


class Stage(torch.nn.Module):
    """What timm's models do: a stage iterating its children(), named_children(), tensor
    methods softmax/view_as/expand_as, and a str Enum setting."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)

    def forward(self, x):
        for block in self.children():
            x = block(x)
        names = [name for name, _ in self.named_children()]
        weights = x.softmax(-1).view_as(x)
        scale = torch.ones(x.shape[0], 1).expand_as(x) * len(names)
        return weights * scale


def test_timm_style_layer_code(sotc_bin, tmp_path):  # noqa: F811
    model = Stage().eval()
    compiled = compile_trace(sotc_bin, sotc.trace(model, X), tmp_path)
    np.testing.assert_allclose(compiled(X), run_torch(model, X), rtol=1e-5, atol=1e-6)
