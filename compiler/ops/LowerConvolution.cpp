//===- LowerConvolution.cpp - Lowerings: conv2d, pooling, batch norm ----------------------===//
//
// 2-d windows over NCHW tensors: the `window` primitive gathers every tap of every output
// position ([N, C, KH, KW, OH, OW], padding read as a constant), one kernel. A convolution is
// the `conv2d` primitive, which a target runs as a library step or expands; the
// expansion reshapes the windows into columns (im2col,
// [N, C*KH*KW, OH*OW]) and multiplies them by the weight reshaped to [OC, C*KH*KW], one GEMM
// (batched over the groups; over the whole batch's columns [C*KH*KW, N*OH*OW] for small maps;
// a depthwise one multiplies the taps by each channel's filter and sums them); pooling reduces
// over the taps.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>

namespace sotc::ops::lowering {
namespace {

/// paddle's data_format: one of `layouts` (channels on axis 1), else refused.
void requireLayout(Lowering &L, std::initializer_list<const char *> layouts) {
  const std::string &format = L.args.get("data_format").stringValue;
  for (const char *l : layouts)
    if (format == l)
      return;
  badValue(L, "data_format='" + format + "' is not supported yet (" + *layouts.begin() + " is)");
}

/// An IntList[1] parameter of a 2-d window op as (h, w): one value for both, or two.
std::array<int64_t, 2> pairOf(Lowering &L, const std::string &name) {
  std::vector<int64_t> v = L.args.intList(name);
  if (v.size() == 1)
    return {v[0], v[0]};
  if (v.size() != 2)
    badValue(L, name + " must have 1 or 2 values, not " + std::to_string(v.size()));
  return {v[0], v[1]};
}

/// Padding as (top, bottom, left, right) from 1, 2 or 4 values.
std::array<int64_t, 4> paddingOf(Lowering &L, const std::string &name) {
  std::vector<int64_t> v = L.args.intList(name);
  if (v.size() == 1)
    return {v[0], v[0], v[0], v[0]};
  if (v.size() == 2)
    return {v[0], v[0], v[1], v[1]};
  if (v.size() != 4)
    badValue(L, name + " must have 1, 2 or 4 values, not " + std::to_string(v.size()));
  return {v[0], v[1], v[2], v[3]};
}

/// A 1-d op's parameter as the (h, w) of a 2-d window over [N, C, 1, L]: h the unit, w the
/// op's one value (`unit` for h: 1 for sizes, 0 for padding).
std::array<int64_t, 2> lineOf(Lowering &L, const std::string &name, int64_t unit) {
  std::vector<int64_t> v = L.args.intList(name);
  if (v.size() != 1)
    badValue(L, name + " must have 1 value, not " + std::to_string(v.size()));
  return {unit, v[0]};
}

/// A 1-d op's input [N, C, L] (torch: or [C, L]) as the 2-d window ops' [N, C, 1, L].
int asImage(Lowering &L, int x) {
  std::vector<int64_t> s = L.b.meta(x).shape;
  if (s.size() != 2 && s.size() != 3)
    badValue(L, "expects an [N, C, L] input, not of shape " + formatShape(s));
  if (s.size() == 2)
    s.insert(s.begin(), 1);
  s.insert(s.end() - 1, 1);
  return L.b.reshape(x, s);
}

/// The 2-d window ops' [N, C, 1, L'] result as the 1-d op's (unbatched like its `like` input).
int asLine(PrimBuilder &b, int y, int like) {
  std::vector<int64_t> s = b.meta(y).shape;
  s.erase(s.begin() + 2);
  if (b.meta(like).rank() == 2)
    s.erase(s.begin());
  return b.reshape(y, s);
}

/// A window parameter as (h, w): the 2-d op's pair, or the 1-d op's value with `unit` for h.
std::array<int64_t, 2> windowParam(Lowering &L, const std::string &name, int64_t unit,
                                   bool line) {
  return line ? lineOf(L, name, unit) : pairOf(L, name);
}

/// Padding as (top, bottom, left, right): the 2-d op's, or the 1-d op's on both line ends.
std::array<int64_t, 4> windowPadding(Lowering &L, bool line) {
  if (!line)
    return paddingOf(L, "padding");
  int64_t p = lineOf(L, "padding", 0)[1];
  return {0, 0, p, p};
}

/// Padding by name, (before, after) per spatial dim: "valid" none; "same" the output's size
/// ceil(size / stride), the extra row or column at the end where the total is odd (torch takes
/// "same" at stride 1 only; paddle takes "SAME" and "VALID" at any stride).
std::vector<int64_t> namedPadding(Lowering &L, const std::vector<int64_t> &sizes,
                                  const std::vector<int64_t> &kernel,
                                  const std::vector<int64_t> &stride,
                                  const std::vector<int64_t> &dilation, bool paddle) {
  const std::string &given = L.args.get("padding").stringValue;
  std::string name = given;
  if (paddle) // paddle's names are case-blind
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
  if (name == "valid")
    return std::vector<int64_t>(2 * sizes.size(), 0);
  if (name != "same")
    badValue(L, std::string("padding must be ") +
                    (paddle ? "'SAME' or 'VALID'" : "'same' or 'valid'") + " or numbers, not '" +
                    given + "'");
  if (!paddle && std::any_of(stride.begin(), stride.end(), [](int64_t s) { return s != 1; }))
    badValue(L, "padding='same' is not supported for strided convolutions");
  std::vector<int64_t> pad(2 * sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t size = sizes[i], out = (size + stride[i] - 1) / stride[i];
    int64_t total =
        std::max<int64_t>((out - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 - size, 0);
    pad[2 * i] = total / 2;
    pad[2 * i + 1] = total - total / 2;
  }
  return pad;
}

/// A 1-d convolution's weight [A, B, K] as the 2-d one's [A, B, 1, K].
int lineWeight(Lowering &L, int weight, const std::string &layout) {
  std::vector<int64_t> ws = L.b.meta(weight).shape;
  if (ws.size() != 3)
    badValue(L, "weight must be " + layout + ", not " + formatShape(ws));
  return L.b.reshape(weight, {ws[0], ws[1], 1, ws[2]});
}

/// The op's 2-d window: kernel, stride, dilation, padding, and the output's size.
struct Window {
  std::array<int64_t, 2> kernel, stride, dilation;
  std::array<int64_t, 4> pad; // with ceil_mode's extra rows and columns at the bottom, right
  std::array<int64_t, 2> ceilExtra = {0, 0};
  int64_t oh = 0, ow = 0;
};

Window windowOf(Lowering &L, int x, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
                std::array<int64_t, 2> dilation, std::array<int64_t, 4> pad, bool ceilMode) {
  const TensorMeta &m = L.b.meta(x);
  if (m.rank() != 4)
    badValue(L, "expects an NCHW tensor, got rank " + std::to_string(m.rank()));
  for (size_t d = 1; d < m.shape.size(); ++d) // a dynamic batch (N) is fine
    if (isDynamicDim(m.shape[d]))
      badValue(L, "needs static channels, height and width");
  Window w{kernel, stride, dilation, pad};
  for (int i = 0; i < 2; ++i)
    if (kernel[i] <= 0 || stride[i] <= 0 || dilation[i] <= 0 || pad[2 * i] < 0 ||
        pad[2 * i + 1] < 0)
      badValue(L, "kernel, stride and dilation must be positive and padding not negative");
  auto out = [&](int i) {
    int64_t span = m.shape[2 + i] + pad[2 * i] + pad[2 * i + 1] - dilation[i] * (kernel[i] - 1);
    if (span < 1 && ceilMode && dilation[i] == 1 && span > 1 - stride[i]) {
      // ceil_mode's one window over an input smaller than the kernel (EfficientNet's
      // AvgPool2d(hidden_dim, ceil_mode=True)): the frameworks clip it to the padded input.
      w.kernel[i] = m.shape[2 + i] + pad[2 * i] + pad[2 * i + 1];
      return int64_t{1};
    }
    if (span < 1)
      badValue(L, "the window is larger than the padded input");
    if (!ceilMode)
      return (span - 1) / stride[i] + 1;
    // ceil_mode: one more window where the last one would be cut short, but never one that
    // starts past the input and the leading padding (PyTorch's and paddle's rule); the cut
    // is read as padding beyond the bottom and right.
    int64_t n = (span - 1 + stride[i] - 1) / stride[i] + 1;
    if ((n - 1) * stride[i] >= m.shape[2 + i] + pad[2 * i])
      --n;
    w.ceilExtra[i] = std::max<int64_t>(0, (n - 1) * stride[i] + 1 - span);
    w.pad[2 * i + 1] += w.ceilExtra[i];
    return n;
  };
  w.oh = out(0), w.ow = out(1);
  return w;
}

/// The windows of x (NCHW) for `w`: [N, C, KH, KW, OH, OW], `padValue` outside x.
int windows(PrimBuilder &b, int x, const Window &w, double padValue) {
  return b.window(x, {w.kernel[0], w.kernel[1]}, {w.stride[0], w.stride[1]},
                  {w.dilation[0], w.dilation[1]}, {w.pad[0], w.pad[1], w.pad[2], w.pad[3]},
                  padValue);
}

/// Output maps of fewer pixels than this run one GEMM over the whole batch's columns.
constexpr int64_t kBatchedColumns = 128;

} // namespace

int expandConvolution(PrimBuilder &b, int x, int weight, const std::vector<int64_t> &strides,
                      const std::vector<int64_t> &dilations, const std::vector<int64_t> &pads,
                      int64_t groups) {
  const TensorMeta &xm = b.meta(x), &wm = b.meta(weight);
  int64_t n = xm.shape[0], cg = wm.shape[1], ocg = wm.shape[0] / groups;
  Window w{{wm.shape[2], wm.shape[3]},
           {strides[0], strides[1]},
           {dilations[0], dilations[1]},
           {pads[0], pads[1], pads[2], pads[3]}};
  for (int i = 0; i < 2; ++i)
    (i ? w.ow : w.oh) = (xm.shape[2 + i] + pads[2 * i] + pads[2 * i + 1] -
                         dilations[i] * (wm.shape[2 + i] - 1) - 1) /
                            strides[i] +
                        1;
  int64_t taps = w.kernel[0] * w.kernel[1], cols = w.oh * w.ow;
  // A 1x1 window with stride 1 and no padding is x itself.
  bool pointwise = taps == 1 && w.stride[0] == 1 && w.stride[1] == 1 && !w.pad[0] && !w.pad[1] &&
                   !w.pad[2] && !w.pad[3];
  if (groups > 1 && cg == 1 && ocg == 1) {
    // Depthwise: each channel its own filter. The taps times the filter, summed: one
    // window kernel and one reduction, not a GEMM per channel.
    int taps4 = b.reshape(weight, {1, groups, w.kernel[0], w.kernel[1], 1, 1});
    return b.reduce(Prim::ReduceSum, b.binary(Prim::Mul, windows(b, x, w, 0), taps4), {2, 3},
                    false);
  }
  // Small maps (ResNet's last stage: 7x7, 49 columns an image) of a static batch: one GEMM
  // over every image's columns side by side, [OC, C*taps] x [C*taps, N*cols], where N GEMMs
  // of a few columns each run far below the machine's peak; the product [OC, N, OH, OW] is
  // transposed back where the convolution's consumer reads it.
  if (groups == 1 && n > 1 && !isDynamicDim(n) && cols < kBatchedColumns) {
    int columns = pointwise ? b.transpose(x, {1, 0, 2, 3})
                            : b.transpose(windows(b, x, w, 0), {1, 2, 3, 0, 4, 5});
    columns = b.reshape(columns, {cg * taps, n * cols});
    int product = b.matmul(b.reshape(weight, {ocg, cg * taps}), columns, false, false);
    return b.transpose(b.reshape(product, {ocg, n, w.oh, w.ow}), {1, 0, 2, 3});
  }
  // Grouped: the groups are one batched GEMM, [G, OC/G, C/G*taps] x [N, G, C/G*taps, cols].
  std::vector<int64_t> columnShape = {n, cg * taps, cols}, weightShape = {ocg, cg * taps};
  if (groups > 1) {
    columnShape.insert(columnShape.begin() + 1, groups);
    weightShape.insert(weightShape.begin(), groups);
  }
  int columns = b.reshape(pointwise ? x : windows(b, x, w, 0), columnShape);
  return b.reshape(b.matmul(b.reshape(weight, weightShape), columns, false, false),
                   {n, ocg * groups, w.oh, w.ow});
}

namespace {

/// The convolution of x [N, C, H, W] with weight [OC, C/G, KH, KW] over window `w`, plus the
/// bias [OC] (-1: none): one conv2d primitive, a library step where the target has one
/// (sotc-sir-expand-convolutions expands the others).
int convolve(PrimBuilder &b, int x, int weight, int bias, const Window &w, int64_t groups) {
  std::vector<int64_t> strides(w.stride.begin(), w.stride.end()),
      dilations(w.dilation.begin(), w.dilation.end()), pads(w.pad.begin(), w.pad.end());
  int y = b.conv2d(x, weight, strides, dilations, pads, groups);
  return bias < 0 ? y : b.binary(Prim::Add, y, b.reshape(bias, {b.meta(y).shape[1], 1, 1}));
}

/// x [N, C, H, W] and weight ([OC, C/G, KH, KW]; transposed: [C, OC/G, KH, KW]) fit each
/// other and `groups`.
void checkConvolution(Lowering &L, int x, int weight, int64_t groups, bool transposed) {
  const TensorMeta &xm = L.b.meta(x), &wm = L.b.meta(weight);
  bool fits = wm.rank() == 4 && xm.rank() == 4 && groups > 0 && xm.shape[1] % groups == 0 &&
              wm.shape[0] % groups == 0 &&
              (transposed ? wm.shape[0] : wm.shape[1] * groups) == xm.shape[1];
  if (!fits)
    badValue(L, "weight " + formatShape(wm.shape) + " and groups=" + std::to_string(groups) +
                    " do not fit input " + formatShape(xm.shape));
}

/// conv2d on NCHW. conv1d (`line`) is the same over [N, C, 1, L] with a [OC, C/G, 1, K] weight.
LowerFn conv2dOp(std::string xn, bool paddle, bool line = false) {
  return [=](Lowering &L) {
    if (paddle)
      requireLayout(L, {line ? "NCL" : "NCHW"});
    PrimBuilder &b = L.b;
    int input = floatInput(L, xn), x = input, weight = L.in("weight");
    if (line) {
      x = asImage(L, x);
      weight = lineWeight(L, weight, "[OC, C/groups, K]");
    }
    int64_t groups = L.args.intValue("groups");
    checkConvolution(L, x, weight, groups, false);
    const TensorMeta &wm = b.meta(weight);
    std::array<int64_t, 2> kernel = {wm.shape[2], wm.shape[3]},
                           stride = windowParam(L, "stride", 1, line),
                           dilation = windowParam(L, "dilation", 1, line);
    std::array<int64_t, 4> pad{};
    if (L.args.get("padding").kind == Arg::Kind::String) {
      std::vector<int64_t> named =
          namedPadding(L, {b.meta(x).shape[2], b.meta(x).shape[3]}, {kernel[0], kernel[1]},
                       {stride[0], stride[1]}, {dilation[0], dilation[1]}, paddle);
      std::copy(named.begin(), named.end(), pad.begin());
    } else {
      pad = windowPadding(L, line);
    }
    Window w = windowOf(L, x, kernel, stride, dilation, pad, false);
    int y = convolve(b, x, weight, L.in("bias"), w, groups);
    L.out(line ? asLine(b, y, input) : y);
  };
}

/// An IntList[1] parameter of a 3-d window op as (d, h, w): one value for all, or three.
std::array<int64_t, 3> tripleOf(Lowering &L, const std::string &name) {
  std::vector<int64_t> v = L.args.intList(name);
  if (v.size() == 1)
    return {v[0], v[0], v[0]};
  if (v.size() != 3)
    badValue(L, name + " must have 1 or 3 values, not " + std::to_string(v.size()));
  return {v[0], v[1], v[2]};
}

/// conv3d on NCDHW as one conv2d: the KD depth taps of each output frame stacked into the
/// channels, [N*OD, C*KD, H, W] (group-major, as the weight [OC, C/G, KD, KH, KW] flattens to
/// [OC, C/G*KD, KH, KW]), then the frames moved back: [N, OC, OD, OH, OW].
LowerFn conv3dOp(std::string xn, bool paddle) {
  return [=](Lowering &L) {
    if (paddle)
      requireLayout(L, {"NCDHW"});
    PrimBuilder &b = L.b;
    int x = floatInput(L, xn), weight = b.cast(L.in("weight"), b.meta(x).dtype);
    std::vector<int64_t> xs = b.meta(x).shape, ws = b.meta(weight).shape;
    int64_t groups = L.args.intValue("groups");
    if (xs.size() != 5 || ws.size() != 5 || groups <= 0 || xs[1] % groups || ws[0] % groups ||
        ws[1] * groups != xs[1])
      badValue(L, "weight " + formatShape(ws) + " and groups=" + std::to_string(groups) +
                      " do not fit input " + formatShape(xs) + " (NCDHW)");
    for (int64_t d : xs)
      if (isDynamicDim(d))
        badValue(L, "needs static sizes");
    std::array<int64_t, 3> stride = tripleOf(L, "stride"), dilation = tripleOf(L, "dilation");
    std::vector<int64_t> pad; // (front, back, top, bottom, left, right)
    if (L.args.get("padding").kind == Arg::Kind::String) {
      pad = namedPadding(L, {xs[2], xs[3], xs[4]}, {ws[2], ws[3], ws[4]},
                         {stride[0], stride[1], stride[2]}, {dilation[0], dilation[1], dilation[2]},
                         paddle);
    } else {
      std::array<int64_t, 3> p = tripleOf(L, "padding");
      pad = {p[0], p[0], p[1], p[1], p[2], p[2]};
    }
    int64_t n = xs[0], c = xs[1], depth = xs[2] + pad[0] + pad[1], kd = ws[2];
    for (int i = 0; i < 3; ++i)
      if (stride[i] <= 0 || dilation[i] <= 0 || pad[2 * i] < 0)
        badValue(L, "stride and dilation must be positive and padding not negative");
    int64_t span = depth - dilation[0] * (kd - 1);
    if (span < 1)
      badValue(L, "the window is larger than the padded input");
    int64_t od = (span - 1) / stride[0] + 1;
    // Zeros before and after along the depth, then one [N, C, OD, H, W] slice per depth tap.
    auto zeros = [&](int64_t d) { return b.fill(0, {n, c, d, xs[3], xs[4]}, b.meta(x).dtype); };
    std::vector<int> parts;
    if (pad[0])
      parts.push_back(zeros(pad[0]));
    parts.push_back(x);
    if (pad[1])
      parts.push_back(zeros(pad[1]));
    int padded = parts.size() == 1 ? x : b.concat(parts, 2);
    std::vector<int> taps;
    for (int64_t t = 0; t < kd; ++t) {
      int tap = b.slice(padded, {2}, {t * dilation[0]},
                        {t * dilation[0] + (od - 1) * stride[0] + 1}, {stride[0]});
      taps.push_back(b.reshape(tap, {n, c, 1, od, xs[3], xs[4]}));
    }
    int stacked = kd == 1 ? taps[0] : b.concat(taps, 2); // [N, C, KD, OD, H, W]
    int frames =
        b.reshape(b.transpose(stacked, {0, 3, 1, 2, 4, 5}), {n * od, c * kd, xs[3], xs[4]});
    int filters = b.reshape(weight, {ws[0], ws[1] * kd, ws[3], ws[4]});
    Window w = windowOf(L, frames, {ws[3], ws[4]}, {stride[1], stride[2]},
                        {dilation[1], dilation[2]}, {pad[2], pad[3], pad[4], pad[5]}, false);
    int y = convolve(b, frames, filters, L.in("bias"), w, groups); // [N*OD, OC, OH, OW]
    L.out(b.transpose(b.reshape(y, {n, od, ws[0], w.oh, w.ow}), {0, 2, 1, 3, 4}));
  };
}

/// conv_transpose2d: x with stride - 1 zeros between its elements, padded by
/// dilation * (k - 1) - padding (+ output_padding after; a negative pad crops), convolved with
/// stride 1 by the weight [C, OC/G, KH, KW] flipped and transposed to [OC, C/G, KH, KW].
/// conv_transpose1d (`line`) over [N, C, 1, L].
LowerFn convTranspose2dOp(std::string xn, bool paddle, bool line) {
  return [=](Lowering &L) {
    if (paddle)
      requireLayout(L, {line ? "NCL" : "NCHW"});
    PrimBuilder &b = L.b;
    int input = floatInput(L, xn), x = input, weight = b.cast(L.in("weight"), b.meta(input).dtype);
    if (line) {
      x = asImage(L, x);
      weight = lineWeight(L, weight, "[C, OC/groups, K]");
    }
    int64_t groups = L.args.intValue("groups");
    checkConvolution(L, x, weight, groups, true);
    auto param = [&](const std::string &name, int64_t unit) {
      return windowParam(L, name, unit, line);
    };
    std::array<int64_t, 2> stride = param("stride", 1), dilation = param("dilation", 1),
                           padding = param("padding", 0), extra = param("output_padding", 0);
    if (line)
      padding[0] = extra[0] = 0;
    std::vector<int64_t> ws = b.meta(weight).shape, xs = b.meta(x).shape;
    if (paddle && !L.args.isNone("output_size")) { // paddle: the size picks output_padding
      std::array<int64_t, 2> size = param("output_size", 1);
      if (line)
        size[0] = 1;
      for (int i = 0; i < 2; ++i)
        extra[i] = size[i] - ((xs[2 + i] - 1) * stride[i] - 2 * padding[i] +
                              dilation[i] * (ws[2 + i] - 1) + 1);
    }
    for (int i = 0; i < 2; ++i)
      if (stride[i] <= 0 || dilation[i] <= 0 || padding[i] < 0 || extra[i] < 0 ||
          (extra[i] >= stride[i] && extra[i] >= dilation[i]))
        badValue(L, "stride and dilation must be positive, padding not negative, and "
                    "output_padding smaller than stride or dilation");
    // Zeros between the elements: [N, C, H, 1, W, 1] widened to [.., s, .., s], flattened.
    int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3];
    if (stride[0] > 1 || stride[1] > 1) {
      int y = b.reshape(x, {n, c, h, 1, wd, 1});
      if (stride[0] > 1)
        y = b.concat({y, b.fill(0, {n, c, h, stride[0] - 1, wd, 1}, b.meta(y).dtype)}, 3);
      if (stride[1] > 1)
        y = b.concat({y, b.fill(0, {n, c, h, stride[0], wd, stride[1] - 1}, b.meta(y).dtype)}, 5);
      y = b.reshape(y, {n, c, h * stride[0], wd * stride[1]});
      x = b.slice(y, {2, 3}, {0, 0}, {(h - 1) * stride[0] + 1, (wd - 1) * stride[1] + 1}, {1, 1});
    }
    // The padding each side: negative parts crop first, the rest is the window's padding.
    std::array<int64_t, 4> pad;
    for (int i = 0; i < 2; ++i) {
      int64_t before = dilation[i] * (ws[2 + i] - 1) - padding[i], after = before + extra[i];
      int64_t size = b.meta(x).shape[2 + i];
      if (before < 0 || after < 0) {
        int64_t from = std::max<int64_t>(0, -before), to = size - std::max<int64_t>(0, -after);
        if (to <= from)
          badValue(L, "the padding crops the whole input");
        x = b.slice(x, {2 + i}, {from}, {to}, {1});
      }
      pad[2 * i] = std::max<int64_t>(0, before), pad[2 * i + 1] = std::max<int64_t>(0, after);
    }
    // The filters flipped in both spatial axes, each group's [C/G, OC/G] swapped.
    for (int64_t axis : {2, 3}) {
      int64_t k = ws[axis];
      if (k > 1) // position k - 1 - i
        weight =
            gatherAlong(b, weight, axis,
                        b.binary(Prim::Sub, b.fill(static_cast<double>(k - 1), {k}, DType::Int64),
                                 b.iota(k, DType::Int64)));
    }
    int64_t cg = ws[0] / groups, ocg = ws[1];
    weight =
        b.reshape(b.transpose(b.reshape(weight, {groups, cg, ocg, ws[2], ws[3]}), {0, 2, 1, 3, 4}),
                  {groups * ocg, cg, ws[2], ws[3]});
    Window w = windowOf(L, x, {ws[2], ws[3]}, {1, 1}, dilation, pad, false);
    int y = convolve(b, x, weight, L.in("bias"), w, groups);
    L.out(line ? asLine(b, y, input) : y);
  };
}

/// max or average over the window's taps. Average divides by the window's size, or, with
/// `exclusive`, by how many of its taps fall inside the input (the same taps over a padded
/// tensor of ones).
enum class Pool { Max, Avg };

/// Whether an average pool divides by the taps on the input only (paddle's `exclusive`,
/// torch's `count_include_pad=False`).
bool exclusiveOf(Lowering &L, bool paddle) {
  const Signature &s = L.args.signature();
  if (paddle)
    return s.find("exclusive") && L.args.boolValue("exclusive");
  return s.find("count_include_pad") && !L.args.boolValue("count_include_pad");
}

/// divisor_override where the op has one and it is given.
std::optional<double> divisorOverride(Lowering &L) {
  if (L.args.signature().find("divisor_override") && !L.args.isNone("divisor_override"))
    return L.args.scalar("divisor_override");
  return std::nullopt;
}

/// x's windows `w` reduced: the max, or the sum divided by `divisor` if given, else by the
/// taps counted: those on the input (exclusive) or on the input and its padding, never those
/// ceil_mode adds.
int poolWindows(PrimBuilder &b, int x, Pool kind, const Window &w, bool exclusive,
                std::optional<double> divisor) {
  double fill = kind == Pool::Max ? -std::numeric_limits<double>::infinity() : 0.0;
  int y = b.reduce(kind == Pool::Max ? Prim::ReduceMax : Prim::ReduceSum, windows(b, x, w, fill),
                   {2, 3}, false);
  if (kind == Pool::Max)
    return y;
  if (divisor)
    return b.binaryScalar(Prim::Div, y, *divisor);
  bool padding = w.pad[0] || w.pad[1] || w.pad[2] || w.pad[3];
  bool ceilTaps = w.ceilExtra[0] || w.ceilExtra[1];
  if (!padding || (!exclusive && !ceilTaps))
    return b.binaryScalar(Prim::Div, y, static_cast<double>(w.kernel[0] * w.kernel[1]));
  // The counted taps: the same windows over ones, zeros where not counted.
  const TensorMeta &m = b.meta(x);
  Window counted = w;
  std::array<int64_t, 2> size = {m.shape[2], m.shape[3]};
  if (!exclusive)
    for (int i = 0; i < 2; ++i) {
      size[i] += w.pad[2 * i] + w.pad[2 * i + 1] - w.ceilExtra[i];
      counted.pad[2 * i] = 0, counted.pad[2 * i + 1] = w.ceilExtra[i];
    }
  int ones = b.fill(1, {1, 1, size[0], size[1]}, m.dtype);
  return b.binary(Prim::Div, y,
                  b.reduce(Prim::ReduceSum, windows(b, ones, counted, 0), {2, 3}, false));
}

LowerFn pool2dOp(Pool kind, std::string xn, std::string kernelName, bool paddle,
                 bool line = false) {
  return [=](Lowering &L) {
    if (paddle && !line)
      requireLayout(L, {"NCHW"});
    if (!paddle && kind == Pool::Max && L.args.boolValue("return_indices"))
      badValue(L, "return_indices=True is not supported");
    if (paddle && kind == Pool::Max && L.args.boolValue("return_mask"))
      badValue(L, "return_mask=True is not supported");
    PrimBuilder &b = L.b;
    int input = floatInput(L, xn), x = line ? asImage(L, input) : input;
    auto pairOrLine = [&](const std::string &name) { return windowParam(L, name, 1, line); };
    std::array<int64_t, 2> kernel = pairOrLine(kernelName);
    std::array<int64_t, 2> stride = L.args.isNone("stride") ? kernel : pairOrLine("stride");
    std::array<int64_t, 2> dilation =
        kind == Pool::Max && !paddle ? pairOrLine("dilation") : std::array<int64_t, 2>{1, 1};
    Window w = windowOf(L, x, kernel, stride, dilation, windowPadding(L, line),
                        L.args.boolValue("ceil_mode"));
    int y = poolWindows(b, x, kind, w, exclusiveOf(L, paddle), divisorOverride(L));
    L.out(line ? asLine(b, y, input) : y);
  };
}

/// max_pool3d / avg_pool3d over NCDHW, separably: the 2-d pooling of every frame, then the
/// 1-d one along the depth. Exact for both: a 3-d window's max is the max of its frames',
/// and its divisor the product of the per-axis counts (padding and ceil_mode's taps too).
LowerFn pool3dOp(Pool kind, std::string xn, bool paddle) {
  return [=](Lowering &L) {
    if (paddle)
      requireLayout(L, {"NCDHW"});
    if (kind == Pool::Max && L.args.boolValue(paddle ? "return_mask" : "return_indices"))
      badValue(L,
               std::string(paddle ? "return_mask" : "return_indices") + "=True is not supported");
    PrimBuilder &b = L.b;
    int x = floatInput(L, xn);
    std::vector<int64_t> xs = b.meta(x).shape;
    if (xs.size() != 5)
      badValue(L, "expects an NCDHW tensor, got rank " + std::to_string(xs.size()));
    std::array<int64_t, 3> kernel = tripleOf(L, "kernel_size"),
                           stride = L.args.isNone("stride") ? kernel : tripleOf(L, "stride"),
                           pad = tripleOf(L, "padding"), dilation = {1, 1, 1};
    if (kind == Pool::Max && !paddle)
      dilation = tripleOf(L, "dilation");
    bool ceil = L.args.boolValue("ceil_mode"), exclusive = exclusiveOf(L, paddle);
    std::optional<double> divisor = divisorOverride(L);
    int frames = b.reshape(x, {xs[0], xs[1] * xs[2], xs[3], xs[4]});
    Window hw = windowOf(L, frames, {kernel[1], kernel[2]}, {stride[1], stride[2]},
                         {dilation[1], dilation[2]}, {pad[1], pad[1], pad[2], pad[2]}, ceil);
    int y = poolWindows(b, frames, kind, hw, exclusive, divisor ? std::optional(1.0) : divisor);
    int rows = b.reshape(y, {xs[0], xs[1], xs[2], hw.oh * hw.ow});
    Window depth = windowOf(L, rows, {kernel[0], 1}, {stride[0], 1}, {dilation[0], 1},
                            {pad[0], pad[0], 0, 0}, ceil);
    y = poolWindows(b, rows, kind, depth, exclusive, divisor);
    L.out(b.reshape(y, {xs[0], xs[1], depth.oh, hw.oh, hw.ow}));
  };
}

/// Adaptive pooling over the last `dims` axes (the spatial ones; paddle's NHWC for 2-d):
/// output_size gives each axis's bins (one value: all). torch takes an unbatched input too.
LowerFn adaptivePoolOp(std::string xn, int dims, bool max, bool paddle) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = floatInput(L, xn);
    int64_t rank = b.meta(x).rank();
    bool channelsLast = paddle && L.args.signature().find("data_format") &&
                        L.args.get("data_format").stringValue.back() == 'C';
    if (rank != dims + 2 && (paddle || rank != dims + 1))
      badValue(L, "expects a " + std::to_string(dims + 2) + "-d input" +
                      (paddle ? "" : " (or an unbatched " + std::to_string(dims + 1) + "-d one)") +
                      ", not of shape " + formatShape(b.meta(x).shape));
    const char *flag = paddle ? "return_mask" : "return_indices";
    if (max && L.args.boolValue(flag))
      badValue(L, std::string(flag) + "=True is not supported yet");
    std::vector<int64_t> sizes = L.args.intList("output_size");
    if (sizes.size() == 1)
      sizes.assign(static_cast<size_t>(dims), sizes[0]);
    if (static_cast<int>(sizes.size()) != dims)
      badValue(L, "output_size needs 1 or " + std::to_string(dims) + " values");
    std::vector<int64_t> axes, shape = b.meta(x).shape, split, inner;
    bool equalBins = true;
    for (int d = 0; d < dims; ++d) {
      axes.push_back(channelsLast ? rank - 1 - dims + d : rank - dims + d);
      if (sizes[d] <= 0)
        badValue(L, "output_size must be positive");
      equalBins &= shape[axes.back()] % sizes[d] == 0;
    }
    if (!equalBins) { // axis by axis
      for (int d = 0; d < dims; ++d)
        x = adaptivePoolAxis(b, x, axes[d], sizes[d], max);
      return L.out(x);
    }
    // Equal bins on every axis: each split into (bins, bin), all bins reduced at once (one
    // kernel: global pooling is one reduction).
    for (int64_t a = 0; a < rank; ++a) {
      auto d = std::find(axes.begin(), axes.end(), a) - axes.begin();
      if (d == static_cast<long>(axes.size())) {
        split.push_back(shape[a]);
        continue;
      }
      split.push_back(sizes[d]);
      split.push_back(shape[a] / sizes[d]);
      inner.push_back(static_cast<int64_t>(split.size()) - 1);
    }
    int bins = b.reshape(x, split);
    L.out(max ? b.reduce(Prim::ReduceMax, bins, inner, false) : mean(L, bins, inner, false));
  };
}

