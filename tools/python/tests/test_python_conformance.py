"""Python semantics against CPython itself: each function here runs once in the interpreter
running the test and once compiled by sotc (traced, compiled for the CPU, run through
sotc.load), and the two results must be the same. Runs under every supported CPython (3.11,
3.12, 3.13), whose bytecode for the same source differs.

Each construct was once translated differently from CPython by the frontend, or refused:
generators are pulled item by item (a generator expression's body sees what its consumer did
before each pull: ultralytics' C2f block chains its bottlenecks through
`y.extend(m(y[-1]) for m in self.m)`); classes' names and MROs, type(x), id(x), `is` of one
function or class read twice, dict subclasses with methods (transformers 5.25's registries),
os.environ reads."""

import collections
import math
import subprocess

import numpy as np
import pytest

import sotc
from conformance_asserts import failed_asserts_raise_assertion_error

FRAMEWORK = "paddle"  # the programs name no framework and take numpy arrays

X = np.arange(6, dtype=np.float32).reshape(2, 3) / 4


def same(a, b):
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=1e-6)
    return a == b and type(a) is type(b)


def step(t):
    return t * 2 + 1


# -- generators ---------------------------------------------------------------------------


def extend_chains_through_the_list(x):
    y = [x, x + 1]
    y.extend(step(y[-1]) for _ in range(3))
    return y


def for_loop_feeds_the_generator(x):
    ys = [x]
    for y in (ys[-1] * 2 for _ in range(3)):
        ys.append(y + 1)
    return ys


def next_between_appends(x):
    ys = [x]
    items = (ys[-1] + 1 for _ in range(3))
    a = next(items)
    ys.append(a * 2)
    b = next(items)
    return a, b, next(items), next(items, "done")


def stages(x, n):
    for i in range(n):
        x = x * 2 + i
        yield x
    yield x.sum()


def generator_function(x):
    return list(stages(x, 3)), tuple(t * 0 for t in stages(x, 1))


def any_all_stop_at_the_deciding_item(x):
    pulled = []
    found = any(pulled.append(i) or i == 2 for i in range(5))
    every = all(pulled.append(i) or i < 1 for i in range(5))
    return x * len(pulled), found, every, pulled


def sum_of_a_generator_of_generators(x):
    return sum(a for a in (x * i for i in range(1, 4)))


def generator_raises_into_its_consumer(x):
    table = {"a": x}
    items = (table[k] for k in ["a", "b", "a"])
    out = [next(items)]
    try:
        next(items)
    except KeyError:
        out.append(x * 3)
    out.append(next(items, None))  # a generator that raised is finished
    return out


def iter_of_a_generator_is_itself(x):
    items = (x * i for i in range(4))
    first = next(iter(items))
    return first, [t + 1 for t in items], iter(items) is items


def zip_and_enumerate_over_generators(x):
    pairs = list(zip((x * i for i in range(3)), "ab"))
    return pairs, [(i, t - 1) for i, t in enumerate(x + j for j in range(2))]


def adaptors_pull_as_iterated(x):
    """enumerate/zip/map/filter over a generator pull it as they are iterated: each item sees
    what the loop body appended before it."""
    ys = [x]
    for i, y in enumerate(ys[-1] + 1 for _ in range(2)):
        ys.append(y * (i + 2))
    zs = [x]
    for a, b in zip((zs[-1] * 2 for _ in range(3)), "abc"):
        zs.append(a - len(b))
    ws = [x]
    for w in map(lambda t: t + 3, (ws[-1] for _ in range(2))):
        ws.append(w)
    vs = [1]
    kept = [v for v in filter(None, (vs.append(len(vs)) or vs[-1] - 2 for _ in range(4)))]
    return ys, zs, ws, kept


def dict_and_join_from_generators(x):
    names = ",".join(str(i) for i in range(3))
    return {k: x * v for k, v in ((n, len(n)) for n in ("a", "bb"))}, names


# -- classes, identity, registries ---------------------------------------------------------


class Holder:
    def method(self):
        return 1


class Registry(dict):
    """transformers' registries: a dict subclass whose methods reach dict's through super()."""

    def get(self, key):
        return super().get(str(key.__class__)) or {}


