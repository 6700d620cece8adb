//===- LowerCreation.cpp - Lowerings: full, zeros, ones, *_like, arange, tril and triu ---------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <cmath>

namespace sotc::ops::lowering {

namespace {

/// arange(end) or arange(start, end, step): start + i * step for i < ceil((end - start) / step).
LowerFn arangeOp() {
  return [](Lowering &L) {
    const Arg &first = L.args.get("start"), &second = L.args.get("end"),
              &stepArg = L.args.get("step");
    const Arg &endArg = second.isNone() ? first : second;
    if (endArg.kind == Arg::Kind::Int && isSymbolSize(endArg.intValue)) {
      // arange(B) of a dynamic size: its indices (a dimension of that size).
      if (!second.isNone() || stepArg.scalar() != 1)
        badValue(L, "a range of the dynamic batch's size starts at 0 with step 1");
      return L.out(L.b.cast(L.b.iota(dimOfSymbolSize(endArg.intValue), DType::Int64),
                            dtypeOr(L, "dtype", DType::Int64)));
    }
    double start = second.isNone() ? 0 : first.scalar(), end = endArg.scalar(),
           step = stepArg.scalar();
    if (step == 0)
      badValue(L, "step must not be zero");
    double count = std::ceil((end - start) / step);
    if (!std::isfinite(count))
      badValue(L, "the bounds must be finite");
    auto integral = [](const Arg &a) { return a.isNone() || a.kind == Arg::Kind::Int; };
    DType fallback = integral(first) && integral(second) && integral(stepArg) ? DType::Int64
                                                                              : DType::Float32;
    DType dtype = dtypeOr(L, "dtype", fallback);
    int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
    int x = L.b.iota(n, isFloating(dtype) ? DType::Float64 : DType::Int64);
    if (step != 1)
      x = L.b.binaryScalar(Prim::Mul, x, step);
    if (start != 0)
      x = L.b.binaryScalar(Prim::Add, x, start);
    L.out(L.b.cast(x, dtype));
  };
}

/// The window functions of signal processing (torch.hann_window and its kin): a function of
/// n / D for n < N, with D = N for a periodic window (one period of a longer one, as spectra
/// take them) and N - 1 for a symmetric one; a window of one sample is 1.
enum class Window { Hann, Hamming, Blackman, Bartlett };

LowerFn windowOp(Window kind) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int64_t n = L.args.intValue("window_length");
    if (n < 0)
      badValue(L, "window_length must not be negative");
    DType dtype = dtypeOr(L, "dtype", DType::Float32);
    if (!isFloating(dtype))
      badValue(L, "a window's dtype is a floating type, not " + std::string(dtypeName(dtype)));
    if (n <= 1)
      return L.out(b.fill(1, {n}, dtype));
    double d = static_cast<double>(L.args.boolValue("periodic") ? n : n - 1);
    int x = b.binaryScalar(Prim::Mul, b.iota(n, dtype), 1 / d); // n / D, in dtype as torch
    auto cosine = [&](double turns) { // cos(2 pi turns n / D)
      return b.unary(Prim::Cos, b.binaryScalar(Prim::Mul, x, 2 * M_PI * turns));
    };
    auto minus = [&](double a, int y) { // a - y
      return b.binaryScalar(Prim::Add, b.unary(Prim::Neg, y), a);
    };
    int w = -1;
    switch (kind) {
    case Window::Hann:
      w = minus(0.5, b.binaryScalar(Prim::Mul, cosine(1), 0.5));
      break;
    case Window::Hamming:
      w = minus(L.args.scalar("alpha"),
                b.binaryScalar(Prim::Mul, cosine(1), L.args.scalar("beta")));
      break;
    case Window::Blackman:
      w = b.binary(Prim::Add, minus(0.42, b.binaryScalar(Prim::Mul, cosine(1), 0.5)),
                   b.binaryScalar(Prim::Mul, cosine(2), 0.08));
      break;
    case Window::Bartlett:
      w = minus(1, b.unary(Prim::Abs,
                           b.binaryScalar(Prim::Add, b.binaryScalar(Prim::Mul, x, 2), -1)));
      break;
    }
    L.out(w);
  };
}

