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

/// A kernel over dynamic sizes: the blocks of its grid as their powers ("24*s0", "4*s0^2",
/// "8*s0*s1": sched::sizeText). Its loops are written for the sizes' stand-ins and never read
/// those counts; it takes the call's sizes before its buffers (kSizesAttr), and a launch runs
/// its grid.
constexpr const char *kBatchGridAttr = "sotc.grid";

/// A kernel over dynamic sizes other than s0 alone: the sizes it takes before its buffers,
/// in order ("s0,s1", "s1"). Without it a kernel with sotc.grid takes s0.
constexpr const char *kSizesAttr = "sotc.sizes";
/// The most sizes a kernel takes: the runtime's kernel ABI (runtime/src/Sizes.h).
constexpr size_t kMaxKernelSizes = 4;

/// A GPU kernel whose blocks keep rows of s0 between statements: the dynamic shared memory a
/// launch gives each block, in bytes as a power of s0 ("1024*s0").
constexpr const char *kDynamicSharedAttr = "sotc.dynamic_shared_bytes";

#define GEN_PASS_DECL_CONVERTMAPEXPRTOLOOPS
#define GEN_PASS_REGISTRATION
#include "compiler/conversion/MapExprToLoops/Passes.h.inc"

} // namespace sotc

#endif // SOTC_CONVERSION_MAPEXPRTOLOOPS_PASSES_H
