"""torchvision's one-stage detectors (RetinaNet, FCOS) and ultralytics' YOLO as users build them,
whole: backbone,
head, anchors and the library's own post-processing (a score threshold, a top-k of a counted
selection per level, the levels concatenated, batched_nms, the best detections kept). Each is
traced once and compiled once; its classification bias is then set (set_weights, no
recompiling) so that no anchor, a few or most pass the score threshold, and the detections
(boxes, scores, labels: same count, same order) are compared with torch's eager ones.

In CI a small backbone keeps each model to seconds; with `scripts/test.sh --full`
(SOTC_TEST_FULL=1) the library's own builders (retinanet_resnet50_fpn, fcos_resnet50_fpn)
run too, where "many" means thousands of candidates a level (the runtime's argsort step).

YOLO's post-processing is ultralytics' own non_max_suppression (its confidence filter, its
corner conversion written into the kept rows, torchvision's nms, the time limit it checks
with time.time()).
"""

import collections
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch import nn
from torchvision.models import detection
from torchvision.models.detection.anchor_utils import AnchorGenerator

sys.path.insert(0, os.path.dirname(__file__))

from test_programs_vs_framework import sotc_bin  # noqa: E402,F401

import sotc  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FULL = os.environ.get("SOTC_TEST_FULL") == "1"
REGIMES = ("none", "few", "many")


class SmallBackbone(nn.Module):
    """Two feature levels (strides 8 and 16) of 32 channels, as torchvision's FPN backbones
    hand them to a detection head."""

    def __init__(self):
        super().__init__()
        self.out_channels = 32
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 32, 3, 2, 1),
                                  nn.ReLU(), nn.Conv2d(32, 32, 3, 2, 1))
        self.down = nn.Conv2d(32, 32, 3, 2, 1)

    def forward(self, x):
        f = self.body(x)
        return collections.OrderedDict([("0", f), ("1", self.down(f))])


class OneImage(nn.Module):
    """The detector on one image, its detections as the library returns them."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, image):
        return self.model([image])[0]


# Each model's classification head is drawn at a std, then its logits' bias is set for no
# detections, a few and as many as the model keeps on the test's image.
def small(kind):
    """(model, image size, head std, bias by regime): torchvision's class on a small
    backbone."""
    torch.manual_seed(0)
    if kind == "retinanet":
        anchors = AnchorGenerator(((16,), (32,)), ((0.5, 1.0, 2.0),) * 2)
        model = detection.RetinaNet(SmallBackbone(), num_classes=4, min_size=128, max_size=128,
                                    anchor_generator=anchors)
        return model, 128, 0.1, {"none": -6.0, "few": -4.0, "many": 0.0}
    anchors = AnchorGenerator(((16,), (32,)), ((1.0,),) * 2)
    model = detection.FCOS(SmallBackbone(), num_classes=4, min_size=128, max_size=128,
                           anchor_generator=anchors)
    return model, 128, 0.05, {"none": -6.0, "few": -4.0, "many": 0.0}


def library(name):
    """torchvision's builder, random weights, at a small image size."""
    torch.manual_seed(0)
    model = getattr(detection, name)(weights=None, weights_backbone=None, min_size=160,
                                     max_size=160)
    few = -4.4 if name.startswith("retinanet") else -3.9
    return model, 160, 0.01, {"none": -6.0, "few": few, "many": 0.0}


MODELS = {"small-retinanet": lambda: small("retinanet"), "small-fcos": lambda: small("fcos"),
          "retinanet_resnet50_fpn": lambda: library("retinanet_resnet50_fpn"),
          "fcos_resnet50_fpn": lambda: library("fcos_resnet50_fpn")}
IN_CI = {"small-retinanet", "small-fcos"}
BIAS = "model.head.classification_head.cls_logits.bias"  # OneImage's name of it


def assert_same_detections(got, want, where):
    """Same count; scores close in order; boxes and labels row by row, where two rows whose
    scores differ by float noise (1e-5) may come in either order, as a different summation
    order makes them (torch's own CPU kernels differ so between builds)."""
    got = {k: np.asarray(got[k]) for k in ("boxes", "scores", "labels")}
    want = {k: want[k].numpy() for k in ("boxes", "scores", "labels")}
    assert got["scores"].shape == want["scores"].shape, (where, got["scores"].shape,
                                                         want["scores"].shape)
    np.testing.assert_allclose(got["scores"], want["scores"], rtol=1e-4, atol=1e-5, err_msg=where)
    scale = max(1.0, float(np.abs(want["boxes"]).max(initial=0)))
    unmatched = list(range(len(want["scores"])))
    for i in range(len(got["scores"])):
        match = [j for j in unmatched if abs(j - i) <= 3 and
                 abs(want["scores"][j] - got["scores"][i]) <= 1e-5 and
                 want["labels"][j] == got["labels"][i] and
                 np.allclose(want["boxes"][j], got["boxes"][i], rtol=1e-4, atol=1e-4 * scale)]
        assert match, (where, i, got["scores"][i], got["labels"][i], got["boxes"][i],
                       want["scores"][i], want["labels"][i], want["boxes"][i])
        unmatched.remove(match[0])


