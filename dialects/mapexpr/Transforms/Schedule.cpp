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
    for (AnchoredOp op : getOperation().getBody().front().getOps<AnchoredOp>()) {
      Expected<sched::Schedule> schedule = scheduleFor(sched::dimsOf(op.getDims()), t);
      if (!schedule) {
        (void)emitCodedError(op, schedule.error());
        return signalPassFailure();
      }
      op.setMeshAttr(sched::MeshAttr::get(op.getContext(), schedule->mesh));
      op.setLoopsAttr(sched::loopsAttr(op.getContext(), schedule->loops));
    }
  }
};

} // namespace
} // namespace sotc::mapexpr