/// Inference batch norm over axis 1: (x - mean) * rsqrt(var + eps) * weight + bias.
LowerFn batchNormOp(std::string xn, std::string eps, bool paddle) {
  return [=](Lowering &L) {
    bool useGlobal = paddle && !L.args.isNone("use_global_stats") &&
                     L.args.boolValue("use_global_stats");
    bool running = L.in("running_mean") >= 0 && L.in("running_var") >= 0;
    // training=True without running statistics normalizes with the batch's and changes
    // nothing else (a BatchNorm with track_running_stats=False, timm's weight standardization);
    // with them it would also update them, which a compiled function does not.
    bool batchStats = L.args.boolValue("training") && !useGlobal;
    if (batchStats && (L.in("running_mean") >= 0 || L.in("running_var") >= 0))
      badValue(L, "training=True updates the running statistics as it normalizes with the "
                  "batch's, which a compiled function does not (inference: training=False; "
                  "without running statistics it normalizes with the batch's alone)");
    if (!batchStats && !running)
      badValue(L, "needs the running statistics where training=False");
    if (paddle)
      requireLayout(L, {"NCHW", "NCL", "NC", "NCDHW"});
    PrimBuilder &b = L.b;
    int x = floatInput(L, xn);
    int64_t rank = b.meta(x).rank();
    if (rank < 2)
      badValue(L, "expects at least 2 dimensions (channels on axis 1)");
    int64_t c = b.meta(x).shape[1];
    std::vector<int64_t> perChannel(static_cast<size_t>(rank - 1), 1);
    perChannel[0] = c; // [C, 1, 1] broadcasts over the axes after the channels
    auto channel = [&](const std::string &name) { return b.reshape(L.in(name), perChannel); };
    int centered = -1, var;
    if (batchStats) { // the biased variance over every axis but the channels', as torch's
      std::vector<int64_t> axes = {0};
      for (int64_t d = 2; d < rank; ++d)
        axes.push_back(d);
      centered = b.binary(Prim::Sub, x, mean(L, x, axes, true));
      var = mean(L, b.binary(Prim::Mul, centered, centered), axes, true);
    } else {
      var = channel("running_var");
    }
    int inv = b.unary(Prim::Rsqrt, b.binaryScalar(Prim::Add, var, L.args.scalar(eps)));
    if (L.in("weight") >= 0)
      inv = b.binary(Prim::Mul, inv, channel("weight"));
    if (!batchStats)
      centered = b.binary(Prim::Sub, x, channel("running_mean"));
    int y = b.binary(Prim::Mul, centered, inv);
    if (L.in("bias") >= 0)
      y = b.binary(Prim::Add, y, channel("bias"));
    L.out(y);
  };
}

