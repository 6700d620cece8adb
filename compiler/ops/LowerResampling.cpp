//===- LowerResampling.cpp - Lowerings: padding, interpolation, pixel shuffles, grid samples ===//
//
// Each of these reads the input at positions computed from the output's: a pad or a resize
// along one axis is a gather of the input at an index tensor made from iota, so no table of
// positions is stored. (A gather reads its table whole from outside its kernel: the input
// with the axis moved in front is one kernel of its own.)
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <cmath>

namespace sotc::ops::lowering {

namespace {

enum class PadMode { Constant, Reflect, Replicate, Circular };

PadMode padModeOf(Lowering &L, const std::string &mode) {
  if (mode == "constant")
    return PadMode::Constant;
  if (mode == "reflect")
    return PadMode::Reflect;
  if (mode == "replicate")
    return PadMode::Replicate;
  if (mode == "circular")
    return PadMode::Circular;
  badValue(L, "mode must be 'constant', 'reflect', 'replicate' or 'circular', not '" + mode + "'");
}

/// x padded along `axis` by `before` and `after` elements: `value`s (constant), the mirror
/// image without the edge (reflect), the edge repeated (replicate), or the other end
/// (circular); a negative pad crops.
int padAxis(Lowering &L, int x, int64_t axis, int64_t before, int64_t after, PadMode mode,
            double value) {
  PrimBuilder &b = L.b;
  int64_t n = b.meta(x).shape[axis];
  if (isDynamicDim(n) && mode != PadMode::Constant)
    badValue(L, "padding a dynamic dimension other than with a constant is not supported yet");
  if (mode == PadMode::Constant) {
    // A dynamic size padded or cropped is a size derived from it (labels padded by one: T + 1).
    if (!isDynamicDim(n) && n + std::min<int64_t>(before, 0) + std::min<int64_t>(after, 0) < 0)
      badValue(L, "the pads crop more than dimension " + std::to_string(axis) + " has");
    if (before < 0 || after < 0)
      x = b.slice(x, {axis}, {std::max<int64_t>(-before, 0)},
                  {b.offsetDim(n, -std::max<int64_t>(-after, 0))}, {1});
    std::vector<int> parts;
    auto fillOf = [&](int64_t width) {
      std::vector<int64_t> s = b.meta(x).shape;
      s[axis] = width;
      return b.fill(value, s, b.meta(x).dtype);
    };
    if (before > 0)
      parts.push_back(fillOf(before));
    parts.push_back(x);
    if (after > 0)
      parts.push_back(fillOf(after));
    return parts.size() == 1 ? x : b.concat(parts, axis);
  }
  // A negative pad crops: the positions below are the same formulas over fewer outputs.
  if (n + before + after <= 0)
    badValue(L, "the pads crop more than dimension " + std::to_string(axis) + " has");
  if (!before && !after)
    return x;
  int64_t limit = mode == PadMode::Reflect ? n - 1 : mode == PadMode::Circular ? n : INT64_MAX;
  if (n == 0 || before > limit || after > limit)
    badValue(L, "pads of " + std::to_string(before) + " and " + std::to_string(after) +
                    (mode == PadMode::Reflect ? " must be smaller than" : " must not exceed") +
                    " dimension " + std::to_string(axis) + "'s size " + std::to_string(n));
  // p = the output position - before, an input position or one outside [0, n).
  int p = b.binaryScalar(Prim::Sub, b.iota(n + before + after, DType::Int64),
                         static_cast<double>(before));
  int last = b.fill(static_cast<double>(n - 1), {}, DType::Int64);
  int index;
  if (mode == PadMode::Reflect) // n-1 - |n-1 - |p||
    index = b.binary(Prim::Sub, last,
                     b.unary(Prim::Abs, b.binary(Prim::Sub, last, b.unary(Prim::Abs, p))));
  else if (mode == PadMode::Replicate)
    index = b.binary(Prim::Min, b.binaryScalar(Prim::Max, p, 0), last);
  else // remainder has the divisor's sign: every p maps into [0, n)
    index = b.binaryScalar(Prim::Mod, p, static_cast<double>(n));
  return gatherAlong(b, x, axis, index);
}

/// torch's F.pad: the pads pair up from the last dimension backward. Non-constant modes pad
/// at most the last three dimensions of a batch (rank pads + 1) or of a batch of channels
/// (rank pads + 2), as torch requires.
void torchPad(Lowering &L) {
  const std::string mode = L.args.signature().find("mode") ? L.args.get("mode").stringValue
                                                           : "constant"; // constant_pad_nd
  PadMode m = padModeOf(L, mode);
  int y = L.in("input");
  std::vector<int64_t> pad = L.args.intList("pad");
  int64_t rank = L.b.meta(y).rank(), dims = static_cast<int64_t>(pad.size() / 2);
  if (pad.size() % 2 || dims > rank)
    badValue(L,
             "pad must have an even length of at most 2 * rank, not " + std::to_string(pad.size()));
  if (m != PadMode::Constant && (dims > 3 || (rank != dims + 1 && rank != dims + 2)))
    badValue(L, "mode='" + mode + "' pads the last 1, 2 or 3 dimensions of a " +
                    "(batch, channel, ...) or (channel, ...) input: " + std::to_string(dims) +
                    " padded dimensions of a rank-" + std::to_string(rank) + " input");
  double value =
      !L.args.signature().find("value") || L.args.isNone("value") ? 0.0 : L.args.scalar("value");
  if (m != PadMode::Constant && value != 0)
    badValue(L, "value is only used by mode='constant'");
  for (int64_t i = 0; i < dims; ++i)
    y = padAxis(L, y, rank - 1 - i, pad[2 * i], pad[2 * i + 1], m, value);
  L.out(y);
}

/// The spatial axes of an input by its data format: channels first (NCHW, NCL, NCDHW) the
/// axes after the channel, channels last (NHWC, NLC, NDHWC) the axes between batch and channel.
std::vector<int64_t> spatialAxes(Lowering &L, int x, const std::string &dataFormat) {
  int64_t rank = L.b.meta(x).rank();
  if (rank < 3)
    badValue(L, "expects a (batch, channel, spatial...) input, not of shape " +
                    formatShape(L.b.meta(x).shape));
  bool channelsLast = !dataFormat.empty() && dataFormat.back() == 'C';
  if (!dataFormat.empty() && static_cast<int64_t>(dataFormat.size()) != rank)
    badValue(L, "data_format '" + dataFormat + "' does not fit a rank-" + std::to_string(rank) +
                    " input");
  std::vector<int64_t> axes;
  for (int64_t a = channelsLast ? 1 : 2; a < (channelsLast ? rank - 1 : rank); ++a)
    axes.push_back(a);
  return axes;
}

/// paddle.nn.functional.pad. Constant mode with a pad that is not one pair per spatial axis:
/// 2 * rank entries pad every axis from the first (pad_from_left_axis), any other even count
/// pads from the last axis backward. Otherwise the spatial axes of data_format (3-d to 5-d
/// inputs), the last axis first, as torch.
void paddlePad(Lowering &L) {
  const std::string mode = L.args.get("mode").stringValue;
  PadMode m = padModeOf(L, mode);
  int y = L.in("x");
  std::vector<int64_t> pad = L.args.intList("pad");
  int64_t rank = L.b.meta(y).rank(), count = static_cast<int64_t>(pad.size());
  double value = L.args.scalar("value");
  if (m == PadMode::Constant && count != 2 * (rank - 2)) {
    if (count % 2 || count > 2 * rank)
      badValue(L, "pad must have an even length of at most 2 * rank, not " + std::to_string(count));
    bool fromLeft = count == 2 * rank && L.args.boolValue("pad_from_left_axis");
    for (int64_t i = 0; i < count / 2; ++i)
      y = padAxis(L, y, fromLeft ? i : rank - 1 - i, pad[2 * i], pad[2 * i + 1], m, value);
    return L.out(y);
  }
  if (rank < 3 || rank > 5)
    badValue(L, "mode='" + mode + "' pads 3-d, 4-d and 5-d inputs, not a " + std::to_string(rank) +
                    "-d one");
  std::string format = L.args.isNone("data_format") ? "" : L.args.get("data_format").stringValue;
  std::vector<int64_t> axes = spatialAxes(L, y, format);
  if (pad.size() != 2 * axes.size())
    badValue(L, "pad needs " + std::to_string(2 * axes.size()) +
                    " entries for the spatial "
                    "axes of data_format '" +
                    format + "' (or " + std::to_string(2 * rank) + " in constant mode), not " +
                    std::to_string(pad.size()));
  for (size_t i = 0; i < axes.size(); ++i)
    y = padAxis(L, y, axes[axes.size() - 1 - i], pad[2 * i], pad[2 * i + 1], m, value);
  L.out(y);
}

/// How one axis is resampled: the ratio of input to output positions, and the convention.
struct Resample {
  enum class Kind { Nearest, NearestExact, NearestRounded, Linear, Cubic } kind;
  bool alignCorners = false; // linear, cubic: the corners' centres map onto each other
  bool halfPixel = true;     // linear without align_corners: (dst + 0.5) * ratio - 0.5
};

/// The cubic convolution weight (Keys, A = -0.75, both frameworks) of a tap at distance d.
int cubicWeight(PrimBuilder &b, int d) {
  const double A = -0.75;
  // |d| <= 1: ((A + 2) d - (A + 3)) d^2 + 1; 1 < |d| < 2: ((A d - 5A) d + 8A) d - 4A
  int near = b.binaryScalar(
      Prim::Add,
      b.binary(Prim::Mul, b.binaryScalar(Prim::Sub, b.binaryScalar(Prim::Mul, d, A + 2), A + 3),
               b.binary(Prim::Mul, d, d)),
      1);
  int far = b.binaryScalar(
      Prim::Sub,
      b.binary(Prim::Mul,
               b.binaryScalar(
                   Prim::Add,
                   b.binary(Prim::Mul,
                            b.binaryScalar(Prim::Sub, b.binaryScalar(Prim::Mul, d, A), 5 * A), d),
                   8 * A),
               d),
      4 * A);
  return b.select(b.binaryScalar(Prim::LessEqual, d, 1), near, far);
}

/// x resampled along `axis` to `out` positions with `ratio` input positions per output one,
/// computed in float32 as both frameworks' CPU kernels do. The taps are gathered with the
/// axis in front (one transpose in and one out, whatever the number of taps) and summed with
/// their weights there.
int resampleAxis(PrimBuilder &b, int x, int64_t axis, int64_t out, float ratio,
                 const Resample &how) {
  int64_t n = b.meta(x).shape[axis], rank = b.meta(x).rank();
  bool interpolates = how.kind == Resample::Kind::Linear || how.kind == Resample::Kind::Cubic;
  if (n == out && (!interpolates || ratio == 1.0f))
    return x;
  int dst = b.iota(out, DType::Float32);
  int last = b.fill(static_cast<double>(n - 1), {}, DType::Int64);
  auto clamped = [&](int index) { // min(max(index, 0), n - 1)
    return b.binary(Prim::Min, b.binaryScalar(Prim::Max, index, 0), last);
  };
  auto floorOf = [&](int position) { return b.cast(b.unary(Prim::Floor, position), DType::Int64); };
  int front = axisToFront(b, x, axis);
  auto behind = [&](int y) { return axisFromFront(b, y, axis); };
  if (!interpolates) {
    if (how.kind == Resample::Kind::NearestExact)
      dst = b.binaryScalar(Prim::Add, dst, 0.5);
    int src = b.binaryScalar(Prim::Mul, dst, ratio);
    if (how.kind == Resample::Kind::NearestRounded) // paddle's nearest with align_corners
      src = b.binaryScalar(Prim::Add, src, 0.5);
    return behind(b.gather(front, b.binary(Prim::Min, floorOf(src), last)));
  }
  // The source position: aligned corners or paddle's align_mode=1 scale dst itself; half-pixel
  // centres shift by 0.5 (linear clamps the result at 0, cubic does not).
  int src = b.binaryScalar(Prim::Mul, dst, ratio);
  if (!how.alignCorners && how.halfPixel) {
    src = b.binaryScalar(
        Prim::Sub, b.binaryScalar(Prim::Mul, b.binaryScalar(Prim::Add, dst, 0.5), ratio), 0.5);
    if (how.kind == Resample::Kind::Linear)
      src = b.binaryScalar(Prim::Max, src, 0);
  }
  std::vector<int64_t> along(static_cast<size_t>(rank), 1);
  along[0] = out;
  DType dtype = b.meta(x).dtype;
  auto weighted = [&](int index, int weight) {
    return b.binary(Prim::Mul, b.gather(front, index), b.reshape(b.cast(weight, dtype), along));
  };
  if (how.kind == Resample::Kind::Linear) {
    int i0 = b.binary(Prim::Min, floorOf(src), last);
    int i1 = b.binary(Prim::Min, b.binaryScalar(Prim::Add, i0, 1), last);
    // The weight of the upper neighbour, clamped to [0, 1].
    int lambda = b.binaryScalar(
        Prim::Min,
        b.binaryScalar(Prim::Max, b.binary(Prim::Sub, src, b.cast(i0, DType::Float32)), 0), 1);
    int keep = b.binary(Prim::Sub, scalarLike(b, 1, lambda), lambda);
    return behind(b.binary(Prim::Add, weighted(i0, keep), weighted(i1, lambda)));
  }
  // Cubic: the four taps floor(src) - 1 .. floor(src) + 2, each clamped into the input.
  int base = floorOf(src);
  int t = b.binary(Prim::Sub, src, b.cast(base, DType::Float32));
  int sum = -1;
  for (int k = 0; k < 4; ++k) {
    int distance = b.unary(Prim::Abs, b.binaryScalar(Prim::Sub, t, k - 1)); // |t - (k - 1)|
    int tap = weighted(clamped(b.binaryScalar(Prim::Add, base, k - 1)), cubicWeight(b, distance));
    sum = sum < 0 ? tap : b.binary(Prim::Add, sum, tap);
  }
  return behind(sum);
}

/// The output sizes of a resize from `size` (one for every spatial axis, or one for all) or
/// from `scale_factor` (out = floor(in * scale)); `scales` gets each axis's given scale, or 0
/// where the ratio is in / out.
std::vector<int64_t> resizedSizes(Lowering &L, int x, const std::vector<int64_t> &axes,
                                  std::vector<double> &scales) {
  size_t k = axes.size();
  bool hasSize = !L.args.isNone("size"), hasScale = !L.args.isNone("scale_factor");
  if (hasSize == hasScale)
    badValue(L,
             "takes either size or scale_factor, not " + std::string(hasSize ? "both" : "neither"));
  auto spread = [&](auto values, const char *what) {
    if (values.size() == 1)
      values.assign(k, values[0]);
    if (values.size() != k)
      badValue(L, std::string(what) + " needs 1 or " + std::to_string(k) + " values for " +
                      std::to_string(k) + " spatial dimensions, not " +
                      std::to_string(values.size()));
    return values;
  };
  std::vector<int64_t> sizes;
  scales.assign(k, 0);
  if (hasSize) {
    sizes = spread(L.args.intList("size"), "size");
  } else {
    scales = spread(L.args.floatList("scale_factor"), "scale_factor");
    for (size_t i = 0; i < k; ++i) {
      int64_t n = L.b.meta(x).shape[axes[i]];
      if (isDynamicDim(n))
        badValue(L, "resizing a dynamic dimension is not supported yet");
      if (!(scales[i] > 0))
        badValue(L, "scale_factor must be positive");
      sizes.push_back(static_cast<int64_t>(std::floor(static_cast<double>(n) * scales[i])));
    }
  }
  for (int64_t s : sizes)
    if (s <= 0)
      badValue(L, "the output sizes must be positive, not " + formatShape(sizes));
  return sizes;
}

/// The input positions per output position: given a scale, 1 / scale; else in / out; with
/// aligned corners (in - 1) / (out - 1), or 0 for one output.
float resizeRatio(int64_t in, int64_t out, double scale, bool alignCorners) {
  if (alignCorners)
    return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  if (scale > 0)
    return static_cast<float>(1.0 / scale);
  return static_cast<float>(in) / static_cast<float>(out);
}

/// torch's F.interpolate (and upsample): nearest, nearest-exact, and linear over the one,
/// two or three spatial axes (linear, bilinear, trilinear), one axis after the other.
LowerFn torchInterpolate(std::string fixedMode, bool fixedAlign) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in("input");
    std::string mode = fixedMode.empty() ? L.args.get("mode").stringValue : fixedMode;
    std::vector<int64_t> axes = spatialAxes(L, x, "");
    bool linear = mode == "linear" || mode == "bilinear" || mode == "trilinear";
    bool cubic = mode == "bicubic";
    if ((linear || cubic) && ((mode == "linear") != (axes.size() == 1) ||
                              (mode == "bilinear" || cubic) != (axes.size() == 2) ||
                              (mode == "trilinear") != (axes.size() == 3)))
      badValue(L, "mode='" + mode + "' needs a " +
                      std::to_string(mode == "linear"      ? 3
                                     : mode == "trilinear" ? 5
                                                           : 4) +
                      "-d input, not a " + std::to_string(b.meta(x).rank()) + "-d one");
    if (!linear && !cubic && mode != "nearest" && mode != "nearest-exact" && mode != "area")
      badValue(L, "mode must be nearest, nearest-exact, linear, bilinear, bicubic, trilinear "
                  "or area, not '" +
                      mode + "'");
    linear = linear || cubic; // align_corners applies
    bool align = fixedAlign;
    if (fixedMode.empty() && !L.args.isNone("align_corners")) {
      if (!linear)
        badValue(L, "align_corners applies only to the linear modes");
      align = L.args.boolValue("align_corners");
    }
    if (L.args.signature().find("antialias") && L.args.boolValue("antialias"))
      badValue(L, "antialias=True is not supported yet");
    std::vector<double> scales;
    std::vector<int64_t> sizes = resizedSizes(L, x, axes, scales);
    bool recompute = L.args.signature().find("recompute_scale_factor") &&
                     !L.args.isNone("recompute_scale_factor") &&
                     L.args.boolValue("recompute_scale_factor");
    Resample how{cubic               ? Resample::Kind::Cubic
                 : linear            ? Resample::Kind::Linear
                 : mode == "nearest" ? Resample::Kind::Nearest
                                     : Resample::Kind::NearestExact,
                 align, true};
    x = floatInput(L, "input");
    for (size_t i = 0; i < axes.size() && mode == "area"; ++i) // adaptive average pooling
      x = adaptivePoolAxis(b, x, axes[i], sizes[i], false);
    for (size_t i = 0; i < axes.size() && mode != "area"; ++i) {
      int64_t n = b.meta(x).shape[axes[i]];
      float ratio = resizeRatio(n, sizes[i], recompute ? 0 : scales[i], align);
      x = resampleAxis(b, x, axes[i], sizes[i], ratio, how);
    }
    L.out(x);
  };
}

