//===- LowerSorting.cpp - Lowerings: sort, topk, median, quantile, mode -------------------===//
//
// Order statistics by ranks: each element's rank along the axis is the number of elements
// that sort before it (ties by position, so the order is stable; NaN sorts last, as in
// torch), and the k-th sorted element is the one whose rank is k. n^2 comparisons along the
// axis, all fused: no sorting network, and positions that are tensors (a NaN-skipping
// median's middle) work like constants. Rows longer than kFusedSortUpTo, or of a size known
// only at run time (a counted one: a detector's scores), are sorted by an argsort step of
// the runtime instead (n log n), and the k-th element is read at the k-th sorted position.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <cmath>

namespace sotc::ops::lowering {

namespace {

/// The longest rows sorted by ranks in a kernel (a million comparisons a row).
constexpr int64_t kFusedSortUpTo = 1024;

/// x and every element's rank along `axis` (x's shape), or, for long rows, the positions that
/// sort x along it (`order`, from the runtime's argsort step; rank -1). The comparisons put
/// element i at `axis` and element j next to it: no transposes, which would leave the ranks
/// out of line with the reductions that read them.
struct Ranked {
  int x = -1, rank = -1, order = -1;
  int64_t axis = 0, n = 0;
};

/// x's shape with a 1 inserted at `at`.
std::vector<int64_t> withUnit(const std::vector<int64_t> &shape, int64_t at) {
  std::vector<int64_t> s = shape;
  s.insert(s.begin() + at, 1);
  return s;
}

Ranked rankAlong(PrimBuilder &b, int x, int64_t axis, bool descending) {
  Ranked r{x, -1, -1, axis, b.meta(x).shape[axis]};
  if (isDynamicDim(r.n) || r.n > kFusedSortUpTo) {
    r.order = b.argsort(x, axis, descending);
    return r;
  }
  std::vector<int64_t> shape = b.meta(x).shape;
  int a = b.reshape(x, withUnit(shape, axis + 1)); // element i: [..., n, 1, ...]
  int c = b.reshape(x, withUnit(shape, axis));     // element j: [..., 1, n, ...]
  int before; // whether element j sorts before element i
  if (descending)
    before = b.binary(Prim::Greater, c, a);
  else
    before = b.binary(Prim::Less, c, a);
  int tie = b.binary(Prim::Equal, c, a);
  if (isFloating(b.meta(x).dtype)) { // NaN is the largest: last ascending, first descending
    int nanA = isNan(b, a), nanC = isNan(b, c);
    int nanOrder = descending ? b.binary(Prim::LogicalAnd, nanC, b.unary(Prim::LogicalNot, nanA), DType::Bool)
                              : b.binary(Prim::LogicalAnd, nanA, b.unary(Prim::LogicalNot, nanC), DType::Bool);
    before = b.binary(Prim::LogicalOr, before, nanOrder, DType::Bool);
    tie = b.binary(Prim::LogicalOr, tie, b.binary(Prim::LogicalAnd, nanA, nanC, DType::Bool),
                   DType::Bool);
  }
  int64_t r1 = int64_t(shape.size()) + 1;
  int earlier = b.binary(Prim::Less, positions(b, r.n, axis + 1, r1), positions(b, r.n, axis, r1));
  before = b.binary(Prim::LogicalOr, before, b.binary(Prim::LogicalAnd, tie, earlier, DType::Bool),
                    DType::Bool);
  r.rank = b.reduce(Prim::ReduceSum, b.cast(before, DType::Int64), {axis + 1}, false);
  return r;
}

/// The elements of ranks `wanted` and their positions, with Q at the axis: `wanted` is [Q],
/// or of x's rank with Q at the axis (a rank per row).
std::pair<int, int> pick(PrimBuilder &b, const Ranked &r, int wanted) {
  std::vector<int64_t> shape = b.meta(r.x).shape;
  int64_t rank = int64_t(shape.size()), axis = r.axis;
  if (r.order >= 0) {                // the sorted positions at the wanted ranks, x at those
    std::vector<int64_t> at = shape; // x's shape with Q at the axis
    at[axis] = b.meta(wanted).shape[b.meta(wanted).rank() == 1 ? 0 : axis];
    if (b.meta(wanted).rank() == 1 && rank != 1) {
      std::vector<int64_t> unit(rank, 1);
      unit[axis] = at[axis];
      wanted = b.reshape(wanted, unit);
    }
    int i = takeAlong(b, r.order, b.broadcastTo(wanted, at), axis);
    return {takeAlong(b, r.x, i, axis), i};
  }
  std::vector<int64_t> want;
  if (b.meta(wanted).rank() == 1 && rank != 1) {
    want.assign(rank + 1, 1);
    want[axis] = b.meta(wanted).shape[0];
  } else {
    want = withUnit(b.meta(wanted).shape, axis + 1); // [..., Q, 1, ...]
  }
  // Element i at axis + 1, the wanted rank at axis: [..., Q, n, ...].
  int hit = b.binary(Prim::Equal, b.reshape(r.rank, withUnit(shape, axis)), b.reshape(wanted, want));
  DType d = b.meta(r.x).dtype;
  int v = b.reduce(Prim::ReduceSum, b.select(hit, b.reshape(r.x, withUnit(shape, axis)), b.fill(0, {}, d)),
                   {axis + 1}, false);
  int pos = positions(b, r.n, axis + 1, rank + 1);
  int i = b.reduce(Prim::ReduceSum, b.select(hit, pos, b.fill(0, {}, DType::Int64)), {axis + 1}, false);
  return {v, i};
}

/// A picked result ([..., Q, ...]) as returned: Q kept at the axis, or dropped (keep false,
/// Q == 1).
int restore(PrimBuilder &b, int v, const Ranked &r, bool keep) {
  if (keep)
    return v;
  std::vector<int64_t> shape = b.meta(v).shape;
  shape.erase(shape.begin() + r.axis);
  return b.reshape(v, shape);
}

int ranksUpTo(PrimBuilder &b, int64_t k) { return b.iota(k, DType::Int64); }

/// The k smallest (largest, where r was ranked descending) elements along the axis, in order,
/// and their positions: [..., k, ...]; k of n sorts the whole row.
std::pair<int, int> firstRanks(PrimBuilder &b, const Ranked &r, int64_t k) {
  if (r.order < 0)
    return pick(b, r, ranksUpTo(b, k));
  int i = k == r.n ? r.order : b.slice(r.order, {r.axis}, {0}, {k}, {1});
  return {takeAlong(b, r.x, i, r.axis), i};
}

/// The axis an order statistic works along: `dim` (None: the flattened x, `flattened` set).
int64_t statAxis(Lowering &L, int &x, const std::string &dimName, bool &flattened) {
  flattened = !L.args.signature().find(dimName) || L.args.isNone(dimName) ||
              L.b.meta(x).rank() == 0;
  if (flattened) {
    x = L.b.reshape(x, {L.b.meta(x).numElements()});
    return 0;
  }
  return normalizeDim(L.b.opName(), L.args.intValue(dimName), L.b.meta(x).rank());
}

/// A dim-less result of a flattened x: 0-d, or all-ones with keepdim.
int flatResult(PrimBuilder &b, int v, int64_t rank, bool keepdim) {
  return b.reshape(v, keepdim ? std::vector<int64_t>(rank, 1) : std::vector<int64_t>{});
}

LowerFn sortOp(std::string xn, std::string dim, bool values, bool indices) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in(xn);
    if (b.meta(x).rank() == 0) {
      if (values)
        L.out(x);
      if (indices)
        L.out(b.fill(0, {}, DType::Int64));
      return;
    }
    int64_t axis = normalizeDim(b.opName(), L.args.intValue(dim), b.meta(x).rank());
    Ranked r = rankAlong(b, x, axis, L.args.boolValue("descending"));
    auto [v, i] = firstRanks(b, r, r.n);
    if (values)
      L.out(restore(b, v, r, true));
    if (indices)
      L.out(restore(b, i, r, true));
  };
}

