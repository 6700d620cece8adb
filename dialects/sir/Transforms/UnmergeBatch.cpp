//===- UnmergeBatch.cpp - Rows flattened with their batch, computed unflattened -----------===//
//
// A reshape that merges the dynamic batch with the static dims after it ([?, 16, 64] ->
// [?, 64]: the tokens flattened with their batch around a GEMM, transformers' Conv1D) gives a
// `?` that is not the batch but the batch times 16, which sotc-sir-check-batch-dims refuses.
// What row-wise work follows (elementwise math, GEMMs with it as the rows, reductions over
// the other dims, broadcasts of static tensors to it) computes the same on the unmerged
// tensor ([?, 16, 64]), as do broadcasts within its rows, and a reshape that unmerges it
// again ([?, 64] -> [?, 16, 64]) reads that directly. This pass rewrites those users onto the
// unmerged tensors; anything else keeps the merging reshape (and check-batch-dims names it).
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sir/Transforms/Passes.h"

#include "compiler/ops/Primitives.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace sotc::sir {

#define GEN_PASS_DEF_SIRUNMERGEBATCH
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

using ops::Prim;
using ops::PrimKind;

mlir::RankedTensorType typeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

bool batchFirst(mlir::RankedTensorType t) {
  if (t.getRank() == 0 || !t.isDynamicDim(0))
    return false;
  for (int64_t d = 1; d < t.getRank(); ++d)
    if (t.isDynamicDim(d))
      return false;
  return true;
}

