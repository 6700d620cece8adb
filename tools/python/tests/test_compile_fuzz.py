"""Generated programs that call the operator table's torch and paddle functions with random
arguments (tensor shapes with empty and size-1 dims, dtypes, dims, keywords, strings, some of
the wrong type), each traced, compiled for the CPU and, when it compiles, run: every step ends
in a result or a coded error (`sotc: error E....`, exit status 2), never a crash. CI runs a
sample of the table; `scripts/test.sh --full` (SOTC_TEST_FULL) ten times as many."""

import os
import random
import re
import subprocess
import sys

import pytest

import sotc

SAMPLE = 400 if os.environ.get("SOTC_TEST_FULL") else 40
SEED = 20261202
DTYPES = ["float32", "float32", "float64", "int64", "int32", "bool"]
WORDS = ["mean", "sum", "none", "constant", "reflect", "replicate", "circular", "nearest",
         "bilinear", "bicubic", "area", "NCHW", "NHWC", "tanh", "bad", ""]
PARAM = re.compile(r"(\w+)(\[1\])?(\?)?(\.\.\.)? (\w+)(=.*)?$")


def signatures(sotc_bin):
    """{name: [[(type, single, optional, variadic, name, has_default)]]} of the api entries."""
    out, name = {}, None
    text = subprocess.run([sotc_bin, "ops"], capture_output=True, text=True, check=True).stdout
    for line in text.splitlines():
        if not line.startswith(" "):
            name = line.split()[0] if line.endswith("(api)") else None
        elif name and line.strip().startswith("*"):
            # "*0: Tensor (params)" or, for named tuples, "*0: (fields) (params)"
            body = line[line.index(") (") + 3:-1] if ") (" in line else line[line.index("(") + 1:-1]
            params, keyword_only = [], False
            for text_param in filter(None, (p.strip() for p in split_params(body))):
                if text_param == "*":
                    keyword_only = True
                    continue
                m = PARAM.match(text_param)
                if not m:
                    break
                params.append((m.group(1), bool(m.group(2)), bool(m.group(3)), bool(m.group(4)),
                               m.group(5), m.group(6) is not None, keyword_only))
            out.setdefault(name, []).append(params)
    return out


def split_params(body):
    """The parameters of a signature's list (defaults may hold commas inside brackets)."""
    depth, start = 0, 0
    for i, ch in enumerate(body):
        depth += ch in "[(" and 1 or ch in "])" and -1 or 0
        if ch == "," and depth == 0:
            yield body[start:i]
            start = i + 1
    yield body[start:]


class Program:
    """One generated call: its source, the tensor parameters' specs."""

    def __init__(self, rng, framework):
        self.rng, self.framework, self.specs = rng, framework, []

    def tensor(self):
        shape = [0 if self.rng.random() < 0.05 else self.rng.randint(1, 4)
                 for _ in range(self.rng.randint(0, 4))]
        self.specs.append(f"{self.rng.choice(DTYPES)}[{','.join(map(str, shape))}]")
        return f"t{len(self.specs) - 1}"

    def value(self, kind, single, optional):
        r = self.rng
        if optional and r.random() < 0.25:
            return "None"
        if r.random() < 0.05:
            return self.tensor() if r.random() < 0.5 else "1.5"
        ints = lambda n: "[" + ", ".join(str(r.randint(-3, 5)) for _ in range(n)) + "]"  # noqa
        return {
            "Tensor": self.tensor,
            "TensorList": lambda: "[" + ", ".join(self.tensor() for _ in range(r.randint(1, 3))) + "]",
            "Scalar": lambda: r.choice([str(r.randint(-3, 5)), str(r.randint(-4, 4) / 2), "True"]),
            "Int": lambda: str(r.randint(-3, 5)),
            "Float": lambda: str(r.randint(-4, 8) / 4),
            "Bool": lambda: r.choice(["True", "False"]),
            "IntList": lambda: str(r.randint(-3, 5)) if single and r.random() < 0.4
            else ints(r.randint(0, 4)),
            "FloatList": lambda: str(r.randint(1, 8) / 2) if single and r.random() < 0.4
            else "[" + ", ".join(str(r.randint(1, 8) / 2) for _ in range(r.randint(0, 3))) + "]",
            "DataType": lambda: f"{self.framework}.{r.choice(['float32', 'int64'])}",
            "String": lambda: repr(r.choice(WORDS)),
        }.get(kind, lambda: None)()

    def call(self, name, params):
        parts, keywords = [], False
        for kind, single, optional, variadic, pname, has_default, keyword_only in params:
            if kind == "Index":
                return None
            if has_default and self.rng.random() < 0.6:
                keywords = True  # skipped: the rest go by keyword
                continue
            if variadic:
                parts += [self.tensor() for _ in range(self.rng.randint(1, 3))]
                continue
            value = self.value(kind, single, optional)
            if value is None:
                return None
            keywords = keywords or keyword_only or self.rng.random() < 0.2
            parts.append(f"{pname}={value}" if keywords else value)
        if not self.specs:
            return None
        params = ", ".join(f"t{i}" for i in range(len(self.specs)))
        return (f"import paddle\nimport torch\n\n\ndef f({params}):\n"
                f"    return {name}({', '.join(parts)})\n")