/// paddle's interpolate (and upsample): nearest (align_corners rounds), and linear with
/// align_mode 0 (half-pixel centres) or 1 (src = dst * ratio).
void paddleInterpolate(Lowering &L) {
  PrimBuilder &b = L.b;
  int x = L.in("x");
  std::string mode = L.args.get("mode").stringValue;
  std::string format = L.args.isNone("data_format") ? "" : L.args.get("data_format").stringValue;
  std::vector<int64_t> axes = spatialAxes(L, x, format);
  bool linear = mode == "linear" || mode == "bilinear" || mode == "trilinear";
  bool cubic = mode == "bicubic";
  if (!linear && !cubic && mode != "nearest" && mode != "area")
    badValue(L, "mode must be nearest, linear, bilinear, bicubic, trilinear or area, not '" + mode +
                    "'");
  bool align = L.args.boolValue("align_corners");
  int64_t alignMode = L.args.intValue("align_mode");
  if (alignMode != 0 && alignMode != 1)
    badValue(L, "align_mode must be 0 or 1");
  std::vector<double> scales;
  std::vector<int64_t> sizes = resizedSizes(L, x, axes, scales);
  Resample how{cubic    ? Resample::Kind::Cubic
               : linear ? Resample::Kind::Linear
               : align  ? Resample::Kind::NearestRounded
                        : Resample::Kind::Nearest,
               align, alignMode == 0 || cubic};
  x = floatInput(L, "x");
  for (size_t i = 0; i < axes.size() && mode == "area"; ++i) // adaptive average pooling
    x = adaptivePoolAxis(b, x, axes[i], sizes[i], false);
  for (size_t i = 0; i < axes.size() && mode != "area"; ++i) {
    float ratio = resizeRatio(b.meta(x).shape[axes[i]], sizes[i], scales[i], align);
    x = resampleAxis(b, x, axes[i], sizes[i], ratio, how);
  }
  L.out(x);
}

