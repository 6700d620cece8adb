//===- CheckBatchDims.cpp - Every dynamic dimension is the batch dimension ----------------===//
//
// sotc compiles one dynamic size per function, s0, as a batch: every `?` is s0, one dimension
// of its tensor of its own (never merged with another), and each primitive keeps rows of the
// batch apart: transposes may move it, GEMMs, windows and lookups take it first. Then a
// kernel's rows of one batch index never meet another's, its code reads s0 only where a
// stride or a grid holds it, and a GEMM's rows or batch count are s0 times a static number.
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

/// The position of `t`'s batch (its dynamic dimension), or -1.
int64_t batchDim(mlir::RankedTensorType t) {
  for (int64_t d = 0; d < t.getRank(); ++d)
    if (t.isDynamicDim(d))
      return d;
  return -1;
}
bool batched(mlir::RankedTensorType t) { return batchDim(t) >= 0; }
/// Whether the batch is `t`'s first dimension (what GEMMs, windows and lookups take).
bool batchFirst(mlir::RankedTensorType t) { return batchDim(t) == 0; }

/// The static elements before and after the batch of `t` (a reshape keeps both).
std::pair<int64_t, int64_t> aroundBatch(mlir::RankedTensorType t) {
  int64_t before = 1, after = 1, d = batchDim(t);
  for (int64_t i = 0; i < t.getRank(); ++i)
    if (i != d)
      (i < d ? before : after) *= t.getDimSize(i);
  return {before, after};
}

/// Why `op` breaks the batch rule, or an empty string.
std::string violation(PrimOp op) {
  Prim prim = toOpsPrim(op.getPrim());
  mlir::RankedTensorType out = typeOf(op.getResult());
  bool anyBatched = false, anyMoved = false;
  for (mlir::Type t : llvm::concat<const mlir::Type>(op->getOperandTypes(), op->getResultTypes())) {
    auto tensor = mlir::cast<mlir::RankedTensorType>(t);
    if (llvm::count_if(tensor.getShape(), mlir::ShapedType::isDynamic) > 1)
      return "two dynamic dimensions in one tensor";
    anyBatched |= batched(tensor);
    anyMoved |= batched(tensor) && !batchFirst(tensor);
  }
  if (!anyBatched)
    return "";
  // The (first) operand; a source's result.
  mlir::RankedTensorType in = op->getNumOperands() ? typeOf(op->getOperand(0)) : out;
  auto axesHoldBatch = [&] {
    std::optional<llvm::ArrayRef<int64_t>> axes = op.getAxes();
    return axes && llvm::is_contained(*axes, batchDim(in));
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
    return axesHoldBatch() || !op.getAxes() || op.getAxes()->empty()
               ? "a reduction over the dynamic dimension"
               : "";
  case PrimKind::Matmul: {
    // The batch is A's rows, or the outermost batch dimension of A, B or both.
    mlir::RankedTensorType x = typeOf(op->getOperand(0)), y = typeOf(op->getOperand(1));
    if (anyMoved)
      return "a matmul of a tensor whose dynamic dimension is not its first";
    if ((batched(y) && y.getRank() <= 2) || (batched(x) && x.getRank() == 1) ||
        (batched(x) && x.getRank() == 2 && op.getTransposeX().value_or(false)))
      return "the dynamic dimension is contracted";
    return batched(out) ? "" : "the dynamic size meets a static one";
  }
  case PrimKind::Layout:
    break;
  }
  switch (prim) {
  case Prim::BroadcastTo: // right-aligned: the batch keeps its place from the end
    if (!batched(out))    // the batch's position counts from the end
      return "the dynamic size meets a static one (" +
             std::to_string(out.getDimSize(batchDim(in) + out.getRank() - in.getRank())) + ")";
    if (batched(in) && in.getRank() - batchDim(in) != out.getRank() - batchDim(out))
      return "the dynamic dimension is broadcast to another position";
    return "";
  case Prim::Reshape:
    // The batch stays one dimension of its own: the static elements before it and after it
    // are the same (dims of 1 and static dims on either side may regroup).
    if (!batched(in) || !batched(out) || aroundBatch(in) != aroundBatch(out))
      return "a reshape merges or splits the dynamic dimension";
    return "";
  case Prim::Transpose: // the batch goes wherever the permutation puts it
    return "";
  case Prim::Slice:
    return axesHoldBatch() ? "a slice of the dynamic dimension" : "";
  case Prim::Concat:
    if (!op.getAxis() || static_cast<int64_t>(*op.getAxis()) == batchDim(out))
      return "a concatenation along the dynamic dimension";
    return batched(out) ? "" : "the dynamic size meets a static one";
  case Prim::Gather: // rows of a table: its first dim
    return batchFirst(in) ? "a lookup in a table of dynamic size" : "";
  case Prim::Window:
    return batchFirst(out) && batchFirst(in) ? "" : "a window over the dynamic dimension";
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
             << "a dynamic dimension is compiled as a batch (a dimension of its own in every "
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
