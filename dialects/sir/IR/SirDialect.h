//===- SirDialect.h - The sir dialect -----------------------------------------------------===//
#ifndef SOTC_DIALECT_SIR_IR_SIRDIALECT_H
#define SOTC_DIALECT_SIR_IR_SIRDIALECT_H

#include "compiler/ops/Primitives.h"
#include "dialects/SizeProductAsm.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/sir/IR/SirDialect.h.inc"
#include "dialects/sir/IR/SirEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/sir/IR/SirAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/sir/IR/SirOps.h.inc"

namespace sotc::sir {
/// An argument attribute: the argument is a model's weight (a parameter or buffer by its
/// state-dict name), bound by the runtime rather than passed by the caller.
inline constexpr llvm::StringLiteral kWeightAttr = "sir.weight";
/// With kWeightAttr: a weight the program writes in place (state the runtime keeps per
/// sequence), so nothing is computed from it ahead of a call.
inline constexpr llvm::StringLiteral kStateAttr = "sir.state";
/// The subgraph that computes, once per set of weights, what the kernels read of them
/// (sotc-sir-hoist-weights); its results are the entry subgraph's trailing arguments.
inline constexpr llvm::StringLiteral kPrepareWeights = "prepare_weights";

/// A module attribute: the sizes the program derives from its inputs' by offsets, one
/// "s2=s1-1" each (ops::DerivedSizes), for the passes that infer shapes again.
inline constexpr llvm::StringLiteral kDerivedSizesAttr = "sir.derived_sizes";
/// The derived sizes of the module that holds `op` (none without the attribute); an entry
/// that is not such text is an error on the module.
mlir::FailureOr<ops::DerivedSizes> derivedSizesOf(mlir::Operation *op);

/// The operator library's primitive and the IR's: one list (compiler/ops/Primitives.def), so
/// the enumerators agree (SirDialect.cpp checks each one).
inline ops::Prim toOpsPrim(Primitive p) { return static_cast<ops::Prim>(p); }
inline Primitive fromOpsPrim(ops::Prim p) { return static_cast<Primitive>(p); }
/// The operator library's attributes of a primitive (the inverse of what sotc-sir-decompose
/// writes): what the reference evaluator needs to run it.
ops::PrimAttrs primAttrsOf(PrimOp op);
/// A conv2d's padding as (top, bottom, left, right): its leading pads, and the least trailing
/// padding that gives its result's size (the IR keeps only the leading ones).
std::vector<int64_t> convolutionPadding(PrimOp conv);
} // namespace sotc::sir

#endif // SOTC_DIALECT_SIR_IR_SIRDIALECT_H
