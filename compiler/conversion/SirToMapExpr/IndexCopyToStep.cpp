//===- IndexCopyToStep.cpp - index_copy groups to runtime steps, in place into state ------===//
//
// An index_copy (a KV cache written at the new tokens' positions) is a step the runtime runs
// by copying slices, never a kernel over the whole tensor. Where the tensor written is a state
// weight the entry binds (sir.state on the first subgraph's argument) and the index_copy is
// its only reader, the step writes the state's own buffer: a decode step moves one token's
// keys and values, not the cache. A chain of such writes (the cache, then its next update)
// stays in place the same way.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/conversion/SirToMapExpr/Passes.h"

#include "dialects/sir/IR/SirDialect.h"

#include "mlir/IR/Verifier.h"

namespace sotc {

#define GEN_PASS_DEF_CONVERTINDEXCOPYTOSTEP
#include "compiler/conversion/SirToMapExpr/Passes.h.inc"

namespace {

/// Whether `x` may be overwritten by the step that reads it: a state argument of the entry
/// subgraph, or what an in-place step wrote there, read by nothing else.
bool writableInPlace(mlir::Value x, sir::SubgraphOp entry) {
  if (!x.hasOneUse())
    return false;
  if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(x))
    return arg.getOwner()->getParentOp() == entry.getOperation() &&
           entry.getArgAttr(arg.getArgNumber(), sir::kStateAttr);
  auto earlier = x.getDefiningOp<mapexpr::IndexCopyOp>();
  return earlier && earlier.getInPlace();
}

struct ConvertIndexCopyToStepPass : impl::ConvertIndexCopyToStepBase<ConvertIndexCopyToStepPass> {
  void runOnOperation() override {
    sir::SubgraphOp subgraph = getOperation();
    // The runtime binds weights (the state's included) to the entry's first subgraph only.
    sir::SubgraphOp entry;
    if (auto module = subgraph->getParentOfType<mlir::ModuleOp>())
      for (sir::SubgraphOp s : module.getOps<sir::SubgraphOp>())
        if (s.getSymName() != sir::kPrepareWeights) {
          entry = s;
          break;
        }
    llvm::SmallVector<sir::GroupOp> groups(subgraph.getBody().getOps<sir::GroupOp>());
    for (sir::GroupOp group : groups) {
      mlir::Block &body = group.getBody().front();
      auto copy = mlir::dyn_cast<sir::PrimOp>(body.front());
      if (!copy || sir::toOpsPrim(copy.getPrim()) != ops::Prim::IndexCopy)
        continue;
      auto operand = [&](unsigned i) {
        return group
            .getInputs()[mlir::cast<mlir::BlockArgument>(copy->getOperand(i)).getArgNumber()];
      };
      // sotc-sir-fuse leaves an index_copy alone in its group; its inputs are distinct.
      if (!llvm::hasSingleElement(body.without_terminator()) ||
          body.getTerminator()->getOperand(0) != copy.getResult() ||
          !llvm::all_of(copy->getOperands(),
                        [](mlir::Value v) { return mlir::isa<mlir::BlockArgument>(v); })) {
        group.emitOpError("an index_copy group holds its index_copy and nothing else");
        return signalPassFailure();
      }
      mlir::Value x = operand(0);
      mlir::OpBuilder b(group);
      auto name = copy.getNameAttr();
      auto step = mapexpr::IndexCopyOp::create(b, group.getLoc(), group->getResult(0).getType(),
                                               group.getName(), x, operand(1), operand(2),
                                               *copy.getAxis(), entry && writableInPlace(x, entry),
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
