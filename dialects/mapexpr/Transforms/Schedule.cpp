//===- Schedule.cpp - Schedule meshes and loops for every AnchoredMapStmt ----------------===//
#include "dialects/mapexpr/Transforms/Passes.h"

#include "compiler/support/MlirDiagnostics.h"
#include "dialects/mapexpr/Utils/MapExpr.h"

namespace sotc::mapexpr {

#define GEN_PASS_DEF_MAPEXPRSCHEDULE
#include "dialects/mapexpr/Transforms/Passes.h.inc"

namespace {

struct MapExprSchedulePass : impl::MapExprScheduleBase<MapExprSchedulePass> {
  using MapExprScheduleBase::MapExprScheduleBase;

  void runOnOperation() override {
    mlir::FailureOr<Target> t = sched::passTarget(getOperation(), target, getArgument());
    if (mlir::failed(t))
      return signalPassFailure();
    // One kernel is one launch: its statements are scheduled together, on one grid.
    Kernel kernel = kernelFromIR(getOperation());
    Expected<std::monostate> scheduled = scheduleKernel(kernel, *t);
    if (!scheduled) {
      (void)emitCodedError(getOperation(), scheduled.error());
      return signalPassFailure();
    }
    for (auto [op, a] :
         llvm::zip(getOperation().getBody().front().getOps<AnchoredOp>(), kernel.stmts)) {
      op.setMeshAttr(sched::MeshAttr::get(op.getContext(), a.schedule->mesh));
      op.setLoopsAttr(sched::loopsAttr(op.getContext(), a.schedule->loops));
    }
  }
};

} // namespace
} // namespace sotc::mapexpr
