#!/usr/bin/env python3
"""Whole model libraries as pass-rate suites, as TorchDynamo measures itself: each library's
models are enumerated from the library itself (no hand list), built with random weights in
eval mode (nothing is downloaded), traced, compiled for the CPU, run through sotc.load and
compared with the library's own eager output.

    suites.py [--suite NAME ...] [--sample N] [--jobs J] [--timeout S] [--doc]
        runs the suites (all that import, or those named), each model in a fresh process;
        --sample N runs a fixed sample of N models per suite (CI); results go to
        build/suites/NAME.json; --doc regenerates docs/model-suites.md from every
        build/suites/*.json (and is implied unless --sample is given)
    suites.py --suite NAME --rerun [--jobs J]
        runs again the models of build/suites/NAME.json that did not pass (after fixes),
        recording them and the commit under "reruns"
    suites.py --list NAME        prints a suite's models
    suites.py --check-releases   each pinned library against the newest release the index has
    suites.py --worker NAME MODEL DIR   one model, one JSON line on stdout (internal)

Outcomes: `ok` (every output within 1e-4 of its scale, the issue's tolerance), `refused` (a
coded sotc error naming the construct, or the tracer's refusal), `wrong` (compiled and ran, the
numbers differ: a defect to fix first), `broken` (a crash, a timeout, an error without a code:
a defect), and `skipped` (the library itself cannot build or run the model at the suite's
sizes; not counted). Runs in the reference environment (scripts/reference-env.sh), whose
tests/framework/requirements.txt pins the libraries; `suites.py --check-releases` lists the
pins a newer release has passed (exit 1), to move them forward and run the suites again.
torchaudio runs in an environment of its own, bench/requirements-torchaudio.txt (its newest
release that loads needs an older torch than the reference environment's):

    python3 -m venv ~/.cache/sotc/torchaudio-env
    ~/.cache/sotc/torchaudio-env/bin/pip install -r bench/requirements-torchaudio.txt
    ~/.cache/sotc/torchaudio-env/bin/python bench/suites.py --suite torchaudio
"""

import argparse
import concurrent.futures
import contextlib
import datetime
import functools
import hashlib
import importlib
import importlib.metadata
import inspect
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOTC = os.environ.get("SOTC_BIN", os.path.join(ROOT, "bazel-bin", "tools", "sotc", "sotc"))
RESULTS = os.path.join(ROOT, "build", "suites")
DOC = os.path.join(ROOT, "docs", "model-suites.md")
TOLERANCE = 1e-4
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))

# Text models: token ids of this shape; vision models: images of their config's size.
BATCH, LENGTH, VOCAB = 2, 16, 1000


class Skip(Exception):
    """The library cannot build or run this model at the suite's sizes."""


# -- inputs, weights, outputs ------------------------------------------------------------


def randomize_constant_weights(model, framework, seed=1):
    """Weights a library leaves at one value (zero heads and biases, unit norms, zero running
    means) become random ones of the same sign, so a wrongly compiled branch cannot hide."""
    import numpy as np
    rng = np.random.default_rng(seed)
    for tensor in model.state_dict().values():
        values = tensor.detach().cpu().numpy() if framework == "torch" else tensor.numpy()
        if values.dtype.kind != "f" or values.size == 0 or not np.all(values == values.flat[0]):
            continue
        c = float(values.flat[0])
        new = rng.normal(0, 0.1, values.shape) if c == 0 else c * rng.uniform(0.5, 1.5, values.shape)
        new = np.asarray(new, dtype=values.dtype)  # a 0-d weight comes back a scalar
        if framework == "torch":
            import torch
            with torch.no_grad():
                tensor.copy_(torch.from_numpy(new))
        else:
            tensor.set_value(new)


def flatten(value):
    """A model's output (tensors in tuples, lists, dicts, ModelOutputs) as numpy arrays."""
    import numpy as np
    if value is None:
        return []
    if isinstance(value, dict) or hasattr(value, "to_tuple"):
        return [a for item in value.values() for a in flatten(item)]
    if isinstance(value, (tuple, list)):
        return [a for item in value for a in flatten(item)]
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "numpy"):
        value = value.numpy()
    return [np.asarray(value)] if isinstance(value, np.ndarray) or np.isscalar(value) else []


def compare(got, want):
    """None when every output matches within TOLERANCE of its scale, else what differs."""
    import numpy as np
    got, want = flatten(got), flatten(want)
    if len(got) != len(want):
        return f"{len(got)} outputs, the library gives {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return f"output {i}: shape {g.shape}, the library's {w.shape}"
        if w.dtype.kind == "b" or w.dtype.kind in "iu":
            if not np.array_equal(g, w):
                return f"output {i}: integer values differ"
            continue
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        scale = max(np.abs(w64).max(initial=0.0), 1e-30)
        err = np.abs(g64 - w64).max(initial=0.0)
        if not np.isfinite(err) or err > TOLERANCE * scale:
            return f"output {i}: max error {err:.3g}, {err / scale:.3g} of the output's scale"
    return None


def _rows_permuted(g, w, tolerance):
    """The axis along which g is w with some of its rows in another order, each slice over the
    axes before it on its own (a batch's topk): each row of g that differs from w's equals,
    within tolerance, another differing row of w, one to one. None when there is no such axis."""
    import numpy as np

    def close(a, b):
        return np.abs(a - b).max(initial=0.0) <= tolerance

    for axis in range(w.ndim):
        if w.shape[axis] < 2:
            continue
        shape = (int(np.prod(w.shape[:axis])), w.shape[axis], -1)
        permuted = True
        for gr, wr in zip(g.reshape(shape), w.reshape(shape)):
            free = {j for j in range(len(wr)) if not close(gr[j], wr[j])}
            for j in sorted(free):
                match = next((k for k in sorted(free) if close(gr[j], wr[k])), None)
                if match is None:
                    permuted = False
                    break
                free.discard(match)
            if not permuted:
                break
        if permuted:
            return axis
    return None


def reordered(got, want):
    """Where every output that compare() finds different is the library's with rows in another
    order: what torch leaves unspecified, the order its CPU topk gives equal values (sotc orders
    them by position, as a stable sort); a description, else None."""
    import numpy as np
    moved = []
    for i, (g, w) in enumerate(zip(flatten(got), flatten(want))):
        if g.shape != w.shape or w.dtype.kind not in "f":
            if g.shape != w.shape or not np.array_equal(g, w):
                return None
            continue
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        tolerance = TOLERANCE * max(np.abs(w64).max(initial=0.0), 1e-30)
        if np.abs(g64 - w64).max(initial=0.0) <= tolerance:
            continue
        axis = _rows_permuted(g64, w64, tolerance)
        if axis is None:
            return None
        moved.append(f"output {i} along axis {axis}")
    return ("equal up to the order of rows that tie (" + ", ".join(moved) + "): torch's CPU "
            "topk orders equal values arbitrarily, sotc's by position")


# -- the suites ---------------------------------------------------------------------------


class Suite:
    """A library's models: names() enumerates them, build(name) returns (framework, model,
    args, kwargs) for a model in eval mode with random weights."""
    package = ""  # the distribution whose version the table names

    def names(self):
        raise NotImplementedError

    def sampled(self, n):
        """A fixed sample of n of names() (the least hashes: stable across runs)."""
        return sample(self.names(), n)

    def build(self, name):
        raise NotImplementedError


