//===- NonzeroToStep.cpp - nonzero groups to runtime steps --------------------------------===//
//
// A nonzero (the coordinates of a tensor's nonzeros at a bound: nonzero's rows before the
// runtime has counted them, torch.nonzero_static) is a step the runtime runs in one pass over
// its input. As a kernel of static shapes it would compare every element with every row.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/conversion/SirToMapExpr/Passes.h"

#include "dialects/sir/IR/SirDialect.h"

#include "mlir/IR/Verifier.h"

namespace sotc {

#define GEN_PASS_DEF_CONVERTNONZEROTOSTEP
#include "compiler/conversion/SirToMapExpr/Passes.h.inc"

namespace {

struct ConvertNonzeroToStepPass : impl::ConvertNonzeroToStepBase<ConvertNonzeroToStepPass> {
  void runOnOperation() override {
    llvm::SmallVector<sir::GroupOp> groups(getOperation().getBody().getOps<sir::GroupOp>());
    for (sir::GroupOp group : groups) {
      mlir::Block &body = group.getBody().front();
      auto nonzero = mlir::dyn_cast<sir::PrimOp>(body.front());
      if (!nonzero || sir::toOpsPrim(nonzero.getPrim()) != ops::Prim::Nonzero)
        continue;
      // sotc-sir-fuse leaves a nonzero alone in its group.
      auto x = mlir::dyn_cast<mlir::BlockArgument>(nonzero->getOperand(0));
      if (!llvm::hasSingleElement(body.without_terminator()) || !x ||
          body.getTerminator()->getOperand(0) != nonzero.getResult()) {
        group.emitOpError("a nonzero group holds its nonzero and nothing else");
        return signalPassFailure();
      }
      mlir::OpBuilder b(group);
      auto name = nonzero.getNameAttr();
      auto step = mapexpr::NonzeroOp::create(
          b, group.getLoc(), group->getResult(0).getType(), group.getNameAttr(),
          group.getInputs()[x.getArgNumber()], nonzero.getValueAttr(),
          b.getStrArrayAttr({name ? name.str() : ""}));
      if (mlir::failed(mlir::verify(step)))
        return signalPassFailure();
      group->getResult(0).replaceAllUsesWith(step.getResult());
      group.erase();
    }
  }
};

} // namespace
} // namespace sotc
