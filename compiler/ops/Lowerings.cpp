//===- Lowerings.cpp - Building blocks of the operator table's lowerings -----------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace sotc::ops::lowering {

[[noreturn]] void badValue(const Lowering &L, const std::string &message) {
  throw CodedError(DiagCode::OpBadAttribute, L.b.opName() + "(): " + message);
}

Operands promoteOperands(Lowering &L, const std::string &xn, const std::string &yn) {
  const Arg &xa = L.args.get(xn), &ya = L.args.get(yn);
  if (xa.isTensor() && ya.isTensor())
    return {L.in(xn), L.in(yn), promoteTypes(xa.tensor.dtype, ya.tensor.dtype)};
  if (xa.isTensor()) {
    DType d = promoteWithScalar(xa.tensor.dtype, ya);
    return {L.in(xn), L.b.fill(ya.scalar(), {}, d), d};
  }
  if (!ya.isTensor()) { // two Python scalars (torch.where(c, 2, 0)): bool, then int64, float32
    DType d = promoteWithScalar(promoteWithScalar(DType::Bool, xa), ya);
    return {L.b.fill(xa.scalar(), {}, d), L.b.fill(ya.scalar(), {}, d), d};
  }
  DType d = promoteWithScalar(ya.tensor.dtype, xa);
  return {L.b.fill(xa.scalar(), {}, d), L.in(yn), d};
}

LowerFn binaryOp(Prim prim, std::string xn, std::string yn, bool floatResult) {
  return [=](Lowering &L) {
    Operands o = promoteOperands(L, xn, yn);
    L.out(L.b.binary(prim, o.x, o.y, floatResult ? floatingResult(o.dtype) : o.dtype));
  };
}

LowerFn bitwiseOrLogical(Prim bitwise, Prim logical, std::string xn, std::string yn) {
  return [=](Lowering &L) {
    Operands o = promoteOperands(L, xn, yn);
    L.out(L.b.binary(o.dtype == DType::Bool ? logical : bitwise, o.x, o.y, o.dtype));
  };
}

LowerFn unaryFloat(Prim prim, std::string xn) {
  return [=](Lowering &L) {
    int x = L.in(xn);
    L.out(L.b.unary(prim, L.b.cast(x, floatingResult(L.b.meta(x).dtype))));
  };
}

LowerFn unarySame(Prim prim, std::string xn) {
  return [=](Lowering &L) { L.out(L.b.unary(prim, L.in(xn))); };
}

int floatInput(Lowering &L, const std::string &xn) {
  int x = L.in(xn);
  return L.b.cast(x, floatingResult(L.b.meta(x).dtype));
}

int sigmoid(PrimBuilder &b, int x) {
  int e = b.unary(Prim::Exp, b.unary(Prim::Neg, x));
  return b.binary(Prim::Div, b.fill(1, {}, b.meta(x).dtype), b.binaryScalar(Prim::Add, e, 1));
}

std::vector<int64_t> axesOf(Lowering &L, const std::string &axisName, int x) {
  std::vector<int64_t> axes; // None and [] both mean every axis, in paddle and torch
  if (!L.args.isNone(axisName))
    axes = L.args.intList(axisName);
  return normalizeAxes(L.b.opName(), axes, L.b.meta(x).rank());
}

int divideByCount(Lowering &L, int x, int x0, const std::vector<int64_t> &axes, double less) {
  double n = 1;
  std::vector<int64_t> dynamic;
  for (int64_t a : axes) {
    int64_t d = L.b.meta(x0).shape[a];
    if (isDynamicDim(d))
      dynamic.push_back(d);
    n *= isDynamicDim(d) ? 1 : static_cast<double>(d);
  }
  if (dynamic.empty()) // n - less <= 0 divides by 0 (nan or inf), as the frameworks do
    return L.b.binaryScalar(Prim::Div, x, std::max(0.0, n - less));
  // The call's size of each dynamic dim: a sum of ones over it.
  DType dtype = L.b.meta(x).dtype;
  int count = -1;
  for (int64_t d : dynamic) {
    int size = L.b.reduce(Prim::ReduceSum, L.b.fill(1, {d}, dtype), {0}, false);
    count = count < 0 ? (n == 1 ? size : L.b.binaryScalar(Prim::Mul, size, n))
                      : L.b.binary(Prim::Mul, count, size);
  }
  if (less)
    count = L.b.binaryScalar(Prim::Max, L.b.binaryScalar(Prim::Sub, count, less), 0);
  return L.b.binary(Prim::Div, x, count);
}

