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
#include <numeric>

namespace sotc::ops::lowering {

namespace {

std::vector<int64_t> identityPerm(int64_t rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  return perm;
}

std::vector<int64_t> inversePerm(const std::vector<int64_t> &perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[perm[i]] = int64_t(i);
  return inv;
}

/// The permutation that moves `axis` to the front, keeping the others in order.
std::vector<int64_t> frontPerm(int64_t axis, int64_t rank) {
  std::vector<int64_t> perm{axis};
  for (int64_t a = 0; a < rank; ++a)
    if (a != axis)
      perm.push_back(a);
  return perm;
}

int64_t staticDim(Lowering &L, int x, int64_t axis) {
  int64_t n = L.b.meta(x).shape[axis];
  if (n == kDynamic)
    badValue(L, "dimension " + std::to_string(axis) + " is dynamic, which this operation does "
                "not support yet");
  return n;
}

/// x with `axis` reversed: its slices gathered in reverse order.
int flipAxis(Lowering &L, int x, int64_t axis) {
  PrimBuilder &b = L.b;
  int64_t rank = b.meta(x).rank(), n = staticDim(L, x, axis);
  if (n <= 1)
    return x;
  std::vector<int64_t> perm = frontPerm(axis, rank);
  int reversed = b.binary(Prim::Sub, b.fill(double(n - 1), {}, DType::Int64), b.iota(n, DType::Int64));
  int rows = b.gather(axis ? b.transpose(x, perm) : x, reversed);
  return axis ? b.transpose(rows, inversePerm(perm)) : rows;
}

int flip(Lowering &L, int x, std::vector<int64_t> axes) {
  for (int64_t a : normalizeAxes(L.b.opName(), axes, L.b.meta(x).rank()))
    x = flipAxis(L, x, a);
  return x;
}

int swap(PrimBuilder &b, int x, int64_t d0, int64_t d1) {
  std::vector<int64_t> perm = identityPerm(b.meta(x).rank());
  std::swap(perm[d0], perm[d1]);
  return b.transpose(x, perm);
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

LowerFn takeAlongOp(std::string xn, std::string in, std::string dim) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in(xn), index = L.in(in);
    if (L.args.isNone(dim)) { // take_along_dim without dim: the flattened input
      L.out(gatherFlat(b, x, wrapped(b, b.reshape(index, {-1}), b.meta(x).numElements())));
      return;
    }
    int64_t rank = b.meta(x).rank();
    if (b.meta(index).rank() != rank)
      badValue(L, "index must have the input's rank " + std::to_string(rank) + ", not " +
                      std::to_string(b.meta(index).rank()));
    if (rank == 0) {
      L.out(x);
      return;
    }
    int64_t axis = normalizeDim(b.opName(), L.args.intValue(dim), rank);
    std::vector<int64_t> shape = b.meta(x).shape, ishape = b.meta(index).shape;
    // take_along_dim broadcasts the index against the input's other dimensions.
    bool broadcast = L.b.opName() == "take_along_dim" || L.b.opName() == "take_along_axis";
    for (int64_t a = 0; a < rank; ++a) {
      if (a == axis)
        continue;
      if (broadcast && ishape[a] == 1)
        ishape[a] = shape[a];
      if (ishape[a] > shape[a])
        badValue(L, "index dimension " + std::to_string(a) + " is " + std::to_string(ishape[a]) +
                        ", more than the input's " + std::to_string(shape[a]));
    }
    if (broadcast)
      index = b.broadcastTo(index, ishape);
    L.out(gatherFlat(b, x, flatPositions(b, shape, wrapped(b, index, shape[axis]), axis)));
  };
}

/// For each output position n (of size `size`) along the last axis of [..., size, 1] and each
/// index m: whether index m names n: a bool [size, M] mask from a 1-d (or flat) index.
int hits(PrimBuilder &b, int64_t size, int flatIndex) {
  int64_t m = b.meta(flatIndex).numElements();
  int n = b.reshape(b.iota(size, DType::Int64), {size, 1});
  return b.binary(Prim::Equal, n, b.reshape(b.cast(flatIndex, DType::Int64), {1, m}));
}

/// The last index m that names each position (-1: none), [size, 1] int64.
int lastHit(PrimBuilder &b, int mask) {
  int64_t m = b.meta(mask).shape[1];
  int pos = b.reshape(b.iota(m, DType::Int64), {1, m});
  return b.reduce(Prim::ReduceMax, b.select(mask, pos, b.fill(-1, {}, DType::Int64)), {1}, true);
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
    DType d = b.meta(x).dtype;
    int src;
    if (L.args.signature().find("src")) { // the part of src the index covers
      src = b.cast(L.in("src"), d);
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
    int64_t n = b.meta(x).numElements(), m = b.meta(index).numElements();
    int64_t axis = rank ? normalizeDim(b.opName(), L.args.intValue(dim), rank) : 0;
    int flat = rank ? flatPositions(b, shape, wrapped(b, index, shape[axis]), axis)
                    : b.cast(index, DType::Int64);
    int mask = hits(b, n, flat);
    int values = b.reshape(src, {1, m});
    int xf = b.reshape(x, {n, 1});
    int out;
    if (add) {
      int sum = b.reduce(Prim::ReduceSum, b.select(mask, b.broadcastTo(values, {n, m}),
                                                   b.fill(0, {}, d)),
                         {1}, true);
      out = b.binary(Prim::Add, xf, sum, d);
    } else {
      int last = lastHit(b, mask);
      int zero = b.fill(0, {}, DType::Int64);
      int picked = b.gather(b.reshape(src, {m}), b.binary(Prim::Max, last, zero));
      out = b.select(b.binary(Prim::GreaterEqual, last, zero), picked, xf);
    }
    L.out(b.reshape(out, shape));
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
    int64_t n = staticDim(L, x, axis), m = b.meta(index).numElements();
    if (b.meta(index).rank() > 1)
      badValue(L, "index must be 1-d, not of shape " + formatShape(b.meta(index).shape));
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
    } else {
      int source = b.cast(L.in(sourceName), d);
      if (b.meta(source).rank() == 0)
        source = b.reshape(source, {1});
      int sl = b.reshape(b.transpose(source, layout.perm), {rows, 1, m});
      if (kind == IndexUpdate::Add) {
        if (L.args.signature().find("alpha") && L.args.scalar("alpha") != 1)
          sl = b.binaryScalar(Prim::Mul, sl, L.args.scalar("alpha"));
        int sum = b.reduce(Prim::ReduceSum,
                           b.select(mask, b.broadcastTo(sl, {rows, n, m}), b.fill(0, {}, d)), {2},
                           true);
        out = b.binary(Prim::Add, x2, sum, d);
      } else {
        int pos = b.reshape(b.iota(m, DType::Int64), {1, 1, m});
        int last = b.reduce(Prim::ReduceMax, b.select(mask, pos, b.fill(-1, {}, DType::Int64)),
                            {2}, true); // [1, n, 1]
        int picked = b.reduce(Prim::ReduceSum,
                              b.select(b.binary(Prim::Equal, pos, last), b.broadcastTo(sl, {rows, n, m}),
                                       b.fill(0, {}, d)),
                              {2}, true);
        out = b.select(b.binary(Prim::GreaterEqual, last, b.fill(0, {}, DType::Int64)), picked, x2);
      }
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
    merged.push_back(times[i] * shape[i]);
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
      std::vector<int64_t> dims = normalizeAxes(L.b.opName(), L.args.intList(axes), L.b.meta(x).rank());
      if (dims.size() != 2)
        badValue(L, "needs two distinct dimensions");
      int64_t d0 = L.args.intList(axes)[0], d1 = L.args.intList(axes)[1];
      d0 = normalizeDim(L.b.opName(), d0, L.b.meta(x).rank());
      d1 = normalizeDim(L.b.opName(), d1, L.b.meta(x).rank());
      int64_t k = ((L.args.intValue("k") % 4) + 4) % 4;
      if (k == 1)
        x = swap(L.b, flipAxis(L, x, d1), d0, d1);
      else if (k == 2)
        x = flipAxis(L, flipAxis(L, x, d0), d1);
      else if (k == 3)
        x = flipAxis(L, swap(L.b, x, d0, d1), d1);
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
        x = b.reshape(x, {b.meta(x).numElements()});
      int64_t axis = L.args.isNone(dim) ? 0 : normalizeDim(b.opName(), L.args.intValue(dim), b.meta(x).rank());
      std::vector<int64_t> shape = b.meta(x).shape, split = shape, merged = shape;
      split.insert(split.begin() + axis + 1, 1);
      std::vector<int64_t> expanded = split;
      expanded[axis + 1] = r;
      merged[axis] *= r;
      L.out(b.reshape(b.broadcastTo(b.reshape(x, split), expanded), merged));
    };
  };
  torchLower(t, "repeat_interleave", repeatInterleave("input", "dim"));
  paddleLower(t, "repeat_interleave", repeatInterleave("x", "axis"));

