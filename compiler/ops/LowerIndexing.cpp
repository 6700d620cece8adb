//===- LowerIndexing.cpp - Lowerings: movement, gathers and scatters ----------------------===//
//
// Flips, rotations, stacking, tiling, diagonals and slices as layout primitives; gathers by
// index tensors (torch.gather, take) as one gather from the flattened input at computed flat
// positions; scatters (scatter, index_add, index_copy, ...) as a comparison of every output
// position with every index: O(output x index) work, no write conflicts, the last write of
// duplicate indices winning where torch leaves it unspecified.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace sotc::ops::lowering {

namespace {

std::vector<int64_t> identityPerm(int64_t rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  return perm;
}

int64_t staticDim(Lowering &L, int x, int64_t axis) {
  int64_t n = L.b.meta(x).shape[axis];
  if (isDynamicDim(n))
    badValue(L, "dimension " + std::to_string(axis) + " is dynamic, which this operation does "
                "not support yet");
  return n;
}

/// x with `axis` reversed: its slices gathered in reverse order.
int flipAxis(Lowering &L, int x, int64_t axis) {
  PrimBuilder &b = L.b;
  int64_t n = staticDim(L, x, axis);
  if (n <= 1)
    return x;
  int reversed = b.binary(Prim::Sub, b.fill(double(n - 1), {}, DType::Int64), b.iota(n, DType::Int64));
  return gatherAlong(b, x, axis, reversed);
}

int flip(Lowering &L, int x, std::vector<int64_t> axes) {
  for (int64_t a : normalizeAxes(L.b.opName(), axes, L.b.meta(x).rank()))
    x = flipAxis(L, x, a);
  return x;
}

/// Elements of x at flat (row-major) positions `flat` (an int64 tensor): its shape.
int gatherFlat(PrimBuilder &b, int x, int flat) {
  return b.gather(b.reshape(x, {b.meta(x).numElements()}), flat);
}

/// Flat positions in x of index tensor coordinates where axis `axis` takes `index` (of
/// index's shape) and every other axis its own coordinate.
int flatPositions(PrimBuilder &b, const std::vector<int64_t> &xShape, int index, int64_t axis) {
  const std::vector<int64_t> shape = b.meta(index).shape; // a copy: adding ops moves metas
  int64_t rank = int64_t(shape.size()), stride = 1;
  int flat = -1;
  for (int64_t a = rank - 1; a >= 0; --a) {
    int coord = a == axis ? b.cast(index, DType::Int64) : positions(b, shape[a], a, rank);
    int term = stride == 1 ? coord : b.binaryScalar(Prim::Mul, coord, double(stride));
    flat = flat < 0 ? term : b.binary(Prim::Add, flat, term);
    stride *= xShape[a];
  }
  return b.broadcastTo(flat, shape);
}

/// Negative indices count from the end of a dimension of size n.
int wrapped(PrimBuilder &b, int index, int64_t n) {
  int i = b.cast(index, DType::Int64);
  int zero = b.fill(0, {}, DType::Int64);
  return b.select(b.binary(Prim::Less, i, zero), b.binaryScalar(Prim::Add, i, double(n)), i);
}

/// gather along dim; `broadcast`: the index broadcast over the input's other dims
/// (take_along_dim, paddle's take_along_axis), else no larger than them (torch.gather).
LowerFn takeAlongOp(std::string xn, std::string in, std::string dim, bool broadcast) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in(xn), index = L.in(in);
    if (L.args.isNone(dim)) { // take_along_dim without dim: the flattened input
      L.out(gatherFlat(b, x, wrapped(b, b.reshape(index, {-1}), b.meta(x).numElements())));
      return;
    }
    int64_t rank = b.meta(x).rank();
    if (!broadcast && b.meta(index).numElements() == 0) { // torch.gather reads nothing
      L.out(b.fill(0, b.meta(index).shape, b.meta(x).dtype));
      return;
    }
    if (rank == 0 && b.meta(index).rank() == 1) // a 0-d input is read as one element
      x = b.reshape(x, {1}), rank = 1;
    if (b.meta(index).rank() != rank)
      badValue(L, "index must have the input's rank " + std::to_string(rank) + ", not " +
                      std::to_string(b.meta(index).rank()));
    if (rank == 0) {
      L.out(x);
      return;
    }
    int64_t axis = normalizeDim(b.opName(), L.args.intValue(dim), rank);
    std::vector<int64_t> shape = b.meta(x).shape, ishape = b.meta(index).shape;
    for (int64_t a = 0; a < rank; ++a) {
      if (a == axis)
        continue;
      if (broadcast && (ishape[a] == 1 || shape[a] == 1)) // both broadcast off the axis
        ishape[a] = shape[a] = std::max(ishape[a], shape[a]);
      if (ishape[a] > shape[a])
        badValue(L, "index dimension " + std::to_string(a) + " is " + std::to_string(ishape[a]) +
                        ", more than the input's " + std::to_string(shape[a]));
    }
    if (broadcast) {
      index = b.broadcastTo(index, ishape);
      x = b.broadcastTo(x, shape);
    }
    L.out(takeAlong(b, x, index, axis));
  };
}

/// A shape's element count as a dimension: a number, or a product of sizes.
int64_t elementsDim(const std::vector<int64_t> &shape) { return productDim(productOf(shape)); }

/// For each output position n (of size `size`) along the last axis of [..., size, 1] and each
/// index m: whether index m names n: a bool [size, M] mask from a 1-d (or flat) index.
int hits(PrimBuilder &b, int64_t size, int flatIndex) {
  int64_t m = elementsDim(b.meta(flatIndex).shape);
  int n = b.reshape(b.iota(size, DType::Int64), {size, 1});
  return b.binary(Prim::Equal, n, b.reshape(b.cast(flatIndex, DType::Int64), {1, m}));
}

/// The last index m that names each position (-1: none), [size, 1] int64.
int lastHit(PrimBuilder &b, int mask) {
  int64_t m = b.meta(mask).shape[1];
  int pos = b.reshape(b.iota(m, DType::Int64), {1, m});
  return b.reduce(Prim::ReduceMax, b.select(mask, pos, b.fill(-1, {}, DType::Int64)), {1}, true);
}

/// The flat positions in the contiguous input of as_strided's view: offset + sum(i_k * stride_k)
/// over the view's `size`, each inside the input.
int stridedPositions(Lowering &L) {
  PrimBuilder &b = L.b;
  std::vector<int64_t> size = L.args.intList("size"), stride = L.args.intList("stride");
  if (size.size() != stride.size())
    badValue(L, "size and stride must have the same length");
  int64_t offset = L.args.isNone("storage_offset") ? 0 : L.args.intValue("storage_offset");
  int64_t rank = int64_t(size.size()), last = offset;
  for (int64_t k = 0; k < rank; ++k)
    last += (size[k] - 1) * stride[k];
  if (offset < 0 || last >= b.meta(L.in("input")).numElements())
    badValue(L, "reaches element " + std::to_string(last) + " of " +
                    std::to_string(b.meta(L.in("input")).numElements()));
  int flat = b.fill(double(offset), size, DType::Int64);
  for (int64_t k = 0; k < rank; ++k)
    flat = b.binary(Prim::Add, flat,
                    b.binaryScalar(Prim::Mul, positions(b, size[k], k, rank), double(stride[k])));
  return flat;
}

