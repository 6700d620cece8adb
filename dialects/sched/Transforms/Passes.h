//===- Passes.h - Passes over the sched dialect's module attributes -----------------------===//
#ifndef SOTC_DIALECT_SCHED_TRANSFORMS_PASSES_H
#define SOTC_DIALECT_SCHED_TRANSFORMS_PASSES_H

#include "dialects/sched/IR/SchedDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace sotc::sched {

#define GEN_PASS_DECL
#include "dialects/sched/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/sched/Transforms/Passes.h.inc"

} // namespace sotc::sched

#endif // SOTC_DIALECT_SCHED_TRANSFORMS_PASSES_H