@pytest.fixture(scope="module")
def built(tmp_path_factory, sotc_bin):  # noqa: F811
    out, cache = tmp_path_factory.mktemp("detectors"), {}

    def get(name, target):
        if (name, target) not in cache:
            model, size, std, biases = MODELS[name]()
            with torch.no_grad():  # a head whose logits differ across anchors and classes
                for p in model.head.classification_head.parameters():
                    if p.dim() == 4:
                        p.normal_(0, std)
            wrapped = OneImage(model.eval()).eval()
            image = torch.rand(3, size, size, generator=torch.Generator().manual_seed(1))
            folder = out / name
            folder.mkdir(exist_ok=True)
            sotc.trace(wrapped, image).save(str(folder / "t.pb"))
            artifact = folder / ("k.so" if target == "cpu" else "k.fatbin")
            r = subprocess.run([sotc_bin, "compile", str(folder / "t.pb"), "--target", target,
                                "-o", str(artifact)], cwd=ROOT, capture_output=True, text=True)
            assert r.returncode == 0, r.stderr.strip().splitlines()[-1:]
            device = "cpu" if target == "cpu" else "emulator"
            cache[name, target] = (wrapped, image, biases,
                                   sotc.load(str(artifact), device=device))
        return cache[name, target]
    return get


@pytest.mark.parametrize("regime", REGIMES)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_detections_match_eager(name, regime, built):
    if name not in IN_CI and not FULL:
        pytest.skip("a library builder at full width: runs with scripts/test.sh --full")
    wrapped, image, biases, compiled = built(name, "cpu")
    with torch.no_grad():
        wrapped.model.head.classification_head.cls_logits.bias.fill_(biases[regime])
        want = wrapped(image)
    compiled.set_weights({BIAS: wrapped.state_dict()[BIAS]}, strict=False)
    got = compiled(image.numpy())
    if regime == "none":
        assert len(want["scores"]) == 0
    if regime == "few":
        assert 0 < len(want["scores"]) < 50, len(want["scores"])
    assert_same_detections(got, want, f"{name}, {regime}")


def test_a_detector_on_the_cuda_emulator(built):
    """The fatbin of the small RetinaNet, run on the CUDA emulator, where most anchors pass."""
    wrapped, image, biases, compiled = built("small-retinanet", "cuda")
    with torch.no_grad():
        wrapped.model.head.classification_head.cls_logits.bias.fill_(biases["many"])
        want = wrapped(image)
    compiled.set_weights({BIAS: wrapped.state_dict()[BIAS]}, strict=False)
    assert_same_detections(compiled(image.numpy()), want, "small-retinanet on the emulator")


class YoloWithNms(nn.Module):
    """An ultralytics detector and the library's non_max_suppression, as its predictor runs
    them on one batch."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, images):
        from ultralytics.utils.nms import non_max_suppression
        return non_max_suppression(self.model(images), conf_thres=0.25, iou_thres=0.7)


@pytest.fixture(scope="module")
def yolo(tmp_path_factory, sotc_bin):  # noqa: F811
    """yolov8n from the library's yaml (its own initialisation), its detect head's class
    biases by name, and its artifact."""
    pytest.importorskip("ultralytics")
    import torchvision  # noqa: F401  (non_max_suppression takes torchvision's nms when imported)
    from ultralytics.nn.tasks import DetectionModel
    torch.manual_seed(0)
    wrapped = YoloWithNms(DetectionModel("yolov8n.yaml", verbose=False).eval()).eval()
    # Batch norms calibrated on images (train mode, one pass): at their initial statistics the
    # activations shrink layer by layer until the image no longer shows, and most anchors tie.
    calibration = torch.rand(4, 3, 160, 160, generator=torch.Generator().manual_seed(2))
    for m in wrapped.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.momentum = 1.0
    with torch.no_grad():
        wrapped.model.train()(calibration)
    wrapped.model.eval()
    head = wrapped.model.model[-1]
    heads = head.one2many["cls_head"] if hasattr(head, "one2many") else head.cv3
    last = {id(h[-1].bias) for h in heads}
    biases = [n for n, p in wrapped.named_parameters() if id(p) in last]
    image = torch.rand(1, 3, 160, 160, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        wrapped(image)  # the head caches its anchors on its first call (as the exporter's dry run)
    folder = tmp_path_factory.mktemp("yolo")
    sotc.trace(wrapped, image).save(str(folder / "t.pb"))
    r = subprocess.run([sotc_bin, "compile", str(folder / "t.pb"), "--target", "cpu", "-o",
                        str(folder / "k.so")], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr.strip().splitlines()[-1:]
    return wrapped, biases, image, sotc.load(str(folder / "k.so"))


@pytest.mark.parametrize("regime,bias", [("none", -8.0), ("few", -3.0), ("many", -2.0)])
def test_yolo_detections_match_eager(regime, bias, yolo):
    wrapped, biases, image, compiled = yolo
    with torch.no_grad():
        for name in biases:
            wrapped.get_parameter(name).fill_(bias)
        want = wrapped(image)
    compiled.set_weights({n: wrapped.state_dict()[n] for n in biases}, strict=False)
    got = compiled(image.numpy())
    assert len(got) == len(want) == 1
    rows = {"none": (0, 0), "few": (1, 49), "many": (50, 300)}[regime]
    assert rows[0] <= len(want[0]) <= rows[1], len(want[0])
    as_dict = lambda d: {"boxes": d[:, :4], "scores": d[:, 4], "labels": d[:, 5]}  # noqa: E731
    assert_same_detections(as_dict(np.asarray(got[0])), as_dict(want[0]), f"yolov8n, {regime}")
