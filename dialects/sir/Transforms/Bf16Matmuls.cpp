//===- Bf16Matmuls.cpp - float32 matmuls computed in bfloat16 (--precision bf16) ----------===//
//
// Before sotc-sir-widen-half. `sotc compile --precision bf16` asks for what OpenVINO's
// INFERENCE_PRECISION_HINT=bf16 and torch's CPU autocast do: a float32 model's matrix
// products read bfloat16 operands and accumulate in float32, on AMX or AVX-512 BF16 where the
// CPU has them. Each float32 matmul of static shape becomes one of operands rounded to
// bfloat16, its product rounded once and widened for what reads it (on the CPU, whose oneDNN
// stores float32 products, `f32-products`: not rounded); sotc-sir-widen-half then keeps it a
// bfloat16 GEMM step, and the roundings of the operands fuse into the kernels that
// compute them (a weight's is hoisted: rounded once, at load). Everything else (normalizations,
// softmax, the elementwise math) stays float32.
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sir/Transforms/Passes.h"
#include "dialects/sir/Transforms/PrimGraphs.h"

#include "compiler/ops/Primitives.h"

#include "mlir/IR/Builders.h"

namespace sotc::sir {

#define GEN_PASS_DEF_SIRBF16MATMULS
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

mlir::RankedTensorType tensorType(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// A float32 matmul whose shapes are static (a GEMM planned ahead; sotc-sir-widen-half widens
/// a dynamic one again, which would only round).
bool narrowable(PrimOp p) {
  if (toOpsPrim(p.getPrim()) != ops::Prim::Matmul)
    return false;
  return llvm::all_of(p->getOperands(),
                      [](mlir::Value v) {
                        return tensorType(v).getElementType().isF32() &&
                               tensorType(v).hasStaticShape();
                      }) &&
         tensorType(p.getResult()).getElementType().isF32() &&
         tensorType(p.getResult()).hasStaticShape();
}

struct SirBf16MatmulsPass : impl::SirBf16MatmulsBase<SirBf16MatmulsPass> {
  using Base::Base;

  void runOnOperation() override {
    mlir::Type bf16 = mlir::BFloat16Type::get(&getContext());
    llvm::SmallVector<PrimOp> matmuls;
    getOperation().getBody().front().walk([&](PrimOp p) {
      if (narrowable(p))
        matmuls.push_back(p);
    });
    for (PrimOp p : matmuls) {
      mlir::OpBuilder b(p);
      for (mlir::OpOperand &operand : p->getOpOperands())
        operand.set(castPrim(b, p.getLoc(), operand.get(), tensorType(operand.get()).clone(bf16)));
      if (f32Products)
        continue;
      mlir::RankedTensorType wide = tensorType(p.getResult());
      p.getResult().setType(wide.clone(bf16));
      b.setInsertionPointAfter(p);
      mlir::Value widened = castPrim(b, p.getLoc(), p.getResult(), wide);
      p.getResult().replaceAllUsesExcept(widened, widened.getDefiningOp());
    }
  }
};

} // namespace
} // namespace sotc::sir
