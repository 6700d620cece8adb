//===- MatmulToGemm.cpp - matmul groups to GEMM library steps ------------------------------===//
//
// 1. A matmul group whose element type the target's GEMM library takes (OpenBLAS: f32, f64)
//    and whose shapes form a GEMM (Utils/Gemm.h) becomes a mapexpr.gemm step; other matmuls
//    (integers, half precision on the CPU) stay groups and become loop kernels.
// 2. Epilogue: when the matmul's only reader is an injective group that adds a broadcast bias
//    row and nothing else, the bias moves into the step and the group goes. The library adds
//    it for free (OpenBLAS: C starts as the bias rows, beta = 1); a bias add inside a larger
//    consumer stays there, where it costs nothing, as do activations OpenBLAS cannot apply.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/conversion/SirToMapExpr/Passes.h"

#include "dialects/sir/IR/SirDialect.h"

namespace sotc {

#define GEN_PASS_DEF_CONVERTMATMULTOGEMM
#include "compiler/conversion/SirToMapExpr/Passes.h.inc"

using namespace mapexpr;

namespace {

std::vector<int64_t> shapeOf(mlir::Value v) {
  llvm::ArrayRef<int64_t> s = mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
  return {s.begin(), s.end()};
}

ops::Prim primOf(mlir::Operation *op) {
  auto prim = mlir::dyn_cast_or_null<sir::PrimOp>(op);
  return prim ? sir::toOpsPrim(prim.getPrim()) : ops::Prim::FillConstant;
}

/// The matmul a group holds, when the group is nothing else.
sir::PrimOp soleMatmul(sir::GroupOp group) {
  mlir::Block &body = group.getBody().front();
  if (group.getKind() != "matmul" || !llvm::hasSingleElement(body.without_terminator()))
    return nullptr;
  auto matmul = mlir::dyn_cast<sir::PrimOp>(body.front());
  if (!matmul || sir::toOpsPrim(matmul.getPrim()) != ops::Prim::Matmul ||
      body.getTerminator()->getOperands() != mlir::ValueRange(matmul->getResults()))
    return nullptr;
  return matmul;
}

/// The bias of `consumer` when it computes exactly `result + broadcast_to(bias)` (either
/// order) from the GEMM's result, its block argument `arg`, and the bias is one row of `n`.
struct BiasEpilogue {
  mlir::Value bias; // the consumer's operand
  std::string name; // the sum's name
};
std::optional<BiasEpilogue> biasOnly(sir::GroupOp consumer, mlir::BlockArgument arg, int64_t n) {
  mlir::Block &body = consumer.getBody().front();
  if (consumer.getKind() != "injective" || consumer->getNumResults() != 1 ||
      std::distance(body.without_terminator().begin(), body.without_terminator().end()) != 2 ||
      !arg.hasOneUse())
    return std::nullopt;
  auto add =
      mlir::dyn_cast_or_null<sir::PrimOp>(body.getTerminator()->getOperand(0).getDefiningOp());
  if (primOf(add) != ops::Prim::Add || add.getType() != arg.getType())
    return std::nullopt;
  mlir::Value other = add->getOperand(0) == arg   ? add->getOperand(1)
                      : add->getOperand(1) == arg ? add->getOperand(0)
                                                  : mlir::Value();
  if (!other || primOf(other.getDefiningOp()) != ops::Prim::BroadcastTo)
    return std::nullopt;
  auto row = mlir::dyn_cast<mlir::BlockArgument>(other.getDefiningOp()->getOperand(0));
  if (!row || mlir::cast<mlir::RankedTensorType>(row.getType()).getElementType() !=
                  add.getType().getElementType())
    return std::nullopt;
  std::vector<int64_t> r = shapeOf(row), out = shapeOf(arg);
  bool isRow = !r.empty() && r.size() <= out.size() && r.back() == n && out.back() == n;
  for (size_t d = 0; d + 1 < r.size(); ++d)
    isRow &= r[d] == 1;
  if (!isRow)
    return std::nullopt;
  auto name = add.getNameAttr();
  return BiasEpilogue{consumer.getInputs()[row.getArgNumber()], name ? name.str() : ""};
}

struct ConvertMatmulToGemmPass : impl::ConvertMatmulToGemmBase<ConvertMatmulToGemmPass> {
  using Base::Base;

  bool libraryTakes(mlir::Type element) const {
    if (element.isF32() || element.isF64())
      return true;
    return target == "cuda" && (element.isF16() || element.isBF16());
  }

  void runOnOperation() override {
    if (target != "cpu" && target != "cuda") {
      getOperation().emitError("sotc-convert-matmul-to-gemm: target must be cpu or cuda, not '")
          << target << "'";
      return signalPassFailure();
    }
    llvm::SmallVector<sir::GroupOp> groups(getOperation().getBody().getOps<sir::GroupOp>());
    for (sir::GroupOp group : groups) {
      sir::PrimOp matmul = soleMatmul(group);
      if (!matmul || !libraryTakes(matmul.getType().getElementType()))
        continue;
      auto operand = [&](unsigned i) {
        return group.getInputs()[mlir::cast<mlir::BlockArgument>(matmul->getOperand(i))
                                     .getArgNumber()];
      };
      bool ta = matmul.getTransposeX().value_or(false), tb = matmul.getTransposeY().value_or(false);
      std::optional<GemmPlan> plan = planGemm(shapeOf(operand(0)), shapeOf(operand(1)), ta, tb);
      if (!plan)
        continue; // dynamic shapes: the kernel path reports them
      std::optional<BiasEpilogue> bias;
      sir::GroupOp consumer;
      mlir::Value result = group->getResult(0);
      if (result.hasOneUse()) {
        mlir::OpOperand &use = *result.getUses().begin();
        consumer = mlir::dyn_cast<sir::GroupOp>(use.getOwner());
        // A 1-D right operand leaves no n dimension to add a row along.
        if (consumer && shapeOf(operand(1)).size() > 1)
          bias = biasOnly(consumer, consumer.getBody().getArgument(use.getOperandNumber()),
                          plan->n);
      }
      mlir::OpBuilder b(group);
      auto name = matmul.getNameAttr();
      std::string resultName = bias ? bias->name : name ? name.str() : "";
      auto gemm = GemmOp::create(
          b, group.getLoc(), bias ? consumer->getResult(0).getType() : result.getType(),
          group.getName(), operand(0), operand(1), bias ? bias->bias : mlir::Value(), ta, tb,
          b.getStrArrayAttr({resultName}));
      if (bias) {
        consumer->getResult(0).replaceAllUsesWith(gemm.getResult());
        consumer.erase();
      } else {
        result.replaceAllUsesWith(gemm.getResult());
      }
      group.erase();
    }
  }
};

} // namespace
} // namespace sotc
