//===- SchedDialect.h - The sched dialect -------------------------------------------------===//
#ifndef SOTC_DIALECT_SCHED_IR_SCHEDDIALECT_H
#define SOTC_DIALECT_SCHED_IR_SCHEDDIALECT_H

#include "dialects/sched/Utils/Mesh.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpImplementation.h"

#include "dialects/sched/IR/SchedDialect.h.inc"
#include "dialects/sched/IR/SchedEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/sched/IR/SchedAttrs.h.inc"

namespace sotc::sched {
/// The loop descriptors of `loops` (#sched.loop attributes).
std::vector<LoopDescriptor> loopsOf(mlir::ArrayAttr loops);
mlir::ArrayAttr loopsAttr(mlir::MLIRContext *ctx, const std::vector<LoopDescriptor> &loops);
std::vector<ScheduleDim> dimsOf(mlir::ArrayAttr dims);
mlir::ArrayAttr dimsAttr(mlir::MLIRContext *ctx, const std::vector<ScheduleDim> &dims);
} // namespace sotc::sched

#endif // SOTC_DIALECT_SCHED_IR_SCHEDDIALECT_H
