//===- CheckBatchDims.cpp - Every dynamic dimension is the batch dimension ----------------===//
//
// sotc compiles one dynamic size per function, s0, as a batch: every `?` is s0, the first
// dimension of its tensor, and each primitive keeps it there and keeps rows apart. Then a
// kernel's rows of one batch index never meet another's, its code never reads s0 (only its
// grid does), and a GEMM's rows or batch count are s0 times a static number.
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sir/Transforms/Passes.h"

#include "compiler/ops/Primitives.h"
#include "compiler/support/MlirDiagnostics.h"

namespace sotc::sir {

#define GEN_PASS_DEF_SIRCHECKBATCHDIMS
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

using ops::Prim;
using ops::PrimKind;

mlir::RankedTensorType typeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// Whether `t`'s first dimension is the batch (dynamic).
bool batched(mlir::RankedTensorType t) {
  return t.getRank() > 0 && mlir::ShapedType::isDynamic(t.getDimSize(0));
}

/// Why `op` breaks the batch rule, or an empty string.
std::string violation(PrimOp op) {
  Prim prim = toOpsPrim(op.getPrim());
  mlir::RankedTensorType out = typeOf(op.getResult());
  if (prim == Prim::Transpose && batched(typeOf(op->getOperand(0))) &&
      (!op.getPerm() || op.getPerm()->empty() || (*op.getPerm())[0] != 0))
    return "a transpose moves the dynamic dimension";
  bool anyBatched = batched(out);
  for (mlir::Type t : llvm::concat<const mlir::Type>(op->getOperandTypes(), op->getResultTypes())) {
    auto tensor = mlir::cast<mlir::RankedTensorType>(t);
    for (int64_t d = 1; d < tensor.getRank(); ++d)
      if (tensor.isDynamicDim(d))
        return "a dynamic dimension after the first";
    anyBatched |= batched(tensor);
  }
  if (!anyBatched)
    return "";
  auto axesHold0 = [&] {
    std::optional<llvm::ArrayRef<int64_t>> axes = op.getAxes();
    return axes && llvm::is_contained(*axes, 0);
  };
  switch (ops::primKind(prim)) {
  case PrimKind::Source:
    // A range of the batch's size holds its rows' indices: arange(B).
    return prim == Prim::Iota && out.getRank() != 1 ? "a range of the dynamic size" : "";
  case PrimKind::Unary:
  case PrimKind::Binary:
  case PrimKind::Compare:
  case PrimKind::Select: // operands of one type (the decompositions broadcast explicitly)
    return "";
  case PrimKind::Reduce: // no axes: every axis
    return axesHold0() || !op.getAxes() || op.getAxes()->empty()
               ? "a reduction over the dynamic dimension"
               : "";
  case PrimKind::Matmul: {
    // The batch is A's rows, or the outermost batch dimension of A, B or both.
    mlir::RankedTensorType x = typeOf(op->getOperand(0)), y = typeOf(op->getOperand(1));
    if ((batched(y) && y.getRank() <= 2) || (batched(x) && x.getRank() == 1) ||
        (batched(x) && x.getRank() == 2 && op.getTransposeX().value_or(false)))
      return "the dynamic dimension is contracted";
    return batched(out) ? "" : "the dynamic size meets a static one";
  }
  case PrimKind::Layout:
    break;
  }
  mlir::RankedTensorType in = typeOf(op->getOperand(0));
  switch (prim) {
  case Prim::BroadcastTo:
    if (!batched(out))
      return "the dynamic size meets a static one (" + std::to_string(out.getDimSize(0)) + ")";
    if (batched(in) && in.getRank() != out.getRank())
      return "the dynamic dimension is broadcast to a later position";
    return "";
  case Prim::Reshape: {
    if (!batched(in) || !batched(out))
      return "a reshape merges or splits the dynamic dimension";
    auto rest = [](mlir::RankedTensorType t) {
      int64_t n = 1;
      for (int64_t d = 1; d < t.getRank(); ++d)
        n *= t.getDimSize(d);
      return n;
    };
    return rest(in) == rest(out) ? "" : "a reshape merges or splits the dynamic dimension";
  }
  case Prim::Transpose: // keeps the batch first (checked above)
    return "";
  case Prim::Slice:
    return axesHold0() ? "a slice of the dynamic dimension" : "";
  case Prim::Concat:
    if (!op.getAxis() || *op.getAxis() == 0)
      return "a concatenation along the dynamic dimension";
    return batched(out) ? "" : "the dynamic size meets a static one";
  case Prim::Gather:
    return batched(in) ? "a lookup in a table of dynamic size" : "";
  case Prim::Window:
    return batched(out) ? "" : "a window over the dynamic dimension";
  default:
    return "a " + std::string(ops::primName(prim)) + " of a dynamic size";
  }
}

struct SirCheckBatchDimsPass : impl::SirCheckBatchDimsBase<SirCheckBatchDimsPass> {
  void runOnOperation() override {
    mlir::WalkResult result = getOperation().walk([](PrimOp op) {
      std::string why = violation(op);
      if (why.empty())
        return mlir::WalkResult::advance();
      (void)(emitCodedError(op.getLoc(), DiagCode::KernelUnsupported)
             << "a dynamic dimension is compiled as a batch (the first dimension of every "
                "tensor, rows that never meet); here "
             << why << " (" << ops::primName(toOpsPrim(op.getPrim())) << " to "
             << op.getResult().getType() << "): trace each shape and compile the traces into "
             << "one artifact (sotc compile a.pb b.pb -o k.so)");
      return mlir::WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace sotc::sir
