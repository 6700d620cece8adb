//===- LowerShapes.cpp - Lowerings: reshape, transpose, squeeze, expand, concat, split ---===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <cmath>

namespace sotc::ops::lowering {

namespace {
/// Rows of `weight` picked by the indices; paddle's padding_idx row reads as zeros.
LowerFn embeddingOp(std::string indices, bool paddle) {
  return [=](Lowering &L) {
    if (!L.args.isNone("max_norm"))
      badValue(L, "max_norm renormalizes the weight in place, which sotc does not compile");
    int rows = L.b.gather(L.in("weight"), L.in(indices));
    if (paddle && !L.args.isNone("padding_idx")) {
      int64_t pad = L.args.intValue("padding_idx");
      if (pad < 0)
        pad += L.b.meta(L.in("weight")).shape[0];
      int index = L.in(indices);
      // [I..., 1...]: where the index is padding_idx, the whole row is zero.
      std::vector<int64_t> rowShape = L.b.meta(index).shape;
      rowShape.resize(static_cast<size_t>(L.b.meta(rows).rank()), 1);
      int isPad = L.b.binary(Prim::Equal, index,
                             L.b.fill(static_cast<double>(pad), {}, L.b.meta(index).dtype));
      rows = L.b.select(L.b.reshape(isPad, rowShape), L.b.fill(0, {}, L.b.meta(rows).dtype), rows);
    }
    L.out(rows);
  };
}
/// The slices of x along `axis` that a 1-d index names, in its order: rows gathered with the
/// axis moved to the front and back.
LowerFn indexSelectOp(std::string xn, std::string axisName) {
  return [=](Lowering &L) {
    int x = L.in(xn), index = L.in("index");
    int64_t rank = L.b.meta(x).rank();
    if (rank == 0 && L.b.meta(index).numElements() == 1) { // torch: a 0-d tensor's one element
      L.out(L.b.reshape(L.b.gather(L.b.reshape(x, {1}), L.b.reshape(index, {1})), {}));
      return;
    }
    if (L.b.meta(index).rank() != 1)
      badValue(L, "index must be 1-d, not of shape " + formatShape(L.b.meta(index).shape));
    int64_t axis = normalizeDim(L.b.opName(), L.args.intValue(axisName), rank);
    L.out(gatherAlong(L.b, x, axis, index));
  };
}
/// chunk: `chunks` pieces of ceil(n / chunks) along the axis (torch: fewer where they run
/// out, the last smaller; paddle: n must divide evenly).
LowerFn chunkOp(std::string xn, std::string axisName, bool paddle) {
  return [=](Lowering &L) {
    int x = L.in(xn);
    int64_t axis = normalizeDim(L.b.opName(), L.args.intValue(axisName), L.b.meta(x).rank());
    int64_t chunks = L.args.intValue("chunks"), n = L.b.meta(x).shape[axis];
    if (chunks <= 0)
      badValue(L, "chunks must be positive");
    if (isDynamicDim(n))
      badValue(L, "chunking a dynamic dimension is not supported yet");
    if (paddle && n % chunks)
      throw CodedError(DiagCode::OpShapeMismatch,
                       L.b.opName() + "(): axis " + std::to_string(axis) + " of size " +
                           std::to_string(n) + " cannot be split into " + std::to_string(chunks) +
                           " equal chunks");
    int64_t size = std::max<int64_t>(1, (n + chunks - 1) / chunks);
    std::vector<int64_t> sizes;
    for (int64_t at = 0; at < n; at += size)
      sizes.push_back(std::min(size, n - at));
    if (n == 0) // an empty axis: as many empty chunks as asked for, as the frameworks give
      sizes.assign(static_cast<size_t>(chunks), 0);
    splitSizes(L, x, sizes, axis);
  };
}

/// roll: along each axis, the last `shift` entries moved to the front.
LowerFn rollOp(std::string xn, std::string axesName) {
  return [=](Lowering &L) {
    int x = L.in(xn);
    std::vector<int64_t> shifts = L.args.intList("shifts"), shape = L.b.meta(x).shape;
    bool flat = L.args.isNone(axesName);
    std::vector<int64_t> axes = flat ? std::vector<int64_t>{0} : L.args.intList(axesName);
    if (shifts.size() != axes.size())
      badValue(L, "shifts and " + axesName + " must have the same length, not " +
                      std::to_string(shifts.size()) + " and " + std::to_string(axes.size()));
    int y = x;
    if (flat)
      y = L.b.reshape(x, {-1});
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t axis = normalizeDim(L.b.opName(), axes[i], L.b.meta(y).rank());
      int64_t n = L.b.meta(y).shape[axis];
      if (isDynamicDim(n))
        badValue(L, "rolling a dynamic dimension is not supported yet");
      int64_t s = n ? ((shifts[i] % n) + n) % n : 0;
      if (!s)
        continue;
      y = L.b.concat({L.b.slice(y, {axis}, {n - s}, {n}, {1}), L.b.slice(y, {axis}, {0}, {n - s}, {1})},
                     axis);
    }
    L.out(flat ? L.b.reshape(y, shape) : y);
  };
}

} // namespace