/// The element of rank k (0-based) and its position along dim (kthvalue, median).
void kth(Lowering &L, int x, int64_t axis, int wanted, bool keepdim, bool withIndex) {
  PrimBuilder &b = L.b;
  Ranked r = rankAlong(b, x, axis, false);
  auto [v, i] = pick(b, r, wanted);
  L.out(restore(b, v, r, keepdim));
  if (withIndex)
    L.out(restore(b, i, r, keepdim));
}

int constantRank(PrimBuilder &b, int64_t k) { return b.fill(double(k), {1}, DType::Int64); }

/// median: the lower of the two middle elements (torch; paddle's mode='min'), or their mean
/// (paddle's default mode='avg'); `skipNan`: of the non-NaN elements (nanmedian).
LowerFn medianOp(std::string xn, std::string dim, bool skipNan, bool paddle) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in(xn);
    int64_t rank0 = b.meta(x).rank();
    bool flat = false;
    bool keep = L.args.signature().find("keepdim") && L.args.boolValue("keepdim");
    bool average = paddle && L.args.get("mode").stringValue == "avg";
    if (paddle && !average && L.args.get("mode").stringValue != "min")
      badValue(L, "mode must be 'avg' or 'min'");
    if (average)
      x = floatInput(L, xn);
    int64_t axis = statAxis(L, x, dim, flat);
    int64_t n = b.meta(x).shape[axis];
    if (n == 0)
      badValue(L, "needs a non-empty dimension");
    bool withIndex = L.args.signature().returnNames.size() == 2; // torch's median(x, dim)
    Ranked r = rankAlong(b, x, axis, false);
    int lower, upper = -1;
    if (skipNan && isFloating(b.meta(x).dtype)) { // the middle of the c non-NaN elements
      int count = b.reduce(Prim::ReduceSum, b.cast(b.unary(Prim::LogicalNot, isNan(b, r.x)), DType::Int64),
                           {r.axis}, true);
      int zero = b.fill(0, {}, DType::Int64);
      int last = b.binary(Prim::Max, b.binaryScalar(Prim::Sub, count, 1), zero);
      lower = b.binary(Prim::FloorDiv, last, b.fill(2, {}, DType::Int64));
      upper = b.binary(Prim::FloorDiv, b.binaryScalar(Prim::Add, last, 1), b.fill(2, {}, DType::Int64));
    } else {
      lower = constantRank(b, (n - 1) / 2);
      upper = constantRank(b, n / 2);
    }
    auto [v, i] = pick(b, r, lower);
    if (average) {
      auto [v2, i2] = pick(b, r, upper);
      (void)i2;
      v = b.binaryScalar(Prim::Mul, b.binary(Prim::Add, v, v2), 0.5);
    }
    int value = restore(b, v, r, keep && !flat);
    if (!skipNan) {
      int nanRow = isFloating(b.meta(x).dtype)
                       ? b.reduce(Prim::ReduceMax, isNan(b, r.x), {r.axis}, true)
                       : -1;
      if (nanRow >= 0)
        value = b.select(restore(b, nanRow, r, keep && !flat), b.fill(NAN, {}, b.meta(value).dtype), value);
    }
    if (flat)
      value = flatResult(b, value, rank0, keep);
    L.out(value);
    if (withIndex)
      L.out(flat ? flatResult(b, i, rank0, keep) : restore(b, i, r, keep));
  };
}

