//===- Passes.h - Scheduled MapExpr kernels to loop nests ---------------------------------===//
#ifndef SOTC_CONVERSION_MAPEXPRTOLOOPS_PASSES_H
#define SOTC_CONVERSION_MAPEXPRTOLOOPS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace sotc {

/// The gpu.module that holds every GPU kernel (target=gpu).
constexpr const char *kGpuModuleName = "sotc_kernels";

/// A CPU kernel over a dynamic batch: the blocks of its grid per row of the batch (its loops
/// are written for sched::kBatchRows rows and never read the count; a launch runs the call's).
constexpr const char *kBlocksPerBatchRowAttr = "sotc.blocks_per_batch_row";

#define GEN_PASS_DECL_CONVERTMAPEXPRTOLOOPS
#define GEN_PASS_REGISTRATION
#include "compiler/conversion/MapExprToLoops/Passes.h.inc"

} // namespace sotc

#endif // SOTC_CONVERSION_MAPEXPRTOLOOPS_PASSES_H
