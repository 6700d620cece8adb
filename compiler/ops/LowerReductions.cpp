//===- LowerReductions.cpp - Lowerings: sum, mean, max, min, prod, logsumexp ------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <cmath>

namespace sotc::ops::lowering {

void registerReductions(OpTable &t) {
  struct Reduce {
    const char *paddle;
    const char *torch;
    Prim prim;
  };
  for (const Reduce &op :
       {Reduce{"max", "amax", Prim::ReduceMax}, Reduce{"min", "amin", Prim::ReduceMin}}) {
    paddleLower(t, op.paddle, reduceOp(op.prim, "x", "axis", "keepdim"));
    torchLower(t, op.torch, reduceOp(op.prim, "input", "dim", "keepdim"));
  }
  paddleLower(t, "sum", reduceOp(Prim::ReduceSum, "x", "axis", "keepdim", "dtype"));
  torchLower(t, "sum", reduceOp(Prim::ReduceSum, "input", "dim", "keepdim", "dtype"));
  paddleLower(t, "prod", reduceOp(Prim::ReduceProd, "x", "axis", "keepdim", "dtype"));
  torchLower(t, "prod", reduceOp(Prim::ReduceProd, "input", "dim", "keepdim", "dtype"));
  paddleLower(t, "mean", meanOp("x", "axis", "keepdim"));
  torchLower(t, "mean", meanOp("input", "dim", "keepdim"));
  paddleLower(t, "logsumexp", logsumexpOp("x", "axis", "keepdim"));
  torchLower(t, "logsumexp", logsumexpOp("input", "dim", "keepdim"));
}

} // namespace sotc::ops::lowering
