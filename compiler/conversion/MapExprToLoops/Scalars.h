//===- Scalars.h - A primitive at one point, on scalars ----------------------------------===//
//
// The arith/math a primitive of an OpStmt becomes at one point of its loops, for both
// targets: casts, elementwise math, comparisons, reductions' identities and accumulation.
//
//===-------------------------------------------------------------------------------------===//
#ifndef SOTC_CONVERSION_MAPEXPRTOLOOPS_SCALARS_H
#define SOTC_CONVERSION_MAPEXPRTOLOOPS_SCALARS_H

#include "compiler/ops/Primitives.h"

#include "mlir/IR/Builders.h"

#include <functional>

namespace sotc::mapexpr::loops {

/// Scalar arithmetic for OpStmts, on the element types sotc's tensors use: floats, signless
/// integers and i1 for bool. Primitives that are one op come from tables keyed by the
/// primitive; the others are composed.
class Scalars {
public:
  Scalars(mlir::OpBuilder &b, mlir::Location loc) : b_(b), loc_(loc) {}

  mlir::Value constant(mlir::Type t, double v);

  mlir::Value cast(mlir::Value x, mlir::Type to);

  /// The primitive `op` on `args`, giving a value of type `out`; null when it is not one.
  mlir::Value apply(ops::Prim op, llvm::ArrayRef<mlir::Value> args, mlir::Type out);

  /// The identity a reduction starts from.
  mlir::Value identity(ops::Prim reduction, mlir::Type t);

  /// acc (+) the statement's contribution at this point.
  /// Float sums and products may reassociate (fastmath<reassoc>): a reduction's order is
  /// not the program's to observe, and it lets the CPU vectorize the row loop. `fuse`: a
  /// float sum of products (a convolution's taps, a matmul's) is one fused multiply-add per
  /// point, for an accumulator of its own (a lane's; a row loop's reduction would no longer
  /// vectorize as one).
  mlir::Value accumulate(ops::Prim reduction, mlir::Value acc, llvm::ArrayRef<mlir::Value> args,
                         bool fuse = false);

private:
  bool isFloat(mlir::Value v) { return mlir::isa<mlir::FloatType>(v.getType()); }

  mlir::Value unary(ops::Prim op, mlir::Value x);

  mlir::Value compare(ops::Prim op, mlir::Value a, mlir::Value c);

  /// An integer quotient or remainder that never traps: a zero divisor gives 0 (numpy's
  /// result; torch raises), and a divisor of -1 (whose INT_MIN quotient overflows a hardware
  /// division) gives -a and 0 by arithmetic.
  mlir::Value integerDivision(mlir::Value a, mlir::Value c, bool remainder,
                              const std::function<mlir::Value(mlir::Value, mlir::Value)> &divide);

  mlir::Value binary(ops::Prim op, mlir::Value a, mlir::Value c);

  mlir::OpBuilder &b_;
  mlir::Location loc_;
};

} // namespace sotc::mapexpr::loops

#endif // SOTC_CONVERSION_MAPEXPRTOLOOPS_SCALARS_H
