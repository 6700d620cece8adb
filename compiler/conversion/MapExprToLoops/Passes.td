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
    `memref.alloca`, reductions accumulate in loop-carried values.

    With `target=cuda` each kernel becomes a `gpu.func` in one `gpu.module @sotc_kernels`:
    `gpu.block_id x` and `gpu.thread_id x` stand for the S0x and S1x loops (the block size is
    the function's `known_block_size`), the sequential loop runs per thread, shared tensors
    are workgroup buffers, and `gpu.barrier` separates statements. A reduction whose reduced
    dims the threads split accumulates per thread, then combines the partial results with a
    uniform `gpu.all_reduce`, and thread 0 stores the row's result. Kernels whose statements
    map threads are refused for the CPU.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "cuda or cpu (default: the module's sched.target)">,
    Option<"testingBreak", "testing-break", "std::string", /*default=*/"\"\"",
           "testing only: lower GPU kernels wrongly on purpose, to see the CUDA emulator catch "
           "it: barrier (no barriers between statements), index (each thread takes the "
           "element of the next one), reduction (the threads' partial results not combined)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::gpu::GPUDialect",
                           "::sotc::sched::SchedDialect"];
}

#endif // SOTC_CONVERSION_MAPEXPRTOLOOPS_PASSES
