//===- LowerActivations.cpp - Lowerings: activations, softmax, normalizations, dropout --------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <cmath>

namespace sotc::ops::lowering {

namespace {
/// log(1 + exp(beta x)) / beta, and x itself where beta x passes the threshold (both
/// frameworks' softplus: the exp would overflow there and the two agree to rounding).
int softplus(PrimBuilder &b, int x, double beta, double threshold) {
  int bx = b.binaryScalar(Prim::Mul, x, beta);
  int soft = b.binaryScalar(Prim::Div, b.unary(Prim::Log1p, b.unary(Prim::Exp, bx)), beta);
  return b.select(b.binary(Prim::Greater, bx, scalarLike(b, threshold, x)), x, soft);
}

/// select(x > 0, x, alpha * expm1(x)) * scale: elu, and selu with its constants.
int elu(PrimBuilder &b, int x, double alpha, double scale) {
  int negative = b.binaryScalar(Prim::Mul, b.unary(Prim::Expm1, x), alpha);
  int y = b.select(b.binary(Prim::Greater, x, scalarLike(b, 0, x)), x, negative);
  return scale == 1 ? y : b.binaryScalar(Prim::Mul, y, scale);
}

/// The activations beyond ReLU's family: exponential, smooth, shrinking and gated forms.
void registerMoreActivations(OpTable &t) {
  const std::string pf = "paddle.nn.functional.", tf = "torch.nn.functional.";
  auto eluLower = [](std::string xn) {
    return [=](Lowering &L) { L.out(elu(L.b, floatInput(L, xn), L.args.scalar("alpha"), 1)); };
  };
  t.bind(pf + "elu", eluLower("x"));
  t.bind(tf + "elu", eluLower("input"));
  t.bind(pf + "selu", [](Lowering &L) {
    L.out(elu(L.b, floatInput(L, "x"), L.args.scalar("alpha"), L.args.scalar("scale")));
  });
  t.bind(tf + "selu", [](Lowering &L) {
    L.out(elu(L.b, floatInput(L, "input"), 1.6732632423543772848170429916717,
              1.0507009873554804934193349852946));
  });
  auto celu = [](std::string xn) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = floatInput(L, xn);
      double alpha = L.args.scalar("alpha");
      if (alpha == 0)
        badValue(L, "alpha must not be 0");
      int negative = b.binaryScalar(
          Prim::Mul, b.unary(Prim::Expm1, b.binaryScalar(Prim::Div, x, alpha)), alpha);
      L.out(b.binary(Prim::Add, b.binaryScalar(Prim::Max, x, 0),
                     b.binaryScalar(Prim::Min, negative, 0)));
    };
  };
  t.bind(pf + "celu", celu("x"));
  t.bind(tf + "celu", celu("input"));
  auto softplusLower = [](std::string xn) {
    return [=](Lowering &L) {
      if (L.args.scalar("beta") == 0)
        badValue(L, "beta must not be 0");
      L.out(softplus(L.b, floatInput(L, xn), L.args.scalar("beta"), L.args.scalar("threshold")));
    };
  };
  t.bind(pf + "softplus", softplusLower("x"));
  t.bind(tf + "softplus", softplusLower("input"));
  auto softsign = [](std::string xn) {
    return [=](Lowering &L) {
      int x = floatInput(L, xn);
      L.out(L.b.binary(Prim::Div, x, L.b.binaryScalar(Prim::Add, L.b.unary(Prim::Abs, x), 1)));
    };
  };
  t.bind(pf + "softsign", softsign("x"));
  t.bind(tf + "softsign", softsign("input"));
  auto mish = [](std::string xn) {
    return [=](Lowering &L) {
      int x = floatInput(L, xn);
      L.out(L.b.binary(Prim::Mul, x, L.b.unary(Prim::Tanh, softplus(L.b, x, 1, 20))));
    };
  };
  t.bind(pf + "mish", mish("x"));
  t.bind(tf + "mish", mish("input"));
  // min(x, 0) - log1p(exp(-|x|)): no exp of a large positive number on either side.
  auto logSigmoid = [](std::string xn) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = floatInput(L, xn);
      int tail =
          b.unary(Prim::Log1p, b.unary(Prim::Exp, b.unary(Prim::Neg, b.unary(Prim::Abs, x))));
      L.out(b.binary(Prim::Sub, b.binaryScalar(Prim::Min, x, 0), tail));
    };
  };
  t.bind(pf + "log_sigmoid", logSigmoid("x"));
  t.bind(tf + "logsigmoid", logSigmoid("input"));
  auto tanhshrink = [](std::string xn) {
    return [=](Lowering &L) {
      int x = floatInput(L, xn);
      L.out(L.b.binary(Prim::Sub, x, L.b.unary(Prim::Tanh, x)));
    };
  };
  t.bind(pf + "tanhshrink", tanhshrink("x"));
  t.bind(tf + "tanhshrink", tanhshrink("input"));
  auto hardshrink = [](std::string xn, std::string lambd) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = floatInput(L, xn);
      double l = L.args.scalar(lambd);
      int keep = b.binary(Prim::LogicalOr, b.binaryScalar(Prim::Greater, x, l),
                          b.binaryScalar(Prim::Less, x, -l));
      L.out(b.select(keep, x, scalarLike(b, 0, x)));
    };
  };
  t.bind(pf + "hardshrink", hardshrink("x", "threshold"));
  t.bind(tf + "hardshrink", hardshrink("input", "lambd"));
  auto softshrink = [](std::string xn, std::string lambd) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = floatInput(L, xn);
      double l = L.args.scalar(lambd);
      if (l < 0)
        badValue(L, "the threshold must not be negative");
      int below = b.select(b.binaryScalar(Prim::Less, x, -l), b.binaryScalar(Prim::Add, x, l),
                           scalarLike(b, 0, x));
      L.out(b.select(b.binaryScalar(Prim::Greater, x, l), b.binaryScalar(Prim::Sub, x, l), below));
    };
  };
  t.bind(pf + "softshrink", softshrink("x", "threshold"));
  t.bind(tf + "softshrink", softshrink("input", "lambd"));
  auto threshold = [](std::string xn) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = L.in(xn);
      if (isIntegral(b.meta(x).dtype) || b.meta(x).dtype == DType::Bool)
        x = b.cast(x, DType::Float32);
      L.out(b.select(b.binaryScalar(Prim::Greater, x, L.args.scalar("threshold")), x,
                     scalarLike(b, L.args.scalar("value"), x)));
    };
  };
  t.bind(pf + "thresholded_relu", threshold("x"));
  t.bind(tf + "threshold", threshold("input"));
  // The first half of x along the axis, gated by the sigmoid of the second.
  auto glu = [](std::string xn, std::string axisName) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = floatInput(L, xn);
      int64_t axis = normalizeDim(b.opName(), L.args.intValue(axisName), b.meta(x).rank());
      int64_t n = b.meta(x).shape[axis];
      if (isDynamicDim(n) || n % 2)
        badValue(L,
                 "halves x along axis " + std::to_string(axis) + ", whose size " +
                     (isDynamicDim(n) ? std::string("is dynamic") : std::to_string(n) + " is odd"));
      int a = b.slice(x, {axis}, {0}, {n / 2}, {1}), g = b.slice(x, {axis}, {n / 2}, {n}, {1});
      L.out(b.binary(Prim::Mul, a, sigmoid(b, g)));
    };
  };
  t.bind(pf + "glu", glu("x", "axis"));
  t.bind(tf + "glu", glu("input", "dim"));
  // weight has one element, or one per channel (axis 1; paddle's NHWC/NLC/NDHWC: the last).
  auto prelu = [](std::string xn, bool paddle) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = floatInput(L, xn), w = b.cast(L.in("weight"), b.meta(x).dtype);
      int64_t rank = b.meta(x).rank(), count = b.meta(w).numElements();
      bool channelsLast = paddle && L.args.get("data_format").stringValue.back() == 'C';
      if (count != 1) {
        int64_t axis = channelsLast ? rank - 1 : 1;
        if (rank < 2 || b.meta(x).shape[axis] != count)
          badValue(L, "weight has " + std::to_string(count) +
                          " elements; it needs one or one "
                          "per channel of an input of shape " +
                          formatShape(b.meta(x).shape));
        std::vector<int64_t> channel(static_cast<size_t>(rank), 1);
        channel[axis] = count;
        w = b.reshape(w, channel);
      } else {
        w = b.reshape(w, {});
      }
      L.out(b.binary(Prim::Add, b.binaryScalar(Prim::Max, x, 0),
                     b.binary(Prim::Mul, w, b.binaryScalar(Prim::Min, x, 0))));
    };
  };
  t.bind(pf + "prelu", prelu("x", true));
  t.bind(tf + "prelu", prelu("input", false));
  // rrelu in inference: leaky_relu with the mean of its slope range.
  auto rrelu = [](std::string xn) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      if (L.args.boolValue("training"))
        badValue(L, "training=True draws random slopes: sotc compiles inference (pass "
                    "training=False)");
      int x = floatInput(L, xn);
      double slope = (L.args.scalar("lower") + L.args.scalar("upper")) / 2;
      L.out(b.select(b.binaryScalar(Prim::GreaterEqual, x, 0), x,
                     b.binaryScalar(Prim::Mul, x, slope)));
    };
  };
  t.bind(pf + "rrelu", rrelu("x"));
  t.bind(tf + "rrelu", rrelu("input"));
  t.bind(tf + "softmin", [](Lowering &L) {
    int x = floatInput(L, "input");
    if (!L.args.isNone("dtype"))
      x = L.b.cast(x, L.args.get("dtype").dtypeValue);
    int64_t rank = L.b.meta(x).rank();
    if (L.args.isNone("dim") && rank > 1) // torch's implicit dim: 0 for 0-d, 1-d and 3-d inputs
      badValue(L, "dim=None picks a dimension implicitly (deprecated in torch): pass dim");
    int64_t dim =
        L.args.isNone("dim") ? 0 : normalizeDim(L.b.opName(), L.args.intValue("dim"), rank);
    if (rank == 0)
      return L.out(L.b.fill(1, {}, L.b.meta(x).dtype));
    L.out(softmax(L, L.b.unary(Prim::Neg, x), dim, false));
  });
  // channel_shuffle: [N, g*k, ...] -> [N, k*g, ...], the groups' channels interleaved.
  auto channelShuffle = [](std::string xn, bool paddle) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = L.in(xn);
      std::vector<int64_t> s = b.meta(x).shape;
      int64_t g = L.args.intValue("groups"), rank = b.meta(x).rank();
      bool last = paddle && L.args.get("data_format").stringValue == "NHWC";
      int64_t axis = last ? rank - 1 : 1;
      if (rank < 3)
        badValue(L, "needs an input of at least 3 dimensions, not of shape " + formatShape(s));
      if (g <= 0 || s[axis] % g)
        badValue(L, "needs an input of at least 3 dimensions whose " + std::to_string(s[axis]) +
                        " channels divide into " + std::to_string(g) + " groups");
      std::vector<int64_t> split = s;
      split[axis] = s[axis] / g;
      split.insert(split.begin() + axis, g);
      std::vector<int64_t> perm;
      for (int64_t i = 0; i <= rank; ++i)
        perm.push_back(i);
      std::swap(perm[axis], perm[axis + 1]);
      L.out(b.reshape(b.transpose(b.reshape(x, split), perm), s));
    };
  };
  t.bind(tf + "channel_shuffle", channelShuffle("input", false));
  t.bind(pf + "channel_shuffle", channelShuffle("x", true));
  // x / (k + alpha / size * sum of x^2 over `size` neighbouring channels)^beta, the window
  // centred (size/2 before, (size-1)/2 after), zeros beyond the channels.
  auto localResponseNorm = [](std::string xn, bool paddle) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = floatInput(L, xn);
      int64_t rank = b.meta(x).rank(), size = L.args.intValue("size");
      if (rank < 3 || size <= 0)
        badValue(L, "needs an input of at least 3 dimensions and a positive size");
      const std::string format = paddle ? L.args.get("data_format").stringValue : "";
      bool last = !format.empty() && format.back() == 'C';
      int64_t axis = last ? rank - 1 : 1, c = b.meta(x).shape[axis];
      // The channels' squares as [outer, 1, C, inner]: a (size x 1) window sums the neighbours.
      std::vector<int64_t> shape = b.meta(x).shape;
      int64_t outer = 1, inner = 1;
      for (int64_t a = 0; a < rank; ++a) {
        if (a < axis)
          outer *= shape[a];
        else if (a > axis)
          inner *= shape[a];
      }
      int sq = b.reshape(b.binary(Prim::Mul, x, x), {outer, 1, c, inner});
      int taps = b.window(sq, {size, 1}, {1, 1}, {1, 1}, {size / 2, (size - 1) / 2, 0, 0}, 0);
      int sum = b.reshape(b.reduce(Prim::ReduceSum, taps, {2, 3}, false), shape);
      int scale = b.binaryScalar(
          Prim::Add,
          b.binaryScalar(Prim::Mul, sum, L.args.scalar("alpha") / static_cast<double>(size)),
          L.args.scalar("k"));
      L.out(b.binary(Prim::Div, x, b.binaryScalar(Prim::Pow, scale, L.args.scalar("beta"))));
    };
  };
  t.bind(tf + "local_response_norm", localResponseNorm("input", false));
  t.bind(pf + "local_response_norm", localResponseNorm("x", true));
}
} // namespace

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
  // The hard activations: clamps of x, and of x * slope + offset.
  auto clamp = [](Lowering &L, int x, double lo, double hi) {
    return L.b.binaryScalar(Prim::Min, L.b.binaryScalar(Prim::Max, x, lo), hi);
  };
  auto hardtanh = [clamp](std::string xn, std::string lo, std::string hi) {
    return [=](Lowering &L) {
      L.out(clamp(L, L.in(xn), L.args.scalar(lo), L.args.scalar(hi)));
    };
  };
  t.bind(pf + "hardtanh", hardtanh("x", "min", "max"));
  t.bind(tf + "hardtanh", hardtanh("input", "min_val", "max_val"));
  auto hardSigmoid = [clamp](Lowering &L, int x, double slope, double offset) {
    return clamp(L, L.b.binaryScalar(Prim::Add, L.b.binaryScalar(Prim::Mul, x, slope), offset),
                 0, 1);
  };
  t.bind(pf + "hardsigmoid", [hardSigmoid](Lowering &L) {
    L.out(hardSigmoid(L, floatInput(L, "x"), L.args.scalar("slope"), L.args.scalar("offset")));
  });
  t.bind(tf + "hardsigmoid", [clamp](Lowering &L) {
    int x = floatInput(L, "input");
    L.out(L.b.binaryScalar(Prim::Div, clamp(L, L.b.binaryScalar(Prim::Add, x, 3), 0, 6), 6));
  });
  auto hardswish = [clamp](std::string xn) {
    return [=](Lowering &L) {
      int x = floatInput(L, xn);
      int gate = L.b.binaryScalar(Prim::Div, clamp(L, L.b.binaryScalar(Prim::Add, x, 3), 0, 6), 6);
      L.out(L.b.binary(Prim::Mul, x, gate));
    };
  };
  t.bind(pf + "hardswish", hardswish("x"));
  t.bind(tf + "hardswish", hardswish("input"));
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
  registerMoreActivations(t);
  t.bind(pf + "softmax", softmaxOp("x", "axis", "dtype", false));
  t.bind(pf + "log_softmax", softmaxOp("x", "axis", "dtype", true));
  t.bind(tf + "softmax", softmaxOp("input", "dim", "dtype", false));
  t.bind("torch.Tensor.softmax", softmaxOp("input", "dim", "dtype", false));
  t.bind(tf + "log_softmax", softmaxOp("input", "dim", "dtype", true));
  torchLower(t, "log_softmax", softmaxOp("input", "dim", "dtype", true));
  t.bind(pf + "layer_norm", layerNormOp("x", "normalized_shape", "weight", "bias", "epsilon"));
  t.bind(tf + "layer_norm", layerNormOp("input", "normalized_shape", "weight", "bias", "eps"));
  // (normalized, mean, rstd), the statistics kept as size-1 dims (torch's aten form).
  t.bind("torch.native_layer_norm", [](Lowering &L) {
    int x = floatInput(L, "input");
    std::vector<int64_t> axes = trailingAxes(L, x, L.args.intList("normalized_shape"));
    int m = mean(L, x, axes, true);
    int centered = L.b.binary(Prim::Sub, x, m);
    int var = mean(L, L.b.binary(Prim::Mul, centered, centered), axes, true);
    int rstd = L.b.unary(Prim::Rsqrt, L.b.binaryScalar(Prim::Add, var, L.args.scalar("eps")));
    L.out(affine(L, L.b.binary(Prim::Mul, centered, rstd), "weight", "bias"));
    L.out(m);
    L.out(rstd);
  });
  // Group norm: the channels of x [N, C, ...] in `groups` groups, each normalized over its
  // channels and positions, then scaled and shifted per channel.
  auto groupNorm = [](Lowering &L, int x, int64_t groups, double eps, const std::string &weight,
                      const std::string &bias, int *meanOut, int *rstdOut) {
    PrimBuilder &b = L.b;
    std::vector<int64_t> shape = b.meta(x).shape;
    if (shape.size() < 2)
      badValue(L, "expects an input of at least 2 dimensions [N, C, ...]");
    int64_t n = shape[0], c = shape[1];
    if (b.meta(x).numElements() == 0)
      badValue(L, "normalizes an empty tensor of shape " + formatShape(shape));
    if (groups <= 0 || c % groups)
      badValue(L, std::to_string(c) + " channels do not split into " + std::to_string(groups) +
                      " groups");
    int g = b.reshape(x, {n, groups, b.meta(x).numElements() / (n * groups)});
    int m = mean(L, g, {2}, true);
    int centered = b.binary(Prim::Sub, g, m);
    int var = mean(L, b.binary(Prim::Mul, centered, centered), {2}, true);
    int rstd = b.unary(Prim::Rsqrt, b.binaryScalar(Prim::Add, var, eps));
    int y = b.reshape(b.binary(Prim::Mul, centered, rstd), shape);
    std::vector<int64_t> channel(shape.size(), 1);
    channel[1] = c;
    if (!L.args.isNone(weight))
      y = b.binary(Prim::Mul, y, b.reshape(b.cast(L.in(weight), b.meta(y).dtype), channel));
    if (!L.args.isNone(bias))
      y = b.binary(Prim::Add, y, b.reshape(b.cast(L.in(bias), b.meta(y).dtype), channel));
    if (meanOut)
      *meanOut = b.reshape(m, {n, groups});
    if (rstdOut)
      *rstdOut = b.reshape(rstd, {n, groups});
    return y;
  };
  t.bind(tf + "group_norm", [groupNorm](Lowering &L) {
    L.out(groupNorm(L, floatInput(L, "input"), L.args.intValue("num_groups"), L.args.scalar("eps"),
                    "weight", "bias", nullptr, nullptr));
  });
  t.bind(pf + "group_norm", [groupNorm](Lowering &L) {
    if (L.args.get("data_format").stringValue != "NCHW" &&
        L.args.get("data_format").stringValue != "NCL" &&
        L.args.get("data_format").stringValue != "NCDHW")
      badValue(L, "data_format must be channels-first (NCHW), not '" +
                      L.args.get("data_format").stringValue + "'");
    L.out(groupNorm(L, floatInput(L, "x"), L.args.intValue("num_groups"), L.args.scalar("epsilon"),
                    "weight", "bias", nullptr, nullptr));
  });
  t.bind("torch.native_group_norm", [groupNorm](Lowering &L) {
    int m = -1, r = -1;
    L.out(groupNorm(L, floatInput(L, "input"), L.args.intValue("group"), L.args.scalar("eps"),
                    "weight", "bias", &m, &r));
    L.out(m);
    L.out(r);
  });
  // Instance norm: group norm with one group per channel (inference: the input's statistics).
  t.bind(tf + "instance_norm", [groupNorm](Lowering &L) {
    if (!L.args.boolValue("use_input_stats"))
      badValue(L, "use_input_stats=False (running statistics) is not supported yet");
    int x = floatInput(L, "input");
    if (L.b.meta(x).rank() < 2)
      badValue(L, "expects an input of at least 2 dimensions [N, C, ...]");
    L.out(groupNorm(L, x, L.b.meta(x).shape[1], L.args.scalar("eps"), "weight", "bias", nullptr,
                    nullptr));
  });
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
  // x divided by its p-norm along the axis (at least eps).
  auto normalize = [](std::string xn, std::string axisName, std::string epsName) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      if (xn == "input" && !L.args.isNone("out"))
        badValue(L, "out= is not supported");
      int x = floatInput(L, xn);
      std::vector<int64_t> axes =
          normalizeAxes(b.opName(), {L.args.intValue(axisName)}, b.meta(x).rank());
      double p = L.args.scalar("p");
      if (p <= 0)
        badValue(L, "p must be positive");
      int norm = p == 2 ? b.unary(Prim::Sqrt, reduceTo(L, Prim::ReduceSum,
                                                      b.binary(Prim::Mul, x, x), axes, true))
                        : b.binaryScalar(Prim::Pow,
                                         reduceTo(L, Prim::ReduceSum,
                                                  b.binaryScalar(Prim::Pow, b.unary(Prim::Abs, x), p),
                                                  axes, true),
                                         1 / p);
      L.out(b.binary(Prim::Div, x, b.binaryScalar(Prim::Max, norm, L.args.scalar(epsName))));
    };
  };
  t.bind(pf + "normalize", normalize("x", "axis", "epsilon"));
  t.bind(tf + "normalize", normalize("input", "dim", "eps"));
  // weight_norm's parametrization (wav2vec2's positional convolution): v * g / ||v||, the
  // 2-norm over every dim but `dim` (over all of them for dim = -1).
  t.bind("torch._weight_norm", [](Lowering &L) {
    PrimBuilder &b = L.b;
    int v = floatInput(L, "v"), g = b.cast(L.in("g"), b.meta(v).dtype);
    int64_t rank = b.meta(v).rank(), dim = L.args.intValue("dim");
    if (dim < -1)
      dim += rank;
    if (dim < -1 || dim >= rank)
      badValue(L, "dim " + std::to_string(L.args.intValue("dim")) + " is out of range");
    std::vector<int64_t> axes;
    for (int64_t a = 0; a < rank; ++a)
      if (a != dim)
        axes.push_back(a);
    int norm =
        b.unary(Prim::Sqrt, reduceTo(L, Prim::ReduceSum, b.binary(Prim::Mul, v, v), axes, true));
    L.out(b.binary(Prim::Mul, v, b.binary(Prim::Div, g, norm)));
  });
  // Inference (and training with p = 0) keeps every element; paddle's
  // mode='downscale_in_infer' scales them by 1 - p in inference.
  auto dropout = [](std::string xn, bool paddle) {
    return [=](Lowering &L) {
      if (L.args.boolValue("training") && L.args.scalar("p") != 0) // p = 0 drops nothing
        badValue(L, "training=True is not supported: sotc compiles inference (pass "
                    "training=False)");
      const std::string mode = paddle ? L.args.get("mode").stringValue : "upscale_in_train";
      if (mode == "downscale_in_infer")
        return L.out(L.b.binaryScalar(Prim::Mul, floatInput(L, xn), 1 - L.args.scalar("p")));
      if (mode != "upscale_in_train")
        badValue(L, "mode must be 'upscale_in_train' or 'downscale_in_infer', not '" + mode + "'");
      L.out(L.in(xn));
    };
  };
  t.bind(pf + "dropout", dropout("x", true));
  t.bind(tf + "dropout", dropout("input", false));
  // The other dropouts (whole channels, alpha) keep every element in inference too, and in
  // training with p = 0.
  auto keep = [](std::string xn) {
    return [=](Lowering &L) {
      if (L.args.boolValue("training") && L.args.scalar("p") != 0) // p = 0 drops nothing
        badValue(L, "training=True draws random numbers: sotc compiles inference (pass "
                    "training=False)");
      L.out(L.in(xn));
    };
  };
  for (const char *name :
       {"dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"})
    t.bind(tf + name, keep("input"));
  for (const char *name : {"dropout2d", "dropout3d", "alpha_dropout"})
    t.bind(pf + name, keep("x"));
}

/// Python operators on tensors; in-place forms compute the same value (the frontend rebinds).

} // namespace sotc::ops::lowering
