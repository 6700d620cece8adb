//===- LowerActivations.cpp - Lowerings: activations, softmax, normalizations, dropout --------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <cmath>

namespace sotc::ops::lowering {

void registerActivations(OpTable &t) {
  const std::string pf = "paddle.nn.functional.", tf = "torch.nn.functional.";
  auto relu = [](std::string xn) {
    return [xn](Lowering &L) {
      int x = L.in(xn);
      L.out(L.b.binary(Prim::Max, x, L.b.fill(0, {}, L.b.meta(x).dtype)));
    };
  };
  t.bind(pf + "relu", relu("x"));
  t.bind("Tensor.relu", relu("x"));
  t.bind(tf + "relu", relu("input"));
  auto relu6 = [](std::string xn) {
    return [xn](Lowering &L) {
      int x = L.in(xn);
      DType d = L.b.meta(x).dtype;
      L.out(
          L.b.binary(Prim::Min, L.b.binary(Prim::Max, x, L.b.fill(0, {}, d)), L.b.fill(6, {}, d)));
    };
  };
  t.bind(pf + "relu6", relu6("x"));
  t.bind(tf + "relu6", relu6("input"));
  auto leaky = [](std::string xn, std::string slope) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      int zero = L.b.fill(0, {}, L.b.meta(x).dtype);
      L.out(L.b.select(L.b.binary(Prim::Greater, x, zero), x,
                       L.b.binaryScalar(Prim::Mul, x, L.args.scalar(slope))));
    };
  };
  t.bind(pf + "leaky_relu", leaky("x", "negative_slope"));
  t.bind(tf + "leaky_relu", leaky("input", "negative_slope"));
  t.bind(pf + "gelu", [](Lowering &L) {
    L.out(gelu(L.b, floatInput(L, "x"), L.args.boolValue("approximate")));
  });
  t.bind(tf + "gelu", [](Lowering &L) {
    const std::string &mode = L.args.get("approximate").stringValue;
    if (mode != "none" && mode != "tanh")
      badValue(L, "approximate must be 'none' or 'tanh', not '" + mode + "'");
    L.out(gelu(L.b, floatInput(L, "input"), mode == "tanh"));
  });
  auto silu = [](std::string xn) {
    return [xn](Lowering &L) {
      int x = floatInput(L, xn);
      L.out(L.b.binary(Prim::Mul, x, sigmoid(L.b, x)));
    };
  };
  t.bind(pf + "silu", silu("x"));
  t.bind(tf + "silu", silu("input"));
  t.bind(pf + "softmax", softmaxOp("x", "axis", "dtype", false));
  t.bind(pf + "log_softmax", softmaxOp("x", "axis", "dtype", true));
  t.bind(tf + "softmax", softmaxOp("input", "dim", "dtype", false));
  t.bind(tf + "log_softmax", softmaxOp("input", "dim", "dtype", true));
  t.bind(pf + "layer_norm", layerNormOp("x", "normalized_shape", "weight", "bias", "epsilon"));
  t.bind(tf + "layer_norm", layerNormOp("input", "normalized_shape", "weight", "bias", "eps"));
  // paddle.incubate's fused_rms_norm normalizes the axes from begin_norm_axis on.
  t.bind("paddle.incubate.nn.functional.fused_rms_norm", [](Lowering &L) {
    int x = floatInput(L, "x");
    int64_t rank = L.b.meta(x).rank();
    std::vector<int64_t> axes;
    for (int64_t a = normalizeAxis("fused_rms_norm", L.args.intValue("begin_norm_axis"), rank);
         a < rank; ++a)
      axes.push_back(a);
    L.out(affine(L, rmsNorm(L, x, axes, L.args.scalar("epsilon")), "norm_weight", "norm_bias"));
  });
  t.bind(tf + "rms_norm", [](Lowering &L) {
    int x = floatInput(L, "input");
    std::vector<int64_t> axes = trailingAxes(L, x, L.args.intList("normalized_shape"));
    double eps = L.args.isNone("eps") ? 1.1920928955078125e-07 : L.args.scalar("eps");
    L.out(affine(L, rmsNorm(L, x, axes, eps), "weight", ""));
  });
  auto dropout = [](std::string xn, std::string training) {
    return [=](Lowering &L) {
      if (L.args.boolValue(training))
        badValue(L, "training=True is not supported: sotc compiles inference (pass "
                    "training=False)");
      L.out(L.in(xn));
    };
  };
  t.bind(pf + "dropout", dropout("x", "training"));
  t.bind(tf + "dropout", dropout("input", "training"));
}

/// Python operators on tensors; in-place forms compute the same value (the frontend rebinds).

} // namespace sotc::ops::lowering
