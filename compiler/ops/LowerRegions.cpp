//===- LowerRegions.cpp - Lowerings: features pooled over boxes (roi_align) ----------------===//
//
// A two-stage detector pools each proposal's region of a feature map to a fixed grid
// (torchvision's roi_align, paddle.vision.ops.roi_align): every bin averages the bilinear
// samples at a fixed grid of points inside it. The boxes may be counted at run time (the
// proposals an RPN keeps): everything here is elementwise over them and one gather.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <tuple>

namespace sotc::ops::lowering {

namespace {

struct RoiAlign {
  double spatialScale;
  int64_t pooledHeight, pooledWidth, samplingRatio;
  bool aligned;
};

/// input [N, C, H, W] pooled over `boxes` [K, 4] (x1, y1, x2, y2 in input coordinates before
/// spatial_scale) of the images `batch` [K] (int64): [K, C, PH, PW], as torchvision's CPU
/// kernel computes it (each sample's four taps weighted, the samples summed in row order,
/// then divided by their count); paddle's is the same algorithm.
int roiAlign(Lowering &L, int x, int boxes, int batch, const RoiAlign &how) {
  PrimBuilder &b = L.b;
  const std::vector<int64_t> shape = b.meta(x).shape;
  if (shape.size() != 4 || std::any_of(shape.begin(), shape.end(), isDynamicDim))
    badValue(L, "needs an input [N, C, H, W] of known sizes, got " + formatShape(shape));
  if (how.samplingRatio <= 0)
    badValue(L, "sampling_ratio " + std::to_string(how.samplingRatio) +
                    " samples each box by its size (a count known only at run time): pass a "
                    "positive sampling_ratio");
  if (how.pooledHeight <= 0 || how.pooledWidth <= 0)
    badValue(L, "the output size must be positive");
  DType d = b.meta(x).dtype;
  if (!isFloating(d))
    badValue(L, "pools a floating-point input, not " + std::string(dtypeName(d)));
  const int64_t n = shape[0], c = shape[1], h = shape[2], w = shape[3];
  const int64_t k = b.meta(boxes).shape[0];
  const int64_t ph = how.pooledHeight, pw = how.pooledWidth, grid = how.samplingRatio;
  boxes = b.cast(boxes, d);
  auto column = [&](int64_t i) {
    return b.reshape(b.slice(boxes, {1}, {i}, {i + 1}, {1}), {k, 1, 1, 1});
  };
  double offset = how.aligned ? 0.5 : 0;
  auto start = [&](int64_t i) {
    return b.binaryScalar(Prim::Sub, b.binaryScalar(Prim::Mul, column(i), how.spatialScale),
                          offset);
  };
  int x0 = start(0), y0 = start(1);
  int roiW = b.binary(Prim::Sub, start(2), x0), roiH = b.binary(Prim::Sub, start(3), y0);
  if (!how.aligned) { // a box smaller than a pixel is taken as one
    roiW = b.binary(Prim::Max, roiW, scalarLike(b, 1, roiW));
    roiH = b.binary(Prim::Max, roiH, scalarLike(b, 1, roiH));
  }
  int binH = b.binaryScalar(Prim::Div, roiH, double(ph));
  int binW = b.binaryScalar(Prim::Div, roiW, double(pw));
  // The bins' own indices, along the output's PH and PW axes.
  int rowsOfBins = b.cast(b.reshape(b.iota(ph, DType::Int64), {1, 1, ph, 1}), d);
  int colsOfBins = b.cast(b.reshape(b.iota(pw, DType::Int64), {1, 1, 1, pw}), d);
  // The flat input's row of each box's channels: (batch * C + c) * H * W.
  int planes =
      b.binary(Prim::Add, b.binaryScalar(Prim::Mul, b.reshape(batch, {k, 1, 1, 1}), double(c)),
               b.reshape(b.iota(c, DType::Int64), {1, c, 1, 1}));
  planes = b.binaryScalar(Prim::Mul, planes, double(h * w));
  int table = b.reshape(x, {n * c * h * w});
  const std::vector<int64_t> result = {k, c, ph, pw};

  // One coordinate of a sample: start + i * bin + (s + 0.5) * bin / grid; clipped as
  // torchvision's bilinear_interpolate: below 0 read at 0, its low tap the last pixel at the
  // far edge (both taps there).
  struct Axis {
    int outside, low, high, lowWeight, highWeight;
  };
  auto axis = [&](int first, int bin, int index, int64_t s, int64_t size) {
    int pos = b.binary(
        Prim::Add, b.binary(Prim::Add, first, b.binary(Prim::Mul, index, bin)),
        b.binaryScalar(Prim::Div, b.binaryScalar(Prim::Mul, bin, double(s) + 0.5), double(grid)));
    int outside =
        b.binary(Prim::LogicalOr, b.binary(Prim::Less, pos, scalarLike(b, -1, pos)),
                 b.binary(Prim::Greater, pos, scalarLike(b, double(size), pos)), DType::Bool);
    pos = b.binary(Prim::Max, pos, scalarLike(b, 0, pos));
    int low = b.unary(Prim::Floor, pos);
    int last = b.binary(Prim::GreaterEqual, low, scalarLike(b, double(size - 1), low));
    int edge = scalarLike(b, double(size - 1), low);
    low = b.select(last, edge, low);
    int high = b.select(last, edge, b.binaryScalar(Prim::Add, low, 1));
    pos = b.select(last, edge, pos);
    int frac = b.binary(Prim::Sub, pos, low);
    return Axis{outside, b.cast(low, DType::Int64), b.cast(high, DType::Int64),
                b.binary(Prim::Sub, scalarLike(b, 1, frac), frac), frac};
  };
  int sum = -1;
  for (int64_t sy = 0; sy < grid; ++sy) {
    Axis ay = axis(y0, binH, rowsOfBins, sy, h);
    for (int64_t sx = 0; sx < grid; ++sx) {
      Axis ax = axis(x0, binW, colsOfBins, sx, w);
      auto tap = [&](int yi, int xi) {
        int at = b.binary(Prim::Add, b.binaryScalar(Prim::Mul, yi, double(w)), xi);
        return b.gather(
            table, b.binary(Prim::Add, b.broadcastTo(planes, result), b.broadcastTo(at, result)));
      };
      // w1 v1 + w2 v2 + w3 v3 + w4 v4, torchvision's order: (low, low), (low, high), ...
      int value = -1;
      for (auto [yi, xi, wy, wx] : {std::tuple{ay.low, ax.low, ay.lowWeight, ax.lowWeight},
                                    {ay.low, ax.high, ay.lowWeight, ax.highWeight},
                                    {ay.high, ax.low, ay.highWeight, ax.lowWeight},
                                    {ay.high, ax.high, ay.highWeight, ax.highWeight}}) {
        int term =
            b.binary(Prim::Mul, b.broadcastTo(b.binary(Prim::Mul, wy, wx), result), tap(yi, xi));
        value = value < 0 ? term : b.binary(Prim::Add, value, term);
      }
      int outside =
          b.broadcastTo(b.binary(Prim::LogicalOr, ay.outside, ax.outside, DType::Bool), result);
      value = b.select(outside, b.fill(0, {}, d), value);
      sum = sum < 0 ? value : b.binary(Prim::Add, sum, value);
    }
  }
  return b.binaryScalar(Prim::Div, sum, double(grid * grid));
}

/// The image of each of the K boxes whose counts per image are `counts` [N]: how many of the
/// running totals of the counts are at most the box's position (boxes come image by image).
int imageOfEachBox(PrimBuilder &b, int counts, int64_t k) {
  int64_t n = b.meta(counts).shape[0];
  counts = b.cast(counts, DType::Int64);
  int upTo = triangle(b, n, n, 0, true); // [n, m]: m <= n
  int ends = b.reduce(
      Prim::ReduceSum,
      b.select(upTo, b.broadcastTo(b.reshape(counts, {1, n}), {n, n}), b.fill(0, {}, DType::Int64)),
      {1}, false);
  int position = b.reshape(b.iota(k, DType::Int64), {k, 1});
  int passed = b.cast(b.binary(Prim::LessEqual, b.reshape(ends, {1, n}), position), DType::Int64);
  return b.reduce(Prim::ReduceSum, passed, {1}, false);
}

} // namespace

void registerRegions(OpTable &t) {
  t.bind("torch.ops.torchvision.roi_align", [](Lowering &L) {
    PrimBuilder &b = L.b;
    int rois = L.in("rois");
    const std::vector<int64_t> &shape = b.meta(rois).shape;
    if (shape.size() != 2 || shape[1] != 5)
      badValue(L, "needs rois [K, 5] (batch index, x1, y1, x2, y2), got " + formatShape(shape));
    int batch = b.reshape(b.cast(b.slice(rois, {1}, {0}, {1}, {1}), DType::Int64), {shape[0]});
    L.out(roiAlign(L, L.in("input"), b.slice(rois, {1}, {1}, {5}, {1}), batch,
                   {L.args.scalar("spatial_scale"), L.args.intValue("pooled_height"),
                    L.args.intValue("pooled_width"), L.args.intValue("sampling_ratio"),
                    L.args.boolValue("aligned")}));
  });
  t.bind("paddle.vision.ops.roi_align", [](Lowering &L) {
    PrimBuilder &b = L.b;
    int boxes = L.in("boxes");
    const std::vector<int64_t> &shape = b.meta(boxes).shape;
    if (shape.size() != 2 || shape[1] != 4)
      badValue(L, "needs boxes [K, 4] (x1, y1, x2, y2), got " + formatShape(shape));
    if (b.meta(L.in("boxes_num")).rank() != 1)
      badValue(L, "needs boxes_num [N], the boxes of each image");
    std::vector<int64_t> size = L.args.intList("output_size");
    L.out(roiAlign(L, L.in("x"), boxes, imageOfEachBox(b, L.in("boxes_num"), shape[0]),
                   {L.args.scalar("spatial_scale"), size[0], size.size() > 1 ? size[1] : size[0],
                    L.args.intValue("sampling_ratio"), L.args.boolValue("aligned")}));
  });
}

} // namespace sotc::ops::lowering