/// unfold (im2col): the windows of x [N, C, H, W] as columns [N, C*KH*KW, OH*OW]; torch's
/// unbatched [C, H, W] gives [C*KH*KW, OH*OW]. paddle's four paddings are (top, left,
/// bottom, right).
LowerFn unfoldOp(std::string xn, std::string kernel, std::string stride, std::string padding,
                 std::string dilation, bool paddle) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in(xn);
    bool unbatched = !paddle && b.meta(x).rank() == 3;
    if (unbatched)
      x = b.reshape(x, unsqueezed(L, b.meta(x).shape, {0}));
    std::array<int64_t, 4> pad = paddingOf(L, padding);
    if (paddle && L.args.intList(padding).size() == 4)
      pad = {pad[0], pad[2], pad[1], pad[3]};
    Window w =
        windowOf(L, x, pairOf(L, kernel), pairOf(L, stride), pairOf(L, dilation), pad, false);
    std::vector<int64_t> s = b.meta(x).shape; // a copy: adding ops moves the metadata
    int columns =
        b.reshape(windows(b, x, w, 0), {s[0], s[1] * w.kernel[0] * w.kernel[1], w.oh * w.ow});
    L.out(unbatched ? b.reshape(columns, {s[1] * w.kernel[0] * w.kernel[1], w.oh * w.ow})
                    : columns);
  };
}