def _images(channels, size, framework="torch"):
    import numpy as np
    x = np.random.default_rng(0).standard_normal((BATCH, channels, size, size)).astype(np.float32)
    if framework == "torch":
        import torch
        return torch.from_numpy(x)
    import paddle
    return paddle.to_tensor(x)


class Timm(Suite):
    """timm: one model per family (a module of timm.models), its smallest variant by
    parameter count (counted on the meta device, nothing allocated)."""
    package = "timm"

    @staticmethod
    def smallest(module):
        import timm
        import torch
        best = None
        for name in timm.list_models(module=module):
            try:
                with torch.device("meta"):
                    model = timm.create_model(name, pretrained=False)
            except Exception:  # noqa: BLE001  (needs arguments, or a package absent)
                continue
            count = sum(p.numel() for p in model.parameters())
            if best is None or count < best[0]:
                best = (count, name)
        return best[1] if best else None

    def names(self):
        import timm
        return [n for n in map(self.smallest, sorted(timm.list_modules())) if n]

    def sampled(self, n):  # families first: the smallest of only those is built
        import timm
        return [n for n in map(self.smallest, sample(timm.list_modules(), n)) if n]

    def build(self, name):
        import timm
        import torch
        torch.manual_seed(0)
        model = timm.create_model(name, pretrained=False).eval()
        config = model.pretrained_cfg or {}
        channels, height, _ = config.get("input_size", (3, 224, 224))
        return "torch", model, (_images(channels, height),), {}


class TorchVision(Suite):
    """torchvision: every builder of its classification, segmentation, video and detection
    lists."""
    package = "torchvision"

    def names(self):
        import torchvision
        m = torchvision.models
        names = []
        for module in (m, m.segmentation, m.video, m.detection, m.optical_flow, m.quantization):
            names += [f"{module.__name__.split('.')[-1]}:{n}"
                      for n in torchvision.models.list_models(module=module)]
        return sorted(set(names))

    def sampled(self, n):  # the classifiers: a video or detection model compiles for minutes
        return sample([m for m in self.names() if m.startswith("models:")], n)

    def build(self, name):
        import torch
        import torchvision
        kind, builder = name.split(":")
        torch.manual_seed(0)
        extra = {"weights_backbone": None} if kind in ("segmentation", "detection") else {}
        model = torchvision.models.get_model(builder, weights=None, **extra).eval()
        randomize_constant_weights(model, "torch")
        if kind == "video":  # the first clip shape the model's own forward takes
            for frames, size in ((8, 112), (16, 224)):
                x = torch.randn(1, 3, frames, size, size, generator=torch.Generator().manual_seed(0))
                try:
                    with torch.no_grad():
                        model(x)
                    break
                except RuntimeError:
                    continue
            return "torch", model, (x,), {}
        if kind == "detection":
            return "torch", model, ([_images(3, 128)[0]],), {}
        if kind == "optical_flow":
            return "torch", model, (_images(3, 128), _images(3, 128)), {}
        return "torch", model, (_images(3, 160 if kind != "models" else 224),), {}


# Attribute names of transformers configs and what the suite sets them to: two layers, 64
# wide, four heads; sizes in lists shrink alike.
_HF_SIZES = {
    "num_hidden_layers": 2, "n_layer": 2, "num_layers": 2, "n_layers": 2,
    "encoder_layers": 2, "decoder_layers": 2, "num_decoder_layers": 2,
    "hidden_size": 64, "n_embd": 64, "d_model": 64, "dim": 64, "embed_dim": 64,
    "num_attention_heads": 4, "n_head": 4, "n_heads": 4, "num_heads": 4,
    "encoder_attention_heads": 4, "decoder_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "d_kv": 16,
    "intermediate_size": 128, "n_inner": 128, "d_ff": 128, "ffn_dim": 128,
    "encoder_ffn_dim": 128, "decoder_ffn_dim": 128, "hidden_dim": 128,
    "vocab_size": VOCAB, "max_position_embeddings": 64, "n_positions": 64,
    "image_size": 64, "num_local_experts": 4, "num_experts": 4,
}
_HF_HEADS = {
    "base": "MODEL_MAPPING_NAMES",
    "causal-lm": "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
    "masked-lm": "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
    "seq-cls": "MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES",
    "seq2seq-lm": "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
    "image-cls": "MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES",
    "audio-cls": "MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES",
}


