//===- BuildMapExpr.h - A fusion group (sir.group) as a MapExpr kernel -------------------===//
#ifndef SOTC_MAPEXPR_BUILDMAPEXPR_H
#define SOTC_MAPEXPR_BUILDMAPEXPR_H

#include "compiler/mapexpr/MapExpr.h"
#include "dialects/sir/IR/SirDialect.h"

namespace sotc::mapexpr {

/// Splits the group into AnchoredMapStmts (a new one where a reduction's result is needed
/// whole), picks each anchor (its largest tensor), infers every tensor's index from the
/// anchor iterators (a conflict is an error, not a guess), and schedules each anchor space
/// with the GPU policies. Errors are emitted on the group.
mlir::FailureOr<Kernel> buildKernel(sir::GroupOp group);

} // namespace sotc::mapexpr

#endif // SOTC_MAPEXPR_BUILDMAPEXPR_H