RUN = """
import sys, numpy as np, sotc
rng = np.random.default_rng(0)
specs = sys.argv[2:]
def make(spec):
    dtype, dims = spec.rstrip("]").split("[")
    shape = [int(d) for d in dims.split(",") if d]
    return (rng.standard_normal(shape) * 2).astype(dtype) if dtype != "bool" else rng.random(shape) < 0.5
try:
    sotc.load(sys.argv[1])(*[make(s) for s in specs])
except sotc.SotcError as e:
    print(e)
    sys.exit(2)
"""


def test_generated_calls_compile_and_run_or_fail_with_a_coded_error(sotc_bin, tmp_path,
                                                                    monkeypatch):
    table = {n: s for n, s in signatures(sotc_bin).items()
             if n.startswith(("torch.", "paddle.")) and not n.startswith("paddle.incubate")}
    rng = random.Random(SEED)
    names = rng.sample(sorted(table), min(SAMPLE, len(table)))
    monkeypatch.syspath_prepend(str(tmp_path))
    defects, compiled = [], 0
    for i, name in enumerate(names):
        program = Program(rng, "torch" if name.startswith("torch") else "paddle")
        source = program.call(name, rng.choice(table[name]))
        if source is None:
            continue
        module = f"fuzz_{i}"
        (tmp_path / f"{module}.py").write_text(source)
        with sotc.stub_missing_frameworks():
            namespace = {}
            exec(compile(source, str(tmp_path / f"{module}.py"), "exec"), namespace)
        try:
            trace = sotc.trace(namespace["f"], *program.specs,
                               sotc_framework=program.framework).save(str(tmp_path / "t.pb"))
        except sotc.SotcError:
            continue  # a coded error of the tracer: fine
        library = tmp_path / "k.so"
        r = subprocess.run([sotc_bin, "compile", trace, "--target", "cpu", "-o", str(library)],
                           capture_output=True, text=True, timeout=120)
        if r.returncode == 2 and re.match(r"sotc: error E\d{4}: ", r.stderr):
            continue
        if r.returncode != 0:
            defects.append(f"{source.splitlines()[-1].strip()} {program.specs}: compile "
                           f"exited {r.returncode}: {r.stderr.strip()[-300:]}")
            continue
        compiled += 1
        r = subprocess.run([sys.executable, "-c", RUN, str(library)] + program.specs,
                           capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        if r.returncode not in (0, 2):
            defects.append(f"{source.splitlines()[-1].strip()} {program.specs}: run exited "
                           f"{r.returncode}: {r.stderr.strip()[-300:]}")
    assert not defects, "\n".join(defects)
    assert compiled > SAMPLE // 8, f"only {compiled} generated programs compiled"



def test_integer_division_never_traps(sotc_bin, tmp_path, monkeypatch):
    """A zero divisor, and INT_MIN by -1, would trap a hardware division (SIGFPE): the kernels
    give numpy's results instead (0 for a zero divisor; torch raises there)."""
    import numpy as np
    (tmp_path / "int_division.py").write_text(
        "import torch\n\n\ndef f(a, b):\n"
        "    return torch.floor_divide(a, b), torch.remainder(a, b), torch.fmod(a, b)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("int_division", None)
    with sotc.stub_missing_frameworks():
        import int_division
    trace = sotc.trace(int_division.f, "int64[6]", "int64[6]", sotc_framework="torch").save(
        str(tmp_path / "t.pb"))
    library = tmp_path / "k.so"
    subprocess.run([sotc_bin, "compile", trace, "--target", "cpu", "-o", str(library)],
                   check=True, capture_output=True, text=True)
    lowest = np.iinfo(np.int64).min
    a = np.array([7, -7, 5, lowest, lowest, 3], np.int64)
    b = np.array([0, 0, -1, -1, 2, -2], np.int64)
    floor, rem, fmod = sotc.load(library)(a, b)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(floor, np.floor_divide(a, b))
        np.testing.assert_array_equal(rem, np.remainder(a, b))
        np.testing.assert_array_equal(fmod, np.fmod(a, b))
