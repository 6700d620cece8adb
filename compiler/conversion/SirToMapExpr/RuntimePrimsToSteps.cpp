//===- RuntimePrimsToSteps.cpp - nonzero, nms and argsort groups to runtime steps ---------===//
//
// A nonzero (the coordinates of a tensor's nonzeros at a bound: nonzero's rows before the
// runtime has counted them, torch.nonzero_static), an nms (torchvision's greedy
// suppression) and an argsort are steps the runtime runs: a pass over the input, a loop over
// sorted boxes, a sort of each row. As kernels they would compare every element with every
// row (or every other element of its row).
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/conversion/SirToMapExpr/Passes.h"

#include "dialects/sir/IR/SirDialect.h"

#include "mlir/IR/Verifier.h"

namespace sotc {

#define GEN_PASS_DEF_CONVERTRUNTIMEPRIMSTOSTEPS
#include "compiler/conversion/SirToMapExpr/Passes.h.inc"

namespace {

struct ConvertRuntimePrimsToStepsPass
    : impl::ConvertRuntimePrimsToStepsBase<ConvertRuntimePrimsToStepsPass> {
  void runOnOperation() override {
    llvm::SmallVector<sir::GroupOp> groups(getOperation().getBody().getOps<sir::GroupOp>());
    for (sir::GroupOp group : groups) {
      mlir::Block &body = group.getBody().front();
      auto prim = mlir::dyn_cast<sir::PrimOp>(body.front());
      ops::Prim kind = prim ? sir::toOpsPrim(prim.getPrim()) : ops::Prim::FillConstant;
      if (kind != ops::Prim::Nonzero && kind != ops::Prim::Nms && kind != ops::Prim::Argsort)
        continue;
      // sotc-sir-fuse leaves each alone in its group, on the group's inputs.
      if (!llvm::hasSingleElement(body.without_terminator()) ||
          body.getTerminator()->getOperand(0) != prim.getResult() ||
          !llvm::all_of(prim->getOperands(),
                        [](mlir::Value v) { return mlir::isa<mlir::BlockArgument>(v); })) {
        group.emitOpError() << (kind == ops::Prim::Argsort ? "an " : "a ") << ops::primName(kind)
                            << " group holds its " << ops::primName(kind) << " and nothing else";
        return signalPassFailure();
      }
      auto input = [&](unsigned i) {
        return group
            .getInputs()[mlir::cast<mlir::BlockArgument>(prim->getOperand(i)).getArgNumber()];
      };
      mlir::OpBuilder b(group);
      auto name = prim.getNameAttr();
      mlir::ArrayAttr names = b.getStrArrayAttr({name ? name.str() : ""});
      mlir::Type type = group->getResult(0).getType();
      mlir::Operation *step;
      if (kind == ops::Prim::Nonzero)
        step = mapexpr::NonzeroOp::create(b, group.getLoc(), type, group.getNameAttr(), input(0),
                                          prim.getValueAttr(), names);
      else if (kind == ops::Prim::Nms)
        step = mapexpr::NmsOp::create(b, group.getLoc(), type, group.getNameAttr(), input(0),
                                      input(1), prim.getValueAttr(), names);
      else
        step = mapexpr::ArgsortOp::create(b, group.getLoc(), type, group.getNameAttr(), input(0),
                                          prim.getAxisAttr(), prim.getDescendingAttr(), names);
      if (mlir::failed(mlir::verify(step)))
        return signalPassFailure();
      group->getResult(0).replaceAllUsesWith(step->getResult(0));
      group.erase();
    }
  }
};

} // namespace
} // namespace sotc
