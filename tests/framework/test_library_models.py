"""Every image classifier of torchvision and every model builder of paddle.vision, as a user
gets them from the library: built with random weights, traced from the model object, compiled
for the CPU, run through sotc.load and compared with the framework's eval-mode output, and
compiled for CUDA (the fatbin checked by `sotc inspect`) and run on the CUDA emulator against
the same output; and the attention models' classes at small sizes, in CI.

Nothing here knows a model by name. The builders come from the libraries' own lists; the input
is the first of a few shapes the framework's own forward accepts; weights that the library
initializes to one constant (zero heads, unit norms, zero running means) are replaced by
random values so the comparison sees every layer. Models over CI_PARAMETERS parameters run
with `scripts/test.sh --full` (SOTC_TEST_FULL=1); the skip says so for each. In CI the
emulator runs the fatbins whose kernels launch at most CI_EMULATED_THREADS threads in all
(about 2 s of emulation on 2 cores; the emulator runs some 10 M threads a second); the others
with --full.

Tolerance: |sotc - framework| <= 1e-4 * max|framework| (the issue's 1e-4 of the output's scale).
"""

import inspect
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import paddle
import paddle.vision.models as paddle_models
import pytest
import torch
import torchvision

from test_programs_vs_framework import sotc_bin  # noqa: F401

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import suites  # noqa: E402

import sotc  # noqa: E402  (test_programs_vs_framework puts tools/python on the path)

TOLERANCE = 1e-4
CI_PARAMETERS = 4_500_000  # 6 M took CI past 30 minutes on 2 cores
CI_EMULATED_THREADS = 16_000_000
FULL = os.environ.get("SOTC_TEST_FULL") == "1"
BATCH = 2
# (channels, size) tried in order: the first the model's own forward accepts is its input.
INPUTS = [(3, 128), (3, 160), (3, 224), (3, 299), (1, 28), (1, 32)]


def torchvision_builders():
    return sorted(torchvision.models.list_models(module=torchvision.models))


def paddle_builders():
    """paddle.vision.models' builder functions, and the model classes that have none (LeNet)."""
    exported = {name: getattr(paddle_models, name) for name in paddle_models.__all__}
    functions = {name for name, obj in exported.items() if inspect.isfunction(obj)}
    built = {exported[name].__module__ for name in functions}
    classes = {name for name, obj in exported.items()
               if inspect.isclass(obj) and obj.__module__ not in built}
    return sorted(functions | classes)


MODELS = [("torch", n) for n in torchvision_builders()] + [("paddle", n) for n in paddle_builders()]


def build(framework, name):
    if framework == "torch":
        torch.manual_seed(0)
        return torchvision.models.get_model(name, weights=None).eval()
    paddle.seed(0)
    model = getattr(paddle_models, name)()  # a builder, or a class that needs no arguments
    model.eval()
    return model


def parameter_count(model):
    return sum(int(np.prod(p.shape)) for p in model.parameters())


def randomize_constant_weights(framework, model, seed=1):
    """Weights of one value everywhere become random ones of the same sign, so that every
    layer moves the output (bench/suites.py's, which the suites use too)."""
    suites.randomize_constant_weights(model, framework, seed)


def outputs(value):
    """A model's output (a tensor, or a tuple or dict of them) as a list of numpy arrays."""
    if isinstance(value, dict):  # the segmentation models' OrderedDict(out=...)
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [a for item in value for a in outputs(item)]
    return [value.numpy() if hasattr(value, "numpy") else np.asarray(value)]


def run_framework(framework, model, x):
    if framework == "torch":
        with torch.no_grad():
            return outputs(model(torch.from_numpy(x)))
    with paddle.no_grad():
        return outputs(model(paddle.to_tensor(x)))


def example_input(framework, model):
    """The first input of INPUTS the model's own forward runs to finite outputs, and those."""
    rng = np.random.default_rng(0)
    for channels, size in INPUTS:
        x = rng.standard_normal((BATCH, channels, size, size)).astype(np.float32)
        try:
            want = run_framework(framework, model, x)
        except Exception:  # noqa: BLE001  (the framework refuses this shape: try the next)
            continue
        if all(w.size and np.isfinite(w).all() for w in want):
            return x, want
    raise AssertionError(f"none of the inputs {INPUTS} runs the model in its framework")


@pytest.fixture
def workdir(tmp_path):
    """A test's folder, emptied when it ends: the weights, in the trace's folder and beside
    each artifact, take twice a model's size (5 GB for ViT-H/14)."""
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


