//===- FoldEmptyTensors.cpp - Tensors with no elements computed by nothing ----------------===//
//
// A tensor with no elements has no values, only a shape and a dtype: whatever computes it
// becomes an operand-less fill_constant that sotc-sir-fuse leaves outside every group (no
// kernel runs for it). What reads one and still has elements is folded by what it means:
//   reduce over nothing -> the reduction's identity (sum 0, prod 1, max -inf, min +inf)
//   matmul with k = 0   -> zeros
//   concat              -> the concat of its other operands
// Any other primitive with an empty operand and a non-empty result is E4002.
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sir/IR/SirTypes.h"
#include "dialects/sir/Transforms/Passes.h"
#include "dialects/sir/Transforms/PrimGraphs.h"

#include "compiler/ops/Primitives.h"
#include "compiler/support/MlirDiagnostics.h"

#include "mlir/IR/Builders.h"

#include <cmath>
#include <limits>

namespace sotc::sir {

#define GEN_PASS_DEF_SIRFOLDEMPTYTENSORS
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

/// Whether `v` has no elements: a static dimension of 0, whatever its dynamic sizes.
bool isEmpty(mlir::Value v) {
  return llvm::is_contained(mlir::cast<mlir::RankedTensorType>(v.getType()).getShape(), 0);
}

/// The value a reduction over no elements starts from, in `dtype`'s range.
double reductionIdentity(ops::Prim prim, ops::DType dtype) {
  bool max = prim == ops::Prim::ReduceMax;
  if (prim == ops::Prim::ReduceSum)
    return 0;
  if (prim == ops::Prim::ReduceProd)
    return 1;
  if (ops::isFloating(dtype))
    return max ? -INFINITY : INFINITY;
  switch (dtype) {
  case ops::DType::Bool:
    return max ? 0 : 1;
  case ops::DType::Int8:
    return max ? INT8_MIN : INT8_MAX;
  case ops::DType::UInt8:
    return max ? 0 : UINT8_MAX;
  case ops::DType::Int16:
    return max ? INT16_MIN : INT16_MAX;
  case ops::DType::Int32:
    return max ? INT32_MIN : INT32_MAX;
  default: // int64: INT64_MAX is no double; the largest one below it
    return max ? static_cast<double>(INT64_MIN) : std::nextafter(0x1p63, 0.0);
  }
}

/// An operand-less fill of `like`'s type and name, replacing `like`.
void replaceWithFill(PrimOp like, double value) {
  mlir::OpBuilder b(like);
  auto type = mlir::cast<mlir::RankedTensorType>(like.getType());
  PrimOp fill = createPrim(b, like.getLoc(), type, ops::Prim::FillConstant, {});
  fill.setValueAttr(b.getF64FloatAttr(value));
  llvm::SmallVector<int64_t> shape; // -1 for a dynamic dimension, as the verifier reads it
  for (int64_t d : type.getShape())
    shape.push_back(mlir::ShapedType::isDynamic(d) ? -1 : d);
  fill.setShapeAttr(b.getDenseI64ArrayAttr(shape));
  if (like.getNameAttr())
    fill.setNameAttr(like.getNameAttr());
  like.replaceAllUsesWith(fill.getResult());
  like.erase();
}

struct SirFoldEmptyTensorsPass : impl::SirFoldEmptyTensorsBase<SirFoldEmptyTensorsPass> {
  void runOnOperation() override {
    llvm::SmallVector<PrimOp> prims(getOperation().getBody().front().getOps<PrimOp>());
    for (PrimOp p : prims) { // in program order: operands are folded first
      ops::Prim prim = toOpsPrim(p.getPrim());
      if (isEmpty(p.getResult())) {
        if (prim != ops::Prim::FillConstant || p.getNumOperands() != 0)
          replaceWithFill(p, 0);
        continue;
      }
      if (llvm::none_of(p.getOperands(), isEmpty))
        continue;
      if (ops::primKind(prim) == ops::PrimKind::Reduce) {
        auto type = mlir::cast<mlir::RankedTensorType>(p.getType());
        replaceWithFill(p, reductionIdentity(prim, metaOf(type)->dtype));
      } else if (prim == ops::Prim::Matmul) {
        replaceWithFill(p, 0);
      } else if (prim == ops::Prim::Concat) {
        llvm::SmallVector<mlir::Value> kept;
        for (mlir::Value v : p.getOperands())
          if (!isEmpty(v))
            kept.push_back(v);
        if (kept.size() == 1) {
          p.replaceAllUsesWith(kept.front());
          p.erase();
        } else {
          p->setOperands(kept);
        }
      } else {
        emitCodedError(p.getLoc(), DiagCode::KernelUnsupported)
            << stringifyPrimitive(p.getPrim()) << " of a tensor with no elements into "
            << p.getType() << " is not supported yet";
        return signalPassFailure();
      }
    }
  }
};

} // namespace
} // namespace sotc::sir