/// pixel_shuffle: [N..., C*r*r, H, W] -> [N..., C, H*r, W*r]; pixel_unshuffle the inverse.
/// Channels last (paddle's NHWC): [N, H, W, C*r*r] -> [N, H*r, W*r, C].
LowerFn pixelShuffle(std::string xn, std::string factorName, bool unshuffle, bool paddle) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in(xn);
    std::vector<int64_t> s = b.meta(x).shape;
    int64_t r = L.args.intValue(factorName), rank = b.meta(x).rank();
    bool channelsLast = paddle && L.args.get("data_format").stringValue == "NHWC";
    if (paddle && !channelsLast && L.args.get("data_format").stringValue != "NCHW")
      badValue(L, "data_format must be 'NCHW' or 'NHWC'");
    if (r <= 0)
      badValue(L, "the factor must be positive");
    if (rank < 3 || (paddle && rank != 4))
      badValue(L, "expects a " + std::string(paddle ? "4-d" : "(..., C, H, W)") +
                      " input, not of shape " + formatShape(s));
    for (int64_t d : s)
      if (isDynamicDim(d))
        badValue(L, "a dynamic dimension is not supported yet");
    int64_t ca = channelsLast ? rank - 1 : rank - 3, ha = channelsLast ? rank - 3 : rank - 2,
            wa = ha + 1;
    int64_t c = s[ca], h = s[ha], w = s[wa];
    std::vector<int64_t> lead(s.begin(), s.begin() + (rank - 3));
    int64_t base = static_cast<int64_t>(lead.size());
    auto with = [&](std::vector<int64_t> tail) {
      std::vector<int64_t> shape = lead;
      shape.insert(shape.end(), tail.begin(), tail.end());
      return shape;
    };
    auto perm = [&](std::vector<int64_t> tail) {
      std::vector<int64_t> p;
      for (int64_t i = 0; i < base; ++i)
        p.push_back(i);
      for (int64_t t : tail)
        p.push_back(base + t);
      return p;
    };
    if (!unshuffle) {
      if (c % (r * r))
        badValue(L, std::to_string(c) + " channels are not divisible by the factor squared " +
                        std::to_string(r * r));
      int64_t oc = c / (r * r);
      if (channelsLast) // [H, W, C, r, r] -> [H, r, W, r, C]
        return L.out(
            b.reshape(b.transpose(b.reshape(x, with({h, w, oc, r, r})), perm({0, 3, 1, 4, 2})),
                      with({h * r, w * r, oc})));
      // [C, r, r, H, W] -> [C, H, r, W, r]
      return L.out(
          b.reshape(b.transpose(b.reshape(x, with({oc, r, r, h, w})), perm({0, 3, 1, 4, 2})),
                    with({oc, h * r, w * r})));
    }
    if (h % r || w % r)
      badValue(L, "the height " + std::to_string(h) + " and width " + std::to_string(w) +
                      " must be divisible by the factor " + std::to_string(r));
    if (channelsLast) // [H, r, W, r, C] -> [H, W, C, r, r]
      return L.out(
          b.reshape(b.transpose(b.reshape(x, with({h / r, r, w / r, r, c})), perm({0, 2, 4, 1, 3})),
                    with({h / r, w / r, c * r * r})));
    // [C, H, r, W, r] -> [C, r, r, H, W]
    L.out(b.reshape(b.transpose(b.reshape(x, with({c, h / r, r, w / r, r})), perm({0, 2, 4, 1, 3})),
                    with({c * r * r, h / r, w / r})));
  };
}