int reduceTo(Lowering &L, Prim prim, int x, const std::vector<int64_t> &axes, bool keepdim) {
  return axes.empty() ? x : L.b.reduce(prim, x, axes, keepdim);
}

LowerFn reduceOp(Prim prim, std::string xn, std::string axis, std::string keepdim,
                 std::string dtype) {
  return [=](Lowering &L) {
    int x = L.in(xn);
    DType d = L.b.meta(x).dtype;
    if (!dtype.empty() && !L.args.isNone(dtype))
      d = L.args.get(dtype).dtypeValue;
    else if ((prim == Prim::ReduceSum || prim == Prim::ReduceProd) &&
             (isIntegral(d) || d == DType::Bool))
      d = DType::Int64; // integer sums accumulate in int64, as paddle and torch do
    x = L.b.cast(x, d);
    L.out(reduceTo(L, prim, x, axesOf(L, axis, x), L.args.boolValue(keepdim)));
  };
}

int mean(Lowering &L, int x, const std::vector<int64_t> &axes, bool keepdim) {
  return divideByCount(L, reduceTo(L, Prim::ReduceSum, x, axes, keepdim), x, axes);
}

LowerFn meanOp(std::string xn, std::string axis, std::string keepdim) {
  return [=](Lowering &L) {
    int x = floatInput(L, xn);
    L.out(mean(L, x, axesOf(L, axis, x), L.args.boolValue(keepdim)));
  };
}

LowerFn logsumexpOp(std::string xn, std::string axis, std::string keepdim) {
  return [=](Lowering &L) {
    int x = floatInput(L, xn);
    std::vector<int64_t> axes = axesOf(L, axis, x);
    bool keep = L.args.boolValue(keepdim);
    int m = reduceTo(L, Prim::ReduceMax, x, axes, true);
    int e = L.b.unary(Prim::Exp, L.b.binary(Prim::Sub, x, m));
    int s = L.b.unary(Prim::Log, reduceTo(L, Prim::ReduceSum, e, axes, true));
    int r = L.b.binary(Prim::Add, s, m);
    L.out(keep ? r : L.b.reshape(r, reducedShape(L.b.meta(x).shape, axes, false)));
  };
}

int softmax(Lowering &L, int x, int64_t axis, bool log) {
  std::vector<int64_t> axes = normalizeAxes(L.b.opName(), {axis}, L.b.meta(x).rank());
  int m = reduceTo(L, Prim::ReduceMax, x, axes, true);
  int shifted = L.b.binary(Prim::Sub, x, m);
  int e = L.b.unary(Prim::Exp, shifted);
  int s = reduceTo(L, Prim::ReduceSum, e, axes, true);
  return log ? L.b.binary(Prim::Sub, shifted, L.b.unary(Prim::Log, s))
             : L.b.binary(Prim::Div, e, s);
}

LowerFn softmaxOp(std::string xn, std::string axisName, std::string dtype, bool log) {
  return [=](Lowering &L) {
    int x = L.in(xn);
    if (!dtype.empty() && !L.args.isNone(dtype))
      x = L.b.cast(x, L.args.get(dtype).dtypeValue);
    x = L.b.cast(x, floatingResult(L.b.meta(x).dtype));
    L.out(softmax(
        L, x, normalizeAxis(L.b.opName(), L.args.intValue(axisName), L.b.meta(x).rank()), log));
  };
}

std::vector<int64_t> trailingAxes(Lowering &L, int x, const std::vector<int64_t> &normalized) {
  const std::vector<int64_t> &shape = L.b.meta(x).shape;
  if (normalized.empty() || normalized.size() > shape.size() ||
      !std::equal(normalized.begin(), normalized.end(), shape.end() - normalized.size()))
    throw CodedError(DiagCode::OpShapeMismatch,
                     L.b.opName() + "(): normalized_shape " + formatInts(normalized) +
                         " does not match the trailing dimensions of the input " +
                         formatShape(shape));
  std::vector<int64_t> axes;
  for (size_t i = shape.size() - normalized.size(); i < shape.size(); ++i)
    axes.push_back(static_cast<int64_t>(i));
  return axes;
}