  auto movedim = [](std::string xn, std::string src, std::string dst) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      int64_t rank = L.b.meta(x).rank();
      std::vector<int64_t> from = normalizeAxes(L.b.opName(), L.args.intList(src), rank);
      std::vector<int64_t> to = L.args.intList(dst);
      if (from.size() != to.size())
        badValue(L, "source and destination must have the same length");
      std::vector<int64_t> fromOrdered = L.args.intList(src);
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

  torchLower(t, "gather", takeAlongOp("input", "index", "dim"));
  paddleLower(t, "take_along_axis", takeAlongOp("arr", "indices", "axis"));
  torchLower(t, "take_along_dim", takeAlongOp("input", "indices", "dim"));
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
    // paddle broadcasts indices and values to each other; the index's shape rules.
    DType d = b.meta(x).dtype;
    const Arg &v = L.args.get("values");
    int src = v.isTensor() ? b.broadcastTo(b.cast(L.in("values"), d), b.meta(index).shape)
                           : b.fill(v.scalar(), b.meta(index).shape, d);
    std::vector<int64_t> shape = b.meta(x).shape;
    int64_t axis = normalizeDim(b.opName(), L.args.intValue("axis"), b.meta(x).rank());
    int64_t n = b.meta(x).numElements(), m = b.meta(index).numElements();
    int mask = hits(b, n, flatPositions(b, shape, wrapped(b, index, shape[axis]), axis));
    int xf = b.reshape(x, {n, 1});
    int out;
    if (add) {
      out = b.binary(Prim::Add, xf,
                     b.reduce(Prim::ReduceSum,
                              b.select(mask, b.broadcastTo(b.reshape(src, {1, m}), {n, m}),
                                       b.fill(0, {}, d)),
                              {1}, true),
                     d);
    } else {
      int last = lastHit(b, mask), zero = b.fill(0, {}, DType::Int64);
      out = b.select(b.binary(Prim::GreaterEqual, last, zero),
                     b.gather(b.reshape(src, {m}), b.binary(Prim::Max, last, zero)), xf);
    }
    L.out(b.reshape(out, shape));
  });
  torchLower(t, "index_add", indexUpdateOp("input", "dim", "source", IndexUpdate::Add));
  paddleLower(t, "index_add", indexUpdateOp("x", "axis", "value", IndexUpdate::Add));
  torchLower(t, "index_copy", indexUpdateOp("input", "dim", "source", IndexUpdate::Copy));
  torchLower(t, "index_fill", indexUpdateOp("input", "dim", "", IndexUpdate::Fill));
  paddleLower(t, "index_fill", indexUpdateOp("x", "axis", "", IndexUpdate::Fill));
}

} // namespace sotc::ops::lowering
