//===- Scalars.cpp - A primitive at one point, on scalars --------------------------------===//
#include "compiler/conversion/MapExprToLoops/Scalars.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace sotc::mapexpr::loops {

mlir::Value Scalars::constant(mlir::Type t, double v) {
  if (auto f = mlir::dyn_cast<mlir::FloatType>(t))
    return mlir::arith::ConstantOp::create(b_, loc_, b_.getFloatAttr(f, v));
  return mlir::arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(t, static_cast<int64_t>(v)));
}

mlir::Value Scalars::cast(mlir::Value x, mlir::Type to) {
  mlir::Type from = x.getType();
  if (from == to)
    return x;
  bool fromF = mlir::isa<mlir::FloatType>(from), toF = mlir::isa<mlir::FloatType>(to);
  if (to.isInteger(1)) // bool(x): nonzero
    return fromF ? mlir::arith::CmpFOp::create(b_, loc_, mlir::arith::CmpFPredicate::UNE, x,
                                               constant(from, 0))
                       .getResult()
                 : mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::ne, x,
                                               constant(from, 0))
                       .getResult();
  if (fromF && toF)
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? mlir::arith::ExtFOp::create(b_, loc_, to, x).getResult()
               : mlir::arith::TruncFOp::create(b_, loc_, to, x).getResult();
  if (fromF)
    return mlir::arith::FPToSIOp::create(b_, loc_, to, x);
  if (toF) // bool converts as unsigned (true is 1, not -1)
    return from.isInteger(1) ? mlir::arith::UIToFPOp::create(b_, loc_, to, x).getResult()
                             : mlir::arith::SIToFPOp::create(b_, loc_, to, x).getResult();
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return from.isInteger(1) ? mlir::arith::ExtUIOp::create(b_, loc_, to, x).getResult()
                             : mlir::arith::ExtSIOp::create(b_, loc_, to, x).getResult();
  return mlir::arith::TruncIOp::create(b_, loc_, to, x);
}

mlir::Value Scalars::apply(const std::string &op, llvm::ArrayRef<mlir::Value> args,
                           mlir::Type out) {
  if (op == "cast")
    return cast(args[0], out);
  if (op == "broadcast_to" || op == "reshape" || op == "transpose" || op == "slice")
    return args[0]; // the index expressions did the moving
  if (op == "select")
    return mlir::arith::SelectOp::create(b_, loc_, args[0], args[1], args[2]);
  if (args.size() == 1)
    return unary(op, args[0]);
  if (args.size() == 2)
    return binary(op, args[0], args[1]);
  return {};
}

mlir::Value Scalars::identity(const std::string &reduction, mlir::Type t) {
  if (reduction == "reduce_prod")
    return constant(t, 1);
  if (reduction == "reduce_max" || reduction == "reduce_min") {
    bool max = reduction == "reduce_max";
    if (auto f = mlir::dyn_cast<mlir::FloatType>(t))
      return mlir::arith::ConstantOp::create(
          b_, loc_, b_.getFloatAttr(f, llvm::APFloat::getInf(f.getFloatSemantics(), max)));
    unsigned w = t.getIntOrFloatBitWidth();
    llvm::APInt v = w == 1 ? llvm::APInt(1, max ? 0 : 1)
                    : max  ? llvm::APInt::getSignedMinValue(w)
                           : llvm::APInt::getSignedMaxValue(w);
    return mlir::arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(t, v));
  }
  return constant(t, 0); // reduce_sum, matmul
}

mlir::Value Scalars::accumulate(const std::string &reduction, mlir::Value acc,
                                llvm::ArrayRef<mlir::Value> args, bool fuse) {
  mlir::Value x = cast(args[0], acc.getType());
  if (fuse && isFloat(acc) && (reduction == "matmul" || reduction == "reduce_sum")) {
    if (reduction == "matmul")
      return mlir::math::FmaOp::create(b_, loc_, x, cast(args[1], acc.getType()), acc);
    if (auto product = x.getDefiningOp<mlir::arith::MulFOp>())
      return mlir::math::FmaOp::create(b_, loc_, product.getLhs(), product.getRhs(), acc);
  }
  if (reduction == "matmul")
    x = binary("multiply", x, cast(args[1], acc.getType()));
  if (!isFloat(acc) ||
      (reduction != "reduce_sum" && reduction != "reduce_prod" && reduction != "matmul"))
    return binary(reduction == "reduce_max"    ? "max"
                  : reduction == "reduce_min"  ? "min"
                  : reduction == "reduce_prod" ? "multiply"
                                               : "add",
                  acc, x);
  auto reassoc =
      mlir::arith::FastMathFlagsAttr::get(b_.getContext(), mlir::arith::FastMathFlags::reassoc);
  if (reduction == "reduce_prod")
    return mlir::arith::MulFOp::create(b_, loc_, acc, x, reassoc);
  return mlir::arith::AddFOp::create(b_, loc_, acc, x, reassoc);
}

