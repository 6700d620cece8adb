//===- LowerReductions.cpp - Lowerings: reductions and cumulative scans ----------------------===//
//
// Sums, extremes and their positions, moments, norms, NaN-ignoring forms; and the scans
// (cumsum, cumprod, cummax, logcumsumexp) as a reduction over each position's window of the
// elements up to it: n^2 work along the scanned axis, fused into one kernel.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <cmath>

namespace sotc::ops::lowering {

namespace {

/// The tensor with every axis reduced to size 1 (keepdim over all axes) or to a 0-d tensor.
int allReduced(PrimBuilder &b, int v, int64_t rank, bool keepdim) {
  return b.reshape(v, keepdim ? std::vector<int64_t>(rank, 1) : std::vector<int64_t>{});
}

/// The first position of the maximum (minimum) along `axis`; NaN counts as the extreme, as in
/// torch and paddle. `dim` None: of the flattened tensor.
int argExtreme(Lowering &L, int x, const std::string &dimName, bool keepdim, bool isMax) {
  PrimBuilder &b = L.b;
  int64_t rank = b.meta(x).rank();
  if (rank == 0) // the one element is the extreme
    return b.fill(0, {}, DType::Int64);
  bool flat = L.args.isNone(dimName);
  if (flat)
    x = b.reshape(x, {b.meta(x).numElements()});
  int64_t axis = flat ? 0 : normalizeDim(b.opName(), L.args.intValue(dimName), rank);
  int64_t n = b.meta(x).shape[axis];
  int extreme = b.reduce(isMax ? Prim::ReduceMax : Prim::ReduceMin, x, {axis}, true);
  int hit = b.binary(Prim::Equal, x, extreme);
  if (isFloating(b.meta(x).dtype))
    hit = b.select(isNan(b, extreme), isNan(b, x), hit);
  int pos = positions(b, n, axis, b.meta(x).rank());
  int first = b.reduce(Prim::ReduceMin,
                       b.select(hit, pos, b.fill(double(n), {}, DType::Int64)), {axis}, keepdim);
  return flat ? allReduced(b, first, rank, keepdim) : first;
}

/// Sum of squared deviations / (count - correction) over `axes`.
int variance(Lowering &L, int x, const std::vector<int64_t> &axes, double correction,
             bool keepdim, int *meanOut = nullptr) {
  int m = mean(L, x, axes, true);
  int d = L.b.binary(Prim::Sub, x, m);
  int ss = reduceTo(L, Prim::ReduceSum, L.b.binary(Prim::Mul, d, d), axes, keepdim);
  if (meanOut)
    *meanOut = keepdim ? m : L.b.reshape(m, reducedShape(L.b.meta(x).shape, axes, false));
  return divideByCount(L, ss, x, axes, correction);
}

double correctionOf(Lowering &L) {
  const Signature &sig = L.args.signature();
  if (sig.find("unbiased"))
    return L.args.boolValue("unbiased") ? 1 : 0;
  return L.args.isNone("correction") ? 1 : L.args.scalar("correction");
}

LowerFn normOp(std::string xn, std::string pn, std::string axis, std::string keepdim) {
  return [=](Lowering &L) {
    int x = floatInput(L, xn);
    double p = 2;
    const Arg &pa = L.args.get(pn);
    if (pa.kind == Arg::Kind::String) {
      if (pa.stringValue != "fro")
        badValue(L, "the '" + pa.stringValue + "' norm needs a singular value decomposition, "
                    "which sotc does not compile (use p='fro' or a number)");
    } else if (!pa.isNone()) {
      p = pa.scalar();
    }
    L.out(pNorm(L, x, p, axesOf(L, axis, x), L.args.boolValue(keepdim)));
  };
}

/// The windows of a scan: x with `axis` moved last and viewed as [R, 1, 1, n], windowed to
/// [R, 1, 1, n (j), 1, n (q)] where element (j, q) is x[q + j - (n - 1)] (padValue before 0).
struct Scan {
  std::vector<int64_t> perm, movedShape;
  int64_t n;
};

Scan scanLayout(PrimBuilder &b, int x, int64_t axis) {
  Scan s;
  const std::vector<int64_t> &shape = b.meta(x).shape;
  s.perm = axisLast(axis, int64_t(shape.size()));
  for (int64_t a : s.perm)
    s.movedShape.push_back(shape[a]);
  s.n = shape[axis];
  return s;
}

int scanWindows(PrimBuilder &b, int x, const Scan &s, double padValue) {
  int moved = b.transpose(x, s.perm);
  int64_t elements = b.meta(moved).numElements();
  // A dynamic batch stays the rows when it is the only other dimension ([B, n]).
  if (elements == kDynamic && s.movedShape.size() != 2)
    throw CodedError(DiagCode::OpBadAttribute,
                     b.opName() + "(): a scan of a dynamic batch with more than one other "
                                  "dimension is not supported yet");
  int64_t rows =
      elements == kDynamic ? b.meta(moved).shape[0] : elements / std::max<int64_t>(1, s.n);
  int grid = b.reshape(moved, {rows, 1, 1, s.n});
  return b.window(grid, {1, s.n}, {1, 1}, {1, 1}, {0, 0, s.n - 1, 0}, padValue);
}

/// A reduction over the windows, back in x's layout.
int scanResult(PrimBuilder &b, int reducedWindows, const Scan &s) {
  return b.transpose(b.reshape(reducedWindows, s.movedShape), inversePerm(s.perm));
}

/// The scanned axis (dim None: the flattened tensor, paddle's default) and x in its layout.
int64_t scanAxis(Lowering &L, int &x, const std::string &dimName) {
  if (L.args.isNone(dimName) || L.b.meta(x).rank() == 0) {
    x = L.b.reshape(x, {L.b.meta(x).numElements()});
    return 0;
  }
  return normalizeDim(L.b.opName(), L.args.intValue(dimName), L.b.meta(x).rank());
}

LowerFn scanOp(std::string xn, std::string dimName, Prim prim, std::string dtype) {
  return [=](Lowering &L) {
    int x = L.in(xn);
    DType d = L.b.meta(x).dtype;
    if (!dtype.empty() && !L.args.isNone(dtype))
      d = L.args.get(dtype).dtypeValue;
    else if (isIntegral(d) || d == DType::Bool)
      d = DType::Int64;
    x = L.b.cast(x, d);
    bool keepShape = !L.args.isNone(dimName) && L.b.meta(x).rank() == 0;
    std::vector<int64_t> shape0 = L.b.meta(x).shape;
    int64_t axis = scanAxis(L, x, dimName);
    int r = scan(L.b, prim, x, axis, prim == Prim::ReduceProd ? 1 : 0);
    L.out(keepShape ? L.b.reshape(r, shape0) : r);
  };
}

} // namespace

int pNorm(Lowering &L, int x, double p, const std::vector<int64_t> &axes, bool keepdim) {
  PrimBuilder &b = L.b;
  int a = b.unary(Prim::Abs, x);
  if (std::isinf(p))
    return reduceTo(L, p > 0 ? Prim::ReduceMax : Prim::ReduceMin, a, axes, keepdim);
  if (p == 0)
    return reduceTo(L, Prim::ReduceSum,
                    b.cast(b.binary(Prim::NotEqual, x, scalarLike(b, 0, x)), b.meta(x).dtype), axes,
                    keepdim);
  if (p == 1)
    return reduceTo(L, Prim::ReduceSum, a, axes, keepdim);
  if (p == 2)
    return b.unary(Prim::Sqrt, reduceTo(L, Prim::ReduceSum, b.binary(Prim::Mul, x, x), axes, keepdim));
  int s = reduceTo(L, Prim::ReduceSum, b.binaryScalar(Prim::Pow, a, p), axes, keepdim);
  return b.binaryScalar(Prim::Pow, s, 1 / p);
}

int scan(PrimBuilder &b, Prim reduction, int x, int64_t axis, double padValue) {
  Scan s = scanLayout(b, x, axis);
  if (!isDynamicDim(s.n))
    return scanResult(b, b.reduce(reduction, scanWindows(b, x, s, padValue), {3}, false), s);
  // Along the dynamic size (RoBERTa's positions from the mask): no window of it; each result
  // reduces the whole row with the positions after its own masked out.
  PositionPairs p = positionPairs(b, x, axis);
  int upTo = b.broadcastTo(b.binary(Prim::LessEqual, p.j, p.i), p.square);
  int kept = b.select(upTo, p.values, b.fill(padValue, p.square, b.meta(x).dtype));
  return pairsResult(b, b.reduce(reduction, kept, {int64_t(p.square.size()) - 1}, false), p);
}

void registerReductions(OpTable &t) {
  struct Reduce {
    const char *paddle;
    const char *torch;
    Prim prim;
  };
  for (const Reduce &op :
       {Reduce{"max", "amax", Prim::ReduceMax}, Reduce{"min", "amin", Prim::ReduceMin}}) {
    paddleLower(t, op.paddle, reduceOp(op.prim, "x", "axis", "keepdim"));
    torchLower(t, op.torch, reduceOp(op.prim, "input", "dim", "keepdim"));
  }
  paddleLower(t, "sum", reduceOp(Prim::ReduceSum, "x", "axis", "keepdim", "dtype"));
  torchLower(t, "sum", reduceOp(Prim::ReduceSum, "input", "dim", "keepdim", "dtype"));
  paddleLower(t, "prod", reduceOp(Prim::ReduceProd, "x", "axis", "keepdim", "dtype"));
  torchLower(t, "prod", reduceOp(Prim::ReduceProd, "input", "dim", "keepdim", "dtype"));
  paddleLower(t, "mean", meanOp("x", "axis", "keepdim"));
  torchLower(t, "mean", meanOp("input", "dim", "keepdim"));
  paddleLower(t, "logsumexp", logsumexpOp("x", "axis", "keepdim"));
  torchLower(t, "logsumexp", logsumexpOp("input", "dim", "keepdim"));

  for (bool isMax : {true, false}) {
    auto arg = [isMax](std::string xn, std::string dim) {
      return [=](Lowering &L) {
        L.out(argExtreme(L, L.in(xn), dim, L.args.boolValue("keepdim"), isMax));
      };
    };
    paddleLower(t, isMax ? "argmax" : "argmin", arg("x", "axis"));
    torchLower(t, isMax ? "argmax" : "argmin", arg("input", "dim"));
    // torch.max(x) (all), torch.max(x, dim) (values, indices), torch.max(x, other) (maximum).
    Prim reduce = isMax ? Prim::ReduceMax : Prim::ReduceMin;
    torchLower(t, isMax ? "max" : "min", [=](Lowering &L) {
      int x = L.in("input");
      const Signature &sig = L.args.signature();
      if (sig.find("other")) {
        Operands o = promoteOperands(L, "input", "other");
        L.out(L.b.binary(isMax ? Prim::Max : Prim::Min, o.x, o.y, o.dtype));
      } else if (!sig.find("dim")) {
        L.out(reduceTo(L, reduce, x, normalizeAxes(L.b.opName(), {}, L.b.meta(x).rank()), false));
      } else {
        bool keep = L.args.boolValue("keepdim");
        int64_t axis = normalizeDim(L.b.opName(), L.args.intValue("dim"), L.b.meta(x).rank());
        L.out(reduceTo(L, reduce, x, {axis}, keep));
        L.out(argExtreme(L, x, "dim", keep, isMax));
      }
    });
  }
  torchLower(t, "aminmax", [](Lowering &L) {
    int x = L.in("input");
    std::vector<int64_t> axes = axesOf(L, "dim", x);
    bool keep = L.args.boolValue("keepdim");
    L.out(reduceTo(L, Prim::ReduceMin, x, axes, keep));
    L.out(reduceTo(L, Prim::ReduceMax, x, axes, keep));
  });
  for (bool isAll : {true, false}) {
    auto lower = [isAll](std::string xn, std::string axis) {
      return [=](Lowering &L) {
        int x = L.in(xn);
        int truth = L.b.cast(x, DType::Bool);
        L.out(reduceTo(L, isAll ? Prim::ReduceMin : Prim::ReduceMax, truth, axesOf(L, axis, x),
                       L.args.boolValue("keepdim")));
      };
    };
    paddleLower(t, isAll ? "all" : "any", lower("x", "axis"));
    torchLower(t, isAll ? "all" : "any", lower("input", "dim"));
  }
  auto countNonzero = [](std::string xn, std::string axis, bool keepdim) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      int nz = L.b.cast(L.b.binary(Prim::NotEqual, x, scalarLike(L.b, 0, x)), DType::Int64);
      L.out(reduceTo(L, Prim::ReduceSum, nz, axesOf(L, axis, x),
                     keepdim && L.args.boolValue("keepdim")));
    };
  };
  paddleLower(t, "count_nonzero", countNonzero("x", "axis", true));
  torchLower(t, "count_nonzero", countNonzero("input", "dim", false));

  for (bool isStd : {true, false}) {
    auto moment = [isStd](std::string xn, std::string axis, bool withMean) {
      return [=](Lowering &L) {
        int x = floatInput(L, xn);
        int m = -1;
        // torch's var(input, unbiased) form has neither dim nor keepdim: every element.
        bool dims = L.args.signature().find(axis) != nullptr;
        std::vector<int64_t> axes =
            dims ? axesOf(L, axis, x) : normalizeAxes(L.b.opName(), {}, L.b.meta(x).rank());
        int v = variance(L, x, axes, correctionOf(L), dims && L.args.boolValue("keepdim"),
                         withMean ? &m : nullptr);
        L.out(isStd ? L.b.unary(Prim::Sqrt, v) : v);
        if (withMean)
          L.out(m);
      };
    };
    const char *name = isStd ? "std" : "var";
    paddleLower(t, name, moment("x", "axis", false));
    torchLower(t, name, moment("input", "dim", false));
    torchLower(t, std::string(name) + "_mean", moment("input", "dim", true), false);
  }
  paddleLower(t, "norm", normOp("x", "p", "axis", "keepdim"));
  torchLower(t, "norm", normOp("input", "p", "dim", "keepdim"));
  t.bind("torch.linalg.vector_norm", normOp("x", "ord", "dim", "keepdim"));
  torchLower(t, "dist", [](Lowering &L) {
    Operands o = promoteOperands(L, "input", "other");
    int d = L.b.cast(L.b.binary(Prim::Sub, o.x, o.y), floatingResult(o.dtype));
    L.out(pNorm(L, d, L.args.scalar("p"), normalizeAxes("dist", {}, L.b.meta(d).rank()), false));
  });
  for (bool isMean : {false, true}) {
    auto lower = [isMean](std::string xn, std::string axis) {
      return [=](Lowering &L) { // NaNs left out: summed as 0, not counted
        int x = L.in(xn);
        if (isMean)
          x = floatInput(L, xn);
        std::vector<int64_t> axes = axesOf(L, axis, x);
        bool keep = L.args.boolValue("keepdim");
        if (!isFloating(L.b.meta(x).dtype)) {
          L.out(isMean ? mean(L, x, axes, keep)
                       : reduceTo(L, Prim::ReduceSum, L.b.cast(x, DType::Int64), axes, keep));
          return;
        }
        int nan = isNan(L.b, x);
        int s = reduceTo(L, Prim::ReduceSum, L.b.select(nan, scalarLike(L.b, 0, x), x), axes, keep);
        if (isMean) {
          int kept = L.b.cast(L.b.unary(Prim::LogicalNot, nan), L.b.meta(x).dtype);
          s = L.b.binary(Prim::Div, s, reduceTo(L, Prim::ReduceSum, kept, axes, keep));
        }
        L.out(s);
      };
    };
    paddleLower(t, isMean ? "nanmean" : "nansum", lower("x", "axis"));
    torchLower(t, isMean ? "nanmean" : "nansum", lower("input", "dim"));
  }

  paddleLower(t, "cumsum", scanOp("x", "axis", Prim::ReduceSum, "dtype"));
  torchLower(t, "cumsum", scanOp("input", "dim", Prim::ReduceSum, "dtype"));
  paddleLower(t, "cumprod", scanOp("x", "dim", Prim::ReduceProd, "dtype"));
  torchLower(t, "cumprod", scanOp("input", "dim", Prim::ReduceProd, "dtype"));
  auto logcumsumexp = [](std::string xn, std::string dim) {
    return [=](Lowering &L) { // m + log(sum exp(w - m)) over each window, m its maximum
      PrimBuilder &b = L.b;
      int x = floatInput(L, xn);
      std::vector<int64_t> shape0 = b.meta(x).shape;
      bool keepShape = !L.args.isNone(dim) && b.meta(x).rank() == 0;
      int64_t axis = scanAxis(L, x, dim);
      Scan s = scanLayout(b, x, axis);
      int w = scanWindows(b, x, s, -INFINITY);
      int m = b.reduce(Prim::ReduceMax, w, {3}, true);
      int finite = b.select(b.binary(Prim::Equal, b.unary(Prim::Abs, m), scalarLike(b, INFINITY, m)),
                            scalarLike(b, 0, m), m);
      int sum = b.reduce(Prim::ReduceSum, b.unary(Prim::Exp, b.binary(Prim::Sub, w, finite)), {3},
                         true);
      int r = b.binary(Prim::Add, b.unary(Prim::Log, sum), finite);
      r = scanResult(b, r, s);
      L.out(keepShape ? b.reshape(r, shape0) : r);
    };
  };
  // Searches by counting: the position of x among sorted boundaries is how many of them lie
  // below it (or at most at it, right=True): every element against every boundary.
  auto counted = [](Lowering &L, int values, int boundaries, bool right) {
    PrimBuilder &b = L.b;
    Operands o{values, boundaries, promoteTypes(b.meta(values).dtype, b.meta(boundaries).dtype)};
    int v = b.cast(o.x, o.dtype), s = b.cast(o.y, o.dtype);
    std::vector<int64_t> vs = b.meta(v).shape, ss = b.meta(s).shape;
    if (ss.empty())
      badValue(L, "the boundaries must have at least one dimension");
    if (ss.size() > 1 && !std::equal(ss.begin(), ss.end() - 1, vs.begin(), vs.end() - 1))
      badValue(L, "an N-d sorted sequence " + formatShape(ss) +
                      " needs values with its leading dimensions, not " + formatShape(vs));
    std::vector<int64_t> col = vs, row = ss;
    col.push_back(1);                          // [..., K, 1]
    if (ss.size() == 1)
      row.insert(row.begin(), vs.size(), 1);   // [1..., M]
    else
      row.insert(row.end() - 1, 1);            // [..., 1, M]
    int below = b.binary(right ? Prim::LessEqual : Prim::Less, b.reshape(s, row), b.reshape(v, col));
    int64_t last = int64_t(col.size()) - 1;
    int n = b.reduce(Prim::ReduceSum, b.cast(below, DType::Int64), {last}, false);
    return L.args.boolValue("out_int32") ? b.cast(n, DType::Int32) : n;
  };
  torchLower(t, "bucketize", [counted](Lowering &L) {
    int x = L.args.get("input").isTensor() ? L.in("input")
                                           : L.b.fill(L.args.scalar("input"), {}, DType::Float32);
    L.out(counted(L, x, L.in("boundaries"), L.args.boolValue("right")));
  }, false);
  torchLower(
      t, "searchsorted",
      [counted](Lowering &L) {
        bool right = L.args.boolValue("right") ||
                     (!L.args.isNone("side") && L.args.get("side").stringValue == "right");
        int x = L.args.get("input").isTensor()
                    ? L.in("input")
                    : L.b.fill(L.args.scalar("input"), {}, DType::Float32);
        int seq = L.in("sorted_sequence");
        if (L.b.meta(seq).rank() == 0)
          badValue(L, "the sorted_sequence needs at least one dimension");
        if (L.b.meta(seq).rank() > 1 && L.b.meta(x).rank() != L.b.meta(seq).rank())
          badValue(L, "an N-d sorted_sequence needs values of the same number of dimensions");
        if (!L.args.isNone("sorter")) { // the sequence in the order the sorter gives
          if (L.b.meta(L.in("sorter")).shape != L.b.meta(seq).shape)
            badValue(L, "sorter must have the sorted_sequence's shape");
          seq = takeAlong(L.b, seq, L.in("sorter"), L.b.meta(seq).rank() - 1);
        }
        L.out(counted(L, x, seq, right));
      },
      false);
  auto isin = [](std::string en, std::string tn) {
    return [=](Lowering &L) { // any(element == test) over every test element
      PrimBuilder &b = L.b;
      auto tensorOf = [&](const std::string &name) {
        return L.args.get(name).isTensor() ? L.in(name)
                                           : b.fill(L.args.scalar(name), {}, DType::Float32);
      };
      int e = tensorOf(en), te = tensorOf(tn);
      DType d = promoteTypes(b.meta(e).dtype, b.meta(te).dtype);
      std::vector<int64_t> col = b.meta(e).shape;
      col.push_back(1);
      int64_t m = b.meta(te).numElements();
      std::vector<int64_t> row(col.size() - 1, 1);
      row.push_back(m);
      int eq = b.binary(Prim::Equal, b.reshape(b.cast(e, d), col), b.reshape(b.cast(te, d), row));
      int any = b.reduce(Prim::ReduceMax, eq, {int64_t(col.size()) - 1}, false);
      L.out(L.args.boolValue("invert") ? b.unary(Prim::LogicalNot, any) : any);
    };
  };
  torchLower(t, "isin", isin("elements", "test_elements"), false);
  paddleLower(t, "isin", isin("x", "test_x"));
  torchLower(t, "histc", [](Lowering &L) { // counts of bins equal in [min, max] (data's if equal)
    PrimBuilder &b = L.b;
    int x = floatInput(L, "input");
    DType d = b.meta(x).dtype;
    int64_t bins = L.args.intValue("bins");
    if (bins <= 0)
      badValue(L, "bins must be positive");
    int flat = b.reshape(x, {b.meta(x).numElements()});
    double mn = L.args.scalar("min"), mx = L.args.scalar("max");
    int lo = b.fill(mn, {}, d), hi = b.fill(mx, {}, d);
    if (mn == mx) {
      lo = b.reduce(Prim::ReduceMin, flat, {0}, false);
      hi = b.reduce(Prim::ReduceMax, flat, {0}, false);
      int same = b.binary(Prim::Equal, lo, hi);
      lo = b.select(same, b.binaryScalar(Prim::Sub, lo, 1), lo);
      hi = b.select(same, b.binaryScalar(Prim::Add, hi, 1), hi);
    }
    int bin = b.unary(Prim::Floor, b.binary(Prim::Div, b.binaryScalar(Prim::Mul, b.binary(Prim::Sub, flat, lo), double(bins)),
                                            b.binary(Prim::Sub, hi, lo)));
    bin = b.select(b.binary(Prim::Equal, flat, hi), b.fill(double(bins - 1), {}, d), bin);
    int inside = b.binary(Prim::LogicalAnd, b.binary(Prim::GreaterEqual, flat, lo),
                          b.binary(Prim::LessEqual, flat, hi), DType::Bool);
    int64_t n = b.meta(flat).numElements();
    int hit = b.binary(Prim::LogicalAnd,
                       b.binary(Prim::Equal, b.reshape(bin, {1, n}),
                                b.reshape(b.cast(b.iota(bins, DType::Int64), d), {bins, 1})),
                       b.reshape(inside, {1, n}), DType::Bool);
    L.out(b.reduce(Prim::ReduceSum, b.cast(hit, d), {1}, false));
  });
  // histogram (one dimension) and histogramdd (the columns of [N, D] points): per dimension
  // the bin edges (given, or torch.linspace over `range` or the data's extent, widened by 0.5
  // each way when empty), each point's bin by how many inner edges lie at or below it (the
  // last edge belongs to the last bin; points outside the edges, and NaN, count nowhere).
  auto histogram = [](bool multi) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = floatInput(L, "input");
      DType d = b.meta(x).dtype;
      int points = multi ? x : b.reshape(x, {b.meta(x).numElements(), 1});
      if (b.meta(points).rank() < 1 || b.meta(points).shape.back() < 1)
        badValue(L, "expects points with their coordinates on the last dimension");
      int64_t dims = b.meta(points).shape.back(), n = b.meta(points).numElements() / dims;
      points = b.reshape(points, {n, dims});
      bool given = L.args.signatureIndex() == 1; // the edges as tensors
      std::vector<int> edgeTensors =
          given ? (multi ? L.inList("bins") : std::vector<int>{L.in("bins")}) : std::vector<int>();
      std::vector<int64_t> counts = given   ? std::vector<int64_t>()
                                    : multi ? L.args.intList("bins")
                                            : std::vector<int64_t>{L.args.intValue("bins")};
      if (!given && counts.size() == 1 && dims > 1)
        counts.assign(dims, counts[0]);
      if ((given ? edgeTensors.size() : counts.size()) != size_t(dims))
        badValue(L, "needs bins for each of the " + std::to_string(dims) + " dimensions");
      std::vector<double> range = !L.args.signature().find("range") || L.args.isNone("range")
                                      ? std::vector<double>()
                                      : L.args.floatList("range");
      if (!range.empty() && range.size() != size_t(2 * dims))
        badValue(L, "range needs a (min, max) pair per dimension");
      std::vector<int> edges, bins;
      int flat = -1, inside = -1;
      int64_t cells = 1;
      for (int64_t k = dims - 1; k >= 0; --k) { // row-major: the last dimension varies fastest
        int col = b.slice(points, {1}, {k}, {k + 1}, {1}); // [n, 1]
        int e;
        if (given) {
          e = b.cast(edgeTensors[k], d);
          if (b.meta(e).rank() != 1 || b.meta(e).shape[0] < 2)
            badValue(L, "bin edges must be 1-d with at least two entries");
        } else {
          int64_t count = counts[k];
          if (count < 1)
            badValue(L, "bins must be positive");
          int lo, hi;
          if (!range.empty()) {
            lo = b.fill(range[2 * k], {}, d), hi = b.fill(range[2 * k + 1], {}, d);
          } else {
            lo = b.reshape(b.reduce(Prim::ReduceMin, col, {0, 1}, true), {});
            hi = b.reshape(b.reduce(Prim::ReduceMax, col, {0, 1}, true), {});
          }
          int same = b.binary(Prim::Equal, lo, hi);
          lo = b.select(same, b.binaryScalar(Prim::Sub, lo, 0.5), lo);
          hi = b.select(same, b.binaryScalar(Prim::Add, hi, 0.5), hi);
          // torch.linspace: from the start up to the middle, from the end after it.
          int step = b.binaryScalar(Prim::Div, b.binary(Prim::Sub, hi, lo), double(count));
          int i = b.cast(b.iota(count + 1, DType::Int64), d);
          int fromStart = b.binary(Prim::Add, lo, b.binary(Prim::Mul, step, i));
          int fromEnd = b.binary(
              Prim::Sub, hi,
              b.binary(Prim::Mul, step, b.binary(Prim::Sub, b.fill(double(count), {}, d), i)));
          e = b.select(b.binary(Prim::Less, i, b.fill(double((count + 1) / 2), {}, d)), fromStart,
                       fromEnd);
        }
        int64_t m = b.meta(e).shape[0] - 1; // bins of this dimension
        int inner = b.reshape(b.slice(e, {0}, {1}, {m}, {1}), {1, m - 1});
        int idx = m == 1 ? b.fill(0, {n}, DType::Int64)
                         : b.reduce(Prim::ReduceSum,
                                    b.cast(b.binary(Prim::GreaterEqual, col, inner), DType::Int64),
                                    {1}, false);
        int in = b.reshape(b.binary(Prim::LogicalAnd,
                                    b.binary(Prim::GreaterEqual, col,
                                             b.reshape(b.slice(e, {0}, {0}, {1}, {1}), {1, 1})),
                                    b.binary(Prim::LessEqual, col,
                                             b.reshape(b.slice(e, {0}, {m}, {m + 1}, {1}), {1, 1})),
                                    DType::Bool),
                           {n});
        idx = cells == 1 ? idx : b.binaryScalar(Prim::Mul, idx, double(cells));
        flat = flat < 0 ? idx : b.binary(Prim::Add, flat, idx);
        inside = inside < 0 ? in : b.binary(Prim::LogicalAnd, inside, in, DType::Bool);
        cells *= m;
        edges.insert(edges.begin(), e);
      }
      int w = b.cast(inside, d);
      if (!L.args.isNone("weight")) {
        int weight = b.cast(L.in("weight"), d);
        if (b.meta(weight).numElements() != n)
          badValue(L, "weight needs one value per point");
        w = b.binary(Prim::Mul, w, b.reshape(weight, {n}));
      }
      int cell = b.reshape(b.iota(cells, DType::Int64), {cells, 1});
      int hit = b.binary(Prim::Equal, cell, b.reshape(flat, {1, n}));
      int hist = b.reduce(Prim::ReduceSum,
                          b.binary(Prim::Mul, b.cast(hit, d), b.reshape(w, {1, n})), {1}, false);
      std::vector<int64_t> shape;
      for (int e : edges)
        shape.push_back(b.meta(e).shape[0] - 1);
      hist = b.reshape(hist, shape);
      if (L.args.boolValue("density")) { // per unit volume: counts / total / bin volumes
        hist = b.binary(Prim::Div, hist, b.reduce(Prim::ReduceSum, hist, {}, false));
        for (size_t k = 0; k < edges.size(); ++k) {
          int64_t m = shape[k];
          int width = b.binary(Prim::Sub, b.slice(edges[k], {0}, {1}, {m + 1}, {1}),
                               b.slice(edges[k], {0}, {0}, {m}, {1}));
          std::vector<int64_t> along(shape.size(), 1);
          along[k] = m;
          hist = b.binary(Prim::Div, hist, b.reshape(width, along));
        }
      }
      L.out(hist);
      for (int e : edges)
        L.out(e);
    };
  };
  torchLower(t, "histogram", histogram(false));
  torchLower(t, "histogramdd", histogram(true), false);
  auto allClose = [](std::string xn, std::string yn) {
    return [=](Lowering &L) { // all(isclose(x, y)) as a 0-d bool tensor
      int close = isClose(L, xn, yn);
      L.out(reduceTo(L, Prim::ReduceMin, close, normalizeAxes("allclose", {}, L.b.meta(close).rank()),
                     false));
    };
  };
  torchLower(t, "allclose", allClose("input", "other"));
  paddleLower(t, "allclose", allClose("x", "y"));
  torchLower(t, "equal", [](Lowering &L) { // same shape and every element equal: a 0-d bool
    PrimBuilder &b = L.b;
    int x = L.in("input"), y = L.in("other");
    if (b.meta(x).shape != b.meta(y).shape) {
      L.out(b.fill(0, {}, DType::Bool));
      return;
    }
    int eq = b.binary(Prim::Equal, x, y);
    L.out(reduceTo(L, Prim::ReduceMin, eq, normalizeAxes("equal", {}, b.meta(eq).rank()), false));
  });
  paddleLower(t, "logcumsumexp", logcumsumexp("x", "axis"));
  torchLower(t, "logcumsumexp", logcumsumexp("input", "dim"));
  for (bool isMax : {true, false}) {
    auto cumulative = [isMax](std::string xn, std::string dim) {
      return [=](Lowering &L) { // values, and the last position where each was reached
        PrimBuilder &b = L.b;
        int x = L.in(xn);
        std::vector<int64_t> shape0 = b.meta(x).shape;
        bool keepShape = b.meta(x).rank() == 0;
        int64_t axis = scanAxis(L, x, dim);
        double pad = isFloating(b.meta(x).dtype) ? (isMax ? -INFINITY : INFINITY)
                     : isMax                      ? -9.2233720368547758e18
                                                  : 9.2233720368547758e18;
        int values = scan(b, isMax ? Prim::ReduceMax : Prim::ReduceMin, x, axis, pad);
        // The running extreme changes only where an element reaches it (or is NaN): the last
        // such position so far, itself a running maximum.
        int pos = b.broadcastTo(positions(b, b.meta(x).shape[axis], axis, b.meta(x).rank()),
                                b.meta(x).shape);
        int hit = b.binary(Prim::Equal, x, values);
        if (isFloating(b.meta(x).dtype))
          hit = b.binary(Prim::LogicalOr, hit, isNan(b, x), DType::Bool);
        int reached = b.select(hit, pos, b.fill(-1, {}, DType::Int64));
        int indices = scan(b, Prim::ReduceMax, reached, axis, -1);
        L.out(keepShape ? b.reshape(values, shape0) : values);
        L.out(keepShape ? b.reshape(indices, shape0) : indices);
      };
    };
    paddleLower(t, isMax ? "cummax" : "cummin", cumulative("x", "axis"));
    torchLower(t, isMax ? "cummax" : "cummin", cumulative("input", "dim"));
  }
}

} // namespace sotc::ops::lowering