int affine(Lowering &L, int y, const std::string &weight, const std::string &bias) {
  if (!weight.empty() && L.in(weight) >= 0)
    y = L.b.binary(Prim::Mul, y, L.in(weight));
  if (!bias.empty() && L.in(bias) >= 0)
    y = L.b.binary(Prim::Add, y, L.in(bias));
  return y;
}

LowerFn layerNormOp(std::string xn, std::string shape, std::string weight, std::string bias,
                    std::string eps) {
  return [=](Lowering &L) {
    int x = floatInput(L, xn);
    std::vector<int64_t> axes = trailingAxes(L, x, L.args.intList(shape));
    int centered = L.b.binary(Prim::Sub, x, mean(L, x, axes, true));
    int var = mean(L, L.b.binary(Prim::Mul, centered, centered), axes, true);
    int inv = L.b.unary(Prim::Rsqrt, L.b.binaryScalar(Prim::Add, var, L.args.scalar(eps)));
    L.out(affine(L, L.b.binary(Prim::Mul, centered, inv), weight, bias));
  };
}

int rmsNorm(Lowering &L, int x, const std::vector<int64_t> &axes, double eps) {
  int ms = mean(L, L.b.binary(Prim::Mul, x, x), axes, true);
  return L.b.binary(Prim::Mul, x, L.b.unary(Prim::Rsqrt, L.b.binaryScalar(Prim::Add, ms, eps)));
}

int gelu(PrimBuilder &b, int x, bool tanhForm) {
  if (!tanhForm) { // 0.5 * x * (1 + erf(x / sqrt(2)))
    int e = b.unary(Prim::Erf, b.binaryScalar(Prim::Mul, x, 1.0 / std::sqrt(2.0)));
    return b.binary(Prim::Mul, b.binaryScalar(Prim::Mul, x, 0.5), b.binaryScalar(Prim::Add, e, 1));
  }
  // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
  int cube = b.binary(Prim::Mul, b.binary(Prim::Mul, x, x), x);
  int inner = b.binary(Prim::Add, x, b.binaryScalar(Prim::Mul, cube, 0.044715));
  int t = b.unary(Prim::Tanh, b.binaryScalar(Prim::Mul, inner, std::sqrt(2.0 / M_PI)));
  return b.binary(Prim::Mul, b.binaryScalar(Prim::Mul, x, 0.5), b.binaryScalar(Prim::Add, t, 1));
}

int clip(Lowering &L, int x, const std::string &lo, const std::string &hi) {
  DType d = L.b.meta(x).dtype;
  auto bound = [&](const std::string &name) { // a scalar, or a tensor (torch.clamp) cast to d
    return L.args.get(name).isTensor() ? L.b.cast(L.in(name), d)
                                       : L.b.fill(L.args.scalar(name), {}, d);
  };
  if (!lo.empty() && !L.args.isNone(lo)) // "": no such bound (clamp_max)
    x = L.b.binary(Prim::Max, x, bound(lo));
  if (!hi.empty() && !L.args.isNone(hi))
    x = L.b.binary(Prim::Min, x, bound(hi));
  return x;
}

DType dtypeOr(Lowering &L, const std::string &name, DType fallback) {
  return L.args.isNone(name) ? fallback : L.args.get(name).dtypeValue;
}

std::vector<int64_t> shapeOf(Lowering &L, const std::string &name) {
  std::vector<int64_t> dims = L.args.intList(name);
  for (int64_t &d : dims) {
    if (isSymbolSize(d))
      d = dimOfSymbolSize(d);
    else if (d < 0)
      badValue(L, "negative size in shape " + formatInts(L.args.intList(name)));
  }
  return dims;
}

