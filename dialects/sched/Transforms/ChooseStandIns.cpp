//===- ChooseStandIns.cpp - The module's sched.stand_ins, none a factor of a static size --===//
#include "dialects/sched/Transforms/Passes.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>

namespace sotc::sched {
#define GEN_PASS_DEF_SCHEDCHOOSESTANDINS
#include "dialects/sched/Transforms/Passes.h.inc"
} // namespace sotc::sched

using namespace mlir;

namespace sotc::sched {
namespace {

/// Every static dimension of the tensors the module's operations and blocks hold.
std::vector<int64_t> staticDims(ModuleOp module) {
  std::vector<int64_t> dims;
  auto add = [&](Type type) {
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      for (int64_t d : tensor.getShape())
        if (!ShapedType::isDynamic(d))
          dims.push_back(d);
  };
  module.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      add(t);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Type t : block.getArgumentTypes())
          add(t);
  });
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

struct SchedChooseStandInsPass : impl::SchedChooseStandInsBase<SchedChooseStandInsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::vector<int64_t> dims = staticDims(module);
    if (!module->hasAttr(kStandInsAttrName))
      return setStandIns(module, SizeStandIns::avoiding(dims));
    SizeStandIns named = standInsOf(module);
    for (int64_t stand : named.values())
      for (int64_t d : dims)
        if (d != 0 && d % stand == 0) {
          module.emitError() << "sotc-choose-stand-ins: the module's stand-in " << stand
                             << " divides its static dimension " << d
                             << ", which would read as a dynamic size";
          return signalPassFailure();
        }
  }
};

} // namespace
} // namespace sotc::sched
