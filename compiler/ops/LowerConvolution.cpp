//===- LowerConvolution.cpp - Lowerings: conv2d, pooling, batch norm ----------------------===//
//
// 2-d windows over NCHW tensors: the `window` primitive gathers every tap of every output
// position ([N, C, KH, KW, OH, OW], padding read as a constant), one kernel. A convolution
// reshapes the windows into columns (im2col, [N, C*KH*KW, OH*OW]) and multiplies them by the
// weight reshaped to [OC, C*KH*KW], one GEMM (batched over the groups; a depthwise one
// multiplies the taps by each channel's filter and sums them); pooling reduces over the taps.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

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
  for (int64_t d : m.shape)
    if (d == kDynamic)
      badValue(L, "needs static shapes");
  Window w{kernel, stride, dilation, pad};
  for (int i = 0; i < 2; ++i)
    if (kernel[i] <= 0 || stride[i] <= 0 || dilation[i] <= 0 || pad[2 * i] < 0 ||
        pad[2 * i + 1] < 0)
      badValue(L, "kernel, stride and dilation must be positive and padding not negative");
  auto out = [&](int i) {
    int64_t span = m.shape[2 + i] + pad[2 * i] + pad[2 * i + 1] - dilation[i] * (kernel[i] - 1);
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

/// conv2d on NCHW: im2col columns times the weight, per group, then the bias.
LowerFn conv2dOp(std::string xn, bool paddle) {
  return [=](Lowering &L) {
    if (paddle)
      requireLayout(L, {"NCHW"});
    PrimBuilder &b = L.b;
    int x = floatInput(L, xn), weight = L.in("weight");
    const TensorMeta &xm = b.meta(x), &wm = b.meta(weight);
    int64_t groups = L.args.intValue("groups");
    if (wm.rank() != 4 || groups <= 0 || xm.rank() != 4 || xm.shape[1] % groups ||
        wm.shape[0] % groups || wm.shape[1] * groups != xm.shape[1])
      badValue(L, "weight " + formatShape(wm.shape) + " and groups=" + std::to_string(groups) +
                      " do not fit input " + formatShape(xm.shape));
    Window w = windowOf(L, x, {wm.shape[2], wm.shape[3]}, pairOf(L, "stride"),
                        pairOf(L, "dilation"), paddingOf(L, "padding"), false);
    int64_t n = xm.shape[0], cg = wm.shape[1], ocg = wm.shape[0] / groups;
    int64_t taps = w.kernel[0] * w.kernel[1], cols = w.oh * w.ow;
    // A 1x1 window with stride 1 and no padding is x itself.
    bool pointwise = taps == 1 && w.stride[0] == 1 && w.stride[1] == 1 && !w.pad[0] &&
                     !w.pad[1] && !w.pad[2] && !w.pad[3];
    if (groups > 1 && cg == 1 && ocg == 1) {
      // Depthwise: each channel its own filter. The taps times the filter, summed: one
      // window kernel and one reduction, not a GEMM per channel.
      int taps4 = b.reshape(weight, {1, groups, w.kernel[0], w.kernel[1], 1, 1});
      int y = b.reduce(Prim::ReduceSum, b.binary(Prim::Mul, windows(b, x, w, 0), taps4), {2, 3},
                       false);
      if (L.in("bias") >= 0)
        y = b.binary(Prim::Add, y, b.reshape(L.in("bias"), {groups, 1, 1}));
      return L.out(y);
    }
    // Grouped: the groups are one batched GEMM, [G, OC/G, C/G*taps] x [N, G, C/G*taps, cols].
    std::vector<int64_t> columnShape = {n, cg * taps, cols}, weightShape = {ocg, cg * taps};
    if (groups > 1) {
      columnShape.insert(columnShape.begin() + 1, groups);
      weightShape.insert(weightShape.begin(), groups);
    }
    int columns = b.reshape(pointwise ? x : windows(b, x, w, 0), columnShape);
    int y = b.reshape(b.matmul(b.reshape(weight, weightShape), columns, false, false),
                      {n, ocg * groups, w.oh, w.ow});
    if (L.in("bias") >= 0)
      y = b.binary(Prim::Add, y, b.reshape(L.in("bias"), {ocg * groups, 1, 1}));
    L.out(y);
  };
}

/// max or average over the window's taps. Average divides by the window's size, or, with
/// `exclusive`, by how many of its taps fall inside the input (the same taps over a padded
/// tensor of ones).
enum class Pool { Max, Avg };

LowerFn pool2dOp(Pool kind, std::string xn, std::string kernelName, bool paddle) {
  return [=](Lowering &L) {
    if (paddle)
      requireLayout(L, {"NCHW"});
    if (!paddle && kind == Pool::Max && L.args.boolValue("return_indices"))
      badValue(L, "return_indices=True is not supported");
    if (paddle && kind == Pool::Max && L.args.boolValue("return_mask"))
      badValue(L, "return_mask=True is not supported");
    PrimBuilder &b = L.b;
    int x = floatInput(L, xn);
    std::array<int64_t, 2> kernel = pairOf(L, kernelName);
    std::array<int64_t, 2> stride = L.args.isNone("stride") ? kernel : pairOf(L, "stride");
    std::array<int64_t, 2> dilation =
        kind == Pool::Max && !paddle ? pairOf(L, "dilation") : std::array<int64_t, 2>{1, 1};
    Window w = windowOf(L, x, kernel, stride, dilation, paddingOf(L, "padding"),
                        L.args.boolValue("ceil_mode"));
    double fill = kind == Pool::Max ? -std::numeric_limits<double>::infinity() : 0.0;
    int y = b.reduce(kind == Pool::Max ? Prim::ReduceMax : Prim::ReduceSum,
                     windows(b, x, w, fill), {2, 3}, false);
    if (kind == Pool::Max)
      return L.out(y);
    bool exclusive = paddle ? L.args.boolValue("exclusive") : !L.args.boolValue("count_include_pad");
    if (!L.args.isNone("divisor_override"))
      return L.out(b.binaryScalar(Prim::Div, y, L.args.scalar("divisor_override")));
    bool padding = w.pad[0] || w.pad[1] || w.pad[2] || w.pad[3];
    if (!padding)
      return L.out(b.binaryScalar(Prim::Div, y, static_cast<double>(w.kernel[0] * w.kernel[1])));
    // The divisor counts the taps on the input (exclusive) or on the input and its padding,
    // never those ceil_mode adds: the same windows over ones, zeros where not counted.
    const TensorMeta &m = b.meta(x);
    Window counted = w;
    std::array<int64_t, 2> size = {m.shape[2], m.shape[3]};
    if (!exclusive) {
      if (!w.ceilExtra[0] && !w.ceilExtra[1])
        return L.out(b.binaryScalar(Prim::Div, y, static_cast<double>(w.kernel[0] * w.kernel[1])));
      for (int i = 0; i < 2; ++i) {
        size[i] += w.pad[2 * i] + w.pad[2 * i + 1] - w.ceilExtra[i];
        counted.pad[2 * i] = 0, counted.pad[2 * i + 1] = w.ceilExtra[i];
      }
    }
    int ones = b.fill(1, {1, 1, size[0], size[1]}, m.dtype);
    L.out(b.binary(Prim::Div, y,
                   b.reduce(Prim::ReduceSum, windows(b, ones, counted, 0), {2, 3}, false)));
  };
}

/// The average over adaptive bins: bin i of n over a size s spans [floor(i s / n),
/// ceil((i + 1) s / n)); equal bins are one reshape and mean.
LowerFn adaptiveAvgPool2dOp(std::string xn, bool paddle) {
  return [=](Lowering &L) {
    if (paddle)
      requireLayout(L, {"NCHW"});
    PrimBuilder &b = L.b;
    int x = floatInput(L, xn);
    const TensorMeta &m = b.meta(x);
    if (m.rank() != 4)
      badValue(L, "expects an NCHW tensor, got rank " + std::to_string(m.rank()));
    std::array<int64_t, 2> size = pairOf(L, "output_size");
    int64_t n = m.shape[0], c = m.shape[1], h = m.shape[2], wd = m.shape[3];
    if (size[0] <= 0 || size[1] <= 0)
      badValue(L, "output_size must be positive");
    if (h % size[0] == 0 && wd % size[1] == 0) {
      int bins = b.reshape(x, {n, c, size[0], h / size[0], size[1], wd / size[1]});
      return L.out(mean(L, bins, {3, 5}, false));
    }
    std::vector<int> rows;
    for (int64_t i = 0; i < size[0]; ++i) {
      std::vector<int> cells;
      for (int64_t j = 0; j < size[1]; ++j) {
        int64_t h0 = i * h / size[0], h1 = ((i + 1) * h + size[0] - 1) / size[0];
        int64_t w0 = j * wd / size[1], w1 = ((j + 1) * wd + size[1] - 1) / size[1];
        cells.push_back(mean(L, b.slice(x, {2, 3}, {h0, w0}, {h1, w1}, {1, 1}), {2, 3}, true));
      }
      rows.push_back(size[1] == 1 ? cells[0] : b.concat(cells, 3));
    }
    L.out(size[0] == 1 ? rows[0] : b.concat(rows, 2));
  };
}

/// Inference batch norm over axis 1: (x - mean) * rsqrt(var + eps) * weight + bias.
LowerFn batchNormOp(std::string xn, std::string eps, bool paddle) {
  return [=](Lowering &L) {
    bool useGlobal = paddle && !L.args.isNone("use_global_stats") &&
                     L.args.boolValue("use_global_stats");
    if (L.args.boolValue("training") && !useGlobal)
      badValue(L, "training=True normalizes with the batch's statistics, which sotc does not "
                  "compile (inference: training=False)");
    if (paddle)
      requireLayout(L, {"NCHW", "NCL", "NC"});
    if (L.in("running_mean") < 0 || L.in("running_var") < 0)
      badValue(L, "needs the running statistics (a layer with track_running_stats=False "
                  "normalizes with the batch's)");
    PrimBuilder &b = L.b;
    int x = floatInput(L, xn);
    int64_t rank = b.meta(x).rank();
    if (rank < 2)
      badValue(L, "expects at least 2 dimensions (channels on axis 1)");
    int64_t c = b.meta(x).shape[1];
    std::vector<int64_t> perChannel(static_cast<size_t>(rank - 1), 1);
    perChannel[0] = c; // [C, 1, 1] broadcasts over the axes after the channels
    auto channel = [&](const std::string &name) { return b.reshape(L.in(name), perChannel); };
    int inv = b.unary(Prim::Rsqrt,
                      b.binaryScalar(Prim::Add, channel("running_var"), L.args.scalar(eps)));
    if (L.in("weight") >= 0)
      inv = b.binary(Prim::Mul, inv, channel("weight"));
    int y = b.binary(Prim::Mul, b.binary(Prim::Sub, x, channel("running_mean")), inv);
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
    Window w = windowOf(L, x, pairOf(L, kernel), pairOf(L, stride), pairOf(L, dilation), pad,
                        false);
    const std::vector<int64_t> &s = b.meta(x).shape;
    int columns = b.reshape(windows(b, x, w, 0),
                            {s[0], s[1] * w.kernel[0] * w.kernel[1], w.oh * w.ow});
    L.out(unbatched ? b.reshape(columns, {s[1] * w.kernel[0] * w.kernel[1], w.oh * w.ow})
                    : columns);
  };
}

} // namespace