namespace {

/// full's value as a tensor of `shape`: a number filled in, or a tensor of one element (a
/// buffer's value, as YOLO's anchor strides) broadcast; `dtype` nullopt: the torch type its
/// number would have (float32, int64, bool), paddle's float32 otherwise.
int filled(Lowering &L, const std::string &value, const std::vector<int64_t> &shape,
           std::optional<DType> dtype, bool torchInference) {
  const Arg &v = L.args.get(value);
  auto numberType = [&](bool isBool, bool isInt) {
    return !torchInference ? DType::Float32
           : isBool        ? DType::Bool
           : isInt         ? DType::Int64
                           : DType::Float32;
  };
  if (!v.isTensor())
    return L.b.fill(
        v.scalar(), shape,
        dtype.value_or(numberType(v.kind == Arg::Kind::Bool, v.kind == Arg::Kind::Int)));
  int x = L.in(value);
  const TensorMeta &m = L.b.meta(x);
  if (!std::all_of(m.shape.begin(), m.shape.end(), [](int64_t d) { return d == 1; }))
    badValue(L, "a tensor fill_value holds one element, not a tensor of shape " +
                    formatShape(m.shape));
  DType to = dtype.value_or(numberType(m.dtype == DType::Bool, isIntegral(m.dtype)));
  return L.b.broadcastTo(L.b.cast(L.b.reshape(x, {}), to), shape);
}

std::optional<DType> givenDtype(Lowering &L, const std::string &dtype) {
  if (dtype.empty() || L.args.isNone(dtype))
    return std::nullopt;
  return dtypeOr(L, dtype, DType::Float32);
}

} // namespace

LowerFn fullOp(std::string shape, std::string value, std::string dtype, bool torchInference) {
  return [=](Lowering &L) {
    L.out(filled(L, value, shapeOf(L, shape), givenDtype(L, dtype), torchInference));
  };
}

int triangle(PrimBuilder &b, int64_t rows, int64_t cols, int64_t diagonal, bool lower) {
  int row = b.reshape(b.iota(rows, DType::Int64), {rows, 1});
  int col = b.reshape(b.iota(cols, DType::Int64), {1, cols});
  if (diagonal != 0)
    row = b.binaryScalar(Prim::Add, row, static_cast<double>(diagonal));
  return b.binary(lower ? Prim::LessEqual : Prim::GreaterEqual, col, row);
}

LowerFn fullLikeOp(std::string xn, double value, std::string valueName, std::string dtype) {
  return [=](Lowering &L) {
    const TensorMeta &m = L.b.meta(L.in(xn));
    DType to = givenDtype(L, dtype).value_or(m.dtype);
    L.out(valueName.empty() ? L.b.fill(value, m.shape, to)
                            : filled(L, valueName, m.shape, to, false));
  };
}

std::vector<int64_t> unsqueezed(Lowering &L, std::vector<int64_t> shape,
                                const std::vector<int64_t> &axes) {
  int64_t rank = static_cast<int64_t>(shape.size() + axes.size());
  std::vector<int64_t> sorted = normalizeAxes(L.b.opName(), axes, rank);
  for (int64_t a : sorted)
    shape.insert(shape.begin() + a, 1);
  return shape;
}

std::vector<int64_t> squeezed(Lowering &L, const std::vector<int64_t> &shape,
                              const std::string &axisName) {
  std::vector<int64_t> axes;
  if (!L.args.isNone(axisName))
    axes =
        normalizeAxes(L.b.opName(), L.args.intList(axisName), static_cast<int64_t>(shape.size()));
  std::vector<int64_t> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    bool listed = L.args.isNone(axisName) ||
                  std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (!(listed && shape[i] == 1))
      out.push_back(shape[i]); // listed axes of size != 1 stay, as in paddle and torch
  }
  return out;
}

std::vector<int64_t> flattened(Lowering &L, const std::vector<int64_t> &shape, int64_t start,
                               int64_t stop) {
  int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0)
    return {1};
  start = normalizeAxis(L.b.opName(), start, rank);
  stop = normalizeAxis(L.b.opName(), stop, rank);
  if (start > stop)
    badValue(L,
             "start axis " + std::to_string(start) + " is after stop axis " + std::to_string(stop));
  std::vector<int64_t> out(shape.begin(), shape.begin() + start);
  int64_t n = 1;
  for (int64_t i = start; i <= stop; ++i)
    n = productDim(productOf(n) * productOf(shape[i]));
  out.push_back(n);
  out.insert(out.end(), shape.begin() + stop + 1, shape.end());
  return out;
}