mlir::Value Scalars::unary(const std::string &op, mlir::Value x) {
  mlir::Type t = x.getType();
  if (isFloat(x)) {
    if (op == "exp")
      return mlir::math::ExpOp::create(b_, loc_, x);
    if (op == "log")
      return mlir::math::LogOp::create(b_, loc_, x);
    if (op == "log1p")
      return mlir::math::Log1pOp::create(b_, loc_, x);
    if (op == "sin")
      return mlir::math::SinOp::create(b_, loc_, x);
    if (op == "cos")
      return mlir::math::CosOp::create(b_, loc_, x);
    if (op == "tanh")
      return mlir::math::TanhOp::create(b_, loc_, x);
    if (op == "sqrt")
      return mlir::math::SqrtOp::create(b_, loc_, x);
    if (op == "rsqrt")
      return mlir::math::RsqrtOp::create(b_, loc_, x);
    if (op == "erf")
      return mlir::math::ErfOp::create(b_, loc_, x);
    if (op == "abs")
      return mlir::math::AbsFOp::create(b_, loc_, x);
    if (op == "neg")
      return mlir::arith::NegFOp::create(b_, loc_, x);
    if (op == "floor")
      return mlir::math::FloorOp::create(b_, loc_, x);
    if (op == "ceil")
      return mlir::math::CeilOp::create(b_, loc_, x);
    if (op == "round") // halves to even, as numpy and torch
      return mlir::math::RoundEvenOp::create(b_, loc_, x);
    if (op == "trunc") { // floor or ceil by the sign: convert-gpu-to-nvvm leaves math.trunc
      mlir::Value zero = mlir::arith::ConstantOp::create(b_, loc_, b_.getZeroAttr(x.getType()));
      mlir::Value negative =
          mlir::arith::CmpFOp::create(b_, loc_, mlir::arith::CmpFPredicate::OLT, x, zero);
      return mlir::arith::SelectOp::create(b_, loc_, negative,
                                           mlir::math::CeilOp::create(b_, loc_, x),
                                           mlir::math::FloorOp::create(b_, loc_, x));
    }
    if (op == "tan")
      return mlir::math::TanOp::create(b_, loc_, x);
    if (op == "asin")
      return mlir::math::AsinOp::create(b_, loc_, x);
    if (op == "acos")
      return mlir::math::AcosOp::create(b_, loc_, x);
    if (op == "atan")
      return mlir::math::AtanOp::create(b_, loc_, x);
    if (op == "sinh")
      return mlir::math::SinhOp::create(b_, loc_, x);
    if (op == "cosh")
      return mlir::math::CoshOp::create(b_, loc_, x);
    if (op == "asinh")
      return mlir::math::AsinhOp::create(b_, loc_, x);
    if (op == "acosh")
      return mlir::math::AcoshOp::create(b_, loc_, x);
    if (op == "atanh")
      return mlir::math::AtanhOp::create(b_, loc_, x);
    if (op == "expm1")
      return mlir::math::ExpM1Op::create(b_, loc_, x);
    if (op == "exp2")
      return mlir::math::Exp2Op::create(b_, loc_, x);
    if (op == "log2")
      return mlir::math::Log2Op::create(b_, loc_, x);
    if (op == "log10")
      return mlir::math::Log10Op::create(b_, loc_, x);
    if (op == "erfc")
      return mlir::math::ErfcOp::create(b_, loc_, x);
  } else {
    if (op == "abs") // max(x, -x): arith, which both targets lower (math.absi has no NVVM path)
      return mlir::arith::MaxSIOp::create(b_, loc_, x,
                                          mlir::arith::SubIOp::create(b_, loc_, constant(t, 0), x));
    if (op == "neg")
      return mlir::arith::SubIOp::create(b_, loc_, constant(t, 0), x);
    if (op == "floor" || op == "ceil" || op == "round" || op == "trunc")
      return x;
    if (op == "logical_not" || op == "bitwise_not") // xor with all ones (true for i1)
      return mlir::arith::XOrIOp::create(b_, loc_, x, constant(t, -1));
  }
  if (op == "sign") { // (x > 0) - (x < 0)
    mlir::Value pos = cast(compare("greater_than", x, constant(t, 0)), t);
    mlir::Value neg = cast(compare("less_than", x, constant(t, 0)), t);
    return binary("subtract", pos, neg);
  }
  return {};
}

mlir::Value Scalars::compare(const std::string &op, mlir::Value a, mlir::Value c) {
  using FP = mlir::arith::CmpFPredicate;
  using IP = mlir::arith::CmpIPredicate;
  static const std::map<std::string, std::pair<FP, IP>> preds = {
      {"less_than", {FP::OLT, IP::slt}},    {"less_equal", {FP::OLE, IP::sle}},
      {"equal", {FP::OEQ, IP::eq}},         {"not_equal", {FP::UNE, IP::ne}},
      {"greater_than", {FP::OGT, IP::sgt}}, {"greater_equal", {FP::OGE, IP::sge}}};
  auto it = preds.find(op);
  if (it == preds.end())
    return {};
  if (isFloat(a))
    return mlir::arith::CmpFOp::create(b_, loc_, it->second.first, a, c);
  return mlir::arith::CmpIOp::create(b_, loc_, it->second.second, a, c);
}

