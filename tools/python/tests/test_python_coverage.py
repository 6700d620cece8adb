"""Python the frontend translates, and the errors it gives for what it cannot: each case was
once a wrong or misleading error (issue: Python coverage). Functions are written here and
traced with the paddle stubs; what translates is compiled for the CPU and run through
sotc.load against Python running the same function on numpy arrays."""

import operator
import subprocess

import numpy as np
import pytest

import sotc

# The programs name no framework and take numpy arrays: their tensors are paddle's.
FRAMEWORK = "paddle"

X = np.ones((2, 3), np.float32)


def translate(tmp_path, sotc_bin, fn, *args, extra=(), **kwargs):
    path = sotc.trace(fn, *args, **kwargs, sotc_framework=FRAMEWORK).save(tmp_path / "case.pb")
    return subprocess.run([sotc_bin, "dump", "--sir", *extra, str(path)], capture_output=True,
                          text=True)


def same(a, b):
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b and type(a) is type(b)


def percent_format(x):
    return x * len("%s is xx" % 10), "%-4s|%03d|%.2f|%r" % ("ab", 7, 0.5, "q"), "%d%%" % 5.9


def percent_mapping(x):
    return "%(name)s=%(v)d" % {"name": "n", "v": 3}


def empty_dict_argument(x, options):
    return x * (len(options) + 1)


def apply(fn, y):
    return fn(y)


def bound_method_argument(x):
    return apply(x.add, x)


def chr_ord_fromkeys(x):
    keys = dict.fromkeys(["a", "b"], 1)
    return x * ord(chr(66)) * len(keys), chr(0x263A), ord("\u263a"), keys


def operators_as_functions(x):
    items = [x, 2]
    operator.setitem(items, 1, 3)
    operator.delitem(items, 0)
    return operator.getitem(items, 0), operator.is_(items, items), operator.truth(items)


def numpy_arithmetic(x):
    return x.numpy() + 1


def chr_of_tensor(x):
    return chr(x)


def index_among_values(x):
    return [1, x].index(x), [x, 1].index(1)


@pytest.mark.parametrize("fn, kwargs", [
    (percent_format, {}),
    (percent_mapping, {}),
    (empty_dict_argument, {"options": {}}),
    (chr_ord_fromkeys, {}),
    (operators_as_functions, {}),
])
def test_runs_as_python_does(fn, kwargs, tmp_path, sotc_bin):
    path = sotc.trace(fn, X, **kwargs, sotc_framework=FRAMEWORK).save(tmp_path / "case.pb")
    library = tmp_path / "case.so"
    subprocess.run([sotc_bin, "compile", str(path), "--target", "cpu", "-o", str(library)],
                   check=True)
    got = sotc.load(str(library))(X, **kwargs)
    want = fn(X, **kwargs)
    assert same(got, want), (got, want)


def test_bound_tensor_method_keeps_its_tensor(tmp_path, sotc_bin):
    result = translate(tmp_path, sotc_bin, bound_method_argument, X)
    assert result.returncode == 0, result.stderr
    assert "add ((var_0, var_0)" in result.stdout


@pytest.mark.parametrize("fn, code, message", [
    (numpy_arithmetic, "E3005", "host callback's result can be returned, not computed"),
    (chr_of_tensor, "E3005", "chr() of a tensor"),
    (index_among_values, "E3005", "comparing a tensor with another value"),
])
def test_host_values_are_host_interaction_errors(fn, code, message, tmp_path, sotc_bin):
    result = translate(tmp_path, sotc_bin, fn, X, extra=["--allow-host-callbacks"])
    assert result.returncode != 0
    assert f"error {code}:" in result.stderr and message in result.stderr, result.stderr
    assert "test_python_coverage.py:" in result.stderr  # the Python line


def test_unsupported_builtin_is_not_a_name_error(tmp_path, sotc_bin):
    def uses_vars(x):
        return vars(x)

    result = translate(tmp_path, sotc_bin, uses_vars, X)
    assert "E3004" in result.stderr and "builtin vars()" in result.stderr, result.stderr


SHIFT = np.full(3, 10, np.float32)
counter = 0


def reads_global_tensor(x):
    return x + SHIFT


def writes_globals_and_arguments(x, log, table):
    global counter
    counter = counter + 1
    log.append(x * counter)
    table["n"] = counter
    return x * 2