/// fold (col2im), unfold's adjoint: columns [N, C*KH*KW, L] summed into [N, C, H, W] where
/// their windows lie (torch's unbatched [C*KH*KW, L] gives [C, H, W]). Each kernel tap's
/// [N, C, LH, LW] is spread by the stride (zeros between), placed at the tap's offset in the
/// padded image, and the taps are added; the padding is cropped.
LowerFn foldOp(std::string xn, std::string size, std::string kernel, std::string stride,
               std::string padding, std::string dilation, bool paddle) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = L.in(xn);
    bool unbatched = !paddle && b.meta(x).rank() == 2;
    if (unbatched)
      x = b.reshape(x, unsqueezed(L, b.meta(x).shape, {0}));
    std::vector<int64_t> xs = b.meta(x).shape;
    if (xs.size() != 3 || std::any_of(xs.begin(), xs.end(), [](int64_t d) { return isDynamicDim(d); }))
      badValue(L, "expects static columns [N, C*KH*KW, L]");
    std::array<int64_t, 2> out = pairOf(L, size), k = pairOf(L, kernel), s = pairOf(L, stride),
                           d = pairOf(L, dilation);
    std::array<int64_t, 4> pad = paddingOf(L, padding);
    if (paddle && L.args.intList(padding).size() == 4)
      pad = {pad[0], pad[2], pad[1], pad[3]};
    std::array<int64_t, 2> lines{}, canvas{};
    for (int i = 0; i < 2; ++i) {
      if (k[i] <= 0 || s[i] <= 0 || d[i] <= 0 || pad[2 * i] < 0 || pad[2 * i + 1] < 0)
        badValue(L, "kernel, stride and dilation must be positive and padding not negative");
      canvas[i] = out[i] + pad[2 * i] + pad[2 * i + 1];
      lines[i] = (canvas[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
      if (lines[i] < 1)
        badValue(L, "the window is larger than the padded output");
    }
    int64_t n = xs[0], taps = k[0] * k[1];
    if (xs[1] % taps || lines[0] * lines[1] != xs[2])
      badValue(L, "expects [N, C*" + std::to_string(taps) + ", " +
                      std::to_string(lines[0] * lines[1]) + "] columns for these sizes, got [" +
                      std::to_string(xs[0]) + ", " + std::to_string(xs[1]) + ", " +
                      std::to_string(xs[2]) + "]");
    int64_t c = xs[1] / taps;
    DType dtype = b.meta(x).dtype;
    int cols = b.reshape(x, {n, c, k[0], k[1], lines[0], lines[1]});
    // Zeros around `y` along `axis`: `before` in front, up to `total` elements.
    auto place = [&](int y, int64_t axis, int64_t before, int64_t total) {
      std::vector<int> parts;
      std::vector<int64_t> shape = b.meta(y).shape;
      int64_t after = total - before - shape[axis];
      for (int64_t width : {before, int64_t{-1}, after}) {
        if (width < 0) {
          parts.push_back(y);
        } else if (width > 0) {
          shape[axis] = width;
          parts.push_back(b.fill(0, shape, dtype));
        }
      }
      return parts.size() == 1 ? y : b.concat(parts, axis);
    };
    int sum = -1;
    for (int64_t i = 0; i < k[0]; ++i)
      for (int64_t j = 0; j < k[1]; ++j) {
        int tap = b.reshape(b.slice(cols, {2, 3}, {i, j}, {i + 1, j + 1}, {1, 1}),
                            {n, c, lines[0], 1, lines[1], 1});
        if (s[0] > 1)
          tap = b.concat({tap, b.fill(0, {n, c, lines[0], s[0] - 1, lines[1], 1}, dtype)}, 3);
        if (s[1] > 1)
          tap = b.concat({tap, b.fill(0, {n, c, lines[0], s[0], lines[1], s[1] - 1}, dtype)}, 5);
        tap = b.reshape(tap, {n, c, lines[0] * s[0], lines[1] * s[1]});
        tap = b.slice(tap, {2, 3}, {0, 0}, {(lines[0] - 1) * s[0] + 1, (lines[1] - 1) * s[1] + 1},
                      {1, 1});
        tap = place(place(tap, 2, i * d[0], canvas[0]), 3, j * d[1], canvas[1]);
        sum = sum < 0 ? tap : b.binary(Prim::Add, sum, tap);
      }
    sum = b.slice(sum, {2, 3}, {pad[0], pad[2]}, {pad[0] + out[0], pad[2] + out[1]}, {1, 1});
    L.out(unbatched ? b.reshape(sum, {c, out[0], out[1]}) : sum);
  };
}

} // namespace

