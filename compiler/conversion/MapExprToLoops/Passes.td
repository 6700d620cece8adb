//===- Passes.td - Scheduled MapExpr kernels to loop nests --------------------------------===//
#ifndef SOTC_CONVERSION_MAPEXPRTOLOOPS_PASSES
#define SOTC_CONVERSION_MAPEXPRTOLOOPS_PASSES

include "mlir/Pass/PassBase.td"

def ConvertMapExprToLoops : Pass<"sotc-convert-mapexpr-to-loops", "::mlir::ModuleOp"> {
  let summary = "Lower every scheduled mapexpr.kernel to a loop nest on memrefs";
  let description = [{
    Each kernel becomes a `func.func` of the same name that takes its outputs, then its
    inputs, as memrefs. The grid is one `scf.forall` over the blocks (`#gpu.block<x>`),
    shared by every AnchoredMapStmt; within a block each statement runs its own loops
    (`Temporal` and `Vectorize` loops become `scf.for`). A loop point's anchor coordinates
    come from replaying the schedule mesh backwards (padding points are skipped), and every
    access uses the tensor's index expression. OpStmts become `arith`/`math` operations on
    scalars; register intermediates stay SSA values, shared ones live in a per-block
    `memref.alloca`, reductions accumulate in loop-carried values. Kernels whose statements
    map threads (`S1x`..) need the GPU lowering and are refused here.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::gpu::GPUDialect"];
}

#endif // SOTC_CONVERSION_MAPEXPRTOLOOPS_PASSES