LowerFn expandOp(std::string xn, std::string shapeName) {
  return [=](Lowering &L) {
    int x = L.in(xn);
    std::vector<int64_t> target = L.args.intList(shapeName);
    const std::vector<int64_t> &in = L.b.meta(x).shape;
    if (target.size() < in.size())
      badValue(L, "target shape " + formatInts(target) + " has fewer dimensions than the input " +
                      formatShape(in));
    for (size_t i = 0; i < target.size(); ++i) {
      size_t offset = target.size() - in.size();
      if (isSymbolSize(target[i])) { // a static size 1 (or the dynamic one) broadcast to it
        int64_t dim = dimOfSymbolSize(target[i]);
        if (i >= offset && in[i - offset] != 1 && in[i - offset] != dim)
          badValue(L, "the dynamic size in " + formatInts(target) +
                          " is for a dimension of size 1 or of the dynamic size");
        target[i] = dim;
        continue;
      }
      if (target[i] == -1) {
        if (i < offset)
          badValue(L, "-1 in a new leading dimension of " + formatInts(target));
        target[i] = in[i - offset];
      }
    }
    L.out(L.b.broadcastTo(x, target));
  };
}

void splitSizes(Lowering &L, int x, std::vector<int64_t> sizes, int64_t axis) {
  int64_t dim = L.b.meta(x).shape[axis];
  if (isDynamicDim(dim))
    badValue(L, "splitting dynamic dimension " + std::to_string(axis) + " is not supported yet");
  int64_t known = 0, inferred = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1 && inferred < 0)
      inferred = static_cast<int64_t>(i);
    else if (sizes[i] < 0)
      badValue(L, "invalid section size " + std::to_string(sizes[i]));
    else
      known += sizes[i];
  }
  if (inferred >= 0)
    sizes[inferred] = dim - known;
  if ((inferred >= 0 && known > dim) || (inferred < 0 && known != dim))
    throw CodedError(DiagCode::OpShapeMismatch, L.b.opName() + "(): sections " + formatInts(sizes) +
                                                    " do not add up to " + std::to_string(dim) +
                                                    ", the size of axis " + std::to_string(axis));
  int64_t start = 0;
  for (int64_t s : sizes) {
    L.out(L.b.slice(x, {axis}, {start}, {start + s}, {1}));
    start += s;
  }
}