/// put, index_put, scatter: x's elements at flat positions `flat` ([M]) set to (or increased by)
/// `values` ([M]); the last of duplicate positions wins.
int putFlat(PrimBuilder &b, int x, int flat, int values, bool accumulate) {
  std::vector<int64_t> shape = b.meta(x).shape;
  int64_t n = elementsDim(shape), m = elementsDim(b.meta(flat).shape);
  DType d = b.meta(x).dtype;
  int mask = hits(b, n, flat);
  int v = b.cast(b.reshape(values, {m}), d);
  int xf = b.reshape(x, {n, 1});
  int out;
  if (accumulate) {
    int sum = b.reduce(Prim::ReduceSum,
                       b.select(mask, b.broadcastTo(b.reshape(v, {1, m}), {n, m}), b.fill(0, {}, d)),
                       {1}, true);
    out = b.binary(Prim::Add, xf, sum, d);
  } else {
    int last = lastHit(b, mask), zero = b.fill(0, {}, DType::Int64);
    out = b.select(b.binary(Prim::GreaterEqual, last, zero), b.gather(v, b.binary(Prim::Max, last, zero)),
                   xf);
  }
  return b.reshape(out, shape);
}

/// scatter / scatter_add: x's elements at the flat positions the index names replaced by (or
/// increased by) the src elements at the index's own coordinates.
LowerFn scatterOp(std::string xn, std::string dim, bool add) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in(xn), index = L.in("index");
    if (L.args.signature().find("reduce") && !L.args.isNone("reduce"))
      badValue(L, "reduce= is not supported (use scatter_add or scatter_reduce's own forms)");
    std::vector<int64_t> shape = b.meta(x).shape;
    int64_t rank = b.meta(x).rank();
    if (b.meta(index).rank() != rank)
      badValue(L, "index must have the input's rank " + std::to_string(rank));
    if (!isIntegral(b.meta(index).dtype))
      badValue(L, "index must be an integer tensor, not " +
                      std::string(dtypeName(b.meta(index).dtype)));
    DType d = b.meta(x).dtype;
    int src;
    if (L.args.signature().find("src")) { // the part of src the index covers
      src = b.cast(L.in("src"), d);
      for (int64_t a = 0; a < rank; ++a)
        if (b.meta(src).rank() != rank || b.meta(src).shape[a] < b.meta(index).shape[a])
          badValue(L, "src " + formatShape(b.meta(src).shape) + " must cover the index " +
                          formatShape(b.meta(index).shape));
      std::vector<int64_t> axes, starts, ends, steps;
      for (int64_t a = 0; a < rank; ++a)
        if (b.meta(src).shape[a] != b.meta(index).shape[a]) {
          axes.push_back(a);
          starts.push_back(0);
          ends.push_back(b.meta(index).shape[a]);
          steps.push_back(1);
        }
      if (!axes.empty())
        src = b.slice(src, axes, starts, ends, steps);
    } else {
      src = b.fill(L.args.scalar("value"), b.meta(index).shape, d);
    }
    int64_t axis = rank ? normalizeDim(b.opName(), L.args.intValue(dim), rank) : 0;
    int flat = rank ? flatPositions(b, shape, wrapped(b, index, shape[axis]), axis)
                    : b.cast(index, DType::Int64);
    L.out(putFlat(b, x, b.reshape(flat, {-1}), src, add));
  };
}

/// x with `axis` last, as [R, n]: the layout the index_* updates work in.
struct AxisLast {
  std::vector<int64_t> perm, movedShape;
};

AxisLast axisLast(PrimBuilder &b, int x, int64_t axis) {
  AxisLast a;
  int64_t rank = b.meta(x).rank();
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis)
      a.perm.push_back(i);
  a.perm.push_back(axis);
  for (int64_t i : a.perm)
    a.movedShape.push_back(b.meta(x).shape[i]);
  return a;
}

/// index_add / index_copy / index_fill along `dim`, with a 1-d index of M positions.
enum class IndexUpdate { Add, Copy, Fill };

LowerFn indexUpdateOp(std::string xn, std::string dim, std::string sourceName, IndexUpdate kind) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in(xn), index = L.in("index");
    DType d = b.meta(x).dtype;
    int64_t rank = b.meta(x).rank();
    if (rank == 0)
      x = b.reshape(x, {1});
    int64_t axis = normalizeDim(b.opName(), L.args.intValue(dim), b.meta(x).rank());
    if (b.meta(index).rank() > 1)
      badValue(L, "index must be 1-d, not of shape " + formatShape(b.meta(index).shape));
    if (kind == IndexUpdate::Copy) { // a step that copies the slices (PrimBuilder::indexCopy)
      int source = b.cast(L.in(sourceName), d);
      if (b.meta(index).rank() == 0)
        index = b.reshape(index, {1});
      int out = b.indexCopy(x, axis, b.cast(index, DType::Int64),
                            rank == 0 ? b.reshape(source, {1}) : source);
      L.out(rank == 0 ? b.reshape(out, {}) : out);
      return;
    }
    int64_t n = staticDim(L, x, axis), m = b.meta(index).numElements();
    AxisLast layout = axisLast(b, x, axis);
    int xl = b.transpose(x, layout.perm);
    int64_t rows = b.meta(xl).numElements() / std::max<int64_t>(n, 1);
    int x2 = b.reshape(xl, {rows, n, 1});
    int mask = b.reshape(hits(b, n, wrapped(b, index, n)), {1, n, m});
    int out;
    if (kind == IndexUpdate::Fill) {
      int any = b.reduce(Prim::ReduceMax, mask, {2}, true);
      const Arg &v = L.args.get("value");
      int value = v.isTensor() ? b.cast(L.in("value"), d) : b.fill(v.scalar(), {}, d);
      out = b.select(any, value, x2);
    } else { // add
      int source = b.cast(L.in(sourceName), d);
      if (b.meta(source).rank() == 0)
        source = b.reshape(source, {1});
      int sl = b.reshape(b.transpose(source, layout.perm), {rows, 1, m});
      if (L.args.signature().find("alpha") && L.args.scalar("alpha") != 1)
        sl = b.binaryScalar(Prim::Mul, sl, L.args.scalar("alpha"));
      int sum =
          b.reduce(Prim::ReduceSum,
                   b.select(mask, b.broadcastTo(sl, {rows, n, m}), b.fill(0, {}, d)), {2}, true);
      out = b.binary(Prim::Add, x2, sum, d);
    }
    int back = b.transpose(b.reshape(out, layout.movedShape), inversePerm(layout.perm));
    L.out(rank == 0 ? b.reshape(back, {}) : back);
  };
}

/// The diagonal at `offset` of axes (d1, d2): the other axes, then the diagonal's length.
int diagonal(Lowering &L, int x, int64_t offset, int64_t d1, int64_t d2) {
  PrimBuilder &b = L.b;
  int64_t rank = b.meta(x).rank();
  d1 = normalizeDim(b.opName(), d1, rank);
  d2 = normalizeDim(b.opName(), d2, rank);
  if (d1 == d2)
    badValue(L, "the diagonal's two dimensions must differ, not both " + std::to_string(d1));
  int64_t n1 = staticDim(L, x, d1), n2 = staticDim(L, x, d2);
  int64_t row0 = offset < 0 ? -offset : 0, col0 = offset > 0 ? offset : 0;
  int64_t len = std::max<int64_t>(0, std::min(n1 - row0, n2 - col0));
  std::vector<int64_t> perm{d1, d2}, rest;
  for (int64_t a = 0; a < rank; ++a)
    if (a != d1 && a != d2) {
      perm.push_back(a);
      rest.push_back(b.meta(x).shape[a]);
    }
  int front = b.reshape(b.transpose(x, perm), [&] {
    std::vector<int64_t> s{n1 * n2};
    s.insert(s.end(), rest.begin(), rest.end());
    return s;
  }());
  int i = b.iota(len, DType::Int64);
  int flat = b.binaryScalar(Prim::Add, b.binaryScalar(Prim::Mul, i, double(n2 + 1)),
                            double(row0 * n2 + col0));
  int picked = len ? b.gather(front, flat) : b.fill(0, [&] {
    std::vector<int64_t> s{0};
    s.insert(s.end(), rest.begin(), rest.end());
    return s;
  }(), b.meta(x).dtype);
  // [len, rest...] -> [rest..., len]
  std::vector<int64_t> toBack = identityPerm(int64_t(rest.size()) + 1);
  std::rotate(toBack.begin(), toBack.begin() + 1, toBack.end());
  return b.transpose(picked, toBack);
}

