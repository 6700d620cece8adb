//===- UnmergeBatch.cpp - Rows flattened with their batch, computed unflattened -----------===//
//
// A reshape that merges the dynamic batch with the dims after it ([?, 16, 64] -> [16*s0, 64],
// [B, T, C] -> [B*T, C]: the tokens flattened with their batch around a GEMM, transformers'
// Conv1D) makes rows that are a product of sizes. What row-wise work follows (elementwise math,
// GEMMs with it as the rows, reductions over the other dims, broadcasts of static tensors to it)
// computes the same on the unmerged tensor ([?, 16, 64]), as do broadcasts within its rows, and a
// reshape that unmerges it again ([16*s0, 64] -> [?, 16, 64]) reads that directly. This pass
// rewrites those users onto the unmerged tensors, whose kernels index rows by the sizes themselves;
// anything else keeps the merging reshape.
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sir/Transforms/Passes.h"

#include "compiler/ops/Primitives.h"
#include "dialects/sir/IR/SirTypes.h"

#include "dialects/sir/Transforms/PrimGraphs.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace sotc::sir {

#define GEN_PASS_DEF_SIRUNMERGEBATCH
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

using ops::Prim;
using ops::PrimKind;

mlir::RankedTensorType typeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// `v`'s shape with its dynamic dims as the sizes they are (ops::dynamicDim, productDim).
std::vector<int64_t> shapeOf(mlir::Value v) { return shapeWithSizes(typeOf(v)); }

/// `type` at `shape` (its encoding made again for the sizes there).
mlir::RankedTensorType retyped(mlir::RankedTensorType type, std::vector<int64_t> shape) {
  ops::TensorMeta meta = *metaOf(type);
  meta.shape = std::move(shape);
  return tensorType(type.getContext(), meta);
}

bool batchFirst(const std::vector<int64_t> &shape) {
  return !shape.empty() && ops::isDynamicDim(shape[0]) &&
         std::none_of(shape.begin() + 1, shape.end(), ops::isDynamicDim);
}

ops::SizeProduct productOf(llvm::ArrayRef<int64_t> dims) {
  return ops::productOf(std::vector<int64_t>(dims.begin(), dims.end()));
}

/// A shape attribute as the prims write it: each dynamic dim as -1.
llvm::SmallVector<int64_t> attrShape(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> out(shape.begin(), shape.end());
  for (int64_t &d : out)
    if (d < 0)
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
    // What still reads merged rows that were computed apart (a result returned merged) reads
    // a view of those, not the merged work again.
    for (PrimOp op : prims)
      if (auto it = wide_.find(op.getResult());
          it != wide_.end() && !op.getResult().use_empty() && !merges_.count(op))
        op.getResult().replaceAllUsesWith(view(it->second.value, op.getResult()));
    // What nothing reads any more, until nothing is left to erase.
    for (bool erased = true; erased;) {
      erased = false;
      for (mlir::Operation *&op : touched_)
        if (op && op->use_empty()) {
          op->erase();
          op = nullptr;
          erased = true;
        }
    }
  }

