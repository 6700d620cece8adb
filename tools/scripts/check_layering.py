#!/usr/bin/env python3
"""Fails when an #include points up sotc's layer stack (docs/architecture.md).

    check_layering.py FILE...      check these sources (Bazel passes every package's sources)

Every project file belongs to a layer; a file may include its own layer and the layers below
it, never one above or beside it (the frontend and the conversions are siblings that do not
use each other). The operator library and the dialects' Utils/ models include no MLIR. The
runtime includes nothing of the compiler, and nothing but the tools and tests include the
runtime.
A built-in self-test first proves that a back-reference is caught.
"""

import re
import sys

# (path prefix, layer, rank). The longest matching prefix wins.
LAYERS = [
    ("contract/", "contract", -1),
    ("compiler/support/", "support", 0),
    ("compiler/ops/", "ops", 1),
    ("dialects/FunctionLike.h", "dialects-common", 2),
    ("dialects/SizeProductAsm.h", "dialects-common", 2),
    ("dialects/sched/Utils/", "sched-utils", 2),
    ("dialects/sched/", "sched", 3),
    ("dialects/mapexpr/Utils/", "mapexpr-utils", 3),
    ("dialects/sir/IR/", "sir", 3),
    ("dialects/sir/", "sir-transforms", 4),
    ("dialects/mapexpr/IR/", "mapexpr", 4),
    ("dialects/mapexpr/", "mapexpr-transforms", 5),
    ("compiler/conversion/", "conversion", 6),
    ("compiler/frontend/", "frontend", 6),
    ("compiler/target/", "target", 7),
    ("compiler/pipelines/", "pipelines", 8),
    ("compiler/driver/", "driver", 9),
    ("tools/", "tools", 10),
    ("tests/", "tests", 10),
    ("runtime/", "runtime", None),
]
NO_MLIR = {"ops", "sched-utils", "mapexpr-utils"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_of(path):
    best = None
    for prefix, name, rank in LAYERS:
        if path.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, name, rank)
    return best


def violations(files):
    """files: {path: text}. Returns one message per include that points the wrong way."""
    out = []
    for path, text in sorted(files.items()):
        here = layer_of(path)
        if here is None:
            continue
        _, name, rank = here
        for line_no, target in ((text.count("\n", 0, m.start()) + 1, m.group(1))
                                for m in INCLUDE.finditer(text)):
            where = f"{path}:{line_no}: includes {target}"
            if target.startswith(("mlir/", "llvm/")) and name in NO_MLIR:
                out.append(f"{where}: the {name} layer uses no MLIR or LLVM")
                continue
            there = layer_of(target)
            if there is None:
                continue
            _, tname, trank = there
            if tname == name:
                continue
            if tname == "contract" and name != "contract":
                continue  # the artifact contract: below the compiler and the runtime both
            if name == "runtime" or tname == "runtime":
                if tname == "runtime" and name in ("tools", "tests"):
                    continue
                out.append(f"{where}: the runtime and the compiler do not include each other")
            elif trank >= rank:
                rel = "beside" if trank == rank else "above"
                out.append(f"{where}: layer '{tname}' is {rel} layer '{name}'")
    return out


def self_test():
    bad = {
        "dialects/mapexpr/IR/X.h": '#include "compiler/conversion/SirToMapExpr/BuildKernel.h"\n',
        "compiler/frontend/Y.cpp": '#include "compiler/conversion/SirToMapExpr/Passes.h"\n',
        "dialects/sched/Utils/Z.cpp": '#include "mlir/IR/Builders.h"\n',
        "runtime/src/R.cpp": '#include "compiler/support/Diagnostics.h"\n',
        "contract/C.h": '#include "compiler/support/Diagnostics.h"\n',
    }
    good = {"compiler/driver/D.cpp": '#include "compiler/frontend/Translation.h"\n'
                                     '#include "compiler/pipelines/Pipelines.h"\n',
            "runtime/src/A.cpp": '#include "contract/ArtifactFiles.h"\n'}
    found = violations(bad)
    assert len(found) == len(bad), found
    assert not violations(good), violations(good)


def main(paths):
    self_test()
    files = {}
    for p in paths:
        rel = p.split("/sotc/", 1)[-1] if "/sotc/" in p else p
        with open(p, encoding="utf-8") as f:
            files[rel] = f.read()
    found = violations(files)
    for v in found:
        print(v)
    print(f"layering: {len(files)} files checked, {len(found)} includes point up the stack")
    return 1 if found or not files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
