//===- LowerElementwise.cpp - Lowerings: elementwise math, comparisons, logic, casts ----------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <cmath>

namespace sotc::ops::lowering {

void registerElementwise(OpTable &t) {
  struct Binary {
    const char *paddle;
    const char *torch;
    Prim prim;
    bool floatResult;
  };
  const Binary binaries[] = {
      {"add", "add", Prim::Add, false},
      {"subtract", "sub", Prim::Sub, false},
      {"multiply", "mul", Prim::Mul, false},
      {"divide", "div", Prim::Div, true},
      {"floor_divide", "floor_divide", Prim::FloorDiv, false},
      {"remainder", "remainder", Prim::Mod, false},
      {"pow", "pow", Prim::Pow, false},
      {"maximum", "maximum", Prim::Max, false},
      {"minimum", "minimum", Prim::Min, false},
  };
  for (const Binary &op : binaries) {
    paddleLower(t, op.paddle, binaryOp(op.prim, "x", "y", op.floatResult));
    bool withAlpha = op.prim == Prim::Add || op.prim == Prim::Sub;
    std::string other = op.prim == Prim::Pow ? "exponent" : "other";
    LowerFn torchFn = binaryOp(op.prim, "input", other, op.floatResult);
    if (withAlpha) {
      Prim prim = op.prim;
      torchFn = [prim](Lowering &L) { // input ± alpha * other
        Operands o = promoteOperands(L, "input", "other");
        int y = L.args.scalar("alpha") == 1
                    ? o.y
                    : L.b.binaryScalar(Prim::Mul, o.y, L.args.scalar("alpha"));
        L.out(L.b.binary(prim, o.x, y, o.dtype));
      };
    }
    if (op.prim == Prim::Div) {
      torchFn = [](Lowering &L) { // torch.div's rounding_mode
        Operands o = promoteOperands(L, "input", "other");
        std::string mode = L.args.isNone("rounding_mode")
                               ? ""
                               : L.args.get("rounding_mode").stringValue;
        if (mode == "floor")
          return L.out(L.b.binary(Prim::FloorDiv, o.x, o.y, o.dtype));
        int q = L.b.binary(Prim::Div, o.x, o.y, floatingResult(o.dtype));
        if (mode.empty())
          return L.out(q);
        if (mode != "trunc")
          badValue(L, "rounding_mode must be 'floor', 'trunc' or None, not '" + mode + "'");
        L.out(L.b.cast(L.b.unary(Prim::Trunc, q), o.dtype));
      };
    }
    torchLower(t, op.torch, torchFn);
  }

  struct Unary {
    const char *name;
    Prim prim;
    bool floating;
    bool torch;
  };
  const Unary unaries[] = {
      {"exp", Prim::Exp, true, true},      {"log", Prim::Log, true, true},
      {"log1p", Prim::Log1p, true, true},  {"sin", Prim::Sin, true, true},
      {"cos", Prim::Cos, true, true},      {"tanh", Prim::Tanh, true, true},
      {"sqrt", Prim::Sqrt, true, true},    {"rsqrt", Prim::Rsqrt, true, true},
      {"erf", Prim::Erf, true, true},      {"abs", Prim::Abs, false, true},
      {"neg", Prim::Neg, false, true},     {"sign", Prim::Sign, false, true},
      {"floor", Prim::Floor, false, true}, {"ceil", Prim::Ceil, false, true},
      {"round", Prim::Round, false, true},
  };
  for (const Unary &op : unaries) {
    paddleLower(t, op.name, op.floating ? unaryFloat(op.prim, "x") : unarySame(op.prim, "x"));
    if (op.torch)
      torchLower(t, op.name,
                 op.floating ? unaryFloat(op.prim, "input") : unarySame(op.prim, "input"));
  }

  auto sigmoidLower = [](std::string xn) {
    return [xn](Lowering &L) { L.out(sigmoid(L.b, floatInput(L, xn))); };
  };
  paddleLower(t, "nn.functional.sigmoid", sigmoidLower("x"), false);
  t.bind("Tensor.sigmoid", sigmoidLower("x"));
  torchLower(t, "sigmoid", sigmoidLower("input"));

  auto reciprocal = [](std::string xn) {
    return [xn](Lowering &L) {
      int x = floatInput(L, xn);
      L.out(L.b.binary(Prim::Div, L.b.fill(1, {}, L.b.meta(x).dtype), x));
    };
  };
  paddleLower(t, "reciprocal", reciprocal("x"));
  torchLower(t, "reciprocal", reciprocal("input"));
  auto square = [](std::string xn) {
    return [xn](Lowering &L) { L.out(L.b.binary(Prim::Mul, L.in(xn), L.in(xn))); };
  };
  paddleLower(t, "square", square("x"));
  torchLower(t, "square", square("input"));

  auto clipLower = [](std::string xn, std::string lo, std::string hi) {
    return [=](Lowering &L) { L.out(clip(L, L.in(xn), lo, hi)); };
  };
  paddleLower(t, "clip", clipLower("x", "min", "max"));
  torchLower(t, "clamp", clipLower("input", "min", "max"));
  torchLower(t, "clamp_min", clipLower("input", "min", ""));
  torchLower(t, "clamp_max", clipLower("input", "", "max"));

  auto whereLower = [](std::string c, std::string xn, std::string yn) {
    return [=](Lowering &L) {
      Operands o = promoteOperands(L, xn, yn);
      L.out(L.b.select(L.in(c), o.x, o.y));
    };
  };
  // masked_fill: the value (a scalar, or a tensor cast to x's dtype) where the mask is true.
  auto maskedFill = [](std::string xn) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      DType dtype = L.b.meta(x).dtype;
      int value = L.args.get("value").isTensor() ? L.b.cast(L.in("value"), dtype)
                                                 : L.b.fill(L.args.scalar("value"), {}, dtype);
      L.out(L.b.select(L.in("mask"), value, x));
    };
  };
  paddleLower(t, "masked_fill", maskedFill("x"));
  torchLower(t, "masked_fill", maskedFill("input"));
  paddleLower(t, "where", whereLower("condition", "x", "y"), false);
  torchLower(t, "where", whereLower("condition", "input", "other"), false);

  struct Compare {
    const char *paddle;
    const char *torch;
    Prim prim;
  };
  const Compare compares[] = {
      {"equal", "eq", Prim::Equal},          {"not_equal", "ne", Prim::NotEqual},
      {"less_than", "lt", Prim::Less},       {"less_equal", "le", Prim::LessEqual},
      {"greater_than", "gt", Prim::Greater}, {"greater_equal", "ge", Prim::GreaterEqual},
  };
  for (const Compare &op : compares) {
    paddleLower(t, op.paddle, binaryOp(op.prim, "x", "y"));
    torchLower(t, op.torch, binaryOp(op.prim, "input", "other"));
  }
  struct Logical {
    const char *name;
    Prim prim;
  };
  for (const Logical &op :
       {Logical{"logical_and", Prim::LogicalAnd}, Logical{"logical_or", Prim::LogicalOr},
        Logical{"logical_xor", Prim::LogicalXor}}) {
    auto lower = [prim = op.prim](std::string xn, std::string yn) {
      return [=](Lowering &L) { L.out(L.b.binary(prim, L.in(xn), L.in(yn), DType::Bool)); };
    };
    paddleLower(t, op.name, lower("x", "y"));
    torchLower(t, op.name, lower("input", "other"));
  }
  auto logicalNot = [](std::string xn) {
    return
        [xn](Lowering &L) { L.out(L.b.unary(Prim::LogicalNot, L.b.cast(L.in(xn), DType::Bool))); };
  };
  paddleLower(t, "logical_not", logicalNot("x"));
  torchLower(t, "logical_not", logicalNot("input"));

  auto castLower = [](std::string xn, std::string dtype) {
    return [=](Lowering &L) { L.out(L.b.cast(L.in(xn), L.args.get(dtype).dtypeValue)); };
  };
  paddleLower(t, "cast", castLower("x", "dtype"));
  t.bind("Tensor.astype", castLower("x", "dtype"));
  t.bind("torch.Tensor.type", castLower("input", "dtype"));
  t.bind("torch.Tensor.type_as",
         [](Lowering &L) { L.out(L.b.cast(L.in("input"), L.b.meta(L.in("other")).dtype)); });
  // x.to(dtype), x.to(device[, dtype]): where the tensor lives is the artifact's business.
  t.bind("torch.Tensor.to", [](Lowering &L) {
    int x = L.in("input");
    if (L.args.signature().find("other"))
      return L.out(L.b.cast(x, L.b.meta(L.in("other")).dtype));
    L.out(L.args.isNone("dtype") ? x : L.b.cast(x, L.args.get("dtype").dtypeValue));
  });
  // The call's result is a new tensor variable; its value is the input's.
  for (const char *name : {"torch.Tensor.contiguous", "torch.Tensor.clone", "torch.clone",
                           "torch.Tensor.detach"})
    t.bind(name, [](Lowering &L) { L.out(L.in("input")); });
  for (const char *name : {"paddle.clone", "Tensor.clone", "Tensor.detach"})
    t.bind(name, [](Lowering &L) { L.out(L.in("x")); });
  // x.float(), x.long(), ...: a cast to the dtype the method names.
  for (auto [method, dtype] : {std::pair{"float", DType::Float32}, {"double", DType::Float64},
                               {"half", DType::Float16}, {"bfloat16", DType::BFloat16},
                               {"int", DType::Int32}, {"long", DType::Int64},
                               {"bool", DType::Bool}})
    t.bind(std::string("torch.Tensor.") + method,
           [dtype = dtype](Lowering &L) { L.out(L.b.cast(L.in("input"), dtype)); });
}

} // namespace sotc::ops::lowering