int64_t product(llvm::ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// `shape` with `rows` after its first dim.
llvm::SmallVector<int64_t> widen(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> rows) {
  llvm::SmallVector<int64_t> out{shape.front()};
  out.append(rows.begin(), rows.end());
  out.append(shape.begin() + 1, shape.end());
  return out;
}

/// A shape attribute as the prims write it: the batch as -1.
llvm::SmallVector<int64_t> attrShape(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> out(shape.begin(), shape.end());
  for (int64_t &d : out)
    if (mlir::ShapedType::isDynamic(d))
      d = -1;
  return out;
}

class Unmerger {
public:
  void run(SubgraphOp subgraph) {
    llvm::SmallVector<PrimOp> prims;
    subgraph.walk([&](PrimOp op) { prims.push_back(op); });
    for (PrimOp op : prims) {
      if (recordMerge(op))
        continue;
      if (llvm::any_of(op->getOperands(), [&](mlir::Value v) { return wide_.count(v); }))
        rewrite(op);
    }
    // What nothing reads any more, last first.
    for (mlir::Operation *op : llvm::reverse(touched_))
      if (op->use_empty())
        op->erase();
  }

private:
  struct Wide {
    mlir::Value value;               // the same elements with the merged dims apart
    llvm::SmallVector<int64_t> rows; // the static dims merged into the batch
  };

  /// A reshape [?, R..., T...] -> [?, T...]: its result stands for its operand.
  bool recordMerge(PrimOp op) {
    if (toOpsPrim(op.getPrim()) != Prim::Reshape || wide_.count(op->getOperand(0)))
      return false;
    mlir::RankedTensorType in = typeOf(op->getOperand(0)), out = typeOf(op.getResult());
    if (!batchFirst(in) || !batchFirst(out) || out.getRank() >= in.getRank())
      return false;
    int64_t merged = in.getRank() - out.getRank();
    if (in.getShape().drop_front(1 + merged) != out.getShape().drop_front(1))
      return false;
    wide_[op.getResult()] = {op->getOperand(0),
                             llvm::SmallVector<int64_t>(in.getShape().slice(1, merged))};
    touched_.insert(op);
    return true;
  }

  /// The unmerged form of operand `v` of a row-wise op over rows `rows`: its Wide value, or a
  /// broadcast or constant of static values made again at the wider shape; null otherwise.
  mlir::Value unmerged(mlir::OpBuilder &b, mlir::Value v, llvm::ArrayRef<int64_t> rows) {
    if (auto it = wide_.find(v); it != wide_.end())
      return it->second.rows == rows ? it->second.value : mlir::Value();
    auto source = v.getDefiningOp<PrimOp>();
    Prim prim = source ? toOpsPrim(source.getPrim()) : Prim::Reshape;
    bool staticSource =
        prim == Prim::FillConstant ||
        (prim == Prim::BroadcastTo && typeOf(source->getOperand(0)).hasStaticShape());
    if (!source || !staticSource || !batchFirst(typeOf(v)))
      return {};
    auto type = typeOf(v).clone(widen(typeOf(v).getShape(), rows)); // keeps the sizes' encoding
    mlir::Operation *copy = b.clone(*source);
    copy->getResult(0).setType(type);
    copy->setAttr("shape", b.getDenseI64ArrayAttr(attrShape(type.getShape())));
    touched_.insert(source);
    touched_.insert(copy);
    return copy->getResult(0);
  }

  void rewrite(PrimOp op) {
    Prim prim = toOpsPrim(op.getPrim());
    llvm::SmallVector<int64_t> rows;
    for (mlir::Value v : op->getOperands())
      if (auto it = wide_.find(v); it != wide_.end())
        rows = it->second.rows;
    mlir::RankedTensorType out = typeOf(op.getResult());
    mlir::OpBuilder b(op);
    PrimKind kind = ops::primKind(prim);
    bool rowWise = kind == PrimKind::Unary || kind == PrimKind::Binary ||
                   kind == PrimKind::Compare || kind == PrimKind::Select;
    bool rowsOfGemm = kind == PrimKind::Matmul && wide_.count(op->getOperand(0)) &&
                      !wide_.count(op->getOperand(1)) && typeOf(op->getOperand(0)).getRank() == 2 &&
                      !op.getTransposeX().value_or(false) &&
                      typeOf(op->getOperand(1)).hasStaticShape();
    bool reduceRows = kind == PrimKind::Reduce && op.getAxes() && !op.getAxes()->empty() &&
                      !llvm::is_contained(*op.getAxes(), 0);
    bool reshape = prim == Prim::Reshape && batchFirst(out);
    // A row's values broadcast within it (a softmax's maximum to its row).
    bool broadcastInRows = prim == Prim::BroadcastTo && batchFirst(out) &&
                           typeOf(op->getOperand(0)).getRank() == out.getRank();
    if (!rowWise && !rowsOfGemm && !reduceRows && !reshape && !broadcastInRows)
      return;
    llvm::SmallVector<mlir::Value> operands;
    for (mlir::Value v : op->getOperands()) {
      // A GEMM's B and static operands stay as they are.
      mlir::Value u = rowsOfGemm && v == op->getOperand(1) ? v : unmerged(b, v, rows);
      if (!u)
        return;
      operands.push_back(u);
    }
    if (reshape) {
      int64_t perRow = product(out.getShape().drop_front());
      int64_t widePerRow = product(typeOf(operands[0]).getShape().drop_front());
      if (perRow == widePerRow) { // unmerged again: the same elements per batch row
        if (typeOf(operands[0]) == out) {
          op.getResult().replaceAllUsesWith(operands[0]);
        } else {
          mlir::Operation *copy = b.clone(*op);
          copy->setOperands(operands);
          op.getResult().replaceAllUsesWith(copy->getResult(0));
        }
        touched_.insert(op);
        return;
      }
      if (perRow * product(rows) != widePerRow) // another merge: not of this form
        return;
    }
    mlir::Operation *copy = b.clone(*op);
    copy->setOperands(operands);
    touched_.insert(copy);
    auto type = out.clone(widen(out.getShape(), rows));
    copy->getResult(0).setType(type);
    if (reshape || broadcastInRows)
      copy->setAttr("shape", b.getDenseI64ArrayAttr(attrShape(type.getShape())));
    if (reduceRows) { // the axes after the batch move by the rows put back
      llvm::ArrayRef<int64_t> before = *op.getAxes();
      llvm::SmallVector<int64_t> axes;
      for (int64_t a : before)
        axes.push_back(a + static_cast<int64_t>(rows.size()));
      copy->setAttr("axes", b.getDenseI64ArrayAttr(axes));
    }
    wide_[op.getResult()] = {copy->getResult(0), rows};
    touched_.insert(op);
  }

  llvm::DenseMap<mlir::Value, Wide> wide_;
  llvm::SetVector<mlir::Operation *> touched_; // erased at the end where nothing reads them
};

struct SirUnmergeBatchPass : impl::SirUnmergeBatchBase<SirUnmergeBatchPass> {
  void runOnOperation() override { Unmerger().run(getOperation()); }
};

} // namespace
} // namespace sotc::sir
