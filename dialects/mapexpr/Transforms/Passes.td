//===- Passes.td - Passes over MapExpr kernels --------------------------------------------===//
#ifndef SOTC_DIALECT_MAPEXPR_PASSES
#define SOTC_DIALECT_MAPEXPR_PASSES

include "mlir/Pass/PassBase.td"

def MapExprSchedule : Pass<"sotc-mapexpr-schedule", "::sotc::mapexpr::KernelOp"> {
  let summary = "Choose every AnchoredMapStmt's schedule mesh and loops by the target's policy";
  let description = [{
    A kernel is one launch, so its statements share one grid. GPU: an injective kernel
    flattens, pads to the block size and maps to blockIdx.x x threadIdx.x (+ Vectorize); a
    kernel with a reduction puts the reduction's rows on blocks, and every statement, the
    consumers of the reduction included, runs on those rows across the block's threads with
    per-thread Temporal loops. CPU: an outer parallel loop and an inner vector loop; with a
    reduction, rows on the parallel loop and within a row a serial reduction or a vector loop.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"gpu\"", "gpu or cpu">,
  ];
}

#endif // SOTC_DIALECT_MAPEXPR_PASSES
