//===- Indices.h - Index expressions and mesh coordinates as index values ----------------===//
//
// The arithmetic of `index` values a loop nest addresses its buffers with: the kernel
// model's index expressions, the anchor coordinates of a loop point (the mesh steps
// replayed backwards), and the dynamic sizes a kernel takes.
//
//===-------------------------------------------------------------------------------------===//
#ifndef SOTC_CONVERSION_MAPEXPRTOLOOPS_INDICES_H
#define SOTC_CONVERSION_MAPEXPRTOLOOPS_INDICES_H

#include "dialects/mapexpr/Utils/MapExpr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <array>

namespace sotc::mapexpr::loops {

/// Index arithmetic on `index` values.
struct Indices {
  mlir::OpBuilder &b;
  mlir::Location loc;
  sched::SizeStandIns standIns; // the module's
  /// A kernel over dynamic sizes: the call's value of each size it takes (its arguments),
  /// which a size holding that size's stand-in stands for; null for the sizes it does not
  /// take.
  std::array<mlir::Value, sched::kSizeSymbols> sizes{};

  bool dynamic() const;
  mlir::Value c(int64_t v) { return mlir::arith::ConstantIndexOp::create(b, loc, v); }
  /// A size of the model: one that holds powers of the dynamic sizes computed from the
  /// call's (64*s0*s1^2: 64 * s0 * s1 * s1).
  mlir::Value size(int64_t k);
  mlir::Value add(mlir::Value x, mlir::Value y);
  mlir::Value mul(mlir::Value x, int64_t k);
  mlir::Value div(mlir::Value x, int64_t k);
  mlir::Value rem(mlir::Value x, int64_t k);

  /// Row-major flat index of `coords` over `dims`.
  mlir::Value flat(llvm::ArrayRef<mlir::Value> coords, llvm::ArrayRef<int64_t> dims);

  /// Component `k` of flat index `f` over `dims`. A first dim that holds the batch is the
  /// quotient alone: f is in range (which spares a division by the call's rows).
  mlir::Value unflat(mlir::Value f, llvm::ArrayRef<int64_t> dims, size_t k);

  /// Coordinates over `after` as coordinates over `before` (same elements). Where each dim of
  /// `after` is a run of consecutive dims of `before` (a merge), each coordinate splits on its
  /// own: divisions by the run's inner sizes only, and a run of one dim is the coordinate.
  std::vector<mlir::Value> unmerge(llvm::ArrayRef<mlir::Value> coords,
                                   llvm::ArrayRef<int64_t> after, llvm::ArrayRef<int64_t> before);

  /// The value of an index expression at the given anchor coordinates.
  mlir::Value expr(const Expr &e, llvm::ArrayRef<mlir::Value> iters);

  /// The anchor coordinates of a point of the mesh's loop space: the mesh steps replayed
  /// backwards. `inBounds` is null when no step pads, else true where the point is real.
  std::vector<mlir::Value> anchor(const sched::ScheduleMesh &mesh,
                                  llvm::ArrayRef<mlir::Value> loopCoords, mlir::Value &inBounds);
};

} // namespace sotc::mapexpr::loops

#endif // SOTC_CONVERSION_MAPEXPRTOLOOPS_INDICES_H