/// [..., n] -> [..., n + |k|, n + |k|] with x on the diagonal at offset k (diag_embed).
int diagEmbed(Lowering &L, int x, int64_t k) {
  PrimBuilder &b = L.b;
  std::vector<int64_t> shape = b.meta(x).shape;
  int64_t n = shape.back(), size = n + std::abs(k), rank = int64_t(shape.size());
  // The value for (i, j) is x[i] (k >= 0) or x[j] (k < 0), x padded with zeros to size.
  std::vector<int64_t> padShape = shape;
  padShape.back() = size - n;
  int padded = size > n ? b.concat({x, b.fill(0, padShape, b.meta(x).dtype)}, rank - 1) : x;
  std::vector<int64_t> vShape = shape;
  vShape.back() = size;
  vShape.insert(vShape.end() - (k >= 0 ? 0 : 1), 1); // [..., size, 1] or [..., 1, size]
  int values = b.reshape(padded, vShape);
  int mask = b.binary(Prim::Equal,
                      b.binary(Prim::Sub, b.reshape(b.iota(size, DType::Int64), {1, size}),
                               b.reshape(b.iota(size, DType::Int64), {size, 1})),
                      b.fill(double(k), {}, DType::Int64));
  std::vector<int64_t> outShape(shape.begin(), shape.end() - 1);
  outShape.push_back(size);
  outShape.push_back(size);
  return b.select(b.broadcastTo(mask, outShape), b.broadcastTo(values, outShape),
                  b.fill(0, {}, b.meta(x).dtype));
}

/// At least `rank` dimensions: torch's atleast_1d/2d/3d placement.
int atLeast(PrimBuilder &b, int x, int64_t rank) {
  std::vector<int64_t> s = b.meta(x).shape;
  if (int64_t(s.size()) >= rank)
    return x;
  if (s.empty())
    return b.reshape(x, std::vector<int64_t>(rank, 1));
  if (s.size() == 1)
    s = rank == 2 ? std::vector<int64_t>{1, s[0]} : std::vector<int64_t>{1, s[0], 1};
  else
    s.push_back(1); // 2-d -> [a, b, 1]
  return b.reshape(x, s);
}

/// `r` times the dimension `dim`: a number, or r times a product of sizes.
int64_t repeatedDim(int64_t dim, int64_t r) {
  if (r == 0)
    return 0;
  SizeProduct p = productOf(dim);
  p.factor *= r;
  return productDim(p);
}

/// x repeated `times[i]` whole along each axis (tile; torch's Tensor.repeat).
int tile(Lowering &L, int x, std::vector<int64_t> times) {
  PrimBuilder &b = L.b;
  std::vector<int64_t> shape = b.meta(x).shape;
  if (times.size() < shape.size())
    times.insert(times.begin(), shape.size() - times.size(), 1);
  shape.insert(shape.begin(), times.size() - shape.size(), 1);
  std::vector<int64_t> split, expanded, merged;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (times[i] < 0)
      badValue(L, "repeats must not be negative, not " + formatInts(times));
    split.push_back(1);
    split.push_back(shape[i]);
    expanded.push_back(times[i]);
    expanded.push_back(shape[i]);
    merged.push_back(repeatedDim(shape[i], times[i]));
  }
  return b.reshape(b.broadcastTo(b.reshape(x, split), expanded), merged);
}

/// Pieces of x along `axis` between the given split points.
void splitAt(Lowering &L, int x, const std::vector<int64_t> &points, int64_t axis) {
  int64_t n = staticDim(L, x, axis), start = 0;
  for (size_t i = 0; i <= points.size(); ++i) {
    int64_t end = i < points.size() ? std::clamp<int64_t>(points[i], 0, n) : n;
    start = std::min(start, n);
    L.out(L.b.slice(x, {axis}, {start}, {std::max(start, end)}, {1}));
    start = std::max(start, end);
  }
}

/// tensor_split's points: `sections` nearly equal pieces (the first n % sections one longer),
/// or the given indices.
std::vector<int64_t> sectionPoints(Lowering &L, const std::string &name, int64_t n) {
  const Arg &a = L.args.get(name);
  if (a.kind != Arg::Kind::Int)
    return L.args.intList(name);
  int64_t sections = a.intValue;
  if (sections <= 0)
    badValue(L, "the number of sections must be positive, not " + std::to_string(sections));
  std::vector<int64_t> points;
  int64_t at = 0;
  for (int64_t i = 0; i + 1 < sections; ++i)
    points.push_back(at += n / sections + (i < n % sections ? 1 : 0));
  return points;
}


/// x with the positions `mask` (broadcast to x) marks replaced by `values` (x's shape).
int replaced(PrimBuilder &b, int x, int mask, int values) {
  return b.select(b.broadcastTo(mask, b.meta(x).shape), b.cast(values, b.meta(x).dtype), x);
}

/// A 1-d int64 tensor of the given values: fills concatenated (small, static lists only).
int constantIndex(Lowering &L, const std::vector<int64_t> &values) {
  if (values.empty() || values.size() > 4096)
    badValue(L, "makes " + std::to_string(values.size()) +
                    " index tuples; at most 4096 are supported");
  std::vector<int> parts;
  for (int64_t v : values)
    parts.push_back(L.b.fill(double(v), {1}, DType::Int64));
  return parts.size() == 1 ? parts[0] : L.b.concat(parts, 0);
}


} // namespace