private:
  struct Wide {
    mlir::Value value;         // the same elements with the merged dims apart
    std::vector<int64_t> rows; // the dims merged into the first, that one first
  };

  /// `shape` (merged: its first dim the rows' product) with the rows apart.
  static std::vector<int64_t> widen(const std::vector<int64_t> &shape,
                                    const std::vector<int64_t> &rows) {
    std::vector<int64_t> out(rows);
    out.insert(out.end(), shape.begin() + 1, shape.end());
    return out;
  }

  /// A reshape [R..., T...] -> [R0*R1*..., T...] of a dynamic R0: its result stands for its
  /// operand (rows R static or dynamic: [?, 16, 64] -> [16*s0, 64], [B, T, C] -> [B*T, C]).
  bool recordMerge(PrimOp op) {
    if (toOpsPrim(op.getPrim()) != Prim::Reshape || wide_.count(op->getOperand(0)))
      return false;
    std::vector<int64_t> in = shapeOf(op->getOperand(0)), out = shapeOf(op.getResult());
    if (in.empty() || !ops::isDynamicDim(in[0]) || !batchFirst(out) || out.size() >= in.size())
      return false;
    size_t merged = in.size() - out.size() + 1;
    if (!std::equal(in.begin() + merged, in.end(), out.begin() + 1) ||
        productOf(llvm::ArrayRef(in).take_front(merged)) != ops::productOf(out[0]))
      return false;
    wide_[op.getResult()] = {op->getOperand(0),
                             std::vector<int64_t>(in.begin(), in.begin() + merged)};
    merges_.insert(op);
    touch(op);
    return true;
  }

  /// A reshape of `wide` to `merged`'s type, placed after `wide`.
  mlir::Value view(mlir::Value wide, mlir::Value merged) {
    mlir::OpBuilder b(merged.getContext());
    b.setInsertionPointAfterValue(wide);
    PrimOp reshape = createPrim(b, merged.getLoc(), merged.getType(), Prim::Reshape, wide);
    reshape->setAttr("shape", b.getDenseI64ArrayAttr(attrShape(typeOf(merged).getShape())));
    touch(reshape);
    return reshape.getResult();
  }

  /// The unmerged form of operand `v` of a row-wise op over rows `rows`: its Wide value, or a
  /// broadcast or constant of static values made again at the wider shape; null otherwise.
  mlir::Value unmerged(mlir::OpBuilder &b, mlir::Value v, const std::vector<int64_t> &rows) {
    if (auto it = wide_.find(v); it != wide_.end())
      return it->second.rows == rows ? it->second.value : mlir::Value();
    auto source = v.getDefiningOp<PrimOp>();
    Prim prim = source ? toOpsPrim(source.getPrim()) : Prim::Reshape;
    bool staticSource =
        prim == Prim::FillConstant ||
        (prim == Prim::BroadcastTo && typeOf(source->getOperand(0)).hasStaticShape());
    if (!source || !staticSource || !batchFirst(shapeOf(v)))
      return {};
    auto type = retyped(typeOf(v), widen(shapeOf(v), rows));
    mlir::Operation *copy = b.clone(*source);
    copy->getResult(0).setType(type);
    copy->setAttr("shape", b.getDenseI64ArrayAttr(attrShape(type.getShape())));
    touch(source);
    touch(copy);
    return copy->getResult(0);
  }

  void rewrite(PrimOp op) {
    Prim prim = toOpsPrim(op.getPrim());
    std::vector<int64_t> rows;
    for (mlir::Value v : op->getOperands())
      if (auto it = wide_.find(v); it != wide_.end())
        rows = it->second.rows;
    std::vector<int64_t> out = shapeOf(op.getResult());
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
    bool reshape = prim == Prim::Reshape;
    // A row's values broadcast within it (a softmax's maximum to its row).
    bool broadcastInRows = prim == Prim::BroadcastTo && batchFirst(out) &&
                           typeOf(op->getOperand(0)).getRank() == static_cast<int64_t>(out.size());
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
      std::vector<int64_t> wide = shapeOf(operands[0]);
      auto perRow = productOf(llvm::ArrayRef(out).drop_front()),
           widePerRow = productOf(llvm::ArrayRef(wide).drop_front());
      if (out[0] == wide[0] && perRow == widePerRow) { // unmerged again: [B*T, C] -> [B, T, C]
        if (typeOf(operands[0]) == typeOf(op.getResult())) {
          op.getResult().replaceAllUsesWith(operands[0]);
        } else {
          mlir::Operation *copy = b.clone(*op);
          copy->setOperands(operands);
          op.getResult().replaceAllUsesWith(copy->getResult(0));
        }
        touch(op);
        return;
      }
      // Another merge of the same rows ([B*T, 2, 4] -> [B*T, 8]) stays merged the same way.
      if (!batchFirst(out) || out[0] != ops::productDim(productOf(rows)) ||
          perRow * productOf(llvm::ArrayRef(rows).drop_front()) != widePerRow)
        return;
    }
    mlir::Operation *copy = b.clone(*op);
    copy->setOperands(operands);
    touch(copy);
    auto type = retyped(typeOf(op.getResult()), widen(out, rows));
    copy->getResult(0).setType(type);
    if (reshape || broadcastInRows)
      copy->setAttr("shape", b.getDenseI64ArrayAttr(attrShape(type.getShape())));
    if (reduceRows) { // the axes after the rows' first move by the others put back
      llvm::ArrayRef<int64_t> before = *op.getAxes();
      llvm::SmallVector<int64_t> axes;
      for (int64_t a : before)
        axes.push_back(a + static_cast<int64_t>(rows.size()) - 1);
      copy->setAttr("axes", b.getDenseI64ArrayAttr(axes));
    }
    wide_[op.getResult()] = {copy->getResult(0), rows};
    touch(op);
  }

  llvm::DenseMap<mlir::Value, Wide> wide_;
  llvm::SmallPtrSet<mlir::Operation *, 8> merges_; // the reshapes that merge (recordMerge)
  // Erased at the end where nothing reads them, each once (null once erased).
  std::vector<mlir::Operation *> touched_;
  llvm::SmallPtrSet<mlir::Operation *, 16> seen_;
  void touch(mlir::Operation *op) {
    if (seen_.insert(op).second)
      touched_.push_back(op);
  }
};

struct SirUnmergeBatchPass : impl::SirUnmergeBatchBase<SirUnmergeBatchPass> {
  void runOnOperation() override { Unmerger().run(getOperation()); }
};

} // namespace
} // namespace sotc::sir
