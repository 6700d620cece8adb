//===- ConvToStep.cpp - conv2d groups to convolution library steps -------------------------===//
//
// 1. Every conv group (a conv2d primitive sotc-sir-expand-convolutions kept: float32, on the
//    CPU) becomes a mapexpr.conv step, which the runtime runs as a
//    oneDNN convolution.
// 2. Epilogue: when the convolution's only reader is an injective group that does nothing but
//    what the library applies to each output tile before storing it, that group moves into
//    the step and goes: a bias per output channel (a folded batch norm's too), a residual of
//    the result's shape (a ResNet block's skip connection), then relu, relu6 or hardswish.
//    A ResNet block then writes its output once. Where the residual is another convolution
//    with its bias (a downsampling block), that convolution becomes a step with its bias,
//    computed first.
//
// A step takes its consumer's place when it folds it: the residual may be computed after the
// convolution.
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
  // Where the residual is another convolution's result with its own bias (a downsampling
  // ResNet block adds two): that bias, which becomes the other convolution's epilogue.
  mlir::Value residualBias;
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
  mlir::BlockArgument bias, residual, residualBias;
  // A bias: OC values broadcast over the images and pixels, read as [OC, 1, 1] (or [OC]
  // reshaped to that inside the group), kept in `into`.
  auto biasInto = [&](mlir::BlockArgument &into) -> Pattern {
    return [&](mlir::Value v) {
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
      into = values;
      m.use(broadcast);
      if (primOf(reshape) == ops::Prim::Reshape)
        m.use(reshape);
      return true;
    };
  };
  Pattern biasPattern = biasInto(bias);
  Pattern residualPattern = [&](mlir::Value v) {
    auto other = mlir::dyn_cast<mlir::BlockArgument>(v);
    if (!other || other == arg || other.getType() != arg.getType())
      return false;
    residual = other;
    return true;
  };
  // Another convolution's result, read by nothing else and with no epilogue of its own, plus
  // its bias.
  Pattern otherConvolution = [&](mlir::Value v) {
    auto other = mlir::dyn_cast<mlir::BlockArgument>(v);
    if (!other || other == arg || other.getType() != arg.getType())
      return false;
    mlir::Value input = consumer.getInputs()[other.getArgNumber()];
    auto group = input.getDefiningOp<sir::GroupOp>();
    auto step = input.getDefiningOp<mapexpr::ConvOp>();
    if (!input.hasOneUse() ||
        !((group && group.getKind() == "conv") ||
          (step && !step.getBias() && !step.getResidual() && step.getActivation() == "none")))
      return false;
    residual = other;
    return true;
  };
  Pattern convResidual = m.add(otherConvolution, biasInto(residualBias));
  Pattern product = [&](mlir::Value v) { return v == mlir::Value(arg); };
  // The sum before the activation, each way the model may have written it.
  std::vector<Pattern> sums = {product,
                               m.add(product, biasPattern),
                               m.add(product, residualPattern),
                               m.add(m.add(product, biasPattern), residualPattern),
                               m.add(m.add(product, residualPattern), biasPattern),
                               m.add(m.add(product, biasPattern), convResidual)};
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
      bias = residual = residualBias = mlir::BlockArgument();
      // A shared t: the same value wherever the activation reads it.
      mlir::Value t;
      Pattern tp = [&, s](mlir::Value v) {
        if (t)
          return v == t;
        if (!sums[s](v))
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
      return Epilogue{operand(bias), operand(residual), operand(residualBias), activation,
                      named && named.getNameAttr() ? named.getNameAttr().str() : ""};
    }
  return std::nullopt;
}