/// quantile: between the sorted elements at q * (n - 1), interpolated as asked.
LowerFn quantileOp(std::string xn, std::string dim, bool skipNan) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = floatInput(L, xn);
    int64_t rank0 = b.meta(x).rank();
    bool flat = false, keep = L.args.boolValue("keepdim");
    int64_t axis = statAxis(L, x, dim, flat);
    DType d = b.meta(x).dtype;
    const Arg &qa = L.args.get("q");
    bool scalarQ = !qa.isTensor() && !qa.isSequence();
    int q;
    if (qa.isTensor())
      q = b.cast(L.in("q"), d);
    else if (qa.isSequence()) {
      std::vector<int> parts;
      for (const Arg &item : qa.items)
        parts.push_back(b.fill(item.scalar(), {1}, d));
      q = b.concat(parts, 0);
    } else
      q = b.fill(qa.scalar(), {1}, d);
    scalarQ = scalarQ || (qa.isTensor() && b.meta(q).rank() == 0);
    int64_t nq = b.meta(q).numElements(), xr = b.meta(x).rank();
    std::vector<int64_t> qShape(xr, 1); // Q at the axis
    qShape[axis] = nq;
    q = b.reshape(q, qShape);
    Ranked r = rankAlong(b, x, axis, false);
    int count; // elements taking part, per row: [..., 1, ...]
    if (skipNan)
      count = b.reduce(Prim::ReduceSum, b.cast(b.unary(Prim::LogicalNot, isNan(b, r.x)), d), {axis}, true);
    else
      count = b.fill(double(r.n), {}, d);
    int pos = b.binary(Prim::Mul, q, b.binaryScalar(Prim::Sub, count, 1)); // [..., Q, ...]
    pos = b.binary(Prim::Max, pos, b.fill(0, {}, d));
    int lo = b.unary(Prim::Floor, pos), hi = b.unary(Prim::Ceil, pos);
    auto at = [&](int p) { return pick(b, r, b.cast(p, DType::Int64)).first; };
    const std::string &mode = L.args.get("interpolation").stringValue;
    int v;
    if (mode == "lower")
      v = at(lo);
    else if (mode == "higher")
      v = at(hi);
    else if (mode == "nearest")
      v = at(b.unary(Prim::Round, pos));
    else if (mode == "midpoint")
      v = b.binaryScalar(Prim::Mul, b.binary(Prim::Add, at(lo), at(hi)), 0.5);
    else if (mode == "linear") {
      int vlo = at(lo);
      v = b.binary(Prim::Add, vlo, b.binary(Prim::Mul, b.binary(Prim::Sub, pos, lo),
                                            b.binary(Prim::Sub, at(hi), vlo)));
    } else
      badValue(L, "interpolation must be linear, lower, higher, midpoint or nearest, not '" +
                      mode + "'");
    if (!skipNan) {
      int nanRow = b.reduce(Prim::ReduceMax, isNan(b, r.x), {axis}, true);
      v = b.select(nanRow, b.fill(NAN, {}, d), v);
    } else {
      v = b.select(b.binary(Prim::Equal, count, b.fill(0, {}, d)), b.fill(NAN, {}, d), v);
    }
    // [..., Q, ...] -> [Q, x's shape with the axis reduced (kept as 1 with keepdim)]
    std::vector<int64_t> toFront{axis};
    for (int64_t a = 0; a < xr; ++a)
      if (a != axis)
        toFront.push_back(a);
    int front = b.transpose(v, toFront);
    std::vector<int64_t> reduced;
    if (flat) {
      if (keep)
        reduced.assign(rank0, 1);
    } else {
      std::vector<int64_t> shape = b.meta(L.in(xn)).shape;
      for (int64_t a = 0; a < int64_t(shape.size()); ++a)
        if (a != axis)
          reduced.push_back(shape[a]);
        else if (keep)
          reduced.push_back(1);
    }
    std::vector<int64_t> outShape = reduced;
    if (!scalarQ)
      outShape.insert(outShape.begin(), nq);
    L.out(b.reshape(front, outShape));
  };
}