def compile_and_load(tmp_path, sotc_bin, fn, **kwargs):
    """No fallback: a call the guards refuse raises instead of running `fn`."""
    path = sotc.trace(fn, **kwargs, sotc_framework=FRAMEWORK).save(tmp_path / "case.pb")
    library = tmp_path / "case.so"
    subprocess.run([sotc_bin, "compile", str(path), "--target", "cpu", "-o", str(library)],
                   check=True)
    return sotc.load(str(library), globals=fn.__globals__)


def test_a_global_tensor_is_an_input_read_at_each_call(tmp_path, sotc_bin, monkeypatch):
    f = compile_and_load(tmp_path, sotc_bin, reads_global_tensor, x=X[0])
    assert f.parameters == ["x"]
    np.testing.assert_array_equal(f(X[0]), X[0] + 10)
    monkeypatch.setitem(globals(), "SHIFT", np.full(3, -1, np.float32))
    np.testing.assert_array_equal(f(X[0]), X[0] - 1)  # the new value, not the traced one


def test_global_writes_and_argument_mutations_are_applied_after_the_call(
        tmp_path, sotc_bin, monkeypatch):
    monkeypatch.setitem(globals(), "counter", 0)
    f = compile_and_load(tmp_path, sotc_bin, writes_globals_and_arguments, x=X[0], log=[],
                         table={})
    log, table = [], {}
    np.testing.assert_array_equal(f(X[0], log, table), X[0] * 2)
    assert counter == 1 and table == {"n": 1} and len(log) == 1
    np.testing.assert_array_equal(log[0], X[0])
    with pytest.raises(sotc.GuardError):  # compiled for counter == 0 and empty containers
        f(X[0], log, table)


def test_side_effects_need_the_module_globals(tmp_path, sotc_bin, monkeypatch):
    monkeypatch.setitem(globals(), "counter", 0)
    path = sotc.trace(writes_globals_and_arguments, x=X[0], log=[], table={}, sotc_framework=FRAMEWORK).save(
        tmp_path / "case.pb")
    library = tmp_path / "case.so"
    subprocess.run([sotc_bin, "compile", str(path), "--target", "cpu", "-o", str(library)],
                   check=True)
    with pytest.raises(TypeError, match="assigns the global 'counter'"):
        sotc.load(str(library))(X[0], [], {})


def test_explain_lists_side_effects(tmp_path, sotc_bin, monkeypatch):
    monkeypatch.setitem(globals(), "counter", 0)
    path = sotc.trace(writes_globals_and_arguments, x=X[0], log=[], table={}, sotc_framework=FRAMEWORK).save(
        tmp_path / "case.pb")
    out = subprocess.run([sotc_bin, "explain", str(path)], capture_output=True, text=True).stdout
    assert "sets global counter = 1" in out
    assert "mutates argument log = [var_" in out and "mutates argument table = {'n': 1}" in out


def calls_a_library_function(x):
    return x * 2, JSON_DUMPS([1, 2])


JSON_DUMPS = __import__("json").dumps


def test_break_on_a_function_the_operator_table_does_not_know(tmp_path, sotc_bin):
    """--break-on=json.dumps: the host runs it between two graphs (its result may be
    returned); without the flag the call is E3004."""
    path = sotc.trace(calls_a_library_function, X, sotc_framework=FRAMEWORK).save(tmp_path / "case.pb")
    refused = subprocess.run([sotc_bin, "explain", str(path)], capture_output=True, text=True)
    assert "E3004" in refused.stderr and "json.dumps" in refused.stderr
    broken = subprocess.run([sotc_bin, "explain", "--allow-host-callbacks",
                             "--break-on=json.dumps", str(path)], capture_output=True, text=True)
    assert broken.returncode == 0, broken.stderr
    assert "graph breaks: 1" in broken.stdout and "json.dumps" in broken.stdout


def write_through_a_view(x):
    t = x[0]
    t[0:1] = 0.0
    return x, t


def write_through_a_view_of_a_view(x):
    t = x[0]
    u = t[1:]
    u[0] = 0.0
    return x


def write_under_a_view(x):
    t = x[0]
    x[0, 0] = 5.0
    return t


@pytest.mark.parametrize("fn, message", [
    (write_through_a_view_of_a_view, "assigning into a view of another tensor"),
    (write_under_a_view, "a view of it still refers to"),
])
def test_assignments_that_views_would_see_are_refused(fn, message, tmp_path, sotc_bin):
    """The frameworks share memory between a tensor and its views; a functional update
    cannot, so these are refused rather than computed wrong."""
    result = translate(tmp_path, sotc_bin, fn, X)
    assert "E3002" in result.stderr and message in result.stderr, result.stderr