/// The step of the conv group `group`, created at `b` with its epilogue; null where it does
/// not verify (a defect: the operator library's conv2d always makes one).
mapexpr::ConvOp createStep(mlir::OpBuilder &b, sir::GroupOp group, mlir::Value bias,
                           mlir::Value residual, llvm::StringRef activation,
                           const std::string &resultName) {
  mlir::Block &body = group.getBody().front();
  auto conv = mlir::dyn_cast<sir::PrimOp>(body.front());
  if (!conv || !llvm::hasSingleElement(body.without_terminator()) ||
      body.getTerminator()->getOperand(0) != conv.getResult()) {
    group.emitOpError("a conv group holds its conv2d and nothing else");
    return nullptr;
  }
  auto operand = [&](unsigned i) {
    return group.getInputs()[mlir::cast<mlir::BlockArgument>(conv->getOperand(i)).getArgNumber()];
  };
  auto name = conv.getNameAttr();
  auto step = mapexpr::ConvOp::create(
      b, group.getLoc(), group->getResult(0).getType(), group.getName(), operand(0), operand(1),
      bias, residual, b.getDenseI64ArrayAttr(*conv.getStrides()),
      b.getDenseI64ArrayAttr(*conv.getDilations()),
      b.getDenseI64ArrayAttr(sir::convolutionPadding(conv)), conv.getGroups().value_or(1),
      activation, b.getStrArrayAttr({resultName.empty() && name ? name.str() : resultName}));
  return mlir::succeeded(mlir::verify(step)) ? step : nullptr;
}

/// The other convolution of a downsampling block's sum (`value`: its conv group's result, or
/// its step without an epilogue) made a step with `bias`, at `b`; its new result.
mlir::Value withBias(mlir::OpBuilder &b, mlir::Value value, mlir::Value bias,
                     std::set<mlir::Operation *> &converted) {
  mapexpr::ConvOp step;
  if (auto group = value.getDefiningOp<sir::GroupOp>()) {
    step = createStep(b, group, bias, mlir::Value(), "none", "");
    if (!step)
      return nullptr;
    converted.insert(group);
  } else {
    auto old = value.getDefiningOp<mapexpr::ConvOp>();
    step = mapexpr::ConvOp::create(b, old.getLoc(), old.getType(), old.getName(), old.getX(),
                                   old.getWeight(), bias, mlir::Value(), old.getStridesAttr(),
                                   old.getDilationsAttr(), old.getPadsAttr(), old.getGroups(),
                                   "none", old.getNamesAttr());
    converted.insert(old);
  }
  value.replaceAllUsesWith(step.getResult());
  value.getDefiningOp()->erase();
  return step.getResult();
}

struct ConvertConvToStepPass : impl::ConvertConvToStepBase<ConvertConvToStepPass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::SmallVector<sir::GroupOp> groups(getOperation().getBody().getOps<sir::GroupOp>());
    // Consumers an earlier step took in and conv groups an earlier step converted: erased.
    std::set<mlir::Operation *> folded;
    for (sir::GroupOp group : groups) {
      if (folded.count(group) || group.getKind() != "conv")
        continue;
      std::optional<Epilogue> epilogue;
      mlir::Value result = group->getResult(0);
      auto [consumer, arg] = epilogue::soleReader(result);
      if (consumer)
        epilogue = epilogueOf(consumer, arg,
                              mlir::cast<mlir::RankedTensorType>(result.getType()).getDimSize(1));
      mlir::OpBuilder b(epilogue ? consumer.getOperation() : group.getOperation());
      mlir::Value residual = epilogue ? epilogue->residual : mlir::Value();
      if (epilogue && epilogue->residualBias) {
        // The other convolution of the sum, with its bias, is computed first: its result is
        // this one's residual.
        residual = withBias(b, residual, epilogue->residualBias, folded);
        if (!residual)
          return signalPassFailure();
      }
      mapexpr::ConvOp step =
          createStep(b, group, epilogue ? epilogue->bias : mlir::Value(), residual,
                     epilogue ? epilogue->activation : "none", epilogue ? epilogue->name : "");
      if (!step)
        return signalPassFailure();
      epilogue::replaceWithStep(group, epilogue ? consumer : sir::GroupOp(), step.getResult(),
                                folded);
    }
    // A depthwise convolution (one input channel a group) stays float32: a few taps per
    // output, bound by memory, where rounding x to bfloat16 on every call is one more pass
    // (MobileNetV2 at batch 1 ran slower with its depthwise steps in bfloat16).
    if (bf16)
      getOperation().walk([](mapexpr::ConvOp step) {
        auto x = mlir::cast<mlir::RankedTensorType>(step.getX().getType());
        if (step.getGroups() == 1 || x.getDimSize(1) != step.getGroups())
          step.setBf16(true);
      });
  }
};

} // namespace
} // namespace sotc
