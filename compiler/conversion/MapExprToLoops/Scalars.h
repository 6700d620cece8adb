//===- Scalars.h - A primitive at one point, on scalars ----------------------------------===//
//
// The arith/math a primitive of an OpStmt becomes at one point of its loops, for both
// targets: casts, elementwise math, comparisons, reductions' identities and accumulation.
//
//===-------------------------------------------------------------------------------------===//
#ifndef SOTC_CONVERSION_MAPEXPRTOLOOPS_SCALARS_H
#define SOTC_CONVERSION_MAPEXPRTOLOOPS_SCALARS_H

#include "mlir/IR/Builders.h"

#include <functional>
#include <string>

namespace sotc::mapexpr::loops {

/// `reduce_sum_acc` -> `reduce_sum`
inline std::string reductionOf(const std::string &op) { return op.substr(0, op.rfind('_')); }

/// Scalar arithmetic for OpStmts, on the element types sotc's tensors use: floats, signless
/// integers and i1 for bool.
class Scalars {
public:
  Scalars(mlir::OpBuilder &b, mlir::Location loc) : b_(b), loc_(loc) {}

  mlir::Value constant(mlir::Type t, double v);

  mlir::Value cast(mlir::Value x, mlir::Type to);

  /// The primitive `op` on `args`, giving a value of type `out`; null when it is not one.
  mlir::Value apply(const std::string &op, llvm::ArrayRef<mlir::Value> args, mlir::Type out);

  /// The identity a reduction starts from.
  mlir::Value identity(const std::string &reduction, mlir::Type t);

  /// acc (+) the statement's contribution at this point.
  /// Float sums and products may reassociate (fastmath<reassoc>): a reduction's order is
  /// not the program's to observe, and it lets the CPU vectorize the row loop. `fuse`: a
  /// float sum of products (a convolution's taps, a matmul's) is one fused multiply-add per
  /// point, for an accumulator of its own (a lane's; a row loop's reduction would no longer
  /// vectorize as one).
  mlir::Value accumulate(const std::string &reduction, mlir::Value acc,
                         llvm::ArrayRef<mlir::Value> args, bool fuse = false);

private:
  bool isFloat(mlir::Value v) { return mlir::isa<mlir::FloatType>(v.getType()); }

  mlir::Value unary(const std::string &op, mlir::Value x);

  mlir::Value compare(const std::string &op, mlir::Value a, mlir::Value c);

  /// An integer quotient or remainder that never traps: a zero divisor gives 0 (numpy's
  /// result; torch raises), and a divisor of -1 (whose INT_MIN quotient overflows a hardware
  /// division) gives -a and 0 by arithmetic.
  mlir::Value integerDivision(mlir::Value a, mlir::Value c, bool remainder,
                              const std::function<mlir::Value(mlir::Value, mlir::Value)> &divide);

  mlir::Value binary(const std::string &op, mlir::Value a, mlir::Value c);

  mlir::OpBuilder &b_;
  mlir::Location loc_;
};

} // namespace sotc::mapexpr::loops

#endif // SOTC_CONVERSION_MAPEXPRTOLOOPS_SCALARS_H