class Transformers(Suite):
    """transformers: every architecture the Auto mappings name, its base model and each head
    class it has (causal LM, masked LM, sequence classification, encoder-decoder LM, image
    and audio classification), from its config at tiny sizes."""
    package = "transformers"

    def names(self):
        from transformers.models.auto import modeling_auto
        names = []
        for head, mapping in _HF_HEADS.items():
            for model_type in getattr(modeling_auto, mapping, {}):
                names.append(f"{model_type}:{head}")
        return sorted(names)

    @staticmethod
    def config(model_type):
        from transformers import AutoConfig
        base = AutoConfig.for_model(model_type)
        accepted = set(inspect.signature(type(base).__init__).parameters)

        def shrink(defaults, accepts):
            out = {}
            for key, value in _HF_SIZES.items():
                if key in accepts and key in defaults:
                    old = defaults[key]
                    if isinstance(old, int) and not isinstance(old, bool) and old > value:
                        out[key] = value
            # Backbone stages named by the default depth (stage12) fall back to the last one.
            for key in ("out_features", "out_indices"):
                if isinstance(defaults.get(key), (list, tuple)):
                    out[key] = None
            # A head size the library leaves unset though its attention reads it
            if "head_dim" in defaults and defaults["head_dim"] is None:
                heads = out.get("num_attention_heads", defaults.get("num_attention_heads"))
                hidden = out.get("hidden_size", defaults.get("hidden_size"))
                if isinstance(heads, int) and isinstance(hidden, int) and heads:
                    out["head_dim"] = hidden // heads
            for key in ("depths", "hidden_sizes", "num_heads", "embed_dims"):
                old = defaults.get(key)
                if isinstance(old, (list, tuple)) and old and key in accepts:
                    out[key] = {"depths": [1] * len(old), "num_heads": [2] * len(old),
                                "hidden_sizes": [16 * (i + 1) for i in range(len(old))],
                                "embed_dims": [16 * (i + 1) for i in range(len(old))]}[key]
            return out

        def fit(defaults, out):
            # Lists with one entry per layer shrink with the layers (layer_types); the experts
            # each token picks fit the experts there are.
            layers = next((defaults[k] for k in ("num_hidden_layers", "num_layers", "n_layer")
                           if isinstance(defaults.get(k), int)), None)
            kept = next((out[k] for k in ("num_hidden_layers", "num_layers", "n_layer")
                         if k in out), None)
            for key, value in defaults.items():
                if (layers and kept and isinstance(value, list) and len(value) == layers
                        and key.endswith(("layer_types", "layers_block_type", "block_types"))):
                    out[key] = value[:kept]
            counts = [v for k, v in {**defaults, **out}.items()
                      if k in ("num_local_experts", "num_experts", "n_routed_experts")
                      and isinstance(v, int) and v > 0]
            experts = min(counts) if counts else None
            for key in ("num_experts_per_tok", "num_experts_per_token", "moe_topk", "top_k"):
                if experts and isinstance(defaults.get(key), int) and defaults[key] > experts:
                    out[key] = min(2, experts)
            return out

        overrides = fit(base.to_dict(), shrink(base.to_dict(), accepted))
        text = base.get_text_config()
        for key, value in base.to_dict().items():
            if key.endswith("_config") and isinstance(value, dict) and key in accepted:
                sub = getattr(base, key)
                sub_accepts = set(inspect.signature(type(sub).__init__).parameters)
                overrides[key] = {**value, **fit(value, shrink(value, sub_accepts))}
        # A size another part must match (a vision tower's output width is the text model's
        # hidden size) follows the text model's new hidden size.
        new_text = next((overrides[k] for k in overrides if isinstance(overrides[k], dict)
                         and getattr(base, k, None) is text), overrides)
        old_hidden, new_hidden = getattr(text, "hidden_size", None), new_text.get("hidden_size")
        for part in [overrides] + [v for v in overrides.values() if isinstance(v, dict)]:
            for key, value in list(part.items()):
                if (key.endswith("hidden_size") and key != "hidden_size" and new_hidden
                        and value == old_hidden):
                    part[key] = new_hidden
        try:
            config = type(base)(**overrides)
        except Exception:  # noqa: BLE001  a config that validates its head counts together
            for part in [overrides] + [v for v in overrides.values() if isinstance(v, dict)]:
                if "num_key_value_heads" in part and "num_attention_heads" in part:
                    part["num_key_value_heads"] = part["num_attention_heads"]
                if part.get("head_dim") and part.get("hidden_size") and part.get("num_attention_heads"):
                    part["head_dim"] = part["hidden_size"] // part["num_attention_heads"]
            config = type(base)(**overrides)
        # Decoders run without their KV cache (a cache is the generation issue's, #58), and
        # the text model inside a multimodal one too
        for part in (config, config.get_text_config()):
            if hasattr(part, "use_cache"):
                part.use_cache = False
        for part in (config, config.get_text_config()):
            for key in ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id"):
                if isinstance(getattr(part, key, None), int) and getattr(part, key) >= VOCAB:
                    setattr(part, key, 1)
        if getattr(config, "pad_token_id", 0) is None:  # sequence classification needs one
            config.pad_token_id = 0
        return config

    def build(self, name):
        import numpy as np
        import torch
        from transformers.models.auto import modeling_auto
        import transformers
        model_type, head = name.split(":")
        try:
            config = self.config(model_type)
            class_name = getattr(modeling_auto, _HF_HEADS[head])[model_type]
            if isinstance(class_name, (list, tuple)):
                class_name = class_name[0]
            cls = getattr(transformers, class_name)
            torch.manual_seed(0)
            model = cls(config).eval()
        except Exception as e:  # noqa: BLE001
            raise Skip(f"the library cannot build it: {type(e).__name__}: {e}") from None
        randomize_constant_weights(model, "torch")
        rng = np.random.default_rng(0)
        kind = model.main_input_name
        vocab = getattr(config.get_text_config(), "vocab_size", VOCAB) or VOCAB
        if kind == "input_ids":
            kwargs = {"input_ids": torch.from_numpy(rng.integers(2, min(vocab, VOCAB), (BATCH, LENGTH)))}
            if model.config.is_encoder_decoder:
                kwargs["decoder_input_ids"] = kwargs["input_ids"][:, :8].clone()
        elif kind == "pixel_values":
            vision = getattr(config, "vision_config", config)
            size = getattr(vision, "image_size", 64)
            height, width = size if isinstance(size, (list, tuple)) else (size, size)
            kwargs = {"pixel_values": _images(getattr(vision, "num_channels", 3), height)}
            if width != height:
                kwargs["pixel_values"] = kwargs["pixel_values"][..., :1].expand(
                    -1, -1, -1, width).contiguous()
        elif kind == "input_values":  # a waveform: [batch, samples], or with its channel
            wave = torch.from_numpy(rng.standard_normal((BATCH, 4000)).astype(np.float32))
            kwargs = {"input_values": wave}
            try:
                with torch.no_grad():
                    model(**kwargs)
            except Exception:  # noqa: BLE001
                kwargs = {"input_values": wave[:, None]}
        elif kind == "past_values":  # a time series
            kwargs = {"past_values": torch.from_numpy(
                rng.standard_normal((BATCH, 64)).astype(np.float32))}
        elif kind == "input_features":
            bins = getattr(config, "num_mel_bins", 80)
            # An encoder that takes a fixed number of frames (two per source position)
            frames = 2 * getattr(config, "max_source_positions", 32)
            kwargs = {"input_features": torch.from_numpy(
                rng.standard_normal((BATCH, bins, frames)).astype(np.float32))}
            if model.config.is_encoder_decoder:
                kwargs["decoder_input_ids"] = torch.ones(BATCH, 4, dtype=torch.int64)
        else:
            raise Skip(f"inputs of kind {kind!r} are not generated by the suite")
        return "torch", model, (), kwargs


class TransformersGenerate(Suite):
    """transformers' causal language models generating with a KV cache, as users export them:
    the library's static-cache wrapper (TorchExportableModuleWithStaticCache) traced as a
    prefill of up to CACHE tokens and a one-token decode, compiled into one artifact; every
    step's logits against the same wrapper run eagerly on the same tokens, and sotc's greedy
    `generate` against the eager steps' tokens. Models the wrapper cannot build (no static
    cache, encoder-decoders, recurrent state) are skipped by the library."""
    package = "transformers"
    CACHE, NEW = 32, 8
    PROMPT = [5, 17, 3, 9, 21, 4, 11]

    def names(self):
        from transformers.models.auto import modeling_auto
        return sorted(modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)

    def build(self, name):
        import torch
        import transformers
        from transformers.models.auto import modeling_auto
        from transformers.integrations.executorch import TorchExportableModuleWithStaticCache
        try:
            config = Transformers.config(name)
            for part in (config, config.get_text_config()):
                if hasattr(part, "use_cache"):
                    part.use_cache = True
            class_name = modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[name]
            cls = getattr(transformers, class_name[0] if isinstance(class_name, (list, tuple))
                          else class_name)
            torch.manual_seed(0)
            model = cls(config).eval()
        except Exception as e:  # noqa: BLE001
            raise Skip(f"the library cannot build it: {type(e).__name__}: {e}") from None
        if config.is_encoder_decoder or not model.can_generate():
            raise Skip("not a decoder that generates alone")
        randomize_constant_weights(model, "torch")
        model.generation_config.cache_implementation = "static"
        try:
            wrappers = [TorchExportableModuleWithStaticCache(model, 1, self.CACHE).eval()
                        for _ in range(2)]  # one to trace, one to run eagerly
        except Exception as e:  # noqa: BLE001
            raise Skip(f"the library's static-cache wrapper refuses it: {type(e).__name__}: "
                       f"{e}") from None
        return "torch", model, wrappers, {}

    def run(self, name, workdir):
        import numpy as np
        import torch
        import sotc
        _, model, (traced, eager), _ = self.build(name)
        vocab = getattr(model.config.get_text_config(), "vocab_size", VOCAB) or VOCAB
        prompt = torch.tensor([[t % vocab for t in self.PROMPT]])
        # The eager steps first: the tokens sotc must reproduce, or a library that cannot run
        want, ids, position = [], prompt, torch.arange(prompt.shape[1])
        try:
            with torch.no_grad():
                for _ in range(self.NEW):
                    logits = eager(input_ids=ids, cache_position=position)
                    want.append((ids, position, logits.numpy()))
                    ids = logits[:, -1:].argmax(-1)
                    position = position[-1:] + 1
        except Exception as e:  # noqa: BLE001
            raise Skip(f"the library's eager run fails: {type(e).__name__}: {e}") from None
        traces = []
        for i, (spec, position_spec) in enumerate(
                [(f"int64[1,?<={self.CACHE}]", f"int64[?<={self.CACHE}]"), ("int64[1,1]", "int64[1]")]):
            traced_or_outcome = trace_model(traced, spec, cache_position=position_spec)
            if isinstance(traced_or_outcome, dict):
                return traced_or_outcome
            traces.append(traced_or_outcome.save(os.path.join(workdir, f"entry{i}.pb")))
        library = os.path.join(workdir, "model.so")
        failed = compile_traces(traces, library)
        if failed:
            return failed
        try:
            f = sotc.load(library)
            for step, (ids, position, logits) in enumerate(want):
                diff = compare(f(ids, cache_position=position), logits)
                if diff:
                    return {"outcome": "wrong", "cause": f"step {step}: {diff}"}
            tokens = np.asarray(f.generate(prompt, max_new_tokens=self.NEW))[0].tolist()
        except Exception as e:  # noqa: BLE001
            return {"outcome": "broken", "cause": "run: " + cause(str(e))}
        eager_tokens = prompt[0].tolist() + [int(w[2][0, -1].argmax()) for w in want]
        if tokens != eager_tokens:
            return {"outcome": "wrong", "cause": f"generate gives {tokens[prompt.shape[1]:]}, "
                                                 f"the eager steps {eager_tokens[prompt.shape[1]:]}"}
        return {"outcome": "ok"}


