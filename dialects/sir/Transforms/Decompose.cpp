//===- Decompose.cpp - sir.call statements to sir.prim primitives -------------------------===//
//
// 1. Read the call's Python arguments back from its attributes (tensors as operand markers).
// 2. Ask the operator library to lower the call: it re-resolves the signature and returns
//    the decomposition as a PrimGraph whose inputs name the arguments they came from.
// 3. Emit one sir.prim per primitive, at the call's location, and replace the call.
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sir/IR/SirTypes.h"
#include "dialects/sir/Transforms/Passes.h"
#include "dialects/sir/Transforms/PrimGraphs.h"

#include "compiler/ops/OpTable.h"
#include "compiler/support/MlirDiagnostics.h"

#include "mlir/IR/Builders.h"

namespace sotc::sir {

#define GEN_PASS_DEF_SIRDECOMPOSE
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

mlir::LogicalResult decompose(CallOp call, ops::DerivedSizes &sizes) {
  mlir::FailureOr<ops::CallArgs> args = callArgs(call);
  if (mlir::failed(args))
    return mlir::failure();
  size_t known = sizes.sizes().size();
  Expected<ops::LoweredCall> tried =
      ops::OpTable::get().tryLower(call.getOp().str(), *args, &sizes);
  if (!tried)
    return emitCodedError(call, tried.error());
  if (sizes.sizes().size() != known) // the frontend lists every size its calls derive
    return call.emitOpError("derives a size the module does not list (")
           << sizes.sizes().back().definition() << ")";
  ops::LoweredCall &lowered = *tried;
  if (lowered.graph.outputs.size() != call.getNumResults())
    return call.emitOpError("the decomposition has ")
           << lowered.graph.outputs.size() << " results, the call " << call.getNumResults();

  mlir::OpBuilder b(call);
  std::vector<mlir::Value> inputs;
  for (const ops::Arg &input : lowered.inputArgs)
    inputs.push_back(call.getTensors()[input.intValue]);
  std::vector<mlir::Value> values = emitPrimGraph(b, call.getLoc(), lowered.graph, inputs);
  // The frontend's names for the call's results go to the primitives that compute them.
  mlir::ArrayAttr names = call.getNamesAttr();
  for (auto [k, out] : llvm::enumerate(lowered.graph.outputs))
    if (names && k < names.size() && out >= static_cast<int>(lowered.graph.inputs.size()))
      if (auto prim = values[out].getDefiningOp<PrimOp>(); prim && !prim.getNameAttr())
        prim.setNameAttr(mlir::cast<mlir::StringAttr>(names[k]));
  for (auto [result, out] : llvm::zip(call.getResults(), lowered.graph.outputs)) {
    if (result.getType() != values[out].getType())
      return call.emitOpError("the decomposition's result type ")
             << values[out].getType() << " differs from the call's " << result.getType();
    result.replaceAllUsesWith(values[out]);
  }
  call.erase();
  return mlir::success();
}

struct SirDecomposePass : impl::SirDecomposeBase<SirDecomposePass> {
  void runOnOperation() override {
    llvm::SmallVector<CallOp> calls;
    getOperation().walk([&](CallOp call) { calls.push_back(call); });
    mlir::FailureOr<ops::DerivedSizes> sizes = derivedSizesOf(getOperation());
    if (mlir::failed(sizes))
      return signalPassFailure();
    for (CallOp call : calls)
      if (mlir::failed(decompose(call, *sizes)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace sotc::sir
