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

/// A kernel over dynamic sizes says its grid, the sizes it takes and its dynamic shared
/// memory in the sched dialect's attributes (sched::kGridAttrName, ...).
/// The most sizes a kernel takes: the runtime's kernel ABI (runtime/src/Sizes.h).
constexpr size_t kMaxKernelSizes = 4;

#define GEN_PASS_DECL_CONVERTMAPEXPRTOLOOPS
#define GEN_PASS_REGISTRATION
#include "compiler/conversion/MapExprToLoops/Passes.h.inc"

} // namespace sotc

#endif // SOTC_CONVERSION_MAPEXPRTOLOOPS_PASSES_H