namespace {
/// x[items] for basic items: ints, slices with positive steps, None and one Ellipsis.
int basicIndex(Lowering &L, int x, const std::vector<Arg> &items) {
  std::vector<int64_t> in = L.b.meta(x).shape;
  size_t consumed = 0, ellipses = 0;
  for (const Arg &a : items) {
    consumed += a.kind == Arg::Kind::Int || a.kind == Arg::Kind::Slice;
    ellipses += a.kind == Arg::Kind::Ellipsis;
  }
  if (ellipses > 1)
    badValue(L, "an index can only have a single ellipsis ('...')");
  if (consumed > in.size())
    badValue(L, "too many indices for a tensor of dimension " + std::to_string(in.size()));
  std::vector<int64_t> axes, starts, ends, steps, outShape;
  bool withinS0 = false; // static positions of s0 (the frontend's guard)
  size_t dim = 0;
  auto keep = [&](size_t n) {
    for (size_t i = 0; i < n; ++i, ++dim)
      outShape.push_back(in[dim]);
  };
  auto take = [&](int64_t start, int64_t end, int64_t step) { // of dim, which is then done
    axes.push_back(static_cast<int64_t>(dim++));
    starts.push_back(start);
    ends.push_back(end);
    steps.push_back(step);
  };
  for (const Arg &a : items) {
    if (a.kind == Arg::Kind::Ellipsis) {
      keep(in.size() - consumed); // the dimensions no other index item names
      continue;
    }
    if (a.kind == Arg::Kind::None) {
      outShape.push_back(1);
      continue;
    }
    int64_t size = in[dim];
    bool whole = a.kind == Arg::Kind::Slice && (a.items[0].isNone() || a.items[0].intValue == 0) &&
                 (a.items[2].isNone() || a.items[2].intValue == 1);
    bool toDynamic =
        whole && a.items[1].kind == Arg::Kind::Int && isSymbolSize(a.items[1].intValue);
    if (isDynamicDim(size) && whole && a.items[1].isNone()) {
      keep(1); // x[:, :]
      continue;
    }
    if (toDynamic && !isDynamicDim(size)) { // x[:n] of a static dimension: its first n (the
      outShape.push_back(dimOfSymbolSize(a.items[1].intValue)); // frontend guards n <= size)
      take(0, outShape.back(), 1);
      continue;
    }
    // Positions of a dynamic size T from a static start up to T less a number, or to a size
    // of T's (x[:, 1:], x[:, :-1], x[:, 1:T], x[:, :T - 1]): T less both, a size derived from
    // T (the frontend guards it to be at least 1).
    auto startPosition = [](const Arg &v) {
      return v.isNone() ||
             (v.kind == Arg::Kind::Int && v.intValue >= 0 && !isSymbolSize(v.intValue));
    };
    if (isDynamicDim(size) && a.kind == Arg::Kind::Slice && startPosition(a.items[0]) &&
        (a.items[2].isNone() || a.items[2].intValue == 1) &&
        (a.items[1].isNone() || (a.items[1].kind == Arg::Kind::Int &&
                                 (a.items[1].intValue < 0 || isSymbolSize(a.items[1].intValue))))) {
      int64_t start = a.items[0].isNone() ? 0 : a.items[0].intValue, end = size;
      if (!a.items[1].isNone() && !isSymbolSize(a.items[1].intValue)) {
        end = L.b.offsetDim(size, a.items[1].intValue);
      } else if (!a.items[1].isNone()) { // up to a size: all of T where it is T or more
        int64_t n = dimOfSymbolSize(a.items[1].intValue);
        std::optional<int64_t> beyond = L.b.sizeDifference(n, size);
        if (!beyond)
          badValue(L, "a slice of dimension " + std::to_string(dim) + " (" +
                          productOf(size).text() + ") up to a size of another (" +
                          productOf(n).text() + ") is not supported yet");
        end = *beyond < 0 ? n : size;
      }
      if (start == 0 && end == size) {
        keep(1);
        continue;
      }
      outShape.push_back(L.b.offsetDim(end, -start));
      take(start, end, 1);
      continue;
    }
    // x[:, -k] of s0 has no slice of s0 - k elements: the position is picked by a mask
    // (fromEnd, the dim kept as 1), then taken as position 0 (the frontend guards s0 >= k).
    if (isDynamicDim(size) && a.kind == Arg::Kind::Int && a.intValue < 0) {
      x = fromEnd(L.b, x, static_cast<int64_t>(dim), -a.intValue, true);
      in[dim] = 1;
      take(0, 1, 1);
      continue;
    }
    // Static positions of the dynamic size s0, from its start: the frontend has guarded s0 to
    // hold them (x[:, 0], position_ids[:, :1]).
    auto position = [](const Arg &v) { return v.kind == Arg::Kind::Int && v.intValue >= 0; };
    bool fromStart = a.kind == Arg::Kind::Int
                         ? a.intValue >= 0
                         : (a.items[0].isNone() || position(a.items[0])) && position(a.items[1]) &&
                               (a.items[2].isNone() || a.items[2].intValue == 1);
    if (isDynamicDim(size) && fromStart) {
      int64_t first = a.kind == Arg::Kind::Int ? a.intValue
                      : a.items[0].isNone()    ? 0
                                               : a.items[0].intValue;
      int64_t last = a.kind == Arg::Kind::Int ? first + 1 : std::max(first, a.items[1].intValue);
      if (a.kind == Arg::Kind::Slice)
        outShape.push_back(last - first);
      take(first, last, 1);
      withinS0 = true;
      continue;
    }
    if (isDynamicDim(size))
      badValue(L, "indexing dynamic dimension " + std::to_string(dim) +
                      " other than from its start with static positions (x[:, 0], x[:, :4]) is "
                      "not supported yet");
    if (a.kind == Arg::Kind::Int) {
      int64_t i = a.intValue < 0 ? a.intValue + size : a.intValue;
      if (i < 0 || i >= size)
        badValue(L, "index " + std::to_string(a.intValue) + " is out of bounds for axis " +
                        std::to_string(dim) + " with size " + std::to_string(size));
      take(i, i + 1, 1);
      continue;
    }
    // A slice: Python's clamping rules for positive steps.
    int64_t step = a.items[2].isNone() ? 1 : a.items[2].intValue;
    if (step <= 0)
      badValue(L, "slice step must be positive, got " + std::to_string(step));
    auto clampIndex = [&](const Arg &v, int64_t dflt) {
      if (v.isNone())
        return dflt;
      int64_t i = v.intValue < 0 ? v.intValue + size : v.intValue;
      return std::min(std::max<int64_t>(i, 0), size);
    };
    int64_t start = clampIndex(a.items[0], 0), stop = clampIndex(a.items[1], size);
    stop = std::max(stop, start);
    outShape.push_back((stop - start + step - 1) / step);
    take(start, stop, step);
  }
  keep(in.size() - dim);
  int y = axes.empty() ? x : L.b.slice(x, axes, starts, ends, steps, withinS0);
  return L.b.meta(y).shape == outShape ? y : L.b.reshape(y, outShape);
}
} // namespace

