//===- ExpandArith.cpp - The arith ops LLVM lacks, expanded; maximumf/minimumf kept ----------===//
#include "compiler/target/cpu/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sotc::cpu {

#define GEN_PASS_DEF_CPUEXPANDARITH
#include "compiler/target/cpu/Passes.h.inc"

namespace {

struct CpuExpandArithPass : impl::CpuExpandArithBase<CpuExpandArithPass> {
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    mlir::arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    mlir::arith::populateExpandBFloat16Patterns(patterns);
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace sotc::cpu
