//===- BuildKernel.h - A fusion group (sir.group) as a MapExpr kernel --------------------===//
#ifndef SOTC_CONVERSION_SIRTOMAPEXPR_BUILDKERNEL_H
#define SOTC_CONVERSION_SIRTOMAPEXPR_BUILDKERNEL_H

#include "dialects/mapexpr/Utils/MapExpr.h"
#include "dialects/sir/IR/SirDialect.h"

namespace sotc::mapexpr {

/// Splits the group into AnchoredMapStmts (a new one where a reduction's result is needed
/// whole), picks each anchor, infers every tensor's index from the anchor iterators (a
/// conflict is an error, not a guess) and marks the schedule dims a reduction runs over.
/// Errors are emitted on the group. The result is not scheduled yet.
/// `values`, when given, receives the IR value of each kernel tensor (by tensor id).
mlir::FailureOr<Kernel> buildKernel(sir::GroupOp group, std::vector<mlir::Value> *values = nullptr);

/// The name a tensor of a sir.subgraph prints with (without the t_ prefix): the Python name
/// where the frontend had one, a group's argument by its operand, a step's result by the
/// step's `names`.
std::string tensorName(mlir::Value v);

} // namespace sotc::mapexpr

#endif // SOTC_CONVERSION_SIRTOMAPEXPR_BUILDKERNEL_H