class PaddleLayers(Suite):
    """paddle.vision's model builders and paddle.nn's composite layers (Transformer and its
    encoder and decoder, LSTM, GRU, SimpleRNN, MultiHeadAttention)."""
    package = "paddlepaddle"
    COMPOSITES = {"Transformer", "TransformerEncoder", "TransformerDecoder", "LSTM", "GRU",
                  "SimpleRNN", "MultiHeadAttention", "TransformerEncoderLayer",
                  "TransformerDecoderLayer"}

    def names(self):
        import paddle
        import paddle.vision.models as models
        names = [f"vision:{n}" for n in models.__all__ if inspect.isfunction(getattr(models, n))]
        names += [f"nn:{n}" for n in dir(paddle.nn) if n in self.COMPOSITES]
        return sorted(names)

    def build(self, name):
        import numpy as np
        import paddle
        kind, builder = name.split(":")
        paddle.seed(0)
        rng = np.random.default_rng(0)
        seq = paddle.to_tensor(rng.standard_normal((BATCH, 8, 32)).astype(np.float32))
        if kind == "vision":
            import paddle.vision.models as models
            model = getattr(models, builder)()
            model.eval()
            return "paddle", model, (_images(3, 224, "paddle"),), {}
        nn = paddle.nn
        if builder in ("LSTM", "GRU", "SimpleRNN"):
            model = getattr(nn, builder)(32, 32, num_layers=2)
            args = (seq,)
        elif builder == "MultiHeadAttention":
            model, args = nn.MultiHeadAttention(32, 4), (seq, seq, seq)
        elif builder == "Transformer":
            model = nn.Transformer(32, 4, 2, 2, 64, dropout=0.0)
            args = (seq, seq[:, :4])
        elif builder.startswith("TransformerEncoder"):
            layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0)
            model, args = (layer if builder.endswith("Layer") else nn.TransformerEncoder(layer, 2)), (seq,)
        else:
            layer = nn.TransformerDecoderLayer(32, 4, 64, dropout=0.0)
            model = layer if builder.endswith("Layer") else nn.TransformerDecoder(layer, 2)
            args = (seq[:, :4], seq)
        model.eval()
        randomize_constant_weights(model, "paddle")
        return "paddle", model, args, {}