def compile_model(sotc_bin, trace_path, output, target):  # noqa: F811
    # CUDA: SASS for one architecture (the emulator runs the PTX, inspect checks the SASS);
    # the default pair is the testdata programs' to check.
    arch = ["--gpu-arch", "sm_90"] if target == "cuda" else []
    result = subprocess.run([sotc_bin, "compile", trace_path, "--target", target, "-o", output]
                            + arch, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr.strip().splitlines()[-1:]


@pytest.mark.parametrize("framework,name", MODELS, ids=[f"{f}-{n}" for f, n in MODELS])
def test_library_model_compiles_and_matches(framework, name, sotc_bin, workdir):  # noqa: F811
    model = build(framework, name)
    parameters = parameter_count(model)
    if parameters > CI_PARAMETERS and not FULL:
        pytest.skip(f"{parameters / 1e6:.1f}M parameters, over the {CI_PARAMETERS / 1e6:.0f}M "
                    "of CI: runs with scripts/test.sh --full")
    randomize_constant_weights(framework, model)
    x, want = example_input(framework, model)
    check_compiled(sotc_bin, workdir, model, x, want)


def check_compiled(sotc_bin, tmp_path, model, x, want):  # noqa: F811
    """Traces `model` for `x`, compiles it for the CPU and for CUDA (the fatbin read by `sotc
    inspect`), and compares both with the framework's `want`: the library, and the fatbin run
    on the CUDA emulator."""
    spec = f"float32[{','.join(map(str, x.shape))}]"
    trace_path = sotc.trace(model, spec).save(str(tmp_path / "model.pb"))
    library = str(tmp_path / "model.so")
    compile_model(sotc_bin, trace_path, library, "cpu")
    assert_matches(outputs(sotc.load(library)(x)), want, "CPU")
    fatbin = str(tmp_path / "model.fatbin")
    compile_model(sotc_bin, trace_path, fatbin, "cuda")
    subprocess.run([sotc_bin, "inspect", fatbin], check=True, capture_output=True)
    if FULL or launched_threads(fatbin) <= CI_EMULATED_THREADS:
        assert_matches(outputs(sotc.load(fatbin, device="emulator")(x)), want, "CUDA emulator")


def launched_threads(fatbin):
    """The threads a fatbin's kernels launch in one call and its weights' preparation."""
    with open(fatbin[:-len(".fatbin")] + ".cuda.manifest.json") as f:
        manifest = json.load(f)
    plans = manifest["segments"] + [e["weights"]["prepare"] for e in manifest["entries"]
                                    if "prepare" in e.get("weights", {})]
    return sum(s["grid"] * s["block"] for plan in plans for s in plan["steps"]
               if s["kind"] == "kernel")


def assert_matches(got, want, where):
    assert [g.shape for g in got] == [w.shape for w in want], where
    for g, w in zip(got, want):
        scale = float(np.abs(w).max(initial=0.0))
        error = float(np.abs(g - w).max(initial=0.0))
        assert error <= TOLERANCE * scale, \
            f"{where}: max error {error:.3g} against output scale {scale:.3g}"


def small_transformers():
    """The attention models' library classes at small sizes, so that CI compiles their code
    (ViT's class token, Swin's shifted windows, MaxViT's partitions, ConvNeXt's layer scale)
    although their builders are over CI_PARAMETERS."""
    from torchvision.models import convnext, maxvit, swin_transformer, vision_transformer
    return {
        "VisionTransformer": lambda: vision_transformer.VisionTransformer(
            image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
            num_classes=10),
        "SwinTransformer": lambda: swin_transformer.SwinTransformer(
            patch_size=[2, 2], embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=[4, 4],
            num_classes=10),
        "SwinTransformerV2": lambda: swin_transformer.SwinTransformer(
            patch_size=[2, 2], embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=[4, 4],
            num_classes=10, block=swin_transformer.SwinTransformerBlockV2,
            downsample_layer=swin_transformer.PatchMergingV2),
        "MaxVit": lambda: maxvit.MaxVit(
            input_size=(32, 32), stem_channels=8, partition_size=2, block_channels=[16, 32],
            block_layers=[1, 1], head_dim=8, stochastic_depth_prob=0.0, num_classes=10),
        "ConvNeXt": lambda: convnext.ConvNeXt(
            [convnext.CNBlockConfig(16, 32, 1), convnext.CNBlockConfig(32, None, 1)],
            num_classes=10),
    }


@pytest.mark.parametrize("name", ["lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large"])
def test_torchvision_segmentation(name, sotc_bin, workdir):  # noqa: F811
    """Segmentation heads on a classification backbone (IntermediateLayerGetter builds an
    OrderedDict of its features; the output is one too), upsampled back to the input."""
    torch.manual_seed(0)
    model = torchvision.models.segmentation.__dict__[name](weights=None,
                                                           weights_backbone=None).eval()
    randomize_constant_weights("torch", model)
    x = np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)
    check_compiled(sotc_bin, workdir, model, x, run_framework("torch", model, x))


@pytest.mark.parametrize("name", ["r3d_18", "mc3_18", "r2plus1d_18"])
def test_torchvision_video_resnets(name, sotc_bin, workdir):  # noqa: F811
    """The video ResNets: Conv3d (3x3x3, and the (2+1)-d factorized 1x3x3 and 3x1x1),
    BatchNorm3d, AdaptiveAvgPool3d, on 4 frames of 32x32."""
    torch.manual_seed(0)
    model = torchvision.models.video.__dict__[name](weights=None).eval()
    randomize_constant_weights("torch", model)
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 32, 32)).astype(np.float32)
    check_compiled(sotc_bin, workdir, model, x, run_framework("torch", model, x))


@pytest.mark.parametrize("name", sorted(small_transformers()))
def test_library_transformers_at_small_sizes(name, sotc_bin, workdir):  # noqa: F811
    torch.manual_seed(0)
    model = small_transformers()[name]().eval()
    randomize_constant_weights("torch", model)
    x = np.random.default_rng(0).standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    check_compiled(sotc_bin, workdir, model, x, run_framework("torch", model, x))
