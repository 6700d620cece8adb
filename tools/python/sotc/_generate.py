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


def _token_ids(ids, what):
    """`ids` (a list, numpy array or torch tensor of token ids) as int64[1, T], T >= 1."""
    ids = np.asarray(ids.cpu() if hasattr(ids, "cpu") else ids, dtype=np.int64)
    if ids.ndim <= 1:
        ids = ids.reshape(1, -1)
    if ids.ndim != 2 or ids.shape[0] != 1 or ids.shape[1] == 0:
        raise SotcError("E8004", f"{what} takes one sequence of at least one token "
                        f"(int64[1, T]); got shape {list(ids.shape)} (batches of prompts are "
                        "not supported yet)")
    return ids


class Sequence:
    """One sequence on a compiled language model's KV cache (Compiled.sequence()): a state of
    its own and the position it has reached. append() runs tokens at the next positions and
    returns the last one's logits; rewind() goes back to an earlier position, for a model that
    masks the cache by the positions it is given (transformers' static cache): the entries past
    it are hidden, then overwritten by the next append. One thread at a time uses a sequence;
    threads use sequences of their own at once."""

    def __init__(self, compiled):
        _check_signature(compiled)
        self._compiled = compiled
        self._state = compiled.new_state()
        self.position = 0
        # The positions the cache holds (None: the model keeps no cache the manifest names).
        self.capacity = _context_length(compiled)

    def append(self, tokens):
        """Runs `tokens` (int64[1, T] or a list) at positions position .. position + T - 1
        and returns the logits of the last one ([vocabulary])."""
        tokens = _token_ids(tokens, "append")
        count = tokens.shape[1]
        if self.capacity is not None and self.position + count > self.capacity:
            raise SotcError("E8004", f"{count} tokens at position {self.position} exceed the "
                            f"{self.capacity} positions the compiled cache holds")
        positions = np.arange(self.position, self.position + count, dtype=np.int64)
        compiled = self._compiled
        before = getattr(compiled._local, "state", None)
        compiled.use_state(self._state)
        try:
            logits = _last_logits(compiled(tokens, positions))
        finally:
            compiled.use_state(before)
        self.position += count
        return logits

    def rewind(self, position):
        """Goes back to `position` (at most the current one): the next append writes there."""
        if not 0 <= position <= self.position:
            raise SotcError("E8004", f"rewind to position {position}: the sequence has "
                            f"reached {self.position}")
        self.position = position

    def reset(self):
        """Starts over: the state's initial values, position 0."""
        self._state.reset()
        self.position = 0

    def close(self):
        self._state.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _stop_tokens(eos_token_id):
    """An `eos_token_id` (one, a list, or None) as a list."""
    return [eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id or [])


def stream(compiled, input_ids, max_new_tokens=32, do_sample=False, temperature=1.0,
           top_k=None, top_p=1.0, eos_token_id=None, seed=None):
    """Yields the new tokens one at a time (see Compiled.generate)."""
    prompt = _token_ids(input_ids, "generate")
    if do_sample and temperature <= 0:
        raise SotcError("E8004", "sampling needs a temperature above 0 (do_sample=False for "
                        "greedy decoding)")
    stops = set(_stop_tokens(eos_token_id))
    rng = np.random.default_rng(seed)
    with Sequence(compiled) as sequence:
        if (sequence.capacity is not None
                and prompt.shape[1] + max_new_tokens > sequence.capacity):
            raise SotcError("E8004", f"{prompt.shape[1]} prompt tokens and {max_new_tokens} "
                            f"new ones exceed the {sequence.capacity} positions the compiled "
                            "cache holds")
        logits = sequence.append(prompt)
        for step in range(max_new_tokens):
            token = _choose(logits, rng, do_sample, temperature, top_k, top_p)
            yield token
            if token in stops or step + 1 == max_new_tokens:
                return
            logits = sequence.append([[token]])


def _prompts(input_ids, attention_mask):
    """The prompts of a batch [B, T] (one prompt: [T] or [1, T]) and its rows as given: each
    row's tokens are where `attention_mask` is 1, padding on the left only (as transformers'
    tokenizers pad for generation)."""
    ids = np.asarray(input_ids.cpu() if hasattr(input_ids, "cpu") else input_ids, dtype=np.int64)
    ids = ids.reshape(1, -1) if ids.ndim <= 1 else ids
    mask = np.ones(ids.shape) if attention_mask is None else np.asarray(
        attention_mask.cpu() if hasattr(attention_mask, "cpu") else attention_mask)
    if ids.ndim != 2 or ids.shape[1] == 0 or mask.shape != ids.shape:
        raise SotcError("E8004", f"generate takes prompts [B, T] of at least one token (and an "
                        f"attention_mask of their shape); got {list(ids.shape)}"
                        + ("" if attention_mask is None else f" and {list(mask.shape)}"))
    prompts = []
    for b, (row, keep) in enumerate(zip(ids, mask.astype(bool))):
        first = int(keep.argmax())
        if not keep.any() or not keep[first:].all():
            raise SotcError("E8004", f"prompt {b}: its attention_mask must be padding on the left "
                            "then at least one token (padding_side='left', as transformers "
                            "pads for generation)")
        prompts.append(row[None, first:])
    return prompts, ids


def generate(compiled, input_ids, attention_mask=None, pad_token_id=None, **options):
    """The prompts followed by their new tokens, as transformers' generate returns them (a
    torch tensor for a torch prompt, else a numpy array): one sequence per prompt, one after
    another; a row that stopped at an eos token, or made fewer tokens than the longest,
    continues with `pad_token_id` (default: the first eos token, else 0)."""
    prompts, rows = _prompts(input_ids, attention_mask)
    new = [list(stream(compiled, prompt, **options)) for prompt in prompts]
    stops = _stop_tokens(options.get("eos_token_id"))
    pad = pad_token_id if pad_token_id is not None else (stops[0] if stops else 0)
    width = max(len(tokens) for tokens in new)
    tail = np.array([tokens + [pad] * (width - len(tokens)) for tokens in new], dtype=np.int64)
    out = np.concatenate([rows, tail.reshape(len(new), width)], axis=1)
    if type(input_ids).__module__.startswith("torch"):
        import torch
        return torch.from_numpy(out)
    return out
