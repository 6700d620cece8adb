//===- Scalars.cpp - A primitive at one point, on scalars --------------------------------===//
#include "compiler/conversion/MapExprToLoops/Scalars.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <map>

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

namespace {
using ops::Prim;

/// Builds one op of `Op` on the operands: the entries of the tables below, as Linalg's
/// buildUnaryFn and Triton's elementwise table map an operation to what it emits.
template <typename Op> mlir::Value one(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x) {
  return Op::create(b, loc, x);
}
template <typename Op>
mlir::Value two(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y) {
  return Op::create(b, loc, x, y);
}
using Unary = mlir::Value (*)(mlir::OpBuilder &, mlir::Location, mlir::Value);
using Binary = mlir::Value (*)(mlir::OpBuilder &, mlir::Location, mlir::Value, mlir::Value);

/// The float primitives that are one math or arith op.
const std::map<Prim, Unary> &floatUnaries() {
  namespace math = mlir::math;
  static const std::map<Prim, Unary> table = {
      {Prim::Exp, one<math::ExpOp>},
      {Prim::Log, one<math::LogOp>},
      {Prim::Log1p, one<math::Log1pOp>},
      {Prim::Sin, one<math::SinOp>},
      {Prim::Cos, one<math::CosOp>},
      {Prim::Tanh, one<math::TanhOp>},
      {Prim::Sqrt, one<math::SqrtOp>},
      {Prim::Rsqrt, one<math::RsqrtOp>},
      {Prim::Erf, one<math::ErfOp>},
      {Prim::Abs, one<math::AbsFOp>},
      {Prim::Neg, one<mlir::arith::NegFOp>},
      {Prim::Floor, one<math::FloorOp>},
      {Prim::Ceil, one<math::CeilOp>},
      {Prim::Round, one<math::RoundEvenOp>}, // halves to even, as numpy and torch
      {Prim::Tan, one<math::TanOp>},
      {Prim::Asin, one<math::AsinOp>},
      {Prim::Acos, one<math::AcosOp>},
      {Prim::Atan, one<math::AtanOp>},
      {Prim::Sinh, one<math::SinhOp>},
      {Prim::Cosh, one<math::CoshOp>},
      {Prim::Asinh, one<math::AsinhOp>},
      {Prim::Acosh, one<math::AcoshOp>},
      {Prim::Atanh, one<math::AtanhOp>},
      {Prim::Expm1, one<math::ExpM1Op>},
      {Prim::Exp2, one<math::Exp2Op>},
      {Prim::Log2, one<math::Log2Op>},
      {Prim::Log10, one<math::Log10Op>},
      {Prim::Erfc, one<math::ErfcOp>}};
  return table;
}

/// The float and the integer primitives of two operands that are one op.
const std::map<Prim, Binary> &floatBinaries() {
  namespace arith = mlir::arith;
  static const std::map<Prim, Binary> table = {
      {Prim::Add, two<arith::AddFOp>},
      {Prim::Sub, two<arith::SubFOp>},
      {Prim::Mul, two<arith::MulFOp>},
      {Prim::Div, two<arith::DivFOp>},
      {Prim::Pow, two<mlir::math::PowFOp>},
      {Prim::Max, two<arith::MaximumFOp>},
      {Prim::Min, two<arith::MinimumFOp>},
      {Prim::Atan2, two<mlir::math::Atan2Op>},
      {Prim::Copysign, two<mlir::math::CopySignOp>},
      {Prim::Fmod, two<arith::RemFOp>}}; // C's fmod: the sign of the dividend
  return table;
}

const std::map<Prim, Binary> &integerBinaries() {
  namespace arith = mlir::arith;
  static const std::map<Prim, Binary> table = {
      {Prim::Add, two<arith::AddIOp>},        {Prim::Sub, two<arith::SubIOp>},
      {Prim::Mul, two<arith::MulIOp>},        {Prim::Pow, two<mlir::math::IPowIOp>},
      {Prim::LogicalAnd, two<arith::AndIOp>}, {Prim::BitwiseAnd, two<arith::AndIOp>},
      {Prim::LogicalOr, two<arith::OrIOp>},   {Prim::BitwiseOr, two<arith::OrIOp>},
      {Prim::LogicalXor, two<arith::XOrIOp>}, {Prim::BitwiseXor, two<arith::XOrIOp>}};
  return table;
}
} // namespace

