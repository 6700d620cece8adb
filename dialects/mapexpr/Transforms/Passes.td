//===- Passes.td - Passes producing and scheduling MapExpr kernels ------------------------===//
#ifndef SOTC_DIALECT_MAPEXPR_PASSES
#define SOTC_DIALECT_MAPEXPR_PASSES

include "mlir/Pass/PassBase.td"

def MapExprBuild : Pass<"sotc-mapexpr-build", "::mlir::ModuleOp"> {
  let summary = "Turn each sir.group into a mapexpr.kernel and launch it";
  let description = [{
    Runs after sotc-sir-fuse. For every fusion group: split it into AnchoredMapStmts (a new
    one where a reduction's result is needed whole), pick each anchor, infer every tensor's
    index from the anchor's iterators (dot / undot / broadcast / affine equations; a conflict
    is an error), mark the schedule dims a reduction runs over, and emit the kernel at module
    level; the group becomes a `mapexpr.launch` of it. Kernels are not scheduled yet.
  }];
  let dependentDialects = ["::sotc::mapexpr::MapExprDialect", "::sotc::sched::SchedDialect"];
}

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
