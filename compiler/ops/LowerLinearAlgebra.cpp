//===- LowerLinearAlgebra.cpp - Lowerings: matmul and linear ----------------------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <cmath>

namespace sotc::ops::lowering {

void registerLinearAlgebra(OpTable &t) {
  paddleLower(t, "matmul", [](Lowering &L) {
    L.out(L.b.matmul(L.in("x"), L.in("y"), L.args.boolValue("transpose_x"),
                     L.args.boolValue("transpose_y")));
  });
  torchLower(t, "matmul",
             [](Lowering &L) { L.out(L.b.matmul(L.in("input"), L.in("other"), false, false)); });
  // paddle's weight is [in, out]; torch's is [out, in].
  t.bind("paddle.nn.functional.linear", [](Lowering &L) {
    L.out(affine(L, L.b.matmul(L.in("x"), L.in("weight"), false, false), "", "bias"));
  });
  t.bind("torch.nn.functional.linear", [](Lowering &L) {
    L.out(affine(L, L.b.matmul(L.in("input"), L.in("weight"), false, true), "", "bias"));
  });
}

} // namespace sotc::ops::lowering
