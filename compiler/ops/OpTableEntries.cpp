//===- OpTableEntries.cpp - Every supported callable, with its signatures and lowering ---===//
//
// Paddle names come first, torch aliases where torch has the operation (with torch's own
// parameter names, so keyword calls bind), then Python operators. Paddle tensor methods take
// the function's signature with the tensor as `x`. docs/ops.md lists the decompositions.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/ops/Inference.h"
#include "compiler/ops/OpTable.h"
#include "compiler/support/Diagnostics.h"

#include <cmath>

namespace sotc::ops {
namespace {

using Names = std::vector<std::string>;

[[noreturn]] void badValue(const Lowering &L, const std::string &message) {
  throw CodedError(DiagCode::OpBadAttribute, L.b.opName() + "(): " + message);
}

/// Tensor-or-scalar operands `xn`, `yn` as value ids of one promoted dtype.
struct Operands {
  int x, y;
  DType dtype;
};

Operands promoteOperands(Lowering &L, const std::string &xn, const std::string &yn) {
  const Arg &xa = L.args.get(xn), &ya = L.args.get(yn);
  if (xa.isTensor() && ya.isTensor())
    return {L.in(xn), L.in(yn), promoteTypes(xa.tensor.dtype, ya.tensor.dtype)};
  if (xa.isTensor()) {
    DType d = promoteWithScalar(xa.tensor.dtype, ya);
    return {L.in(xn), L.b.fill(ya.scalar(), {}, d), d};
  }
  DType d = promoteWithScalar(ya.tensor.dtype, xa);
  return {L.b.fill(xa.scalar(), {}, d), L.in(yn), d};
}

/// Binary elementwise; `floatResult` for true division (ints divide to float32).
LowerFn binaryOp(Prim prim, std::string xn, std::string yn, bool floatResult = false) {
  return [=](Lowering &L) {
    Operands o = promoteOperands(L, xn, yn);
    L.out(L.b.binary(prim, o.x, o.y, floatResult ? floatingResult(o.dtype) : o.dtype));
  };
}

/// and/or/xor: logical on bool tensors, bitwise on integers.
LowerFn bitwiseOrLogical(Prim bitwise, Prim logical, std::string xn, std::string yn) {
  return [=](Lowering &L) {
    Operands o = promoteOperands(L, xn, yn);
    L.out(L.b.binary(o.dtype == DType::Bool ? logical : bitwise, o.x, o.y, o.dtype));
  };
}

/// Transcendental unary ops compute in floating point: integer inputs become float32.
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

/// Axes from an optional IntList parameter (None: all axes).
std::vector<int64_t> axesOf(Lowering &L, const std::string &axisName, int x) {
  std::vector<int64_t> axes; // None and [] both mean every axis, in paddle and torch
  if (!L.args.isNone(axisName))
    axes = L.args.intList(axisName);
  return normalizeAxes(L.b.opName(), axes, L.b.meta(x).rank());
}

/// Number of elements over `axes`; reductions that divide need it statically.
double countOver(Lowering &L, int x, const std::vector<int64_t> &axes) {
  double n = 1;
  for (int64_t a : axes) {
    int64_t d = L.b.meta(x).shape[a];
    if (d == kDynamic)
      badValue(L,
               "averaging over dynamic dimension " + std::to_string(a) + " is not supported yet");
    n *= static_cast<double>(d);
  }
  return n;
}

int reduceTo(Lowering &L, Prim prim, int x, const std::vector<int64_t> &axes, bool keepdim) {
  return axes.empty() ? x : L.b.reduce(prim, x, axes, keepdim);
}

LowerFn reduceOp(Prim prim, std::string xn, std::string axis, std::string keepdim,
                 std::string dtype = "") {
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
  int s = reduceTo(L, Prim::ReduceSum, x, axes, keepdim);
  return L.b.binaryScalar(Prim::Div, s, countOver(L, x, axes));
}

LowerFn meanOp(std::string xn, std::string axis, std::string keepdim) {
  return [=](Lowering &L) {
    int x = floatInput(L, xn);
    L.out(mean(L, x, axesOf(L, axis, x), L.args.boolValue(keepdim)));
  };
}

/// log(sum(exp(x - max))) + max, kept stable by subtracting the row maximum.
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

/// softmax / log_softmax over one axis.
LowerFn softmaxOp(std::string xn, std::string axisName, std::string dtype, bool log) {
  return [=](Lowering &L) {
    int x = L.in(xn);
    if (!dtype.empty() && !L.args.isNone(dtype))
      x = L.b.cast(x, L.args.get(dtype).dtypeValue);
    x = L.b.cast(x, floatingResult(L.b.meta(x).dtype));
    std::vector<int64_t> axes = {
        normalizeAxis(L.b.opName(), L.args.intValue(axisName), L.b.meta(x).rank())};
    int m = reduceTo(L, Prim::ReduceMax, x, axes, true);
    int shifted = L.b.binary(Prim::Sub, x, m);
    int e = L.b.unary(Prim::Exp, shifted);
    int s = reduceTo(L, Prim::ReduceSum, e, axes, true);
    L.out(log ? L.b.binary(Prim::Sub, shifted, L.b.unary(Prim::Log, s))
              : L.b.binary(Prim::Div, e, s));
  };
}

/// The trailing axes a normalization covers, checked against normalized_shape.
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

/// (x - mean) * rsqrt(var + eps) * weight + bias over the trailing normalized_shape.
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

/// x * rsqrt(mean(x^2) + eps) * weight (+ bias) over the given trailing axes.
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
  if (!L.args.isNone(lo))
    x = L.b.binary(Prim::Max, x, L.b.fill(L.args.scalar(lo), {}, d));
  if (!L.args.isNone(hi))
    x = L.b.binary(Prim::Min, x, L.b.fill(L.args.scalar(hi), {}, d));
  return x;
}

DType dtypeOr(Lowering &L, const std::string &name, DType fallback) {
  return L.args.isNone(name) ? fallback : L.args.get(name).dtypeValue;
}

/// paddle.full: float32 unless a dtype is given; torch.full infers it from the value.
LowerFn fullOp(std::string shape, std::string value, std::string dtype, bool torchInference) {
  return [=](Lowering &L) {
    const Arg &v = L.args.get(value);
    DType fallback = DType::Float32;
    if (torchInference)
      fallback = v.kind == Arg::Kind::Bool  ? DType::Bool
                 : v.kind == Arg::Kind::Int ? DType::Int64
                                            : DType::Float32;
    std::vector<int64_t> dims = L.args.intList(shape);
    for (int64_t d : dims)
      if (d < 0)
        badValue(L, "negative size in shape " + formatInts(dims));
    L.out(L.b.fill(v.scalar(), dims, dtypeOr(L, dtype, fallback)));
  };
}

LowerFn fullLikeOp(std::string xn, double value, std::string valueName, std::string dtype) {
  return [=](Lowering &L) {
    const TensorMeta &m = L.b.meta(L.in(xn));
    double v = valueName.empty() ? value : L.args.scalar(valueName);
    L.out(L.b.fill(v, m.shape, dtypeOr(L, dtype, m.dtype)));
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
    n = (n == kDynamic || shape[i] == kDynamic) ? kDynamic : n * shape[i];
  out.push_back(n);
  out.insert(out.end(), shape.begin() + stop + 1, shape.end());
  return out;
}

/// paddle.expand / broadcast_to: -1 keeps the input's size.
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
      if (target[i] == -1) {
        if (i < offset)
          badValue(L, "-1 in a new leading dimension of " + formatInts(target));
        target[i] = in[i - offset];
      }
    }
    L.out(L.b.broadcastTo(x, target));
  };
}

