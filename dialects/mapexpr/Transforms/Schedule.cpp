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
    if (target != "gpu" && target != "cpu") {
      getOperation().emitError("sotc-mapexpr-schedule: target must be gpu or cpu, not '")
          << target << "'";
      return signalPassFailure();
    }
    Target t = target == "cpu" ? Target::Cpu : Target::Gpu;
    // One kernel is one launch: its statements are scheduled together, on one grid.
    Kernel kernel = kernelFromIR(getOperation());
    Expected<std::monostate> scheduled = scheduleKernel(kernel, t);
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
