//===- PrimGraphs.h - Calls in, primitive graphs out --------------------------------------===//
//
// What the passes that talk to the operator library share: a sir.call's Python arguments in
// the library's terms, and a library PrimGraph emitted as sir.prim ops.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_DIALECT_SIR_TRANSFORMS_PRIMGRAPHS_H
#define SOTC_DIALECT_SIR_TRANSFORMS_PRIMGRAPHS_H

#include "dialects/sir/IR/SirDialect.h"

#include "compiler/ops/Dispatch.h"

#include <vector>

namespace sotc::sir {

/// The call's positional and keyword arguments as the operator library reads them; a tensor
/// operand carries its operand index in `intValue` so graph inputs can be matched back to it.
mlir::FailureOr<ops::CallArgs> callArgs(CallOp call);

/// Emits `graph`'s primitives at `b`, with `loc`, its inputs bound to `inputs`: the value of
/// every graph value id (the inputs first, then one per primitive).
std::vector<mlir::Value> emitPrimGraph(mlir::OpBuilder &b, mlir::Location loc,
                                       const ops::PrimGraph &graph,
                                       llvm::ArrayRef<mlir::Value> inputs);

/// A primitive with no attributes set (the caller sets those it reads).
PrimOp createPrim(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, ops::Prim prim,
                  mlir::ValueRange operands);

/// A cast primitive of `v` to the tensor type `type`.
mlir::Value castPrim(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::Type type);

/// The attribute sotc-sir-widen-half puts on a float32 value computed for a half one: the half
/// type it stands for (sotc-sir-store-half stores it in that type between kernels).
inline constexpr llvm::StringLiteral kStoredAs = "stored_as";

} // namespace sotc::sir

#endif // SOTC_DIALECT_SIR_TRANSFORMS_PRIMGRAPHS_H