/// grid_sample: how taps are weighted and where a position outside the input reads.
struct GridSampling {
  enum class Mode { Bilinear, Nearest, Bicubic } mode;
  enum class Padding { Zeros, Border, Reflection } padding;
  bool alignCorners;
};

/// torch's grid_sampler_compute_source_index without the unnormalization: border clips into
/// [0, size - 1], reflection mirrors about the edges (their centres with aligned corners)
/// and then clips; anything not finite reads nowhere (-100, as torch).
int gridPadded(PrimBuilder &b, int pos, int64_t size, const GridSampling &how) {
  auto clip = [&](int v) {
    return b.binary(Prim::Min, b.binary(Prim::Max, v, scalarLike(b, 0, v)),
                    scalarLike(b, double(size - 1), v));
  };
  if (how.padding == GridSampling::Padding::Reflection) {
    double low = how.alignCorners ? 0 : -1, high = how.alignCorners ? 2 * (size - 1) : 2 * size - 1;
    if (low == high) {
      pos = scalarLike(b, 0, pos);
    } else { // |pos - min| folded by span: even folds forward, odd ones back
      double mid = low / 2, span = (high - low) / 2;
      int in = b.unary(Prim::Abs, b.binaryScalar(Prim::Sub, pos, mid));
      int extra = b.binary(Prim::Fmod, in, scalarLike(b, span, in));
      int flips = b.unary(Prim::Floor, b.binaryScalar(Prim::Div, in, span));
      int even = b.binary(Prim::Equal, b.binary(Prim::Fmod, flips, scalarLike(b, 2, flips)),
                          scalarLike(b, 0, flips));
      pos = b.select(
          even, b.binaryScalar(Prim::Add, extra, mid),
          b.binaryScalar(Prim::Add, b.binary(Prim::Sub, scalarLike(b, span, extra), extra), mid));
    }
  }
  if (how.padding != GridSampling::Padding::Zeros)
    pos = clip(pos);
  int finite = b.binary(Prim::Less, b.unary(Prim::Abs, pos), scalarLike(b, 2147483647.0, pos));
  return b.select(finite, pos, scalarLike(b, -100, pos));
}