mlir::Value Scalars::apply(Prim op, llvm::ArrayRef<mlir::Value> args, mlir::Type out) {
  switch (op) {
  case Prim::Cast:
    return cast(args[0], out);
  case Prim::BroadcastTo:
  case Prim::Reshape:
  case Prim::Transpose:
  case Prim::Slice:
    return args[0]; // the index expressions did the moving
  case Prim::Select:
    return mlir::arith::SelectOp::create(b_, loc_, args[0], args[1], args[2]);
  default:
    break;
  }
  if (args.size() == 1)
    return unary(op, args[0]);
  if (args.size() == 2)
    return binary(op, args[0], args[1]);
  return {};
}

mlir::Value Scalars::identity(Prim reduction, mlir::Type t) {
  if (reduction == Prim::ReduceProd)
    return constant(t, 1);
  if (reduction == Prim::ReduceMax || reduction == Prim::ReduceMin) {
    bool max = reduction == Prim::ReduceMax;
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

mlir::Value Scalars::accumulate(Prim reduction, mlir::Value acc, llvm::ArrayRef<mlir::Value> args,
                                bool fuse) {
  mlir::Value x = cast(args[0], acc.getType());
  if (fuse && isFloat(acc) && (reduction == Prim::Matmul || reduction == Prim::ReduceSum)) {
    if (reduction == Prim::Matmul)
      return mlir::math::FmaOp::create(b_, loc_, x, cast(args[1], acc.getType()), acc);
    if (auto product = x.getDefiningOp<mlir::arith::MulFOp>())
      return mlir::math::FmaOp::create(b_, loc_, product.getLhs(), product.getRhs(), acc);
  }
  if (reduction == Prim::Matmul)
    x = binary(Prim::Mul, x, cast(args[1], acc.getType()));
  if (!isFloat(acc) ||
      (reduction != Prim::ReduceSum && reduction != Prim::ReduceProd && reduction != Prim::Matmul))
    return binary(reduction == Prim::ReduceMax    ? Prim::Max
                  : reduction == Prim::ReduceMin  ? Prim::Min
                  : reduction == Prim::ReduceProd ? Prim::Mul
                                                  : Prim::Add,
                  acc, x);
  auto reassoc =
      mlir::arith::FastMathFlagsAttr::get(b_.getContext(), mlir::arith::FastMathFlags::reassoc);
  if (reduction == Prim::ReduceProd)
    return mlir::arith::MulFOp::create(b_, loc_, acc, x, reassoc);
  return mlir::arith::AddFOp::create(b_, loc_, acc, x, reassoc);
}

mlir::Value Scalars::unary(Prim op, mlir::Value x) {
  mlir::Type t = x.getType();
  if (isFloat(x)) {
    if (auto it = floatUnaries().find(op); it != floatUnaries().end())
      return it->second(b_, loc_, x);
    if (op == Prim::Trunc) { // floor or ceil by the sign: convert-gpu-to-nvvm leaves math.trunc
      mlir::Value zero = mlir::arith::ConstantOp::create(b_, loc_, b_.getZeroAttr(x.getType()));
      mlir::Value negative =
          mlir::arith::CmpFOp::create(b_, loc_, mlir::arith::CmpFPredicate::OLT, x, zero);
      return mlir::arith::SelectOp::create(b_, loc_, negative,
                                           mlir::math::CeilOp::create(b_, loc_, x),
                                           mlir::math::FloorOp::create(b_, loc_, x));
    }
  } else {
    switch (op) {
    case Prim::Abs: // max(x, -x): arith, which both targets lower (math.absi has no NVVM path)
      return mlir::arith::MaxSIOp::create(b_, loc_, x,
                                          mlir::arith::SubIOp::create(b_, loc_, constant(t, 0), x));
    case Prim::Neg:
      return mlir::arith::SubIOp::create(b_, loc_, constant(t, 0), x);
    case Prim::Floor:
    case Prim::Ceil:
    case Prim::Round:
    case Prim::Trunc:
      return x;
    case Prim::LogicalNot:
    case Prim::BitwiseNot: // xor with all ones (true for i1)
      return mlir::arith::XOrIOp::create(b_, loc_, x, constant(t, -1));
    default:
      break;
    }
  }
  if (op == Prim::Sign) { // (x > 0) - (x < 0)
    mlir::Value pos = cast(compare(Prim::Greater, x, constant(t, 0)), t);
    mlir::Value neg = cast(compare(Prim::Less, x, constant(t, 0)), t);
    return binary(Prim::Sub, pos, neg);
  }
  return {};
}

mlir::Value Scalars::compare(Prim op, mlir::Value a, mlir::Value c) {
  using FP = mlir::arith::CmpFPredicate;
  using IP = mlir::arith::CmpIPredicate;
  static const std::map<Prim, std::pair<FP, IP>> preds = {
      {Prim::Less, {FP::OLT, IP::slt}},    {Prim::LessEqual, {FP::OLE, IP::sle}},
      {Prim::Equal, {FP::OEQ, IP::eq}},    {Prim::NotEqual, {FP::UNE, IP::ne}},
      {Prim::Greater, {FP::OGT, IP::sgt}}, {Prim::GreaterEqual, {FP::OGE, IP::sge}}};
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
  mlir::Value byZero = compare(Prim::Equal, c, zero);
  mlir::Value byMinusOne =
      t.isInteger(1) ? mlir::Value() : compare(Prim::Equal, c, constant(t, -1));
  mlir::Value special =
      byMinusOne ? mlir::arith::OrIOp::create(b_, loc_, byZero, byMinusOne).getResult() : byZero;
  mlir::Value r = divide(a, mlir::arith::SelectOp::create(b_, loc_, special, one, c));
  if (byMinusOne)
    r = mlir::arith::SelectOp::create(b_, loc_, byMinusOne,
                                      remainder ? zero : binary(Prim::Sub, zero, a), r);
  return mlir::arith::SelectOp::create(b_, loc_, byZero, zero, r);
}

mlir::Value Scalars::binary(Prim op, mlir::Value a, mlir::Value c) {
  if (mlir::Value cmp = compare(op, a, c))
    return cmp;
  if (isFloat(a)) {
    if (auto it = floatBinaries().find(op); it != floatBinaries().end())
      return it->second(b_, loc_, a, c);
    if (op == Prim::FloorDiv)
      return mlir::math::FloorOp::create(b_, loc_, mlir::arith::DivFOp::create(b_, loc_, a, c));
    if (op == Prim::Mod) // Python's: a - floor(a / c) * c, the sign of the divisor
      return binary(Prim::Sub, a, binary(Prim::Mul, binary(Prim::FloorDiv, a, c), c));
    return {};
  }
  bool boolean = a.getType().isInteger(1);
  switch (op) {
  case Prim::Div:
  case Prim::FloorDiv:
    return integerDivision(a, c, /*remainder=*/false, [&](mlir::Value x, mlir::Value d) {
      return mlir::arith::FloorDivSIOp::create(b_, loc_, x, d).getResult();
    });
  case Prim::Fmod: // C's %: truncating, the sign of the dividend
    return integerDivision(a, c, /*remainder=*/true, [&](mlir::Value x, mlir::Value d) {
      return mlir::arith::RemSIOp::create(b_, loc_, x, d).getResult();
    });
  case Prim::Mod: // a - floordiv(a, c) * c
    return integerDivision(a, c, /*remainder=*/true, [&](mlir::Value x, mlir::Value d) {
      mlir::Value q = mlir::arith::FloorDivSIOp::create(b_, loc_, x, d);
      return binary(Prim::Sub, x, binary(Prim::Mul, q, d));
    });
  case Prim::Max: // of bools: or
    return boolean ? mlir::arith::OrIOp::create(b_, loc_, a, c).getResult()
                   : mlir::arith::MaxSIOp::create(b_, loc_, a, c).getResult();
  case Prim::Min: // of bools: and
    return boolean ? mlir::arith::AndIOp::create(b_, loc_, a, c).getResult()
                   : mlir::arith::MinSIOp::create(b_, loc_, a, c).getResult();
  default:
    break;
  }
  if (auto it = integerBinaries().find(op); it != integerBinaries().end())
    return it->second(b_, loc_, a, c);
  return {};
}

} // namespace sotc::mapexpr::loops
