//===- ExpandConvolutions.cpp - conv2d primitives a target has no step for, as GEMMs ------===//
//
// A conv2d primitive stays where the target runs it as a library step (the CPU: a float32
// convolution of static sizes, any groups, through oneDNN, its epilogue folded in); every other
// one is replaced by the operator library's expansion into windows and a GEMM
// (ops::lowering::expandConvolution), the primitives the kernels and GEMM steps of every
// target compute (a pointwise one, 1x1 with stride 1 and no padding, a GEMM of x itself; a
// depthwise one, the taps times the filters, summed).
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sched/IR/SchedDialect.h"
#include "dialects/sir/IR/SirTypes.h"
#include "dialects/sir/Transforms/Passes.h"
#include "dialects/sir/Transforms/PrimGraphs.h"

#include "compiler/ops/Primitives.h"

#include "mlir/IR/Builders.h"

namespace sotc::sir {

#define GEN_PASS_DEF_SIREXPANDCONVOLUTIONS
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

/// Whether the target runs `conv` as a step of its own (any groups: oneDNN runs grouped and
/// depthwise convolutions as they are, RegNet's 3x and ResNeXt's 2x faster than their
/// expansion's batched GEMMs). A dynamic batch is expanded: a step's sizes are static (the
/// expansion's GEMM takes its rows at run time).
bool keptAsStep(PrimOp conv, sched::Target target) {
  return target == sched::Target::Cpu && conv.getType().getElementType().isF32() &&
         conv.getType().hasStaticShape();
}

mlir::LogicalResult expand(PrimOp conv) {
  std::optional<ops::TensorMeta> x =
      metaOf(mlir::cast<mlir::RankedTensorType>(conv->getOperand(0).getType()));
  std::optional<ops::TensorMeta> w =
      metaOf(mlir::cast<mlir::RankedTensorType>(conv->getOperand(1).getType()));
  if (!x || !w)
    return conv.emitOpError("conv2d of a type the operator library has no dtype for");
  ops::PrimBuilder b("conv2d");
  int xi = b.input(*x), wi = b.input(*w);
  std::vector<int64_t> strides(conv.getStrides()->begin(), conv.getStrides()->end());
  std::vector<int64_t> dilations(conv.getDilations()->begin(), conv.getDilations()->end());
  b.output(ops::lowering::expandConvolution(b, xi, wi, strides, dilations, convolutionPadding(conv),
                                            conv.getGroups().value_or(1)));
  mlir::OpBuilder builder(conv);
  std::vector<mlir::Value> inputs = {conv->getOperand(0), conv->getOperand(1)};
  ops::PrimGraph graph = b.take();
  std::vector<mlir::Value> values = emitPrimGraph(builder, conv.getLoc(), graph, inputs);
  mlir::Value result = values[graph.outputs.front()];
  if (result.getType() != conv.getType())
    return conv.emitOpError("the expansion's type ")
           << result.getType() << " differs from " << conv.getType();
  if (auto prim = result.getDefiningOp<PrimOp>(); prim && conv.getNameAttr())
    prim.setNameAttr(conv.getNameAttr());
  conv.getResult().replaceAllUsesWith(result);
  conv.erase();
  return mlir::success();
}

struct SirExpandConvolutionsPass : impl::SirExpandConvolutionsBase<SirExpandConvolutionsPass> {
  using Base::Base;

  void runOnOperation() override {
    mlir::FailureOr<sched::Target> compiledFor =
        sched::passTarget(getOperation(), target, getArgument());
    if (mlir::failed(compiledFor))
      return signalPassFailure();
    llvm::SmallVector<PrimOp> convs;
    getOperation().walk([&](PrimOp prim) {
      if (toOpsPrim(prim.getPrim()) == ops::Prim::Conv2d && !keptAsStep(prim, *compiledFor))
        convs.push_back(prim);
    });
    for (PrimOp conv : convs)
      if (mlir::failed(expand(conv)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace sotc::sir