REGISTRY = Registry()
REGISTRY[str(Holder)] = {"a": 2}


def class_attributes(x):
    t = type(Holder())
    return x, t.__name__, t.__qualname__, t.__module__, len(t.__mro__), t is Holder, str(Holder)


def identity_of_functions_and_ids(x):
    h = Holder()
    return (x, h.method.__func__ is Holder.method, h.method.__self__ is h, id(h) == id(h),
            {id(h): 1}.get(id(h)), type(1) is int, h.method is h.method)


def dict_subclass_methods(x):
    return x * REGISTRY.get(Holder())["a"], len(REGISTRY)


class Fields:
    """A Mapping of the program's: `**` reads keys(), then each item by __getitem__."""

    def __init__(self, **values):
        self.values = values

    def keys(self):
        return [k for k in self.values if not k.startswith("_")]

    def __getitem__(self, key):
        return self.values[key] * 2


class Aliased:
    """transformers' configs: __getattribute__ maps names through a class-level table and hands
    on to object's lookup through super(); a property read by getattr runs its getter."""
    aliases = {"width": "hidden"}

    def __init__(self):
        self.hidden = 3

    def __getattribute__(self, key):
        if key in super().__getattribute__("aliases"):
            key = super().__getattribute__("aliases")[key]
        return super().__getattribute__(key)

    @property
    def doubled(self):
        return self.width * 2


class Plain:
    def __init__(self):
        self.n = 4

    @property
    def twice(self):
        return self.n * 2


def attribute_hooks_and_properties(x):
    a, p = Aliased(), Plain()
    return (x * a.width, getattr(a, "width"), getattr(a, "missing", "default"), a.doubled,
            getattr(p, "twice", None), hasattr(p, "twice"), object.__getattribute__(a, "hidden"),
            a.__dict__.get("hidden"))


def builtins_keyword_arguments(x):
    """enumerate(start=) (Qwen3-VL's rotary sections: the wrong sections once, silently),
    sorted(key=, reverse=), min/max(key=, default=), sum(start=), zip(strict=)."""
    names = ["bb", "a", "ccc", "dd"]
    rows = [x[:, dim] * offset for dim, offset in enumerate((1, 2), start=1)]
    return (rows, sorted(names, key=len, reverse=True), sorted(names, reverse=True),
            sorted([3, 1, 2], key=lambda v: -v), min(names, key=len), max(names, key=len),
            max([], default=-1), sum([1, 2], start=10), list(zip("ab", (1, 2), strict=True)))