class Diffusers(Suite):
    """diffusers: every model class its `models` package exports, built from its
    constructor's defaults scaled down (block widths and layers), on a small latent."""
    package = "diffusers"

    def names(self):
        import diffusers
        import torch
        out = []
        for n in dir(diffusers):
            obj = getattr(diffusers, n, None)
            if inspect.isclass(obj) and issubclass(obj, torch.nn.Module) and n.endswith(
                    ("Model", "Model2D", "Model3D", "ConditionModel", "Net")):
                out.append(n)
        return sorted(out)

    # Constructor parameters the suite shrinks, by how diffusers names them: counts of layers
    # and heads, and widths (a tuple of block widths shrinks element by element).
    LAYERS = ("num_layers", "num_single_layers", "layers_per_block", "num_refiner_layers",
              "num_blocks", "depth", "num_decoder_layers", "num_encoder_layers")
    WIDTHS = {"block_out_channels": 32, "attention_head_dim": 8, "cross_attention_dim": 32,
              "joint_attention_dim": 32, "pooled_projection_dim": 32, "caption_channels": 32,
              "text_embed_dim": 32, "encoder_hid_dim": 32, "hidden_size": 32, "text_dim": 32,
              "ffn_dim": 64, "freq_dim": 32, "inner_dim": 32, "norm_num_groups": 8,
              "num_attention_heads": 2, "attention_heads": 2, "num_heads": 2,
              "num_key_value_heads": 2, "num_kv_heads": 2, "sample_size": 16, "timestep_embed_dim": 32,
              "caption_projection_dim": 16, "cap_feat_dim": 32, "cross_attention_input_dim": 32}  # = heads x head size, where blocks add it
    # Where the model's config says how wide the text it attends to is.
    TEXT_WIDTH = ("cross_attention_input_dim", "cap_feat_dim", "cross_attention_dim",
                  "joint_attention_dim", "text_embed_dim", "caption_channels", "encoder_hid_dim",
                  "text_dim", "context_dim")

    @staticmethod
    def split_rotary_axes(params, small):
        """Rotary axes that split the head (Flux's (16, 56, 56) of 128) split the smaller head
        of `small`: two lanes each, the rest to the last axis."""
        def default(key):
            d = params[key].default if key in params else None
            return d if isinstance(d, int) and not isinstance(d, bool) else None
        old, new = default("attention_head_dim"), small.get("attention_head_dim")
        if old is None and default("hidden_size") and default("num_attention_heads"):
            old = default("hidden_size") // default("num_attention_heads")
            new = (small.get("hidden_size", default("hidden_size"))
                   // small.get("num_attention_heads", default("num_attention_heads")))
        if old and new and new != old:
            for key, p in params.items():
                d = p.default
                if (isinstance(d, (tuple, list)) and d and all(isinstance(v, int) for v in d)
                        and sum(d) == old and ("rope" in key or "axes" in key)
                        and new >= 2 * len(d)):
                    small[key] = type(d)([2] * (len(d) - 1) + [new - 2 * (len(d) - 1)])

    # Parameters a model needs though their default is None (a transformer that patches
    # latents of a size it is told): the suite's latents are 16 channels, in patches of 2.
    NEEDED = {"in_channels": 16, "patch_size": 2}

    def needed(self, params):
        """Values for what the constructor needs but leaves unset: the table's, and widths it
        requires (a projection's text_encoder_dim) at the suite's text width."""
        out = {k: v for k, v in self.NEEDED.items() if k in params and params[k].default is None}
        for k, p in params.items():
            if p.default is inspect.Parameter.empty and k != "self" and p.kind not in (
                    inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD) and (
                    k.endswith(("_dim", "_size", "_channels"))):
                out[k] = 32
        return out

    def small_config(self, cls, layers_only):
        params = inspect.signature(cls.__init__).parameters
        small = self.needed(params)
        for key, p in params.items():
            d = p.default
            if key in self.LAYERS and isinstance(d, int) and not isinstance(d, bool) and d > 1:
                small[key] = 1
            elif key == "transformer_layers_per_block" and isinstance(d, int) and d > 1:
                small[key] = 1
            elif layers_only:
                continue
            elif key in self.WIDTHS and isinstance(d, (tuple, list)) and d and all(
                    isinstance(v, int) for v in d):
                small[key] = type(d)(min(v, self.WIDTHS[key]) for v in d)
            elif key in self.WIDTHS and isinstance(d, int) and not isinstance(d, bool):
                small[key] = min(d, self.WIDTHS[key])
        self.split_rotary_axes(params, small)
        return small

    # Integer parameters that are not widths though they end like one.
    NOT_WIDTHS = ("patch_size", "patch_size_t", "sample_size", "vocab_size", "kernel_size",
                  "num_embeds_ada_norm", "max_position_embeddings")

    def scaled_config(self, cls):
        """Every width divided by one power of two (so that heads x head size, and ratios
        between widths, still hold) and every count of layers or blocks at one: for models
        whose widths are named otherwise than the suite's table knows (model_dim, ff_dim,
        approximator_hidden_dim, ...)."""
        params = inspect.signature(cls.__init__).parameters
        def whole(d):
            return isinstance(d, int) and not isinstance(d, bool)
        def layers(key):
            return key in self.LAYERS or (key.startswith(("num_", "n_")) and key.endswith(
                ("_layers", "_blocks"))) or key == "transformer_layers_per_block"
        def width(key, d):
            if key in self.NOT_WIDTHS or key.startswith(("num_", "max_")) or "ratio" in key:
                return False
            tuple_of_ints = isinstance(d, (tuple, list)) and d and all(whole(v) for v in d)
            return ((whole(d) and key.endswith(("_dim", "_size", "_features")) or "hidden" in key)
                    or (tuple_of_ints and key.endswith("channels")))
        widths = [max(d) if isinstance(d, (tuple, list)) else d
                  for key, p in params.items() if width(key, d := p.default)]
        factor = 1
        while widths and max(widths) // factor > 256:
            factor *= 2
        small = self.needed(params)
        rotary = any(("rope" in k or "axes" in k) and isinstance(p.default, (tuple, list))
                     for k, p in params.items())
        for key, p in params.items():
            d = p.default
            if layers(key) and whole(d) and d > 1:
                small[key] = 1
            elif factor > 1 and width(key, d):
                values = list(d) if isinstance(d, (tuple, list)) else [d]
                # a head that rotary axes split keeps 16 lanes: two each at least
                f = (max(1, min(factor, d // 16)) if "head_dim" in key and whole(d) and rotary
                     else factor)
                if all(v % f == 0 and v // f >= 2 for v in values):
                    scaled = [v // f for v in values]
                    small[key] = type(d)(scaled) if isinstance(d, (tuple, list)) else scaled[0]
        self.split_rotary_axes(params, small)
        return small

    def inputs(self, model):
        """Candidate inputs from the forward's signature and the config: the latent as an
        image, a video or tokens, the timestep, the text it attends to."""
        import torch
        config = model.config
        forward = inspect.signature(model.forward).parameters
        names = [n for n in forward if n != "self"]
        if not names:
            raise Skip("the model's forward takes no inputs")
        gen = torch.Generator().manual_seed(0)
        channels = getattr(config, "in_channels", None) or 4
        latents = [torch.randn(1, channels, 16, 16, generator=gen),
                   torch.randn(1, channels, 2, 16, 16, generator=gen),
                   torch.randn(1, 64, channels, generator=gen),  # 8x8 patches as tokens
                   torch.randn(1, 2, channels, 16, 16, generator=gen),  # frames, then channels
                   torch.randn(1, channels, 64, generator=gen)]  # a 1-d signal, channels first
        # The widths of text the config names, the first tried first (cross_attention_dim is
        # the text's width in a UNet, the attention's in Sana, whose text is caption_channels)
        widths = list(dict.fromkeys(getattr(config, k) for k in self.TEXT_WIDTH
                                    if isinstance(getattr(config, k, None), int))) or [32]
        width = widths[0]
        # Text the size the model embeds positions for, where it fixes one
        words = next((getattr(config, k) for k in ("max_text_seq_length",)
                      if isinstance(getattr(config, k, None), int)), 4)
        # Position ids have one column per rotary axis (3, or Flux 2's 4)
        rope = getattr(config, "axes_dims_rope", None)
        axes = len(rope) if isinstance(rope, (tuple, list)) and len(rope) >= 3 else 3
        extra, images, sizes = {}, {}, []
        for n, p in forward.items():
            if n == names[0] or n in ("self", "return_dict"):
                continue
            required = p.default is inspect.Parameter.empty
            if n in ("timestep", "timesteps", "t") or (required and ("timestep" in n or n == "fps")):
                # a diffusion step, a ratio of steps, frames per second
                extra[n] = torch.tensor([0.5]) if "ratio" in n else torch.tensor([10])
            elif n == "guidance" and getattr(config, "guidance_embeds", False):  # a guidance scale
                extra[n] = torch.tensor([3.5])
            elif n == "class_labels" and (getattr(config, "num_embeds_ada_norm", None)
                                          or getattr(config, "num_class_embeds", None)):
                extra[n] = torch.tensor([1])
            elif n in ("num_frames", "height", "width") and not required:
                sizes.append(n)  # of the latent, per candidate below
            elif n == "controlnet_cond":  # an image at the resolution its encoder downsamples
                steps = len(getattr(config, "conditioning_embedding_out_channels", None) or (1,))
                images[n] = (getattr(config, "conditioning_channels", None), 2 ** (steps - 1))
            elif n in ("original_size", "target_size", "crop_coords") and required:  # SDXL-style micro-
                extra[n] = torch.tensor([[16.0, 16.0]] if n != "crop_coords" else [[0.0, 0.0]])
            elif n == "added_time_ids" and required:  # conditioning: (fps, motion, noise) as numbers
                per = getattr(config, "addition_time_embed_dim", None)
                total = getattr(config, "projection_class_embeddings_input_dim", None)
                extra[n] = torch.tensor([[6.0, 127.0, 0.02][:total // per] if per and total
                                        else [6.0, 127.0, 0.02]])
            elif n == "encoder_hidden_states":
                extra[n] = torch.randn(1, words, width, generator=gen)
            elif n == "pooled_projections" and getattr(config, "pooled_projection_dim", None):
                extra[n] = torch.randn(1, config.pooled_projection_dim, generator=gen)
            elif n == "encoder_attention_mask":
                extra[n] = torch.ones(1, words, dtype=torch.int64)
            elif n == "txt_ids":  # rotary positions of the text and the latent's 2x2 patches
                extra[n] = torch.zeros(words, axes)
            elif n == "img_shapes":  # (frames, rows, columns) of patches: 8x8 of the latent
                extra[n] = [(1, 8, 8)]
            elif n == "img_ids":  # (0, row, column), and zeros on any further axis
                grid = torch.stack(torch.meshgrid(
                    torch.zeros(1), torch.arange(8.0), torch.arange(8.0), indexing="ij"),
                    -1).reshape(-1, 3)
                extra[n] = torch.cat([grid, torch.zeros(64, axes - 3)], -1) if axes > 3 else grid
            elif p.default is inspect.Parameter.empty and p.kind not in (
                    inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise Skip(f"inputs of kind {n!r} are not generated by the suite")
        def with_images(x):
            kwargs = dict(extra)
            # Frames, rows and columns of latent tokens a model is told (8x8 of one frame)
            grid = ({"num_frames": 1, "height": 8, "width": 8} if x.dim() == 3 else
                    {"num_frames": x.shape[2] if x.dim() == 5 else 1,
                     "height": x.shape[-2], "width": x.shape[-1]})
            kwargs.update({n: grid[n] for n in sizes})
            for n, (channels, scale) in images.items():
                # (without a conditioning encoder of its own: a latent like the sample)
                kwargs[n] = (torch.randn(x.shape, generator=gen) if x.dim() == 3 else
                             torch.randn(x.shape[0], channels or x.shape[1],
                                         *(d * scale for d in x.shape[-2:]), generator=gen))
            return kwargs
        def float_steps(kwargs):  # the step as a float, as schedulers hand it on
            return {k: (v.float() if k in steps and not v.is_floating_point() else v)
                    for k, v in kwargs.items()}
        steps = [n for n in extra if "timestep" in n or n == "t"]
        def text_of(kwargs, w):
            return {k: (torch.randn(1, words, w, generator=gen) if k == "encoder_hidden_states"
                        else v) for k, v in kwargs.items()}
        candidates = [((x,), with_images(x)) for x in latents]
        if steps:
            candidates += [(args, float_steps(kwargs)) for args, kwargs in candidates]
        if "encoder_hidden_states" in extra:
            candidates += [(args, text_of(kwargs, w)) for w in widths[1:]
                           for args, kwargs in candidates]
        return candidates

    def build(self, name):
        import diffusers
        import torch
        cls = getattr(diffusers, name)
        # The widths the table names, then only the layers, then every width scaled alike: the
        # first that builds small and runs eagerly on one of the suite's inputs. The skip
        # names the furthest any got (ran > built > too large > not built).
        why = (0, "")
        for config in (lambda: self.small_config(cls, False), lambda: self.small_config(cls, True),
                       lambda: self.scaled_config(cls)):
            try:
                kwargs = config()
                try:  # counted without memory first: a default config may be billions
                    with torch.device("meta"):
                        large = sum(p.numel() for p in cls(**kwargs).parameters()) > 50_000_000
                except Exception:  # noqa: BLE001 (built for real below, or the error is its)
                    large = False
                if not large:
                    torch.manual_seed(0)
                    model = cls(**kwargs).eval()
            except Exception as e:  # noqa: BLE001
                why = max(why, (1, f"the library cannot build it: {type(e).__name__}: {e}"))
                continue
            if large or sum(p.numel() for p in model.parameters()) > 50_000_000:
                why = max(why, (2, "the library cannot build it small: over 50M parameters at "
                                   "the suite's sizes"))
                continue
            randomize_constant_weights(model, "torch")
            failures = []
            try:
                candidates = self.inputs(model)
            except Skip as e:
                why = max(why, (3, str(e)))
                continue
            for args, kwargs in candidates:
                try:
                    with torch.no_grad():
                        model(*args, **kwargs)
                    return "torch", model, args, kwargs
                except Exception as e:  # noqa: BLE001
                    failures.append(f"{args[0].dim()}-d latent: {type(e).__name__}: {e}"[:90])
            why = max(why, (4, "the library's eager run fails: " + "; ".join(failures)))
        raise Skip(why[1])


class Ultralytics(Suite):
    """ultralytics: every model yaml it ships for detect, segment, classify and pose, at its
    smallest scale, built by the library from the yaml."""
    package = "ultralytics"

    def names(self):
        import ultralytics
        root = os.path.join(os.path.dirname(ultralytics.__file__), "cfg", "models")
        out = []
        for folder, _, files in os.walk(root):
            for f in files:
                if f.endswith(".yaml"):
                    out.append(os.path.relpath(os.path.join(folder, f), root))
        return sorted(out)

    def build(self, name):
        import torch
        import ultralytics
        from ultralytics.nn.tasks import guess_model_task, yaml_model_load
        root = os.path.join(os.path.dirname(ultralytics.__file__), "cfg", "models")
        cfg = yaml_model_load(os.path.join(root, name))
        if "scales" in cfg:
            cfg["scale"] = sorted(cfg["scales"])[-1] if "n" not in cfg["scales"] else "n"
        task = guess_model_task(cfg)
        from ultralytics.nn import tasks
        stem = os.path.basename(name)
        # The families with model classes of their own, then the tasks' (as the library's
        # YOLO/RTDETR front ends pick them)
        cls = (tasks.RTDETRDetectionModel if "rtdetr" in stem
               else tasks.WorldModel if "world" in stem
               else (tasks.YOLOESegModel if "seg" in stem else tasks.YOLOEModel) if "yoloe" in stem
               else {"detect": tasks.DetectionModel, "segment": tasks.SegmentationModel,
                     "classify": tasks.ClassificationModel, "pose": tasks.PoseModel,
                     "obb": tasks.OBBModel,
                     "semseg": getattr(tasks, "SemanticSegmentationModel", None),
                     "depth": getattr(tasks, "DepthModel", None)}.get(task))
        if cls is None:
            raise Skip(f"task {task} has no model class in the suite")
        try:
            torch.manual_seed(0)
            model = cls(cfg, verbose=False).eval()
        except Exception as e:  # noqa: BLE001
            raise Skip(f"the library cannot build it: {type(e).__name__}: {e}") from None
        randomize_constant_weights(model, "torch")
        return "torch", model, (_images(3, 64),), {}


@functools.lru_cache(maxsize=None)
def _with_nms():
    """The layer that runs an ultralytics model and then the library's own
    non_max_suppression, as its predictors do (nc for segment and pose, whose extra channels
    follow the classes; rotated boxes for obb). Made on first use: the suite's parent process
    imports no framework."""
    import torch

    class WithNms(torch.nn.Module):
        def __init__(self, model, nc, rotated):
            super().__init__()
            self.model, self.nc, self.rotated = model, nc, rotated

        def forward(self, images):
            from ultralytics.utils.nms import non_max_suppression
            preds = self.model(images)
            if isinstance(preds[0], tuple):  # segment: (detections, protos) first, as its
                preds = preds[0]             # predictor takes them
            return non_max_suppression(preds, conf_thres=0.25, iou_thres=0.7, nc=self.nc,
                                       rotated=self.rotated)
    return WithNms


class UltralyticsNms(Ultralytics):
    """ultralytics: every detect, segment, pose and obb yaml, the model and the library's
    non_max_suppression together (torchvision's nms imported, as the library imports it).
    The model runs once before tracing (the suite's eager run), which fills its head's anchor
    cache as the library's exporter's dry run does."""

    def names(self):
        from ultralytics.nn.tasks import guess_model_task, yaml_model_load
        root = os.path.join(os.path.dirname(__import__("ultralytics").__file__), "cfg", "models")
        return [n for n in super().names() if guess_model_task(yaml_model_load(
            os.path.join(root, n))) in ("detect", "segment", "pose", "obb")]

    def build(self, name):
        import torchvision  # noqa: F401  (non_max_suppression takes its nms once imported)
        from ultralytics.nn.tasks import guess_model_task
        framework, model, args, kwargs = super().build(name)
        task = guess_model_task(model)
        nc = len(model.names) if task in ("segment", "pose") else 0
        return framework, _with_nms()(model, nc, task == "obb").eval(), args, kwargs


class TorchAudio(Suite):
    """torchaudio: every model builder function of torchaudio.models."""
    package = "torchaudio"

    def names(self):
        import torchaudio.models as models
        return sorted(n for n in dir(models) if inspect.isfunction(getattr(models, n))
                      and not n.startswith("_"))

    def build(self, name):
        import torch
        import torchaudio.models as models
        builder = getattr(models, name)
        # What a builder requires by name: a source separator the stems it separates into.
        needed = {"sources": ["drums", "bass", "other", "vocals"]}
        kwargs = {k: needed[k] for k, p in inspect.signature(builder).parameters.items()
                  if p.default is inspect.Parameter.empty and k in needed}
        def built(device=None):
            with torch.device(device) if device else contextlib.nullcontext():
                return builder(**kwargs)
        try:
            try:  # counted without memory: the 2B-parameter XLS-R
                large = sum(p.numel() for p in built("meta").parameters()) > 150_000_000
            except NotImplementedError:  # a builder that copies data (HuBERT's pretraining head)
                large = False
            if not large:
                torch.manual_seed(0)
                model = built().eval()
                large = sum(p.numel() for p in model.parameters()) > 150_000_000
        except Exception as e:  # noqa: BLE001
            raise Skip(f"the library cannot build it: {type(e).__name__}: {e}") from None
        if large:
            raise Skip("the library cannot build it small: over 150M parameters")
        randomize_constant_weights(model, "torch")
        # A quarter second of 16 kHz audio: as a batch of waveforms, of mono or stereo channels.
        gen = torch.Generator().manual_seed(0)
        failures = []
        for shape in ((1, 4000), (1, 1, 4000), (1, 2, 4000)):
            x = torch.randn(*shape, generator=gen)
            try:
                with torch.no_grad():
                    model(x)
                return "torch", model, (x,), {}
            except Exception as e:  # noqa: BLE001
                failures.append(f"{list(shape)}: {type(e).__name__}: {e}"[:90])
        raise Skip("the library's eager run fails: " + "; ".join(failures))


SUITES = {"timm": Timm, "transformers": Transformers,
          "transformers-generate": TransformersGenerate, "torchvision": TorchVision,
          "paddle": PaddleLayers, "diffusers": Diffusers, "ultralytics": Ultralytics,
          "ultralytics-nms": UltralyticsNms,
          "torchaudio": TorchAudio}


# -- one model ----------------------------------------------------------------------------


_CODE = re.compile(r"\b(E\d{4})\b")


def coded(cause_text):
    """Whether a refusal names its construct with a stable code (sotc's, or the tracer's)."""
    return bool(_CODE.search(cause_text)) or cause_text.startswith("tracer: ")


def cause(message):
    """What groups failures: the first coded line, without file:line and numbers in shapes."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    coded = [line for line in lines if _CODE.search(line)]
    line = (coded or lines or ["(no message)"])[0]
    line = re.sub(r"^.*?\b(E\d{4})", r"\1", line)
    line = re.sub(r"(E\d{4}: )\S+\.pb: ", r"\1", line)  # the worker's trace path
    line = re.sub(r" \(?[^ ()]*\.py:\d+\)?", "", line)
    line = re.sub(r"\bvar_\d+\b", "var", line)
    line = re.sub(r"\b(t_[a-z_]+?)_\d+\b", r"\1_N", line)  # kernels' tensor names
    return line[:200]


def trace_model(model, *args, **kwargs):
    """sotc.trace's Trace, or the outcome of a tracer that refuses or breaks."""
    import sotc
    try:
        return sotc.trace(model, *args, **kwargs)
    except sotc.TraceError as e:
        return {"outcome": "refused", "cause": "tracer: " + cause(str(e))}
    except Exception as e:  # noqa: BLE001
        tb = traceback.extract_tb(e.__traceback__)[-1]
        return {"outcome": "broken",
                "cause": f"tracer raised {type(e).__name__}: {e} ({os.path.basename(tb.filename)}:{tb.lineno})"[:200]}


def compile_traces(traces, library):
    """None once `sotc compile` has written the CPU library, else its outcome."""
    result = subprocess.run([SOTC, "compile", *map(str, traces), "--target", "cpu", "-o", library],
                            capture_output=True, text=True)
    if result.returncode == 0:
        return None
    outcome = "refused" if _CODE.search(result.stderr) and result.returncode > 0 else "broken"
    return {"outcome": outcome, "cause": cause(result.stderr or f"exit {result.returncode}")}


def run_one(suite_name, name, workdir):
    import numpy as np  # noqa: F401
    suite = SUITES[suite_name]()
    if hasattr(suite, "run"):  # a suite that runs its models its own way
        try:
            return suite.run(name, workdir)
        except Skip as e:
            return {"outcome": "skipped", "cause": str(e)[:200]}
    try:
        framework, model, args, kwargs = suite.build(name)
    except Skip as e:
        return {"outcome": "skipped", "cause": str(e)[:200]}
    except Exception as e:  # noqa: BLE001
        return {"outcome": "skipped", "cause": f"the library cannot build it: {type(e).__name__}: {e}"[:200]}
    if framework == "torch":
        import torch
        grad = torch.no_grad()
    else:
        import paddle
        grad = paddle.no_grad()
    try:
        with grad:
            want = model(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        return {"outcome": "skipped", "cause": f"the library's eager run fails: {type(e).__name__}: {e}"[:200]}
    import sotc
    trace = trace_model(model, *args, **kwargs)
    if isinstance(trace, dict):
        return trace
    library = os.path.join(workdir, "model.so")
    failed = compile_traces([trace.save(os.path.join(workdir, "model.pb"))], library)
    if failed:
        return failed
    try:
        got = sotc.load(library)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        return {"outcome": "broken", "cause": "run: " + cause(str(e))}
    diff = compare(got, want)
    if diff is None:
        return {"outcome": "ok"}
    order = reordered(got, want)
    return {"outcome": "ok", "cause": order} if order else {"outcome": "wrong", "cause": diff}


# A worker's memory (its data segment and anonymous maps, not the address space the frameworks
# reserve): a model a library builds too large for the machine fails in its own process
# (MemoryError) instead of taking the machine down with it.
WORKER_MEMORY = 12 << 30


def worker(suite_name, name, workdir):
    import resource
    resource.setrlimit(resource.RLIMIT_DATA, (WORKER_MEMORY, WORKER_MEMORY))
    try:
        result = run_one(suite_name, name, workdir)
    except Exception as e:  # noqa: BLE001
        result = {"outcome": "broken", "cause": f"{type(e).__name__}: {e}"[:200]}
    print("SUITE-RESULT " + json.dumps(result), flush=True)


def run_isolated(suite_name, name, timeout):
    workdir = tempfile.mkdtemp(prefix="sotc-suite-")
    # A session of its own: a timeout ends the worker and what it started (sotc compile).
    worker = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", suite_name,
                               name, workdir], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        stdout, stderr = worker.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.communicate()
        return {"outcome": "broken", "cause": f"timed out after {timeout} s"}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    proc = subprocess.CompletedProcess(worker.args, worker.returncode, stdout, stderr)
    for line in proc.stdout.splitlines():
        if line.startswith("SUITE-RESULT "):
            return json.loads(line[len("SUITE-RESULT "):])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"outcome": "broken", "cause": f"the worker died (exit {proc.returncode}): {tail}"[:200]}


# -- the table ----------------------------------------------------------------------------


def version(package):
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def sample(names, n):
    """A fixed sample: the n names whose hashes are least (stable across runs and releases)."""
    return sorted(names, key=lambda s: hashlib.sha256(s.encode()).hexdigest())[:n]


def machine():
    with open("/proc/cpuinfo") as f:
        names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
    return f"{names[0] if names else platform.machine()}, {os.cpu_count()} cores"


def kept_from_doc():
    """The table rows and failure sections docs/model-suites.md has now, by suite: a suite
    with no results in build/suites keeps them (a machine that ran one suite, or --rerun)."""
    rows, sections = {}, {}
    if not os.path.exists(DOC):
        return rows, sections
    with open(DOC) as f:
        text = f.read()
    table, _, failures = text.partition("## Failures by cause")
    for line in table.splitlines():
        m = re.match(r"\| (\S+) \| ", line)
        if m and m.group(1) not in ("suite", "---"):
            rows[m.group(1)] = line
    for block in re.split(r"\n(?=### )", failures):
        m = re.match(r"### (\S+) \(", block)
        if m:
            # (less the newline the next section's join puts back)
            sections[m.group(1)] = "\n" + (block[:-1] if block.endswith("\n") else block)
    return rows, sections


def write_doc():
    """The table from build/suites: each suite's full run, or its sample where none ran; the
    doc's own rows for suites that have no results here."""
    rows, sections = kept_from_doc()
    files = sorted(os.listdir(RESULTS)) if os.path.isdir(RESULTS) else []
    for path in files:
        if not path.endswith(".json") or (path.endswith("-sample.json") and
                                          path.replace("-sample", "") in files):
            continue
        with open(os.path.join(RESULTS, path)) as f:
            data = json.load(f)
        results = data["results"]
        counts = {k: sum(r["outcome"] == k for r in results.values())
                  for k in ("ok", "refused", "wrong", "broken", "skipped")}
        counted = len(results) - counts["skipped"]
        rate = f"{100 * counts['ok'] / counted:.1f}%" if counted else "-"
        scope = "all" if not data.get("sample") else f"sample of {data['sample']}"
        rows[data["suite"]] = (
            f"| {data['suite']} | {data['package']} {data['version']} | {scope} | "
            f"{counted} | {counts['ok']} | {rate} | {counts['refused']} | "
            f"{counts['wrong']} | {counts['broken']} | {counts['skipped']} |")
        details = []
        groups = {}
        for name, r in results.items():
            if r["outcome"] != "ok" or r.get("cause"):  # an ok with a cause: rows reordered
                groups.setdefault((r["outcome"], r.get("cause", "")), []).append(name)
        details.append(f"\n### {data['suite']} ({data['package']} {data['version']}, sotc "
                       f"{data.get('commit', '?')}, {data['date']}, {data['machine']})\n")
        for commit, names in data.get("reruns", {}).items():  # in the order they were run again
            details.append(f"Run again at sotc {commit}, after the fixes they needed: "
                           f"{', '.join(sorted(names))}.\n")
        if not groups:
            details.append("Every model compiles and matches.\n")
        order = {"wrong": 0, "broken": 1, "refused": 2, "ok": 3, "skipped": 4}
        for (outcome, why), names in sorted(groups.items(),
                                            key=lambda kv: (order[kv[0][0]], -len(kv[1]))):
            shown = ", ".join(sorted(names)[:8]) + (" ..." if len(names) > 8 else "")
            why = " ".join(why.split())  # one line, however the library worded it
            details.append(f"- **{outcome}** ({len(names)}): {why} -- {shown}")
        sections[data["suite"]] = "\n".join(details)
    text = [
        "# Model suites: pass rates over whole libraries",
        "",
        "Written by `python bench/suites.py` (in the reference environment, whose",
        "tests/framework/requirements.txt pins the libraries): every model each library",
        "enumerates itself, built with random weights in eval mode, traced, compiled for the CPU,",
        "run through `sotc.load` and compared with the library's eager output (1e-4 of each",
        "output's scale). `ok` matches (listed below where it matches only up to the order of",
        "rows that tie in a topk, an order torch leaves unspecified); `refused` is a coded error",
        "naming the construct; `wrong` and `broken` are defects; `skipped` models are ones the",
        "library itself cannot build or run at the suite's sizes (or with the inputs the suite",
        "makes; not counted). Pass rate = ok / counted. A sample is the models whose names hash",
        "least (`--sample N`): the same",
        "models every run; a whole library takes hours on two cores. `transformers-generate`",
        "runs every causal LM as users export it for generation: transformers' static-cache",
        "wrapper traced as a prefill of up to 32 tokens and a one-token decode in one artifact,",
        "every step's logits against the wrapper run eagerly, then `generate`'s greedy tokens.",
        "",
        "| suite | library | models run | counted | ok | pass rate | refused | wrong | broken | skipped |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *(rows[k] for k in sorted(rows)),
        "",
        "## Failures by cause",
        *(sections[k] for k in sorted(sections)),
        "",
    ]
    with open(DOC, "w") as f:
        f.write("\n".join(text))


def check_releases():
    """1 when the package index has a newer release of a pinned library than is installed."""
    stale = 0
    for cls in dict.fromkeys(SUITES.values()):
        installed = version(cls.package)
        out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", cls.package],
                             capture_output=True, text=True).stdout
        newest = re.match(r"\S+ \(([^)]+)\)", out)
        newest = newest.group(1) if newest else "unknown"
        flag = "" if newest in ("unknown", installed) or installed is None else "  <- newer release"
        stale += bool(flag)
        print(f"{cls.package}: installed {installed or 'not installed'}, newest {newest}{flag}")
    return 1 if stale else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", nargs="*", default=None)
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--doc", action="store_true")
    parser.add_argument("--list")
    parser.add_argument("--check-releases", action="store_true")
    parser.add_argument("--worker", nargs=3)
    parser.add_argument("--rerun", action="store_true")
    a = parser.parse_args()
    if a.worker:
        worker(*a.worker)
        return 0
    if a.check_releases:
        return check_releases()
    if a.list:
        print("\n".join(SUITES[a.list]().names()))
        return 0
    if a.doc and a.suite is None:
        write_doc()
        return 0
    failed = 0
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    for suite_name in a.suite or SUITES:
        cls = SUITES[suite_name]
        package_version = version(cls.package)
        if package_version is None:
            print(f"{suite_name}: {cls.package} is not installed, skipped")
            continue
        names = cls().sampled(a.sample) if a.sample else cls().names()
        path = os.path.join(RESULTS, f"{suite_name}{'-sample' if a.sample else ''}.json")
        earlier = None
        if a.rerun:
            with open(path) as f:
                earlier = json.load(f)
            names = [n for n, r in earlier["results"].items()
                     if r["outcome"] not in ("ok", "skipped")]
        results = {}
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            futures = {pool.submit(run_isolated, suite_name, n, a.timeout): n for n in names}
            for future in concurrent.futures.as_completed(futures):
                name = futures[future]
                results[name] = future.result()
                r = results[name]
                print(f"{suite_name} {name}: {r['outcome']}"
                      + (f" ({r['cause']})" if r.get("cause") else ""), flush=True)
        if earlier:  # the models run again replace their results; the run keeps its commit
            earlier.setdefault("reruns", {})[commit] = sorted(results)
            results = {**earlier["results"], **results}
        failed += sum(r["outcome"] in ("wrong", "broken") for r in results.values())
        os.makedirs(RESULTS, exist_ok=True)
        data = earlier or {"suite": suite_name, "package": cls.package,
                           "version": package_version, "commit": commit, "sample": a.sample,
                           "date": datetime.date.today().isoformat(), "machine": machine()}
        data["results"] = dict(sorted(results.items()))
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
        counts = {k: sum(r["outcome"] == k for r in results.values())
                  for k in ("ok", "refused", "wrong", "broken", "skipped")}
        print(f"{suite_name}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    if not a.sample or a.doc:
        write_doc()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
