//===- WidenHalf.cpp - float16 and bfloat16 computed in float32 -------------------------===//
//
// Half precision is a storage format: the frameworks compute elementwise math in float32
// registers and accumulate reductions in float32. Here every primitive that produces or reads
// a float16/bfloat16 tensor is rebuilt on float32 (layout primitives move the widened values);
// a subgraph input in half is widened where it is read, an output is rounded to half once,
// before it is returned. A cast to half the program asks for keeps its rounding (a cast to
// half and back). Values between kernels stay in float32: each rounding the framework would
// make between two of them is one sotc skips, so results are as accurate or more.
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sir/IR/SirTypes.h"
#include "dialects/sir/Transforms/Passes.h"
#include "dialects/sir/Transforms/PrimGraphs.h"

#include "compiler/ops/Primitives.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace sotc::sir {

#define GEN_PASS_DEF_SIRWIDENHALF
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

bool isHalf(mlir::Type t) {
  mlir::Type e = mlir::cast<mlir::RankedTensorType>(t).getElementType();
  return e.isF16() || e.isBF16();
}

mlir::RankedTensorType withElement(mlir::Type t, mlir::Type element) {
  return mlir::cast<mlir::RankedTensorType>(t).clone(element);
}

/// A matmul a GEMM library can run in half: half operands (bfloat16 where `bf16Only`), a
/// result of their type or, of bfloat16 ones, float32 (sotc-sir-bf16-matmuls' on the CPU),
/// static shapes (planned ahead).
bool libraryMatmul(PrimOp p, bool bf16Only) {
  if (toOpsPrim(p.getPrim()) != ops::Prim::Matmul)
    return false;
  mlir::Type operand =
      mlir::cast<mlir::RankedTensorType>(p->getOperand(0).getType()).getElementType();
  mlir::Type result = mlir::cast<mlir::RankedTensorType>(p.getType()).getElementType();
  return isHalf(p->getOperand(0).getType()) && (!bf16Only || operand.isBF16()) &&
         (result == operand || (operand.isBF16() && result.isF32())) &&
         llvm::all_of(
             p->getOperandTypes(),
             [](mlir::Type t) { return mlir::cast<mlir::RankedTensorType>(t).hasStaticShape(); }) &&
         mlir::cast<mlir::RankedTensorType>(p.getType()).hasStaticShape();
}

struct SirWidenHalfPass : impl::SirWidenHalfBase<SirWidenHalfPass> {
  using Base::Base;