/// mode: the most frequent element along dim (the smallest of equally frequent ones) and the
/// last position it occurs at.
LowerFn modeOp(std::string xn, std::string dim) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in(xn);
    bool keep = L.args.boolValue("keepdim");
    if (b.meta(x).rank() == 0) {
      L.out(x);
      L.out(b.fill(0, {}, DType::Int64));
      return;
    }
    int64_t axis = normalizeDim(b.opName(), L.args.intValue(dim), b.meta(x).rank());
    std::vector<int64_t> shape = b.meta(x).shape;
    int64_t n = shape[axis];
    // How often each element occurs: element i at axis, j next to it.
    int a = b.reshape(x, withUnit(shape, axis + 1)), c = b.reshape(x, withUnit(shape, axis));
    int count = b.reduce(Prim::ReduceSum, b.cast(b.binary(Prim::Equal, a, c), DType::Int64),
                         {axis + 1}, false);
    int best = b.reduce(Prim::ReduceMax, count, {axis}, true);
    DType d = b.meta(x).dtype;
    double top = isFloating(d) ? INFINITY : 9.2233720368547758e18;
    int candidate = b.binary(Prim::Equal, count, best);
    int value = b.reduce(Prim::ReduceMin, b.select(candidate, x, b.fill(top, {}, d)), {axis}, true);
    int pos = positions(b, n, axis, int64_t(shape.size()));
    int index = b.reduce(Prim::ReduceMax,
                         b.select(b.binary(Prim::Equal, x, value), pos, b.fill(-1, {}, DType::Int64)),
                         {axis}, true);
    Ranked r{x, -1, -1, axis, n};
    L.out(restore(b, value, r, keep));
    L.out(restore(b, index, r, keep));
  };
}

} // namespace

