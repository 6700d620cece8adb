// Numeric cases of the framework functionals: activations, padding modes, interpolation,
// pixel shuffles, one-hot, losses and distances. Each reference is a direct loop over the
// output (or a formula per element), written from the frameworks' documented definitions.
#include "compiler/ops/unittests/Cases.h"

#include <array>
#include <cmath>

using namespace sotc::ops;
using namespace sotc::ops::ref;

namespace sotc::ops::cases {

namespace {

const std::string pf = "paddle.nn.functional.", tf = "torch.nn.functional.";

/// Calls f with every index of `shape`, in row-major order.
void forEachIndex(const std::vector<int64_t> &shape,
                  const std::function<void(std::vector<int64_t> &)> &f) {
  std::vector<int64_t> index(shape.size(), 0);
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  for (int64_t n = 0; n < count; ++n) {
    f(index);
    for (size_t a = shape.size(); a-- > 0;) {
      if (++index[a] < shape[a])
        break;
      index[a] = 0;
    }
  }
}

/// A buffer of `shape` whose element at each index is f(index).
Buffer build(const std::vector<int64_t> &shape,
             const std::function<double(std::vector<int64_t> &)> &f, DType dtype = DType::Float32) {
  Buffer out{{shape, dtype}, {}};
  forEachIndex(shape, [&](std::vector<int64_t> &i) { out.data.push_back(f(i)); });
  return out;
}

double total(const Buffer &b) {
  double s = 0;
  for (double v : b.data)
    s += v;
  return s;
}

Buffer scalarOf(double v) { return Buffer{{{}, DType::Float32}, {v}}; }

/// none / sum / mean of an elementwise loss.
Buffer reduced(const Buffer &loss, const std::string &how) {
  if (how == "none")
    return loss;
  double s = total(loss);
  return scalarOf(how == "sum" ? s : s / static_cast<double>(loss.data.size()));
}

double softplusRef(double x, double beta, double threshold) {
  return beta * x > threshold ? x : std::log(1 + std::exp(beta * x)) / beta;
}

void addActivationCases(std::vector<Case> &c) {
  auto both = [&](std::string paddleName, std::string torchName, std::function<double(double)> f,
                  std::vector<std::pair<std::string, Arg>> paddleKw = {},
                  std::vector<std::pair<std::string, Arg>> torchKw = {}) {
    c.push_back({{pf + paddleName}, {kX}, {T(0)}, paddleKw, elementwise(f), -4, 4});
    c.push_back({{tf + torchName}, {kX}, {T(0)}, torchKw, elementwise(f), -4, 4});
  };
  both("elu", "elu", [](double x) { return x > 0 ? x : 0.7 * (std::exp(x) - 1); },
       {{"alpha", Arg::ofFloat(0.7)}}, {{"alpha", Arg::ofFloat(0.7)}});
  const double scale = 1.0507009873554804934193349852946, alpha = 1.6732632423543772848170429916717;
  c.push_back(
      {{pf + "selu"},
       {kX},
       {T(0)},
       {},
       elementwise([=](double x) { return scale * (x > 0 ? x : alpha * (std::exp(x) - 1)); }),
       -4,
       4});
  c.push_back(
      {{tf + "selu", "torch.selu"},
       {kX},
       {T(0)},
       {},
       elementwise([=](double x) { return scale * (x > 0 ? x : alpha * (std::exp(x) - 1)); }),
       -4,
       4});
  auto celu = [](double x) {
    return std::max(x, 0.0) + std::min(0.0, 1.5 * (std::exp(x / 1.5) - 1));
  };
  c.push_back({{pf + "celu"}, {kX}, {T(0), Arg::ofFloat(1.5)}, {}, elementwise(celu), -4, 4});
  c.push_back(
      {{tf + "celu", "torch.celu"}, {kX}, {T(0), Arg::ofFloat(1.5)}, {}, elementwise(celu), -4, 4});
  // A small threshold so both sides of it are taken.
  both("softplus", "softplus", [](double x) { return softplusRef(x, 2, 3); },
       {{"beta", Arg::ofFloat(2)}, {"threshold", Arg::ofFloat(3)}},
       {{"beta", Arg::ofInt(2)}, {"threshold", Arg::ofInt(3)}});
  both("softsign", "softsign", [](double x) { return x / (1 + std::fabs(x)); });
  both("mish", "mish", [](double x) { return x * std::tanh(softplusRef(x, 1, 20)); });
  both("log_sigmoid", "logsigmoid", [](double x) { return std::log(1 / (1 + std::exp(-x))); });
  both("tanhshrink", "tanhshrink", [](double x) { return x - std::tanh(x); });
  both("hardshrink", "hardshrink", [](double x) { return std::fabs(x) > 1.2 ? x : 0.0; },
       {{"threshold", Arg::ofFloat(1.2)}}, {{"lambd", Arg::ofFloat(1.2)}});
  c.push_back({{"torch.hardshrink"},
               {kX},
               {T(0)},
               {},
               elementwise([](double x) { return std::fabs(x) > 0.5 ? x : 0.0; }),
               -4,
               4});
  both("softshrink", "softshrink",
       [](double x) { return x > 1.2    ? x - 1.2
                             : x < -1.2 ? x + 1.2
                                        : 0.0; },
       {{"threshold", Arg::ofFloat(1.2)}}, {{"lambd", Arg::ofFloat(1.2)}});
  c.push_back({{pf + "thresholded_relu"},
               {kX},
               {T(0), Arg::ofFloat(0.5), Arg::ofFloat(-3)},
               {},
               elementwise([](double x) { return x > 0.5 ? x : -3.0; }),
               -4,
               4});
  c.push_back({{tf + "threshold", "torch.threshold"},
               {kX},
               {T(0), Arg::ofFloat(0.5), Arg::ofFloat(-3)},
               {},
               elementwise([](double x) { return x > 0.5 ? x : -3.0; }),
               -4,
               4});
  // glu halves the 4 columns of [3, 4] (last axis) or the 6 rows of [6, 2] (axis 0).
  auto glu = [](int64_t axis) {
    return [axis](const Refs &in) {
      std::vector<int64_t> shape = in[0].meta.shape;
      int64_t half = shape[axis] / 2;
      shape[axis] = half;
      return Refs{build(shape, [&](std::vector<int64_t> &i) {
        double a = in[0].at(i);
        i[axis] += half;
        double g = in[0].at(i);
        i[axis] -= half;
        return a / (1 + std::exp(-g));
      })};
    };
  };
  c.push_back({{pf + "glu"}, {kX}, {T(0)}, {}, glu(1)});
  c.push_back({{tf + "glu"}, {kX}, {T(0)}, {}, glu(1)});
  const TensorMeta kTall{{6, 2}, DType::Float32};
  c.push_back({{pf + "glu"}, {kTall}, {T(0), Arg::ofInt(0)}, {}, glu(0)});
  c.push_back({{tf + "glu"}, {kTall}, {T(0), Arg::ofInt(0)}, {}, glu(0)});
  // prelu: one weight per channel (axis 1; paddle's NHWC: the last axis), or one for all.
  const TensorMeta kMap{{2, 3, 2, 2}, DType::Float32}, kThree{{3}, DType::Float32},
      kOne{{1}, DType::Float32}, kMapLast{{2, 2, 2, 3}, DType::Float32};
  auto prelu = [](int64_t axis) {
    return [axis](const Refs &in) {
      return Refs{build(in[0].meta.shape, [&](std::vector<int64_t> &i) {
        double x = in[0].at(i), w = in[1].data.size() == 1 ? in[1].data[0] : in[1].data[i[axis]];
        return x >= 0 ? x : w * x;
      })};
    };
  };
  c.push_back({{pf + "prelu"}, {kMap, kThree}, {T(0), T(1)}, {}, prelu(1)});
  c.push_back({{tf + "prelu", "torch.prelu"}, {kMap, kThree}, {T(0), T(1)}, {}, prelu(1)});
  c.push_back({{tf + "prelu"}, {kMap, kOne}, {T(0), T(1)}, {}, prelu(1)});
  c.push_back(
      {{pf + "prelu"}, {kMapLast, kThree}, {T(0), T(1), Arg::ofString("NHWC")}, {}, prelu(3)});
}

/// The padded input position of `p` in [0, n) by mode, or -1 for a constant fill.
int64_t padSource(int64_t p, int64_t n, const std::string &mode) {
  if (p >= 0 && p < n)
    return p;
  if (mode == "reflect")
    return p < 0 ? -p : 2 * (n - 1) - p;
  if (mode == "replicate")
    return p < 0 ? 0 : n - 1;
  if (mode == "circular")
    return ((p % n) + n) % n;
  return -1;
}

/// x padded along `axes` with pads (before, after) each, by mode.
RefFn padRef(std::vector<int64_t> axes, std::vector<int64_t> pads, std::string mode, double value) {
  return [=](const Refs &in) {
    std::vector<int64_t> shape = in[0].meta.shape;
    for (size_t k = 0; k < axes.size(); ++k)
      shape[axes[k]] += pads[2 * k] + pads[2 * k + 1];
    return Refs{build(shape, [&](std::vector<int64_t> &i) {
      std::vector<int64_t> src = i;
      for (size_t k = 0; k < axes.size(); ++k) {
        int64_t s = padSource(i[axes[k]] - pads[2 * k], in[0].meta.shape[axes[k]], mode);
        if (s < 0)
          return value;
        src[axes[k]] = s;
      }
      return in[0].at(src);
    })};
  };
}

Arg ints(std::vector<int64_t> v) {
  std::vector<Arg> items;
  for (int64_t x : v)
    items.push_back(Arg::ofInt(x));
  return Arg::list(items);
}

/// The taps of one resampled axis, by the frameworks' own formulas in float32: the input
/// positions an output position reads and their weights.
using Taps = std::vector<std::pair<int64_t, double>>;

float ratioOf(int64_t in, int64_t out, bool align, double scale) {
  return align       ? (out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f)
         : scale > 0 ? static_cast<float>(1.0 / scale)
                     : static_cast<float>(in) / static_cast<float>(out);
}

Taps linearTaps(int64_t dst, int64_t in, int64_t out, bool align, bool halfPixel, double scale) {
  float ratio = ratioOf(in, out, align, scale);
  float src = align || !halfPixel ? ratio * static_cast<float>(dst)
                                  : std::max(ratio * (static_cast<float>(dst) + 0.5f) - 0.5f, 0.0f);
  int64_t i0 = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
  double w1 = std::min(std::max(static_cast<double>(src) - static_cast<double>(i0), 0.0), 1.0);
  return {{i0, 1 - w1}, {std::min(i0 + 1, in - 1), w1}};
}

Taps nearestTaps(int64_t dst, int64_t in, int64_t out, bool exact, bool rounded) {
  float ratio = ratioOf(in, out, rounded, 0);
  float src = (static_cast<float>(dst) + (exact ? 0.5f : 0.0f)) * ratio + (rounded ? 0.5f : 0.0f);
  return {{std::min(static_cast<int64_t>(std::floor(src)), in - 1), 1.0}};
}

/// Keys' cubic convolution (A = -0.75): taps floor(src) - 1 .. + 2, clamped into the input.
Taps cubicTaps(int64_t dst, int64_t in, int64_t out, bool align) {
  float ratio = ratioOf(in, out, align, 0);
  float src =
      align ? ratio * static_cast<float>(dst) : ratio * (static_cast<float>(dst) + 0.5f) - 0.5f;
  float base = std::floor(src);
  double t = static_cast<double>(src) - static_cast<double>(base), A = -0.75;
  auto near = [&](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
  auto far = [&](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
  double w[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)};
  Taps taps;
  for (int k = 0; k < 4; ++k)
    taps.push_back(
        {std::min(std::max(static_cast<int64_t>(base) - 1 + k, int64_t{0}), in - 1), w[k]});
  return taps;
}

/// Resamples the spatial axes (from `first`) of in[0] to `sizes` with per-axis taps.
RefFn resizeRef(int64_t first, std::vector<int64_t> sizes,
                std::function<Taps(int64_t dst, int64_t in, int64_t out)> taps) {
  return [=](const Refs &in) {
    std::vector<int64_t> shape = in[0].meta.shape;
    for (size_t k = 0; k < sizes.size(); ++k)
      shape[first + k] = sizes[k];
    return Refs{build(shape, [&](std::vector<int64_t> &i) {
      // Every combination of one tap per axis, weighted by the taps' weights' product.
      std::vector<Taps> perAxis;
      for (size_t a = 0; a < sizes.size(); ++a)
        perAxis.push_back(taps(i[first + a], in[0].meta.shape[first + a], sizes[a]));
      double sum = 0;
      std::function<void(size_t, std::vector<int64_t> &, double)> visit =
          [&](size_t a, std::vector<int64_t> &src, double weight) {
            if (a == perAxis.size()) {
              sum += weight == 0 ? 0 : weight * in[0].at(src);
              return;
            }
            for (const auto &[index, w] : perAxis[a]) {
              src[first + a] = index;
              visit(a + 1, src, weight * w);
            }
          };
      std::vector<int64_t> src = i;
      visit(0, src, 1);
      return sum;
    })};
  };
}

void addResamplingCases(std::vector<Case> &c) {
  const TensorMeta kMap{{2, 3, 4, 5}, DType::Float32}, kLine{{2, 3, 6}, DType::Float32},
      kCube{{1, 2, 3, 4, 3}, DType::Float32};
  for (std::string mode : {"reflect", "replicate", "circular"}) {
    c.push_back({{tf + "pad"},
                 {kMap},
                 {T(0), ints({2, 3, 1, 3})},
                 {{"mode", Arg::ofString(mode)}},
                 padRef({3, 2}, {2, 3, 1, 3}, mode, 0)});
    c.push_back({{tf + "pad"},
                 {kLine},
                 {T(0), ints({4, 1}), Arg::ofString(mode)},
                 {},
                 padRef({2}, {4, 1}, mode, 0)});
    c.push_back({{pf + "pad"},
                 {kMap},
                 {T(0), ints({2, 3, 1, 3}), Arg::ofString(mode)},
                 {},
                 padRef({3, 2}, {2, 3, 1, 3}, mode, 0)});
    c.push_back({{pf + "pad"},
                 {kMap},
                 {T(0), ints({1, 2, 0, 2})},
                 {{"mode", Arg::ofString(mode)}, {"data_format", Arg::ofString("NHWC")}},
                 padRef({2, 1}, {1, 2, 0, 2}, mode, 0)});
  }
  c.push_back({{tf + "pad"},
               {kMap},
               {T(0), ints({1, -2, 0, 2})},
               {{"value", Arg::ofFloat(0.5)}},
               [](const Refs &in) { // crop 2 on the right of the last axis, then pad
                 Refs padded = padRef({3, 2}, {1, 0, 0, 2}, "constant", 0.5)(in);
                 Buffer &p = padded[0];
                 return Refs{build({2, 3, 6, 4}, [&](std::vector<int64_t> &i) { return p.at(i); })};
               }});
  // paddle constant: one pair per axis from the first, or from the last; or the last axes.
  c.push_back({{pf + "pad"},
               {kLine},
               {T(0), ints({1, 0, 0, 2, 3, 1})},
               {{"value", Arg::ofFloat(2)}},
               padRef({0, 1, 2}, {1, 0, 0, 2, 3, 1}, "constant", 2)});
  c.push_back({{pf + "pad"},
               {kLine},
               {T(0), ints({1, 0, 0, 2, 3, 1})},
               {{"pad_from_left_axis", Arg::ofBool(false)}},
               padRef({2, 1, 0}, {1, 0, 0, 2, 3, 1}, "constant", 0)});
  c.push_back({{pf + "pad"}, {kMap}, {T(0), ints({1, 2})}, {}, padRef({3}, {1, 2}, "constant", 0)});

  auto torchLinear = [](bool align, double scale = 0) {
    return [=](int64_t d, int64_t n, int64_t o) { return linearTaps(d, n, o, align, true, scale); };
  };
  c.push_back({{tf + "interpolate", tf + "upsample"},
               {kMap},
               {T(0)},
               {{"size", ints({7, 3})}, {"mode", Arg::ofString("bilinear")}},
               resizeRef(2, {7, 3}, torchLinear(false))});
  c.push_back({{tf + "interpolate"},
               {kMap},
               {T(0)},
               {{"size", ints({7, 3})},
                {"mode", Arg::ofString("bilinear")},
                {"align_corners", Arg::ofBool(true)}},
               resizeRef(2, {7, 3}, torchLinear(true))});
  c.push_back({{tf + "upsample_bilinear"},
               {kMap},
               {T(0), ints({7, 3})},
               {},
               resizeRef(2, {7, 3}, torchLinear(true))});
  c.push_back({{tf + "interpolate"},
               {kMap},
               {T(0)},
               {{"scale_factor", Arg::ofFloat(1.75)}, {"mode", Arg::ofString("bilinear")}},
               resizeRef(2, {7, 8}, torchLinear(false, 1.75))});
  c.push_back({{tf + "interpolate"},
               {kLine},
               {T(0), Arg::ofInt(4)},
               {{"mode", Arg::ofString("linear")}},
               resizeRef(2, {4}, torchLinear(false))});
  c.push_back({{tf + "interpolate"},
               {kCube},
               {T(0)},
               {{"scale_factor", Arg::tuple({Arg::ofFloat(2), Arg::ofFloat(1.5), Arg::ofInt(1)})},
                {"mode", Arg::ofString("trilinear")}},
               resizeRef(2, {6, 6, 3}, [](int64_t d, int64_t n, int64_t o) {
                 double scale = n == 3 && o == 6 ? 2 : n == 4 ? 1.5 : 1;
                 return linearTaps(d, n, o, false, true, scale);
               })});
  c.push_back({{tf + "interpolate", tf + "upsample_nearest"},
               {kMap},
               {T(0), ints({7, 3})},
               {},
               resizeRef(2, {7, 3}, [](int64_t d, int64_t n, int64_t o) {
                 return nearestTaps(d, n, o, false, false);
               })});
  c.push_back({{tf + "interpolate"},
               {kMap},
               {T(0), ints({7, 3})},
               {{"mode", Arg::ofString("nearest-exact")}},
               resizeRef(2, {7, 3}, [](int64_t d, int64_t n, int64_t o) {
                 return nearestTaps(d, n, o, true, false);
               })});
  for (bool align : {false, true})
    c.push_back({{tf + "interpolate", pf + "interpolate"},
                 {kMap},
                 {T(0), ints({7, 3})},
                 {{"mode", Arg::ofString("bicubic")}, {"align_corners", Arg::ofBool(align)}},
                 resizeRef(2, {7, 3}, [align](int64_t d, int64_t n, int64_t o) {
                   return cubicTaps(d, n, o, align);
                 })});
  auto paddleLinear = [](bool align, bool halfPixel) {
    return
        [=](int64_t d, int64_t n, int64_t o) { return linearTaps(d, n, o, align, halfPixel, 0); };
  };
  c.push_back({{pf + "interpolate", pf + "upsample"},
               {kMap},
               {T(0), ints({7, 3})},
               {{"mode", Arg::ofString("bilinear")}},
               resizeRef(2, {7, 3}, paddleLinear(false, true))});
  c.push_back({{pf + "interpolate"},
               {kMap},
               {T(0), ints({7, 3})},
               {{"mode", Arg::ofString("bilinear")}, {"align_mode", Arg::ofInt(1)}},
               resizeRef(2, {7, 3}, paddleLinear(false, false))});
  c.push_back({{pf + "interpolate"},
               {kMap},
               {T(0), ints({7, 3})},
               {{"mode", Arg::ofString("bilinear")}, {"align_corners", Arg::ofBool(true)}},
               resizeRef(2, {7, 3}, paddleLinear(true, true))});
  c.push_back({{pf + "interpolate"},
               {kMap},
               {T(0), ints({7, 3})},
               {{"mode", Arg::ofString("bilinear")}, {"data_format", Arg::ofString("NHWC")}},
               resizeRef(1, {7, 3}, paddleLinear(false, true))});
  c.push_back({{pf + "interpolate"},
               {kMap},
               {T(0), ints({7, 3})},
               {},
               resizeRef(2, {7, 3}, [](int64_t d, int64_t n, int64_t o) {
                 return nearestTaps(d, n, o, false, false);
               })});
  c.push_back({{pf + "interpolate"},
               {kMap},
               {T(0), ints({7, 3})},
               {{"align_corners", Arg::ofBool(true)}},
               resizeRef(2, {7, 3}, [](int64_t d, int64_t n, int64_t o) {
                 return nearestTaps(d, n, o, false, true);
               })});

  // Pixel shuffles: out[n, c, h*r + i, w*r + j] = in[n, c*r*r + i*r + j, h, w] (r = 2).
  const TensorMeta kDeep{{2, 8, 2, 3}, DType::Float32}, kWide{{2, 2, 4, 6}, DType::Float32},
      kDeepLast{{2, 2, 3, 8}, DType::Float32};
  auto shuffled = [](const Refs &in) {
    return Refs{build({2, 2, 4, 6}, [&](std::vector<int64_t> &i) {
      return in[0].at({i[0], i[1] * 4 + (i[2] % 2) * 2 + i[3] % 2, i[2] / 2, i[3] / 2});
    })};
  };
  auto unshuffled = [](const Refs &in) {
    return Refs{build({2, 8, 2, 3}, [&](std::vector<int64_t> &i) {
      return in[0].at({i[0], i[1] / 4, i[2] * 2 + (i[1] % 4) / 2, i[3] * 2 + i[1] % 2});
    })};
  };
  c.push_back({{tf + "pixel_shuffle", "torch.pixel_shuffle", pf + "pixel_shuffle"},
               {kDeep},
               {T(0), Arg::ofInt(2)},
               {},
               shuffled});
  c.push_back({{tf + "pixel_unshuffle", "torch.pixel_unshuffle", pf + "pixel_unshuffle"},
               {kWide},
               {T(0), Arg::ofInt(2)},
               {},
               unshuffled});
  c.push_back(
      {{pf + "pixel_shuffle"},
       {kDeepLast},
       {T(0), Arg::ofInt(2), Arg::ofString("NHWC")},
       {},
       [](const Refs &in) {
         return Refs{build({2, 4, 6, 2}, [&](std::vector<int64_t> &i) {
           return in[0].at({i[0], i[1] / 2, i[2] / 2, i[3] * 4 + (i[1] % 2) * 2 + i[2] % 2});
         })};
       }});
  c.push_back({{pf + "pixel_unshuffle"},
               {TensorMeta{{2, 4, 6, 2}, DType::Float32}},
               {T(0), Arg::ofInt(2), Arg::ofString("NHWC")},
               {},
               [](const Refs &in) {
                 return Refs{build({2, 2, 3, 8}, [&](std::vector<int64_t> &i) {
                   int64_t ch = i[3] / 4, sub = i[3] % 4;
                   return in[0].at({i[0], i[1] * 2 + sub / 2, i[2] * 2 + sub % 2, ch});
                 })};
               }});

  // one_hot of labels in [0, 5): torch int64, paddle float32.
  const TensorMeta kLabels{{3, 4}, DType::Int64};
  auto oneHot = [](DType dtype) {
    return [dtype](const Refs &in) {
      return Refs{build(
          {3, 4, 5},
          [&](std::vector<int64_t> &i) {
            return in[0].at({i[0], i[1]}) == static_cast<double>(i[2]) ? 1.0 : 0.0;
          },
          dtype)};
    };
  };
  c.push_back(
      {{tf + "one_hot"}, {kLabels}, {T(0), Arg::ofInt(5)}, {}, oneHot(DType::Int64), 0, 4.4});
  c.push_back(
      {{pf + "one_hot"}, {kLabels}, {T(0), Arg::ofInt(5)}, {}, oneHot(DType::Float32), 0, 4.4});
}

/// log_softmax of x along `axis`.
Buffer logSoftmax(const Buffer &x, int64_t axis) {
  return build(x.meta.shape, [&](std::vector<int64_t> &i) {
    std::vector<int64_t> j = i;
    double m = -INFINITY, s = 0;
    for (j[axis] = 0; j[axis] < x.meta.shape[axis]; ++j[axis])
      m = std::max(m, x.at(j));
    for (j[axis] = 0; j[axis] < x.meta.shape[axis]; ++j[axis])
      s += std::exp(x.at(j) - m);
    return x.at(i) - m - std::log(s);
  });
}

/// nll over class axis 1 of logp [N, C, ...] with labels [N, ...]: per-position losses and the
/// weights they carry (0 where ignored).
std::pair<Buffer, Buffer> nllParts(const Buffer &logp, const Buffer &labels, const Buffer *weight,
                                   int64_t ignore, int64_t axis) {
  Buffer loss = build(labels.meta.shape, [&](std::vector<int64_t> &i) {
    auto t = static_cast<int64_t>(labels.at(i));
    if (t == ignore)
      return 0.0;
    std::vector<int64_t> j = i;
    j.insert(j.begin() + axis, t);
    return -logp.at(j) * (weight ? weight->data[t] : 1.0);
  });
  Buffer w = build(labels.meta.shape, [&](std::vector<int64_t> &i) {
    auto t = static_cast<int64_t>(labels.at(i));
    return t == ignore ? 0.0 : weight ? weight->data[t] : 1.0;
  });
  return {loss, w};
}

void addLossCases(std::vector<Case> &c) {
  const TensorMeta kLogits{{5, 4}, DType::Float32}, kClasses{{5}, DType::Int64},
      kW{{4}, DType::Float32}, kMapLogits{{2, 4, 3}, DType::Float32},
      kMapClasses{{2, 3}, DType::Int64};
  // Labels in [0, 4) from the case's range [0, 3.4); ignore_index 2 drops some of them.
  for (std::string how : {"mean", "sum", "none"}) {
    c.push_back({{tf + "cross_entropy"},
                 {kLogits, kClasses, kW},
                 {T(0), T(1), T(2)},
                 {{"reduction", Arg::ofString(how)}, {"ignore_index", Arg::ofInt(2)}},
                 [how](const Refs &in) {
                   auto [loss, w] = nllParts(logSoftmax(in[0], 1), in[1], &in[2], 2, 1);
                   return Refs{how == "mean" ? scalarOf(total(loss) / total(w))
                                             : reduced(loss, how)};
                 },
                 0,
                 3.4});
    c.push_back({{tf + "nll_loss", pf + "nll_loss"},
                 {kMapLogits, kMapClasses},
                 {T(0), T(1)},
                 {{"reduction", Arg::ofString(how)}},
                 [how](const Refs &in) {
                   auto [loss, w] = nllParts(in[0], in[1], nullptr, -100, 1);
                   return Refs{how == "mean" ? scalarOf(total(loss) / total(w))
                                             : reduced(loss, how)};
                 },
                 0,
                 3.4});
  }
  // Label smoothing 0.2: (1 - 0.2) nll + 0.2 / C * -sum_c w_c logp_c, mean over the weights.
  c.push_back({{tf + "cross_entropy"},
               {kMapLogits, kMapClasses, kW},
               {T(0), T(1), T(2)},
               {{"label_smoothing", Arg::ofFloat(0.2)}},
               [](const Refs &in) {
                 Buffer logp = logSoftmax(in[0], 1);
                 auto [loss, w] = nllParts(logp, in[1], &in[2], -100, 1);
                 double smooth = 0;
                 forEachIndex(logp.meta.shape, [&](std::vector<int64_t> &i) {
                   smooth -= logp.at(i) * in[2].data[i[1]];
                 });
                 return Refs{scalarOf((0.8 * total(loss) + 0.2 / 4 * smooth) / total(w))};
               },
               0,
               3.4});
  // Class probabilities: -sum(target * logp), mean per position.
  c.push_back({{tf + "cross_entropy"},
               {kLogits, kLogits},
               {T(0), T(1)},
               {},
               [](const Refs &in) {
                 Buffer logp = logSoftmax(in[0], 1);
                 return Refs{scalarOf(-total(zip(logp, in[1], std::multiplies<double>())) / 5)};
               },
               0,
               1});
  // paddle: class axis last; weighted mean divides by the picked weights; 'none' keeps [N, 1]
  // for labels given as [N, 1].
  c.push_back({{pf + "cross_entropy"},
               {kLogits, kClasses, kW},
               {T(0), T(1), T(2)},
               {},
               [](const Refs &in) {
                 auto [loss, w] = nllParts(logSoftmax(in[0], 1), in[1], &in[2], -100, 1);
                 return Refs{scalarOf(total(loss) / total(w))};
               },
               0,
               3.4});
  c.push_back({{pf + "cross_entropy"},
               {kLogits, TensorMeta{{5, 1}, DType::Int64}},
               {T(0), T(1)},
               {{"reduction", Arg::ofString("none")}, {"ignore_index", Arg::ofInt(1)}},
               [](const Refs &in) {
                 auto [loss, w] =
                     nllParts(logSoftmax(in[0], 1), reshape(in[1], {5}), nullptr, 1, 1);
                 return Refs{reshape(loss, {5, 1})};
               },
               0,
               3.4});
  c.push_back({{pf + "cross_entropy"},
               {kLogits, kClasses},
               {T(0), T(1)},
               {{"ignore_index", Arg::ofInt(1)}},
               [](const Refs &in) {
                 auto [loss, w] = nllParts(logSoftmax(in[0], 1), in[1], nullptr, 1, 1);
                 return Refs{scalarOf(total(loss) / total(w))};
               },
               0,
               3.4});
  c.push_back({{pf + "cross_entropy"},
               {kLogits, kLogits},
               {T(0), T(1)},
               {{"soft_label", Arg::ofBool(true)},
                {"use_softmax", Arg::ofBool(false)},
                {"reduction", Arg::ofString("sum")}},
               [](const Refs &in) {
                 Buffer logp = map(in[0], [](double v) { return std::log(v); });
                 return Refs{scalarOf(-total(zip(logp, in[1], std::multiplies<double>())))};
               },
               0.05,
               1});
  c.push_back({{pf + "cross_entropy"},
               {kLogits, kClasses},
               {T(0), T(1)},
               {{"label_smoothing", Arg::ofFloat(0.1)}},
               [](const Refs &in) {
                 Buffer logp = logSoftmax(in[0], 1);
                 double sum = 0;
                 forEachIndex(logp.meta.shape, [&](std::vector<int64_t> &i) {
                   double target =
                       (in[1].data[i[0]] == static_cast<double>(i[1]) ? 0.9 : 0) + 0.1 / 4;
                   sum -= target * logp.at(i);
                 });
                 return Refs{scalarOf(sum / 5)};
               },
               0,
               3.4});

  // Elementwise regression losses.
  auto pointwise = [&](std::vector<std::string> names, std::function<double(double)> f,
                       std::vector<std::pair<std::string, Arg>> kw = {}, std::string how = "mean") {
    c.push_back({names, {kX, kX}, {T(0), T(1)}, kw, [=](const Refs &in) {
                   return Refs{reduced(map(zip(in[0], in[1], std::minus<double>()), f), how)};
                 }});
  };
  auto huberRef = [](double d, double delta) {
    return std::fabs(d) < delta ? 0.5 * d * d : delta * (std::fabs(d) - 0.5 * delta);
  };
  pointwise({tf + "mse_loss", pf + "mse_loss"}, [](double d) { return d * d; });
  pointwise(
      {tf + "l1_loss", pf + "l1_loss"}, [](double d) { return std::fabs(d); },
      {{"reduction", Arg::ofString("sum")}}, "sum");
  pointwise({tf + "smooth_l1_loss"}, [=](double d) { return huberRef(d, 0.5) / 0.5; },
            {{"beta", Arg::ofFloat(0.5)}});
  pointwise(
      {tf + "huber_loss", pf + "smooth_l1_loss"}, [=](double d) { return huberRef(d, 0.5); },
      {{"delta", Arg::ofFloat(0.5)}, {"reduction", Arg::ofString("none")}}, "none");
  pointwise({pf + "smooth_l1_loss"}, [=](double d) { return huberRef(d, 0.5) / 0.5; },
            {{"delta", Arg::ofFloat(0.5)}, {"is_huber", Arg::ofBool(false)}});
  pointwise(
      {tf + "mse_loss"}, [](double d) { return d * d; }, {{"size_average", Arg::ofBool(false)}},
      "sum"); // the deprecated spelling of 'sum'
  c.push_back({{tf + "mse_loss"},
               {kX, kX, kX},
               {T(0), T(1)},
               {{"weight", T(2)}},
               [](const Refs &in) {
                 Buffer d = zip(in[0], in[1], std::minus<double>());
                 Buffer wl =
                     zip(zip(d, d, std::multiplies<double>()), in[2], std::multiplies<double>());
                 return Refs{scalarOf(total(wl) / total(in[2]))};
               },
               0.1,
               2});
  // Binary cross entropy of probabilities in (0, 1), and of logits.
  auto bce = [](double p, double y) { return -(y * std::log(p) + (1 - y) * std::log(1 - p)); };
  c.push_back({{tf + "binary_cross_entropy", pf + "binary_cross_entropy"},
               {kX, kX, kRow},
               {T(0), T(1), T(2)},
               {},
               [=](const Refs &in) {
                 return Refs{reduced(zip(zip(in[0], in[1], bce), in[2], std::multiplies<double>()),
                                     "mean")};
               },
               0.05,
               0.95});
  auto bceLogits = [](double x, double y, double pw) {
    double s = 1 / (1 + std::exp(-x));
    return -(pw * y * std::log(s) + (1 - y) * std::log(1 - s));
  };
  c.push_back({{tf + "binary_cross_entropy_with_logits", pf + "binary_cross_entropy_with_logits"},
               {kX, kX, kRow, kRow},
               {T(0), T(1), T(2)},
               {{"pos_weight", T(3)}, {"reduction", Arg::ofString("sum")}},
               [=](const Refs &in) {
                 double s = 0;
                 forEachIndex({3, 4}, [&](std::vector<int64_t> &i) {
                   s += in[2].data[i[1]] * bceLogits(in[0].at(i), in[1].at(i), in[3].data[i[1]]);
                 });
                 return Refs{scalarOf(s)};
               },
               0.05,
               0.95});
  // KL divergence: target log target - target input; batchmean divides by the batch.
  c.push_back({{tf + "kl_div", pf + "kl_div"},
               {kX, kX},
               {T(0), T(1)},
               {{"reduction", Arg::ofString("batchmean")}},
               [](const Refs &in) {
                 Buffer l =
                     zip(in[0], in[1], [](double x, double y) { return y * (std::log(y) - x); });
                 return Refs{scalarOf(total(l) / 3)};
               },
               0.05,
               1});
  c.push_back({{tf + "kl_div", pf + "kl_div"},
               {kX, kX},
               {T(0), T(1)},
               {{"reduction", Arg::ofString("none")}, {"log_target", Arg::ofBool(true)}},
               [](const Refs &in) {
                 return Refs{
                     zip(in[0], in[1], [](double x, double y) { return std::exp(y) * (y - x); })};
               }});
  // Distances along an axis of broadcast inputs.
  const TensorMeta kRows{{3, 1, 4}, DType::Float32}, kCols{{5, 4}, DType::Float32};
  auto alongLast =
      [](const Refs &in,
         std::function<double(const std::vector<double> &, const std::vector<double> &)> f) {
        return build({3, 5}, [&](std::vector<int64_t> &i) {
          std::vector<double> a, b;
          for (int64_t k = 0; k < 4; ++k) {
            a.push_back(in[0].at({i[0], 0, k}));
            b.push_back(in[1].at({i[1], k}));
          }
          return f(a, b);
        });
      };
  auto cosine = [](const std::vector<double> &a, const std::vector<double> &b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      ab += a[k] * b[k];
      aa += a[k] * a[k];
      bb += b[k] * b[k];
    }
    return ab / std::sqrt(aa * bb);
  };
  c.push_back({{tf + "cosine_similarity", "torch.cosine_similarity"},
               {kRows, kCols},
               {T(0), T(1), Arg::ofInt(-1)},
               {},
               [=](const Refs &in) { return Refs{alongLast(in, cosine)}; }});
  c.push_back({{pf + "cosine_similarity"},
               {kRows, kCols},
               {T(0), T(1), Arg::ofInt(2)},
               {},
               [=](const Refs &in) { return Refs{alongLast(in, cosine)}; }});
  auto distance = [](double p) {
    return [p](const std::vector<double> &a, const std::vector<double> &b) {
      double s = 0;
      for (size_t k = 0; k < a.size(); ++k)
        s += std::pow(std::fabs(a[k] - b[k] + 1e-6), p);
      return std::pow(s, 1 / p);
    };
  };
  c.push_back({{tf + "pairwise_distance", "torch.pairwise_distance", pf + "pairwise_distance"},
               {kRows, kCols},
               {T(0), T(1)},
               {},
               [=](const Refs &in) { return Refs{alongLast(in, distance(2))}; }});
  c.push_back({{tf + "pairwise_distance", pf + "pairwise_distance"},
               {kRows, kCols},
               {T(0), T(1), Arg::ofFloat(3)},
               {},
               [=](const Refs &in) { return Refs{alongLast(in, distance(3))}; }});
}

double logSigmoidRef(double x) { return -std::log1p(std::exp(-x)); }

void addMoreCases(std::vector<Case> &c) {
  const TensorMeta kMap{{2, 6, 2, 3}, DType::Float32};
  c.push_back({{tf + "softmin"}, {kX}, {T(0), Arg::ofInt(1)}, {}, [](const Refs &in) {
                 return Refs{build({3, 4}, [&](std::vector<int64_t> &i) {
                   double s = 0;
                   for (int64_t k = 0; k < 4; ++k)
                     s += std::exp(-in[0].at({i[0], k}));
                   return std::exp(-in[0].at(i)) / s;
                 })};
               }});
  auto rrelu = elementwise([](double x) { return x >= 0 ? x : x * (0.1 + 0.3) / 2; });
  c.push_back({{tf + "rrelu"}, {kX}, {T(0), Arg::ofFloat(0.1), Arg::ofFloat(0.3)}, {}, rrelu});
  c.push_back({{pf + "rrelu"},
               {kX},
               {T(0), Arg::ofFloat(0.1), Arg::ofFloat(0.3)},
               {{"training", Arg::ofBool(false)}},
               rrelu});
  auto same = elementwise([](double x) { return x; });
  c.push_back(
      {{tf + "dropout1d", tf + "dropout2d", tf + "dropout3d", tf + "alpha_dropout",
        tf + "feature_alpha_dropout", pf + "dropout2d", pf + "dropout3d", pf + "alpha_dropout"},
       {kX},
       {T(0)},
       {{"training", Arg::ofBool(false)}},
       same});
  // channel_shuffle with 3 groups of 2: out channel k*3 + g is in channel g*2 + k.
  auto shuffled = [](int64_t axis) {
    return [axis](const Refs &in) {
      return Refs{build(in[0].meta.shape, [&](std::vector<int64_t> &i) {
        std::vector<int64_t> j = i;
        j[axis] = (i[axis] % 3) * 2 + i[axis] / 3;
        return in[0].at(j);
      })};
    };
  };
  c.push_back({{tf + "channel_shuffle", "torch.channel_shuffle", pf + "channel_shuffle"},
               {kMap},
               {T(0), Arg::ofInt(3)},
               {},
               shuffled(1)});
  c.push_back({{pf + "channel_shuffle"},
               {TensorMeta{{2, 2, 3, 6}, DType::Float32}},
               {T(0), Arg::ofInt(3), Arg::ofString("NHWC")},
               {},
               shuffled(3)});
  // local_response_norm over 3 channels: the window [c - 1, c + 1].
  auto lrn = [](int64_t axis) {
    return [axis](const Refs &in) {
      return Refs{build(in[0].meta.shape, [&](std::vector<int64_t> &i) {
        double s = 0;
        std::vector<int64_t> j = i;
        for (int64_t k = i[axis] - 1; k <= i[axis] + 1; ++k)
          if (k >= 0 && k < in[0].meta.shape[axis]) {
            j[axis] = k;
            s += in[0].at(j) * in[0].at(j);
          }
        return in[0].at(i) / std::pow(2.0 + 0.3 / 3 * s, 0.6);
      })};
    };
  };
  c.push_back({{tf + "local_response_norm", pf + "local_response_norm"},
               {kMap},
               {T(0), Arg::ofInt(3)},
               {{"alpha", Arg::ofFloat(0.3)}, {"beta", Arg::ofFloat(0.6)}, {"k", Arg::ofFloat(2)}},
               lrn(1)});
  c.push_back({{pf + "local_response_norm"},
               {TensorMeta{{2, 3, 5}, DType::Float32}},
               {T(0), Arg::ofInt(3)},
               {{"alpha", Arg::ofFloat(0.3)},
                {"beta", Arg::ofFloat(0.6)},
                {"k", Arg::ofFloat(2)},
                {"data_format", Arg::ofString("NLC")}},
               lrn(2)});
  // unfold: kernel 2x3, stride (2, 1), padding 1, dilation 1 over [2, 6, 2, 3].
  auto unfoldRef = [](const Refs &in) {
    int64_t oh = (2 + 2 - 2) / 2 + 1, ow = (3 + 2 - 3) / 1 + 1;
    return Refs{build({2, 6 * 6, oh * ow}, [&](std::vector<int64_t> &i) {
      int64_t ch = i[1] / 6, ky = (i[1] % 6) / 3, kx = i[1] % 3, y = i[2] / ow, x = i[2] % ow;
      int64_t yy = y * 2 - 1 + ky, xx = x - 1 + kx;
      return yy >= 0 && yy < 2 && xx >= 0 && xx < 3 ? in[0].at({i[0], ch, yy, xx}) : 0.0;
    })};
  };
  c.push_back({{tf + "unfold"},
               {kMap},
               {T(0), ints({2, 3})},
               {{"padding", Arg::ofInt(1)}, {"stride", ints({2, 1})}},
               unfoldRef});
  c.push_back({{pf + "unfold"},
               {kMap},
               {T(0), ints({2, 3}), ints({2, 1}), ints({1, 1, 1, 1})},
               {},
               unfoldRef});
  // fold, unfold's adjoint: columns [2, 3*2*3, 2*3] of a 2x3 kernel, stride (2, 1), padding 1
  // summed into [2, 3, 2, 3].
  auto foldRef = [](const Refs &in) {
    return Refs{build({2, 3, 2, 3}, [&](std::vector<int64_t> &i) {
      double s = 0;
      for (int64_t ky = 0; ky < 2; ++ky)
        for (int64_t kx = 0; kx < 3; ++kx)
          for (int64_t oy = 0; oy < 2; ++oy)
            for (int64_t ox = 0; ox < 3; ++ox)
              if (oy * 2 - 1 + ky == i[2] && ox - 1 + kx == i[3])
                s += in[0].at({i[0], i[1] * 6 + ky * 3 + kx, oy * 3 + ox});
      return s;
    })};
  };
  const TensorMeta columns{{2, 18, 6}, DType::Float32};
  c.push_back({{tf + "fold"},
               {columns},
               {T(0), ints({2, 3}), ints({2, 3})},
               {{"padding", Arg::ofInt(1)}, {"stride", ints({2, 1})}},
               foldRef});
  c.push_back({{pf + "fold"},
               {columns},
               {T(0), ints({2, 3}), ints({2, 3}), ints({2, 1}), ints({1, 1, 1, 1})},
               {},
               foldRef});
  // bilinear: [5, 3] x [4, 3, 2] x [5, 2] + [4].
  c.push_back({{tf + "bilinear", "torch.bilinear", pf + "bilinear"},
               {TensorMeta{{5, 3}, DType::Float32}, TensorMeta{{5, 2}, DType::Float32},
                TensorMeta{{4, 3, 2}, DType::Float32}, TensorMeta{{4}, DType::Float32}},
               {T(0), T(1), T(2), T(3)},
               {},
               [](const Refs &in) {
                 return Refs{build({5, 4}, [&](std::vector<int64_t> &i) {
                   double s = in[3].data[i[1]];
                   for (int64_t a = 0; a < 3; ++a)
                     for (int64_t b = 0; b < 2; ++b)
                       s += in[0].at({i[0], a}) * in[2].at({i[1], a, b}) * in[1].at({i[0], b});
                   return s;
                 })};
               }});

  // Losses of inputs and targets; integer ±1 labels come from [-1.4, 1.4) rounded (-1, 0 or
  // 1: the formulas say what 0 gives).
  auto lossCase = [&](std::vector<std::string> names, std::vector<TensorMeta> tensors,
                      std::vector<Arg> positional, std::vector<std::pair<std::string, Arg>> kw,
                      std::function<Buffer(const Refs &)> loss, std::string how, double lo = -2,
                      double hi = 2) {
    c.push_back({names, tensors, positional, kw,
                 [=](const Refs &in) { return Refs{reduced(loss(in), how)}; }, lo, hi});
  };
  auto ranking = [](const Refs &in) {
    return build({3, 4}, [&](std::vector<int64_t> &i) {
      return std::max(0.0, -in[2].at(i) * (in[0].at(i) - in[1].at(i)) + 0.5);
    });
  };
  lossCase({tf + "margin_ranking_loss", pf + "margin_ranking_loss"}, {kX, kX, kX},
           {T(0), T(1), T(2)}, {{"margin", Arg::ofFloat(0.5)}}, ranking, "mean");
  auto hinge = [](const Refs &in) {
    return build({3, 4}, [&](std::vector<int64_t> &i) {
      double x = in[0].at(i), y = in[1].at(i);
      return (y != 1 ? std::max(0.0, 1.5 - x) : 0.0) + (y != -1 ? x : 0.0);
    });
  };
  c.push_back({{tf + "hinge_embedding_loss", pf + "hinge_embedding_loss"},
               {kX, TensorMeta{{3, 4}, DType::Int64}},
               {T(0), T(1)},
               {{"margin", Arg::ofFloat(1.5)}, {"reduction", Arg::ofString("sum")}},
               [=](const Refs &in) { return Refs{reduced(hinge(in), "sum")}; },
               -1.4,
               1.4});
  lossCase(
      {tf + "soft_margin_loss", pf + "soft_margin_loss"}, {kX, kX}, {T(0), T(1)}, {},
      [=](const Refs &in) {
        return zip(in[0], in[1], [](double x, double y) { return std::log1p(std::exp(-y * x)); });
      },
      "mean");
  auto multilabel = [](const Refs &in) {
    return build({3}, [&](std::vector<int64_t> &i) {
      double s = 0;
      for (int64_t k = 0; k < 4; ++k) {
        double x = in[0].at({i[0], k}), y = in[1].at({i[0], k});
        s -= (y * logSigmoidRef(x) + (1 - y) * logSigmoidRef(-x)) * in[2].data[k];
      }
      return s / 4;
    });
  };
  lossCase({tf + "multilabel_soft_margin_loss", pf + "multi_label_soft_margin_loss"},
           {kX, kX, kRow}, {T(0), T(1), T(2)}, {{"reduction", Arg::ofString("none")}}, multilabel,
           "none", 0, 1);
  auto poisson = [](bool logInput, bool full) {
    return [=](const Refs &in) {
      return zip(in[0], in[1], [=](double x, double y) {
        double l = logInput ? std::exp(x) - y * x : x - y * std::log(x + 1e-8);
        if (full && y > 1)
          l += y * std::log(y) - y + 0.5 * std::log(2 * M_PI * y);
        return l;
      });
    };
  };
  lossCase({tf + "poisson_nll_loss", pf + "poisson_nll_loss"}, {kX, kX}, {T(0), T(1)},
           {{"full", Arg::ofBool(true)}}, poisson(true, true), "mean", 0.1, 3);
  lossCase({tf + "poisson_nll_loss", pf + "poisson_nll_loss"}, {kX, kX}, {T(0), T(1)},
           {{"log_input", Arg::ofBool(false)}, {"reduction", Arg::ofString("sum")}},
           poisson(false, false), "sum", 0.1, 3);
  auto gaussian = [](bool perSample) {
    return [=](const Refs &in) {
      return build({3, 4}, [&](std::vector<int64_t> &i) {
        double v = std::max(perSample ? in[2].data[i[0]] : in[2].at(i), 1e-6),
               d = in[0].at(i) - in[1].at(i);
        return 0.5 * (std::log(v) + d * d / v) + 0.5 * std::log(2 * M_PI);
      });
    };
  };
  lossCase({tf + "gaussian_nll_loss", pf + "gaussian_nll_loss"}, {kX, kX, kX}, {T(0), T(1), T(2)},
           {{"full", Arg::ofBool(true)}}, gaussian(false), "mean", 0.1, 2);
  lossCase({tf + "gaussian_nll_loss", pf + "gaussian_nll_loss"},
           {kX, kX, TensorMeta{{3}, DType::Float32}}, {T(0), T(1), T(2)},
           {{"full", Arg::ofBool(true)}, {"reduction", Arg::ofString("none")}}, gaussian(true),
           "none", 0.1, 2);
  lossCase(
      {tf + "gaussian_nll_loss"}, {kX, kX}, {T(0), T(1), Arg::ofFloat(0.5)}, {},
      [](const Refs &in) {
        return zip(in[0], in[1], [](double x, double y) {
          return 0.5 * (std::log(0.5) + (x - y) * (x - y) / 0.5);
        });
      },
      "mean");
  auto cosineEmbedding = [](const Refs &in) {
    return build({3}, [&](std::vector<int64_t> &i) {
      double ab = 0, aa = 0, bb = 0;
      for (int64_t k = 0; k < 4; ++k) {
        double a = in[0].at({i[0], k}), b = in[1].at({i[0], k});
        ab += a * b, aa += a * a, bb += b * b;
      }
      double cos = ab / std::sqrt((aa + 1e-12) * (bb + 1e-12)), y = std::round(in[2].data[i[0]]);
      return y == 1 ? 1 - cos : y == -1 ? std::max(0.0, cos - 0.2) : 0.0;
    });
  };
  c.push_back({{tf + "cosine_embedding_loss", pf + "cosine_embedding_loss"},
               {kX, kX, TensorMeta{{3}, DType::Int64}},
               {T(0), T(1), T(2)},
               {{"margin", Arg::ofFloat(0.2)}, {"reduction", Arg::ofString("none")}},
               [=](const Refs &in) { return Refs{cosineEmbedding(in)}; },
               -1.4,
               1.4});
  auto triplet = [](bool swap) {
    return [=](const Refs &in) {
      auto d = [&](int u, int w, int64_t row) {
        double s = 0;
        for (int64_t k = 0; k < 4; ++k)
          s += std::pow(in[u].at({row, k}) - in[w].at({row, k}) + 1e-6, 2);
        return std::sqrt(s);
      };
      return build({3}, [&](std::vector<int64_t> &i) {
        double neg = d(0, 2, i[0]);
        if (swap)
          neg = std::min(neg, d(1, 2, i[0]));
        return std::max(0.0, 1.0 + d(0, 1, i[0]) - neg);
      });
    };
  };
  lossCase({tf + "triplet_margin_loss", pf + "triplet_margin_loss"}, {kX, kX, kX},
           {T(0), T(1), T(2)}, {}, triplet(false), "mean");
  lossCase({tf + "triplet_margin_loss", pf + "triplet_margin_loss"}, {kX, kX, kX},
           {T(0), T(1), T(2)}, {{"swap", Arg::ofBool(true)}, {"reduction", Arg::ofString("sum")}},
           triplet(true), "sum");
}

/// Adaptive pooling of the trailing axes from `first`, bin i of n into out covering
/// [floor(i n / out), ceil((i + 1) n / out)).
RefFn adaptiveRef(int64_t first, std::vector<int64_t> sizes, bool max) {
  return [=](const Refs &in) {
    std::vector<int64_t> shape = in[0].meta.shape;
    for (size_t k = 0; k < sizes.size(); ++k)
      shape[first + k] = sizes[k];
    return Refs{build(shape, [&](std::vector<int64_t> &i) {
      std::vector<int64_t> lo, hi;
      for (size_t k = 0; k < sizes.size(); ++k) {
        int64_t n = in[0].meta.shape[first + k], o = sizes[k], at = i[first + k];
        lo.push_back(at * n / o);
        hi.push_back(((at + 1) * n + o - 1) / o);
      }
      double acc = max ? -INFINITY : 0, count = 0;
      std::vector<int64_t> src = i;
      std::function<void(size_t)> visit = [&](size_t k) {
        if (k == sizes.size()) {
          double v = in[0].at(src);
          acc = max ? std::max(acc, v) : acc + v;
          ++count;
          return;
        }
        for (src[first + k] = lo[k]; src[first + k] < hi[k]; ++src[first + k])
          visit(k + 1);
      };
      visit(0);
      return max ? acc : acc / count;
    })};
  };
}

void addPoolingCases(std::vector<Case> &c) {
  const TensorMeta kLine{{2, 3, 7}, DType::Float32}, kMap{{2, 3, 7, 6}, DType::Float32},
      kCube{{1, 2, 5, 4, 3}, DType::Float32};
  for (bool max : {false, true}) {
    std::string kind = max ? "adaptive_max_pool" : "adaptive_avg_pool";
    c.push_back({{tf + kind + "1d", pf + kind + "1d"},
                 {kLine},
                 {T(0), Arg::ofInt(3)},
                 {},
                 adaptiveRef(2, {3}, max)});
    c.push_back({{tf + kind + "2d", pf + kind + "2d"},
                 {kMap},
                 {T(0), ints({3, 4})},
                 {},
                 adaptiveRef(2, {3, 4}, max)});
    c.push_back({{tf + kind + "2d", pf + kind + "2d"},
                 {kMap},
                 {T(0), ints({7, 2})},
                 {},
                 adaptiveRef(2, {7, 2}, max)}); // equal bins and none
    c.push_back({{tf + kind + "3d", pf + kind + "3d"},
                 {kCube},
                 {T(0), ints({2, 3, 2})},
                 {},
                 adaptiveRef(2, {2, 3, 2}, max)});
  }
  c.push_back({{pf + "adaptive_avg_pool2d"},
               {kMap},
               {T(0), ints({2, 5}), Arg::ofString("NHWC")},
               {},
               adaptiveRef(1, {2, 5}, false)});
  c.push_back({{tf + "interpolate", pf + "interpolate"},
               {kMap},
               {T(0), ints({3, 4})},
               {{"mode", Arg::ofString("area")}},
               adaptiveRef(2, {3, 4}, false)});
  // Dropout with p = 0 in training drops nothing; negative pads crop in every mode.
  c.push_back({{tf + "dropout", tf + "dropout2d", tf + "alpha_dropout", pf + "dropout"},
               {kX},
               {T(0)},
               {{"p", Arg::ofFloat(0)}, {"training", Arg::ofBool(true)}},
               elementwise([](double x) { return x; })});
  c.push_back({{tf + "pad"},
               {kMap},
               {T(0), ints({-2, 3, 1, -3})},
               {{"mode", Arg::ofString("replicate")}},
               [](const Refs &in) {
                 return Refs{build({2, 3, 5, 7}, [&](std::vector<int64_t> &i) {
                   return in[0].at({i[0], i[1],
                                    std::min<int64_t>(std::max<int64_t>(i[2] - 1, 0), 6),
                                    std::min<int64_t>(i[3] + 2, 5)});
                 })};
               }});
}

/// conv1d: [N, C, L] x [OC, C/G, K] with stride, padding, dilation, groups, + bias.
RefFn conv1dRef(int64_t stride, int64_t pad, int64_t dilation, int64_t groups) {
  return [=](const Refs &in) {
    const Buffer &x = in[0], &w = in[1];
    int64_t n = x.meta.shape[0], c = x.meta.shape[1], l = x.meta.shape[2];
    int64_t oc = w.meta.shape[0], cg = w.meta.shape[1], k = w.meta.shape[2];
    int64_t ol = (l + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
    (void)c;
    return Refs{build({n, oc, ol}, [&](std::vector<int64_t> &i) {
      double s = in.size() > 2 ? in[2].data[i[1]] : 0;
      int64_t g = i[1] / (oc / groups);
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t t = 0; t < k; ++t) {
          int64_t at = i[2] * stride - pad + t * dilation;
          if (at >= 0 && at < l)
            s += x.at({i[0], g * cg + ci, at}) * w.at({i[1], ci, t});
        }
      return s;
    })};
  };
}

/// max or average pooling of [N, C, L] with a window, stride and padding (the average counts
/// the window's taps inside the input, `exclusive`, or all of them).
RefFn pool1dRef(bool max, int64_t k, int64_t stride, int64_t pad, bool exclusive) {
  return [=](const Refs &in) {
    const Buffer &x = in[0];
    int64_t l = x.meta.shape[2], ol = (l + 2 * pad - k) / stride + 1;
    return Refs{build({x.meta.shape[0], x.meta.shape[1], ol}, [&](std::vector<int64_t> &i) {
      double acc = max ? -INFINITY : 0, count = 0;
      for (int64_t t = 0; t < k; ++t) {
        int64_t at = i[2] * stride - pad + t;
        if (at >= 0 && at < l) {
          acc = max ? std::max(acc, x.at({i[0], i[1], at})) : acc + x.at({i[0], i[1], at});
          ++count;
        }
      }
      return max ? acc : acc / (exclusive ? count : static_cast<double>(k));
    })};
  };
}

void addLineCases(std::vector<Case> &c) {
  const TensorMeta kLine{{2, 4, 9}, DType::Float32}, kW{{6, 2, 3}, DType::Float32},
      kB{{6}, DType::Float32}, kDense{{5, 4, 3}, DType::Float32};
  c.push_back({{tf + "conv1d", "torch.conv1d", pf + "conv1d"},
               {kLine, kW, kB},
               {T(0), T(1), T(2)},
               {{"stride", Arg::ofInt(2)}, {"padding", Arg::ofInt(1)}, {"groups", Arg::ofInt(2)}},
               conv1dRef(2, 1, 1, 2)});
  c.push_back({{tf + "conv1d", pf + "conv1d"},
               {kLine, kDense},
               {T(0), T(1)},
               {{"dilation", Arg::ofInt(2)}},
               conv1dRef(1, 0, 2, 1)});
  c.push_back({{tf + "max_pool1d", pf + "max_pool1d"},
               {kLine},
               {T(0), Arg::ofInt(3)},
               {{"stride", Arg::ofInt(2)}, {"padding", Arg::ofInt(1)}},
               pool1dRef(true, 3, 2, 1, true)});
  c.push_back({{tf + "avg_pool1d", "torch.avg_pool1d"},
               {kLine},
               {T(0), Arg::ofInt(3)},
               {{"stride", Arg::ofInt(2)}, {"padding", Arg::ofInt(1)}},
               pool1dRef(false, 3, 2, 1, false)});
  c.push_back({{pf + "avg_pool1d"},
               {kLine},
               {T(0), Arg::ofInt(3)},
               {{"stride", Arg::ofInt(2)}, {"padding", Arg::ofInt(1)}},
               pool1dRef(false, 3, 2, 1, true)});
}

/// conv_transpose2d by its definition: every input element scattered through every tap,
/// out[n, o, iy*s - p + ky*d, ix*s - p + kx*d] += x[n, c, iy, ix] * w[c, o % OCg, ky, kx].
RefFn convTransposeRef(std::array<int64_t, 2> stride, std::array<int64_t, 2> pad,
                       std::array<int64_t, 2> extra, std::array<int64_t, 2> dilation,
                       int64_t groups) {
  return [=](const Refs &in) {
    const Buffer &x = in[0], &w = in[1];
    int64_t n = x.meta.shape[0], c = x.meta.shape[1], h = x.meta.shape[2], wd = x.meta.shape[3];
    int64_t ocg = w.meta.shape[1], kh = w.meta.shape[2], kw = w.meta.shape[3], cg = c / groups;
    int64_t oh = (h - 1) * stride[0] - 2 * pad[0] + dilation[0] * (kh - 1) + extra[0] + 1;
    int64_t ow = (wd - 1) * stride[1] - 2 * pad[1] + dilation[1] * (kw - 1) + extra[1] + 1;
    Buffer y = build({n, ocg * groups, oh, ow}, [&](std::vector<int64_t> &i) {
      return in.size() > 2 ? in[2].data[i[1]] : 0.0;
    });
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t iy = 0; iy < h; ++iy)
          for (int64_t ix = 0; ix < wd; ++ix)
            for (int64_t o = 0; o < ocg; ++o)
              for (int64_t ky = 0; ky < kh; ++ky)
                for (int64_t kx = 0; kx < kw; ++kx) {
                  int64_t yy = iy * stride[0] - pad[0] + ky * dilation[0];
                  int64_t xx = ix * stride[1] - pad[1] + kx * dilation[1];
                  if (yy < 0 || yy >= oh || xx < 0 || xx >= ow)
                    continue;
                  int64_t oc = (ci / cg) * ocg + o;
                  y.data[((b * ocg * groups + oc) * oh + yy) * ow + xx] +=
                      x.at({b, ci, iy, ix}) * w.at({ci, o, ky, kx});
                }
    return Refs{y};
  };
}

void addTransposedCases(std::vector<Case> &c) {
  const TensorMeta kMap{{2, 4, 3, 4}, DType::Float32}, kW{{4, 3, 3, 2}, DType::Float32},
      kB{{6}, DType::Float32};
  c.push_back({{tf + "conv_transpose2d", "torch.conv_transpose2d", pf + "conv2d_transpose"},
               {kMap, kW, kB},
               {T(0), T(1), T(2)},
               {{"stride", ints({2, 3})},
                {"padding", ints({1, 0})},
                {"output_padding", ints({1, 2})},
                {"groups", Arg::ofInt(2)}},
               convTransposeRef({2, 3}, {1, 0}, {1, 2}, {1, 1}, 2)});
  c.push_back({{tf + "conv_transpose2d", pf + "conv2d_transpose"},
               {kMap, kW},
               {T(0), T(1)},
               {{"padding", Arg::ofInt(2)}, {"dilation", Arg::ofInt(2)}},
               convTransposeRef({1, 1}, {2, 2}, {0, 0}, {2, 2}, 1)});
  c.push_back({{pf + "conv2d_transpose"},
               {kMap, kW},
               {T(0), T(1)},
               {{"stride", Arg::ofInt(2)}, {"output_size", ints({8, 9})}},
               convTransposeRef({2, 2}, {0, 0}, {1, 1}, {1, 1}, 1)});
  // 1-d: the same over [N, C, 1, L].
  c.push_back({{tf + "conv_transpose1d", "torch.conv_transpose1d", pf + "conv1d_transpose"},
               {TensorMeta{{2, 4, 5}, DType::Float32}, TensorMeta{{4, 3, 3}, DType::Float32}},
               {T(0), T(1)},
               {{"stride", Arg::ofInt(2)}, {"padding", Arg::ofInt(1)}},
               [](const Refs &in) {
                 Refs image = {reshape(in[0], {2, 4, 1, 5}), reshape(in[1], {4, 3, 1, 3})};
                 Buffer y = convTransposeRef({1, 2}, {0, 1}, {0, 0}, {1, 1}, 1)(image)[0];
                 return Refs{reshape(y, {2, 3, y.meta.shape[3]})};
               }});
}

void addMultiMarginCases(std::vector<Case> &c) {
  // Labels in [0, 4) from [0, 3.4) rounded; margin 0.6, p = 2, class weights.
  auto ref = [](bool torch) {
    return [=](const Refs &in) {
      Buffer loss = build({5}, [&](std::vector<int64_t> &i) {
        auto y = static_cast<int64_t>(in[1].data[i[0]]);
        double s = 0, xy = in[0].at({i[0], y});
        for (int64_t j = 0; j < 4; ++j)
          if (j != y || !torch)
            s += std::pow(std::max(0.0, 0.6 - xy + in[0].at({i[0], j})), 2);
        if (!torch)
          s -= 0.6 * 0.6;
        return s * in[2].data[y] / 4;
      });
      return Refs{reduced(loss, "mean")};
    };
  };
  const TensorMeta kLogits{{5, 4}, DType::Float32}, kLabels{{5}, DType::Int64},
      kW{{4}, DType::Float32};
  for (bool torch : {true, false})
    c.push_back({{(torch ? tf : pf) + "multi_margin_loss"},
                 {kLogits, kLabels, kW},
                 {T(0), T(1)},
                 {{"p", Arg::ofInt(2)}, {"margin", Arg::ofFloat(0.6)}, {"weight", T(2)}},
                 ref(torch),
                 0,
                 3.4});
}

} // namespace

void addFunctionalCases(std::vector<Case> &c) {
  addActivationCases(c);
  addResamplingCases(c);
  addLossCases(c);
  addMoreCases(c);
  addPoolingCases(c);
  addLineCases(c);
  addTransposedCases(c);
  addMultiMarginCases(c);
}

} // namespace sotc::ops::cases
