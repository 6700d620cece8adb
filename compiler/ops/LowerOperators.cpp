//===- LowerOperators.cpp - Lowerings: Python operators (__add__, __lt__, __neg__, ...) -------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <cmath>

namespace sotc::ops::lowering {

void registerOperators(OpTable &t) {
  struct Op {
    const char *name;
    Prim prim;
    bool floatResult;
  };
  const Op binaries[] = {
      {"add", Prim::Add, false},    {"sub", Prim::Sub, false},           {"mul", Prim::Mul, false},
      {"truediv", Prim::Div, true}, {"floordiv", Prim::FloorDiv, false}, {"mod", Prim::Mod, false},
      {"pow", Prim::Pow, false},
  };
  for (const Op &op : binaries) {
    std::string n = op.name;
    t.bind("__" + n + "__", binaryOp(op.prim, "self", "other", op.floatResult));
    t.bind("__r" + n + "__", binaryOp(op.prim, "other", "self", op.floatResult));
  }
  t.bind("__matmul__",
         [](Lowering &L) { L.out(L.b.matmul(L.in("self"), L.in("other"), false, false)); });
  struct Cmp {
    const char *name;
    Prim prim;
  };
  for (const Cmp &op :
       {Cmp{"lt", Prim::Less}, Cmp{"le", Prim::LessEqual}, Cmp{"eq", Prim::Equal},
        Cmp{"ne", Prim::NotEqual}, Cmp{"gt", Prim::Greater}, Cmp{"ge", Prim::GreaterEqual}})
    t.bind(std::string("__") + op.name + "__", binaryOp(op.prim, "self", "other"));
  struct Bit {
    const char *name;
    Prim bitwise, logical;
  };
  for (const Bit &op :
       {Bit{"and", Prim::BitwiseAnd, Prim::LogicalAnd}, Bit{"or", Prim::BitwiseOr, Prim::LogicalOr},
        Bit{"xor", Prim::BitwiseXor, Prim::LogicalXor}}) {
    std::string n = op.name;
    t.bind("__" + n + "__", bitwiseOrLogical(op.bitwise, op.logical, "self", "other"));
    t.bind("__r" + n + "__", bitwiseOrLogical(op.bitwise, op.logical, "other", "self"));
  }
  t.bind("__neg__", unarySame(Prim::Neg, "self"));
  t.bind("__pos__", [](Lowering &L) { L.out(L.in("self")); });
  t.bind("__abs__", unarySame(Prim::Abs, "self"));
  t.bind("__invert__", [](Lowering &L) {
    int x = L.in("self");
    DType d = L.b.meta(x).dtype;
    if (!isIntegral(d) && d != DType::Bool)
      throw CodedError(DiagCode::OpDTypeMismatch,
                       "__invert__(): ~ needs an integer or bool tensor, not " +
                           std::string(dtypeName(d)));
    L.out(L.b.unary(d == DType::Bool ? Prim::LogicalNot : Prim::BitwiseNot, x));
  });
}

} // namespace sotc::ops::lowering