int adaptivePoolAxis(PrimBuilder &b, int x, int64_t axis, int64_t out, bool max) {
  std::vector<int64_t> shape = b.meta(x).shape;
  int64_t n = shape[axis], rank = b.meta(x).rank();
  Prim reduction = max ? Prim::ReduceMax : Prim::ReduceSum;
  if (n == out)
    return x;
  if (n % out == 0) { // equal bins: the axis split in two, the inner part reduced
    std::vector<int64_t> split = shape;
    split[axis] = n / out;
    split.insert(split.begin() + axis, out);
    int r = b.reduce(reduction, b.reshape(x, split), {axis + 1}, false);
    return max ? r : b.binaryScalar(Prim::Div, r, static_cast<double>(n / out));
  }
  // Bin i covers [floor(i n / out), ceil((i + 1) n / out)): the k-th element of every bin is
  // gathered with the axis in front, masked where the bin is shorter, and combined.
  int front = axisToFront(b, x, axis);
  int i = b.iota(out, DType::Int64);
  int start = b.binaryScalar(Prim::FloorDiv, b.binaryScalar(Prim::Mul, i, static_cast<double>(n)),
                             static_cast<double>(out));
  int end =
      b.binaryScalar(Prim::FloorDiv,
                     b.binaryScalar(Prim::Add, b.binaryScalar(Prim::Mul, i, static_cast<double>(n)),
                                    static_cast<double>(n + out - 1)),
                     static_cast<double>(out));
  std::vector<int64_t> along(static_cast<size_t>(rank), 1);
  along[0] = out;
  DType dtype = b.meta(x).dtype;
  int64_t longest = (n + out - 1) / out + 1;
  int last = b.fill(static_cast<double>(n - 1), {}, DType::Int64);
  int acc = -1;
  for (int64_t k = 0; k < longest; ++k) {
    int index = b.binaryScalar(Prim::Add, start, static_cast<double>(k));
    int inside = b.reshape(b.binary(Prim::Less, index, end), along);
    int tap = b.gather(front, b.binary(Prim::Min, index, last));
    tap = b.select(inside, tap, b.fill(max ? -INFINITY : 0, {}, dtype));
    acc = acc < 0 ? tap : b.binary(max ? Prim::Max : Prim::Add, acc, tap);
  }
  if (!max)
    acc =
        b.binary(Prim::Div, acc, b.reshape(b.cast(b.binary(Prim::Sub, end, start), dtype), along));
  return axisFromFront(b, acc, axis);
}

