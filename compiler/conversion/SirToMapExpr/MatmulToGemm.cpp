//===- MatmulToGemm.cpp - matmul groups to GEMM library steps ------------------------------===//
//
// 1. A matmul group whose element type the target's GEMM library takes (OpenBLAS: f32, f64)
//    and whose shapes form a GEMM (Utils/Gemm.h) becomes a mapexpr.gemm step; other matmuls
//    (integers, half precision on the CPU) stay groups and become loop kernels.
// 2. Epilogue: when the matmul's only reader is an injective group that does nothing but what
//    the library can do to the product, the group moves into the step and goes: a broadcast
//    bias row, then relu or tanh-GELU of the result (cuBLASLt's epilogues on CUDA; on the CPU
//    oneDNN's post-ops, applied to each tile before it is stored), and erf-GELU on the CPU
//    (cuBLASLt has none). Anything more stays in the consumer, where the bias add costs
//    nothing.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/conversion/SirToMapExpr/EpilogueMatcher.h"
#include "compiler/conversion/SirToMapExpr/Passes.h"

#include "compiler/support/MlirDiagnostics.h"
#include "dialects/sched/IR/SchedDialect.h"
#include "dialects/sir/IR/SirDialect.h"
#include "dialects/sir/IR/SirTypes.h"

#include <cmath>
#include <set>

namespace sotc {

#define GEN_PASS_DEF_CONVERTMATMULTOGEMM
#include "compiler/conversion/SirToMapExpr/Passes.h.inc"

using namespace mapexpr;

namespace {

using epilogue::EpilogueMatcher;
using epilogue::primOf;
using epilogue::shapeOf;

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

/// What a GEMM step adds to its product: a bias row, then an activation.
struct Epilogue {
  mlir::Value bias;       // the consumer's operand, or null
  std::string activation; // "none", "relu", "gelu_tanh", "gelu_erf"
  std::string name;       // the consumer's result name
};

/// The epilogue `consumer` applies to the GEMM's result `arg` (its block argument) when the
/// group does nothing else: `arg + broadcast_to(bias)` with the bias one row of `n`, and relu
/// or tanh-GELU of that (or of `arg` itself), or with `erf`, erf-GELU.
std::optional<Epilogue> epilogueOf(sir::GroupOp consumer, mlir::BlockArgument arg, int64_t n,
                                   bool erf) {
  mlir::Block &body = consumer.getBody().front();
  if (consumer.getKind() != "injective" || consumer->getNumResults() != 1)
    return std::nullopt;
  mlir::Value result = body.getTerminator()->getOperand(0);
  if (result.getType() != arg.getType())
    return std::nullopt;
  EpilogueMatcher m;
  // A half GEMM's epilogue computes in float32 (sotc-sir-widen-half): the product widened,
  // the result rounded back, which the library's float32 epilogue does as well.
  auto cast = [](mlir::Value v) {
    auto op = mlir::dyn_cast_or_null<sir::PrimOp>(v.getDefiningOp());
    return op && primOf(op) == ops::Prim::Cast ? op : sir::PrimOp();
  };
  mlir::Type element = mlir::cast<mlir::RankedTensorType>(arg.getType()).getElementType();
  bool half = element.isF16() || element.isBF16();
  sir::PrimOp rounding = half ? cast(result) : sir::PrimOp();
  if (rounding)
    result = rounding->getOperand(0);
  auto product = [&](mlir::Value v) {
    if (!half)
      return v == mlir::Value(arg);
    sir::PrimOp widening = cast(v);
    if (!widening || widening->getOperand(0) != arg)
      return false;
    m.use(widening);
    return true;
  };
  // The bias: a row of n elements, broadcast over the result's rows (in half, widened before
  // or after the broadcast).
  mlir::BlockArgument row;
  auto biasRow = [&](mlir::Value v) {
    sir::PrimOp widening = half ? cast(v) : sir::PrimOp();
    if (widening)
      v = widening->getOperand(0);
    auto op = mlir::dyn_cast_or_null<sir::PrimOp>(v.getDefiningOp());
    mlir::Value source = op && primOf(op) == ops::Prim::BroadcastTo ? op->getOperand(0) : nullptr;
    if (sir::PrimOp inner = half && !widening && source ? cast(source) : sir::PrimOp()) {
      widening = inner;
      source = inner->getOperand(0);
    }
    // In half, the library reads the bias in the product's type.
    auto bias = mlir::dyn_cast_or_null<mlir::BlockArgument>(source);
    if (!bias ||
        (half && (!widening ||
                  mlir::cast<mlir::RankedTensorType>(bias.getType()).getElementType() != element)))
      return false;
    std::vector<int64_t> r = shapeOf(bias), out = shapeOf(v);
    bool isRow = !r.empty() && r.size() <= out.size() && r.back() == n && out.back() == n;
    for (size_t d = 0; d + 1 < r.size(); ++d)
      isRow &= r[d] == 1;
    if (!isRow)
      return false;
    row = bias;
    m.use(op);
    if (widening)
      m.use(widening);
    return true;
  };
  auto withBias = m.add(product, biasRow);
  size_t prims = std::distance(body.without_terminator().begin(), body.without_terminator().end());
  auto name = [&](mlir::Value v) {
    auto op = mlir::dyn_cast_or_null<sir::PrimOp>(v.getDefiningOp());
    return op && op.getNameAttr() ? op.getNameAttr().str() : std::string();
  };
  // Activations of h as the operator library decomposes them: relu = max(h, 0); tanh-GELU,
  // 0.5 * h * (1 + tanh(sqrt(2/pi) * (h + 0.044715 * h^3))); erf-GELU,
  // 0.5 * h * (1 + erf(h / sqrt(2))).
  std::vector<
      std::pair<std::string, std::function<EpilogueMatcher::Pattern(EpilogueMatcher::Pattern)>>>
      forms = {{"none", [](EpilogueMatcher::Pattern h) { return h; }},
               {"relu",
                [&](EpilogueMatcher::Pattern h) {
                  return m.prim(ops::Prim::Max, {h, m.constant(0)}, true);
                }},
               {"gelu_tanh", [&](EpilogueMatcher::Pattern h) {
                  auto cube = m.mul(m.mul(h, h), h);
                  auto inner = m.add(h, m.mul(cube, m.constant(0.044715)));
                  auto t =
                      m.prim(ops::Prim::Tanh, {m.mul(inner, m.constant(std::sqrt(2.0 / M_PI)))});
                  return m.mul(m.mul(h, m.constant(0.5)), m.add(t, m.constant(1)));
                }}};
  if (erf)
    forms.push_back({"gelu_erf", [&](EpilogueMatcher::Pattern h) {
                       auto e =
                           m.prim(ops::Prim::Erf, {m.mul(h, m.constant(1.0 / std::sqrt(2.0)))});
                       return m.mul(m.mul(h, m.constant(0.5)), m.add(e, m.constant(1)));
                     }});
  for (auto &[activation, form] : forms)
    for (bool bias : {true, false}) {
      if (activation == "none" && !bias)
        continue; // nothing to fold
      m.reset();
      if (rounding)
        m.use(rounding);
      row = mlir::BlockArgument();
      // A shared h: the same value wherever the activation reads it.
      mlir::Value h;
      EpilogueMatcher::Pattern hp = [&](mlir::Value v) {
        if (h)
          return v == h;
        if (!(bias ? withBias(v) : product(v)))
          return false;
        h = v;
        return true;
      };
      if (form(hp)(result) && m.usedCount() == prims)
        return Epilogue{bias ? consumer.getInputs()[row.getArgNumber()] : mlir::Value(), activation,
                        name(body.getTerminator()->getOperand(0))};
    }
  return std::nullopt;
}

struct ConvertMatmulToGemmPass : impl::ConvertMatmulToGemmBase<ConvertMatmulToGemmPass> {
  using Base::Base;
  sched::Target compiledFor = sched::Target::Cpu; // the module's, or the option's