def test_a_write_through_a_view_writes_its_base(tmp_path, sotc_bin):
    """t = x[0]; t[0:1] = 0 writes x too, as the frameworks' shared memory does."""
    f = compile_and_load(tmp_path, sotc_bin, write_through_a_view, x=X.copy())
    x = X.copy() + 1
    got_x, got_t = f(x)
    want_x = X.copy() + 1
    want_x[0, 0:1] = 0.0
    np.testing.assert_array_equal(np.asarray(got_x), want_x)
    np.testing.assert_array_equal(np.asarray(got_t), want_x[0])


def assign_whole(x, y):
    x[...] = y
    x[0] = 1.0
    return x, y


def test_a_whole_assignment_copies(tmp_path, sotc_bin):
    f = compile_and_load(tmp_path, sotc_bin, assign_whole, x=X.copy(), y=X.copy())
    x, y = np.zeros_like(X), np.full_like(X, 7)
    got_x, got_y = f(x, y)
    assert (got_y == 7).all() and (y == 7).all()  # y is not x
    assert (got_x[0] == 1).all() and (got_x[1] == 7).all() and (x == got_x).all()


def raises(x):
    if x.ndim > 1:
        raise ValueError("rank")
    return x


def test_a_raise_names_the_exception(tmp_path, sotc_bin):
    result = translate(tmp_path, sotc_bin, raises, X)
    assert "E3006" in result.stderr and "ValueError('rank')" in result.stderr, result.stderr


class Adder:
    def __init__(self, k):
        self.k = k

    def __call__(self, t):
        return self.add(t)

    def add(self, t):
        return t + self.k


class Holder:
    def __init__(self, k):
        self.inner = Adder(k)

    def __call__(self, t, how):
        return getattr(self.inner, how)(t)


def calls_objects(holder, x):
    return holder(x, "add") * 2


def test_objects_passed_in_run_with_their_attributes_guarded(tmp_path, sotc_bin):
    f = compile_and_load(tmp_path, sotc_bin, calls_objects, holder=Holder(3), x=X)
    np.testing.assert_array_equal(f(Holder(3), X), calls_objects(Holder(3), X))
    with pytest.raises(sotc.GuardError, match=r"holder.inner.k: expected 3, got 4"):
        f(Holder(4), X)
    with pytest.raises(sotc.GuardError, match="holder: expected Holder, got Adder"):
        f(Adder(3), X)


def sets_an_attribute_of_an_argument(holder, x):
    holder.k = 2
    return x


def test_attribute_writes_to_objects_passed_in_are_refused(tmp_path, sotc_bin):
    result = translate(tmp_path, sotc_bin, sets_an_attribute_of_an_argument, Adder(1), X)
    assert "E3002" in result.stderr and "passed in" in result.stderr, result.stderr


def sums_a_range(x, r):
    return x * sum(map(lambda i: i * 2, r)), list(r[1:])


def test_a_range_passed_in_is_a_value(tmp_path, sotc_bin):
    f = compile_and_load(tmp_path, sotc_bin, sums_a_range, x=X, r=range(1, 4))
    got, want = f(X, range(1, 4)), sums_a_range(X, range(1, 4))
    assert same(got, want), (got, want)
    with pytest.raises(sotc.GuardError, match=r"expected range\(1, 4\), got range\(0, 4\)"):
        f(X, range(0, 4))


def calls_what_it_is_given(x, fn):
    return fn(x)


def test_a_bound_tensor_method_passed_in_is_refused_by_name(tmp_path, sotc_bin):
    """It used to be recorded as the unbound library function, losing its tensor (E2002)."""
    result = translate(tmp_path, sotc_bin, calls_what_it_is_given, X, X.copy().__add__)
    assert "E3004" in result.stderr and "bound method ndarray.__add__" in result.stderr, \
        result.stderr


class WithDefaults:
    present = 1


def reads_with_defaults(x, obj):
    return x * getattr(obj, "present", 5) * getattr(obj, "absent", 7) * getattr(x, "nope", 2)


def test_getattr_with_a_default(tmp_path, sotc_bin):
    f = compile_and_load(tmp_path, sotc_bin, reads_with_defaults, x=X, obj=WithDefaults())
    np.testing.assert_array_equal(f(X, WithDefaults()), X * 14)