void registerIndexing(OpTable &t) {
  auto flipLower = [](std::string xn, std::string dims) {
    return [=](Lowering &L) { L.out(flip(L, L.in(xn), L.args.intList(dims))); };
  };
  paddleLower(t, "flip", flipLower("x", "axis"));
  torchLower(t, "flip", flipLower("input", "dims"));
  for (bool lr : {true, false})
    torchLower(t, lr ? "fliplr" : "flipud", [lr](Lowering &L) {
      int x = L.in("input");
      if (L.b.meta(x).rank() < (lr ? 2 : 1))
        badValue(L, std::string("needs a tensor of at least ") + (lr ? "2" : "1") + " dimensions");
      L.out(flipAxis(L, x, lr ? 1 : 0));
    });
  auto rot90 = [](std::string xn, std::string axes) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      std::vector<int64_t> given = L.args.intList(axes); // [] is not "every axis" here
      if (given.size() != 2 || normalizeAxes(L.b.opName(), given, L.b.meta(x).rank()).size() != 2)
        badValue(L, "needs two distinct dimensions");
      int64_t d0 = L.args.intList(axes)[0], d1 = L.args.intList(axes)[1];
      d0 = normalizeDim(L.b.opName(), d0, L.b.meta(x).rank());
      d1 = normalizeDim(L.b.opName(), d1, L.b.meta(x).rank());
      int64_t k = ((L.args.intValue("k") % 4) + 4) % 4;
      if (k == 1)
        x = swapAxes(L.b, flipAxis(L, x, d1), d0, d1);
      else if (k == 2)
        x = flipAxis(L, flipAxis(L, x, d0), d1);
      else if (k == 3)
        x = flipAxis(L, swapAxes(L.b, x, d0, d1), d1);
      L.out(x);
    };
  };
  paddleLower(t, "rot90", rot90("x", "axes"));
  torchLower(t, "rot90", rot90("input", "dims"));

  torchLower(t, "narrow", [](Lowering &L) {
    int x = L.in("input");
    int64_t axis = normalizeDim(L.b.opName(), L.args.intValue("dim"), L.b.meta(x).rank());
    int64_t n = staticDim(L, x, axis), start = L.args.intValue("start"),
            length = L.args.intValue("length");
    if (start < 0)
      start += n;
    if (start < 0 || length < 0 || start + length > n)
      badValue(L, "start " + std::to_string(start) + " and length " + std::to_string(length) +
                      " do not fit dimension " + std::to_string(axis) + " of size " +
                      std::to_string(n));
    L.out(L.b.slice(x, {axis}, {start}, {start + length}, {1}));
  });
  torchLower(t, "select", [](Lowering &L) {
    int x = L.in("input");
    int64_t axis = normalizeDim(L.b.opName(), L.args.intValue("dim"), L.b.meta(x).rank());
    int64_t n = staticDim(L, x, axis), i = L.args.intValue("index");
    if (i < -n || i >= n)
      badValue(L, "index " + std::to_string(i) + " is out of range for dimension " +
                      std::to_string(axis) + " of size " + std::to_string(n));
    i = (i + n) % n;
    std::vector<int64_t> shape = L.b.meta(x).shape;
    shape.erase(shape.begin() + axis);
    L.out(L.b.reshape(L.b.slice(x, {axis}, {i}, {i + 1}, {1}), shape));
  });
  auto unbind = [](std::string xn, std::string dim) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      int64_t axis = normalizeDim(L.b.opName(), L.args.intValue(dim), L.b.meta(x).rank());
      std::vector<int64_t> shape = L.b.meta(x).shape;
      shape.erase(shape.begin() + axis);
      for (int64_t i = 0, n = staticDim(L, x, axis); i < n; ++i)
        L.out(L.b.reshape(L.b.slice(x, {axis}, {i}, {i + 1}, {1}), shape));
    };
  };
  paddleLower(t, "unbind", unbind("input", "axis"));
  torchLower(t, "unbind", unbind("input", "dim"));
  torchLower(t, "tensor_split", [](Lowering &L) {
    int x = L.in("input");
    int64_t axis = normalizeDim(L.b.opName(), L.args.intValue("dim"), L.b.meta(x).rank());
    splitAt(L, x, sectionPoints(L, "indices_or_sections", staticDim(L, x, axis)), axis);
  });
  for (const char *name : {"hsplit", "vsplit", "dsplit"})
    torchLower(t, name, [name = std::string(name)](Lowering &L) {
      int x = L.in("input");
      int64_t rank = L.b.meta(x).rank();
      int64_t axis = name == "vsplit" ? 0 : name == "dsplit" ? 2 : rank == 1 ? 0 : 1;
      if (rank < (name == "hsplit" ? 1 : name == "vsplit" ? 2 : 3))
        badValue(L, "needs a tensor of more dimensions, not " + std::to_string(rank));
      int64_t n = staticDim(L, x, axis);
      const Arg &a = L.args.get("indices_or_sections");
      if (a.kind == Arg::Kind::Int && (a.intValue <= 0 || n % a.intValue))
        badValue(L, "dimension " + std::to_string(axis) + " of size " + std::to_string(n) +
                        " does not split into " + std::to_string(a.intValue) + " equal parts");
      splitAt(L, x, sectionPoints(L, "indices_or_sections", n), axis);
    });
  torchLower(t, "split_with_sizes", [](Lowering &L) {
    int x = L.in("input");
    splitSizes(L, x, L.args.intList("split_sizes"),
               normalizeDim(L.b.opName(), L.args.intValue("dim"), L.b.meta(x).rank()));
  });

  auto stack = [](std::string xs, std::string dim) {
    return [=](Lowering &L) {
      std::vector<int> ins = L.inList(xs);
      if (ins.empty())
        badValue(L, "needs at least one tensor");
      int64_t rank = L.b.meta(ins[0]).rank();
      int64_t axis = normalizeDim(L.b.opName(), L.args.intValue(dim), rank + 1);
      std::vector<int> parts;
      for (int x : ins) {
        if (L.b.meta(x).shape != L.b.meta(ins[0]).shape)
          throw CodedError(DiagCode::OpShapeMismatch,
                           L.b.opName() + "(): stacked tensors must have one shape, not " +
                               formatShape(L.b.meta(ins[0]).shape) + " and " +
                               formatShape(L.b.meta(x).shape));
        std::vector<int64_t> s = L.b.meta(x).shape;
        s.insert(s.begin() + axis, 1);
        parts.push_back(L.b.reshape(x, s));
      }
      L.out(L.b.concat(parts, axis));
    };
  };
  paddleLower(t, "stack", stack("x", "axis"), false);
  torchLower(t, "stack", stack("tensors", "dim"), false);
  struct Stacked {
    const char *name;
    int64_t rank, axis; // every tensor made at least `rank`-d, concatenated along `axis`
  };
  for (Stacked s : {Stacked{"hstack", 1, 1}, Stacked{"vstack", 2, 0}, Stacked{"dstack", 3, 2},
                    Stacked{"column_stack", 2, 1}, Stacked{"row_stack", 2, 0}})
    torchLower(t, s.name, [s](Lowering &L) {
      std::vector<int> parts;
      for (int x : L.inList("tensors")) {
        if (std::string(s.name) == "column_stack" && L.b.meta(x).rank() <= 1)
          x = L.b.reshape(x, {L.b.meta(x).numElements(), 1}); // 1-d: a column
        parts.push_back(atLeast(L.b, x, s.rank));
      }
      if (parts.empty())
        badValue(L, "needs at least one tensor");
      bool rows = std::string(s.name) == "hstack" && L.b.meta(parts[0]).rank() == 1;
      L.out(L.b.concat(parts, rows ? 0 : s.axis));
    }, false);
  for (int64_t r : {1, 2, 3}) {
    std::string name = "atleast_" + std::to_string(r) + "d";
    torchLower(t, name, [r](Lowering &L) {
      if (L.args.signature().find("input"))
        L.out(atLeast(L.b, L.in("input"), r));
      else
        for (int x : L.inList("tensors"))
          L.out(atLeast(L.b, x, r));
    }, false);
  }

  paddleLower(t, "tile", [](Lowering &L) { L.out(tile(L, L.in("x"), L.args.intList("repeat_times"))); });
  torchLower(t, "tile", [](Lowering &L) { L.out(tile(L, L.in("input"), L.args.intList("dims"))); });
  t.bind("torch.Tensor.repeat", [](Lowering &L) {
    std::vector<int64_t> sizes = L.args.intList("repeats");
    if (sizes.size() < size_t(L.b.meta(L.in("input")).rank()))
      badValue(L, "needs at least as many repeats as the tensor has dimensions");
    L.out(tile(L, L.in("input"), sizes));
  });
  auto repeatInterleave = [](std::string xn, std::string dim) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      int x = L.in(xn);
      if (L.args.get("repeats").isTensor())
        badValue(L, "repeats given as a tensor make the output's size depend on its values "
                    "(data-dependent shapes are not supported yet); pass an int");
      int64_t r = L.args.intValue("repeats");
      if (r < 0)
        badValue(L, "repeats must not be negative");
      if (L.args.isNone(dim))
        x = b.reshape(x, {elementsDim(b.meta(x).shape)});
      int64_t axis = L.args.isNone(dim) ? 0 : normalizeDim(b.opName(), L.args.intValue(dim), b.meta(x).rank());
      std::vector<int64_t> shape = b.meta(x).shape, split = shape, merged = shape;
      split.insert(split.begin() + axis + 1, 1);
      std::vector<int64_t> expanded = split;
      expanded[axis + 1] = r;
      merged[axis] = repeatedDim(shape[axis], r);
      L.out(b.reshape(b.broadcastTo(b.reshape(x, split), expanded), merged));
    };
  };
  torchLower(t, "repeat_interleave", repeatInterleave("input", "dim"));
  paddleLower(t, "repeat_interleave", repeatInterleave("x", "axis"));

  auto movedim = [](std::string xn, std::string src, std::string dst) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      int64_t rank = L.b.meta(x).rank();
      std::vector<int64_t> fromOrdered = L.args.intList(src), to = L.args.intList(dst);
      if (fromOrdered.size() != to.size())
        badValue(L, "source and destination must have the same length");
      if (!fromOrdered.empty()) // repeated source dimensions are refused ([] moves nothing)
        normalizeAxes(L.b.opName(), fromOrdered, rank);
      for (int64_t &a : fromOrdered)
        a = normalizeDim(L.b.opName(), a, rank);
      for (int64_t &a : to)
        a = normalizeDim(L.b.opName(), a, rank);
      std::vector<int64_t> perm(rank, -1);
      std::vector<bool> used(rank, false);
      for (size_t i = 0; i < to.size(); ++i) {
        if (perm[to[i]] >= 0)
          badValue(L, "repeated destination dimension " + std::to_string(to[i]));
        perm[to[i]] = fromOrdered[i];
        used[fromOrdered[i]] = true;
      }
      int64_t next = 0;
      for (int64_t &p : perm) {
        if (p >= 0)
          continue;
        while (used[next])
          ++next;
        p = next++;
      }
      L.out(L.b.transpose(x, perm));
    };
  };
  torchLower(t, "movedim", movedim("input", "source", "destination"));
  paddleLower(t, "moveaxis", movedim("x", "source", "destination"), false);
  torchLower(t, "unflatten", [](Lowering &L) {
    int x = L.in("input");
    std::vector<int64_t> shape = L.b.meta(x).shape, sizes = L.args.intList("sizes");
    int64_t axis = normalizeDim(L.b.opName(), L.args.intValue("dim"), int64_t(shape.size()));
    int64_t n = staticDim(L, x, axis), known = 1;
    int inferred = -1;
    for (size_t i = 0; i < sizes.size(); ++i)
      if (sizes[i] == -1)
        inferred = int(i);
      else
        known *= sizes[i];
    if (inferred >= 0 && known)
      sizes[inferred] = n / known;
    int64_t product = 1;
    for (int64_t s : sizes)
      product *= s;
    if (product != n)
      throw CodedError(DiagCode::OpShapeMismatch,
                       L.b.opName() + "(): sizes " + formatInts(sizes) + " do not multiply to " +
                           std::to_string(n) + ", the size of dimension " + std::to_string(axis));
    shape.erase(shape.begin() + axis);
    shape.insert(shape.begin() + axis, sizes.begin(), sizes.end());
    L.out(L.b.reshape(x, shape));
  });
  torchLower(t, "ravel", [](Lowering &L) { L.out(L.b.reshape(L.in("input"), {-1})); });
  torchLower(t, "t", [](Lowering &L) {
    int x = L.in("input");
    int64_t rank = L.b.meta(x).rank();
    if (rank > 2)
      badValue(L, "expects a tensor of at most 2 dimensions, not " + std::to_string(rank));
    L.out(rank == 2 ? L.b.transpose(x, {1, 0}) : x);
  });

  auto diagonalLower = [](std::string xn, std::string d1, std::string d2) {
    return [=](Lowering &L) {
      L.out(diagonal(L, L.in(xn), L.args.intValue("offset"), L.args.intValue(d1),
                     L.args.intValue(d2)));
    };
  };
  paddleLower(t, "diagonal", diagonalLower("x", "axis1", "axis2"));
  torchLower(t, "diagonal", diagonalLower("input", "dim1", "dim2"));
  auto diag = [](std::string xn, std::string offset, bool flatten) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      int64_t k = L.args.intValue(offset);
      if (flatten)
        x = L.b.reshape(x, {L.b.meta(x).numElements()});
      int64_t rank = L.b.meta(x).rank();
      if (rank == 1)
        L.out(diagEmbed(L, x, k));
      else if (rank == 2)
        L.out(diagonal(L, x, k, 0, 1));
      else
        badValue(L, "expects a 1-d or 2-d tensor, not " + std::to_string(rank) + "-d");
    };
  };
  paddleLower(t, "diag", diag("x", "offset", false), false);
  torchLower(t, "diag", diag("input", "diagonal", false));
  paddleLower(t, "diagflat", diag("x", "offset", true), false);
  torchLower(t, "diagflat", diag("input", "offset", true));
  auto diagEmbedLower = [](std::string xn, std::string d1, std::string d2) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      int64_t rank = L.b.meta(x).rank() + 1;
      int64_t a = normalizeDim(L.b.opName(), L.args.intValue(d1), rank),
              c = normalizeDim(L.b.opName(), L.args.intValue(d2), rank);
      if (a == c)
        badValue(L, "the diagonal's two dimensions must differ");
      int y = diagEmbed(L, x, L.args.intValue("offset")); // [..., rows, cols] last
      // Rows and columns from the end to dimensions a and c, the others in order.
      std::vector<int64_t> perm(rank, -1);
      perm[a] = rank - 2;
      perm[c] = rank - 1;
      int64_t next = 0;
      for (int64_t &p : perm)
        if (p < 0)
          p = next++;
      L.out(L.b.transpose(y, perm));
    };
  };
  paddleLower(t, "diag_embed", diagEmbedLower("input", "dim1", "dim2"), false);
  torchLower(t, "diag_embed", diagEmbedLower("input", "dim1", "dim2"));
  auto traceLower = [](std::string xn) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      if (L.b.meta(x).rank() != 2)
        badValue(L, "expects a 2-d tensor");
      int d = diagonal(L, x, 0, 0, 1);
      DType dtype = L.b.meta(x).dtype;
      if (isIntegral(dtype) || dtype == DType::Bool)
        d = L.b.cast(d, DType::Int64);
      L.out(L.b.reduce(Prim::ReduceSum, d, {0}, false));
    };
  };
  paddleLower(t, "trace", traceLower("x"));
  torchLower(t, "trace", traceLower("input"));

  torchLower(t, "gather", takeAlongOp("input", "index", "dim", false));
  paddleLower(t, "take_along_axis", takeAlongOp("arr", "indices", "axis", true));
  torchLower(t, "take_along_dim", takeAlongOp("input", "indices", "dim", true));
  torchLower(t, "take", [](Lowering &L) {
    int x = L.in("input");
    L.out(gatherFlat(L.b, x, wrapped(L.b, L.in("index"), L.b.meta(x).numElements())));
  });
  paddleLower(t, "take", [](Lowering &L) {
    int x = L.in("x");
    L.out(gatherFlat(L.b, x, wrapped(L.b, L.in("index"), L.b.meta(x).numElements())));
  });
  torchLower(t, "scatter", scatterOp("input", "dim", false));
  torchLower(t, "scatter_add", scatterOp("input", "dim", true));
  paddleLower(t, "put_along_axis", [](Lowering &L) {
    const std::string &reduce = L.args.get("reduce").stringValue;
    bool add = reduce == "add";
    if (!add && reduce != "assign")
      badValue(L, "reduce='" + reduce + "' is not supported (assign or add)");
    PrimBuilder &b = L.b;
    int x = L.in("arr"), index = L.in("indices");
    if (b.meta(index).rank() != b.meta(x).rank() || b.meta(x).rank() == 0 ||
        !isIntegral(b.meta(index).dtype))
      badValue(L, "indices must be an integer tensor of arr's rank " +
                      std::to_string(b.meta(x).rank()) + ", not " +
                      std::string(dtypeName(b.meta(index).dtype)) +
                      formatShape(b.meta(index).shape));
    // paddle broadcasts indices and values to each other; the index's shape rules.
    DType d = b.meta(x).dtype;
    const Arg &v = L.args.get("values");
    int src = v.isTensor() ? b.broadcastTo(b.cast(L.in("values"), d), b.meta(index).shape)
                           : b.fill(v.scalar(), b.meta(index).shape, d);
    std::vector<int64_t> shape = b.meta(x).shape;
    int64_t axis = normalizeDim(b.opName(), L.args.intValue("axis"), b.meta(x).rank());
    int flat = flatPositions(b, shape, wrapped(b, index, shape[axis]), axis);
    L.out(putFlat(b, x, b.reshape(flat, {-1}), src, add));
  });
  torchLower(t, "as_strided", [](Lowering &L) { // of the contiguous input's elements
    L.out(gatherFlat(L.b, L.in("input"), stridedPositions(L)));
  });
  torchLower(
      t, "as_strided_scatter",
      [](Lowering &L) { // the strided view's elements replaced
        PrimBuilder &b = L.b;
        int x = L.in("input"), flat = stridedPositions(L);
        if (b.meta(L.in("src")).shape != b.meta(flat).shape)
          badValue(L, "src has shape " + formatShape(b.meta(L.in("src")).shape) + ", the view " +
                          formatShape(b.meta(flat).shape));
        int src = b.reshape(b.cast(L.in("src"), b.meta(x).dtype), {-1});
        L.out(putFlat(b, x, b.reshape(flat, {-1}), src, false));
      },
      false);
  torchLower(t, "_grouped_mm", [](Lowering &L) { // mixture-of-experts GEMMs by segments
    PrimBuilder &b = L.b;
    int x = L.in("input"), w = L.in("weight"), offs = L.in("offs");
    const TensorMeta &xm = b.meta(x), &wm = b.meta(w);
    if (xm.rank() != 2 || wm.rank() != 3 || b.meta(offs).rank() != 1 ||
        b.meta(offs).shape[0] != wm.shape[0] || xm.shape[1] != wm.shape[1])
      badValue(L, "takes input [S, K], weight [E, K, N] and offs [E]");
    int64_t s = xm.shape[0], e = wm.shape[0];
    // Row r's expert: how many segment ends are at or before it.
    int ends = b.reshape(b.cast(offs, DType::Int64), {1, e});
    int rows = b.reshape(b.iota(s, DType::Int64), {s, 1});
    int expert = b.reduce(Prim::ReduceSum,
                          b.cast(b.binary(Prim::LessEqual, ends, rows), DType::Int64), {1}, false);
    int mine = b.cast(b.binary(Prim::Equal, b.reshape(b.iota(e, DType::Int64), {1, e}),
                               b.reshape(expert, {s, 1})),
                      xm.dtype);
    int all = b.matmul(b.broadcastTo(b.reshape(x, {1, s, xm.shape[1]}), {e, s, xm.shape[1]}), w,
                       false, false); // [E, S, N]
    int picked = b.binary(Prim::Mul, b.transpose(all, {1, 0, 2}), b.reshape(mine, {s, e, 1}));
    L.out(b.reduce(Prim::ReduceSum, picked, {1}, false));
  }, false);
  torchLower(t, "broadcast_tensors", [](Lowering &L) {
    std::vector<int> xs = L.inList("tensors");
    std::vector<int64_t> shape;
    for (int x : xs)
      shape = broadcastShapes(L.b.opName(), shape, L.b.meta(x).shape);
    for (int x : xs)
      L.out(L.b.broadcastTo(x, shape));
  }, false);
  // meshgrid: output i is tensor i along axis i of the grid [n_0, n_1, ...] ('ij'), or with
  // the first two axes swapped ('xy', numpy's convention).
  auto meshgrid = [](const char *list) {
    return [list](Lowering &L) {
      std::vector<int> xs = L.inList(list);
      bool xy = L.args.signature().find("indexing") && !L.args.isNone("indexing") &&
                L.args.get("indexing").stringValue == "xy";
      if (L.args.signature().find("indexing") && !L.args.isNone("indexing") && !xy &&
          L.args.get("indexing").stringValue != "ij")
        badValue(L, "indexing must be 'ij' or 'xy'");
      std::vector<int64_t> grid;
      for (int x : xs) {
        if (L.b.meta(x).rank() > 1)
          badValue(L, "takes 0-d or 1-d tensors");
        grid.push_back(L.b.meta(x).numElements());
      }
      auto axisOf = [&](size_t i) { return xy && xs.size() > 1 && i < 2 ? 1 - i : i; };
      std::vector<int64_t> shape(grid.size());
      for (size_t i = 0; i < grid.size(); ++i)
        shape[axisOf(i)] = grid[i];
      for (size_t i = 0; i < xs.size(); ++i) {
        std::vector<int64_t> along(grid.size(), 1);
        along[axisOf(i)] = grid[i];
        L.out(L.b.broadcastTo(L.b.reshape(xs[i], along), shape));
      }
    };
  };
  torchLower(t, "meshgrid", meshgrid("tensors"), false);
  paddleLower(t, "meshgrid", meshgrid("args"), false);
  torchLower(t, "block_diag", [](Lowering &L) { // each tensor as a block of a zero matrix
    PrimBuilder &b = L.b;
    std::vector<int> xs = L.inList("tensors");
    DType d = DType::Bool;
    int64_t cols = 0;
    std::vector<int> blocks;
    for (size_t i = 0; i < xs.size(); ++i) {
      d = i ? promoteTypes(d, b.meta(xs[i]).dtype) : b.meta(xs[i]).dtype;
      int x = xs[i];
      if (b.meta(x).rank() > 2)
        badValue(L, "takes tensors of at most 2 dimensions");
      std::vector<int64_t> s = b.meta(x).shape;
      blocks.push_back(b.reshape(x, s.size() == 2 ? s : s.size() == 1 ? std::vector<int64_t>{1, s[0]}
                                                                      : std::vector<int64_t>{1, 1}));
      cols += b.meta(blocks.back()).shape[1];
    }
    std::vector<int> rows;
    int64_t at = 0;
    for (int x : blocks) {
      int64_t r = b.meta(x).shape[0], c = b.meta(x).shape[1];
      std::vector<int> parts;
      if (at)
        parts.push_back(b.fill(0, {r, at}, d));
      parts.push_back(b.cast(x, d));
      if (cols - at - c)
        parts.push_back(b.fill(0, {r, cols - at - c}, d));
      rows.push_back(parts.size() == 1 ? parts[0] : b.concat(parts, 1));
      at += c;
    }
    L.out(rows.size() == 1 ? rows[0] : b.concat(rows, 0));
  }, false);
  torchLower(t, "cartesian_prod", [](Lowering &L) { // every combination, the last varying fastest
    PrimBuilder &b = L.b;
    std::vector<int> xs = L.inList("tensors");
    if (xs.size() == 1) {
      L.out(xs[0]);
      return;
    }
    std::vector<int64_t> grid;
    for (int x : xs)
      grid.push_back(b.meta(x).numElements());
    int64_t n = 1, k = int64_t(xs.size());
    for (int64_t g : grid)
      n *= g;
    std::vector<int> columns;
    for (int64_t i = 0; i < k; ++i) {
      std::vector<int64_t> s(k, 1);
      s[i] = grid[i];
      columns.push_back(b.reshape(b.broadcastTo(b.reshape(xs[i], s), grid), {n, 1}));
    }
    L.out(b.concat(columns, 1));
  }, false);
  torchLower(t, "combinations", [](Lowering &L) { // itertools.combinations' order
    PrimBuilder &b = L.b;
    int x = L.in("input");
    if (b.meta(x).rank() != 1)
      badValue(L, "expects a 1-d tensor");
    int64_t n = b.meta(x).shape[0], r = L.args.intValue("r");
    bool repeat = L.args.boolValue("with_replacement");
    if (r < 0)
      badValue(L, "r must not be negative");
    std::vector<std::vector<int64_t>> columns(r);
    std::vector<int64_t> c(r, 0);
    std::function<void(int64_t, int64_t)> walk = [&](int64_t k, int64_t from) {
      if (k == r) {
        for (int64_t i = 0; i < r; ++i)
          columns[i].push_back(c[i]);
        return;
      }
      for (int64_t v = from; v < n; ++v) {
        c[k] = v;
        walk(k + 1, repeat ? v : v + 1);
      }
    };
    walk(0, 0);
    if (r == 0 || columns[0].empty()) { // none: [0], or [0, r] rows of r elements
      L.out(b.fill(0, r >= 2 ? std::vector<int64_t>{0, r} : std::vector<int64_t>{0},
                   b.meta(x).dtype));
      return;
    }
    std::vector<int> parts;
    for (const auto &col : columns)
      parts.push_back(b.reshape(b.gather(x, constantIndex(L, col)), {int64_t(col.size()), 1}));
    L.out(parts.size() == 1 ? parts[0] : b.concat(parts, 1));
  });
  torchLower(t, "select_scatter", [](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in("input");
    int64_t rank = b.meta(x).rank(), axis = normalizeDim(b.opName(), L.args.intValue("dim"), rank);
    int64_t n = staticDim(L, x, axis), i = L.args.intValue("index");
    if (i < -n || i >= n)
      badValue(L, "index " + std::to_string(i) + " is out of range for size " + std::to_string(n));
    std::vector<int64_t> s = b.meta(x).shape;
    s[axis] = 1;
    int mask = b.binary(Prim::Equal, positions(b, n, axis, rank), b.fill(double((i + n) % n), {}, DType::Int64));
    L.out(replaced(b, x, mask, b.broadcastTo(b.reshape(L.in("src"), s), b.meta(x).shape)));
  });
  torchLower(t, "slice_scatter", [](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in("input"), src = L.in("src");
    int64_t rank = b.meta(x).rank();
    if (rank == 0)
      badValue(L, "expects an input with at least one dimension");
    int64_t axis = normalizeDim(b.opName(), L.args.intValue("dim"), rank);
    int64_t n = staticDim(L, x, axis), step = L.args.intValue("step");
    auto bound = [&](const char *name, int64_t fallback) {
      int64_t v = L.args.isNone(name) ? fallback : L.args.intValue(name);
      return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n);
    };
    int64_t start = bound("start", 0), end = bound("end", n);
    if (step <= 0)
      badValue(L, "step must be positive");
    std::vector<int64_t> want = b.meta(x).shape;
    want[axis] = end > start ? (end - start + step - 1) / step : 0;
    if (b.meta(src).shape != want)
      badValue(L, "src must have the slice's shape " + formatShape(want) + ", not " +
                      formatShape(b.meta(src).shape));
    int64_t m = want[axis];
    // Position p takes src[(p - start) / step] where p is in the slice.
    int p = b.iota(n, DType::Int64);
    int from = b.binaryScalar(Prim::Sub, p, double(start));
    int in = b.binary(Prim::LogicalAnd,
                      b.binary(Prim::LogicalAnd, b.binary(Prim::GreaterEqual, p, b.fill(double(start), {}, DType::Int64)),
                               b.binary(Prim::Less, p, b.fill(double(end), {}, DType::Int64)), DType::Bool),
                      b.binary(Prim::Equal, b.binary(Prim::Mod, from, b.fill(double(step), {}, DType::Int64)),
                               b.fill(0, {}, DType::Int64)), DType::Bool);
    int k = b.binary(Prim::Min, b.binary(Prim::Max, b.binary(Prim::FloorDiv, from, b.fill(double(step), {}, DType::Int64)),
                                         b.fill(0, {}, DType::Int64)),
                     b.fill(double(std::max<int64_t>(m - 1, 0)), {}, DType::Int64));
    std::vector<int64_t> s(rank, 1);
    s[axis] = n;
    L.out(replaced(b, x, b.reshape(in, s), gatherAlong(b, src, axis, k)));
  });
  torchLower(t, "diagonal_scatter", [](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in("input"), src = L.in("src");
    int64_t rank = b.meta(x).rank(), offset = L.args.intValue("offset");
    int64_t d1 = normalizeDim(b.opName(), L.args.intValue("dim1"), rank),
            d2 = normalizeDim(b.opName(), L.args.intValue("dim2"), rank);
    int64_t n1 = staticDim(L, x, d1), n2 = staticDim(L, x, d2);
    int64_t row0 = offset < 0 ? -offset : 0;
    if (d1 == d2)
      badValue(L, "dim1 and dim2 must differ");
    // src: x's shape without dim1 and dim2, then the diagonal's length.
    std::vector<int64_t> want;
    for (int64_t a = 0; a < rank; ++a)
      if (a != d1 && a != d2)
        want.push_back(b.meta(x).shape[a]);
    want.push_back(
        std::max<int64_t>(0, offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2)));
    if (b.meta(src).shape != want)
      badValue(L, "src must have the diagonal's shape " + formatShape(want) + ", not " +
                      formatShape(b.meta(src).shape));
    int64_t len = want.back();
    // (i, j) on the diagonal takes src[..., i - row0]; src's diagonal axis goes to d1.
    int i = positions(b, n1, d1, rank), j = positions(b, n2, d2, rank);
    int mask = b.binary(Prim::Equal, b.binary(Prim::Sub, j, i), b.fill(double(offset), {}, DType::Int64));
    int k = b.binary(Prim::Min, b.binary(Prim::Max, b.binaryScalar(Prim::Sub, b.iota(n1, DType::Int64), double(row0)),
                                         b.fill(0, {}, DType::Int64)),
                     b.fill(double(std::max<int64_t>(len - 1, 0)), {}, DType::Int64));
    int picked = gatherAlong(b, src, b.meta(src).rank() - 1, k); // [rest..., n1]
    // [rest..., n1] -> x's rank with n1 at d1 and 1 at d2
    std::vector<int64_t> perm, shape;
    std::vector<int64_t> rest = b.meta(picked).shape;
    rest.pop_back();
    int64_t r = 0;
    for (int64_t a = 0; a < rank; ++a) {
      if (a == d1)
        shape.push_back(n1);
      else if (a == d2)
        shape.push_back(1);
      else
        shape.push_back(rest[r++]);
    }
    // Moving the diagonal axis to d1 first (the others keep their order), then a 1 at d2.
    std::vector<int64_t> order;
    int64_t restRank = int64_t(rest.size()), diag = restRank, ri = 0;
    for (int64_t a = 0; a < rank; ++a) {
      if (a == d2)
        continue;
      order.push_back(a == d1 ? diag : ri++);
    }
    int placed = b.reshape(b.transpose(picked, order), shape);
    L.out(replaced(b, x, mask, b.broadcastTo(placed, b.meta(x).shape)));
  });
  torchLower(t, "masked_scatter", [](Lowering &L) { // source's elements, in order, where mask is
    PrimBuilder &b = L.b;
    int x = L.in("input");
    std::vector<int64_t> shape = b.meta(x).shape;
    int64_t n = b.meta(x).numElements();
    int mask = b.reshape(b.broadcastTo(L.in("mask"), shape), {n});
    int before = scan(b, Prim::ReduceSum, b.cast(mask, DType::Int64), 0, 0); // inclusive count
    int64_t m = b.meta(L.in("source")).numElements();
    int k = b.binary(Prim::Min, b.binary(Prim::Max, b.binaryScalar(Prim::Sub, before, 1), b.fill(0, {}, DType::Int64)),
                     b.fill(double(std::max<int64_t>(m - 1, 0)), {}, DType::Int64));
    int values = b.gather(b.reshape(L.in("source"), {m}), k);
    L.out(b.reshape(replaced(b, b.reshape(x, {n}), mask, values), shape));
  });
  torchLower(t, "put", [](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in("input");
    int flat = wrapped(b, b.reshape(L.in("index"), {-1}), b.meta(x).numElements());
    L.out(putFlat(b, x, flat, L.in("source"), L.args.boolValue("accumulate")));
  });
  torchLower(t, "index_put", [](Lowering &L) { // index tensors for the leading dimensions
    PrimBuilder &b = L.b;
    int x = L.in("input");
    std::vector<int> idx = L.inList("indices");
    std::vector<int64_t> shape = b.meta(x).shape;
    if (idx.empty() || idx.size() > shape.size())
      badValue(L, "needs 1 to " + std::to_string(shape.size()) + " index tensors, not " +
                      std::to_string(idx.size()));
    std::vector<int64_t> common, trailing(shape.begin() + long(idx.size()), shape.end());
    for (int i : idx) {
      if (b.meta(i).dtype == DType::Bool)
        badValue(L, "a bool index (a mask) selects a number of positions that depends on its "
                    "values (data-dependent shapes are not supported yet); use masked_scatter "
                    "or where");
      common = broadcastShapes(b.opName(), common, b.meta(i).shape);
    }
    int64_t inner = 1;
    for (int64_t d : trailing)
      inner *= d;
    int flat = b.fill(0, common, DType::Int64);
    int64_t stride = inner;
    for (size_t k = idx.size(); k-- > 0;) {
      int i = b.broadcastTo(wrapped(b, idx[k], shape[k]), common);
      flat = b.binary(Prim::Add, flat, b.binaryScalar(Prim::Mul, i, double(stride)));
      stride *= shape[k];
    }
    // Each indexed position covers its trailing elements: [common..., inner].
    std::vector<int64_t> full = common, col = common;
    full.push_back(inner);
    col.push_back(1);
    std::vector<int64_t> row(common.size(), 1);
    row.push_back(inner);
    int positions2 = b.binary(Prim::Add, b.binaryScalar(Prim::Mul, b.reshape(flat, col), 1),
                              b.reshape(b.iota(inner, DType::Int64), row));
    std::vector<int64_t> valueShape = common;
    valueShape.insert(valueShape.end(), trailing.begin(), trailing.end());
    int values = b.reshape(b.broadcastTo(L.in("values"), valueShape), full);
    L.out(putFlat(b, x, b.reshape(positions2, {-1}), values, L.args.boolValue("accumulate")));
  });
  auto unfold = [](Lowering &L) { // windows of `size` every `step` along dimension, last
    PrimBuilder &b = L.b;
    int x = L.in("input");
    bool scalar = b.meta(x).rank() == 0;
    if (scalar)
      x = b.reshape(x, {1});
    int64_t rank = b.meta(x).rank(), axis = normalizeDim(b.opName(), L.args.intValue("dimension"), rank);
    int64_t n = staticDim(L, x, axis), size = L.args.intValue("size"), step = L.args.intValue("step");
    if (size < 0 || size > n || step <= 0)
      badValue(L, "size " + std::to_string(size) + " and step " + std::to_string(step) +
                      " do not fit dimension " + std::to_string(axis) + " of size " + std::to_string(n));
    int64_t windows = (n - size) / step + 1;
    int w = b.binaryScalar(Prim::Mul, b.reshape(b.iota(windows, DType::Int64), {windows, 1}), double(step));
    int index = b.reshape(b.binary(Prim::Add, w, b.reshape(b.iota(size, DType::Int64), {1, size})),
                          {windows * size});
    int g = gatherAlong(b, x, axis, index);
    std::vector<int64_t> s = b.meta(x).shape;
    s[axis] = windows;
    s.insert(s.begin() + axis + 1, size);
    std::vector<int64_t> perm;
    for (int64_t a = 0; a <= rank; ++a)
      if (a != axis + 1)
        perm.push_back(a);
    perm.push_back(axis + 1);
    int out = b.transpose(b.reshape(g, s), perm);
    L.out(scalar ? b.reshape(out, {size}) : out); // a 0-d tensor's windows: 1-d
  };
  t.bind("torch.Tensor.unfold", unfold);
  t.bind("torch.unfold_copy", unfold);
  torchLower(t, "nonzero_static", [](Lowering &L) { // the first `size` nonzeros' coordinates
    int64_t size = L.args.intValue("size");
    if (isSymbolSize(size)) // a dynamic size (the frontend's: an element count at run time)
      size = dimOfSymbolSize(size);
    else if (size < 0)
      badValue(L, "size must not be negative");
    L.out(L.b.nonzero(L.in("input"), size, double(L.args.intValue("fill_value"))));
  });
  // torchvision's nms as the step computes it: the kept boxes' indices, then -1 (the frontend
  // ends the segment at their count: ProducedSizes.cpp).
  t.bind("torch.ops.torchvision.nms", [](Lowering &L) {
    L.out(L.b.nms(L.in("boxes"), L.in("scores"), L.args.scalar("iou_threshold")));
  });
  torchLower(t, "index_add", indexUpdateOp("input", "dim", "source", IndexUpdate::Add));
  paddleLower(t, "index_add", indexUpdateOp("x", "axis", "value", IndexUpdate::Add));
  torchLower(t, "index_copy", indexUpdateOp("input", "dim", "source", IndexUpdate::Copy));
  torchLower(t, "index_fill", indexUpdateOp("input", "dim", "", IndexUpdate::Fill));
  paddleLower(t, "index_fill", indexUpdateOp("x", "axis", "", IndexUpdate::Fill));
}

