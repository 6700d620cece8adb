//===- FoldBatchNorm.cpp - Inference batch norm folded into the convolution before it -----===//
//
// batch_norm(conv2d(x, W, b), mean, var, gamma, beta, eps) in inference is one convolution:
//   s = gamma * rsqrt(var + eps)     W' = W * s (per output channel)     b' = (b - mean) * s + beta
// W' and b' are computed from the model's weights alone, so sotc-sir-hoist-weights moves them
// into the preparation that runs once per set of weights, and every call runs a plain conv2d.
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sir/IR/SirTypes.h"
#include "dialects/sir/Transforms/Passes.h"
#include "dialects/sir/Transforms/PrimGraphs.h"

#include "compiler/ops/OpTable.h"

#include "llvm/ADT/StringRef.h"

namespace sotc::sir {

#define GEN_PASS_DEF_SIRFOLDBATCHNORM
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

/// The call bound to its entry's signature (nullopt when it does not bind: decomposition
/// reports that), and whether the entry is paddle's.
struct Bound {
  CallOp call;
  ops::BoundArgs args;
  bool paddle;
  mlir::Value tensor(const std::string &name) {
    const ops::Arg &a = args.get(name);
    return a.isTensor() ? call.getTensors()[a.intValue] : mlir::Value();
  }
};

std::optional<Bound> bind(CallOp call, llvm::StringRef functional) {
  const ops::OpEntry *entry = ops::OpTable::get().lookup(call.getOp().str());
  if (!entry || !llvm::StringRef(entry->name).ends_with(functional))
    return std::nullopt;
  mlir::FailureOr<ops::CallArgs> args = callArgs(call);
  if (mlir::failed(args))
    return std::nullopt;
  Expected<ops::BoundArgs> bound = catchCodedError(
      [&] { return ops::resolveCall(entry->shortName(), entry->signatures, *args); });
  if (!bound)
    return std::nullopt;
  return Bound{call, *bound, llvm::StringRef(entry->name).starts_with("paddle.")};
}

/// A model weight that stays what it was loaded as: an argument the frontend marked
/// `sir.weight` and not `sir.state`.
bool isWeight(mlir::Value v) {
  auto arg = mlir::dyn_cast_or_null<mlir::BlockArgument>(v);
  if (!arg)
    return false;
  auto subgraph = mlir::dyn_cast<SubgraphOp>(arg.getOwner()->getParentOp());
  return subgraph && subgraph.getArgAttr(arg.getArgNumber(), kWeightAttr) &&
         !subgraph.getArgAttr(arg.getArgNumber(), kStateAttr);
}

/// Points the call's parameter `name` (a tensor or None) at a new operand `value`.
void setTensorArgument(CallOp call, const ops::Signature &signature, const std::string &name,
                       mlir::Value value) {
  mlir::MLIRContext *ctx = call.getContext();
  unsigned index = call.getTensors().size();
  call->insertOperands(index, value);
  auto ref = OperandRefAttr::get(ctx, index);
  llvm::SmallVector<mlir::Attribute> args(call.getArgs().begin(), call.getArgs().end()),
      kwargs(call.getKwargs().begin(), call.getKwargs().end());
  size_t position = static_cast<size_t>(signature.find(name) - signature.params.data());
  bool set = false;
  if (position < args.size())
    args[position] = ref, set = true;
  for (mlir::Attribute &kw : kwargs)
    if (auto k = mlir::cast<KeywordAttr>(kw); k.getName() == name)
      kw = KeywordAttr::get(ctx, name, ref), set = true;
  if (!set)
    kwargs.push_back(KeywordAttr::get(ctx, name, ref));
  call.setArgsAttr(mlir::ArrayAttr::get(ctx, args));
  call.setKwargsAttr(mlir::ArrayAttr::get(ctx, kwargs));
}

/// Folds `norm` into the conv2d that produces its input, when both are inference NCHW
/// calls on float weights of one dtype and nothing else reads the convolution.
void fold(CallOp norm) {
  std::optional<Bound> bn = bind(norm, "nn.functional.batch_norm");
  if (!bn)
    return;
  std::string xName = bn->paddle ? "x" : "input", epsName = bn->paddle ? "epsilon" : "eps";
  bool useGlobal = bn->paddle && !bn->args.isNone("use_global_stats") &&
                   bn->args.boolValue("use_global_stats");
  if ((bn->args.boolValue("training") && !useGlobal) ||
      (bn->paddle && bn->args.get("data_format").stringValue != "NCHW"))
    return;
  mlir::Value x = bn->tensor(xName);
  auto producer = x ? x.getDefiningOp<CallOp>() : CallOp();
  if (!producer || !x.hasOneUse())
    return;
  std::optional<Bound> conv = bind(producer, "nn.functional.conv2d");
  if (!conv || (conv->paddle && conv->args.get("data_format").stringValue != "NCHW"))
    return;
  mlir::Value weight = conv->tensor("weight"), bias = conv->tensor("bias");
  mlir::Value mean = bn->tensor("running_mean"), var = bn->tensor("running_var"),
              gamma = bn->tensor("weight"), beta = bn->tensor("bias");
  std::optional<ops::TensorMeta> w = metaOf(mlir::cast<mlir::RankedTensorType>(weight.getType()));
  if (!w || !ops::isFloating(w->dtype) || w->rank() != 4)
    return;
  for (mlir::Value v : {weight, bias, mean, var, gamma, beta}) {
    if (!v)
      continue;
    auto type = mlir::cast<mlir::RankedTensorType>(v.getType());
    std::optional<ops::TensorMeta> m = metaOf(type);
    bool perChannel = v == weight || (m && m->shape == std::vector<int64_t>{w->shape[0]});
    if (!isWeight(v) || !m || m->dtype != w->dtype || !perChannel)
      return;
  }
  if (!mean || !var)
    return;

  ops::PrimBuilder b("batch_norm");
  std::vector<mlir::Value> inputs;
  auto input = [&](mlir::Value v) { // the builder takes every input before any primitive
    if (!v)
      return -1;
    inputs.push_back(v);
    return b.input(*metaOf(mlir::cast<mlir::RankedTensorType>(v.getType())));
  };
  int wIn = input(weight), meanIn = input(mean), varIn = input(var), gammaIn = input(gamma),
      betaIn = input(beta), biasIn = input(bias);
  int scale = b.unary(ops::Prim::Rsqrt, b.binaryScalar(ops::Prim::Add, varIn,
                                                       bn->args.scalar(epsName)));
  if (gammaIn >= 0)
    scale = b.binary(ops::Prim::Mul, scale, gammaIn);
  b.output(b.binary(ops::Prim::Mul, wIn, b.reshape(scale, {w->shape[0], 1, 1, 1})));
  int shift = biasIn >= 0 ? b.binary(ops::Prim::Sub, biasIn, meanIn)
                          : b.unary(ops::Prim::Neg, meanIn);
  shift = b.binary(ops::Prim::Mul, shift, scale);
  if (betaIn >= 0)
    shift = b.binary(ops::Prim::Add, shift, betaIn);
  b.output(shift);
  ops::PrimGraph graph = b.take();

  mlir::OpBuilder builder(producer);
  std::vector<mlir::Value> values = emitPrimGraph(builder, norm.getLoc(), graph, inputs);
  mlir::Value foldedWeight = values[graph.outputs[0]], foldedBias = values[graph.outputs[1]];
  const ops::Signature &signature = conv->args.signature();
  producer->setOperand(conv->args.get("weight").intValue, foldedWeight);
  if (bias)
    producer->setOperand(conv->args.get("bias").intValue, foldedBias);
  else
    setTensorArgument(producer, signature, "bias", foldedBias);
  // The convolution now computes what the norm did: it takes the norm's Python name.
  if (norm.getNamesAttr())
    producer.setNamesAttr(norm.getNamesAttr());
  norm.getResult(0).replaceAllUsesWith(producer.getResult(0));
  norm.erase();
}

struct SirFoldBatchNormPass : impl::SirFoldBatchNormBase<SirFoldBatchNormPass> {
  void runOnOperation() override {
    llvm::SmallVector<CallOp> calls;
    getOperation().walk([&](CallOp call) { calls.push_back(call); });
    for (CallOp call : calls)
      fold(call);
  }
};

} // namespace
} // namespace sotc::sir
