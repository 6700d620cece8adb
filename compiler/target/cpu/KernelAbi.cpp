//===- KernelAbi.cpp - The CPU kernel ABI: a grid range, then the buffers ----------------===//
//
// 1. Find the kernel's grid: the scf.forall mapped to #gpu.block<x> at the top of its body.
// 2. Prepend `begin` and `end` index arguments (before a dynamic batch's rows, if the
//    kernel takes them, and its buffers).
// 3. Replace the forall by an scf.for from begin to end whose body is the forall's, and hoist
//    the per-block scratch (memref.alloca) out of it: a block's scratch is reused by the next
//    row of the same call instead of growing the stack by one buffer per row.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/target/cpu/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace sotc::cpu {

#define GEN_PASS_DEF_CPUKERNELABI
#include "compiler/target/cpu/Passes.h.inc"

namespace {

/// The kernel's grid loop, or null for a function that is not a lowered kernel.
mlir::scf::ForallOp gridOf(mlir::func::FuncOp func) {
  for (auto forall : func.getBody().front().getOps<mlir::scf::ForallOp>()) {
    std::optional<mlir::ArrayAttr> mapping = forall.getMapping();
    if (forall.getRank() == 1 && mapping && mapping->size() == 1 &&
        mlir::isa<mlir::gpu::GPUBlockMappingAttr>((*mapping)[0]))
      return forall;
  }
  return {};
}

struct CpuKernelAbiPass : impl::CpuKernelAbiBase<CpuKernelAbiPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<mlir::func::FuncOp>()) {
      mlir::scf::ForallOp grid = gridOf(func);
      if (!grid)
        continue;
      mlir::Block &entry = func.getBody().front();
      mlir::Type index = mlir::IndexType::get(&getContext());
      if (mlir::failed(
              func.insertArguments({0, 0}, {index, index}, {}, {grid.getLoc(), grid.getLoc()})))
        return signalPassFailure();
      mlir::OpBuilder b(grid);
      mlir::Value one = mlir::arith::ConstantIndexOp::create(b, grid.getLoc(), 1);
      auto loop = mlir::scf::ForOp::create(b, grid.getLoc(), entry.getArgument(0),
                                           entry.getArgument(1), one);
      // The forall body (less its terminator) becomes the loop body.
      mlir::Block *body = grid.getBody();
      body->getTerminator()->erase();
      body->getArgument(0).replaceAllUsesWith(loop.getInductionVar());
      mlir::Block *loopBody = loop.getBody();
      loopBody->getOperations().splice(loopBody->begin(), body->getOperations());
      grid.erase();
      for (auto alloca : llvm::make_early_inc_range(loopBody->getOps<mlir::memref::AllocaOp>()))
        if (alloca.getType().hasStaticShape())
          alloca->moveBefore(loop);
      // The launch contract (the manifest's ABI): buffers never overlap, so LLVM needs no
      // run-time overlap checks (and no scalar copy of each loop for when they would).
      for (unsigned i = 2; i < func.getNumArguments(); ++i)
        if (mlir::isa<mlir::MemRefType>(func.getArgument(i).getType()))
          func.setArgAttr(i, "llvm.noalias", b.getUnitAttr());
    }
  }
};

} // namespace
} // namespace sotc::cpu