  void runOnOperation() override {
    SubgraphOp subgraph = getOperation();
    mlir::Block &body = subgraph.getBody().front();
    mlir::Type f32 = mlir::Float32Type::get(&getContext());
    mlir::IRMapping widened; // a half value -> its float32 value
    mlir::IRMapping exact;   // a float32 value -> the half value it widens exactly
    auto wide = [&](mlir::Value v) -> mlir::Value {
      if (!isHalf(v.getType()))
        return v;
      if (mlir::Value w = widened.lookupOrNull(v))
        return w;
      // A half input (an argument): widened once, where the body starts.
      mlir::OpBuilder top = mlir::OpBuilder::atBlockBegin(&body);
      mlir::Value w = castPrim(top, v.getLoc(), v, withElement(v.getType(), f32));
      widened.map(v, w);
      exact.map(w, v);
      return w;
    };
    llvm::SmallVector<PrimOp> prims(body.getOps<PrimOp>());
    for (PrimOp p : prims) {
      bool halfResult = isHalf(p.getType());
      bool halfOperand =
          llvm::any_of(p.getOperands(), [](mlir::Value v) { return isHalf(v.getType()); });
      if (!halfResult && !halfOperand)
        continue;
      mlir::OpBuilder b(p);
      if ((halfMatmuls && libraryMatmul(p, bf16MatmulsOnly)) ||
          toOpsPrim(p.getPrim()) == ops::Prim::IndexCopy) {
        // Half operands as the framework stores them (a computed one rounded once); the
        // library accumulates in float32 and rounds its result once. An index_copy step
        // moves half values as they are (a half KV cache is written in place).
        for (mlir::OpOperand &operand : p->getOpOperands()) {
          mlir::Value v = operand.get();
          if (!isHalf(v.getType()) || mlir::isa<mlir::BlockArgument>(v))
            continue;
          mlir::Value w = wide(v);
          mlir::Value half = exact.lookupOrNull(w);
          operand.set(half ? half : castPrim(b, p.getLoc(), w, v.getType()));
        }
        if (!halfResult) // a float32 product (of bfloat16 operands): read as it is
          continue;
        b.setInsertionPointAfter(p);
        mlir::Value w = castPrim(b, p.getLoc(), p.getResult(), withElement(p.getType(), f32));
        widened.map(p.getResult(), w);
        exact.map(w, p.getResult());
        continue;
      }
      llvm::SmallVector<mlir::Value> operands;
      for (mlir::Value v : p.getOperands())
        operands.push_back(wide(v));
      if (toOpsPrim(p.getPrim()) == ops::Prim::Cast) {
        mlir::Value from = operands.front();
        if (halfResult) { // the program's rounding to half, kept; computed on in float32
          mlir::Value rounded = castPrim(b, p.getLoc(), from, p.getType());
          mlir::Value w = castPrim(b, p.getLoc(), rounded, withElement(p.getType(), f32));
          widened.map(p.getResult(), w);
          exact.map(w, rounded);
        } else {
          p->setOperands(operands);
        }
        continue;
      }
      if (!halfResult) { // a comparison of halves, or an integer result: its operands widen
        p->setOperands(operands);
        continue;
      }
      mlir::Operation *clone = b.clone(*p);
      clone->setOperands(operands);
      clone->getResult(0).setType(withElement(p.getType(), f32));
      widened.map(p.getResult(), clone->getResult(0));
    }
    // What the subgraph returns in half is rounded once, there.
    mlir::Operation *terminator = body.getTerminator();
    mlir::OpBuilder b(terminator);
    for (mlir::OpOperand &out : terminator->getOpOperands())
      if (mlir::Value w = widened.lookupOrNull(out.get())) {
        auto def = out.get().getDefiningOp<PrimOp>();
        // Already half (an input, the program's own cast to half): no second rounding.
        mlir::Value half = exact.lookupOrNull(w);
        if (half && mlir::isa<mlir::BlockArgument>(half)) {
          out.set(half);
          continue;
        }
        mlir::Value rounded = half ? half : castPrim(b, out.get().getLoc(), w, out.get().getType());
        if (def && def.getNameAttr()) { // the frontend's name moves to the returned value
          rounded.getDefiningOp()->setAttr("name", def.getNameAttr());
          if (auto wideDef = w.getDefiningOp<PrimOp>())
            wideDef.removeNameAttr();
        }
        out.set(rounded);
      }
    // The float32 values of what the framework stores in half, for sotc-sir-store-half: an
    // operator's result (named by the frontend), an input, a rounding the program or a GEMM
    // made. Not the steps inside one operator (a mean's sum may not fit in half).
    for (auto [half, wide] : widened.getValueMap()) {
      auto def = wide.getDefiningOp<PrimOp>();
      auto original = half.getDefiningOp<PrimOp>();
      if (def && (!original || original.getNameAttr() || exact.contains(wide)))
        def->setAttr(kStoredAs,
                     mlir::TypeAttr::get(
                         mlir::cast<mlir::RankedTensorType>(half.getType()).getElementType()));
    }
    // The half originals nothing reads any more, and widened values nothing reads (a half
    // result returned as it is).
    for (PrimOp p : llvm::reverse(prims))
      if (p->use_empty() && widened.contains(p.getResult()))
        p->erase();
    llvm::SmallVector<PrimOp> all(body.getOps<PrimOp>());
    for (PrimOp p : llvm::reverse(all))
      if (p->use_empty() && exact.contains(p.getResult()))
        p->erase();
  }
};

} // namespace
} // namespace sotc::sir