void getitem(Lowering &L, int x, const Arg &index) {
  std::vector<Arg> items = index.kind == Arg::Kind::Tuple ? index.items : std::vector<Arg>{index};
  // One list of ints picks those positions of its axis (numpy's advanced index, which stays
  // where it is when it is the only one): the basic index with a full slice there, then the
  // positions taken from its result.
  auto list = std::find_if(items.begin(), items.end(),
                           [](const Arg &a) { return a.kind == Arg::Kind::List; });
  if (list == items.end())
    return L.out(basicIndex(L, x, items));
  if (std::count_if(items.begin(), items.end(),
                    [](const Arg &a) { return a.kind == Arg::Kind::List; }) > 1)
    badValue(L, "more than one list index (numpy's broadcasting advanced indexing) is not "
                "supported yet");
  std::vector<int64_t> positions;
  for (const Arg &i : list->items)
    positions.push_back(i.intValue);
  // Ints index with the list (numpy's advanced indices); apart from it, separated by a
  // slice or None, they send its dimension to the front.
  size_t first = static_cast<size_t>(list - items.begin()), last = first, advanced = 1;
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].kind == Arg::Kind::Int)
      first = std::min(first, i), last = std::max(last, i), ++advanced;
  bool front = last - first + 1 != advanced;
  *list = Arg::slice(Arg::none(), Arg::none(), Arg::none());
  int64_t rank = L.b.meta(x).rank(), axis = 0, consumed = 0;
  for (const Arg &a : items)
    consumed += a.kind == Arg::Kind::Int || a.kind == Arg::Kind::Slice;
  for (auto it = items.begin(); it != list; ++it)
    axis += it->kind == Arg::Kind::Slice || it->kind == Arg::Kind::None ? 1
            : it->kind == Arg::Kind::Ellipsis                           ? rank - consumed
                                                                        : 0;
  int y = basicIndex(L, x, items);
  int64_t size = L.b.meta(y).shape[axis];
  if (isDynamicDim(size) && (positions.size() != 1 || positions[0] >= 0))
    badValue(L, "a list index of the dynamic dimension other than one position from its end "
                "(GPT's x[:, [-1]]) is not supported yet");
  std::vector<int> picked;
  if (isDynamicDim(size)) // as basicIndex's x[:, -k]
    picked.push_back(fromEnd(L.b, y, axis, -positions[0], true));
  else
    for (int64_t p : positions) {
      int64_t i = p < 0 ? p + size : p;
      if (i < 0 || i >= size)
        badValue(L, "index " + std::to_string(p) + " is out of bounds for axis " +
                        std::to_string(axis) + " with size " + std::to_string(size));
      picked.push_back(L.b.slice(y, {axis}, {i}, {i + 1}, {1}));
    }
  if (picked.empty())
    badValue(L, "an empty list index is not supported yet");
  int out = picked.size() == 1 ? picked[0] : L.b.concat(picked, axis);
  if (front && axis != 0) {
    std::vector<int64_t> perm = {axis};
    for (int64_t d = 0; d < L.b.meta(out).rank(); ++d)
      if (d != axis)
        perm.push_back(d);
    out = L.b.transpose(out, perm);
  }
  L.out(out);
}

int scalarLike(PrimBuilder &b, double value, int like) {
  return b.fill(value, {}, b.meta(like).dtype);
}

int isNan(PrimBuilder &b, int x) { return b.binary(Prim::NotEqual, x, x); }

