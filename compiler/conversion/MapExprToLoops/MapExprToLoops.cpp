//===- MapExprToLoops.cpp - The pass: scheduled kernels to loop nests on memrefs ---------===//
//
// 1. Read the kernel as the model (tensors, statements, indices, schedules) and decide where
//    each tensor lives (tensorStorage): inputs and outputs are the function's memrefs,
//    shared tensors a per-block memref.alloca, scratch a memref.alloc, registers SSA values.
// 2. Open the grid: one scf.forall over the blocks that every statement shares.
// 3. Per AnchoredMapStmt, open its loops inside the block, rebuild the anchor coordinates of
//    a loop point by replaying the mesh steps backwards, skip padding points, and emit each
//    OpStmt on scalars. A reduction's accumulators are loop-carried values of the reduced
//    loop, initialized before it and stored after it.
// 4. Replace the kernel by the function (same symbol, so launches still name it).
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/conversion/MapExprToLoops/Passes.h"

#include "compiler/conversion/MapExprToLoops/KernelLowering.h"

namespace sotc {

#define GEN_PASS_DEF_CONVERTMAPEXPRTOLOOPS
#include "compiler/conversion/MapExprToLoops/Passes.h.inc"

namespace {

struct ConvertMapExprToLoopsPass : impl::ConvertMapExprToLoopsBase<ConvertMapExprToLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::FailureOr<sched::Target> compiledFor = sched::passTarget(module, target, getArgument());
    if (mlir::failed(compiledFor))
      return signalPassFailure();
    if (!testingBreak.empty() && testingBreak != "barrier" && testingBreak != "index" &&
        testingBreak != "reduction") {
      module.emitError("sotc-convert-mapexpr-to-loops: testing-break is barrier, index or "
                       "reduction, not '")
          << testingBreak << "'";
      return signalPassFailure();
    }
    llvm::SmallVector<mapexpr::KernelOp> kernels;
    module.walk([&](mapexpr::KernelOp k) { kernels.push_back(k); });
    // GPU kernels go into one gpu.module, which becomes the fatbin (an empty one when every
    // step is a library call).
    mlir::gpu::GPUModuleOp gpuModule;
    if (*compiledFor == sched::Target::Cuda) {
      mlir::OpBuilder b = mlir::OpBuilder::atBlockEnd(module.getBody());
      gpuModule = mlir::gpu::GPUModuleOp::create(b, module.getLoc(), kGpuModuleName);
      module->setAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
    }
    for (mapexpr::KernelOp k : kernels) {
      if (mlir::failed(mapexpr::loops::KernelLowering(k, gpuModule, testingBreak).run()))
        return signalPassFailure();
      k.erase();
    }
  }
};

} // namespace
} // namespace sotc