/// Splits `x` along `axis` into pieces of the given sizes (one -1 is inferred).
void splitSizes(Lowering &L, int x, std::vector<int64_t> sizes, int64_t axis) {
  int64_t dim = L.b.meta(x).shape[axis];
  if (dim == kDynamic)
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

/// x[index]: ints, slices (positive steps), None and one Ellipsis.
void getitem(Lowering &L, int x, const Arg &index) {
  std::vector<Arg> items = index.kind == Arg::Kind::Tuple ? index.items : std::vector<Arg>{index};
  const std::vector<int64_t> &in = L.b.meta(x).shape;
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
  size_t dim = 0;
  auto keep = [&](size_t n) {
    for (size_t i = 0; i < n; ++i, ++dim)
      outShape.push_back(in[dim]);
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
    if (size == kDynamic)
      badValue(L, "indexing dynamic dimension " + std::to_string(dim) + " is not supported yet");
    if (a.kind == Arg::Kind::Int) {
      int64_t i = a.intValue < 0 ? a.intValue + size : a.intValue;
      if (i < 0 || i >= size)
        badValue(L, "index " + std::to_string(a.intValue) + " is out of bounds for axis " +
                        std::to_string(dim) + " with size " + std::to_string(size));
      axes.push_back(static_cast<int64_t>(dim));
      starts.push_back(i);
      ends.push_back(i + 1);
      steps.push_back(1);
      ++dim;
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
    axes.push_back(static_cast<int64_t>(dim));
    starts.push_back(start);
    ends.push_back(stop);
    steps.push_back(step);
    outShape.push_back((stop - start + step - 1) / step);
    ++dim;
  }
  keep(in.size() - dim);
  int y = axes.empty() ? x : L.b.slice(x, axes, starts, ends, steps);
  L.out(L.b.reshape(y, outShape));
}

/// Registers `name` for paddle and its `Tensor.` method form (same signature).
OpEntry &paddleApi(OpTable &t, const std::string &name, const Names &sigs, std::string decomp,
                   LowerFn lower, bool method = true) {
  OpEntry &e = t.add("paddle." + name, CallKind::Api, sigs, std::move(decomp), lower);
  if (method)
    t.add("Tensor." + name, CallKind::Method, sigs, e.decomposition, lower);
  return e;
}

OpEntry &torchApi(OpTable &t, const std::string &name, const Names &sigs, std::string decomp,
                  LowerFn lower, bool method = true) {
  OpEntry &e = t.add("torch." + name, CallKind::Api, sigs, std::move(decomp), lower);
  if (method)
    t.add("torch.Tensor." + name, CallKind::Method, sigs, e.decomposition, lower);
  return e;
}

void registerElementwise(OpTable &t) {
  struct Binary {
    const char *paddle;
    const char *torch;
    Prim prim;
    bool floatResult;
  };
  const Binary binaries[] = {
      {"add", "add", Prim::Add, false},
      {"subtract", "sub", Prim::Sub, false},
      {"multiply", "mul", Prim::Mul, false},
      {"divide", "div", Prim::Div, true},
      {"floor_divide", "floor_divide", Prim::FloorDiv, false},
      {"remainder", "remainder", Prim::Mod, false},
      {"pow", "pow", Prim::Pow, false},
      {"maximum", "maximum", Prim::Max, false},
      {"minimum", "minimum", Prim::Min, false},
  };
  for (const Binary &op : binaries) {
    std::string decomp = std::string(primName(op.prim)) + "(x, y), broadcast and promoted";
    OpEntry &e = paddleApi(t, op.paddle,
                           {"Tensor (Tensor x, Tensor y, String? name=None)",
                            "Tensor (Tensor x, Scalar y, String? name=None)"},
                           decomp, binaryOp(op.prim, "x", "y", op.floatResult));
    if (std::string(op.paddle) == "remainder")
      t.alias(e, "paddle.mod");
    t.alias(e, std::string("paddle.tensor.math.") + op.paddle);
    bool withAlpha = op.prim == Prim::Add || op.prim == Prim::Sub;
    std::string other = op.prim == Prim::Pow ? "exponent" : "other";
    Names torchSigs = {"Tensor (Tensor input, Tensor " + other + ")",
                       "Tensor (Tensor input, Scalar " + other + ")"};
    LowerFn torchLower = binaryOp(op.prim, "input", other, op.floatResult);
    if (withAlpha) {
      for (std::string &s : torchSigs)
        s.insert(s.size() - 1, ", *, Scalar alpha=1");
      Prim prim = op.prim;
      torchLower = [prim](Lowering &L) { // input ± alpha * other
        Operands o = promoteOperands(L, "input", "other");
        int y = L.args.scalar("alpha") == 1
                    ? o.y
                    : L.b.binaryScalar(Prim::Mul, o.y, L.args.scalar("alpha"));
        L.out(L.b.binary(prim, o.x, y, o.dtype));
      };
    }
    torchApi(t, op.torch, torchSigs, decomp, torchLower);
  }

  struct Unary {
    const char *name;
    Prim prim;
    bool floating;
    bool torch;
  };
  const Unary unaries[] = {
      {"exp", Prim::Exp, true, true},      {"log", Prim::Log, true, true},
      {"log1p", Prim::Log1p, true, true},  {"sin", Prim::Sin, true, true},
      {"cos", Prim::Cos, true, true},      {"tanh", Prim::Tanh, true, true},
      {"sqrt", Prim::Sqrt, true, true},    {"rsqrt", Prim::Rsqrt, true, true},
      {"erf", Prim::Erf, true, true},      {"abs", Prim::Abs, false, true},
      {"neg", Prim::Neg, false, true},     {"sign", Prim::Sign, false, true},
      {"floor", Prim::Floor, false, true}, {"ceil", Prim::Ceil, false, true},
      {"round", Prim::Round, false, true},
  };
  for (const Unary &op : unaries) {
    std::string decomp = std::string(primName(op.prim)) + "(x)" +
                         (op.floating ? ", integer inputs cast to float32" : "");
    OpEntry &e = paddleApi(t, op.name, {"Tensor (Tensor x, String? name=None)"}, decomp,
                           op.floating ? unaryFloat(op.prim, "x") : unarySame(op.prim, "x"));
    t.alias(e, std::string("paddle.tensor.math.") + op.name);
    if (op.torch)
      torchApi(t, op.name, {"Tensor (Tensor input)"}, decomp,
               op.floating ? unaryFloat(op.prim, "input") : unarySame(op.prim, "input"));
  }

  auto sigmoidLower = [](std::string xn) {
    return [xn](Lowering &L) { L.out(sigmoid(L.b, floatInput(L, xn))); };
  };
  const char *sigmoidDoc = "1 / (1 + exp(-x))";
  OpEntry &sig = paddleApi(t, "nn.functional.sigmoid", {"Tensor (Tensor x, String? name=None)"},
                           sigmoidDoc, sigmoidLower("x"), false);
  t.alias(sig, "paddle.sigmoid");
  t.add("Tensor.sigmoid", CallKind::Method, {"Tensor (Tensor x, String? name=None)"}, sigmoidDoc,
        sigmoidLower("x"));
  OpEntry &torchSigmoid =
      torchApi(t, "sigmoid", {"Tensor (Tensor input)"}, sigmoidDoc, sigmoidLower("input"));
  t.alias(torchSigmoid, "torch.nn.functional.sigmoid");

  auto reciprocal = [](std::string xn) {
    return [xn](Lowering &L) {
      int x = floatInput(L, xn);
      L.out(L.b.binary(Prim::Div, L.b.fill(1, {}, L.b.meta(x).dtype), x));
    };
  };
  paddleApi(t, "reciprocal", {"Tensor (Tensor x, String? name=None)"}, "1 / x", reciprocal("x"));
  torchApi(t, "reciprocal", {"Tensor (Tensor input)"}, "1 / x", reciprocal("input"));
  auto square = [](std::string xn) {
    return [xn](Lowering &L) { L.out(L.b.binary(Prim::Mul, L.in(xn), L.in(xn))); };
  };
  paddleApi(t, "square", {"Tensor (Tensor x, String? name=None)"}, "x * x", square("x"));
  torchApi(t, "square", {"Tensor (Tensor input)"}, "x * x", square("input"));

  auto clipLower = [](std::string xn, std::string lo, std::string hi) {
    return [=](Lowering &L) { L.out(clip(L, L.in(xn), lo, hi)); };
  };
  paddleApi(t, "clip", {"Tensor (Tensor x, Scalar? min=None, Scalar? max=None, String? name=None)"},
            "min(max(x, min), max)", clipLower("x", "min", "max"));
  OpEntry &clamp =
      torchApi(t, "clamp", {"Tensor (Tensor input, Scalar? min=None, Scalar? max=None)"},
               "min(max(x, min), max)", clipLower("input", "min", "max"));
  t.alias(clamp, "torch.clip");

  auto whereLower = [](std::string c, std::string xn, std::string yn) {
    return [=](Lowering &L) {
      Operands o = promoteOperands(L, xn, yn);
      L.out(L.b.select(L.in(c), o.x, o.y));
    };
  };
  paddleApi(t, "where",
            {"Tensor (Tensor condition, Tensor x, Tensor y, String? name=None)",
             "Tensor (Tensor condition, Tensor x, Scalar y, String? name=None)",
             "Tensor (Tensor condition, Scalar x, Tensor y, String? name=None)"},
            "select(condition, x, y)", whereLower("condition", "x", "y"), false);
  torchApi(t, "where",
           {"Tensor (Tensor condition, Tensor input, Tensor other)",
            "Tensor (Tensor condition, Tensor input, Scalar other)",
            "Tensor (Tensor condition, Scalar input, Tensor other)"},
           "select(condition, input, other)", whereLower("condition", "input", "other"), false);

  struct Compare {
    const char *paddle;
    const char *torch;
    Prim prim;
  };
  const Compare compares[] = {
      {"equal", "eq", Prim::Equal},          {"not_equal", "ne", Prim::NotEqual},
      {"less_than", "lt", Prim::Less},       {"less_equal", "le", Prim::LessEqual},
      {"greater_than", "gt", Prim::Greater}, {"greater_equal", "ge", Prim::GreaterEqual},
  };
  for (const Compare &op : compares) {
    std::string decomp = std::string(primName(op.prim)) + "(x, y) -> bool";
    paddleApi(t, op.paddle,
              {"Tensor (Tensor x, Tensor y, String? name=None)",
               "Tensor (Tensor x, Scalar y, String? name=None)"},
              decomp, binaryOp(op.prim, "x", "y"));
    torchApi(t, op.torch,
             {"Tensor (Tensor input, Tensor other)", "Tensor (Tensor input, Scalar other)"}, decomp,
             binaryOp(op.prim, "input", "other"));
  }
  struct Logical {
    const char *name;
    Prim prim;
  };
  for (const Logical &op :
       {Logical{"logical_and", Prim::LogicalAnd}, Logical{"logical_or", Prim::LogicalOr},
        Logical{"logical_xor", Prim::LogicalXor}}) {
    auto lower = [prim = op.prim](std::string xn, std::string yn) {
      return [=](Lowering &L) { L.out(L.b.binary(prim, L.in(xn), L.in(yn), DType::Bool)); };
    };
    std::string decomp = std::string(primName(op.prim)) + "(bool(x), bool(y))";
    paddleApi(t, op.name, {"Tensor (Tensor x, Tensor y, String? name=None)"}, decomp,
              lower("x", "y"));
    torchApi(t, op.name, {"Tensor (Tensor input, Tensor other)"}, decomp, lower("input", "other"));
  }
  auto logicalNot = [](std::string xn) {
    return
        [xn](Lowering &L) { L.out(L.b.unary(Prim::LogicalNot, L.b.cast(L.in(xn), DType::Bool))); };
  };
  paddleApi(t, "logical_not", {"Tensor (Tensor x, String? name=None)"}, "logical_not(bool(x))",
            logicalNot("x"));
  torchApi(t, "logical_not", {"Tensor (Tensor input)"}, "logical_not(bool(x))",
           logicalNot("input"));

  auto castLower = [](std::string xn, std::string dtype) {
    return [=](Lowering &L) { L.out(L.b.cast(L.in(xn), L.args.get(dtype).dtypeValue)); };
  };
  OpEntry &cast = paddleApi(t, "cast", {"Tensor (Tensor x, DataType dtype)"}, "cast(x)",
                            castLower("x", "dtype"));
  t.add("Tensor.astype", CallKind::Method, {"Tensor (Tensor x, DataType dtype)"},
        cast.decomposition, castLower("x", "dtype"));
  t.add("torch.Tensor.to", CallKind::Method, {"Tensor (Tensor input, DataType dtype)"}, "cast(x)",
        castLower("input", "dtype"));
}

void registerCreation(OpTable &t) {
  paddleApi(t, "full",
            {"Tensor (IntList shape, Scalar fill_value, DataType? dtype=None, String? name=None)"},
            "fill_constant(fill_value)", fullOp("shape", "fill_value", "dtype", false), false);
  torchApi(t, "full", {"Tensor (IntList size, Scalar fill_value, *, DataType? dtype=None)"},
           "fill_constant(fill_value)", fullOp("size", "fill_value", "dtype", true), false);
  for (auto [name, value] : {std::pair<const char *, double>{"zeros", 0}, {"ones", 1}}) {
    std::string decomp = "fill_constant(" + std::to_string(static_cast<int>(value)) + ")";
    paddleApi(
        t, name, {"Tensor (IntList[1] shape, DataType? dtype=None, String? name=None)"}, decomp,
        [value = value](Lowering &L) {
          L.out(L.b.fill(value, L.args.intList("shape"), dtypeOr(L, "dtype", DType::Float32)));
        },
        false);
    std::string like = std::string(name) + "_like";
    paddleApi(t, like, {"Tensor (Tensor x, DataType? dtype=None, String? name=None)"}, decomp,
              fullLikeOp("x", value, "", "dtype"), false);
    torchApi(t, like, {"Tensor (Tensor input, *, DataType? dtype=None)"}, decomp,
             fullLikeOp("input", value, "", "dtype"), false);
  }
  paddleApi(t, "full_like",
            {"Tensor (Tensor x, Scalar fill_value, DataType? dtype=None, String? name=None)"},
            "fill_constant(fill_value)", fullLikeOp("x", 0, "fill_value", "dtype"), false);
  torchApi(t, "full_like", {"Tensor (Tensor input, Scalar fill_value, *, DataType? dtype=None)"},
           "fill_constant(fill_value)", fullLikeOp("input", 0, "fill_value", "dtype"), false);
}

void registerReductions(OpTable &t) {
  struct Reduce {
    const char *paddle;
    const char *torch;
    Prim prim;
  };
  for (const Reduce &op :
       {Reduce{"max", "amax", Prim::ReduceMax}, Reduce{"min", "amin", Prim::ReduceMin}}) {
    std::string decomp = std::string(primName(op.prim)) + "(x, axis)";
    paddleApi(t, op.paddle,
              {"Tensor (Tensor x, IntList[1]? axis=None, Bool keepdim=False, String? name=None)"},
              decomp, reduceOp(op.prim, "x", "axis", "keepdim"));
    torchApi(t, op.torch, {"Tensor (Tensor input, IntList[1] dim=[], Bool keepdim=False)"}, decomp,
             reduceOp(op.prim, "input", "dim", "keepdim"));
  }
  paddleApi(t, "sum",
            {"Tensor (Tensor x, IntList[1]? axis=None, DataType? dtype=None, Bool keepdim=False, "
             "String? name=None)"},
            "reduce_sum(x, axis); bool/int inputs sum in int64",
            reduceOp(Prim::ReduceSum, "x", "axis", "keepdim", "dtype"));
  torchApi(t, "sum",
           {"Tensor (Tensor input, IntList[1]? dim=None, Bool keepdim=False, *, "
            "DataType? dtype=None)"},
           "reduce_sum(x, dim); bool/int inputs sum in int64",
           reduceOp(Prim::ReduceSum, "input", "dim", "keepdim", "dtype"));
  paddleApi(t, "prod",
            {"Tensor (Tensor x, IntList[1]? axis=None, Bool keepdim=False, DataType? dtype=None, "
             "String? name=None)"},
            "reduce_prod(x, axis)", reduceOp(Prim::ReduceProd, "x", "axis", "keepdim", "dtype"));
  torchApi(t, "prod",
           {"Tensor (Tensor input, IntList[1]? dim=None, Bool keepdim=False, *, "
            "DataType? dtype=None)"},
           "reduce_prod(x, dim)", reduceOp(Prim::ReduceProd, "input", "dim", "keepdim", "dtype"));
  paddleApi(t, "mean",
            {"Tensor (Tensor x, IntList[1]? axis=None, Bool keepdim=False, String? name=None)"},
            "reduce_sum(x, axis) / count", meanOp("x", "axis", "keepdim"));
  torchApi(t, "mean", {"Tensor (Tensor input, IntList[1]? dim=None, Bool keepdim=False)"},
           "reduce_sum(x, dim) / count", meanOp("input", "dim", "keepdim"));
  paddleApi(t, "logsumexp",
            {"Tensor (Tensor x, IntList[1]? axis=None, Bool keepdim=False, String? name=None)"},
            "m = reduce_max(x); log(reduce_sum(exp(x - m))) + m",
            logsumexpOp("x", "axis", "keepdim"));
  torchApi(t, "logsumexp", {"Tensor (Tensor input, IntList[1] dim, Bool keepdim=False)"},
           "m = reduce_max(x); log(reduce_sum(exp(x - m))) + m",
           logsumexpOp("input", "dim", "keepdim"));
}

void registerShapes(OpTable &t) {
  auto reshapeLower = [](std::string xn, std::string shape) {
    return [=](Lowering &L) { L.out(L.b.reshape(L.in(xn), L.args.intList(shape))); };
  };
  paddleApi(t, "reshape", {"Tensor (Tensor x, IntList shape, String? name=None)"},
            "reshape(x); -1 inferred, 0 copies the input dimension", reshapeLower("x", "shape"));
  torchApi(t, "reshape", {"Tensor (Tensor input, IntList shape)"}, "reshape(x); -1 inferred",
           reshapeLower("input", "shape"));
  t.add("torch.Tensor.view", CallKind::Method, {"Tensor (Tensor input, IntList shape)"},
        "reshape(x)", reshapeLower("input", "shape"));

  auto transposeLower = [](std::string xn, std::string perm) {
    return [=](Lowering &L) { L.out(L.b.transpose(L.in(xn), L.args.intList(perm))); };
  };
  paddleApi(t, "transpose", {"Tensor (Tensor x, IntList perm, String? name=None)"},
            "transpose(x, perm)", transposeLower("x", "perm"));
  torchApi(t, "permute", {"Tensor (Tensor input, IntList dims)"}, "transpose(x, dims)",
           transposeLower("input", "dims"));
  torchApi(t, "transpose", {"Tensor (Tensor input, Int dim0, Int dim1)"},
           "transpose(x) swapping dim0 and dim1", [](Lowering &L) {
             int x = L.in("input");
             int64_t rank = L.b.meta(x).rank();
             std::vector<int64_t> perm;
             for (int64_t i = 0; i < rank; ++i)
               perm.push_back(i);
             std::swap(perm[normalizeAxis("transpose", L.args.intValue("dim0"), rank)],
                       perm[normalizeAxis("transpose", L.args.intValue("dim1"), rank)]);
             L.out(L.b.transpose(x, perm));
           });

  auto unsqueezeLower = [](std::string xn, std::string axis) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      L.out(L.b.reshape(x, unsqueezed(L, L.b.meta(x).shape, L.args.intList(axis))));
    };
  };
  paddleApi(t, "unsqueeze", {"Tensor (Tensor x, IntList[1] axis, String? name=None)"},
            "reshape(x) with size-1 axes inserted", unsqueezeLower("x", "axis"));
  torchApi(t, "unsqueeze", {"Tensor (Tensor input, Int dim)"},
           "reshape(x) with a size-1 axis inserted", unsqueezeLower("input", "dim"));
  auto squeezeLower = [](std::string xn, std::string axis) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      L.out(L.b.reshape(x, squeezed(L, L.b.meta(x).shape, axis)));
    };
  };
  paddleApi(t, "squeeze", {"Tensor (Tensor x, IntList[1]? axis=None, String? name=None)"},
            "reshape(x) without size-1 axes", squeezeLower("x", "axis"));
  torchApi(t, "squeeze", {"Tensor (Tensor input, IntList[1]? dim=None)"},
           "reshape(x) without size-1 axes", squeezeLower("input", "dim"));
  auto flattenLower = [](std::string xn, std::string start, std::string stop) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      L.out(L.b.reshape(
          x, flattened(L, L.b.meta(x).shape, L.args.intValue(start), L.args.intValue(stop))));
    };
  };
  paddleApi(t, "flatten",
            {"Tensor (Tensor x, Int start_axis=0, Int stop_axis=-1, String? name=None)"},
            "reshape(x)", flattenLower("x", "start_axis", "stop_axis"));
  torchApi(t, "flatten", {"Tensor (Tensor input, Int start_dim=0, Int end_dim=-1)"}, "reshape(x)",
           flattenLower("input", "start_dim", "end_dim"));

  paddleApi(t, "expand", {"Tensor (Tensor x, IntList shape, String? name=None)"},
            "broadcast_to(x, shape); -1 keeps a dimension", expandOp("x", "shape"));
  paddleApi(t, "broadcast_to", {"Tensor (Tensor x, IntList shape, String? name=None)"},
            "broadcast_to(x, shape)", expandOp("x", "shape"));
  torchApi(t, "broadcast_to", {"Tensor (Tensor input, IntList size)"}, "broadcast_to(x, size)",
           expandOp("input", "size"));

  auto concatLower = [](std::string xs, std::string axis) {
    return [=](Lowering &L) {
      std::vector<int> ins = L.inList(xs);
      if (ins.empty())
        badValue(L, "needs at least one tensor");
      L.out(L.b.concat(
          ins, normalizeAxis(L.b.opName(), L.args.intValue(axis), L.b.meta(ins[0]).rank())));
    };
  };
  paddleApi(t, "concat", {"Tensor (TensorList x, Int axis=0, String? name=None)"},
            "concat(x, axis), dtypes promoted", concatLower("x", "axis"), false);
  OpEntry &cat = torchApi(t, "cat", {"Tensor (TensorList tensors, Int dim=0)"},
                          "concat(tensors, dim)", concatLower("tensors", "dim"), false);
  t.alias(cat, "torch.concat");

  paddleApi(t, "split",
            {"TensorList (Tensor x, Int num_or_sections, Int axis=0, String? name=None)",
             "TensorList (Tensor x, IntList num_or_sections, Int axis=0, String? name=None)"},
            "slice(x) per section", [](Lowering &L) {
              int x = L.in("x");
              int64_t axis = normalizeAxis("split", L.args.intValue("axis"), L.b.meta(x).rank());
              const Arg &n = L.args.get("num_or_sections");
              if (n.kind != Arg::Kind::Int)
                return splitSizes(L, x, L.args.intList("num_or_sections"), axis);
              int64_t dim = L.b.meta(x).shape[axis];
              if (n.intValue <= 0 || (dim != kDynamic && dim % n.intValue != 0))
                throw CodedError(DiagCode::OpShapeMismatch,
                                 "split(): axis " + std::to_string(axis) + " of size " +
                                     std::to_string(dim) + " cannot be split into " +
                                     std::to_string(n.intValue) + " equal sections");
              splitSizes(L, x, std::vector<int64_t>(n.intValue, dim / n.intValue), axis);
            });
  torchApi(t, "split",
           {"TensorList (Tensor tensor, Int split_size_or_sections, Int dim=0)",
            "TensorList (Tensor tensor, IntList split_size_or_sections, Int dim=0)"},
           "slice(x) per chunk", [](Lowering &L) {
             int x = L.in("tensor");
             int64_t axis = normalizeAxis("split", L.args.intValue("dim"), L.b.meta(x).rank());
             const Arg &n = L.args.get("split_size_or_sections");
             if (n.kind != Arg::Kind::Int)
               return splitSizes(L, x, L.args.intList("split_size_or_sections"), axis);
             int64_t dim = L.b.meta(x).shape[axis];
             if (n.intValue <= 0)
               badValue(L, "split size must be positive");
             std::vector<int64_t> sizes(dim / n.intValue, n.intValue);
             if (dim % n.intValue)
               sizes.push_back(dim % n.intValue); // torch: the last chunk may be smaller
             splitSizes(L, x, sizes, axis);
           });

  t.add("__getitem__", CallKind::Operator, {"Tensor (Tensor self, Index index)"},
        "slice(x) then reshape(x) for ints and None",
        [](Lowering &L) { getitem(L, L.in("self"), L.args.get("index")); });
}