mlir::Value
Scalars::integerDivision(mlir::Value a, mlir::Value c, bool remainder,
                         const std::function<mlir::Value(mlir::Value, mlir::Value)> &divide) {
  mlir::Type t = a.getType();
  mlir::Value zero = constant(t, 0), one = constant(t, 1);
  mlir::Value byZero = compare("equal", c, zero);
  mlir::Value byMinusOne = t.isInteger(1) ? mlir::Value() : compare("equal", c, constant(t, -1));
  mlir::Value special =
      byMinusOne ? mlir::arith::OrIOp::create(b_, loc_, byZero, byMinusOne).getResult() : byZero;
  mlir::Value r = divide(a, mlir::arith::SelectOp::create(b_, loc_, special, one, c));
  if (byMinusOne)
    r = mlir::arith::SelectOp::create(b_, loc_, byMinusOne,
                                      remainder ? zero : binary("subtract", zero, a), r);
  return mlir::arith::SelectOp::create(b_, loc_, byZero, zero, r);
}

mlir::Value Scalars::binary(const std::string &op, mlir::Value a, mlir::Value c) {
  if (mlir::Value cmp = compare(op, a, c))
    return cmp;
  if (isFloat(a)) {
    if (op == "add")
      return mlir::arith::AddFOp::create(b_, loc_, a, c);
    if (op == "subtract")
      return mlir::arith::SubFOp::create(b_, loc_, a, c);
    if (op == "multiply")
      return mlir::arith::MulFOp::create(b_, loc_, a, c);
    if (op == "divide")
      return mlir::arith::DivFOp::create(b_, loc_, a, c);
    if (op == "floor_divide")
      return mlir::math::FloorOp::create(b_, loc_, mlir::arith::DivFOp::create(b_, loc_, a, c));
    if (op == "remainder") // Python's: a - floor(a / c) * c, the sign of the divisor
      return binary("subtract", a, binary("multiply", binary("floor_divide", a, c), c));
    if (op == "pow")
      return mlir::math::PowFOp::create(b_, loc_, a, c);
    if (op == "max")
      return mlir::arith::MaximumFOp::create(b_, loc_, a, c);
    if (op == "min")
      return mlir::arith::MinimumFOp::create(b_, loc_, a, c);
    if (op == "atan2")
      return mlir::math::Atan2Op::create(b_, loc_, a, c);
    if (op == "copysign")
      return mlir::math::CopySignOp::create(b_, loc_, a, c);
    if (op == "fmod") // C's fmod: the sign of the dividend
      return mlir::arith::RemFOp::create(b_, loc_, a, c);
    return {};
  }
  if (op == "add")
    return mlir::arith::AddIOp::create(b_, loc_, a, c);
  if (op == "subtract")
    return mlir::arith::SubIOp::create(b_, loc_, a, c);
  if (op == "multiply")
    return mlir::arith::MulIOp::create(b_, loc_, a, c);
  if (op == "divide" || op == "floor_divide")
    return integerDivision(a, c, /*remainder=*/false, [&](mlir::Value x, mlir::Value d) {
      return mlir::arith::FloorDivSIOp::create(b_, loc_, x, d).getResult();
    });
  if (op == "fmod") // C's %: truncating, the sign of the dividend
    return integerDivision(a, c, /*remainder=*/true, [&](mlir::Value x, mlir::Value d) {
      return mlir::arith::RemSIOp::create(b_, loc_, x, d).getResult();
    });
  if (op == "remainder") // a - floordiv(a, c) * c
    return integerDivision(a, c, /*remainder=*/true, [&](mlir::Value x, mlir::Value d) {
      mlir::Value q = mlir::arith::FloorDivSIOp::create(b_, loc_, x, d);
      return binary("subtract", x, binary("multiply", q, d));
    });
  if (op == "pow")
    return mlir::math::IPowIOp::create(b_, loc_, a, c);
  if (op == "max")
    return a.getType().isInteger(1) ? mlir::arith::OrIOp::create(b_, loc_, a, c).getResult()
                                    : mlir::arith::MaxSIOp::create(b_, loc_, a, c).getResult();
  if (op == "min")
    return a.getType().isInteger(1) ? mlir::arith::AndIOp::create(b_, loc_, a, c).getResult()
                                    : mlir::arith::MinSIOp::create(b_, loc_, a, c).getResult();
  if (op == "logical_and" || op == "bitwise_and")
    return mlir::arith::AndIOp::create(b_, loc_, a, c);
  if (op == "logical_or" || op == "bitwise_or")
    return mlir::arith::OrIOp::create(b_, loc_, a, c);
  if (op == "logical_xor" || op == "bitwise_xor")
    return mlir::arith::XOrIOp::create(b_, loc_, a, c);
  return {};
}

} // namespace sotc::mapexpr::loops
