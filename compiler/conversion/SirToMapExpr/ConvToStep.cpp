//===- ConvToStep.cpp - conv2d groups to convolution library steps -------------------------===//
//
// 1. Every conv group (a conv2d primitive sotc-sir-expand-convolutions kept: float32, on the
//    CPU) becomes a mapexpr.conv step, which the runtime runs as a oneDNN convolution.
// 2. Epilogue: when the convolution's only reader is an injective group that does nothing but
//    what the library applies to each output tile before storing it, that group moves into
//    the step and goes: a bias per output channel (a folded batch norm's too), a residual of
//    the result's shape (a ResNet block's skip connection), then relu, relu6 or hardswish.
//    A ResNet block then writes its output once.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/conversion/SirToMapExpr/EpilogueMatcher.h"
#include "compiler/conversion/SirToMapExpr/Passes.h"

#include "dialects/sir/IR/SirDialect.h"

#include "mlir/IR/Verifier.h"

namespace sotc {

#define GEN_PASS_DEF_CONVERTCONVTOSTEP
#include "compiler/conversion/SirToMapExpr/Passes.h.inc"

namespace {

using epilogue::EpilogueMatcher;
using epilogue::primOf;
using Pattern = EpilogueMatcher::Pattern;

/// What a convolution step adds to its result: a bias per channel and a residual, then an
/// activation.
struct Epilogue {
  mlir::Value bias, residual; // the consumer's operands, or null
  std::string activation;     // "none", "relu", "relu6", "hardswish"
  std::string name;           // the consumer's result name
};

/// The epilogue `consumer` applies to the convolution's result `arg` (its block argument) of
/// `channels` output channels, when the group does nothing else.
std::optional<Epilogue> epilogueOf(sir::GroupOp consumer, mlir::BlockArgument arg,
                                   int64_t channels) {
  mlir::Block &body = consumer.getBody().front();
  if (consumer.getKind() != "injective" || consumer->getNumResults() != 1)
    return std::nullopt;
  mlir::Value result = body.getTerminator()->getOperand(0);
  if (result.getType() != arg.getType())
    return std::nullopt;
  EpilogueMatcher m;
  mlir::BlockArgument bias, residual;
  // The bias: OC values broadcast over the images and pixels, read as [OC, 1, 1] (or [OC]
  // reshaped to that inside the group).
  Pattern biasPattern = [&](mlir::Value v) {
    auto broadcast = mlir::dyn_cast_or_null<sir::PrimOp>(v.getDefiningOp());
    if (primOf(broadcast) != ops::Prim::BroadcastTo)
      return false;
    mlir::Value source = broadcast->getOperand(0);
    std::vector<int64_t> s = epilogue::shapeOf(source);
    bool perChannel = s.size() >= 3 && s.size() <= 4 && s[s.size() - 3] == channels &&
                      s[s.size() - 2] == 1 && s.back() == 1 && (s.size() == 3 || s[0] == 1);
    auto reshape = mlir::dyn_cast_or_null<sir::PrimOp>(source.getDefiningOp());
    if (primOf(reshape) == ops::Prim::Reshape)
      source = reshape->getOperand(0);
    auto values = mlir::dyn_cast<mlir::BlockArgument>(source);
    auto type =
        values ? mlir::cast<mlir::RankedTensorType>(values.getType()) : mlir::RankedTensorType();
    if (!perChannel || !values || !type.hasStaticShape() || type.getNumElements() != channels)
      return false;
    bias = values;
    m.use(broadcast);
    if (primOf(reshape) == ops::Prim::Reshape)
      m.use(reshape);
    return true;
  };
  Pattern residualPattern = [&](mlir::Value v) {
    auto other = mlir::dyn_cast<mlir::BlockArgument>(v);
    if (!other || other == arg || other.getType() != arg.getType())
      return false;
    residual = other;
    return true;
  };
  Pattern product = [&](mlir::Value v) { return v == mlir::Value(arg); };
  // The sum before the activation, each way the model may have written it.
  std::vector<std::pair<bool, Pattern>> sums = {
      {false, product},
      {false, m.add(product, biasPattern)},
      {false, m.add(product, residualPattern)},
      {true, m.add(m.add(product, biasPattern), residualPattern)},
      {true, m.add(m.add(product, residualPattern), biasPattern)}};
  // Activations of t as the operator library decomposes them: relu = max(t, 0); relu6 =
  // min(max(t, 0), 6); hardswish = t * (min(max(t + 3, 0), 6) / 6).
  std::vector<std::pair<std::string, std::function<Pattern(Pattern)>>> forms = {
      {"none", [](Pattern t) { return t; }},
      {"relu",
       [&](Pattern t) {
         return m.prim(ops::Prim::Max, {t, m.constant(0)}, true);
       }},
      {"relu6",
       [&](Pattern t) {
         return m.prim(ops::Prim::Min,
                       {m.prim(ops::Prim::Max, {t, m.constant(0)}, true), m.constant(6)}, true);
       }},
      {"hardswish", [&](Pattern t) {
         auto clamped =
             m.prim(ops::Prim::Min,
                    {m.prim(ops::Prim::Max, {m.add(t, m.constant(3)), m.constant(0)}, true),
                     m.constant(6)},
                    true);
         return m.mul(t, m.prim(ops::Prim::Div, {clamped, m.constant(6)}));
       }}};
  size_t prims = std::distance(body.without_terminator().begin(), body.without_terminator().end());
  for (auto &[activation, form] : forms)
    for (size_t s = 0; s < sums.size(); ++s) {
      if (activation == "none" && s == 0)
        continue; // nothing to fold
      m.reset();
      bias = residual = mlir::BlockArgument();
      // A shared t: the same value wherever the activation reads it.
      mlir::Value t;
      Pattern tp = [&, s](mlir::Value v) {
        if (t)
          return v == t;
        if (!sums[s].second(v))
          return false;
        t = v;
        return true;
      };
      if (!form(tp)(result) || m.usedCount() != prims)
        continue;
      auto operand = [&](mlir::BlockArgument a) {
        return a ? consumer.getInputs()[a.getArgNumber()] : mlir::Value();
      };
      auto named = mlir::dyn_cast_or_null<sir::PrimOp>(result.getDefiningOp());
      return Epilogue{operand(bias), operand(residual), activation,
                      named && named.getNameAttr() ? named.getNameAttr().str() : ""};
    }
  return std::nullopt;
}

/// The (top, bottom, left, right) padding of `conv`: its leading pads, and the least trailing
/// padding that gives its result's size.
std::vector<int64_t> paddingOf(sir::PrimOp conv) {
  std::vector<int64_t> in = epilogue::shapeOf(conv->getOperand(0)),
                       weight = epilogue::shapeOf(conv->getOperand(1)),
                       out = epilogue::shapeOf(conv.getResult()), pads;
  for (int i = 0; i < 2; ++i) {
    int64_t before = (*conv.getPads())[i];
    int64_t reach = (out[2 + i] - 1) * (*conv.getStrides())[i] +
                    (*conv.getDilations())[i] * (weight[2 + i] - 1) + 1;
    pads.push_back(before);
    pads.push_back(std::max<int64_t>(0, reach - in[2 + i] - before));
  }
  return pads;
}

struct ConvertConvToStepPass : impl::ConvertConvToStepBase<ConvertConvToStepPass> {
  void runOnOperation() override {
    llvm::SmallVector<sir::GroupOp> groups(getOperation().getBody().getOps<sir::GroupOp>());
    std::set<mlir::Operation *> folded; // consumers an earlier step took in: erased
    for (sir::GroupOp group : groups) {
      if (folded.count(group) || group.getKind() != "conv")
        continue;
      mlir::Block &body = group.getBody().front();
      auto conv = mlir::dyn_cast<sir::PrimOp>(body.front());
      if (!conv || !llvm::hasSingleElement(body.without_terminator()) ||
          body.getTerminator()->getOperand(0) != conv.getResult()) {
        group.emitOpError("a conv group holds its conv2d and nothing else");
        return signalPassFailure();
      }
      auto operand = [&](unsigned i) {
        return group
            .getInputs()[mlir::cast<mlir::BlockArgument>(conv->getOperand(i)).getArgNumber()];
      };
      std::optional<Epilogue> epilogue;
      sir::GroupOp consumer;
      mlir::Value result = group->getResult(0);
      if (result.hasOneUse()) {
        mlir::OpOperand &use = *result.getUses().begin();
        consumer = mlir::dyn_cast<sir::GroupOp>(use.getOwner());
        if (consumer)
          epilogue = epilogueOf(consumer, consumer.getBody().getArgument(use.getOperandNumber()),
                                conv.getType().getDimSize(1));
      }
      // With an epilogue, where its group was: the residual may be computed after the
      // convolution.
      mlir::OpBuilder b(epilogue ? consumer.getOperation() : group.getOperation());
      auto name = conv.getNameAttr();
      std::string resultName = epilogue ? epilogue->name : name ? name.str() : "";
      auto step = mapexpr::ConvOp::create(
          b, group.getLoc(), result.getType(), group.getName(), operand(0), operand(1),
          epilogue ? epilogue->bias : mlir::Value(), epilogue ? epilogue->residual : mlir::Value(),
          b.getDenseI64ArrayAttr(*conv.getStrides()), b.getDenseI64ArrayAttr(*conv.getDilations()),
          b.getDenseI64ArrayAttr(paddingOf(conv)), epilogue ? epilogue->activation : "none",
          b.getStrArrayAttr({resultName}));
      if (mlir::failed(mlir::verify(step))) {
        // A conv2d the operator library made is always one; anything else is a defect.
        return signalPassFailure();
      }
      if (epilogue) {
        consumer->getResult(0).replaceAllUsesWith(step.getResult());
        folded.insert(consumer);
        consumer.erase();
      } else {
        result.replaceAllUsesWith(step.getResult());
      }
      group.erase();
    }
  }
};

} // namespace
} // namespace sotc
