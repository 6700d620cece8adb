//===- BuildMapExpr.h - A fusion group (sir.group) as a MapExpr kernel -------------------===//
#ifndef SOTC_MAPEXPR_BUILDMAPEXPR_H
#define SOTC_MAPEXPR_BUILDMAPEXPR_H

#include "compiler/mapexpr/MapExpr.h"
#include "dialects/sir/IR/SirDialect.h"

namespace sotc::mapexpr {

/// Splits the group into AnchoredMapStmts (a new one where a reduction's result is needed
/// whole), picks each anchor, infers every tensor's index from the anchor iterators (a
/// conflict is an error, not a guess) and marks the schedule dims a reduction runs over.
/// Errors are emitted on the group. The result is not scheduled yet.
/// `values`, when given, receives the IR value of each kernel tensor (by tensor id).
mlir::FailureOr<Kernel> buildKernel(sir::GroupOp group, std::vector<mlir::Value> *values = nullptr);

enum class Target { Gpu, Cpu };

/// Chooses the mesh and loops of `a` by the target's policy: GPU injective or reduction,
/// or the CPU parallel + vector loops.
void schedule(AnchoredMapStmt &a, Target target);

} // namespace sotc::mapexpr

#endif // SOTC_MAPEXPR_BUILDMAPEXPR_H