class Frozen(collections.OrderedDict):
    """diffusers' FrozenDict (a model's config): every key is an instance attribute too."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for key, value in self.items():
            setattr(self, key, value)


CONFIG = Frozen(center=False, scale=2)


def attributes_of_builtin_values(x):
    """A name a dict, list, tuple or str does not have is an AttributeError (it was read as a
    method of that name, which is true: UNet2DModel's `if config.center_input_sample`)."""
    centered = x * 2 - 1 if CONFIG.center else x
    return (centered * CONFIG.scale, hasattr(CONFIG, "missing"), hasattr([], "nothing"),
            hasattr("s", "upper"), hasattr((1,), "append"), getattr({}, "flag", "default"),
            hasattr(3, "real_part"))


class Instantier(collections.OrderedDict):
    """transformers' ACT2FN: a dict subclass whose __getitem__ makes what the key names."""

    def __getitem__(self, key):
        content = super().__getitem__(key)
        kind, scale = content if isinstance(content, tuple) else (content, 1)
        return kind(scale)


MAKERS = Instantier(double=(float, 2), one=int)


def id_keys_and_subclass_items(x):
    """Distinct objects have distinct ids as dict keys (ids once collided past 2^53, and a
    kernels-hub table returned another function's wrapper), and a dict subclass's own
    __getitem__ runs."""
    objs = [Holder() for _ in range(40)]
    table = {id(o): i for i, o in enumerate(objs)}
    return x * MAKERS["double"], len(table), [table[id(o)] for o in objs[::13]], MAKERS["one"]


def dict_union(x):
    """d | e and d |= e (granite's configs merge keyword dicts so): e's values win."""
    d = {"a": x, "b": 1}
    e = d | {"b": 2, "c": x + 1}
    d |= {"a": 3}
    return e, d


def negative_steps(x):
    """Slices with negative steps of lists, tuples, strings and ranges (Qwen-Image reverses a
    split's pieces with [::-1]); and assigned through."""
    items = [x, 1, 2, 3, 4, 5]
    items[5:1:-2] = ["a", "b"]
    return (items[::-1], tuple(items)[-2::-2], "abcdef"[4:0:-1], list(range(10)[8:1:-3]),
            items[1:4][::-1], list(range(5)[::-1]), "xyz"[::-1], items[10:-10:-1])


DIGITS = frozenset("0123456789.")


def set_methods_and_operators(x):
    """Sets' methods and operators (packaging's version parser: a frozenset's issuperset of a
    string), and equality by items whatever their order."""
    s = {1, 2, 3}
    s.add(4)
    s.discard(1)
    s.update([7, 8])
    t = s | {9}
    t -= {8}
    both = t & {2, 7, 10}
    return (x, sorted(s), sorted(t), sorted(both), sorted(t - {2}), sorted(t ^ {3, 11}),
            DIGITS.issuperset("2.9"), DIGITS.issuperset("2.9+cu"), {2}.issubset(s),
            s.isdisjoint({100}), sorted(s.union([1], (2, 5))), sorted(s.intersection({2, 3}, [3])),
            sorted(s.symmetric_difference({2, 99})), {3, 1} == {1, 3}, {1} < {1, 3},
            {1, 3} >= {3}, {1, 2} != {2, 1})


def spread(**kwargs):
    return kwargs


def double_star_of_a_mapping_object(x):
    fields = Fields(a=x, _hidden=1, b=3)
    return spread(**fields, c=x + 1), {**fields}


def math_on_numbers(x):
    """The math module on numbers folds as CPython computes it (LTX-Video's math.log(x, theta))."""
    floats = [math.log(8.0, 2.0), math.log(3), math.atan2(1, 2), math.hypot(3, 4),
              math.copysign(2, -0.0), math.fmod(7.5, 2), math.tan(0.5), math.asin(0.5),
              math.acos(0.5), math.atan(2), math.sinh(1), math.cosh(1), math.log1p(1e-9),
              math.expm1(1e-9), math.erfc(0.5), math.radians(90), math.degrees(1)]
    ints = [math.trunc(-2.5), math.gcd(12, -18), math.lcm(4, 6), math.lcm(0, 5),
            math.prod((2, 3, 4)), math.prod([]), math.prod(range(1, 5), start=2),
            math.prod(d for d in x.shape)]  # Hiera's math.prod of a size tuple
    floats.append(math.prod([1.5, 2]))
    flags = [math.isfinite(1.0), math.isinf(float("inf")), math.isnan(1.0)]
    return x * floats[0] + floats[1], floats, ints, flags


def null_context_binds_its_result(x):
    """contextlib.nullcontext: a with block that binds `as` to its enter_result (or None)."""
    import contextlib
    with contextlib.nullcontext(3) as three, contextlib.nullcontext() as nothing:
        y = x * three
    with contextlib.nullcontext(enter_result=[1, 2]) as pair:
        pair.append(3)
    return y, nothing, pair


def math_errors_as_cpython_raises_them(x):
    """Where CPython's math raises, the compiled program raises the same (caught here)."""
    caught = []
    for attempt in range(8):
        try:
            if attempt == 0:
                math.sqrt(-1.0)
            elif attempt == 1:
                math.log(0.0)
            elif attempt == 2:
                math.exp(1000.0)
            elif attempt == 3:
                math.fmod(1.0, 0.0)
            elif attempt == 4:
                math.log(8.0, 1.0)
            elif attempt == 5:
                math.floor(float("inf"))
            elif attempt == 6:
                math.sin(float("inf"))
            else:
                math.pow(0.0, -1.0)
        except (ValueError, OverflowError, ZeroDivisionError) as e:
            caught.append(type(e).__name__)
    return x + len(caught), caught, math.sqrt(float("nan")) != 0.0


CASES = [
    extend_chains_through_the_list,
    for_loop_feeds_the_generator,
    next_between_appends,
    generator_function,
    any_all_stop_at_the_deciding_item,
    sum_of_a_generator_of_generators,
    generator_raises_into_its_consumer,
    iter_of_a_generator_is_itself,
    zip_and_enumerate_over_generators,
    dict_and_join_from_generators,
    adaptors_pull_as_iterated,
    class_attributes,
    identity_of_functions_and_ids,
    dict_subclass_methods,
    double_star_of_a_mapping_object,
    attribute_hooks_and_properties,
    builtins_keyword_arguments,
    attributes_of_builtin_values,
    id_keys_and_subclass_items,
    set_methods_and_operators,
    dict_union,
    negative_steps,
    math_on_numbers,
    math_errors_as_cpython_raises_them,
    failed_asserts_raise_assertion_error,
    null_context_binds_its_result,
]


@pytest.mark.parametrize("fn", CASES, ids=[fn.__name__ for fn in CASES])
def test_compiled_as_cpython_runs_it(fn, tmp_path, sotc_bin):
    path = sotc.trace(fn, X, sotc_framework=FRAMEWORK).save(tmp_path / "case.pb")
    library = tmp_path / "case.so"
    result = subprocess.run([sotc_bin, "compile", str(path), "--target", "cpu", "-o",
                             str(library)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    got = sotc.load(str(library))(X)
    want = fn(X)
    assert same(got, want), (got, want)


def reads_the_environment(x):
    import os
    return x, os.environ.get("SOTC_CONFORMANCE_FLAG", "unset"), os.getenv("SOTC_NOT_SET_ANYWHERE")


def test_environment_variables_as_traced(tmp_path, sotc_bin, monkeypatch):
    """The artifact reads the environment the function was traced in, not its own."""
    monkeypatch.setenv("SOTC_CONFORMANCE_FLAG", "on")
    path = sotc.trace(reads_the_environment, X, sotc_framework=FRAMEWORK).save(tmp_path / "t.pb")
    want = reads_the_environment(X)
    library = tmp_path / "t.so"
    subprocess.run([sotc_bin, "compile", str(path), "--target", "cpu", "-o", str(library)],
                   check=True)
    monkeypatch.setenv("SOTC_CONFORMANCE_FLAG", "changed")
    assert same(sotc.load(str(library))(X), want)


def reads_a_credential(x):
    import os
    return x, os.environ.get("SOTC_CONFORMANCE_API_TOKEN")


def test_credentials_stay_out_of_the_trace(tmp_path, sotc_bin, monkeypatch):
    """A variable named like a credential is set when tracing: its value is not in the saved
    trace, and the code that reads it is refused with a coded error."""
    monkeypatch.setenv("SOTC_CONFORMANCE_API_TOKEN", "hunter2-secret")
    path = sotc.trace(reads_a_credential, X, sotc_framework=FRAMEWORK).save(tmp_path / "t.pb")
    assert b"hunter2-secret" not in open(path, "rb").read()
    result = subprocess.run([sotc_bin, "compile", str(path), "--target", "cpu", "-o",
                             str(tmp_path / "t.so")], capture_output=True, text=True)
    assert result.returncode != 0 and "E3002" in result.stderr, result.stderr
    assert "SOTC_CONFORMANCE_API_TOKEN" in result.stderr and "credential" in result.stderr
    assert not (tmp_path / "t.so").exists()


def generator_with_yield_from(x):
    def inner():
        yield x
        yield x + 1

    def outer():
        yield from inner()

    return list(outer())


def test_what_is_not_compiled_is_a_coded_error(tmp_path, sotc_bin):
    path = sotc.trace(generator_with_yield_from, X, sotc_framework=FRAMEWORK).save(
        tmp_path / "case.pb")
    result = subprocess.run([sotc_bin, "compile", str(path), "--target", "cpu", "-o",
                             str(tmp_path / "case.so")], capture_output=True, text=True)
    assert result.returncode != 0
    assert "yield from" in result.stderr or "SEND" in result.stderr, result.stderr
    assert "test_python_conformance.py" in result.stderr
    assert not (tmp_path / "case.so").exists()