void registerConvolution(OpTable &t) {
  t.bind("torch.nn.functional.unfold",
         unfoldOp("input", "kernel_size", "stride", "padding", "dilation", false));
  t.bind("paddle.nn.functional.unfold",
         unfoldOp("x", "kernel_sizes", "strides", "paddings", "dilations", true));
  t.bind("torch.nn.functional.fold", foldOp("input", "output_size", "kernel_size", "stride",
                                            "padding", "dilation", false));
  t.bind("paddle.nn.functional.fold", foldOp("x", "output_sizes", "kernel_sizes", "strides",
                                             "paddings", "dilations", true));
  const std::string pf = "paddle.nn.functional.", tf = "torch.nn.functional.";
  t.bind(pf + "conv2d", conv2dOp("x", true));
  t.bind(tf + "conv2d", conv2dOp("input", false));
  t.bind(pf + "conv1d", conv2dOp("x", true, true));
  t.bind(pf + "conv2d_transpose", convTranspose2dOp("x", true, false));
  t.bind(tf + "conv_transpose2d", convTranspose2dOp("input", false, false));
  t.bind(pf + "conv1d_transpose", convTranspose2dOp("x", true, true));
  t.bind(tf + "conv_transpose1d", convTranspose2dOp("input", false, true));
  t.bind(tf + "conv1d", conv2dOp("input", false, true));
  t.bind(pf + "conv3d", conv3dOp("x", true));
  t.bind(tf + "conv3d", conv3dOp("input", false));
  t.bind(pf + "max_pool3d", pool3dOp(Pool::Max, "x", true));
  t.bind(tf + "max_pool3d", pool3dOp(Pool::Max, "input", false));
  t.bind(pf + "avg_pool3d", pool3dOp(Pool::Avg, "x", true));
  t.bind(tf + "avg_pool3d", pool3dOp(Pool::Avg, "input", false));
  t.bind(pf + "max_pool1d", pool2dOp(Pool::Max, "x", "kernel_size", true, true));
  t.bind(tf + "max_pool1d", pool2dOp(Pool::Max, "input", "kernel_size", false, true));
  t.bind(pf + "avg_pool1d", pool2dOp(Pool::Avg, "x", "kernel_size", true, true));
  t.bind(tf + "avg_pool1d", pool2dOp(Pool::Avg, "input", "kernel_size", false, true));
  t.bind(pf + "max_pool2d", pool2dOp(Pool::Max, "x", "kernel_size", true));
  t.bind(tf + "max_pool2d", pool2dOp(Pool::Max, "input", "kernel_size", false));
  t.bind(pf + "avg_pool2d", pool2dOp(Pool::Avg, "x", "kernel_size", true));
  t.bind(tf + "avg_pool2d", pool2dOp(Pool::Avg, "input", "kernel_size", false));
  for (int dims : {1, 2, 3}) {
    std::string n = std::to_string(dims) + "d";
    for (bool max : {false, true}) {
      std::string kind = max ? "adaptive_max_pool" : "adaptive_avg_pool";
      t.bind(pf + kind + n, adaptivePoolOp("x", dims, max, true));
      t.bind(tf + kind + n, adaptivePoolOp("input", dims, max, false));
    }
  }
  t.bind(pf + "batch_norm", batchNormOp("x", "epsilon", true));
  t.bind(tf + "batch_norm", batchNormOp("input", "eps", false));
}

} // namespace sotc::ops::lowering
