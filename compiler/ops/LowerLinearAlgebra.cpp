//===- LowerLinearAlgebra.cpp - Lowerings: matmul and linear ----------------------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <cmath>

namespace sotc::ops::lowering {

namespace {
/// softmax(q k^T * scale + mask) v over [..., L, E] x [..., S, E] x [..., S, Ev]; a bool mask
/// keeps where true (-inf elsewhere), a float mask adds; is_causal keeps query i's keys 0..i.
LowerFn attentionOp(bool paddleLayout) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    bool dropout = L.args.scalar("dropout_p") != 0 &&
                   (!paddleLayout || L.args.boolValue("training"));
    if (dropout)
      badValue(L, "dropout_p must be 0 (sotc compiles inference)");
    int q = floatInput(L, "query"), k = floatInput(L, "key"), v = floatInput(L, "value");
    int64_t rank = b.meta(q).rank();
    if (rank < 2 || b.meta(k).rank() != rank || b.meta(v).rank() != rank)
      badValue(L, "query, key and value must have the same rank, at least 2");
    // paddle's layout is [batch, seq, heads, dim]: attention runs over [batch, heads, seq, dim].
    std::vector<int64_t> swap;
    if (paddleLayout) {
      if (rank != 4)
        badValue(L, "expects [batch, seq_len, num_heads, head_dim] tensors");
      swap = {0, 2, 1, 3};
      q = b.transpose(q, swap), k = b.transpose(k, swap), v = b.transpose(v, swap);
    }
    if (rank >= 3 && b.meta(q).shape[rank - 3] != b.meta(k).shape[rank - 3])
      badValue(L, "query and key have different numbers of heads (grouped-query attention is "
                  "not supported yet)");
    int64_t e = b.meta(q).shape[rank - 1];
    double scale = L.args.isNone("scale") ? 1.0 / std::sqrt(static_cast<double>(e))
                                          : L.args.scalar("scale");
    int scores = b.binaryScalar(Prim::Mul, b.matmul(q, k, false, true), scale);
    if (L.args.boolValue("is_causal")) { // query i sees keys 0..i (the top-left triangle)
      if (L.in("attn_mask") >= 0)
        badValue(L, "takes attn_mask or is_causal=True, not both");
      const std::vector<int64_t> &s = b.meta(scores).shape;
      int causal = triangle(b, s[rank - 2], s[rank - 1], 0, true);
      scores = b.select(causal, scores, b.fill(-INFINITY, {}, b.meta(scores).dtype));
    }
    if (int mask = L.in("attn_mask"); mask >= 0) {
      if (b.meta(mask).dtype == DType::Bool)
        scores = b.select(mask, scores, b.fill(-INFINITY, {}, b.meta(scores).dtype));
      else
        scores = b.binary(Prim::Add, scores, mask);
    }
    int out = b.matmul(softmax(L, scores, rank - 1, false), v, false, false);
    L.out(paddleLayout ? b.transpose(out, swap) : out);
  };
}
} // namespace

void registerLinearAlgebra(OpTable &t) {
  paddleLower(t, "matmul", [](Lowering &L) {
    L.out(L.b.matmul(L.in("x"), L.in("y"), L.args.boolValue("transpose_x"),
                     L.args.boolValue("transpose_y")));
  });
  torchLower(t, "matmul",
             [](Lowering &L) { L.out(L.b.matmul(L.in("input"), L.in("other"), false, false)); });
  // paddle's weight is [in, out]; torch's is [out, in].
  t.bind("paddle.nn.functional.linear", [](Lowering &L) {
    L.out(affine(L, L.b.matmul(L.in("x"), L.in("weight"), false, false), "", "bias"));
  });
  t.bind("torch.nn.functional.linear", [](Lowering &L) {
    L.out(affine(L, L.b.matmul(L.in("input"), L.in("weight"), false, true), "", "bias"));
  });
  t.bind("paddle.nn.functional.scaled_dot_product_attention", attentionOp(true));
  t.bind("torch.nn.functional.scaled_dot_product_attention", attentionOp(false));
}

} // namespace sotc::ops::lowering