void registerLinearAlgebra(OpTable &t) {
  paddleApi(t, "matmul",
            {"Tensor (Tensor x, Tensor y, Bool transpose_x=False, Bool transpose_y=False, "
             "String? name=None)"},
            "matmul(x, y)", [](Lowering &L) {
              L.out(L.b.matmul(L.in("x"), L.in("y"), L.args.boolValue("transpose_x"),
                               L.args.boolValue("transpose_y")));
            });
  OpEntry &mm =
      torchApi(t, "matmul", {"Tensor (Tensor input, Tensor other)"}, "matmul(x, y)",
               [](Lowering &L) { L.out(L.b.matmul(L.in("input"), L.in("other"), false, false)); });
  t.alias(mm, "torch.mm");
  t.alias(mm, "torch.bmm");
  // paddle's weight is [in, out]; torch's is [out, in].
  t.add("paddle.nn.functional.linear", CallKind::Api,
        {"Tensor (Tensor x, Tensor weight, Tensor? bias=None, String? name=None)"},
        "matmul(x, weight) + bias", [](Lowering &L) {
          L.out(affine(L, L.b.matmul(L.in("x"), L.in("weight"), false, false), "", "bias"));
        });
  t.add("torch.nn.functional.linear", CallKind::Api,
        {"Tensor (Tensor input, Tensor weight, Tensor? bias=None)"}, "matmul(x, weight^T) + bias",
        [](Lowering &L) {
          L.out(affine(L, L.b.matmul(L.in("input"), L.in("weight"), false, true), "", "bias"));
        });
}

