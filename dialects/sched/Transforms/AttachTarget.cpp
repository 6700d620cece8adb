//===- AttachTarget.cpp - The module's sched.target, set once ----------------------------===//
#include "dialects/sched/Transforms/Passes.h"

namespace sotc::sched {
#define GEN_PASS_DEF_SCHEDATTACHTARGET
#include "dialects/sched/Transforms/Passes.h.inc"
} // namespace sotc::sched

using namespace mlir;

namespace sotc::sched {
namespace {

struct SchedAttachTargetPass : impl::SchedAttachTargetBase<SchedAttachTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<Target> wanted = targetByName(target);
    if (!wanted) {
      module.emitError() << "sotc-attach-target: target must be cuda or cpu, not '" << target
                         << "'";
      return signalPassFailure();
    }
    std::optional<Target> named = moduleTarget(module);
    if (named && *named != *wanted) {
      module.emitError() << "sotc-attach-target: the module is compiled for "
                         << targetName(*named) << ", not " << targetName(*wanted);
      return signalPassFailure();
    }
    module->setAttr(kTargetAttrName, TargetAttr::get(module.getContext(), *wanted));
  }
};

} // namespace
} // namespace sotc::sched