/// tril / triu: x where the triangle of its last two axes holds, else zero.
LowerFn triangleOp(std::string xn, bool lower) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in(xn);
    const TensorMeta &m = b.meta(x);
    if (m.rank() < 2)
      badValue(L, "expects a tensor of at least 2 dimensions, got rank " +
                      std::to_string(m.rank()));
    int mask = triangle(b, m.shape[m.rank() - 2], m.shape[m.rank() - 1],
                        L.args.intValue("diagonal"), lower);
    L.out(b.select(mask, x, b.fill(0, {}, m.dtype)));
  };
}

} // namespace

/// one_hot: [..., num_classes], 1 where the class is the index (torch: int64, paddle:
/// float32). num_classes=-1 (the largest index + 1) would size the result by the values.
LowerFn oneHotOp(std::string xn, DType dtype) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in(xn);
    if (!isIntegral(b.meta(x).dtype))
      badValue(L, "the indices must be an integer tensor, not " +
                      std::string(dtypeName(b.meta(x).dtype)));
    int64_t classes = L.args.intValue("num_classes");
    if (classes == -1)
      badValue(L, "num_classes=-1 sizes the result by the largest index, a value known only at "
                  "run time: pass num_classes");
    if (classes <= 0)
      badValue(L, "num_classes must be positive");
    std::vector<int64_t> shape = b.meta(x).shape;
    int64_t rank = static_cast<int64_t>(shape.size());
    shape.push_back(1);
    int index = b.cast(b.reshape(x, shape), DType::Int64);
    L.out(b.cast(b.binary(Prim::Equal, index, positions(b, classes, rank, rank + 1)), dtype));
  };
}

void registerCreation(OpTable &t) {
  t.bind("torch.nn.functional.one_hot", oneHotOp("tensor", DType::Int64));
  t.bind("paddle.nn.functional.one_hot", oneHotOp("x", DType::Float32));
  paddleLower(t, "arange", arangeOp(), false);
  for (auto [name, kind] :
       {std::pair{"hann_window", Window::Hann}, {"hamming_window", Window::Hamming},
        {"blackman_window", Window::Blackman}, {"bartlett_window", Window::Bartlett}})
    torchLower(t, name, windowOp(kind), false);
  torchLower(t, "arange", arangeOp(), false);
  for (bool lower : {true, false}) {
    paddleLower(t, lower ? "tril" : "triu", triangleOp("x", lower));
    torchLower(t, lower ? "tril" : "triu", triangleOp("input", lower));
  }
  paddleLower(t, "full", fullOp("shape", "fill_value", "dtype", false), false);
  torchLower(t, "full", fullOp("size", "fill_value", "dtype", true), false);
  torchLower(
      t, "scalar_tensor",
      [](Lowering &L) { L.out(L.b.fill(L.args.scalar("s"), {}, dtypeOr(L, "dtype", DType::Float32))); },
      false);
  // empty: uninitialized memory in the frameworks; zeros here (deterministic bytes).
  for (auto [name, value] :
       {std::pair<const char *, double>{"zeros", 0}, {"ones", 1}, {"empty", 0}}) {
    paddleLower(
        t, name,
        [value = value](Lowering &L) {
          L.out(L.b.fill(value, shapeOf(L, "shape"), dtypeOr(L, "dtype", DType::Float32)));
        },
        false);
    std::string like = std::string(name) + "_like";
    paddleLower(t, like, fullLikeOp("x", value, "", "dtype"), false);
    torchLower(t, like, fullLikeOp("input", value, "", "dtype"), false);
  }
  paddleLower(t, "full_like", fullLikeOp("x", 0, "fill_value", "dtype"), false);
  torchLower(t, "full_like", fullLikeOp("input", 0, "fill_value", "dtype"), false);
  // torch.fill / torch.zero_ as functions: a new tensor like the input (x.fill_() and
  // x.zero_() update x in place, CallsTensor.cpp).
  torchLower(t, "fill", [](Lowering &L) {
    int x = L.in("input");
    const Arg &v = L.args.get("value");
    int value = v.isTensor() ? L.b.cast(L.in("value"), L.b.meta(x).dtype)
                             : L.b.fill(v.scalar(), {}, L.b.meta(x).dtype);
    L.out(L.b.broadcastTo(value, L.b.meta(x).shape));
  }, false);
  torchLower(t, "zero_", [](Lowering &L) {
    const TensorMeta &m = L.b.meta(L.in("input"));
    L.out(L.b.fill(0, m.shape, m.dtype));
  }, false);
}

} // namespace sotc::ops::lowering