void registerActivations(OpTable &t) {
  const std::string pf = "paddle.nn.functional.", tf = "torch.nn.functional.";
  auto relu = [](std::string xn) {
    return [xn](Lowering &L) {
      int x = L.in(xn);
      L.out(L.b.binary(Prim::Max, x, L.b.fill(0, {}, L.b.meta(x).dtype)));
    };
  };
  OpEntry &r = t.add(pf + "relu", CallKind::Api, {"Tensor (Tensor x, String? name=None)"},
                     "max(x, fill_constant(0))", relu("x"));
  t.alias(r, "paddle.relu");
  t.add("Tensor.relu", CallKind::Method, {"Tensor (Tensor x, String? name=None)"}, r.decomposition,
        relu("x"));
  OpEntry &tr = t.add(tf + "relu", CallKind::Api, {"Tensor (Tensor input, Bool inplace=False)"},
                      r.decomposition, relu("input"));
  t.alias(tr, "torch.relu");
  auto relu6 = [](std::string xn) {
    return [xn](Lowering &L) {
      int x = L.in(xn);
      DType d = L.b.meta(x).dtype;
      L.out(
          L.b.binary(Prim::Min, L.b.binary(Prim::Max, x, L.b.fill(0, {}, d)), L.b.fill(6, {}, d)));
    };
  };
  t.add(pf + "relu6", CallKind::Api, {"Tensor (Tensor x, String? name=None)"}, "min(max(x, 0), 6)",
        relu6("x"));
  t.add(tf + "relu6", CallKind::Api, {"Tensor (Tensor input, Bool inplace=False)"},
        "min(max(x, 0), 6)", relu6("input"));
  auto leaky = [](std::string xn, std::string slope) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      int zero = L.b.fill(0, {}, L.b.meta(x).dtype);
      L.out(L.b.select(L.b.binary(Prim::Greater, x, zero), x,
                       L.b.binaryScalar(Prim::Mul, x, L.args.scalar(slope))));
    };
  };
  t.add(pf + "leaky_relu", CallKind::Api,
        {"Tensor (Tensor x, Float negative_slope=0.01, String? name=None)"},
        "select(x > 0, x, x * negative_slope)", leaky("x", "negative_slope"));
  t.add(tf + "leaky_relu", CallKind::Api,
        {"Tensor (Tensor input, Float negative_slope=0.01, Bool inplace=False)"},
        "select(x > 0, x, x * negative_slope)", leaky("input", "negative_slope"));
  t.add(pf + "gelu", CallKind::Api,
        {"Tensor (Tensor x, Bool approximate=False, String? name=None)"},
        "exact: 0.5 x (1 + erf(x / sqrt 2)); approximate: 0.5 x (1 + tanh(sqrt(2/pi) (x + "
        "0.044715 x^3)))",
        [](Lowering &L) { L.out(gelu(L.b, floatInput(L, "x"), L.args.boolValue("approximate"))); });
  t.add(tf + "gelu", CallKind::Api, {"Tensor (Tensor input, *, String approximate=\"none\")"},
        "as paddle's gelu; approximate='tanh' selects the tanh form", [](Lowering &L) {
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
  t.add(pf + "silu", CallKind::Api, {"Tensor (Tensor x, String? name=None)"}, "x * sigmoid(x)",
        silu("x"));
  t.add(tf + "silu", CallKind::Api, {"Tensor (Tensor input, Bool inplace=False)"}, "x * sigmoid(x)",
        silu("input"));
  const char *softmaxDoc = "m = reduce_max(x, axis); e = exp(x - m); e / reduce_sum(e, axis)";
  const char *logSoftmaxDoc = "(x - m) - log(reduce_sum(exp(x - m), axis)), m = reduce_max";
  OpEntry &sm = t.add(pf + "softmax", CallKind::Api,
                      {"Tensor (Tensor x, Int axis=-1, DataType? dtype=None, String? name=None)"},
                      softmaxDoc, softmaxOp("x", "axis", "dtype", false));
  t.alias(sm, "paddle.softmax");
  t.add(pf + "log_softmax", CallKind::Api,
        {"Tensor (Tensor x, Int axis=-1, DataType? dtype=None, String? name=None)"}, logSoftmaxDoc,
        softmaxOp("x", "axis", "dtype", true));
  OpEntry &tsm =
      t.add(tf + "softmax", CallKind::Api, {"Tensor (Tensor input, Int dim, DataType? dtype=None)"},
            softmaxDoc, softmaxOp("input", "dim", "dtype", false));
  t.alias(tsm, "torch.softmax");
  t.add(tf + "log_softmax", CallKind::Api, {"Tensor (Tensor input, Int dim, DataType? dtype=None)"},
        logSoftmaxDoc, softmaxOp("input", "dim", "dtype", true));
  const char *lnDoc = "d = x - mean(x); d * rsqrt(mean(d * d) + epsilon) * weight + bias";
  t.add(pf + "layer_norm", CallKind::Api,
        {"Tensor (Tensor x, IntList[1] normalized_shape, Tensor? weight=None, "
         "Tensor? bias=None, Float epsilon=1e-05, String? name=None)"},
        lnDoc, layerNormOp("x", "normalized_shape", "weight", "bias", "epsilon"));
  t.add(tf + "layer_norm", CallKind::Api,
        {"Tensor (Tensor input, IntList[1] normalized_shape, Tensor? weight=None, "
         "Tensor? bias=None, Float eps=1e-05)"},
        lnDoc, layerNormOp("input", "normalized_shape", "weight", "bias", "eps"));
  const char *rmsDoc = "x * rsqrt(mean(x * x) + epsilon) * weight (+ bias)";
  // paddle.incubate's fused_rms_norm normalizes the axes from begin_norm_axis on.
  t.add(
      "paddle.incubate.nn.functional.fused_rms_norm", CallKind::Api,
      {"Tensor (Tensor x, Tensor norm_weight, Tensor? norm_bias, Float epsilon, "
       "Int begin_norm_axis)"},
      rmsDoc, [](Lowering &L) {
        int x = floatInput(L, "x");
        int64_t rank = L.b.meta(x).rank();
        std::vector<int64_t> axes;
        for (int64_t a = normalizeAxis("fused_rms_norm", L.args.intValue("begin_norm_axis"), rank);
             a < rank; ++a)
          axes.push_back(a);
        L.out(affine(L, rmsNorm(L, x, axes, L.args.scalar("epsilon")), "norm_weight", "norm_bias"));
      });
  t.add(tf + "rms_norm", CallKind::Api,
        {"Tensor (Tensor input, IntList[1] normalized_shape, Tensor? weight=None, "
         "Float? eps=None)"},
        rmsDoc + std::string("; eps None means float32's machine epsilon"), [](Lowering &L) {
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
  t.add(pf + "dropout", CallKind::Api,
        {"Tensor (Tensor x, Float p=0.5, IntList[1]? axis=None, Bool training=True, "
         "String mode=\"upscale_in_train\", String? name=None)"},
        "x (inference mode: identity)", dropout("x", "training"));
  t.add(tf + "dropout", CallKind::Api,
        {"Tensor (Tensor input, Float p=0.5, Bool training=True, Bool inplace=False)"},
        "x (inference mode: identity)", dropout("input", "training"));
}

/// Python operators on tensors; in-place forms compute the same value (the frontend rebinds).
void registerOperators(OpTable &t) {
  struct Op {
    const char *name;
    Prim prim;
    bool floatResult;
  };
  const Op binaries[] = {
      {"add", Prim::Add, false},    {"sub", Prim::Sub, false},           {"mul", Prim::Mul, false},
      {"truediv", Prim::Div, true}, {"floordiv", Prim::FloorDiv, false}, {"mod", Prim::Mod, false},
      {"pow", Prim::Pow, false},
  };
  const Names forward = {"Tensor (Tensor self, Tensor other)",
                         "Tensor (Tensor self, Scalar other)"};
  for (const Op &op : binaries) {
    std::string n = op.name, decomp = std::string(primName(op.prim)) + "(self, other)";
    OpEntry &e = t.add("__" + n + "__", CallKind::Operator, forward, decomp,
                       binaryOp(op.prim, "self", "other", op.floatResult));
    t.alias(e, "__i" + n + "__");
    t.add("__r" + n + "__", CallKind::Operator, {"Tensor (Tensor self, Scalar other)"},
          std::string(primName(op.prim)) + "(other, self)",
          binaryOp(op.prim, "other", "self", op.floatResult));
  }
  t.add("__matmul__", CallKind::Operator, {"Tensor (Tensor self, Tensor other)"},
        "matmul(self, other)",
        [](Lowering &L) { L.out(L.b.matmul(L.in("self"), L.in("other"), false, false)); });
  struct Cmp {
    const char *name;
    Prim prim;
  };
  for (const Cmp &op :
       {Cmp{"lt", Prim::Less}, Cmp{"le", Prim::LessEqual}, Cmp{"eq", Prim::Equal},
        Cmp{"ne", Prim::NotEqual}, Cmp{"gt", Prim::Greater}, Cmp{"ge", Prim::GreaterEqual}})
    t.add(std::string("__") + op.name + "__", CallKind::Operator, forward,
          std::string(primName(op.prim)) + "(self, other) -> bool",
          binaryOp(op.prim, "self", "other"));
  struct Bit {
    const char *name;
    Prim bitwise, logical;
  };
  for (const Bit &op :
       {Bit{"and", Prim::BitwiseAnd, Prim::LogicalAnd}, Bit{"or", Prim::BitwiseOr, Prim::LogicalOr},
        Bit{"xor", Prim::BitwiseXor, Prim::LogicalXor}}) {
    std::string n = op.name;
    std::string decomp =
        std::string(primName(op.bitwise)) + " (integers) or " + primName(op.logical) + " (bool)";
    OpEntry &e = t.add("__" + n + "__", CallKind::Operator, forward, decomp,
                       bitwiseOrLogical(op.bitwise, op.logical, "self", "other"));
    t.alias(e, "__i" + n + "__");
    t.add("__r" + n + "__", CallKind::Operator, {"Tensor (Tensor self, Scalar other)"}, decomp,
          bitwiseOrLogical(op.bitwise, op.logical, "other", "self"));
  }
  const Names unarySig = {"Tensor (Tensor self)"};
  t.add("__neg__", CallKind::Operator, unarySig, "neg(self)", unarySame(Prim::Neg, "self"));
  t.add("__pos__", CallKind::Operator, unarySig, "self", [](Lowering &L) { L.out(L.in("self")); });
  t.add("__abs__", CallKind::Operator, unarySig, "abs(self)", unarySame(Prim::Abs, "self"));
  t.add("__invert__", CallKind::Operator, unarySig, "bitwise_not (integers) or logical_not (bool)",
        [](Lowering &L) {
          int x = L.in("self");
          DType d = L.b.meta(x).dtype;
          if (!isIntegral(d) && d != DType::Bool)
            throw CodedError(DiagCode::OpDTypeMismatch,
                             "__invert__(): ~ needs an integer or bool tensor, not " +
                                 std::string(dtypeName(d)));
          L.out(L.b.unary(d == DType::Bool ? Prim::LogicalNot : Prim::BitwiseNot, x));
        });
}

} // namespace

void registerOpEntries(OpTable &table) {
  registerElementwise(table);
  registerCreation(table);
  registerReductions(table);
  registerShapes(table);
  registerLinearAlgebra(table);
  registerActivations(table);
  registerOperators(table);
}

} // namespace sotc::ops
