#!/usr/bin/env python3
"""Writes the sir dialect's primitive enum (TableGen) from compiler/ops/Primitives.def, so the
IR and the operator library share one list.

    gen_prim_enum.py Primitives.def OUT.td
"""

import re
import sys


def main(src, out):
    with open(src, encoding="utf-8") as f:
        entries = re.findall(r'^PRIM\((\w+), "(\w+)", (\w+)\)$', f.read(), re.M)
    if not entries:
        sys.exit(f"{src}: no PRIM(...) entries")
    cases = ",\n".join(f'  I32EnumAttrCase<"{name}", {i}, "{text}">'
                       for i, (name, text, _) in enumerate(entries))
    with open(out, "w", encoding="utf-8") as f:
        f.write(f"""// Generated from compiler/ops/Primitives.def by tools/scripts/gen_prim_enum.py.
#ifndef SOTC_DIALECT_SIR_PRIMITIVES
#define SOTC_DIALECT_SIR_PRIMITIVES

include "mlir/IR/EnumAttr.td"

def Sir_PrimitiveAttr : I32EnumAttr<"Primitive", "a primitive of the operator library", [
{cases}
]> {{
  let cppNamespace = "::sotc::sir";
}}

#endif // SOTC_DIALECT_SIR_PRIMITIVES
""")


if __name__ == "__main__":
    main(*sys.argv[1:])
