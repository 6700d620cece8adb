"""What CPython's dis prints for a trace's functions, in the order `sotc dump --bytecode`
prints them; run as a script, traces every testdata program with the running interpreter:

    python3.X dis_reference.py OUT_DIR    writes OUT_DIR/NAME.pb and OUT_DIR/NAME.dis

(the Python-version tests run it under each supported CPython)."""

import contextlib
import dis
import io
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "python"))
sys.path.insert(0, os.path.join(ROOT, "testdata"))

ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def reference_dis(traced, root=ROOT):
    """The entry function (dis.dis recurses into nested code), then each other traced
    function once; code-object addresses masked, paths relative to `root` as the tracer
    records them."""
    out = io.StringIO()
    printed = set()

    def mark(code):
        printed.add(id(code))
        for const in code.co_consts:
            if hasattr(const, "co_code"):
                mark(const)

    codes = traced.code_objects
    entry = codes[traced.proto.functions[traced.proto.entry_function].code]
    with contextlib.redirect_stdout(out):
        dis.dis(entry)
        mark(entry)
        for fn in traced.proto.functions:
            code = codes[fn.code]
            if id(code) in printed:
                continue
            print()
            print("Disassembly of %r:" % (code,))
            dis.dis(code)
            mark(code)
    return ADDRESS.sub(" at 0x?", out.getvalue()).replace(f'file "{root}/', 'file "')


def main(out_dir):
    import make_traces
    from sotc import trace
    from sotc.__main__ import _parse_inputs, load_function

    os.makedirs(out_dir, exist_ok=True)
    os.chdir(ROOT)  # program paths are recorded relative to the repository root
    for program in make_traces.programs():
        func, inputs = make_traces.header(os.path.join(make_traces.PROGRAMS, program))
        fn = load_function(f"testdata/programs/{program}:{func}")
        traced = trace(fn, sotc_root=ROOT, **_parse_inputs(inputs))
        stem = os.path.join(out_dir, program[:-3])
        traced.save(stem + ".pb")
        with open(stem + ".dis", "w") as f:
            f.write(reference_dis(traced))


if __name__ == "__main__":
    main(sys.argv[1])
