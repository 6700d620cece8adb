//===- Passes.td - Passes over MapExpr kernels --------------------------------------------===//
#ifndef SOTC_DIALECT_MAPEXPR_PASSES
#define SOTC_DIALECT_MAPEXPR_PASSES

include "mlir/Pass/PassBase.td"

def MapExprSchedule : Pass<"sotc-mapexpr-schedule", "::sotc::mapexpr::KernelOp"> {
  let summary = "Choose every AnchoredMapStmt's schedule mesh and loops by the target's policy";
  let description = [{
    GPU: injective spaces flatten, pad to the block size and map to blockIdx.x x
    threadIdx.x (+ Vectorize); reductions put rows on blocks and reduce across a block's
    threads with per-thread Temporal loops. CPU: an outer parallel loop and an inner vector
    loop, reductions serial per row.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"gpu\"", "gpu or cpu">,
  ];
}

#endif // SOTC_DIALECT_MAPEXPR_PASSES