  bool libraryTakes(mlir::Type element) const {
    if (element.isF32() || element.isF64())
      return true;
    return element.isBF16() || (compiledFor == sched::Target::Cuda && element.isF16());
  }

  void runOnOperation() override {
    mlir::FailureOr<sched::Target> found = sched::passTarget(getOperation(), target, getArgument());
    if (mlir::failed(found))
      return signalPassFailure();
    compiledFor = *found;
    llvm::SmallVector<sir::GroupOp> groups(getOperation().getBody().getOps<sir::GroupOp>());
    std::set<mlir::Operation *> folded; // consumers an earlier step took in: erased
    for (sir::GroupOp group : groups) {
      if (folded.count(group))
        continue;
      sir::PrimOp matmul = soleMatmul(group);
      if (!matmul || !libraryTakes(matmul.getType().getElementType()))
        continue;
      auto operand = [&](unsigned i) {
        return group
            .getInputs()[mlir::cast<mlir::BlockArgument>(matmul->getOperand(i)).getArgNumber()];
      };
      for (unsigned i : {0u, 1u})
        if (auto t = mlir::cast<mlir::RankedTensorType>(operand(i).getType());
            t.hasStaticShape() && t.getNumElements() == 0) {
          emitCodedError(matmul.getLoc(), DiagCode::KernelUnsupported)
              << "a matmul of a tensor with no elements (" << t << ") is not supported yet";
          return signalPassFailure();
        }
      bool ta = matmul.getTransposeX().value_or(false), tb = matmul.getTransposeY().value_or(false);
      auto sizes = [&](unsigned i) {
        return sir::shapeWithSizes(mlir::cast<mlir::RankedTensorType>(operand(i).getType()));
      };
      std::optional<GemmPlan> plan =
          planGemm(sizes(0), sizes(1), ta, tb, sched::standInsOf(matmul));
      if (!plan)
        continue; // dynamic shapes: the kernel path reports them
      std::optional<Epilogue> epilogue;
      mlir::Value result = group->getResult(0);
      auto [consumer, arg] = epilogue::soleReader(result);
      // A 1-D right operand leaves no n dimension to add a row along.
      if (consumer && shapeOf(operand(1)).size() > 1)
        epilogue = epilogueOf(consumer, arg, plan->n, /*erf=*/compiledFor == sched::Target::Cpu);
      mlir::OpBuilder b(group);
      auto name = matmul.getNameAttr();
      std::string resultName = epilogue ? epilogue->name : name ? name.str() : "";
      auto gemm =
          GemmOp::create(b, group.getLoc(), result.getType(), group.getName(), operand(0),
                         operand(1), epilogue ? epilogue->bias : mlir::Value(), ta, tb,
                         epilogue ? epilogue->activation : "none", b.getStrArrayAttr({resultName}));
      epilogue::replaceWithStep(group, epilogue ? consumer : sir::GroupOp(), gemm.getResult(),
                                folded);
    }
  }
};

} // namespace
} // namespace sotc