/// input [N, C, *spatial] sampled at grid [N, *out, S] (x, y[, z]: the last spatial axis
/// first, each in [-1, 1] over the input): [N, C, *out], as torch's grid_sampler.
int gridSample(Lowering &L, int x, int grid, const GridSampling &how) {
  PrimBuilder &b = L.b;
  const std::vector<int64_t> shape = b.meta(x).shape, gshape = b.meta(grid).shape;
  int64_t s = int64_t(shape.size()) - 2;
  if ((s != 2 && s != 3) || int64_t(gshape.size()) != s + 2 || gshape[0] != shape[0] ||
      gshape.back() != s)
    badValue(L, "needs input [N, C, H, W] with grid [N, H', W', 2], or input [N, C, D, H, W] "
                "with grid [N, D', H', W', 3]; got " +
                    formatShape(shape) + " and " + formatShape(gshape));
  if (how.mode == GridSampling::Mode::Bicubic && s != 2)
    badValue(L, "bicubic sampling needs a 4-d input");
  DType d = b.meta(x).dtype;
  grid = b.cast(grid, d);
  int64_t n = shape[0], c = shape[1], points = 1;
  std::vector<int64_t> out(gshape.begin() + 1, gshape.end() - 1), sizes;
  for (int64_t k = 0; k < s; ++k) { // x first: the last spatial axis
    sizes.push_back(shape[shape.size() - 1 - k]);
    points *= sizes.back();
  }
  std::vector<int64_t> perPoint = {n, 1}; // [N, 1, *out]: broadcast over the channels
  perPoint.insert(perPoint.end(), out.begin(), out.end());
  std::vector<int64_t> result = perPoint;
  result[1] = c;
  std::vector<int> pos; // the input position each output point reads, per axis
  for (int64_t k = 0; k < s; ++k) {
    int g = b.reshape(b.slice(grid, {s + 1}, {k}, {k + 1}, {1}), perPoint);
    double size = double(sizes[k]);
    int p = how.alignCorners // unnormalized: [-1, 1] onto the corners' centres or edges
                ? b.binaryScalar(Prim::Mul,
                                 b.binaryScalar(Prim::Div, b.binaryScalar(Prim::Add, g, 1), 2),
                                 size - 1)
                : b.binaryScalar(
                      Prim::Div,
                      b.binaryScalar(
                          Prim::Sub,
                          b.binaryScalar(Prim::Mul, b.binaryScalar(Prim::Add, g, 1), size), 1),
                      2);
    pos.push_back(how.mode == GridSampling::Mode::Bicubic ? p : gridPadded(b, p, sizes[k], how));
  }
  // The channels' rows of the flat input: (n * C + c) * points.
  std::vector<int64_t> rowShape = {n, c};
  rowShape.resize(result.size(), 1);
  int rows =
      b.reshape(b.binaryScalar(Prim::Mul, b.iota(n * c, DType::Int64), double(points)), rowShape);
  int table = b.reshape(x, {n * c * points});
  // The input at integer positions `at` (float, per axis), zero outside it.
  auto tap = [&](const std::vector<int> &at) {
    int flat = -1, inside = -1;
    int64_t stride = 1;
    for (int64_t k = 0; k < s; ++k) {
      int in =
          b.binary(Prim::LogicalAnd, b.binary(Prim::GreaterEqual, at[k], scalarLike(b, 0, at[k])),
                   b.binary(Prim::LessEqual, at[k], scalarLike(b, double(sizes[k] - 1), at[k])),
                   DType::Bool);
      inside = inside < 0 ? in : b.binary(Prim::LogicalAnd, inside, in, DType::Bool);
      int i = b.cast(at[k], DType::Int64);
      i = stride == 1 ? i : b.binaryScalar(Prim::Mul, i, double(stride));
      flat = flat < 0 ? i : b.binary(Prim::Add, flat, i);
      stride *= sizes[k];
    }
    int index = b.binary(Prim::Add, b.broadcastTo(rows, result), b.broadcastTo(flat, result));
    index = b.select(b.broadcastTo(inside, result), index, b.fill(0, {}, DType::Int64));
    return b.select(b.broadcastTo(inside, result), b.gather(table, index), b.fill(0, {}, d));
  };
  if (how.mode == GridSampling::Mode::Nearest) {
    std::vector<int> at;
    for (int p : pos)
      at.push_back(b.unary(Prim::Round, p)); // half to even, as nearbyint
    return tap(at);
  }
  std::vector<int> low, frac;
  for (int p : pos) {
    low.push_back(b.unary(Prim::Floor, p));
    frac.push_back(b.binary(Prim::Sub, p, low.back()));
  }
  if (how.mode == GridSampling::Mode::Bilinear) { // corners in torch's order: z, y, x
    int sum = -1;
    for (int64_t corner = 0; corner < (int64_t(1) << s); ++corner) {
      std::vector<int> at;
      int w = -1;
      for (int64_t k = 0; k < s; ++k) {
        bool high = (corner >> k) & 1;
        at.push_back(high ? b.binaryScalar(Prim::Add, low[k], 1) : low[k]);
        // The far corner's distance: (low + 1 - p) for the low tap, (p - low) for the high.
        int wk = high ? b.binary(Prim::Sub, pos[k], low[k])
                      : b.binary(Prim::Sub, b.binaryScalar(Prim::Add, low[k], 1), pos[k]);
        w = w < 0 ? wk : b.binary(Prim::Mul, w, wk);
      }
      int term = b.binary(Prim::Mul, tap(at), b.broadcastTo(w, result));
      sum = sum < 0 ? term : b.binary(Prim::Add, sum, term);
    }
    return sum;
  }
  // Bicubic: 4 x 4 taps around the position, each padded on its own; rows of x taps first.
  auto coefficients = [&](int t) {
    return std::vector<int>{cubicWeight(b, b.binaryScalar(Prim::Add, t, 1)), cubicWeight(b, t),
                            cubicWeight(b, b.binary(Prim::Sub, scalarLike(b, 1, t), t)),
                            cubicWeight(b, b.binary(Prim::Sub, scalarLike(b, 2, t), t))};
  };
  std::vector<int> cx = coefficients(frac[0]), cy = coefficients(frac[1]);
  int sum = -1;
  for (int i = 0; i < 4; ++i) {
    int row = -1;
    int y = gridPadded(b, b.binaryScalar(Prim::Add, low[1], double(i - 1)), sizes[1], how);
    for (int j = 0; j < 4; ++j) {
      int xj = gridPadded(b, b.binaryScalar(Prim::Add, low[0], double(j - 1)), sizes[0], how);
      int term = b.binary(Prim::Mul, tap({xj, y}), b.broadcastTo(cx[j], result));
      row = row < 0 ? term : b.binary(Prim::Add, row, term);
    }
    int term = b.binary(Prim::Mul, row, b.broadcastTo(cy[i], result));
    sum = sum < 0 ? term : b.binary(Prim::Add, sum, term);
  }
  return sum;
}

