//===- Passes.td - sir fusion groups to mapexpr kernels -----------------------------------===//
#ifndef SOTC_CONVERSION_SIRTOMAPEXPR_PASSES
#define SOTC_CONVERSION_SIRTOMAPEXPR_PASSES

include "mlir/Pass/PassBase.td"

def ConvertSirToMapExpr : Pass<"sotc-convert-sir-to-mapexpr", "::mlir::ModuleOp"> {
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

#endif // SOTC_CONVERSION_SIRTOMAPEXPR_PASSES