void registerSorting(OpTable &t) {
  torchLower(t, "sort", sortOp("input", "dim", true, true));
  paddleLower(t, "sort", sortOp("x", "axis", true, false));
  torchLower(t, "argsort", sortOp("input", "dim", false, true));
  paddleLower(t, "argsort", sortOp("x", "axis", false, true));
  torchLower(t, "msort", [](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in("input");
    if (b.meta(x).rank() == 0) {
      L.out(x);
      return;
    }
    Ranked r = rankAlong(b, x, 0, false);
    L.out(restore(b, firstRanks(b, r, r.n).first, r, true));
  });
  auto topk = [](std::string xn, std::string dim) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = L.in(xn);
      int64_t k = L.args.intValue("k");
      if (b.meta(x).rank() == 0) {
        if (k > 1)
          badValue(L, "k is " + std::to_string(k) + ", more than the 1 element");
        L.out(x);
        L.out(b.fill(0, {}, DType::Int64));
        return;
      }
      int64_t axis = L.args.isNone(dim) ? b.meta(x).rank() - 1
                                        : normalizeDim(b.opName(), L.args.intValue(dim), b.meta(x).rank());
      if (k < 0 || k > b.meta(x).shape[axis])
        badValue(L, "k is " + std::to_string(k) + ", but dimension " + std::to_string(axis) +
                        " has " + std::to_string(b.meta(x).shape[axis]) + " elements");
      Ranked r = rankAlong(b, x, axis, L.args.boolValue("largest"));
      auto [v, i] = firstRanks(b, r, k);
      L.out(restore(b, v, r, true));
      L.out(restore(b, i, r, true));
    };
  };
  torchLower(t, "topk", topk("input", "dim"));
  paddleLower(t, "topk", topk("x", "axis"));
  auto kthvalue = [](std::string xn, std::string dim) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = L.in(xn);
      int64_t k = L.args.intValue("k");
      bool scalar = b.meta(x).rank() == 0;
      if (scalar)
        x = b.reshape(x, {1});
      int64_t axis = L.args.isNone(dim) ? b.meta(x).rank() - 1
                                        : normalizeDim(b.opName(), L.args.intValue(dim), b.meta(x).rank());
      if (k < 1 || k > b.meta(x).shape[axis])
        badValue(L, "k is " + std::to_string(k) + ", outside 1.." +
                        std::to_string(b.meta(x).shape[axis]));
      bool keep = L.args.boolValue("keepdim") && !scalar;
      kth(L, x, axis, constantRank(b, k - 1), keep, true);
    };
  };
  torchLower(t, "kthvalue", kthvalue("input", "dim"));
  paddleLower(t, "kthvalue", kthvalue("x", "axis"));
  torchLower(t, "median", medianOp("input", "dim", false, false));
  torchLower(t, "nanmedian", medianOp("input", "dim", true, false));
  paddleLower(t, "median", medianOp("x", "axis", false, true));
  paddleLower(t, "nanmedian", medianOp("x", "axis", true, true));
  torchLower(t, "quantile", quantileOp("input", "dim", false));
  torchLower(t, "nanquantile", quantileOp("input", "dim", true));
  paddleLower(t, "quantile", quantileOp("x", "axis", false));
  paddleLower(t, "nanquantile", quantileOp("x", "axis", true));
  torchLower(t, "mode", modeOp("input", "dim"));
  paddleLower(t, "mode", modeOp("x", "axis"));
}

} // namespace sotc::ops::lowering