int swapAxes(PrimBuilder &b, int x, int64_t d0, int64_t d1) {
  std::vector<int64_t> perm = identityPerm(b.meta(x).rank());
  std::swap(perm[d0], perm[d1]);
  return b.transpose(x, perm);
}

namespace {
/// takeAlong of an input with a dynamic batch in another dim, whose flat positions would merge
/// the batch with the other dims: per row, each index compared with every position of the
/// axis (O(index x axis) work), the input kept where they agree and summed over the axis.
/// -1 where the index does not cover the input's other dims exactly.
int takeAlongRows(PrimBuilder &b, int x, int index, int64_t axis) {
  const std::vector<int64_t> shape = b.meta(x).shape, ishape = b.meta(index).shape;
  int64_t rank = int64_t(shape.size()), n = shape[axis];
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis && ishape[a] != shape[a])
      return -1;
  DType dtype = b.meta(x).dtype;
  // The axis last: x [..., 1, n] against the indices [..., m, 1].
  std::vector<int64_t> perm;
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis)
      perm.push_back(a);
  perm.push_back(axis);
  auto expanded = [&](int v, int64_t at) {    // a dim of one before or after the last
    std::vector<int64_t> s = b.meta(v).shape; // the batch as -1, as a reshape takes it
    s.insert(s.end() - at, 1);
    return b.reshape(v, s);
  };
  int rows = expanded(b.transpose(x, perm), 1);
  int at = expanded(b.transpose(wrapped(b, index, n), perm), 0);
  std::vector<int64_t> positions(rank + 1, 1);
  positions.back() = n;
  int hit = b.binary(Prim::Equal, at, b.reshape(b.iota(n, DType::Int64), positions));
  bool flag = dtype == DType::Bool;
  int kept = b.select(hit, flag ? b.cast(rows, DType::Int64) : rows,
                      b.fill(0, {}, flag ? DType::Int64 : dtype));
  int picked = b.reduce(Prim::ReduceSum, kept, {rank}, false);
  if (flag)
    picked = b.cast(picked, DType::Bool);
  std::vector<int64_t> back(rank);
  for (int64_t a = 0; a < rank; ++a)
    back[perm[a]] = a;
  return b.transpose(picked, back);
}
} // namespace

int takeAlong(PrimBuilder &b, int x, int index, int64_t axis) {
  const std::vector<int64_t> shape = b.meta(x).shape;
  if (!isDynamicDim(shape[axis]) && std::any_of(shape.begin(), shape.end(), isDynamicDim))
    if (int rows = takeAlongRows(b, x, index, axis); rows >= 0)
      return rows;
  return gatherFlat(b, x, flatPositions(b, shape, wrapped(b, index, shape[axis]), axis));
}

} // namespace sotc::ops::lowering