def inside_no_grad(x):
    with TORCH.no_grad():
        y = x * 2
    return y + 1


def test_with_an_inert_context_manager(tmp_path, sotc_bin):
    """`with torch.no_grad():` compiles (inference records no gradients)."""
    import types
    torch = types.ModuleType("torch")
    code = compile("def no_grad():\n    pass\n", "/site-packages/torch/autograd.py", "exec")
    scope = {"__name__": "torch"}
    exec(code, scope)
    torch.no_grad = scope["no_grad"]
    globals()["TORCH"] = torch
    try:
        result = translate(tmp_path, sotc_bin, inside_no_grad, X)
    finally:
        del globals()["TORCH"]
    assert result.returncode == 0, result.stderr
    assert "__mul__" in result.stdout and "__add__" in result.stdout


def truth_as_a_value(x):
    positive = not (x.sum() <= 0)
    return (x * 2 if positive else x - 1), positive, operator.truth(x.max() > 0.5)


def test_the_truth_of_a_tensor_as_a_value_is_a_branch(tmp_path, sotc_bin):
    """`not t`, bool(t), operator.truth(t): the segment branches on t and each side goes on
    with the bool, as PaddleSOT breaks the graph there."""
    f = compile_and_load(tmp_path, sotc_bin, truth_as_a_value, x=X)
    for x in (X, -X, X * 0.1):
        assert same(f(x), truth_as_a_value(x.copy()))
    explained = subprocess.run([sotc_bin, "explain", str(tmp_path / "case.pb")],
                               capture_output=True, text=True).stdout
    assert "truth value of a tensor" in explained


def ambiguous_truth(x):
    return bool(x > 0)


def test_the_truth_of_a_tensor_of_several_elements_is_python_s_error(tmp_path, sotc_bin):
    result = translate(tmp_path, sotc_bin, ambiguous_truth, X)
    assert "E3006" in result.stderr and "6 elements is ambiguous" in result.stderr, result.stderr


BIAS = np.zeros(3, np.float32)


def writes_into_a_global_tensor(x):
    BIAS[0] = 1.0
    return x + BIAS


def test_a_global_tensor_written_in_place_is_given_back(tmp_path, sotc_bin, monkeypatch):
    monkeypatch.setitem(globals(), "BIAS", np.zeros(3, np.float32))
    f = compile_and_load(tmp_path, sotc_bin, writes_into_a_global_tensor, x=X[0])
    np.testing.assert_array_equal(f(X[0]), X[0] + [1, 0, 0])
    np.testing.assert_array_equal(BIAS, [1, 0, 0])  # the module's global holds the new value


def test_a_large_constant_made_in_the_function_names_its_size(tmp_path, sotc_bin, monkeypatch):
    from sotc._stubs import StubModule
    monkeypatch.setitem(globals(), "STUB_PADDLE", StubModule("paddle", imported=True))

    def big(x):
        return x + STUB_PADDLE.linspace(0.0, 1.0, 1000)

    path = sotc.trace(big, X[0], sotc_framework=FRAMEWORK).save(tmp_path / "case.pb")
    result = subprocess.run([sotc_bin, "dump", "--sir", str(path)], capture_output=True, text=True)
    assert "E3002" in result.stderr and "of 1000 elements" in result.stderr, result.stderr


def walks_many_modules(x):
    found = 0
    for i in range(5000):  # Python alone (a walk over a large model's modules): no statement
        if i % 1000 == 0:
            found += 1
    return x * found


def adds_in_a_long_loop(x):
    for _ in range(1100):  # every iteration adds to the graph
        x = x + 1
    return x


def never_ends(x):
    while True:
        x = x  # noqa: PLW0127
    return x


def test_the_unroll_limit_counts_iterations_that_compile_to_something(tmp_path, sotc_bin):
    """1024 iterations that emit statements; sixteen times that of Python alone."""
    f = compile_and_load(tmp_path, sotc_bin, walks_many_modules, x=X)
    np.testing.assert_array_equal(np.asarray(f(X)), X * 5)
    for fn, limit in ((adds_in_a_long_loop, "1024"), (never_ends, "16384")):
        result = translate(tmp_path, sotc_bin, fn, X)
        assert "E3008" in result.stderr and f"more than {limit} iterations" in result.stderr, \
            result.stderr