/// torch.grid_sampler(_2d/_3d)'s integer modes, or grid_sample's names; `dims` the spatial
/// dimensions the op requires (0: 2 or 3).
LowerFn gridSampler(bool functional, bool paddle, int64_t dims = 0) {
  return [=](Lowering &L) {
    GridSampling how;
    std::string xn = paddle ? "x" : "input";
    if (functional) {
      std::string mode = L.args.get("mode").stringValue,
                  padding = L.args.get("padding_mode").stringValue;
      if (mode != "bilinear" && mode != "nearest" && (paddle || mode != "bicubic"))
        badValue(L, "mode must be 'bilinear', 'nearest'" +
                        std::string(paddle ? "" : " or 'bicubic'") + ", not '" + mode + "'");
      if (padding != "zeros" && padding != "border" && padding != "reflection")
        badValue(L,
                 "padding_mode must be 'zeros', 'border' or 'reflection', not '" + padding + "'");
      how.mode = mode == "bilinear"  ? GridSampling::Mode::Bilinear
                 : mode == "nearest" ? GridSampling::Mode::Nearest
                                     : GridSampling::Mode::Bicubic;
      how.padding = padding == "zeros"    ? GridSampling::Padding::Zeros
                    : padding == "border" ? GridSampling::Padding::Border
                                          : GridSampling::Padding::Reflection;
      how.alignCorners = !L.args.isNone("align_corners") && L.args.boolValue("align_corners");
    } else {
      int64_t mode = L.args.intValue("interpolation_mode"),
              padding = L.args.intValue("padding_mode");
      if (mode < 0 || mode > 2 || padding < 0 || padding > 2)
        badValue(L, "interpolation_mode and padding_mode are 0, 1 or 2");
      how.mode = static_cast<GridSampling::Mode>(mode);
      how.padding = static_cast<GridSampling::Padding>(padding);
      how.alignCorners = L.args.boolValue("align_corners");
    }
    int x = floatInput(L, xn);
    if (dims && L.b.meta(x).rank() != dims + 2)
      badValue(L, "needs a " + std::to_string(dims + 2) + "-d input, not " +
                      formatShape(L.b.meta(x).shape));
    L.out(gridSample(L, x, L.in("grid"), how));
  };
}

} // namespace

