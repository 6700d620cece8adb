//===- ApproximateMath.cpp - Inline polynomial approximations of f32 math, constant powers --===//
#include "compiler/target/cpu/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/StringSwitch.h"

namespace sotc::cpu {

#define GEN_PASS_DEF_CPUAPPROXIMATEMATH
#include "compiler/target/cpu/Passes.h.inc"

namespace {

struct CpuApproximateMathPass : impl::CpuApproximateMathBase<CpuApproximateMathPass> {
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    mlir::populateMathPolynomialApproximationPatterns(patterns, [](llvm::StringRef op) {
      return llvm::StringSwitch<bool>(op)
          .Cases({"math.exp", "math.expm1", "math.log", "math.log1p", "math.log2", "math.tanh",
                  "math.erf"},
                 true)
          .Default(false);
    });
    mlir::populateMathAlgebraicSimplificationPatterns(patterns); // x^3: x * x * x
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace sotc::cpu
