//===- MapExprDialect.h - The mapexpr dialect ---------------------------------------------===//
#ifndef SOTC_DIALECT_MAPEXPR_IR_MAPEXPRDIALECT_H
#define SOTC_DIALECT_MAPEXPR_IR_MAPEXPRDIALECT_H

#include "dialects/mapexpr/Utils/Gemm.h"
#include "dialects/mapexpr/Utils/MapExpr.h"
#include "dialects/sched/IR/SchedDialect.h"
#include "dialects/sir/IR/SirTypes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "dialects/mapexpr/IR/MapExprDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/mapexpr/IR/MapExprAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/mapexpr/IR/MapExprOps.h.inc"

namespace sotc::mapexpr {

/// The kernel an op describes, as the C++ model (names, stages, indices, schedules) that
/// prints CINN's text. The op must verify.
/// `values`, when given, receives the IR value of each kernel tensor (by tensor id).
Kernel kernelFromIR(KernelOp op, std::vector<mlir::Value> *values = nullptr);

/// modelShape and bufferShape of a tensor type, with the sizes its encoding names.
std::vector<int64_t> modelShapeOf(mlir::RankedTensorType type, const sched::SizeStandIns &sizes);
std::vector<int64_t> bufferShapeOf(mlir::RankedTensorType type, const sched::SizeStandIns &sizes);

} // namespace sotc::mapexpr

#endif // SOTC_DIALECT_MAPEXPR_IR_MAPEXPRDIALECT_H