void registerConvolution(OpTable &t) {
  t.bind("torch.nn.functional.unfold",
         unfoldOp("input", "kernel_size", "stride", "padding", "dilation", false));
  t.bind("paddle.nn.functional.unfold",
         unfoldOp("x", "kernel_sizes", "strides", "paddings", "dilations", true));
  const std::string pf = "paddle.nn.functional.", tf = "torch.nn.functional.";
  t.bind(pf + "conv2d", conv2dOp("x", true));
  t.bind(tf + "conv2d", conv2dOp("input", false));
  t.bind(pf + "max_pool2d", pool2dOp(Pool::Max, "x", "kernel_size", true));
  t.bind(tf + "max_pool2d", pool2dOp(Pool::Max, "input", "kernel_size", false));
  t.bind(pf + "avg_pool2d", pool2dOp(Pool::Avg, "x", "kernel_size", true));
  t.bind(tf + "avg_pool2d", pool2dOp(Pool::Avg, "input", "kernel_size", false));
  t.bind(pf + "adaptive_avg_pool2d", adaptiveAvgPool2dOp("x", true));
  t.bind(tf + "adaptive_avg_pool2d", adaptiveAvgPool2dOp("input", false));
  t.bind(pf + "batch_norm", batchNormOp("x", "epsilon", true));
  t.bind(tf + "batch_norm", batchNormOp("input", "eps", false));
}

} // namespace sotc::ops::lowering
