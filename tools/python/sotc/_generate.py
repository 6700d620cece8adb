"""Token-by-token generation on a compiled language model that keeps its KV cache as state
(docs/runtime.md#state): a model traced as `forward(tokens[1, T], positions[T]) -> logits`
(transformers' TorchExportableModuleWithStaticCache, ExecuTorch's and torchchat's signature),
compiled with a prefill entry (T dynamic) and, best, a one-token decode entry beside it.
Each generation runs on a sequence state of its own, so threads generate at once."""

import numpy as np

from ._runtime import SotcError


def _context_length(compiled):
    """The positions the cache holds (the runtime's reading of the manifest: its state
    weights written in place along a positions axis); else the largest number of tokens the
    prefill entry takes (its `<= N` guard)."""
    if compiled.cache_positions:
        return compiled.cache_positions
    bounds = [int(g["expected"][3:]) for e in compiled._manifest["entries"]
              for g in e["guards"] if g["kind"] == "batch" and g["expected"].startswith("<= ")]
    return max(bounds) if bounds else None


def _check_signature(compiled):
    entry = compiled._manifest["entries"][0]
    tensors = [p for p in entry["inputs"] if p["kind"] == "tensor"]
    if (not compiled.state or len(tensors) < 2 or tensors[0]["dtype"] != "int64"
            or len(tensors[0]["shape"]) != 2 or len(tensors[1]["shape"]) != 1):
        raise SotcError("E8004", "generate needs a model that keeps a KV cache as state and "
                        "takes (tokens int64[1, T], positions int64[T]): this artifact takes "
                        + ", ".join(f"{p['name']}: {p.get('dtype', p['kind'])}"
                                    f"{p.get('shape', '')}" for p in entry["inputs"])
                        + (", and keeps no state" if not compiled.state else ""))


def _last_logits(result):
    logits = np.asarray(result[0] if isinstance(result, (tuple, list)) else result)
    if logits.ndim == 3:  # [1, T, vocabulary]: the last position's
        logits = logits[:, -1]
    if logits.ndim != 2 or logits.shape[0] != 1:
        raise SotcError("E8004", f"generate expects logits [1, T, V] or [1, V], the model "
                        f"returns {list(logits.shape)}")
    return logits[0]


def _choose(logits, rng, do_sample, temperature, top_k, top_p):
    """The next token: the most likely (greedy), or drawn from the logits at `temperature`,
    among the `top_k` most likely and the smallest set whose probability reaches `top_p`."""
    if not do_sample:
        return int(np.argmax(logits))
    z = logits.astype(np.float64) / temperature
    if top_k:
        z = np.where(z < np.sort(z)[-min(top_k, z.size)], -np.inf, z)
    p = np.exp(z - z.max())
    p /= p.sum()
    if top_p < 1.0:
        order = np.argsort(-p, kind="stable")
        before = np.cumsum(p[order]) - p[order]  # the probability of the likelier tokens
        drop = order[before >= top_p]
        p[drop] = 0.0
        p /= p.sum()
    return int(rng.choice(p.size, p=p))


def stream(compiled, input_ids, max_new_tokens=32, do_sample=False, temperature=1.0,
           top_k=None, top_p=1.0, eos_token_id=None, seed=None):
    """Yields the new tokens one at a time (see Compiled.generate)."""
    _check_signature(compiled)
    prompt = np.asarray(input_ids.cpu() if hasattr(input_ids, "cpu") else input_ids,
                        dtype=np.int64)
    if prompt.ndim == 1:
        prompt = prompt[None]
    if prompt.ndim != 2 or prompt.shape[0] != 1 or prompt.shape[1] == 0:
        raise SotcError("E8004", f"generate takes one prompt of at least one token "
                        f"(int64[1, T]); got shape {list(prompt.shape)} (batches of prompts are "
                        "not supported yet)")
    if do_sample and temperature <= 0:
        raise SotcError("E8004", "sampling needs a temperature above 0 (do_sample=False for "
                        "greedy decoding)")
    context = _context_length(compiled)
    if context is not None and prompt.shape[1] + max_new_tokens > context:
        raise SotcError("E8004", f"{prompt.shape[1]} prompt tokens and {max_new_tokens} new "
                        f"ones exceed the {context} positions the compiled cache holds")
    stops = set([eos_token_id] if isinstance(eos_token_id, int) else eos_token_id or [])
    rng = np.random.default_rng(seed)
    state = compiled.new_state()
    before = getattr(compiled._local, "state", None)
    compiled.use_state(state)
    try:
        tokens, positions = prompt, np.arange(prompt.shape[1], dtype=np.int64)
        for _ in range(max_new_tokens):
            logits = _last_logits(compiled(tokens, positions))
            token = _choose(logits, rng, do_sample, temperature, top_k, top_p)
            yield token
            if token in stops:
                return
            tokens = np.array([[token]], dtype=np.int64)
            positions = positions[-1:] + 1
    finally:
        compiled.use_state(before)
        state.close()


def generate(compiled, input_ids, **options):
    """The prompt followed by the new tokens, as transformers' generate returns them (a torch
    tensor for a torch prompt, else a numpy array)."""
    new = list(stream(compiled, input_ids, **options))
    prompt = np.asarray(input_ids.cpu() if hasattr(input_ids, "cpu") else input_ids,
                        dtype=np.int64).reshape(1, -1)
    out = np.concatenate([prompt, np.array([new], dtype=np.int64).reshape(1, -1)], axis=1)
    if type(input_ids).__module__.startswith("torch"):
        import torch
        return torch.from_numpy(out)
    return out