void registerResampling(OpTable &t) {
  t.bind("torch.nn.functional.pad", torchPad);
  t.bind("torch.constant_pad_nd", torchPad);
  t.bind("paddle.nn.functional.pad", paddlePad);
  t.bind("torch.nn.functional.interpolate", torchInterpolate("", false));
  t.bind("torch.nn.functional.upsample_nearest", torchInterpolate("nearest", false));
  t.bind("torch.nn.functional.upsample_bilinear", torchInterpolate("bilinear", true));
  t.bind("paddle.nn.functional.interpolate", paddleInterpolate);
  t.bind("torch.nn.functional.pixel_shuffle",
         pixelShuffle("input", "upscale_factor", false, false));
  t.bind("torch.nn.functional.pixel_unshuffle",
         pixelShuffle("input", "downscale_factor", true, false));
  t.bind("paddle.nn.functional.pixel_shuffle", pixelShuffle("x", "upscale_factor", false, true));
  t.bind("paddle.nn.functional.pixel_unshuffle", pixelShuffle("x", "downscale_factor", true, true));
  t.bind("torch.grid_sampler", gridSampler(false, false));
  t.bind("torch.grid_sampler_2d", gridSampler(false, false, 2));
  t.bind("torch.grid_sampler_3d", gridSampler(false, false, 3));
  t.bind("torch.nn.functional.grid_sample", gridSampler(true, false));
  t.bind("paddle.nn.functional.grid_sample", gridSampler(true, true));
}

} // namespace sotc::ops::lowering