void registerShapes(OpTable &t) {
  paddleLower(t, "chunk", chunkOp("x", "axis", true));
  torchLower(t, "chunk", chunkOp("input", "dim", false));
  paddleLower(t, "roll", rollOp("x", "axis"));
  torchLower(t, "roll", rollOp("input", "dims"));
  t.bind("torch.Tensor.expand", expandOp("input", "size"));
  // x in another tensor's shape: reshaped (view_as, reshape_as) or broadcast (expand_as).
  auto asShapeOf = [](std::string xn, std::string yn, bool broadcast) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      std::vector<int64_t> shape = L.b.meta(L.in(yn)).shape;
      L.out(broadcast ? L.b.broadcastTo(x, shape) : L.b.reshape(x, shape));
    };
  };
  t.bind("torch.Tensor.view_as", asShapeOf("input", "other", false));
  t.bind("torch.Tensor.reshape_as", asShapeOf("input", "other", false));
  t.bind("torch.Tensor.expand_as", asShapeOf("input", "other", true));
  paddleLower(t, "expand_as", asShapeOf("x", "y", true));
  t.bind("paddle.index_select", indexSelectOp("x", "axis"));
  t.bind("Tensor.index_select", indexSelectOp("x", "axis"));
  t.bind("torch.index_select", indexSelectOp("input", "dim"));
  t.bind("torch.Tensor.index_select", indexSelectOp("input", "dim"));
  t.bind("paddle.nn.functional.embedding", embeddingOp("x", true));
  t.bind("torch.nn.functional.embedding", embeddingOp("input", false));
  auto reshapeLower = [](std::string xn, std::string shape, bool paddle) {
    return [=](Lowering &L) { // paddle's 0 copies the input's dimension; torch's is a size
      int x = L.in(xn);
      L.out(L.b.reshape(
          x, reshapeShape(L.b.opName(), L.b.meta(x).shape, L.args.intList(shape), paddle)));
    };
  };
  paddleLower(t, "reshape", reshapeLower("x", "shape", true));
  torchLower(t, "reshape", reshapeLower("input", "shape", false));
  t.bind("torch.Tensor.view", reshapeLower("input", "shape", false));

  torchLower(t, "resize_as_", [](Lowering &L) { // the storage's first elements, or zeros after
    PrimBuilder &b = L.b;
    int x = L.in("input");
    int64_t n = b.meta(x).numElements(), m = b.meta(L.in("the_template")).numElements();
    int flat = b.reshape(x, {n});
    if (m < n)
      flat = b.slice(flat, {0}, {0}, {m}, {1});
    else if (m > n)
      flat = b.concat({flat, b.fill(0, {m - n}, b.meta(x).dtype)}, 0);
    L.out(b.reshape(flat, b.meta(L.in("the_template")).shape));
  });
  auto transposeLower = [](std::string xn, std::string perm) {
    return [=](Lowering &L) { L.out(L.b.transpose(L.in(xn), L.args.intList(perm))); };
  };
  paddleLower(t, "transpose", transposeLower("x", "perm"));
  torchLower(t, "permute", transposeLower("input", "dims"));
  auto swapLower = [](std::string a, std::string b) {
    return [=](Lowering &L) {
      int x = L.in("input");
      int64_t rank = L.b.meta(x).rank();
      std::vector<int64_t> perm;
      for (int64_t i = 0; i < rank; ++i)
        perm.push_back(i);
      int64_t first = normalizeAxis(L.b.opName(), L.args.intValue(a), rank),
              second = normalizeAxis(L.b.opName(), L.args.intValue(b), rank);
      if (rank == 0) // a 0-d tensor's dims 0 and -1: itself
        return L.out(x);
      std::swap(perm[first], perm[second]);
      L.out(L.b.transpose(x, perm));
    };
  };
  torchLower(t, "transpose", swapLower("dim0", "dim1"));
  torchLower(t, "swapaxes", swapLower("axis0", "axis1"));

  auto unsqueezeLower = [](std::string xn, std::string axis) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      L.out(L.b.reshape(x, unsqueezed(L, L.b.meta(x).shape, L.args.intList(axis))));
    };
  };
  paddleLower(t, "unsqueeze", unsqueezeLower("x", "axis"));
  torchLower(t, "unsqueeze", unsqueezeLower("input", "dim"));
  auto squeezeLower = [](std::string xn, std::string axis) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      L.out(L.b.reshape(x, squeezed(L, L.b.meta(x).shape, axis)));
    };
  };
  paddleLower(t, "squeeze", squeezeLower("x", "axis"));
  torchLower(t, "squeeze", squeezeLower("input", "dim"));
  auto flattenLower = [](std::string xn, std::string start, std::string stop) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      L.out(L.b.reshape(
          x, flattened(L, L.b.meta(x).shape, L.args.intValue(start), L.args.intValue(stop))));
    };
  };
  paddleLower(t, "flatten", flattenLower("x", "start_axis", "stop_axis"));
  torchLower(t, "flatten", flattenLower("input", "start_dim", "end_dim"));

  paddleLower(t, "expand", expandOp("x", "shape"));
  paddleLower(t, "broadcast_to", expandOp("x", "shape"));
  torchLower(t, "broadcast_to", expandOp("input", "size"));

  auto concatLower = [](std::string xs, std::string axis, bool skipsEmpty) {
    return [=](Lowering &L) {
      std::vector<int> ins = L.inList(xs);
      if (ins.empty())
        badValue(L, "needs at least one tensor");
      // torch skips 1-D empty tensors (a cache started as torch.tensor([])) whatever the
      // others' rank.
      std::vector<int> kept;
      for (int x : ins)
        if (L.b.meta(x).shape != std::vector<int64_t>{0})
          kept.push_back(x);
      if (skipsEmpty && !kept.empty())
        ins = kept;
      L.out(L.b.concat(
          ins, normalizeDim(L.b.opName(), L.args.intValue(axis), L.b.meta(ins[0]).rank())));
    };
  };
  paddleLower(t, "concat", concatLower("x", "axis", false), false);
  torchLower(t, "cat", concatLower("tensors", "dim", true), false);

  paddleLower(t, "split", [](Lowering &L) {
    int x = L.in("x");
    int64_t axis = normalizeDim("split", L.args.intValue("axis"), L.b.meta(x).rank());
    const Arg &n = L.args.get("num_or_sections");
    if (n.kind != Arg::Kind::Int)
      return splitSizes(L, x, L.args.intList("num_or_sections"), axis);
    int64_t dim = L.b.meta(x).shape[axis];
    if (n.intValue <= 0 || (!isDynamicDim(dim) && dim % n.intValue != 0))
      throw CodedError(DiagCode::OpShapeMismatch,
                       "split(): axis " + std::to_string(axis) + " of size " + std::to_string(dim) +
                           " cannot be split into " + std::to_string(n.intValue) +
                           " equal sections");
    splitSizes(L, x, std::vector<int64_t>(n.intValue, dim / n.intValue), axis);
  });
  torchLower(t, "split", [](Lowering &L) {
    int x = L.in("tensor");
    int64_t axis = normalizeDim("split", L.args.intValue("dim"), L.b.meta(x).rank());
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

  t.bind("__getitem__", [](Lowering &L) { getitem(L, L.in("self"), L.args.get("index")); });
}

} // namespace sotc::ops::lowering