std::vector<int64_t> inversePerm(const std::vector<int64_t> &perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[perm[i]] = int64_t(i);
  return inv;
}

std::vector<int64_t> axisLast(int64_t axis, int64_t rank) {
  std::vector<int64_t> perm;
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis)
      perm.push_back(a);
  perm.push_back(axis);
  return perm;
}

PositionPairs positionPairs(PrimBuilder &b, int x, int64_t axis) {
  PositionPairs p;
  p.perm = axisLast(axis, b.meta(x).rank());
  int moved = b.transpose(x, p.perm);
  std::vector<int64_t> row = b.meta(moved).shape;
  row.insert(row.end() - 1, 1);
  int64_t n = row.back(); // the dynamic dimension's size
  p.square = row;
  p.square[p.square.size() - 2] = n;
  p.values = b.broadcastTo(b.reshape(moved, row), p.square);
  // An iota each: one tensor read along both dims would need two indices in one kernel.
  p.i = b.broadcastTo(b.reshape(b.iota(n, DType::Int64), {n, 1}), {n, n});
  p.j = b.broadcastTo(b.reshape(b.iota(n, DType::Int64), {1, n}), {n, n});
  return p;
}

int pairsResult(PrimBuilder &b, int reducedOverJ, const PositionPairs &p) {
  return b.transpose(reducedOverJ, inversePerm(p.perm));
}

int fromEnd(PrimBuilder &b, int x, int64_t axis, int64_t k, bool keepdim) {
  int64_t rank = b.meta(x).rank();
  int n = positions(b, b.meta(x).shape[axis], axis, rank);
  int last = b.reduce(Prim::ReduceMax, n, {}, false);
  int at = b.binary(Prim::Equal, n, b.binaryScalar(Prim::Sub, last, double(k - 1)));
  const TensorMeta &m = b.meta(x);
  bool logical = m.dtype == DType::Bool;
  int picked = b.select(b.broadcastTo(at, m.shape), x, b.fill(0, m.shape, m.dtype));
  return b.reduce(logical ? Prim::ReduceMax : Prim::ReduceSum, picked, {axis}, keepdim);
}

int positions(PrimBuilder &b, int64_t n, int64_t axis, int64_t rank) {
  std::vector<int64_t> shape(rank, 1);
  shape[axis] = n;
  return b.reshape(b.iota(n, DType::Int64), shape);
}

namespace {
/// The permutation that moves `axis` first, the others in order.
std::vector<int64_t> axisFirst(int64_t axis, int64_t rank) {
  std::vector<int64_t> perm{axis};
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis)
      perm.push_back(a);
  return perm;
}
} // namespace

int axisToFront(PrimBuilder &b, int x, int64_t axis) {
  return axis == 0 ? x : b.transpose(x, axisFirst(axis, b.meta(x).rank()));
}

int axisFromFront(PrimBuilder &b, int y, int64_t axis) {
  if (axis == 0)
    return y;
  int64_t rank = b.meta(y).rank();
  return b.transpose(y, inversePerm(axisFirst(axis, rank)));
}

int gatherAlong(PrimBuilder &b, int x, int64_t axis, int index) {
  return axisFromFront(b, b.gather(axisToFront(b, x, axis), index), axis);
}

void paddleLower(OpTable &t, const std::string &name, LowerFn lower, bool method) {
  t.bind("paddle." + name, lower);
  if (method)
    t.bind("Tensor." + name, lower);
}

void torchLower(OpTable &t, const std::string &name, LowerFn lower, bool method) {
  t.bind("torch." + name, lower);
  if (method)
    t.bind("torch.Tensor." + name, lower);
}

} // namespace sotc::ops::lowering

namespace sotc::ops {

void registerLowerings(OpTable &table) {
  lowering::registerElementwise(table);
  lowering::registerMath(table);
  lowering::registerCreation(table);
  lowering::registerReductions(table);
  lowering::registerShapes(table);
  lowering::registerIndexing(table);
  lowering::registerSorting(table);
  lowering::registerLinearAlgebra(table);
  lowering::registerActivations(table);
  lowering::registerResampling(table);
  lowering::registerRegions(table);
  lowering::registerLosses(table);
  lowering::registerConvolution(table);
  lowering::registerOperators(table);
}

} // namespace sotc::ops
