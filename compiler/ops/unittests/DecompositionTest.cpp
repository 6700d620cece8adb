// Every operator entry's decomposition agrees numerically with an independent reference
// formula of the API on random inputs, and every entry of the table has such a case.
#include "compiler/ops/OpTable.h"
#include "compiler/ops/unittests/Cases.h"
#include "compiler/ops/unittests/Reference.h"

#include <array>
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <set>

using namespace sotc::ops;
using namespace sotc::ops::ref;
using namespace sotc::ops::cases;

namespace {

Arg resolveSlots(const Arg &a, const std::vector<TensorMeta> &metas) {
  if (a.isTensor())
    return Arg::ofTensor(metas[a.intValue]);
  Arg out = a;
  for (Arg &item : out.items)
    item = resolveSlots(item, metas);
  return out;
}

std::vector<std::string> four(const std::string &paddle, const std::string &torch) {
  return {"paddle." + paddle, "Tensor." + paddle, "torch." + torch, "torch.Tensor." + torch};
}

RefFn pairwise(std::function<double(double, double)> f, DType out = DType::Float32) {
  return [=](const Refs &in) { return Refs{withDType(zip(in[0], in[1], f), out)}; };
}

RefFn withScalar(double s, std::function<double(double, double)> f, DType out = DType::Float32) {
  return [=](const Refs &in) { return Refs{withDType(zip(in[0], scalar(s), f), out)}; };
}

double sum(const Buffer &b) {
  double s = 0;
  for (double v : b.data)
    s += v;
  return s;
}

Buffer rowReduce(const Buffer &x, double init, std::function<double(double, double)> f) {
  return reduce(x, {x.meta.rank() - 1}, init, f);
}

Buffer softmaxRows(const Buffer &x) {
  Buffer m = rowReduce(x, -INFINITY, [](double a, double b) { return std::max(a, b); });
  Buffer e = map(zip(x, m, std::minus<double>()), [](double v) { return std::exp(v); });
  return zip(e, rowReduce(e, 0, std::plus<double>()), std::divides<double>());
}

Buffer meanRows(const Buffer &x) {
  double n = static_cast<double>(x.meta.shape.back());
  return map(rowReduce(x, 0, std::plus<double>()), [n](double v) { return v / n; });
}

double sigmoidRef(double v) { return 1 / (1 + std::exp(-v)); }

/// Direct 2-d window loops over NCHW, the reference for conv2d and pooling: `tap(n, c, oc, y,
/// x, ky, kx, value, inside)` sees every tap of every output element.
struct Window2d {
  int64_t kh, kw, stride, pad, dilation;
};

Buffer conv2dRef(const Buffer &x, const Buffer &w, const Buffer *bias, Window2d win,
                 int64_t groups) {
  int64_t n = x.meta.shape[0], c = x.meta.shape[1], h = x.meta.shape[2], wd = x.meta.shape[3];
  int64_t oc = w.meta.shape[0], cg = c / groups, ocg = oc / groups;
  int64_t oh = (h + 2 * win.pad - win.dilation * (win.kh - 1) - 1) / win.stride + 1;
  int64_t ow = (wd + 2 * win.pad - win.dilation * (win.kw - 1) - 1) / win.stride + 1;
  Buffer y{{{n, oc, oh, ow}, DType::Float32}, {}};
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double sum = bias ? bias->data[o] : 0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < win.kh; ++ky)
              for (int64_t kx = 0; kx < win.kw; ++kx) {
                int64_t yy = i * win.stride - win.pad + ky * win.dilation;
                int64_t xx = j * win.stride - win.pad + kx * win.dilation;
                if (yy >= 0 && yy < h && xx >= 0 && xx < wd)
                  sum += x.at({b, (o / ocg) * cg + ci, yy, xx}) * w.at({o, ci, ky, kx});
              }
          y.data.push_back(sum);
        }
  return y;
}

/// Direct loops of conv3d over NCDHW: per-axis stride, padding and dilation (d, h, w).
Buffer conv3dRef(const Buffer &x, const Buffer &w, const Buffer *bias,
                 std::array<int64_t, 3> stride, std::array<int64_t, 3> pad,
                 std::array<int64_t, 3> dilation, int64_t groups) {
  const std::vector<int64_t> &xs = x.meta.shape, &ws = w.meta.shape;
  int64_t cg = xs[1] / groups, ocg = ws[0] / groups;
  std::array<int64_t, 3> out;
  for (int a = 0; a < 3; ++a)
    out[a] = (xs[2 + a] + 2 * pad[a] - dilation[a] * (ws[2 + a] - 1) - 1) / stride[a] + 1;
  Buffer y{{{xs[0], ws[0], out[0], out[1], out[2]}, DType::Float32}, {}};
  for (int64_t b = 0; b < xs[0]; ++b)
    for (int64_t o = 0; o < ws[0]; ++o)
      for (int64_t p = 0; p < out[0]; ++p)
        for (int64_t i = 0; i < out[1]; ++i)
          for (int64_t j = 0; j < out[2]; ++j) {
            double sum = bias ? bias->data[o] : 0;
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t kd = 0; kd < ws[2]; ++kd)
                for (int64_t ky = 0; ky < ws[3]; ++ky)
                  for (int64_t kx = 0; kx < ws[4]; ++kx) {
                    int64_t zz = p * stride[0] - pad[0] + kd * dilation[0];
                    int64_t yy = i * stride[1] - pad[1] + ky * dilation[1];
                    int64_t xx = j * stride[2] - pad[2] + kx * dilation[2];
                    if (zz >= 0 && zz < xs[2] && yy >= 0 && yy < xs[3] && xx >= 0 && xx < xs[4])
                      sum += x.at({b, (o / ocg) * cg + ci, zz, yy, xx}) * w.at({o, ci, kd, ky, kx});
                  }
            y.data.push_back(sum);
          }
  return y;
}

/// Direct loops of a 3-d max or average pool over NCDHW (no ceil_mode): the average divides by
/// the whole window, or with `exclusive` by its taps inside the input.
Buffer pool3dRef(const Buffer &x, std::array<int64_t, 3> k, std::array<int64_t, 3> stride,
                 std::array<int64_t, 3> pad, bool average, bool exclusive) {
  const std::vector<int64_t> &xs = x.meta.shape;
  std::array<int64_t, 3> out;
  for (int a = 0; a < 3; ++a)
    out[a] = (xs[2 + a] + 2 * pad[a] - k[a]) / stride[a] + 1;
  Buffer y{{{xs[0], xs[1], out[0], out[1], out[2]}, DType::Float32}, {}};
  for (int64_t b = 0; b < xs[0]; ++b)
    for (int64_t c = 0; c < xs[1]; ++c)
      for (int64_t p = 0; p < out[0]; ++p)
        for (int64_t i = 0; i < out[1]; ++i)
          for (int64_t j = 0; j < out[2]; ++j) {
            double best = -std::numeric_limits<double>::infinity(), sum = 0;
            int64_t inside = 0;
            for (int64_t kd = 0; kd < k[0]; ++kd)
              for (int64_t ky = 0; ky < k[1]; ++ky)
                for (int64_t kx = 0; kx < k[2]; ++kx) {
                  int64_t zz = p * stride[0] - pad[0] + kd, yy = i * stride[1] - pad[1] + ky,
                          xx = j * stride[2] - pad[2] + kx;
                  if (zz < 0 || zz >= xs[2] || yy < 0 || yy >= xs[3] || xx < 0 || xx >= xs[4])
                    continue;
                  double v = x.at({b, c, zz, yy, xx});
                  best = std::max(best, v), sum += v, ++inside;
                }
            y.data.push_back(
                !average ? best
                         : sum / static_cast<double>(exclusive ? inside : k[0] * k[1] * k[2]));
          }
  return y;
}

/// Windows along one axis of `size`: floor, or with `ceil` one more where the last is cut
/// short unless it would start past the input and the leading padding.
int64_t windowCount(int64_t size, int64_t k, int64_t stride, int64_t pad, bool ceil) {
  int64_t span = size + 2 * pad - k;
  int64_t n = (ceil ? (span + stride - 1) / stride : span / stride) + 1;
  return ceil && (n - 1) * stride >= size + pad ? n - 1 : n;
}

/// max (`average` false) or average pooling; `exclusive` divides by the taps inside the
/// input, otherwise by those inside the padded input.
Buffer pool2dRef(const Buffer &x, Window2d win, bool average, bool exclusive,
                 bool ceil = false) {
  int64_t n = x.meta.shape[0], c = x.meta.shape[1], h = x.meta.shape[2], wd = x.meta.shape[3];
  int64_t oh = windowCount(h, win.kh, win.stride, win.pad, ceil);
  int64_t ow = windowCount(wd, win.kw, win.stride, win.pad, ceil);
  Buffer y{{{n, c, oh, ow}, DType::Float32}, {}};
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = average ? 0 : -INFINITY, inside = 0, padded = 0;
          for (int64_t ky = 0; ky < win.kh; ++ky)
            for (int64_t kx = 0; kx < win.kw; ++kx) {
              int64_t yy = i * win.stride - win.pad + ky, xx = j * win.stride - win.pad + kx;
              padded += yy < h + win.pad && xx < wd + win.pad;
              if (yy < 0 || yy >= h || xx < 0 || xx >= wd)
                continue;
              double v = x.at({b, ch, yy, xx});
              acc = average ? acc + v : std::max(acc, v);
              inside += 1;
            }
          y.data.push_back(average ? acc / (exclusive ? inside : padded) : acc);
        }
  return y;
}

/// softmax(q k^T * scale + mask) v over [B, H, L, E] tensors (a bool mask keeps where true).
Buffer attentionRef(const Buffer &q, const Buffer &k, const Buffer &v, const Buffer *mask,
                    double scale) {
  int64_t b = q.meta.shape[0], h = q.meta.shape[1], l = q.meta.shape[2], e = q.meta.shape[3];
  int64_t s = k.meta.shape[2], ev = v.meta.shape[3];
  Buffer out{{{b, h, l, ev}, DType::Float32}, {}};
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t i = 0; i < l; ++i) {
        std::vector<double> w(s);
        double top = -INFINITY, sum = 0;
        for (int64_t j = 0; j < s; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < e; ++d)
            dot += q.at({bi, hi, i, d}) * k.at({bi, hi, j, d});
          w[j] = dot * scale;
          if (mask && mask->meta.dtype == DType::Bool)
            w[j] = mask->at({i, j}) != 0 ? w[j] : -INFINITY;
          else if (mask)
            w[j] += mask->at({i, j});
          top = std::max(top, w[j]);
        }
        for (double &x : w)
          sum += x = std::exp(x - top);
        for (int64_t d = 0; d < ev; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < s; ++j)
            acc += w[j] / sum * v.at({bi, hi, j, d});
          out.data.push_back(acc);
        }
      }
  return out;
}

/// Names of an op in each framework that has it: paddle.X / Tensor.X, torch.Y / torch.Tensor.Y
/// (an empty name: the framework has none).
std::vector<std::string> both(const std::string &paddle, const std::string &torch) {
  std::vector<std::string> names;
  if (!paddle.empty())
    names = {"paddle." + paddle, "Tensor." + paddle};
  if (!torch.empty()) {
    names.push_back("torch." + torch);
    names.push_back("torch.Tensor." + torch);
  }
  return names;
}

double digammaRef(double x) { // the derivative of lgamma, by central differences
  const double h = 1e-5;
  return (std::lgamma(x + h) - std::lgamma(x - h)) / (2 * h);
}

double erfinvRef(double y) { // erf is increasing: bisection
  double lo = -6, hi = 6;
  for (int i = 0; i < 200; ++i) {
    double mid = (lo + hi) / 2;
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

/// The rest of the elementwise family (LowerMath.cpp).
void addMathCases(std::vector<Case> &c) {
  struct U {
    std::string paddle, torch;
    double (*f)(double);
    double lo, hi;
  };
  const U unaries[] = {
      {"tan", "tan", [](double v) { return std::tan(v); }, -1.2, 1.2},
      {"asin", "asin", [](double v) { return std::asin(v); }, -0.99, 0.99},
      {"acos", "acos", [](double v) { return std::acos(v); }, -0.99, 0.99},
      {"atan", "atan", [](double v) { return std::atan(v); }, -4, 4},
      {"sinh", "sinh", [](double v) { return std::sinh(v); }, -3, 3},
      {"cosh", "cosh", [](double v) { return std::cosh(v); }, -3, 3},
      {"asinh", "asinh", [](double v) { return std::asinh(v); }, -4, 4},
      {"acosh", "acosh", [](double v) { return std::acosh(v); }, 1, 5},
      {"atanh", "atanh", [](double v) { return std::atanh(v); }, -0.95, 0.95},
      {"expm1", "expm1", [](double v) { return std::expm1(v); }, -2, 2},
      {"", "exp2", [](double v) { return std::exp2(v); }, -3, 3},
      {"log2", "log2", [](double v) { return std::log2(v); }, 0.1, 5},
      {"log10", "log10", [](double v) { return std::log10(v); }, 0.1, 5},
      {"", "erfc", [](double v) { return std::erfc(v); }, -2, 2},
      {"trunc", "trunc", [](double v) { return std::trunc(v); }, -3, 3},
      {"frac", "frac", [](double v) { return v - std::trunc(v); }, -3, 3},
      {"sinc", "sinc",
       [](double v) { return v == 0 ? 1 : std::sin(M_PI * v) / (M_PI * v); }, -3, 3},
      {"deg2rad", "deg2rad", [](double v) { return v * M_PI / 180; }, -200, 200},
      {"rad2deg", "rad2deg", [](double v) { return v * 180 / M_PI; }, -4, 4},
      {"", "positive", [](double v) { return v; }, -2, 2},
      {"erfinv", "erfinv", erfinvRef, -0.98, 0.98},
      {"lgamma", "lgamma", [](double v) { return std::lgamma(v); }, -3.7, 6},
      {"digamma", "digamma", digammaRef, 0.1, 8},
      {"i0", "i0", [](double v) { return std::cyl_bessel_i(0.0, std::fabs(v)); }, -26, 26},
      {"logit", "logit", [](double v) { return std::log(v / (1 - v)); }, 0.02, 0.98},
      {"nan_to_num", "nan_to_num", [](double v) { return v; }, -2, 2},
  };
  for (const U &u : unaries)
    c.push_back({both(u.paddle, u.torch), {kX}, {T(0)}, {}, elementwise(u.f), u.lo, u.hi});
  c.push_back({{"torch.digamma"}, {kX}, {T(0)}, {}, elementwise(digammaRef), -2.8, -2.2});
  c.push_back({{"torch.logit"}, {kX}, {T(0), Arg::ofFloat(0.25)}, {}, elementwise([](double v) {
                 v = std::min(std::max(v, 0.25), 0.75);
                 return std::log(v / (1 - v));
               }), 0, 1});
  auto predicate = [](std::function<bool(double)> f) {
    return elementwise([f](double v) { return double(f(v)); }, DType::Bool);
  };
  // Classification of floats (random values are finite; test "NaN, infinities and -0.0"
  // gives the special values).
  c.push_back({both("isnan", "isnan"), {kX}, {T(0)}, {}, predicate([](double) { return false; })});
  c.push_back({both("isinf", "isinf"), {kX}, {T(0)}, {}, predicate([](double) { return false; })});
  c.push_back({both("isposinf", "isposinf"), {kX}, {T(0)}, {}, predicate([](double) { return false; })});
  c.push_back({both("isneginf", "isneginf"), {kX}, {T(0)}, {}, predicate([](double) { return false; })});
  c.push_back({both("isfinite", "isfinite"), {kI}, {T(0)}, {}, predicate([](double) { return true; })});
  c.push_back({both("isreal", "isreal"), {kX}, {T(0)}, {}, predicate([](double) { return true; })});
  c.push_back({both("signbit", "signbit"), {kX}, {T(0)}, {}, predicate([](double v) { return v < 0; })});
  c.push_back({{"torch.signbit"}, {kI}, {T(0)}, {}, predicate([](double v) { return v < 0; })});
  c.push_back({{"torch.isfinite"}, {kX}, {T(0)}, {}, predicate([](double) { return true; })});

  struct B {
    std::string paddle, torch;
    double (*f)(double, double);
    double lo, hi;
  };
  const B binaries[] = {
      {"atan2", "atan2", [](double a, double b) { return std::atan2(a, b); }, -2, 2},
      {"copysign", "copysign", [](double a, double b) { return std::copysign(a, b); }, -2, 2},
      {"hypot", "hypot", [](double a, double b) { return std::hypot(a, b); }, -2, 2},
      {"logaddexp", "logaddexp",
       [](double a, double b) { return std::log(std::exp(a) + std::exp(b)); }, -3, 3},
      {"", "logaddexp2", [](double a, double b) { return std::log2(std::exp2(a) + std::exp2(b)); },
       -3, 3},
      {"", "xlogy", [](double a, double b) { return a * std::log(b); }, 0.1, 3},
      {"ldexp", "ldexp", [](double a, double b) { return a * std::exp2(b); }, -2, 2},
      {"", "fmod", [](double a, double b) { return std::fmod(a, b); }, 0.3, 3},
      {"nextafter", "nextafter",
       [](double a, double b) { return double(std::nextafterf(float(a), float(b))); }, -2, 2},
      {"fmax", "fmax", [](double a, double b) { return std::max(a, b); }, -2, 2},
      {"fmin", "fmin", [](double a, double b) { return std::min(a, b); }, -2, 2},
      {"heaviside", "heaviside", [](double a, double b) { return a == 0 ? b : double(a > 0); }, -2,
       2},
  };
  for (const B &op : binaries)
    c.push_back({both(op.paddle, op.torch), {kX, kRow}, {T(0), T(1)}, {}, pairwise(op.f), op.lo,
                 op.hi});
  c.push_back({{"torch.fmod"}, {kI, kI}, {T(0), T(1)}, {}, [](const Refs &in) {
                 Buffer b = in[1];
                 for (double &v : b.data)
                   v = v == 0 ? 1 : v;
                 return Refs{zip(in[0], b, [](double a, double d) { return std::fmod(a, d); })};
               }, -9, 9});
  c.push_back({{"torch.xlogy"}, {kX}, {Arg::ofFloat(0.0), T(0)}, {}, elementwise([](double) {
                 return 0.0;
               }), 0.1, 3});
  c.push_back({{"torch.float_power", "torch.Tensor.float_power"}, {kX}, {T(0), Arg::ofInt(3)}, {},
               elementwise([](double v) { return v * v * v; }, DType::Float64)});
  c.push_back({{"torch.rsub"}, {kX, kRow}, {T(0), T(1)}, {{"alpha", Arg::ofFloat(2)}},
               pairwise([](double a, double b) { return b - 2 * a; })});
  c.push_back({{"torch.clamp_min", "torch.Tensor.clamp_min"}, {kX}, {T(0), Arg::ofFloat(0.5)}, {},
               elementwise([](double v) { return std::max(v, 0.5); })});
  c.push_back({{"torch.clamp_max", "torch.Tensor.clamp_max"}, {kX, kRow}, {T(0), T(1)}, {},
               pairwise([](double v, double m) { return std::min(v, m); })});
  c.push_back({{"torch.clamp", "torch.Tensor.clamp"}, {kX, kRow}, {T(0), T(1)}, {},
               pairwise([](double v, double m) { return std::max(v, m); })});
  c.push_back({both("lerp", "lerp"), {kX, kRow}, {T(0), T(1), Arg::ofFloat(0.3)}, {},
               pairwise([](double a, double b) { return a + 0.3 * (b - a); })});
  c.push_back({{"torch.lerp"}, {kX, kRow, kX}, {T(0), T(1), T(2)}, {}, [](const Refs &in) {
                 Buffer out = in[0];
                 for (size_t i = 0; i < out.data.size(); ++i)
                   out.data[i] += in[2].data[i] * (in[1].data[i % 4] - in[0].data[i]);
                 return Refs{out};
               }});
  for (bool mul : {true, false})
    c.push_back({both("", mul ? "addcmul" : "addcdiv"), {kX, kRow, kX},
                 {T(0), T(1), T(2)}, {{"value", Arg::ofFloat(0.5)}}, [mul](const Refs &in) {
                   Buffer out = in[0];
                   for (size_t i = 0; i < out.data.size(); ++i) {
                     double a = in[1].data[i % 4], b = in[2].data[i];
                     out.data[i] += 0.5 * (mul ? a * b : a / b);
                   }
                   return Refs{out};
                 }, 0.5, 2});
  c.push_back({both("isclose", "isclose"), {kX, kRow}, {T(0), T(1)}, {{"atol", Arg::ofFloat(0.5)}},
               pairwise([](double a, double b) {
                 return double(std::fabs(a - b) <= 0.5 + 1e-5 * std::fabs(b));
               }, DType::Bool)});
}

/// f applied to each row (the last axis) of a [rows, cols] buffer: [rows, k], or [rows] when
/// f gives one value.
Buffer perRow(const Buffer &x, std::function<std::vector<double>(const std::vector<double> &)> f,
              DType dtype = DType::Float32) {
  int64_t rows = x.meta.shape[0], cols = x.meta.shape[1];
  Buffer out{{{rows}, dtype}, {}};
  int64_t k = 0;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> row(x.data.begin() + r * cols, x.data.begin() + (r + 1) * cols);
    std::vector<double> got = f(row);
    k = int64_t(got.size());
    out.data.insert(out.data.end(), got.begin(), got.end());
  }
  if (k != 1)
    out.meta.shape.push_back(k);
  return out;
}

/// Reductions and scans (LowerReductions.cpp), along the rows of kX.
void addReductionCases(std::vector<Case> &c) {
  auto rows = [](std::function<std::vector<double>(const std::vector<double> &)> f,
                 DType dtype = DType::Float32) {
    return [=](const Refs &in) { return Refs{perRow(in[0], f, dtype)}; };
  };
  auto argOf = [](bool isMax) {
    return [isMax](const std::vector<double> &r) {
      auto it = isMax ? std::max_element(r.begin(), r.end()) : std::min_element(r.begin(), r.end());
      return std::vector<double>{double(it - r.begin())};
    };
  };
  const Arg last = Arg::ofInt(-1);
  c.push_back({both("argmax", "argmax"), {kX}, {T(0), last}, {}, rows(argOf(true), DType::Int64)});
  c.push_back({both("argmin", "argmin"), {kX}, {T(0), last}, {}, rows(argOf(false), DType::Int64)});
  c.push_back({{"torch.argmax"}, {kX}, {T(0)}, {}, [=](const Refs &in) {
                 return Refs{reshape(perRow(reshape(in[0], {1, 12}), argOf(true), DType::Int64), {})};
               }});
  for (bool isMax : {true, false}) {
    std::string n = isMax ? "max" : "min";
    c.push_back({both("", n), {kX}, {T(0), Arg::ofInt(1)}, {}, [=](const Refs &in) {
                   Buffer idx = perRow(in[0], argOf(isMax), DType::Int64);
                   Buffer v = perRow(in[0], [&](const std::vector<double> &r) {
                     return std::vector<double>{isMax ? *std::max_element(r.begin(), r.end())
                                                      : *std::min_element(r.begin(), r.end())};
                   });
                   return Refs{v, idx};
                 }});
    c.push_back({{"torch." + n}, {kX}, {T(0)}, {}, [=](const Refs &in) {
                   double v = isMax ? *std::max_element(in[0].data.begin(), in[0].data.end())
                                    : *std::min_element(in[0].data.begin(), in[0].data.end());
                   return Refs{scalar(v)};
                 }});
    c.push_back({{"torch." + n}, {kX, kRow}, {T(0), T(1)}, {}, pairwise([isMax](double a, double b) {
                   return isMax ? std::max(a, b) : std::min(a, b);
                 })});
  }
  c.push_back({both("", "aminmax"), {kX}, {T(0)}, {{"dim", last}}, [=](const Refs &in) {
                 auto ext = [](bool mx) {
                   return [mx](const std::vector<double> &r) {
                     return std::vector<double>{mx ? *std::max_element(r.begin(), r.end())
                                                   : *std::min_element(r.begin(), r.end())};
                   };
                 };
                 return Refs{perRow(in[0], ext(false)), perRow(in[0], ext(true))};
               }});
  c.push_back({both("all", "all"), {kB}, {T(0), last}, {}, rows([](const std::vector<double> &r) {
                 return std::vector<double>{double(std::all_of(r.begin(), r.end(),
                                                               [](double v) { return v != 0; }))};
               }, DType::Bool)});
  c.push_back({both("any", "any"), {kI}, {T(0), last}, {}, rows([](const std::vector<double> &r) {
                 return std::vector<double>{double(std::any_of(r.begin(), r.end(),
                                                               [](double v) { return v != 0; }))};
               }, DType::Bool)});
  c.push_back({both("count_nonzero", "count_nonzero"), {kI}, {T(0), last}, {},
               rows([](const std::vector<double> &r) {
                 return std::vector<double>{double(std::count_if(r.begin(), r.end(),
                                                                 [](double v) { return v != 0; }))};
               }, DType::Int64)});
  auto moment = [](double correction, bool root) {
    return [=](const std::vector<double> &r) {
      double m = 0, ss = 0;
      for (double v : r)
        m += v / r.size();
      for (double v : r)
        ss += (v - m) * (v - m);
      double var = ss / (r.size() - correction);
      return std::vector<double>{root ? std::sqrt(var) : var};
    };
  };
  c.push_back({both("var", "var"), {kX}, {T(0), last}, {}, rows(moment(1, false))});
  c.push_back({both("std", "std"), {kX}, {T(0), last}, {}, rows(moment(1, true))});
  c.push_back({{"torch.var"}, {kX}, {T(0), last}, {{"correction", Arg::ofInt(0)}},
               rows(moment(0, false))});
  c.push_back({{"torch.std"}, {kX}, {T(0), last, Arg::ofBool(false)}, {}, rows(moment(0, true))});
  for (bool root : {false, true})
    c.push_back({{root ? "torch.std_mean" : "torch.var_mean"}, {kX}, {T(0), last}, {},
                 [=](const Refs &in) {
                   return Refs{perRow(in[0], moment(1, root)), reshape(meanRows(in[0]), {3})};
                 }});
  auto pnorm = [](double p) {
    return [p](const std::vector<double> &r) {
      double s = 0;
      for (double v : r)
        s += std::pow(std::fabs(v), p);
      return std::vector<double>{std::pow(s, 1 / p)};
    };
  };
  c.push_back({both("norm", "norm"), {kX}, {T(0)}, {{"p", Arg::ofInt(3)}},
               [=](const Refs &in) { return Refs{reshape(perRow(reshape(in[0], {1, 12}), pnorm(3)), {})}; }});
  c.push_back({{"torch.norm"}, {kX}, {T(0)}, {{"dim", last}}, rows(pnorm(2))});
  c.push_back({{"paddle.norm"}, {kX}, {T(0), Arg::ofFloat(INFINITY), last}, {},
               rows([](const std::vector<double> &r) {
                 double m = 0;
                 for (double v : r)
                   m = std::max(m, std::fabs(v));
                 return std::vector<double>{m};
               })});
  c.push_back({{"torch.linalg.vector_norm"}, {kX}, {T(0), Arg::ofInt(1), last}, {}, rows(pnorm(1))});
  c.push_back({both("", "dist"), {kX, kX}, {T(0), T(1)}, {}, [=](const Refs &in) {
                 Buffer d = zip(in[0], in[1], std::minus<double>());
                 return Refs{reshape(perRow(reshape(d, {1, 12}), pnorm(2)), {})};
               }});
  c.push_back({both("nansum", "nansum"), {kX}, {T(0), last}, {}, rows([](const std::vector<double> &r) {
                 double s = 0;
                 for (double v : r)
                   s += v;
                 return std::vector<double>{s};
               })});
  c.push_back({both("nanmean", "nanmean"), {kX}, {T(0), last}, {}, [](const Refs &in) {
                 return Refs{reshape(meanRows(in[0]), {3})};
               }});
  auto scan = [](double init, std::function<double(double, double)> f) {
    return [=](const std::vector<double> &r) {
      std::vector<double> out;
      double acc = init;
      for (double v : r)
        out.push_back(acc = f(acc, v));
      return out;
    };
  };
  c.push_back({both("cumsum", "cumsum"), {kX}, {T(0), last}, {}, rows(scan(0, std::plus<double>()))});
  c.push_back({both("cumprod", "cumprod"), {kX}, {T(0), last}, {},
               rows(scan(1, std::multiplies<double>()))});
  c.push_back({{"paddle.cumsum"}, {kI}, {T(0)}, {}, [=](const Refs &in) {
                 return Refs{reshape(perRow(reshape(in[0], {1, 12}), scan(0, std::plus<double>()),
                                            DType::Int64), {12})};
               }});
  c.push_back({both("logcumsumexp", "logcumsumexp"), {kX}, {T(0), last}, {},
               rows(scan(-INFINITY, [](double a, double v) { return std::log(std::exp(a) + std::exp(v)); }))});
  for (bool isMax : {true, false})
    c.push_back({both(isMax ? "cummax" : "cummin", isMax ? "cummax" : "cummin"), {kX}, {T(0), last}, {},
                 [=](const Refs &in) {
                   Buffer v = perRow(in[0], scan(isMax ? -INFINITY : INFINITY, [=](double a, double x) {
                                       return isMax ? std::max(a, x) : std::min(a, x);
                                     }));
                   Buffer idx = perRow(in[0], [=](const std::vector<double> &r) {
                     std::vector<double> out;
                     size_t best = 0;
                     for (size_t i = 0; i < r.size(); ++i) {
                       if (isMax ? r[i] >= r[best] : r[i] <= r[best])
                         best = i;
                       out.push_back(double(best));
                     }
                     return out;
                   }, DType::Int64);
                   return Refs{v, idx};
                 }});
}

/// A buffer of `shape` whose element at each multi-index is f(index).
Buffer build(std::vector<int64_t> shape, std::function<double(const std::vector<int64_t> &)> f,
             DType dtype = DType::Float32) {
  Buffer out{{shape, dtype}, {}};
  std::vector<int64_t> i(shape.size(), 0);
  for (int64_t n = out.meta.numElements(), k = 0; k < n; ++k) {
    out.data.push_back(f(i));
    for (size_t a = shape.size(); a-- > 0;)
      if (++i[a] < shape[a])
        break;
      else
        i[a] = 0;
  }
  return out;
}

/// Movement, gathers and scatters (LowerIndexing.cpp), on kX [3, 4] unless said.
void addIndexingCases(std::vector<Case> &c) {
  using I = std::vector<int64_t>;
  auto one = [](std::function<Buffer(const Refs &)> f) {
    return [f](const Refs &in) { return Refs{f(in)}; };
  };
  const TensorMeta k3d{{2, 3, 5}, DType::Float32};
  c.push_back({both("flip", "flip"), {kX}, {T(0), Arg::list({Arg::ofInt(0), Arg::ofInt(-1)})}, {},
               one([](const Refs &in) {
                 return build({3, 4}, [&](const I &i) { return in[0].at({2 - i[0], 3 - i[1]}); });
               })});
  c.push_back({both("", "fliplr"), {kX}, {T(0)}, {}, one([](const Refs &in) {
                 return build({3, 4}, [&](const I &i) { return in[0].at({i[0], 3 - i[1]}); });
               })});
  c.push_back({both("", "flipud"), {kX}, {T(0)}, {}, one([](const Refs &in) {
                 return build({3, 4}, [&](const I &i) { return in[0].at({2 - i[0], i[1]}); });
               })});
  c.push_back({both("rot90", "rot90"), {kX}, {T(0)}, {}, one([](const Refs &in) { // numpy's
                 return build({4, 3}, [&](const I &i) { return in[0].at({i[1], 3 - i[0]}); });
               })});
  c.push_back({{"torch.rot90"}, {kX}, {T(0), Arg::ofInt(-1)}, {}, one([](const Refs &in) {
                 return build({4, 3}, [&](const I &i) { return in[0].at({2 - i[1], i[0]}); });
               })});
  c.push_back({{"torch.rot90"}, {kX}, {T(0), Arg::ofInt(2)}, {}, one([](const Refs &in) {
                 return build({3, 4}, [&](const I &i) { return in[0].at({2 - i[0], 3 - i[1]}); });
               })});
  c.push_back({both("", "narrow"), {kX}, {T(0), Arg::ofInt(1), Arg::ofInt(1), Arg::ofInt(2)}, {},
               one([](const Refs &in) {
                 return build({3, 2}, [&](const I &i) { return in[0].at({i[0], i[1] + 1}); });
               })});
  c.push_back({both("", "select"), {kX}, {T(0), Arg::ofInt(1), Arg::ofInt(-1)}, {},
               one([](const Refs &in) {
                 return build({3}, [&](const I &i) { return in[0].at({i[0], 3}); });
               })});
  auto columns = [](std::vector<std::pair<int64_t, int64_t>> ranges) { // slices of kX's columns
    return [=](const Refs &in) {
      Refs out;
      for (auto [a, e] : ranges)
        out.push_back(build({3, e - a}, [&](const I &i) { return in[0].at({i[0], a + i[1]}); }));
      return out;
    };
  };
  c.push_back({both("unbind", "unbind"), {kX}, {T(0), Arg::ofInt(1)}, {}, [](const Refs &in) {
                 Refs out;
                 for (int64_t j = 0; j < 4; ++j)
                   out.push_back(build({3}, [&](const I &i) { return in[0].at({i[0], j}); }));
                 return out;
               }});
  c.push_back({both("", "tensor_split"), {kX}, {T(0), Arg::ofInt(3), Arg::ofInt(1)}, {},
               columns({{0, 2}, {2, 3}, {3, 4}})});
  c.push_back({{"torch.tensor_split"}, {kX}, {T(0), Arg::list({Arg::ofInt(1), Arg::ofInt(3)}),
                                             Arg::ofInt(1)}, {},
               columns({{0, 1}, {1, 3}, {3, 4}})});
  c.push_back({both("", "hsplit"), {kX}, {T(0), Arg::ofInt(2)}, {}, columns({{0, 2}, {2, 4}})});
  c.push_back({both("", "vsplit"), {kX}, {T(0), Arg::list({Arg::ofInt(1)})}, {},
               [](const Refs &in) {
                 return Refs{build({1, 4}, [&](const I &i) { return in[0].at(i); }),
                             build({2, 4}, [&](const I &i) { return in[0].at({i[0] + 1, i[1]}); })};
               }});
  c.push_back({both("", "dsplit"), {k3d}, {T(0), Arg::list({Arg::ofInt(2)})}, {},
               [](const Refs &in) {
                 return Refs{build({2, 3, 2}, [&](const I &i) { return in[0].at(i); }),
                             build({2, 3, 3}, [&](const I &i) {
                               return in[0].at({i[0], i[1], i[2] + 2});
                             })};
               }});
  c.push_back({both("", "split_with_sizes"), {kX},
               {T(0), Arg::list({Arg::ofInt(1), Arg::ofInt(3)}), Arg::ofInt(1)}, {},
               columns({{0, 1}, {1, 4}})});
  const Arg two = Arg::list({T(0), T(1)});
  c.push_back({{"paddle.stack", "torch.stack"}, {kX, kX}, {two, Arg::ofInt(1)}, {},
               one([](const Refs &in) {
                 return build({3, 2, 4}, [&](const I &i) { return in[i[1]].at({i[0], i[2]}); });
               })});
  c.push_back({{"torch.hstack"}, {kX, kX}, {two}, {}, one([](const Refs &in) {
                 return build({3, 8}, [&](const I &i) { return in[i[1] / 4].at({i[0], i[1] % 4}); });
               })});
  c.push_back({{"torch.hstack"}, {kRow, kRow}, {two}, {}, one([](const Refs &in) {
                 return build({8}, [&](const I &i) { return in[i[0] / 4].at({i[0] % 4}); });
               })});
  c.push_back({{"torch.vstack", "torch.row_stack"}, {kRow, kRow}, {two}, {}, one([](const Refs &in) {
                 return build({2, 4}, [&](const I &i) { return in[i[0]].at({i[1]}); });
               })});
  c.push_back({{"torch.dstack"}, {kX, kX}, {two}, {}, one([](const Refs &in) {
                 return build({3, 4, 2}, [&](const I &i) { return in[i[2]].at({i[0], i[1]}); });
               })});
  c.push_back({{"torch.column_stack"}, {kRow, kRow}, {two}, {}, one([](const Refs &in) {
                 return build({4, 2}, [&](const I &i) { return in[i[1]].at({i[0]}); });
               })});
  c.push_back({{"torch.atleast_1d"}, {kX}, {T(0)}, {}, one([](const Refs &in) { return in[0]; })});
  c.push_back({{"torch.atleast_2d"}, {kRow}, {T(0)}, {}, one([](const Refs &in) {
                 return reshape(in[0], {1, 4});
               })});
  c.push_back({{"torch.atleast_3d"}, {kX, kRow}, {two}, {}, [](const Refs &in) {
                 return Refs{reshape(in[0], {3, 4, 1}), reshape(in[1], {1, 4, 1})};
               }});
  c.push_back({both("tile", "tile"), {kRow}, {T(0), Arg::list({Arg::ofInt(2), Arg::ofInt(2)})}, {},
               one([](const Refs &in) {
                 return build({2, 8}, [&](const I &i) { return in[0].at({i[1] % 4}); });
               })});
  c.push_back({{"torch.Tensor.repeat"}, {kX}, {T(0), Arg::list({Arg::ofInt(1), Arg::ofInt(2)})}, {},
               one([](const Refs &in) {
                 return build({3, 8}, [&](const I &i) { return in[0].at({i[0], i[1] % 4}); });
               })});
  c.push_back({both("repeat_interleave", "repeat_interleave"), {kX}, {T(0), Arg::ofInt(2), Arg::ofInt(0)},
               {}, one([](const Refs &in) {
                 return build({6, 4}, [&](const I &i) { return in[0].at({i[0] / 2, i[1]}); });
               })});
  c.push_back({{"torch.repeat_interleave"}, {kRow}, {T(0), Arg::ofInt(3)}, {}, one([](const Refs &in) {
                 return build({12}, [&](const I &i) { return in[0].at({i[0] / 3}); });
               })});
  c.push_back({{"torch.movedim", "torch.Tensor.movedim", "paddle.moveaxis"}, {k3d},
               {T(0), Arg::ofInt(0), Arg::ofInt(-1)}, {},
               one([](const Refs &in) { return permute(in[0], {1, 2, 0}); })});
  c.push_back({both("", "unflatten"), {kX}, {T(0), Arg::ofInt(1), Arg::list({Arg::ofInt(2), Arg::ofInt(-1)})},
               {}, one([](const Refs &in) { return reshape(in[0], {3, 2, 2}); })});
  c.push_back({both("", "ravel"), {kX}, {T(0)}, {}, one([](const Refs &in) { return reshape(in[0], {12}); })});
  c.push_back({both("", "t"), {kX}, {T(0)}, {}, one([](const Refs &in) { return permute(in[0], {1, 0}); })});
  c.push_back({both("diagonal", "diagonal"), {kX}, {T(0), Arg::ofInt(1)}, {}, one([](const Refs &in) {
                 return build({3}, [&](const I &i) { return in[0].at({i[0], i[0] + 1}); });
               })});
  c.push_back({{"torch.diagonal"}, {k3d}, {T(0), Arg::ofInt(-1), Arg::ofInt(2), Arg::ofInt(1)}, {},
               one([](const Refs &in) { // rows of dim 2, columns of dim 1, offset -1: (i+1, i)
                 return build({2, 3}, [&](const I &i) { return in[0].at({i[0], i[1], i[1] + 1}); });
               })});
  c.push_back({{"paddle.diag", "torch.diag", "torch.Tensor.diag"}, {kRow}, {T(0), Arg::ofInt(1)}, {},
               one([](const Refs &in) {
                 return build({5, 5}, [&](const I &i) {
                   return i[1] - i[0] == 1 ? in[0].at({i[0]}) : 0.0;
                 });
               })});
  c.push_back({{"torch.diag"}, {kRow}, {T(0), Arg::ofInt(-2)}, {}, one([](const Refs &in) {
                 return build({6, 6}, [&](const I &i) {
                   return i[1] - i[0] == -2 ? in[0].at({i[1]}) : 0.0;
                 });
               })});
  c.push_back({{"paddle.diag", "torch.diag"}, {kX}, {T(0), Arg::ofInt(-1)}, {}, one([](const Refs &in) {
                 return build({2}, [&](const I &i) { return in[0].at({i[0] + 1, i[0]}); });
               })});
  c.push_back({{"paddle.diagflat", "torch.diagflat", "torch.Tensor.diagflat"}, {kX}, {T(0)}, {},
               one([](const Refs &in) {
                 return build({12, 12}, [&](const I &i) {
                   return i[0] == i[1] ? in[0].data[i[0]] : 0.0;
                 });
               })});
  c.push_back({{"paddle.diag_embed", "torch.diag_embed", "torch.Tensor.diag_embed"}, {kX}, {T(0)}, {},
               one([](const Refs &in) {
                 return build({3, 4, 4}, [&](const I &i) {
                   return i[1] == i[2] ? in[0].at({i[0], i[1]}) : 0.0;
                 });
               })});
  c.push_back({{"torch.diag_embed"}, {kX}, {T(0), Arg::ofInt(1), Arg::ofInt(0), Arg::ofInt(2)}, {},
               one([](const Refs &in) { // the diagonal's rows along dim 0, columns along dim 2
                 return build({5, 3, 5}, [&](const I &i) {
                   return i[2] - i[0] == 1 ? in[0].at({i[1], i[0]}) : 0.0;
                 });
               })});
  c.push_back({both("trace", "trace"), {kX}, {T(0)}, {}, one([](const Refs &in) {
                 return scalar(in[0].at({0, 0}) + in[0].at({1, 1}) + in[0].at({2, 2}));
               })});
  // Index tensors hold 0..2 (inputs drawn from [0, 2.49) and rounded).
  const TensorMeta kIdx32{{3, 2}, DType::Int64}, kCol{{3, 1}, DType::Int64},
      kFlat{{5}, DType::Int64}, kPair{{2}, DType::Int64}, kSrc{{2, 4}, DType::Float32};
  c.push_back({both("", "gather"), {kX, kIdx32}, {T(0), Arg::ofInt(1), T(1)}, {},
               one([](const Refs &in) {
                 return build({3, 2}, [&](const I &i) {
                   return in[0].at({i[0], int64_t(in[1].at(i))});
                 });
               }), 0, 2.49});
  c.push_back({{"torch.take_along_dim", "torch.Tensor.take_along_dim", "paddle.take_along_axis",
                "Tensor.take_along_axis"},
               {kX, kCol}, {T(0), T(1), Arg::ofInt(1)}, {}, one([](const Refs &in) {
                 return build({3, 1}, [&](const I &i) {
                   return in[0].at({i[0], int64_t(in[1].at(i))});
                 });
               }), 0, 2.49});
  c.push_back({{"torch.take_along_dim"}, {kX, kFlat}, {T(0), T(1)}, {}, one([](const Refs &in) {
                 return build({5}, [&](const I &i) { return in[0].data[int64_t(in[1].at(i))]; });
               }), 0, 2.49});
  c.push_back({both("take", "take"), {kX, kFlat}, {T(0), T(1)}, {}, one([](const Refs &in) {
                 return build({5}, [&](const I &i) { return in[0].data[int64_t(in[1].at(i))]; });
               }), 0, 2.49});
  auto scattered = [](bool add, bool scalarSrc) {
    return [=](const Refs &in) {
      Buffer out = in[0];
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t j = 0; j < 2; ++j) {
          double &dst = out.data[r * 4 + int64_t(in[1].at({r, j}))];
          double v = scalarSrc ? 1.25 : in[2].at({r, j});
          dst = add ? dst + v : v;
        }
      return Refs{out};
    };
  };
  c.push_back({both("", "scatter"), {kX, kIdx32, kX}, {T(0), Arg::ofInt(1), T(1), T(2)}, {},
               scattered(false, false), 0, 2.49});
  c.push_back({{"torch.scatter"}, {kX, kIdx32}, {T(0), Arg::ofInt(1), T(1), Arg::ofFloat(1.25)}, {},
               scattered(false, true), 0, 2.49});
  c.push_back({both("", "scatter_add"), {kX, kIdx32, kX}, {T(0), Arg::ofInt(1), T(1), T(2)}, {},
               scattered(true, false), 0, 2.49});
  c.push_back({both("put_along_axis", ""), {kX, kIdx32},
               {T(0), T(1), Arg::ofFloat(1.25), Arg::ofInt(1)}, {}, [=](const Refs &in) {
                 return scattered(false, true)(in);
               }, 0, 2.49});
  c.push_back({{"paddle.put_along_axis"}, {kX, kIdx32, TensorMeta{{3, 2}, DType::Float32}},
               {T(0), T(1), T(2), Arg::ofInt(1), Arg::ofString("add")}, {},
               scattered(true, false), 0, 2.49});
  auto rowsUpdated = [](std::function<void(Buffer &, int64_t row, int64_t src)> f) {
    return [=](const Refs &in) {
      Buffer out = in[0];
      for (int64_t m = 0; m < 2; ++m)
        f(out, int64_t(in[1].data[m]), m);
      return Refs{out};
    };
  };
  c.push_back({{"torch.index_add", "torch.Tensor.index_add"}, {kX, kPair, kSrc},
               {T(0), Arg::ofInt(0), T(1), T(2)}, {{"alpha", Arg::ofFloat(2)}},
               [=](const Refs &in) {
                 return rowsUpdated([&](Buffer &o, int64_t r, int64_t m) {
                   for (int64_t j = 0; j < 4; ++j)
                     o.data[r * 4 + j] += 2 * in[2].at({m, j});
                 })(in);
               }, 0, 2.49});
  c.push_back({{"paddle.index_add", "Tensor.index_add"}, {kX, kPair, kSrc},
               {T(0), T(1), Arg::ofInt(0), T(2)}, {}, [=](const Refs &in) {
                 return rowsUpdated([&](Buffer &o, int64_t r, int64_t m) {
                   for (int64_t j = 0; j < 4; ++j)
                     o.data[r * 4 + j] += in[2].at({m, j});
                 })(in);
               }, 0, 2.49});
  c.push_back({both("", "index_copy"), {kX, kPair, kSrc}, {T(0), Arg::ofInt(0), T(1), T(2)}, {},
               [=](const Refs &in) {
                 return rowsUpdated([&](Buffer &o, int64_t r, int64_t m) {
                   for (int64_t j = 0; j < 4; ++j)
                     o.data[r * 4 + j] = in[2].at({m, j});
                 })(in);
               }, 0, 2.49});
  auto filled = [](const Refs &in) { // columns named by the index set to -1.5
    Buffer out = in[0];
    for (double col : in[1].data)
      for (int64_t r = 0; r < 3; ++r)
        out.data[r * 4 + int64_t(col)] = -1.5;
    return Refs{out};
  };
  c.push_back({both("", "index_fill"), {kX, kPair}, {T(0), Arg::ofInt(1), T(1), Arg::ofFloat(-1.5)},
               {}, filled, 0, 2.49});
  c.push_back({both("index_fill", ""), {kX, kPair}, {T(0), T(1), Arg::ofInt(1), Arg::ofFloat(-1.5)},
               {}, filled, 0, 2.49});
  // torch's *_copy forms are aliases of their view forms, checked through them above.
}

/// Linear algebra (LowerLinearAlgebra.cpp) and order statistics (LowerSorting.cpp).
void addLinearAlgebraAndSortingCases(std::vector<Case> &c) {
  using I = std::vector<int64_t>;
  auto one = [](std::function<Buffer(const Refs &)> f) {
    return [f](const Refs &in) { return Refs{f(in)}; };
  };
  const TensorMeta kM{{4, 3}, DType::Float32}, kV3{{3}, DType::Float32}, kB1{{2, 3, 4}, DType::Float32},
      kB2{{2, 4, 5}, DType::Float32}, kOut{{3, 5}, DType::Float32};
  auto dotRef = [](const Buffer &a, const Buffer &b) {
    double s = 0;
    for (size_t i = 0; i < a.data.size(); ++i)
      s += a.data[i] * b.data[i];
    return s;
  };
  c.push_back({both("", "dot"), {kRow, kRow}, {T(0), T(1)}, {}, one([=](const Refs &in) {
                 return scalar(dotRef(in[0], in[1]));
               })});
  c.push_back({both("", "vdot"), {kRow, kRow}, {T(0), T(1)}, {}, one([=](const Refs &in) {
                 return scalar(dotRef(in[0], in[1]));
               })});
  c.push_back({both("dot", ""), {kX, kX}, {T(0), T(1)}, {}, one([](const Refs &in) {
                 return build({3}, [&](const I &i) {
                   double s = 0;
                   for (int64_t j = 0; j < 4; ++j)
                     s += in[0].at({i[0], j}) * in[1].at({i[0], j});
                   return s;
                 });
               })});
  c.push_back({both("outer", "outer"), {kRow, kV3}, {T(0), T(1)}, {}, one([](const Refs &in) {
                 return build({4, 3}, [&](const I &i) { return in[0].at({i[0]}) * in[1].at({i[1]}); });
               })});
  c.push_back({both("inner", "inner"), {kX, kX}, {T(0), T(1)}, {}, one([](const Refs &in) {
                 return build({3, 3}, [&](const I &i) {
                   double s = 0;
                   for (int64_t j = 0; j < 4; ++j)
                     s += in[0].at({i[0], j}) * in[1].at({i[1], j});
                   return s;
                 });
               })});
  c.push_back({both("mv", "mv"), {kX, kRow}, {T(0), T(1)}, {}, one([](const Refs &in) {
                 return reshape(matmul2d(in[0], reshape(in[1], {4, 1})), {3});
               })});
  const TensorMeta kM2{{4, 5}, DType::Float32};
  c.push_back({both("", "addmm"), {kOut, kX, kM2}, {T(0), T(1), T(2)},
               {{"beta", Arg::ofFloat(0.5)}, {"alpha", Arg::ofFloat(2)}}, one([](const Refs &in) {
                 Buffer p = matmul2d(in[1], in[2]);
                 return zip(in[0], p, [](double a, double b) { return 0.5 * a + 2 * b; });
               })});
  c.push_back({{"torch.addmm"}, {kOut, kX, kM2}, {T(0), T(1), T(2)}, {{"beta", Arg::ofInt(0)}},
               one([](const Refs &in) { return matmul2d(in[1], in[2]); })});
  c.push_back({both("", "addmv"), {kV3, kX, kRow}, {T(0), T(1), T(2)}, {}, one([](const Refs &in) {
                 return zip(in[0], reshape(matmul2d(in[1], reshape(in[2], {4, 1})), {3}),
                            std::plus<double>());
               })});
  c.push_back({both("", "addr"), {kX, kV3, kRow}, {T(0), T(1), T(2)}, {{"alpha", Arg::ofFloat(3)}},
               one([](const Refs &in) {
                 return build({3, 4}, [&](const I &i) {
                   return in[0].at(i) + 3 * in[1].at({i[0]}) * in[2].at({i[1]});
                 });
               })});
  auto bmm = [](const Buffer &a, const Buffer &b) {
    return build({2, 3, 5}, [&](const I &i) {
      double s = 0;
      for (int64_t j = 0; j < 4; ++j)
        s += a.at({i[0], i[1], j}) * b.at({i[0], j, i[2]});
      return s;
    });
  };
  const TensorMeta kBOut{{2, 3, 5}, DType::Float32};
  c.push_back({both("", "baddbmm"), {kBOut, kB1, kB2}, {T(0), T(1), T(2)}, {}, one([=](const Refs &in) {
                 return zip(in[0], bmm(in[1], in[2]), std::plus<double>());
               })});
  c.push_back({both("", "addbmm"), {kOut, kB1, kB2}, {T(0), T(1), T(2)}, {}, one([=](const Refs &in) {
                 Buffer p = bmm(in[1], in[2]);
                 return build({3, 5}, [&](const I &i) {
                   return in[0].at(i) + p.at({0, i[0], i[1]}) + p.at({1, i[0], i[1]});
                 });
               })});
  c.push_back({{"torch.tensordot"}, {kB1, kB2},
               {T(0), T(1), Arg::tuple({Arg::list({Arg::ofInt(2)}), Arg::list({Arg::ofInt(1)})})}, {},
               one([](const Refs &in) {
                 return build({2, 3, 2, 5}, [&](const I &i) {
                   double s = 0;
                   for (int64_t j = 0; j < 4; ++j)
                     s += in[0].at({i[0], i[1], j}) * in[1].at({i[2], j, i[3]});
                   return s;
                 });
               })});
  c.push_back({{"torch.tensordot"}, {kB1, kM2}, {T(0), T(1), Arg::ofInt(1)}, {}, one([](const Refs &in) {
                 return build({2, 3, 5}, [&](const I &i) {
                   double s = 0;
                   for (int64_t j = 0; j < 4; ++j)
                     s += in[0].at({i[0], i[1], j}) * in[1].at({j, i[2]});
                   return s;
                 });
               })});
  c.push_back({{"torch.tensordot"}, {kB1, kM}, {T(0), T(1), Arg::tuple({Arg::list({Arg::ofInt(2), Arg::ofInt(1)}),
                                                                     Arg::list({Arg::ofInt(0), Arg::ofInt(1)})})},
               {}, one([](const Refs &in) {
                 return build({2}, [&](const I &i) {
                   double s = 0;
                   for (int64_t j = 0; j < 4; ++j)
                     for (int64_t k = 0; k < 3; ++k)
                       s += in[0].at({i[0], k, j}) * in[1].at({j, k});
                   return s;
                 });
               })});
  c.push_back({both("kron", "kron"), {kX, kV3}, {T(0), T(1)}, {}, one([](const Refs &in) {
                 return build({3, 12}, [&](const I &i) {
                   return in[0].at({i[0], i[1] / 3}) * in[1].at({i[1] % 3});
                 });
               })});
  auto crossRef = [](const Refs &in) {
    return build({4, 3}, [&](const I &i) {
      auto a = [&](int64_t k) { return in[0].at({i[0], k}); };
      auto b = [&](int64_t k) { return in[1].at({i[0], k}); };
      int64_t p = (i[1] + 1) % 3, q = (i[1] + 2) % 3;
      return a(p) * b(q) - a(q) * b(p);
    });
  };
  c.push_back({both("cross", "cross"), {kM, kM}, {T(0), T(1)}, {}, one(crossRef)});
  c.push_back({{"torch.linalg.cross"}, {kM, kM}, {T(0), T(1)}, {}, one(crossRef)});
  c.push_back({{"torch.cdist"}, {kX, kX}, {T(0), T(1)}, {}, one([](const Refs &in) {
                 return build({3, 3}, [&](const I &i) {
                   double s = 0;
                   for (int64_t j = 0; j < 4; ++j)
                     s += std::pow(in[0].at({i[0], j}) - in[1].at({i[1], j}), 2);
                   return std::sqrt(s);
                 });
               })});
  c.push_back({both("diff", "diff"), {kX}, {T(0)}, {}, one([](const Refs &in) {
                 return build({3, 3}, [&](const I &i) {
                   return in[0].at({i[0], i[1] + 1}) - in[0].at({i[0], i[1]});
                 });
               })});
  c.push_back({{"torch.diff"}, {kX, TensorMeta{{1, 4}, DType::Float32}},
               {T(0), Arg::ofInt(2), Arg::ofInt(0)}, {{"prepend", T(1)}},
               one([](const Refs &in) { // rows: the prepended row, then x's three; twice
                 auto row = [&](int64_t r, int64_t j) {
                   return r == 0 ? in[1].at({0, j}) : in[0].at({r - 1, j});
                 };
                 return build({2, 4}, [&](const I &i) {
                   return row(i[0] + 2, i[1]) - 2 * row(i[0] + 1, i[1]) + row(i[0], i[1]);
                 });
               })});
  auto covRef = [](const Buffer &x, double correction) {
    return build({3, 3}, [&](const I &i) {
      double mi = 0, mj = 0, s = 0;
      for (int64_t k = 0; k < 4; ++k) {
        mi += x.at({i[0], k}) / 4;
        mj += x.at({i[1], k}) / 4;
      }
      for (int64_t k = 0; k < 4; ++k)
        s += (x.at({i[0], k}) - mi) * (x.at({i[1], k}) - mj);
      return s / (4 - correction);
    });
  };
  c.push_back({both("", "cov"), {kX}, {T(0)}, {}, one([=](const Refs &in) { return covRef(in[0], 1); })});
  c.push_back({{"torch.cov"}, {kX}, {T(0)}, {{"correction", Arg::ofInt(0)}},
               one([=](const Refs &in) { return covRef(in[0], 0); })});
  c.push_back({both("", "corrcoef"), {kX}, {T(0)}, {}, one([=](const Refs &in) {
                 Buffer cv = covRef(in[0], 1);
                 return build({3, 3}, [&](const I &i) {
                   return cv.at(i) / std::sqrt(cv.at({i[0], i[0]}) * cv.at({i[1], i[1]}));
                 });
               })});
  auto trap = [](const Refs &in, double dx, bool cumulative) {
    return build({3, cumulative ? int64_t(3) : int64_t(1)}, [&](const I &i) {
      double s = 0;
      for (int64_t j = 0; j < (cumulative ? i[1] + 1 : 3); ++j)
        s += (in[0].at({i[0], j}) + in[0].at({i[0], j + 1})) / 2 * dx;
      return s;
    });
  };
  c.push_back({{"torch.trapezoid", "torch.trapz"}, {kX}, {T(0)}, {{"dx", Arg::ofFloat(0.5)}},
               one([=](const Refs &in) { return reshape(trap(in, 0.5, false), {3}); })});
  c.push_back({{"torch.trapezoid"}, {kX, kRow}, {T(0), T(1)}, {}, one([](const Refs &in) {
                 return build({3}, [&](const I &i) {
                   double s = 0;
                   for (int64_t j = 0; j < 3; ++j)
                     s += (in[0].at({i[0], j}) + in[0].at({i[0], j + 1})) / 2 *
                          (in[1].at({j + 1}) - in[1].at({j}));
                   return s;
                 });
               })});
  // gradient along the rows of kX (4 samples): numpy's formulas at x = j * h, or at the
  // coordinates of kRow (any distinct values: the formulas do not need them sorted).
  auto gradient = [](const Refs &in, int order, std::function<double(int64_t)> x) {
    return build({3, 4}, [&](const I &i) {
      auto f = [&](int64_t j) { return in[0].at({i[0], j}); };
      int64_t j = i[1];
      if (j > 0 && j < 3) {
        double hl = x(j) - x(j - 1), hr = x(j + 1) - x(j);
        return (hl * hl * f(j + 1) - hr * hr * f(j - 1) + (hr * hr - hl * hl) * f(j)) /
               (hl * hr * (hl + hr));
      }
      int64_t a = j == 0 ? 0 : 3, s = j == 0 ? 1 : -1; // the edge and the way inside
      if (order == 1)
        return (f(a + s) - f(a)) / (x(a + s) - x(a));
      double h1 = x(a + s) - x(a), h2 = x(a + 2 * s) - x(a + s);
      return -(2 * h1 + h2) / (h1 * (h1 + h2)) * f(a) + (h1 + h2) / (h1 * h2) * f(a + s) -
             h1 / (h2 * (h1 + h2)) * f(a + 2 * s);
    });
  };
  for (int order : {1, 2})
    c.push_back({{"torch.gradient"},
                 {kX},
                 {T(0)},
                 {{"spacing", Arg::ofFloat(0.5)},
                  {"dim", Arg::ofInt(1)},
                  {"edge_order", Arg::ofInt(order)}},
                 [=](const Refs &in) {
                   return Refs{gradient(in, order, [](int64_t j) { return 0.5 * double(j); })};
                 }});
  c.push_back(
      {{"torch.gradient"},
       {kX, kRow},
       {T(0)},
       {{"spacing", Arg::list({T(1)})}, {"dim", Arg::ofInt(-1)}, {"edge_order", Arg::ofInt(2)}},
       [=](const Refs &in) {
         return Refs{gradient(in, 2, [&](int64_t j) { return in[1].at({j}); })};
       },
       0.1,
       2});
  c.push_back({{"torch.cumulative_trapezoid"}, {kX}, {T(0)}, {}, one([=](const Refs &in) {
                 return trap(in, 1, true);
               })});
  c.push_back({both("", "renorm"), {kX}, {T(0), Arg::ofInt(2), Arg::ofInt(0), Arg::ofFloat(1)}, {},
               one([](const Refs &in) {
                 return build({3, 4}, [&](const I &i) {
                   double s = 0;
                   for (int64_t j = 0; j < 4; ++j)
                     s += in[0].at({i[0], j}) * in[0].at({i[0], j});
                   double n = std::sqrt(s);
                   return in[0].at(i) * (n > 1 ? 1 / (n + 1e-7) : 1.0);
                 });
               })});
  c.push_back({{"torch.log_softmax", "torch.Tensor.log_softmax"}, {kX}, {T(0), Arg::ofInt(-1)}, {},
               one([](const Refs &in) {
                 return map(softmaxRows(in[0]), [](double v) { return std::log(v); });
               })});

  // Order statistics, along the rows of kX (random values: no ties).
  auto sortedRow = [](const Buffer &x, int64_t r, bool descending) {
    std::vector<std::pair<double, int64_t>> v;
    for (int64_t j = 0; j < x.meta.shape[1]; ++j)
      v.push_back({x.at({r, j}), j});
    std::stable_sort(v.begin(), v.end(), [&](auto a, auto b) {
      return descending ? a.first > b.first : a.first < b.first;
    });
    return v;
  };
  auto sorted = [=](bool descending, int64_t k, bool values) {
    return [=](const Refs &in) {
      return build({3, k}, [&](const I &i) {
        auto v = sortedRow(in[0], i[0], descending)[i[1]];
        return values ? v.first : double(v.second);
      }, values ? DType::Float32 : DType::Int64);
    };
  };
  c.push_back({both("", "sort"), {kX}, {T(0)}, {}, [=](const Refs &in) {
                 return Refs{sorted(false, 4, true)(in), sorted(false, 4, false)(in)};
               }});
  c.push_back({{"torch.sort"}, {kX}, {T(0)}, {{"descending", Arg::ofBool(true)}}, [=](const Refs &in) {
                 return Refs{sorted(true, 4, true)(in), sorted(true, 4, false)(in)};
               }});
  c.push_back({both("sort", ""), {kX}, {T(0)}, {}, one(sorted(false, 4, true))});
  c.push_back({{"torch.argsort"}, {kX}, {T(0), Arg::ofInt(0)}, {}, [](const Refs &in) { // columns
                 return Refs{build({3, 4}, [&](const I &i) {
                   std::vector<std::pair<double, int64_t>> col;
                   for (int64_t r = 0; r < 3; ++r)
                     col.push_back({in[0].at({r, i[1]}), r});
                   std::stable_sort(col.begin(), col.end());
                   return double(col[i[0]].second);
                 }, DType::Int64)};
               }});
  c.push_back({both("argsort", "argsort"), {kX}, {T(0)}, {}, one(sorted(false, 4, false))});
  c.push_back({both("", "msort"), {kRow}, {T(0)}, {}, one([](const Refs &in) {
                 Buffer out = in[0];
                 std::sort(out.data.begin(), out.data.end());
                 return out;
               })});
  c.push_back({both("topk", "topk"), {kX}, {T(0), Arg::ofInt(2)}, {}, [=](const Refs &in) {
                 return Refs{sorted(true, 2, true)(in), sorted(true, 2, false)(in)};
               }});
  c.push_back({{"torch.topk"}, {kX}, {T(0), Arg::ofInt(3)}, {{"largest", Arg::ofBool(false)}},
               [=](const Refs &in) { return Refs{sorted(false, 3, true)(in), sorted(false, 3, false)(in)}; }});
  // Rows past the 1024 a kernel ranks: the runtime's argsort step, then gathers.
  const TensorMeta kLong{{2, 1500}, DType::Float32};
  auto firstOfLong = [=](bool descending, int64_t k) {
    return [=](const Refs &in) {
      std::vector<std::vector<std::pair<double, int64_t>>> rows = {sortedRow(in[0], 0, descending),
                                                                   sortedRow(in[0], 1, descending)};
      auto at = [&](const I &i) { return rows[size_t(i[0])][size_t(i[1])]; };
      return Refs{build({2, k}, [&](const I &i) { return at(i).first; }),
                  build(
                      {2, k}, [&](const I &i) { return double(at(i).second); }, DType::Int64)};
    };
  };
  c.push_back({{"torch.sort"},
               {kLong},
               {T(0)},
               {{"descending", Arg::ofBool(true)}},
               firstOfLong(true, 1500)});
  c.push_back({{"torch.topk"},
               {kLong},
               {T(0), Arg::ofInt(4)},
               {{"largest", Arg::ofBool(false)}},
               firstOfLong(false, 4)});
  auto rankOf = [=](int64_t k) { // (values, indices) of rank k per row, [3]
    return [=](const Refs &in) {
      Buffer v = build({3}, [&](const I &i) { return sortedRow(in[0], i[0], false)[k].first; });
      Buffer p = build({3}, [&](const I &i) { return double(sortedRow(in[0], i[0], false)[k].second); },
                       DType::Int64);
      return Refs{v, p};
    };
  };
  c.push_back({both("kthvalue", "kthvalue"), {kX}, {T(0), Arg::ofInt(3)}, {}, rankOf(2)});
  c.push_back({{"torch.median", "torch.Tensor.median", "torch.nanmedian", "torch.Tensor.nanmedian"},
               {kX}, {T(0), Arg::ofInt(1)}, {}, rankOf(1)});
  c.push_back({{"torch.median", "torch.nanmedian"}, {kRow}, {T(0)}, {}, one([](const Refs &in) {
                 Buffer s = in[0];
                 std::sort(s.data.begin(), s.data.end());
                 return scalar(s.data[1]);
               })});
  c.push_back({both("median", ""), {kRow}, {T(0)}, {}, one([](const Refs &in) { // mode='avg'
                 Buffer s = in[0];
                 std::sort(s.data.begin(), s.data.end());
                 return scalar((s.data[1] + s.data[2]) / 2);
               })});
  c.push_back({both("nanmedian", ""), {kX}, {T(0), Arg::ofInt(1)}, {{"mode", Arg::ofString("min")}},
               one([](const Refs &in) {
                 return build({3, 1}, [&](const I &i) {
                   std::vector<double> r;
                   for (int64_t j = 0; j < 4; ++j)
                     r.push_back(in[0].at({i[0], j}));
                   std::sort(r.begin(), r.end());
                   return r[1];
                 });
               })});
  auto quantileRef = [](const Buffer &x, double q) {
    return build({3}, [&](const I &i) {
      std::vector<double> r;
      for (int64_t j = 0; j < 4; ++j)
        r.push_back(x.at({i[0], j}));
      std::sort(r.begin(), r.end());
      double pos = q * 3, lo = std::floor(pos);
      return r[int(lo)] + (pos - lo) * (r[int(std::ceil(pos))] - r[int(lo)]);
    });
  };
  c.push_back({both("quantile", "quantile"), {kX}, {T(0), Arg::ofFloat(0.3), Arg::ofInt(1)}, {},
               one([=](const Refs &in) { return quantileRef(in[0], 0.3); })});
  c.push_back({both("nanquantile", "nanquantile"), {kX}, {T(0), Arg::ofFloat(0.8), Arg::ofInt(1)}, {},
               one([=](const Refs &in) { return quantileRef(in[0], 0.8); })});
  c.push_back({{"torch.quantile"}, {kX, TensorMeta{{2}, DType::Float32}}, {T(0), T(1), Arg::ofInt(1)}, {},
               [=](const Refs &in) {
                 Buffer a = quantileRef(in[0], in[1].data[0]), b = quantileRef(in[0], in[1].data[1]);
                 Buffer out{{{2, 3}, DType::Float32}, a.data};
                 out.data.insert(out.data.end(), b.data.begin(), b.data.end());
                 return Refs{out};
               }, 0, 1});
  c.push_back({{"torch.quantile"}, {kX}, {T(0), Arg::ofFloat(0.5)}, {{"interpolation", Arg::ofString("lower")}},
               one([](const Refs &in) {
                 Buffer s = in[0];
                 std::sort(s.data.begin(), s.data.end());
                 return scalar(s.data[5]);
               })});
  c.push_back({both("mode", "mode"), {kI}, {T(0)}, {}, [](const Refs &in) {
                 Buffer v{{{3}, DType::Int32}, {}}, p{{{3}, DType::Int64}, {}};
                 for (int64_t r = 0; r < 3; ++r) {
                   double best = 0;
                   int bestCount = -1;
                   for (int64_t j = 0; j < 4; ++j) {
                     double e = in[0].at({r, j});
                     int n = 0;
                     for (int64_t k = 0; k < 4; ++k)
                       n += in[0].at({r, k}) == e;
                     if (n > bestCount || (n == bestCount && e < best))
                       best = e, bestCount = n;
                   }
                   int64_t last = 0;
                   for (int64_t j = 0; j < 4; ++j)
                     if (in[0].at({r, j}) == best)
                       last = j;
                   v.data.push_back(best);
                   p.data.push_back(double(last));
                 }
                 return Refs{v, p};
               }, -2, 2});
}

/// More movement, scatters and searches.
void addScatterAndSearchCases(std::vector<Case> &c) {
  using I = std::vector<int64_t>;
  auto one = [](std::function<Buffer(const Refs &)> f) {
    return [f](const Refs &in) { return Refs{f(in)}; };
  };
  auto ints = [](std::vector<int64_t> v) {
    std::vector<Arg> a;
    for (int64_t i : v)
      a.push_back(Arg::ofInt(i));
    return Arg::list(a);
  };
  const TensorMeta kV3{{3}, DType::Float32}, kI2{{2}, DType::Int64};
  c.push_back({both("", "as_strided"), {kX}, {T(0), ints({2, 2}), ints({1, 4})}, {{"storage_offset", Arg::ofInt(1)}},
               one([](const Refs &in) {
                 return build({2, 2}, [&](const I &i) { return in[0].data[1 + i[0] + 4 * i[1]]; });
               })});
  c.push_back({{"torch.as_strided_scatter"},
               {kX, TensorMeta{{2, 2}, DType::Float32}},
               {T(0), T(1), ints({2, 2}), ints({1, 4})},
               {{"storage_offset", Arg::ofInt(1)}},
               one([](const Refs &in) {
                 Buffer out = in[0];
                 for (int64_t i = 0; i < 2; ++i)
                   for (int64_t j = 0; j < 2; ++j)
                     out.data[1 + i + 4 * j] = in[1].at({i, j});
                 return out;
               })});
  for (int64_t rows : {2, 4}) // fewer elements than x (its first ones), more (zeros after)
    c.push_back({{"torch.resize_as_", "torch.Tensor.resize_as_"},
                 {kX, TensorMeta{{rows, 4}, DType::Float32}},
                 {T(0), T(1)},
                 {},
                 one([rows](const Refs &in) {
                   return build({rows, 4}, [&](const I &i) {
                     size_t k = size_t(i[0] * 4 + i[1]);
                     return k < in[0].data.size() ? in[0].data[k] : 0.0;
                   });
                 })});
  // grouped_mm: row r uses the weight of the number of segment ends at or before it.
  c.push_back({{"torch._grouped_mm"},
               {TensorMeta{{4, 3}, DType::Float32}, TensorMeta{{2, 3, 5}, DType::Float32},
                TensorMeta{{2}, DType::Int64}},
               {T(0), T(1), T(2)},
               {},
               [](const Refs &in) {
                 return Refs{build({4, 5}, [&](const I &i) {
                   int64_t expert = 0;
                   for (int64_t e = 0; e < 2; ++e)
                     expert += in[2].at({e}) <= double(i[0]);
                   double acc = 0;
                   for (int64_t k = 0; expert < 2 && k < 3; ++k)
                     acc += in[0].at({i[0], k}) * in[1].at({expert, k, i[1]});
                   return acc;
                 })};
               }});
  c.push_back({{"torch.broadcast_tensors"}, {kX, kRow}, {T(0), T(1)}, {}, [](const Refs &in) {
                 return Refs{in[0], build({3, 4}, [&](const I &i) { return in[1].at({i[1]}); })};
               }});
  auto grid = [](bool xy) { // meshgrid of a [3] and a [4]: 'ij' [3, 4], 'xy' [4, 3]
    return [xy](const Refs &in) {
      std::vector<int64_t> shape = xy ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4};
      return Refs{build(shape, [&](const I &i) { return in[0].at({i[xy ? 1 : 0]}); }),
                  build(shape, [&](const I &i) { return in[1].at({i[xy ? 0 : 1]}); })};
    };
  };
  c.push_back({{"torch.meshgrid", "paddle.meshgrid"}, {kV3, kRow}, {T(0), T(1)}, {}, grid(false)});
  c.push_back({{"torch.meshgrid"},
               {kV3, kRow},
               {T(0), T(1)},
               {{"indexing", Arg::ofString("xy")}},
               grid(true)});
  c.push_back({{"torch.block_diag"}, {kX, kV3}, {T(0), T(1)}, {}, one([](const Refs &in) {
                 return build({4, 7}, [&](const I &i) {
                   if (i[0] < 3 && i[1] < 4)
                     return in[0].at(i);
                   return i[0] == 3 && i[1] >= 4 ? in[1].at({i[1] - 4}) : 0.0;
                 });
               })});
  c.push_back({{"torch.cartesian_prod"}, {kV3, kRow}, {T(0), T(1)}, {}, one([](const Refs &in) {
                 return build({12, 2}, [&](const I &i) {
                   return i[1] == 0 ? in[0].at({i[0] / 4}) : in[1].at({i[0] % 4});
                 });
               })});
  c.push_back({both("", "combinations"), {kRow}, {T(0)}, {}, one([](const Refs &in) {
                 std::vector<std::pair<int64_t, int64_t>> pairs;
                 for (int64_t a = 0; a < 4; ++a)
                   for (int64_t b = a + 1; b < 4; ++b)
                     pairs.push_back({a, b});
                 return build({6, 2}, [&](const I &i) {
                   return in[0].at({i[1] ? pairs[i[0]].second : pairs[i[0]].first});
                 });
               })});
  c.push_back({both("", "select_scatter"), {kX, kV3}, {T(0), T(1), Arg::ofInt(1), Arg::ofInt(-1)}, {},
               one([](const Refs &in) {
                 return build({3, 4}, [&](const I &i) { return i[1] == 3 ? in[1].at({i[0]}) : in[0].at(i); });
               })});
  c.push_back({both("", "slice_scatter"), {kX, TensorMeta{{3, 2}, DType::Float32}},
               {T(0), T(1), Arg::ofInt(1), Arg::ofInt(0), Arg::none(), Arg::ofInt(2)}, {},
               one([](const Refs &in) {
                 return build({3, 4}, [&](const I &i) {
                   return i[1] % 2 == 0 ? in[1].at({i[0], i[1] / 2}) : in[0].at(i);
                 });
               })});
  c.push_back({both("", "diagonal_scatter"), {kX, kV3}, {T(0), T(1), Arg::ofInt(1)}, {},
               one([](const Refs &in) {
                 return build({3, 4}, [&](const I &i) {
                   return i[1] - i[0] == 1 ? in[1].at({i[0]}) : in[0].at(i);
                 });
               })});
  c.push_back({{"torch.diagonal_scatter"}, {kX, TensorMeta{{2}, DType::Float32}}, {T(0), T(1), Arg::ofInt(-1)}, {},
               one([](const Refs &in) {
                 return build({3, 4}, [&](const I &i) {
                   return i[1] - i[0] == -1 ? in[1].at({i[1]}) : in[0].at(i);
                 });
               })});
  c.push_back({both("", "masked_scatter"), {kX, kB, kX}, {T(0), T(1), T(2)}, {}, one([](const Refs &in) {
                 Buffer out = in[0];
                 size_t k = 0;
                 for (size_t i = 0; i < out.data.size(); ++i)
                   if (in[1].data[i] != 0)
                     out.data[i] = in[2].data[k++];
                 return out;
               })});
  c.push_back({both("", "put"), {kX, kI2, TensorMeta{{2}, DType::Float32}}, {T(0), T(1), T(2)}, {},
               one([](const Refs &in) {
                 Buffer out = in[0];
                 for (int m = 0; m < 2; ++m)
                   out.data[int64_t(in[1].data[m])] = in[2].data[m];
                 return out;
               }), 0, 2.49});
  c.push_back({{"torch.put"}, {kX, kI2, TensorMeta{{2}, DType::Float32}}, {T(0), T(1), T(2), Arg::ofBool(true)}, {},
               one([](const Refs &in) {
                 Buffer out = in[0];
                 for (int m = 0; m < 2; ++m)
                   out.data[int64_t(in[1].data[m])] += in[2].data[m];
                 return out;
               }), 0, 2.49});
  c.push_back({both("", "index_put"), {kX, kI2, kI2, TensorMeta{{2}, DType::Float32}},
               {T(0), Arg::list({T(1), T(2)}), T(3)}, {}, one([](const Refs &in) {
                 Buffer out = in[0];
                 for (int m = 0; m < 2; ++m)
                   out.data[int64_t(in[1].data[m]) * 4 + int64_t(in[2].data[m])] = in[3].data[m];
                 return out;
               }), 0, 2.49});
  c.push_back({{"torch.index_put"}, {kX, kI2, kRow}, {T(0), Arg::list({T(1)}), T(2), Arg::ofBool(true)}, {},
               one([](const Refs &in) { // whole rows: the values broadcast over them
                 Buffer out = in[0];
                 for (int m = 0; m < 2; ++m)
                   for (int64_t j = 0; j < 4; ++j)
                     out.data[int64_t(in[1].data[m]) * 4 + j] += in[2].data[j];
                 return out;
               }), 0, 2.49});
  for (const char *name : {"torch.Tensor.unfold", "torch.unfold_copy"})
    c.push_back({{name}, {kX}, {T(0), Arg::ofInt(1), Arg::ofInt(2), Arg::ofInt(1)}, {}, one([](const Refs &in) {
                   return build({3, 3, 2}, [&](const I &i) { return in[0].at({i[0], i[1] + i[2]}); });
                 })});
  c.push_back({both("", "nonzero_static"), {kI}, {T(0)}, {{"size", Arg::ofInt(14)}}, one([](const Refs &in) {
                 std::vector<double> coords;
                 for (int64_t r = 0; r < 3; ++r)
                   for (int64_t j = 0; j < 4; ++j)
                     if (in[0].at({r, j}) != 0)
                       coords.insert(coords.end(), {double(r), double(j)});
                 while (coords.size() < 28)
                   coords.push_back(-1);
                 return Buffer{{{14, 2}, DType::Int64}, coords};
               })});
  // torchvision's nms on random boxes of [0, 4] (corners in any order: the areas and overlaps
  // are computed as torchvision does all the same): the kept indices by score, then -1.
  c.push_back(
      {{"torch.ops.torchvision.nms"},
       {TensorMeta{{6, 4}, DType::Float32}, TensorMeta{{6}, DType::Float32}},
       {T(0), T(1), Arg::ofFloat(0.3)},
       {},
       one([](const Refs &in) {
         const auto &b = in[0];
         auto area = [&](int64_t i) {
           return (b.at({i, 2}) - b.at({i, 0})) * (b.at({i, 3}) - b.at({i, 1}));
         };
         std::vector<int64_t> order = {0, 1, 2, 3, 4, 5};
         std::stable_sort(order.begin(), order.end(),
                          [&](int64_t x, int64_t y) { return in[1].at({x}) > in[1].at({y}); });
         std::vector<double> kept;
         std::vector<bool> gone(6);
         for (int64_t i : order) {
           if (gone[size_t(i)])
             continue;
           kept.push_back(double(i));
           for (int64_t j : order) {
             double w = std::min(b.at({i, 2}), b.at({j, 2})) - std::max(b.at({i, 0}), b.at({j, 0}));
             double h = std::min(b.at({i, 3}), b.at({j, 3})) - std::max(b.at({i, 1}), b.at({j, 1}));
             double inter = std::max(0.0, w) * std::max(0.0, h);
             if (j != i && !gone[size_t(j)] &&
                 std::find(kept.begin(), kept.end(), double(j)) == kept.end() &&
                 inter / (area(i) + area(j) - inter) > 0.3)
               gone[size_t(j)] = true;
           }
         }
         kept.resize(6, -1);
         return Buffer{{{6}, DType::Int64}, kept};
       }),
       0,
       4});
  c.push_back({{"torch.constant_pad_nd"}, {kX}, {T(0), ints({1, 0}), Arg::ofFloat(2.5)}, {},
               one([](const Refs &in) {
                 return build({3, 5}, [&](const I &i) { return i[1] == 0 ? 2.5 : in[0].at({i[0], i[1] - 1}); });
               })});
  auto counts = [](bool right) {
    return [=](const Refs &in) { // how many of the (sorted) boundaries lie below each x
      std::vector<double> bs = in[1].data;
      std::sort(bs.begin(), bs.end());
      return map(in[0], [=](double v) {
        double n = 0;
        for (double bd : bs)
          n += right ? bd <= v : bd < v;
        return n;
      });
    };
  };
  c.push_back({{"torch.bucketize"}, {kX, kRow}, {T(0), T(1)}, {}, [=](const Refs &in) {
                 Refs sorted = in;
                 std::sort(sorted[1].data.begin(), sorted[1].data.end());
                 return Refs{withDType(counts(false)(sorted), DType::Int64)};
               }});
  c.push_back({{"torch.searchsorted"}, {kRow, kX}, {T(0), T(1)}, {{"right", Arg::ofBool(true)}},
               [=](const Refs &in) { return Refs{withDType(counts(true)({in[1], in[0]}), DType::Int64)}; }});
  c.push_back({{"torch.isin", "paddle.isin", "Tensor.isin"}, {kI, TensorMeta{{3}, DType::Int32}}, {T(0), T(1)}, {},
               one([](const Refs &in) {
                 return withDType(map(in[0], [&](double v) {
                   return double(std::count(in[1].data.begin(), in[1].data.end(), v) > 0);
                 }), DType::Bool);
               })});
  c.push_back({both("", "histc"), {kX}, {T(0), Arg::ofInt(4), Arg::ofInt(-1), Arg::ofInt(1)}, {},
               one([](const Refs &in) {
                 Buffer h{{{4}, DType::Float32}, {0, 0, 0, 0}};
                 for (double v : in[0].data)
                   if (v >= -1 && v <= 1)
                     h.data[std::min<int64_t>(3, int64_t(std::floor((v + 1) * 2)))] += 1;
                 return h;
               })});
  // histogram over range (-1, 1) in 4 bins (edges -1, -0.5, 0, 0.5, 1), weighted, as a density;
  // histogramdd of kX's rows as 3 points in 4-d, each dimension with 3 random edges (the rule,
  // inner edges at or below the point, needs no order).
  c.push_back({both("", "histogram"),
               {kX, kX},
               {T(0), Arg::ofInt(4)},
               {{"range", Arg::list({Arg::ofFloat(-1), Arg::ofFloat(1)})},
                {"weight", T(1)},
                {"density", Arg::ofBool(true)}},
               [](const Refs &in) {
                 Buffer h{{{4}, DType::Float32}, {0, 0, 0, 0}};
                 double total = 0;
                 for (size_t i = 0; i < in[0].data.size(); ++i) {
                   double v = in[0].data[i];
                   if (v >= -1 && v <= 1) {
                     h.data[std::min<int64_t>(3, int64_t(std::floor((v + 1) * 2)))] +=
                         in[1].data[i];
                     total += in[1].data[i];
                   }
                 }
                 for (double &c : h.data)
                   c /= total * 0.5;
                 return Refs{h, Buffer{{{5}, DType::Float32}, {-1, -0.5, 0, 0.5, 1}}};
               },
               0.1,
               2});
  const TensorMeta kEdges{{3}, DType::Float32};
  c.push_back({{"torch.histogramdd"},
               {kX, kEdges, kEdges, kEdges, kEdges},
               {T(0), Arg::list({T(1), T(2), T(3), T(4)})},
               {},
               [](const Refs &in) {
                 Buffer h{{{2, 2, 2, 2}, DType::Float32}, std::vector<double>(16, 0)};
                 for (int64_t p = 0; p < 3; ++p) {
                   int64_t cell = 0;
                   bool inside = true;
                   for (int64_t k = 0; k < 4; ++k) {
                     const std::vector<double> &e = in[1 + k].data;
                     double v = in[0].at({p, k});
                     inside &= v >= e[0] && v <= e[2];
                     cell = cell * 2 + (v >= e[1] ? 1 : 0);
                   }
                   if (inside)
                     h.data[cell] += 1;
                 }
                 return Refs{h, in[1], in[2], in[3], in[4]};
               }});
  // grid_sample: the input [N, C, *spatial] at the grid's points, written out per point as
  // torch's CPU kernel reads it (zeros or border padding; bilinear corners or nearest).
  auto gridSampled = [](const Refs &in, bool nearest, bool border, bool align) {
    const Buffer &x = in[0], &g = in[1];
    int64_t s = int64_t(x.meta.shape.size()) - 2, c = x.meta.shape[1];
    std::vector<int64_t> sizes; // x first: the last spatial axis
    for (int64_t k = 0; k < s; ++k)
      sizes.push_back(x.meta.shape[x.meta.shape.size() - 1 - k]);
    std::vector<int64_t> outShape = g.meta.shape;
    outShape.pop_back();
    outShape.insert(outShape.begin() + 1, c);
    return build(outShape, [&](const I &o) {
      std::vector<double> pos;
      for (int64_t k = 0; k < s; ++k) {
        I gi = {o[0]};
        gi.insert(gi.end(), o.begin() + 2, o.end());
        gi.push_back(k);
        double v = g.at(gi), size = double(sizes[k]);
        double p = align ? (v + 1) / 2 * (size - 1) : ((v + 1) * size - 1) / 2;
        pos.push_back(border ? std::min(size - 1, std::max(p, 0.0)) : p);
      }
      auto value = [&](const std::vector<int64_t> &at) {
        I xi = {o[0], o[1]};
        for (int64_t k = s - 1; k >= 0; --k) {
          if (at[k] < 0 || at[k] >= sizes[k])
            return 0.0;
          xi.push_back(at[k]);
        }
        return x.at(xi);
      };
      if (nearest) {
        std::vector<int64_t> at;
        for (double p : pos)
          at.push_back(int64_t(std::nearbyint(p)));
        return value(at);
      }
      double sum = 0;
      for (int64_t corner = 0; corner < (int64_t(1) << s); ++corner) {
        std::vector<int64_t> at;
        double w = 1;
        for (int64_t k = 0; k < s; ++k) {
          double low = std::floor(pos[k]);
          bool high = (corner >> k) & 1;
          at.push_back(int64_t(low) + high);
          w *= high ? pos[k] - low : low + 1 - pos[k];
        }
        sum += value(at) * w;
      }
      return sum;
    });
  };
  const TensorMeta kImage{{1, 2, 3, 4}, DType::Float32}, kGrid{{1, 2, 3, 2}, DType::Float32};
  c.push_back({{"torch.nn.functional.grid_sample"},
               {kImage, kGrid},
               {T(0), T(1)},
               {},
               one([=](const Refs &in) { return gridSampled(in, false, false, false); }),
               -1.2,
               1.2});
  c.push_back({{"paddle.nn.functional.grid_sample"},
               {kImage, kGrid},
               {T(0), T(1)},
               {{"mode", Arg::ofString("nearest")}, {"padding_mode", Arg::ofString("border")}},
               one([=](const Refs &in) { return gridSampled(in, true, true, true); }),
               -1.2,
               1.2});
  c.push_back({{"torch.grid_sampler", "torch.grid_sampler_2d"},
               {kImage, kGrid},
               {T(0), T(1), Arg::ofInt(0), Arg::ofInt(1), Arg::ofBool(true)},
               {},
               one([=](const Refs &in) { return gridSampled(in, false, true, true); }),
               -1.2,
               1.2});
  c.push_back(
      {{"torch.grid_sampler", "torch.grid_sampler_3d"},
       {TensorMeta{{1, 1, 2, 3, 4}, DType::Float32}, TensorMeta{{1, 1, 2, 2, 3}, DType::Float32}},
       {T(0), T(1), Arg::ofInt(0), Arg::ofInt(0), Arg::ofBool(false)},
       {},
       one([=](const Refs &in) { return gridSampled(in, false, false, false); }),
       -1.2,
       1.2});
  // roi_align: torchvision's CPU loop written out (a bin's samples, each sample's four taps
  // clipped at the edges), over boxes of [0, 1) scaled by 4 onto a [*, 2, 4, 5] input: some
  // reversed (x2 < x1), some near the far edge. batch(j) is box j's image; a flat position
  // past the input reads its last element, as the lowering's gather clamps.
  auto roiAligned = [](const Buffer &x, int64_t k, const std::function<double(int64_t, int)> &box,
                       const std::function<int64_t(int64_t)> &batch, double scale, int64_t ph,
                       int64_t pw, int64_t grid, bool aligned) {
    int64_t c = x.meta.shape[1], h = x.meta.shape[2], w = x.meta.shape[3];
    int64_t size = x.meta.numElements();
    return build({k, c, ph, pw}, [&](const I &o) {
      float offset = aligned ? 0.5f : 0.f;
      float x0 = float(box(o[0], 0)) * float(scale) - offset,
            y0 = float(box(o[0], 1)) * float(scale) - offset;
      float rw = float(box(o[0], 2)) * float(scale) - offset - x0;
      float rh = float(box(o[0], 3)) * float(scale) - offset - y0;
      if (!aligned)
        rw = std::max(rw, 1.f), rh = std::max(rh, 1.f);
      float bh = rh / float(ph), bw = rw / float(pw), sum = 0;
      auto at = [&](int64_t yy, int64_t xx) {
        int64_t flat = ((batch(o[0]) * c + o[1]) * h + yy) * w + xx;
        return float(x.data[size_t(std::min(flat, size - 1))]);
      };
      for (int64_t iy = 0; iy < grid; ++iy)
        for (int64_t ix = 0; ix < grid; ++ix) {
          float y = y0 + float(o[2]) * bh + (float(iy) + .5f) * bh / float(grid);
          float xx = x0 + float(o[3]) * bw + (float(ix) + .5f) * bw / float(grid);
          if (y < -1.f || y > float(h) || xx < -1.f || xx > float(w))
            continue;
          y = std::max(y, 0.f), xx = std::max(xx, 0.f);
          int64_t yl = int64_t(y), xl = int64_t(xx), yh = yl + 1, xh = xl + 1;
          if (yl >= h - 1)
            yh = yl = h - 1, y = float(yl);
          if (xl >= w - 1)
            xh = xl = w - 1, xx = float(xl);
          float ly = y - float(yl), lx = xx - float(xl), hy = 1.f - ly, hx = 1.f - lx;
          sum += hy * hx * at(yl, xl) + hy * lx * at(yl, xh) + ly * hx * at(yh, xl) +
                 ly * lx * at(yh, xh);
        }
      return double(sum / float(grid * grid));
    });
  };
  c.push_back({{"torch.ops.torchvision.roi_align"},
               {TensorMeta{{1, 2, 4, 5}, DType::Float32}, TensorMeta{{3, 5}, DType::Float32}},
               {T(0), T(1), Arg::ofFloat(4.0), Arg::ofInt(2), Arg::ofInt(3), Arg::ofInt(2),
                Arg::ofBool(false)},
               {},
               one([=](const Refs &in) {
                 return roiAligned(
                     in[0], 3,
                     [&](int64_t j, int i) {
                       return in[1].at({j, i + 1});
                     },
                     [&](int64_t j) {
                       return int64_t(in[1].at({j, 0}));
                     },
                     4.0, 2, 3, 2, false);
               }),
               0,
               0.99});
  c.push_back({{"paddle.vision.ops.roi_align"},
               {TensorMeta{{2, 2, 4, 5}, DType::Float32}, TensorMeta{{3, 4}, DType::Float32},
                TensorMeta{{2}, DType::Int32}},
               {T(0), T(1), T(2), Arg::ofInt(2), Arg::ofFloat(4.0), Arg::ofInt(1)},
               {},
               one([=](const Refs &in) {
                 // image of box j: how many running totals of boxes_num are at most j
                 auto image = [&](int64_t j) {
                   double total = 0;
                   int64_t n = 0;
                   for (double v : in[2].data)
                     n += (total += v) <= double(j);
                   return n;
                 };
                 return roiAligned(
                     in[0], 3,
                     [&](int64_t j, int i) {
                       return in[1].at({j, i});
                     },
                     image, 4.0, 2, 2, 1, true);
               }),
               0,
               0.99});
  // Triangular solves, checked against substitution in double precision here: a [3, 3] with
  // entries in [0.5, 1.5) (no tiny diagonal), right-hand sides [3, 2].
  auto solveRef = [](const Buffer &a, const Buffer &b, bool upper, bool unit) {
    int64_t n = a.meta.shape[0], k = b.meta.shape[1];
    Buffer x = b;
    for (int64_t step = 0; step < n; ++step) {
      int64_t i = upper ? n - 1 - step : step;
      for (int64_t c = 0; c < k; ++c) {
        double v = b.at({i, c});
        for (int64_t j = upper ? i + 1 : 0; j < (upper ? n : i); ++j)
          v -= a.at({i, j}) * x.data[size_t(j * k + c)];
        x.data[size_t(i * k + c)] = unit ? v : v / a.at({i, i});
      }
    }
    return x;
  };
  auto transposed = [](const Buffer &a) {
    return build({a.meta.shape[1], a.meta.shape[0]}, [&](const I &i) {
      return a.at({i[1], i[0]});
    });
  };
  const TensorMeta kSquare{{3, 3}, DType::Float32}, kRhs{{3, 2}, DType::Float32};
  c.push_back({{"torch.triangular_solve", "torch.Tensor.triangular_solve"},
               {kRhs, kSquare},
               {T(0), T(1)},
               {{"upper", Arg::ofBool(false)}},
               [=](const Refs &in) {
                 return Refs{solveRef(in[1], in[0], false, false), in[1]};
               },
               0.5,
               1.5});
  c.push_back({{"torch.triangular_solve"},
               {kRhs, kSquare},
               {T(0), T(1)},
               {{"transpose", Arg::ofBool(true)}, {"unitriangular", Arg::ofBool(true)}},
               [=](const Refs &in) {
                 return Refs{solveRef(transposed(in[1]), in[0], false, true), in[1]};
               },
               0.5,
               1.5});
  c.push_back({{"torch.linalg.solve_triangular"},
               {kSquare, kRhs},
               {T(0), T(1)},
               {{"upper", Arg::ofBool(true)}},
               one([=](const Refs &in) { return solveRef(in[0], in[1], true, false); }),
               0.5,
               1.5});
  auto choleskySolveRef = [=](const Buffer &factor, const Buffer &b, bool upper) {
    Buffer l = upper ? transposed(factor) : factor;
    return solveRef(transposed(l), solveRef(l, b, false, false), true, false);
  };
  c.push_back({{"torch.cholesky_solve", "torch.Tensor.cholesky_solve"},
               {kRhs, kSquare},
               {T(0), T(1)},
               {},
               one([=](const Refs &in) { return choleskySolveRef(in[1], in[0], false); }),
               0.5,
               1.5});
  c.push_back({{"torch.cholesky_inverse", "torch.Tensor.cholesky_inverse"},
               {kSquare},
               {T(0)},
               {{"upper", Arg::ofBool(true)}},
               one([=](const Refs &in) {
                 Buffer eye = build({3, 3}, [](const I &i) { return double(i[0] == i[1]); });
                 return choleskySolveRef(in[0], eye, true);
               }),
               0.5,
               1.5});
  c.push_back({{"torch.lu_solve", "torch.Tensor.lu_solve"},
               {kRhs, kSquare, TensorMeta{{3}, DType::Int32}},
               {T(0), T(1), T(2)},
               {},
               one([=](const Refs &in) { // b's rows interchanged as the (1-based) pivots say
                 Buffer b = in[0];
                 for (int64_t i = 0; i < 3; ++i) {
                   int64_t j = int64_t(in[2].data[size_t(i)]) - 1;
                   for (int64_t c = 0; c < 2; ++c)
                     std::swap(b.data[size_t(i * 2 + c)], b.data[size_t(j * 2 + c)]);
                 }
                 return solveRef(in[1], solveRef(in[1], b, false, true), true, false);
               }),
               1,
               3.4});
  c.push_back({both("allclose", "allclose"), {kX, kX}, {T(0), T(1)}, {}, [](const Refs &in) {
                 bool all = true;
                 for (size_t i = 0; i < in[0].data.size(); ++i)
                   all &= std::fabs(in[0].data[i] - in[1].data[i]) <= 1e-8 + 1e-5 * std::fabs(in[1].data[i]);
                 return Refs{Buffer{{{}, DType::Bool}, {double(all)}}};
               }});
  c.push_back({both("", "equal"), {kX, kX}, {T(0), T(1)}, {}, [](const Refs &in) {
                 return Refs{Buffer{{{}, DType::Bool}, {double(in[0].data == in[1].data)}}};
               }});
  c.push_back({{"torch.equal"}, {kX, kRow}, {T(0), T(1)}, {}, [](const Refs &) {
                 return Refs{Buffer{{{}, DType::Bool}, {0}}};
               }});
  c.push_back({both("angle", "angle"), {kX}, {T(0)}, {}, elementwise([](double v) { return v < 0 ? M_PI : 0; })});
  c.push_back({both("", "frexp"), {kX}, {T(0)}, {}, [](const Refs &in) {
                 Buffer m = in[0], e{{{3, 4}, DType::Int32}, {}};
                 for (double &v : m.data) {
                   int exp = 0;
                   v = std::frexp(v, &exp);
                   e.data.push_back(exp);
                 }
                 return Refs{m, e};
               }, -40, 40});
  c.push_back({{"torch.fill"}, {kX}, {T(0), Arg::ofFloat(1.5)}, {}, elementwise([](double) { return 1.5; })});
  c.push_back({{"torch.zero_"}, {kX}, {T(0)}, {}, elementwise([](double) { return 0.0; })});
}

/// Group norm of [N, C, ...] in `groups` groups (no affine), and each group's mean and rstd.
Refs groupNormRef(const Buffer &x, int64_t groups, double eps) {
  int64_t n = x.meta.shape[0], per = x.meta.numElements() / (n * groups);
  Buffer y = x, m{{{n, groups}, DType::Float32}, {}}, r = m;
  for (int64_t g = 0; g < n * groups; ++g) {
    double mu = 0, var = 0;
    for (int64_t k = 0; k < per; ++k)
      mu += x.data[g * per + k] / per;
    for (int64_t k = 0; k < per; ++k)
      var += (x.data[g * per + k] - mu) * (x.data[g * per + k] - mu) / per;
    double rstd = 1 / std::sqrt(var + eps);
    for (int64_t k = 0; k < per; ++k)
      y.data[g * per + k] = (x.data[g * per + k] - mu) * rstd;
    m.data.push_back(mu);
    r.data.push_back(rstd);
  }
  return {y, m, r};
}

/// Normalizations with groups and torch's aten forms.
void addNormalizationCases(std::vector<Case> &c) {
  const TensorMeta kImage{{2, 4, 3, 5}, DType::Float32}, kC{{4}, DType::Float32};
  c.push_back({{"torch.native_layer_norm"}, {kX}, {T(0), Arg::list({Arg::ofInt(4)}), Arg::none(), Arg::none(),
                                                  Arg::ofFloat(1e-5)},
               {}, [](const Refs &in) { // one group per row
                 Refs r = groupNormRef(reshape(in[0], {3, 1, 4}), 1, 1e-5);
                 return Refs{reshape(r[0], {3, 4}), reshape(r[1], {3, 1}), reshape(r[2], {3, 1})};
               }});
  auto affine = [](Buffer y, const Buffer &w, const Buffer &b) {
    int64_t c = y.meta.shape[1], inner = y.meta.numElements() / (y.meta.shape[0] * c);
    for (size_t i = 0; i < y.data.size(); ++i) {
      int64_t ch = (int64_t(i) / inner) % c;
      y.data[i] = y.data[i] * w.data[ch] + b.data[ch];
    }
    return y;
  };
  c.push_back({{"torch.nn.functional.group_norm"}, {kImage, kC, kC}, {T(0), Arg::ofInt(2), T(1), T(2)}, {},
               [=](const Refs &in) { return Refs{affine(groupNormRef(in[0], 2, 1e-5)[0], in[1], in[2])}; }});
  c.push_back({{"paddle.nn.functional.group_norm"}, {kImage}, {T(0), Arg::ofInt(4)}, {},
               [](const Refs &in) { return Refs{groupNormRef(in[0], 4, 1e-5)[0]}; }});
  c.push_back({{"torch.native_group_norm"}, {kImage},
               {T(0), Arg::none(), Arg::none(), Arg::ofInt(2), Arg::ofInt(4), Arg::ofInt(15), Arg::ofInt(2),
                Arg::ofFloat(1e-5)},
               {}, [](const Refs &in) { return groupNormRef(in[0], 2, 1e-5); }});
  c.push_back({{"torch.nn.functional.instance_norm"}, {kImage, kC, kC}, {T(0)},
               {{"weight", T(1)}, {"bias", T(2)}},
               [=](const Refs &in) { return Refs{affine(groupNormRef(in[0], 4, 1e-5)[0], in[1], in[2])}; }});
}

} // namespace

namespace sotc::ops::cases {
std::vector<Case> all() {
  std::vector<Case> c;
  auto binary = [&](std::string p, std::string t, std::function<double(double, double)> f,
                    double lo = -2, double hi = 2) {
    c.push_back({four(p, t), {kX, kRow}, {T(0), T(1)}, {}, pairwise(f), lo, hi});
    c.push_back({four(p, t), {kX}, {T(0), Arg::ofFloat(1.5)}, {}, withScalar(1.5, f), lo, hi});
  };
  binary("add", "add", std::plus<double>());
  binary("subtract", "sub", std::minus<double>());
  binary("multiply", "mul", std::multiplies<double>());
  binary("divide", "div", std::divides<double>(), 0.5, 2);
  binary("floor_divide", "floor_divide", floorDiv, 0.5, 3);
  binary("remainder", "remainder", pyMod, 0.5, 3);
  binary(
      "pow", "pow", [](double a, double b) { return std::pow(a, b); }, 0.5, 2);
  binary("maximum", "maximum", [](double a, double b) { return std::max(a, b); });
  binary("minimum", "minimum", [](double a, double b) { return std::min(a, b); });
  c.push_back({{"torch.add"},
               {kX, kX},
               {T(0), T(1)},
               {{"alpha", Arg::ofFloat(0.5)}},
               pairwise([](double a, double b) { return a + 0.5 * b; })});
  c.push_back({{"torch.sub"},
               {kX, kX},
               {T(0), T(1)},
               {{"alpha", Arg::ofInt(2)}},
               pairwise([](double a, double b) { return a - 2 * b; })});
  // Integer true division gives float32.
  c.push_back({{"paddle.divide"},
               {kI, kI},
               {T(0), T(1)},
               {},
               pairwise([](double a, double b) { return a / b; }),
               1,
               5});

  struct U {
    std::string name;
    double (*f)(double);
    double lo, hi;
  };
  const U unaries[] = {
      {"exp", [](double v) { return std::exp(v); }, -2, 2},
      {"log", [](double v) { return std::log(v); }, 0.1, 3},
      {"log1p", [](double v) { return std::log1p(v); }, -0.5, 3},
      {"sin", [](double v) { return std::sin(v); }, -3, 3},
      {"cos", [](double v) { return std::cos(v); }, -3, 3},
      {"tanh", [](double v) { return std::tanh(v); }, -3, 3},
      {"sqrt", [](double v) { return std::sqrt(v); }, 0.1, 4},
      {"rsqrt", [](double v) { return 1 / std::sqrt(v); }, 0.1, 4},
      {"erf", [](double v) { return std::erf(v); }, -2, 2},
      {"abs", [](double v) { return std::fabs(v); }, -2, 2},
      {"neg", [](double v) { return -v; }, -2, 2},
      {"sign", [](double v) { return double((v > 0) - (v < 0)); }, -2, 2},
      {"floor", [](double v) { return std::floor(v); }, -3, 3},
      {"ceil", [](double v) { return std::ceil(v); }, -3, 3},
      {"round", [](double v) { return std::nearbyint(v); }, -3, 3},
      {"sigmoid", sigmoidRef, -3, 3},
      {"reciprocal", [](double v) { return 1 / v; }, 0.5, 3},
      {"square", [](double v) { return v * v; }, -2, 2},
  };
  for (const U &u : unaries) {
    std::vector<std::string> names = four(u.name, u.name);
    if (u.name == "sigmoid")
      names[0] = "paddle.nn.functional.sigmoid";
    c.push_back({names, {kX}, {T(0)}, {}, elementwise(u.f), u.lo, u.hi});
  }
  // Transcendental ops on integers compute in float32.
  c.push_back(
      {{"paddle.exp"}, {kI}, {T(0)}, {}, elementwise([](double v) { return std::exp(v); })});

  c.push_back({{"paddle.clip", "Tensor.clip", "torch.clamp", "torch.Tensor.clamp"},
               {kX},
               {T(0), Arg::ofFloat(-0.5), Arg::ofFloat(0.75)},
               {},
               elementwise([](double v) { return std::min(std::max(v, -0.5), 0.75); })});
  c.push_back({{"paddle.clip"}, {kX}, {T(0)}, {{"max", Arg::ofInt(1)}}, elementwise([](double v) {
                 return std::min(v, 1.0);
               })});
  c.push_back(
      {{"paddle.where", "torch.where"}, {kB, kX, kRow}, {T(0), T(1), T(2)}, {}, [](const Refs &in) {
         Buffer out = in[1]; // x is [3, 4], y a row broadcast across it
         for (size_t i = 0; i < out.data.size(); ++i)
           out.data[i] = in[0].data[i] != 0 ? in[1].data[i] : in[2].data[i % 4];
         return Refs{out};
       }});
  // Two Python scalars (CPM-Ant's torch.where(ids != 0, 2, 0)): int64 from two ints, float32
  // when one is a float.
  for (bool floating : {false, true})
    c.push_back({{"torch.where"},
                 {kB},
                 {T(0), floating ? Arg::ofFloat(2.5) : Arg::ofInt(2), Arg::ofInt(0)},
                 {},
                 [floating](const Refs &in) {
                   Buffer out = in[0];
                   out.meta.dtype = floating ? DType::Float32 : DType::Int64;
                   for (double &v : out.data)
                     v = v != 0 ? (floating ? 2.5 : 2) : 0;
                   return Refs{out};
                 }});
  // masked_fill: the value where the mask holds (a scalar, or a tensor cast to x's dtype).
  c.push_back({{"paddle.masked_fill", "Tensor.masked_fill", "torch.masked_fill",
                "torch.Tensor.masked_fill"},
               {kX, kB},
               {T(0), T(1), Arg::ofFloat(-INFINITY)},
               {},
               [](const Refs &in) {
                 Buffer out = in[0];
                 for (size_t i = 0; i < out.data.size(); ++i)
                   out.data[i] = in[1].data[i] != 0 ? -INFINITY : in[0].data[i];
                 return Refs{out};
               }});
  c.push_back({{"paddle.masked_fill", "torch.Tensor.masked_fill"},
               {kX, kB, TensorMeta{{}, DType::Float64}},
               {T(0), T(1), T(2)},
               {},
               [](const Refs &in) {
                 Buffer out = in[0];
                 for (size_t i = 0; i < out.data.size(); ++i)
                   out.data[i] = in[1].data[i] != 0 ? double(float(in[2].data[0])) : in[0].data[i];
                 return Refs{out};
               }});
  // Identities: a new tensor variable with the input's values.
  c.push_back({{"torch.Tensor.contiguous", "torch.Tensor.clone", "torch.clone",
                "torch.Tensor.detach", "paddle.clone", "Tensor.clone", "Tensor.detach"},
               {kX},
               {T(0)},
               {},
               [](const Refs &in) { return Refs{in[0]}; }});
  struct Cmp {
    std::string paddle, torch;
    bool (*f)(double, double);
  };
  for (const Cmp &cmp : {Cmp{"equal", "eq", [](double a, double b) { return a == b; }},
                         Cmp{"not_equal", "ne", [](double a, double b) { return a != b; }},
                         Cmp{"less_than", "lt", [](double a, double b) { return a < b; }},
                         Cmp{"less_equal", "le", [](double a, double b) { return a <= b; }},
                         Cmp{"greater_than", "gt", [](double a, double b) { return a > b; }},
                         Cmp{"greater_equal", "ge", [](double a, double b) { return a >= b; }}}) {
    auto f = [g = cmp.f](double a, double b) { return double(g(a, b)); };
    // Integer inputs so that equality actually happens.
    c.push_back(
        {four(cmp.paddle, cmp.torch), {kI, kI}, {T(0), T(1)}, {}, pairwise(f, DType::Bool)});
    c.push_back({four(cmp.paddle, cmp.torch),
                 {kI},
                 {T(0), Arg::ofInt(1)},
                 {},
                 withScalar(1, f, DType::Bool)});
  }
  c.push_back({four("logical_and", "logical_and"),
               {kB, kB},
               {T(0), T(1)},
               {},
               pairwise([](double a, double b) { return double(a && b); }, DType::Bool)});
  c.push_back({four("logical_or", "logical_or"),
               {kB, kB},
               {T(0), T(1)},
               {},
               pairwise([](double a, double b) { return double(a || b); }, DType::Bool)});
  c.push_back(
      {four("logical_xor", "logical_xor"),
       {kB, kB},
       {T(0), T(1)},
       {},
       pairwise([](double a, double b) { return double(bool(a) != bool(b)); }, DType::Bool)});
  c.push_back({four("logical_not", "logical_not"),
               {kX},
               {T(0)},
               {},
               elementwise([](double v) { return double(v == 0); }, DType::Bool),
               -1,
               1});
  c.push_back(
      {{"paddle.cast", "Tensor.cast", "Tensor.astype", "torch.Tensor.to", "torch.Tensor.type"},
       {kX},
       {T(0), Arg::ofString("int32")},
       {},
       elementwise([](double v) { return std::trunc(v); }, DType::Int32),
       -5,
       5});
  c.push_back({{"torch.Tensor.type_as"},
               {kX, kI},
               {T(0), T(1)},
               {},
               elementwise([](double v) { return std::trunc(v); }, DType::Int32),
               -5,
               5});
  c.push_back({{"torch.Tensor.int"}, {kX}, {T(0)}, {},
               elementwise([](double v) { return std::trunc(v); }, DType::Int32), -5, 5});
  c.push_back({{"torch.Tensor.long"}, {kX}, {T(0)}, {},
               elementwise([](double v) { return std::trunc(v); }, DType::Int64), -5, 5});
  c.push_back({{"torch.Tensor.bool"}, {kX}, {T(0)}, {},
               elementwise([](double v) { return double(v != 0); }, DType::Bool), -1, 1});
  c.push_back({{"torch.Tensor.float"}, {kI}, {T(0)}, {},
               elementwise([](double v) { return v; }, DType::Float32)});
  c.push_back({{"torch.Tensor.half"}, {kX}, {T(0)}, {},
               elementwise([](double v) { return v; }, DType::Float16)});
  c.push_back({{"torch.Tensor.bfloat16"}, {kX}, {T(0)}, {},
               elementwise([](double v) { return v; }, DType::BFloat16)});
  c.push_back({{"torch.Tensor.double"}, {kX}, {T(0)}, {},
               elementwise([](double v) { return double(float(v)); }, DType::Float64)});

  // Creation.
  auto filled = [](std::vector<int64_t> shape, double v, DType d) {
    return [=](const Refs &) {
      return Refs{Buffer{{shape, d}, std::vector<double>(TensorMeta{shape, d}.numElements(), v)}};
    };
  };
  c.push_back({{"paddle.full"},
               {},
               {Arg::list({Arg::ofInt(2), Arg::ofInt(3)}), Arg::ofFloat(0.5)},
               {},
               filled({2, 3}, 0.5, DType::Float32)});
  c.push_back({{"torch.full"},
               {},
               {Arg::list({Arg::ofInt(2)}), Arg::ofInt(7)},
               {},
               filled({2}, 7, DType::Int64)});
  c.push_back(
      {{"paddle.zeros", "paddle.empty"}, {}, {Arg::ofInt(5)}, {}, filled({5}, 0, DType::Float32)});
  // arange: the iota primitive, scaled and shifted; int64 for int bounds, else float32.
  auto ramp = [](std::vector<double> values, DType d) {
    return [=](const Refs &) {
      return Refs{Buffer{{{static_cast<int64_t>(values.size())}, d}, values}};
    };
  };
  c.push_back({{"paddle.arange", "torch.arange"}, {}, {Arg::ofInt(4)}, {},
               ramp({0, 1, 2, 3}, DType::Int64)});
  c.push_back({{"paddle.arange", "torch.arange"}, {}, {Arg::ofInt(2), Arg::ofInt(11), Arg::ofInt(3)},
               {}, ramp({2, 5, 8}, DType::Int64)});
  c.push_back({{"paddle.arange", "torch.arange"}, {}, {Arg::ofFloat(1), Arg::ofFloat(-0.5),
               Arg::ofFloat(-0.5)}, {}, ramp({1, 0.5, 0}, DType::Float32)});
  c.push_back({{"paddle.arange"}, {}, {Arg::ofInt(3)}, {{"dtype", Arg::ofString("float32")}},
               ramp({0, 1, 2}, DType::Float32)});
  c.push_back({{"torch.arange"}, {}, {Arg::ofInt(5), Arg::ofInt(2)}, {}, ramp({}, DType::Int64)});
  // Windows: periodic (n / N) unless periodic=False (n / (N - 1)); one sample is 1.
  c.push_back({{"torch.hann_window"}, {}, {Arg::ofInt(4)}, {}, ramp({0, 0.5, 1, 0.5}, DType::Float32)});
  // scalar_tensor: a 0-d tensor, float32 even from an int (CPM-Ant's scores' fill values).
  c.push_back({{"torch.scalar_tensor"}, {}, {Arg::ofInt(3)}, {}, [](const Refs &) {
                 return Refs{Buffer{{{}, DType::Float32}, {3}}};
               }});
  c.push_back({{"torch.hann_window"}, {}, {Arg::ofInt(5), Arg::ofBool(false)}, {},
               ramp({0, 0.5, 1, 0.5, 0}, DType::Float32)});
  c.push_back({{"torch.hann_window"}, {}, {Arg::ofInt(1)}, {}, ramp({1}, DType::Float32)});
  c.push_back({{"torch.hamming_window"}, {}, {Arg::ofInt(4)}, {},
               ramp({0.08, 0.54, 1, 0.54}, DType::Float32)});
  c.push_back({{"torch.hamming_window"}, {}, {Arg::ofInt(3), Arg::ofBool(false), Arg::ofFloat(0.5),
               Arg::ofFloat(0.5)}, {}, ramp({0, 1, 0}, DType::Float32)});
  c.push_back({{"torch.blackman_window"}, {}, {Arg::ofInt(4)}, {{"dtype", Arg::ofString("float64")}},
               ramp({0, 0.34, 1, 0.34}, DType::Float64)});
  c.push_back({{"torch.bartlett_window"}, {}, {Arg::ofInt(5), Arg::ofBool(false)}, {},
               ramp({0, 0.5, 1, 0.5, 0}, DType::Float32)});
  // tril / triu keep one side of a diagonal of the last two axes, zero the other.
  auto triangle = [](bool lower, int64_t diagonal) {
    return [=](const Refs &in) {
      Buffer out = in[0];
      int64_t rows = out.meta.shape[1], cols = out.meta.shape[2];
      for (size_t i = 0; i < out.data.size(); ++i) {
        int64_t r = static_cast<int64_t>(i) / cols % rows, col = static_cast<int64_t>(i) % cols;
        if (lower ? col - r > diagonal : col - r < diagonal)
          out.data[i] = 0;
      }
      return Refs{out};
    };
  };
  const TensorMeta kBatch{{2, 3, 5}, DType::Float32};
  c.push_back({{"paddle.tril", "Tensor.tril", "torch.tril", "torch.Tensor.tril"}, {kBatch},
               {T(0)}, {}, triangle(true, 0)});
  c.push_back({{"paddle.tril", "torch.tril"}, {kBatch}, {T(0), Arg::ofInt(-1)}, {},
               triangle(true, -1)});
  c.push_back({{"paddle.triu", "Tensor.triu", "torch.triu", "torch.Tensor.triu"}, {kBatch},
               {T(0)}, {{"diagonal", Arg::ofInt(2)}}, triangle(false, 2)});
  c.push_back({{"paddle.ones"},
               {},
               {Arg::list({Arg::ofInt(2), Arg::ofInt(2)})},
               {{"dtype", Arg::ofString("int64")}},
               filled({2, 2}, 1, DType::Int64)});
  c.push_back({{"paddle.zeros_like", "torch.zeros_like", "paddle.empty_like", "torch.empty_like"},
               {kX},
               {T(0)},
               {},
               filled({3, 4}, 0, DType::Float32)});
  c.push_back({{"paddle.ones_like", "torch.ones_like"},
               {kX},
               {T(0)},
               {},
               filled({3, 4}, 1, DType::Float32)});
  c.push_back({{"paddle.full_like", "torch.full_like"},
               {kX},
               {T(0), Arg::ofFloat(2.5)},
               {},
               filled({3, 4}, 2.5, DType::Float32)});

  // Reductions (over the last axis, keepdim, and over everything).
  auto lastAxis = Arg::ofInt(-1);
  auto maxF = [](double a, double b) { return std::max(a, b); };
  auto minF = [](double a, double b) { return std::min(a, b); };
  auto squeezeLast = [](Buffer b) {
    std::vector<int64_t> s = b.meta.shape;
    s.pop_back();
    return reshape(b, s);
  };
  c.push_back({four("max", "amax"), {kX}, {T(0), lastAxis}, {}, [=](const Refs &in) {
                 return Refs{squeezeLast(rowReduce(in[0], -INFINITY, maxF))};
               }});
  c.push_back(
      {four("min", "amin"), {kX}, {T(0), lastAxis, Arg::ofBool(true)}, {}, [=](const Refs &in) {
         return Refs{rowReduce(in[0], INFINITY, minF)};
       }});
  c.push_back({four("sum", "sum"), {kX}, {T(0)}, {}, [](const Refs &in) {
                 return Refs{Buffer{{{}, DType::Float32}, {sum(in[0])}}};
               }});
  c.push_back({{"paddle.sum"}, {kI}, {T(0)}, {{"axis", Arg::ofInt(0)}}, [](const Refs &in) {
                 Buffer r = reduce(in[0], {0}, 0, std::plus<double>());
                 return Refs{withDType(reshape(r, {4}), DType::Int64)};
               }});
  c.push_back({four("prod", "prod"),
               {kX},
               {T(0), lastAxis},
               {},
               [=](const Refs &in) {
                 return Refs{squeezeLast(rowReduce(in[0], 1, std::multiplies<double>()))};
               },
               0.5,
               1.5});
  c.push_back(
      {four("mean", "mean"), {kX}, {T(0), lastAxis, Arg::ofBool(true)}, {}, [](const Refs &in) {
         return Refs{meanRows(in[0])};
       }});
  c.push_back({four("logsumexp", "logsumexp"), {kX}, {T(0), lastAxis}, {}, [=](const Refs &in) {
                 Buffer e = map(in[0], [](double v) { return std::exp(v); });
                 return Refs{squeezeLast(map(rowReduce(e, 0, std::plus<double>()),
                                             [](double v) { return std::log(v); }))};
               }});

  // Shapes.
  auto ints = [](std::vector<int64_t> v) {
    std::vector<Arg> items;
    for (int64_t i : v)
      items.push_back(Arg::ofInt(i));
    return Arg::list(items);
  };
  auto reshaped = [](std::vector<int64_t> s) {
    return [=](const Refs &in) { return Refs{reshape(in[0], s)}; };
  };
  c.push_back({{"paddle.reshape", "Tensor.reshape", "torch.reshape", "torch.Tensor.reshape",
                "torch.Tensor.view"},
               {kX},
               {T(0), ints({2, -1})},
               {},
               reshaped({2, 6})});
  c.push_back({{"torch.Tensor.view_as", "torch.Tensor.reshape_as"},
               {kX, TensorMeta{{2, 6}, DType::Float32}},
               {T(0), T(1)},
               {},
               reshaped({2, 6})});
  c.push_back({{"torch.Tensor.expand_as", "paddle.expand_as", "Tensor.expand_as"},
               {TensorMeta{{3, 1}, DType::Float32}, kX},
               {T(0), T(1)},
               {},
               [](const Refs &in) {
                 Buffer out{{{3, 4}, DType::Float32}, {}};
                 for (int64_t i = 0; i < 3; ++i)
                   for (int64_t j = 0; j < 4; ++j)
                     out.data.push_back(in[0].data[i]);
                 return Refs{out};
               }});
  c.push_back({{"paddle.transpose", "Tensor.transpose", "torch.permute", "torch.Tensor.permute"},
               {kX},
               {T(0), ints({1, 0})},
               {},
               [](const Refs &in) {
                 return Refs{permute(in[0], {1, 0})};
               }});
  c.push_back({{"torch.transpose", "torch.Tensor.transpose"},
               {kX},
               {T(0), Arg::ofInt(0), Arg::ofInt(-1)},
               {},
               [](const Refs &in) {
                 return Refs{permute(in[0], {1, 0})};
               }});
  c.push_back(
      {four("unsqueeze", "unsqueeze"), {kX}, {T(0), Arg::ofInt(1)}, {}, reshaped({3, 1, 4})});
  c.push_back({four("squeeze", "squeeze"),
               {TensorMeta{{3, 1, 4}, DType::Float32}},
               {T(0)},
               {},
               reshaped({3, 4})});
  c.push_back({four("flatten", "flatten"),
               {TensorMeta{{2, 3, 4}, DType::Float32}},
               {T(0)},
               {},
               reshaped({24})});
  auto broadcastRows = [](const Refs &in) {
    return Refs{zip(in[0], Buffer{{{3, 4}, DType::Float32}, std::vector<double>(12, 0)},
                    std::plus<double>())};
  };
  c.push_back({{"paddle.expand", "Tensor.expand", "paddle.broadcast_to", "Tensor.broadcast_to",
                "torch.broadcast_to", "torch.Tensor.broadcast_to"},
               {kRow},
               {T(0), ints({3, 4})},
               {},
               broadcastRows});
  c.push_back({{"paddle.expand"},
               {TensorMeta{{1, 4}, DType::Float32}},
               {T(0), ints({3, -1})},
               {},
               broadcastRows});
  c.push_back({{"paddle.concat", "torch.cat"},
               {kX, TensorMeta{{2, 4}, DType::Float32}},
               {Arg::list({T(0), T(1)})},
               {},
               [](const Refs &in) {
                 Buffer out = in[0];
                 out.meta.shape = {5, 4};
                 out.data.insert(out.data.end(), in[1].data.begin(), in[1].data.end());
                 return Refs{out};
               }});
  auto rowsOf = [](const Buffer &x, int64_t start, int64_t n) {
    Buffer out{{{n, x.meta.shape[1]}, x.meta.dtype}, {}};
    out.data.assign(x.data.begin() + start * x.meta.shape[1],
                    x.data.begin() + (start + n) * x.meta.shape[1]);
    return out;
  };
  const TensorMeta six{{6, 4}, DType::Float32};
  c.push_back(
      {{"paddle.split", "Tensor.split"}, {six}, {T(0), Arg::ofInt(3)}, {}, [=](const Refs &in) {
         return Refs{rowsOf(in[0], 0, 2), rowsOf(in[0], 2, 2), rowsOf(in[0], 4, 2)};
       }});
  c.push_back({{"paddle.split"}, {six}, {T(0), ints({1, -1})}, {}, [=](const Refs &in) {
                 return Refs{rowsOf(in[0], 0, 1), rowsOf(in[0], 1, 5)};
               }});
  c.push_back({{"torch.split", "torch.Tensor.split"},
               {six},
               {T(0), Arg::ofInt(4)},
               {},
               [=](const Refs &in) {
                 return Refs{rowsOf(in[0], 0, 4), rowsOf(in[0], 4, 2)};
               }});
  c.push_back(
      {{"__getitem__"},
       {kX},
       {T(0), Arg::tuple({Arg::slice(Arg::ofInt(1), Arg::none(), Arg::none()), Arg::ofInt(-1)})},
       {},
       [](const Refs &in) {
         return Refs{Buffer{{{2}, DType::Float32}, {in[0].data[7], in[0].data[11]}}};
       }});
  // A list of ints picks those positions of its axis, in order, repeats allowed.
  c.push_back({{"__getitem__"},
               {kX},
               {T(0), Arg::tuple({Arg::slice(Arg::none(), Arg::none(), Arg::none()),
                                  Arg::list({Arg::ofInt(-1), Arg::ofInt(0), Arg::ofInt(-1)})})},
               {},
               [](const Refs &in) {
                 Buffer out{{{3, 3}, DType::Float32}, {}};
                 for (int r = 0; r < 3; ++r)
                   for (int col : {3, 0, 3})
                     out.data.push_back(in[0].data[r * 4 + col]);
                 return Refs{out};
               }});
  // An int apart from the list (a slice between) sends the list's dimension to the front,
  // as numpy does: x3[0, :, [3, 1]] is [2, 3], not [3, 2].
  c.push_back({{"__getitem__"},
               {TensorMeta{{2, 3, 4}, DType::Float32}},
               {T(0), Arg::tuple({Arg::ofInt(0), Arg::slice(Arg::none(), Arg::none(), Arg::none()),
                                  Arg::list({Arg::ofInt(3), Arg::ofInt(1)})})},
               {},
               [](const Refs &in) {
                 Buffer out{{{2, 3}, DType::Float32}, {}};
                 for (int col : {3, 1})
                   for (int r = 0; r < 3; ++r)
                     out.data.push_back(in[0].data[r * 4 + col]);
                 return Refs{out};
               }});
  c.push_back({{"__getitem__"},
               {kX},
               {T(0), Arg::tuple({Arg::list({Arg::ofInt(2)}), Arg::none()})},
               {},
               [](const Refs &in) {
                 Buffer out{{{1, 1, 4}, DType::Float32}, {}};
                 for (int col = 0; col < 4; ++col)
                   out.data.push_back(in[0].data[8 + col]);
                 return Refs{out};
               }});
  c.push_back({{"__getitem__"},
               {kX},
               {T(0), Arg::tuple({Arg::ellipsis(), Arg::none(),
                                  Arg::slice(Arg::none(), Arg::none(), Arg::ofInt(2))})},
               {},
               [](const Refs &in) {
                 Buffer out{{{3, 1, 2}, DType::Float32}, {}};
                 for (int r = 0; r < 3; ++r)
                   for (int col = 0; col < 4; col += 2)
                     out.data.push_back(in[0].data[r * 4 + col]);
                 return Refs{out};
               }});

  // Linear algebra.
  const TensorMeta a{{3, 5}, DType::Float32}, b{{5, 4}, DType::Float32};
  c.push_back({four("matmul", "matmul"), {a, b}, {T(0), T(1)}, {}, [](const Refs &in) {
                 return Refs{matmul2d(in[0], in[1])};
               }});
  c.push_back({{"paddle.matmul"},
               {a, TensorMeta{{4, 5}, DType::Float32}},
               {T(0), T(1)},
               {{"transpose_y", Arg::ofBool(true)}},
               [](const Refs &in) {
                 return Refs{matmul2d(in[0], permute(in[1], {1, 0}))};
               }});
  c.push_back({{"__matmul__"},
               {TensorMeta{{2, 3, 5}, DType::Float32}, b},
               {T(0), T(1)},
               {},
               [](const Refs &in) {
                 Buffer flat = reshape(in[0], {6, 5});
                 return Refs{reshape(matmul2d(flat, in[1]), {2, 3, 4})};
               }});
  const TensorMeta bias{{4}, DType::Float32};
  c.push_back(
      {{"paddle.nn.functional.linear"}, {a, b, bias}, {T(0), T(1), T(2)}, {}, [](const Refs &in) {
         return Refs{zip(matmul2d(in[0], in[1]), in[2], std::plus<double>())};
       }});
  c.push_back(
      {{"torch.nn.functional.linear"},
       {a, TensorMeta{{4, 5}, DType::Float32}, bias},
       {T(0), T(1), T(2)},
       {},
       [](const Refs &in) {
         return Refs{zip(matmul2d(in[0], permute(in[1], {1, 0})), in[2], std::plus<double>())};
       }});

  // Activations and normalizations.
  const std::string pf = "paddle.nn.functional.", tf = "torch.nn.functional.";
  c.push_back(
      {{pf + "relu", "Tensor.relu", tf + "relu"}, {kX}, {T(0)}, {}, elementwise([](double v) {
         return std::max(v, 0.0);
       })});
  c.push_back({{pf + "relu6", tf + "relu6"},
               {kX},
               {T(0)},
               {},
               elementwise([](double v) { return std::min(std::max(v, 0.0), 6.0); }),
               -8,
               8});
  c.push_back({{pf + "leaky_relu", tf + "leaky_relu"},
               {kX},
               {T(0), Arg::ofFloat(0.2)},
               {},
               elementwise([](double v) { return v > 0 ? v : 0.2 * v; })});
  c.push_back({{pf + "gelu", tf + "gelu"}, {kX}, {T(0)}, {}, elementwise([](double v) {
                 return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
               })});
  auto geluTanh = elementwise([](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  });
  c.push_back({{pf + "gelu"}, {kX}, {T(0), Arg::ofBool(true)}, {}, geluTanh});
  c.push_back({{tf + "gelu"}, {kX}, {T(0)}, {{"approximate", Arg::ofString("tanh")}}, geluTanh});
  c.push_back({{pf + "silu", tf + "silu"}, {kX}, {T(0)}, {}, elementwise([](double v) {
                 return v * sigmoidRef(v);
               })});
  c.push_back({{pf + "softmax", tf + "softmax", "torch.Tensor.softmax"},
               {kX},
               {T(0), lastAxis},
               {},
               [](const Refs &in) { return Refs{softmaxRows(in[0])}; }});
  c.push_back(
      {{pf + "log_softmax", tf + "log_softmax"}, {kX}, {T(0), lastAxis}, {}, [](const Refs &in) {
         return Refs{map(softmaxRows(in[0]), [](double v) { return std::log(v); })};
       }});
  auto layerNorm = [](const Refs &in) {
    Buffer d = zip(in[0], meanRows(in[0]), std::minus<double>());
    Buffer var = meanRows(map(d, [](double v) { return v * v; }));
    Buffer y = zip(d, var, [](double a, double v) { return a / std::sqrt(v + 1e-5); });
    return Refs{zip(zip(y, in[1], std::multiplies<double>()), in[2], std::plus<double>())};
  };
  c.push_back({{pf + "layer_norm", tf + "layer_norm"},
               {kX, kRow, kRow},
               {T(0), Arg::list({Arg::ofInt(4)}), T(1), T(2)},
               {},
               layerNorm});
  auto rms = [](double eps) {
    return [eps](const Refs &in) {
      Buffer ms = meanRows(map(in[0], [](double v) { return v * v; }));
      Buffer y = zip(in[0], ms, [eps](double a, double v) { return a / std::sqrt(v + eps); });
      return Refs{zip(y, in[1], std::multiplies<double>())};
    };
  };
  c.push_back({{"paddle.incubate.nn.functional.fused_rms_norm"},
               {kX, kRow},
               {T(0), T(1), Arg::none(), Arg::ofFloat(1e-6), Arg::ofInt(1)},
               {},
               rms(1e-6)});
  c.push_back({{tf + "rms_norm"},
               {kX, kRow},
               {T(0), Arg::ofInt(4), T(1)},
               {{"eps", Arg::ofFloat(1e-6)}},
               rms(1e-6)});
  // weight_norm's parametrization along dim 0: each row of v scaled to its g.
  c.push_back({{"torch._weight_norm"},
               {kX, TensorMeta{{3, 1}, DType::Float32}},
               {T(0), T(1)},
               {},
               [](const Refs &in) {
                 Buffer norm = map(meanRows(map(in[0], [](double v) { return v * v; })),
                                   [](double m) { return std::sqrt(4 * m); });
                 return Refs{zip(zip(in[0], in[1], std::multiplies<double>()), norm,
                                 std::divides<double>())};
               }});
  c.push_back({{pf + "dropout", tf + "dropout"},
               {kX},
               {T(0)},
               {{"training", Arg::ofBool(false)}},
               [](const Refs &in) { return Refs{in[0]}; }});
  c.push_back({{pf + "dropout"},
               {kX},
               {T(0), Arg::ofFloat(0.4)},
               {{"training", Arg::ofBool(false)}, {"mode", Arg::ofString("downscale_in_infer")}},
               elementwise([](double v) { return v * 0.6; })});

  // Python operators.
  struct PyOp {
    std::string name;
    std::function<double(double, double)> f;
    double lo, hi;
  };
  for (const PyOp &op :
       {PyOp{"add", std::plus<double>(), -2, 2}, PyOp{"sub", std::minus<double>(), -2, 2},
        PyOp{"mul", std::multiplies<double>(), -2, 2},
        PyOp{"truediv", std::divides<double>(), 0.5, 2}, PyOp{"floordiv", floorDiv, 0.5, 3},
        PyOp{"mod", pyMod, 0.5, 3},
        PyOp{"pow", [](double a, double b) { return std::pow(a, b); }, 0.5, 2}}) {
    c.push_back({{"__" + op.name + "__", "__i" + op.name + "__"},
                 {kX, kRow},
                 {T(0), T(1)},
                 {},
                 pairwise(op.f),
                 op.lo,
                 op.hi});
    // Reflected: 1.5 ⊕ x.
    auto f = op.f;
    c.push_back({{"__r" + op.name + "__"},
                 {kX},
                 {T(0), Arg::ofFloat(1.5)},
                 {},
                 elementwise([f](double v) { return f(1.5, v); }),
                 op.lo,
                 op.hi});
  }
  for (const Cmp &cmp : {Cmp{"lt", "", [](double a, double b) { return a < b; }},
                         Cmp{"le", "", [](double a, double b) { return a <= b; }},
                         Cmp{"eq", "", [](double a, double b) { return a == b; }},
                         Cmp{"ne", "", [](double a, double b) { return a != b; }},
                         Cmp{"gt", "", [](double a, double b) { return a > b; }},
                         Cmp{"ge", "", [](double a, double b) { return a >= b; }}})
    c.push_back(
        {{"__" + cmp.paddle + "__"},
         {kI, kI},
         {T(0), T(1)},
         {},
         pairwise([g = cmp.f](double a, double b) { return double(g(a, b)); }, DType::Bool)});
  auto bits = [](std::function<int64_t(int64_t, int64_t)> f) {
    return [f](double a, double b) { return double(f(int64_t(a), int64_t(b))); };
  };
  struct Bit {
    std::string name;
    std::function<int64_t(int64_t, int64_t)> f;
  };
  for (const Bit &op : {Bit{"and", std::bit_and<int64_t>()}, Bit{"or", std::bit_or<int64_t>()},
                        Bit{"xor", std::bit_xor<int64_t>()}}) {
    c.push_back({{"__" + op.name + "__", "__i" + op.name + "__"},
                 {kI, kI},
                 {T(0), T(1)},
                 {},
                 pairwise(bits(op.f), DType::Int32),
                 -8,
                 8});
    c.push_back(
        {{"__" + op.name + "__"}, {kB, kB}, {T(0), T(1)}, {}, pairwise(bits(op.f), DType::Bool)});
    c.push_back({{"__r" + op.name + "__"},
                 {kI},
                 {T(0), Arg::ofInt(6)},
                 {},
                 withScalar(6, bits(op.f), DType::Int32),
                 -8,
                 8});
  }
  c.push_back({{"__neg__"}, {kX}, {T(0)}, {}, elementwise([](double v) { return -v; })});
  c.push_back({{"__pos__"}, {kX}, {T(0)}, {}, elementwise([](double v) { return v; })});
  c.push_back({{"__abs__"}, {kX}, {T(0)}, {}, elementwise([](double v) { return std::fabs(v); })});
  c.push_back({{"__invert__"},
               {kI},
               {T(0)},
               {},
               elementwise([](double v) { return double(~int64_t(v)); }, DType::Int32),
               -8,
               8});
  c.push_back({{"__invert__"},
               {kB},
               {T(0)},
               {},
               elementwise([](double v) { return double(v == 0); }, DType::Bool)});
  // Convolution, pooling, batch norm (NCHW).
  const TensorMeta kImage{{2, 4, 7, 6}, DType::Float32};
  // 3x3, stride 2, padding 1, groups 2, with a bias; then a dilated 1x1-strided one.
  c.push_back({{pf + "conv2d", tf + "conv2d", "torch.conv2d"},
               {kImage, TensorMeta{{6, 2, 3, 3}, DType::Float32}, TensorMeta{{6}, DType::Float32}},
               {T(0), T(1), T(2), Arg::ofInt(2), Arg::ofInt(1), Arg::ofInt(1), Arg::ofInt(2)},
               {},
               [](const Refs &in) { return Refs{conv2dRef(in[0], in[1], &in[2], {3, 3, 2, 1, 1}, 2)}; }});
  c.push_back({{pf + "conv2d", tf + "conv2d"},
               {kImage, TensorMeta{{3, 4, 2, 2}, DType::Float32}},
               {T(0), T(1)},
               {{"dilation", ints({2, 2})}, {"padding", ints({1, 1})}},
               [](const Refs &in) { return Refs{conv2dRef(in[0], in[1], nullptr, {2, 2, 1, 1, 2}, 1)}; }});
  // conv3d: depth taps stacked into the channels; strides, padding, dilation and groups.
  c.push_back({{pf + "conv3d", tf + "conv3d"},
               {TensorMeta{{2, 4, 5, 6, 5}, DType::Float32},
                TensorMeta{{6, 2, 3, 2, 3}, DType::Float32}, TensorMeta{{6}, DType::Float32}},
               {T(0), T(1), T(2)},
               {{"stride", ints({2, 1, 2})},
                {"padding", ints({1, 0, 1})},
                {"dilation", ints({1, 2, 1})},
                {"groups", Arg::ofInt(2)}},
               [](const Refs &in) {
                 return Refs{conv3dRef(in[0], in[1], &in[2], {2, 1, 2}, {1, 0, 1}, {1, 2, 1}, 2)};
               }});
  const TensorMeta kClip{{2, 3, 5, 6, 5}, DType::Float32};
  c.push_back({{pf + "max_pool3d", tf + "max_pool3d"},
               {kClip},
               {T(0), ints({2, 3, 2}), ints({1, 2, 2}), ints({1, 1, 0})},
               {},
               [](const Refs &in) {
                 return Refs{pool3dRef(in[0], {2, 3, 2}, {1, 2, 2}, {1, 1, 0}, false, false)};
               }});
  c.push_back({{tf + "avg_pool3d"},
               {kClip},
               {T(0), ints({2, 3, 2}), ints({1, 2, 2}), ints({1, 1, 0})},
               {},
               [](const Refs &in) {
                 return Refs{pool3dRef(in[0], {2, 3, 2}, {1, 2, 2}, {1, 1, 0}, true, false)};
               }});
  c.push_back({{pf + "avg_pool3d"}, // paddle's default: exclusive of the padding
               {kClip},
               {T(0), ints({2, 3, 2}), ints({1, 2, 2}), ints({1, 1, 0})},
               {},
               [](const Refs &in) {
                 return Refs{pool3dRef(in[0], {2, 3, 2}, {1, 2, 2}, {1, 1, 0}, true, true)};
               }});
  // Depthwise (groups = channels, one filter each): taps times filters, summed.
  c.push_back({{pf + "conv2d", tf + "conv2d"},
               {kImage, TensorMeta{{4, 1, 3, 3}, DType::Float32}, TensorMeta{{4}, DType::Float32}},
               {T(0), T(1), T(2), Arg::ofInt(1), Arg::ofInt(1), Arg::ofInt(1), Arg::ofInt(4)},
               {},
               [](const Refs &in) { return Refs{conv2dRef(in[0], in[1], &in[2], {3, 3, 1, 1, 1}, 4)}; }});
  c.push_back({{pf + "max_pool2d", tf + "max_pool2d"},
               {kImage},
               {T(0), Arg::ofInt(3), Arg::ofInt(2), Arg::ofInt(1)},
               {},
               [](const Refs &in) { return Refs{pool2dRef(in[0], {3, 3, 2, 1, 1}, false, false)}; }});
  c.push_back({{tf + "avg_pool2d"},
               {kImage},
               {T(0), Arg::ofInt(3), Arg::ofInt(2), Arg::ofInt(1)},
               {},
               [](const Refs &in) { return Refs{pool2dRef(in[0], {3, 3, 2, 1, 1}, true, false)}; }});
  c.push_back({{pf + "avg_pool2d"}, // paddle's default: exclusive of the padding
               {kImage},
               {T(0), Arg::ofInt(3), Arg::ofInt(2), Arg::ofInt(1)},
               {},
               [](const Refs &in) { return Refs{pool2dRef(in[0], {3, 3, 2, 1, 1}, true, true)}; }});
  // Bins of unequal size (7 rows into 3, 6 columns into 4).
  c.push_back({{pf + "adaptive_avg_pool2d", tf + "adaptive_avg_pool2d"},
               {kImage},
               {T(0), ints({3, 4})},
               {},
               [](const Refs &in) {
                 const Buffer &x = in[0];
                 Buffer y{{{2, 4, 3, 4}, DType::Float32}, {}};
                 for (int64_t b = 0; b < 2; ++b)
                   for (int64_t ch = 0; ch < 4; ++ch)
                     for (int64_t i = 0; i < 3; ++i)
                       for (int64_t j = 0; j < 4; ++j) {
                         int64_t h0 = i * 7 / 3, h1 = ((i + 1) * 7 + 2) / 3;
                         int64_t w0 = j * 6 / 4, w1 = ((j + 1) * 6 + 3) / 4;
                         double sum = 0;
                         for (int64_t yy = h0; yy < h1; ++yy)
                           for (int64_t xx = w0; xx < w1; ++xx)
                             sum += x.at({b, ch, yy, xx});
                         y.data.push_back(sum / double((h1 - h0) * (w1 - w0)));
                       }
                 return Refs{y};
               }});
  const TensorMeta kChannels{{4}, DType::Float32};
  c.push_back({{pf + "batch_norm", tf + "batch_norm"},
               {kImage, kChannels, kChannels, kChannels, kChannels},
               {T(0), T(1), T(2), T(3), T(4)},
               {},
               [](const Refs &in) {
                 Buffer y = in[0];
                 for (size_t i = 0; i < y.data.size(); ++i) {
                   size_t ch = i / (7 * 6) % 4;
                   double var = std::fabs(in[2].data[ch]); // see lo below: variances are positive
                   y.data[i] = (y.data[i] - in[1].data[ch]) / std::sqrt(var + 1e-5) *
                                   in[3].data[ch] + in[4].data[ch];
                 }
                 return Refs{y};
               },
               0.1,
               2});
  // Attention: torch's [B, H, L, E] with an additive mask, paddle's [B, L, H, E] with a given
  // scale (a bool mask is checked against torch in tests/framework: random bools may mask a
  // whole row, which is NaN in both).
  const TensorMeta kQ{{2, 3, 4, 5}, DType::Float32}, kK{{2, 3, 6, 5}, DType::Float32};
  const TensorMeta kV{{2, 3, 6, 4}, DType::Float32};
  c.push_back({{tf + "scaled_dot_product_attention"},
               {kQ, kK, kV, TensorMeta{{4, 6}, DType::Float32}},
               {T(0), T(1), T(2), T(3)},
               {},
               [](const Refs &in) {
                 return Refs{attentionRef(in[0], in[1], in[2], &in[3], 1 / std::sqrt(5.0))};
               }});
  // is_causal: query i attends to keys 0..i (the top-left triangle of a non-square score).
  c.push_back({{tf + "scaled_dot_product_attention"},
               {kQ, kK, kV},
               {T(0), T(1), T(2)},
               {{"is_causal", Arg::ofBool(true)}},
               [](const Refs &in) {
                 Buffer causal{{{4, 6}, DType::Bool}, {}};
                 for (int64_t i = 0; i < 4; ++i)
                   for (int64_t j = 0; j < 6; ++j)
                     causal.data.push_back(j <= i);
                 return Refs{attentionRef(in[0], in[1], in[2], &causal, 1 / std::sqrt(5.0))};
               }});
  c.push_back({{pf + "scaled_dot_product_attention"},
               {TensorMeta{{2, 4, 3, 5}, DType::Float32}, TensorMeta{{2, 6, 3, 5}, DType::Float32},
                TensorMeta{{2, 6, 3, 4}, DType::Float32}},
               {T(0), T(1), T(2)},
               {{"scale", Arg::ofFloat(0.5)}},
               [](const Refs &in) {
                 auto heads = [](const Buffer &x) { return permute(x, {0, 2, 1, 3}); };
                 Buffer out = attentionRef(heads(in[0]), heads(in[1]), heads(in[2]), nullptr, 0.5);
                 return Refs{permute(out, {0, 2, 1, 3})};
               }});
  // Embedding: rows of a [7, 3] table picked by a [2, 4] int64 index (random in 0..6);
  // paddle's padding_idx row reads as zeros.
  const TensorMeta kIdx{{2, 4}, DType::Int64}, kTable{{7, 3}, DType::Float32};
  auto rows = [](std::optional<int64_t> pad) {
    return [pad](const Refs &in) {
      Buffer out{{{2, 4, 3}, DType::Float32}, {}};
      for (double i : in[0].data)
        for (int64_t d = 0; d < 3; ++d)
          out.data.push_back(pad && int64_t(i) == *pad ? 0.0 : in[1].at({int64_t(i), d}));
      return Refs{out};
    };
  };
  c.push_back({{tf + "embedding"}, {kIdx, kTable}, {T(0), T(1)}, {}, rows(std::nullopt), 0, 6.4});
  c.push_back({{pf + "embedding"}, {kIdx, kTable}, {T(0), T(1)}, {{"padding_idx", Arg::ofInt(2)}},
               rows(2), 0, 6.4});
  // Added for library models: hard activations, gathers, chunks, rolls, pads, einsum.
  c.push_back({{pf + "hardtanh", tf + "hardtanh"}, {kX}, {T(0), Arg::ofFloat(-0.5),
               Arg::ofFloat(1.5)}, {}, elementwise([](double v) {
                 return std::min(std::max(v, -0.5), 1.5);
               }), -4, 4});
  c.push_back({{pf + "hardsigmoid"}, {kX}, {T(0)}, {}, elementwise([](double v) {
                 return std::min(std::max(v * 0.1666667 + 0.5, 0.0), 1.0);
               }), -5, 5});
  c.push_back({{tf + "hardsigmoid"}, {kX}, {T(0)}, {}, elementwise([](double v) {
                 return std::min(std::max(v + 3, 0.0), 6.0) / 6;
               }), -5, 5});
  c.push_back({{pf + "hardswish", tf + "hardswish"}, {kX}, {T(0)}, {}, elementwise([](double v) {
                 return v * std::min(std::max(v + 3, 0.0), 6.0) / 6;
               }), -5, 5});
  c.push_back({{pf + "normalize", tf + "normalize"}, {kX}, {T(0)}, {{"p", Arg::ofFloat(3)}},
               [](const Refs &in) {
                 Buffer cubes = map(in[0], [](double v) { return std::pow(std::abs(v), 3); });
                 Buffer norm = map(reduce(cubes, {1}, 0, std::plus<double>()),
                                   [](double v) { return std::max(std::cbrt(v), 1e-12); });
                 return Refs{zip(in[0], reshape(norm, {3, 1}), std::divides<double>())};
               }});
  c.push_back({{tf + "normalize"}, {kX}, {T(0), Arg::ofFloat(2), Arg::ofInt(0)}, {},
               [](const Refs &in) {
                 Buffer squares = map(in[0], [](double v) { return v * v; });
                 Buffer norm = map(reduce(squares, {0}, 0, std::plus<double>()),
                                   [](double v) { return std::max(std::sqrt(v), 1e-12); });
                 return Refs{zip(in[0], reshape(norm, {1, 4}), std::divides<double>())};
               }});
  // Rows 2, 0, 2 of x; columns 3, 1 (torch's dim before the index, paddle's axis after).
  const TensorMeta kPick{{3}, DType::Int64};
  auto pickRows = [](const Refs &in) {
    Buffer out{{{3, 4}, DType::Float32}, {}};
    for (double r : in[1].data)
      for (int64_t j = 0; j < 4; ++j)
        out.data.push_back(in[0].at({int64_t(r), j}));
    return Refs{out};
  };
  c.push_back({{"torch.index_select", "torch.Tensor.index_select"}, {kX, kPick},
               {T(0), Arg::ofInt(0), T(1)}, {}, pickRows, 0, 2.4});
  c.push_back({{"paddle.index_select", "Tensor.index_select"}, {kX, kPick}, {T(0), T(1)}, {},
               pickRows, 0, 2.4});
  c.push_back({{"paddle.index_select"}, {kX, kPick}, {T(0), T(1), Arg::ofInt(-1)}, {},
               [](const Refs &in) {
                 Buffer out{{{3, 3}, DType::Float32}, {}};
                 for (int64_t i = 0; i < 3; ++i)
                   for (double col : in[1].data)
                     out.data.push_back(in[0].at({i, int64_t(col)}));
                 return Refs{out};
               }, 0, 3.4});
  const TensorMeta kSeven{{7, 4}, DType::Float32};
  c.push_back({{"torch.chunk", "torch.Tensor.chunk"}, {kSeven}, {T(0), Arg::ofInt(3)}, {},
               [=](const Refs &in) {
                 return Refs{rowsOf(in[0], 0, 3), rowsOf(in[0], 3, 3), rowsOf(in[0], 6, 1)};
               }});
  c.push_back({{"paddle.chunk", "Tensor.chunk"}, {six}, {T(0), Arg::ofInt(3)}, {},
               [=](const Refs &in) {
                 return Refs{rowsOf(in[0], 0, 2), rowsOf(in[0], 2, 2), rowsOf(in[0], 4, 2)};
               }});
  auto rolled = [](std::vector<int64_t> shift) { // x[(i - s0) mod 3, (j - s1) mod 4]
    return [shift](const Refs &in) {
      Buffer out{{{3, 4}, DType::Float32}, {}};
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j)
          out.data.push_back(in[0].at({((i - shift[0]) % 3 + 3) % 3, ((j - shift[1]) % 4 + 4) % 4}));
      return Refs{out};
    };
  };
  c.push_back({{"torch.roll", "torch.Tensor.roll"}, {kX}, {T(0), ints({1, -5})},
               {{"dims", ints({0, 1})}}, rolled({1, -5})});
  c.push_back({{"paddle.roll", "Tensor.roll"}, {kX}, {T(0), ints({-1})}, {{"axis", ints({1})}},
               rolled({0, -1})});
  c.push_back({{"torch.roll", "paddle.roll"}, {kX}, {T(0), ints({5})}, {}, [](const Refs &in) {
                 Buffer out = in[0]; // over the flattened tensor
                 for (size_t i = 0; i < 12; ++i)
                   out.data[i] = in[0].data[(i + 12 - 5) % 12];
                 return Refs{out};
               }});
  // Two columns of 9 on the left, one cropped on the right; one row of 9 on top.
  c.push_back({{tf + "pad"}, {kX}, {T(0), ints({2, -1, 1, 0})}, {{"value", Arg::ofFloat(9)}},
               [](const Refs &in) {
                 Buffer out{{{4, 5}, DType::Float32}, {}};
                 for (int64_t i = -1; i < 3; ++i)
                   for (int64_t j = -2; j < 3; ++j)
                     out.data.push_back(i < 0 || j < 0 ? 9.0 : in[0].at({i, j}));
                 return Refs{out};
               }});
  c.push_back({{"torch.swapaxes", "torch.Tensor.swapaxes"}, {kX},
               {T(0), Arg::ofInt(-1), Arg::ofInt(0)}, {},
               [](const Refs &in) { return Refs{permute(in[0], {1, 0})}; }});
  c.push_back({{"torch.Tensor.expand"}, {TensorMeta{{3, 1}, DType::Float32}},
               {T(0), ints({2, -1, 4})}, {}, [](const Refs &in) {
                 Buffer out{{{2, 3, 4}, DType::Float32}, {}};
                 for (int64_t b = 0; b < 2; ++b)
                   for (int64_t i = 0; i < 3; ++i)
                     for (int64_t j = 0; j < 4; ++j)
                       out.data.push_back(in[0].data[i]);
                 return Refs{out};
               }});
  // einsum: a batched product with a label summed out of one operand, and one operand.
  c.push_back({{"torch.einsum", "paddle.einsum"},
               {TensorMeta{{2, 3, 5}, DType::Float32}, TensorMeta{{2, 4, 5, 6}, DType::Float32}},
               {Arg::ofString("b i k, b x k j -> j b i"), Arg::list({T(0), T(1)})}, {},
               [](const Refs &in) {
                 Buffer out{{{6, 2, 3}, DType::Float32}, {}};
                 for (int64_t j = 0; j < 6; ++j)
                   for (int64_t b = 0; b < 2; ++b)
                     for (int64_t i = 0; i < 3; ++i) {
                       double sum = 0;
                       for (int64_t k = 0; k < 5; ++k)
                         for (int64_t x = 0; x < 4; ++x)
                           sum += in[0].at({b, i, k}) * in[1].at({b, x, k, j});
                       out.data.push_back(sum);
                     }
                 return Refs{out};
               }});
  // '...': batch dimensions broadcast (x's [2, 1] against y's [5]), and implicit output.
  c.push_back({{"torch.einsum", "paddle.einsum"},
               {TensorMeta{{2, 1, 3, 4}, DType::Float32}, TensorMeta{{5, 4, 6}, DType::Float32}},
               {Arg::ofString("...ij,...jk->...ik"), Arg::list({T(0), T(1)})}, {},
               [](const Refs &in) {
                 Buffer out{{{2, 5, 3, 6}, DType::Float32}, {}};
                 for (int64_t a = 0; a < 2; ++a)
                   for (int64_t p = 0; p < 5; ++p)
                     for (int64_t i = 0; i < 3; ++i)
                       for (int64_t k = 0; k < 6; ++k) {
                         double sum = 0;
                         for (int64_t j = 0; j < 4; ++j)
                           sum += in[0].at({a, 0, i, j}) * in[1].at({p, j, k});
                         out.data.push_back(sum);
                       }
                 return Refs{out};
               }});
  c.push_back({{"torch.einsum"}, {TensorMeta{{2, 3, 4}, DType::Float32}},
               {Arg::ofString("b...->...b"), Arg::list({T(0)})}, {},
               [](const Refs &in) { return Refs{permute(in[0], {1, 2, 0})}; }});
  c.push_back({{"torch.einsum"}, {TensorMeta{{2, 3, 4}, DType::Float32}},
               {Arg::ofString("...j"), Arg::list({T(0)})}, {}, // implicit: "...j" -> the same
               [](const Refs &in) { return Refs{in[0]}; }});
  c.push_back({{"torch.einsum"}, {kX}, {Arg::ofString("ji"), Arg::list({T(0)})}, {},
               [](const Refs &in) { return Refs{permute(in[0], {1, 0})}; }}); // implicit: "ij"
  c.push_back({{"torch.einsum"}, {kX}, {Arg::ofString("ij->j"), Arg::list({T(0)})}, {},
               [](const Refs &in) {
                 return Refs{reshape(reduce(in[0], {0}, 0, std::plus<double>()), {4})};
               }});
  // ceil_mode: 7 rows give 4 windows of 2 with stride 2 (the last cut short).
  c.push_back({{tf + "max_pool2d"}, {kImage}, {T(0), Arg::ofInt(2), Arg::ofInt(2)},
               {{"ceil_mode", Arg::ofBool(true)}},
               [](const Refs &in) { return Refs{pool2dRef(in[0], {2, 2, 2, 0, 1}, false, false, true)}; }});
  c.push_back({{tf + "avg_pool2d"}, {kImage}, {T(0), Arg::ofInt(3), Arg::ofInt(2), Arg::ofInt(1)},
               {{"ceil_mode", Arg::ofBool(true)}},
               [](const Refs &in) { return Refs{pool2dRef(in[0], {3, 3, 2, 1, 1}, true, false, true)}; }});
  c.push_back({{pf + "avg_pool2d"}, {kImage}, {T(0), Arg::ofInt(2), Arg::ofInt(2)},
               {{"ceil_mode", Arg::ofBool(true)}},
               [](const Refs &in) { return Refs{pool2dRef(in[0], {2, 2, 2, 0, 1}, true, true, true)}; }});
  addMathCases(c);
  addReductionCases(c);
  addIndexingCases(c);
  addLinearAlgebraAndSortingCases(c);
  addScatterAndSearchCases(c);
  addNormalizationCases(c);
  addFunctionalCases(c);
  return c;
}
} // namespace sotc::ops::cases

namespace {

void checkClose(const Buffer &got, const Buffer &want, const std::string &what) {
  INFO(what);
  REQUIRE(got.meta.shape == want.meta.shape);
  CHECK(dtypeName(got.meta.dtype) == std::string(dtypeName(want.meta.dtype)));
  REQUIRE(got.data.size() == want.data.size());
  for (size_t i = 0; i < got.data.size(); ++i) {
    INFO("element " << i << ": got " << got.data[i] << ", want " << want.data[i]);
    double g = got.data[i], w = want.data[i]; // infinities (masks) compare equal
    CHECK((g == w || (std::isnan(g) && std::isnan(w)) ||
           std::fabs(g - w) <= 1e-5 + 1e-5 * std::fabs(w)));
  }
}

} // namespace

TEST_CASE("every decomposition agrees with its API's reference", "[decompositions]") {
  const OpTable &table = OpTable::get();
  std::mt19937 rng(20261129);
  std::set<const OpEntry *> covered;
  for (const Case &c : all()) {
    for (int round = 0; round < 3; ++round) {
      std::vector<Buffer> inputs;
      for (const TensorMeta &m : c.tensors)
        inputs.push_back(random(m, rng, c.lo, c.hi));
      CallArgs args;
      for (const Arg &a : c.positional)
        args.positional.push_back(resolveSlots(a, c.tensors));
      for (const auto &[k, v] : c.keywords)
        args.keywords.push_back({k, resolveSlots(v, c.tensors)});
      Refs want = c.reference(inputs);
      for (const std::string &name : c.names) {
        INFO("entry " << name);
        const OpEntry *entry = table.lookup(name);
        REQUIRE(entry);
        covered.insert(entry);
        LoweredCall call = table.lower(name, args);
        // The graph's inputs are the call's tensors in argument order.
        REQUIRE(call.graph.inputs.size() == inputs.size());
        Refs got = evaluate(call.graph, inputs);
        REQUIRE(got.size() == want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          CHECK(call.outputs()[i] == got[i].meta);
          checkClose(got[i], want[i],
                     name + " output " + std::to_string(i) + "\n" + call.graph.str());
        }
      }
    }
  }
  std::string missing;
  for (const auto &entry : table.entries())
    if (!covered.count(entry.get()))
      missing += " " + entry->name;
  INFO("entries without a numeric case:" << missing);
  CHECK(missing.empty());
}

TEST_CASE("constants are broadcast and cast when made; dead ops are dropped", "[decompositions]") {
  const OpTable &table = OpTable::get();
  LoweredCall relu = table.lower("paddle.nn.functional.relu", {{Arg::ofTensor(kX)}, {}});
  REQUIRE(relu.graph.ops.size() == 2);
  CHECK(relu.graph.ops[0].prim == Prim::FillConstant);
  CHECK(relu.graph.ops[0].result == kX); // zero already has the operand's shape
  CHECK(relu.graph.ops[1].prim == Prim::Max);
  // int32 tensor + 1.5: the constant is a float32 fill, the tensor is cast.
  LoweredCall add = table.lower("__add__", {{Arg::ofTensor(kI), Arg::ofFloat(1.5)}, {}});
  REQUIRE(add.graph.ops.size() == 3);
  std::multiset<Prim> prims;
  for (const PrimOp &op : add.graph.ops) {
    prims.insert(op.prim);
    CHECK(op.result == TensorMeta{kI.shape, DType::Float32});
  }
  CHECK(prims == std::multiset<Prim>{Prim::Cast, Prim::FillConstant, Prim::Add});
  CHECK(add.graph.str().find("broadcast_to") == std::string::npos);
  // A reduction over one element is a reshape (pooling a 1x1 map): no reduction kernel.
  LoweredCall one = table.lower("paddle.max", {{Arg::ofTensor({{3, 1, 4}, DType::Float32}),
                                                Arg::ofInt(1)}, {}});
  REQUIRE(one.graph.ops.size() == 1);
  CHECK(one.graph.ops[0].prim == Prim::Reshape);
  CHECK(one.graph.ops[0].result.shape == std::vector<int64_t>{3, 4});
}

TEST_CASE("0-d tensors: dimension 0 and -1 reduce nothing; operations that need a dimension "
          "refuse them", "[decompositions]") {
  const OpTable &table = OpTable::get();
  const TensorMeta scalar{{}, DType::Float32};
  std::mt19937 rng(7);
  Buffer x = random(scalar, rng);
  double v = x.data[0];
  auto dim = [](int64_t d) { return std::pair<std::string, Arg>{"dim", Arg::ofInt(d)}; };
  struct Reduces {
    std::string name;
    std::vector<std::pair<std::string, Arg>> keywords;
    double want;
  };
  for (const Reduces &c : std::vector<Reduces>{
           {"torch.mean", {dim(0), {"keepdim", Arg::ofBool(true)}}, v},
           {"torch.Tensor.mean", {dim(-1)}, v},
           {"torch.sum", {dim(0)}, v},
           {"torch.amax", {dim(-1)}, v},
           {"torch.logsumexp", {dim(0)}, v},
           {"torch.softmax", {dim(0)}, 1},
           {"torch.nn.functional.normalize", {dim(0)}, v / std::max(std::fabs(v), 1e-12)},
           {"torch.transpose", {{"dim0", Arg::ofInt(0)}, {"dim1", Arg::ofInt(-1)}}, v},
           {"paddle.mean", {{"axis", Arg::ofInt(0)}}, v}}) {
    INFO(c.name);
    LoweredCall call = table.lower(c.name, {{Arg::ofTensor(scalar)}, c.keywords});
    Refs got = evaluate(call.graph, {x});
    REQUIRE(got.size() == 1);
    CHECK(got[0].meta.shape.empty());
    CHECK(std::fabs(got[0].data[0] - c.want) <= 1e-6 * std::max(1.0, std::fabs(c.want)));
  }
  const TensorMeta index{{1}, DType::Int64};
  for (const auto &[name, call] : std::vector<std::pair<std::string, CallArgs>>{
           {"torch.cat", {{Arg::list({Arg::ofTensor(scalar), Arg::ofTensor(scalar)})}, {dim(0)}}},
           {"torch.chunk", {{Arg::ofTensor(scalar), Arg::ofInt(1)}, {dim(0)}}},
           {"torch.split", {{Arg::ofTensor(scalar), Arg::ofInt(1)}, {dim(0)}}},
           {"torch.roll", {{Arg::ofTensor(scalar), Arg::list({Arg::ofInt(1)}),
                            Arg::list({Arg::ofInt(0)})}, {}}}}) {
    INFO(name);
    try {
      table.lower(name, call);
      FAIL("lowered");
    } catch (const sotc::CodedError &e) {
      CHECK(std::string(e.what()).find("of a 0-d tensor") != std::string::npos);
    }
  }
}

TEST_CASE("NaN, infinities and -0.0: classification, NaN-aware and stable forms",
          "[decompositions]") {
  const OpTable &table = OpTable::get();
  const double nan = NAN, inf = INFINITY;
  const std::vector<double> x = {nan, inf, -inf, -0.0, 0.0, 1.5, -2.0, 3.0};
  const std::vector<double> y = {1.0, nan, 2.0, nan, -inf, inf, -inf, 3.0};
  const TensorMeta meta{{8}, DType::Float32};
  auto run = [&](const std::string &name, std::vector<std::vector<double>> inputs,
                 std::vector<std::pair<std::string, Arg>> keywords = {}) {
    CallArgs args;
    std::vector<Buffer> buffers;
    for (auto &data : inputs) {
      args.positional.push_back(Arg::ofTensor(meta));
      buffers.push_back(Buffer{meta, data});
    }
    args.keywords = keywords;
    Refs got = evaluate(table.lower(name, args).graph, buffers);
    REQUIRE(got.size() == 1);
    return got[0].data;
  };
  using V = std::vector<double>;
  CHECK(run("torch.isnan", {x}) == V{1, 0, 0, 0, 0, 0, 0, 0});
  CHECK(run("paddle.isinf", {x}) == V{0, 1, 1, 0, 0, 0, 0, 0});
  CHECK(run("torch.isposinf", {x}) == V{0, 1, 0, 0, 0, 0, 0, 0});
  CHECK(run("torch.isneginf", {x}) == V{0, 0, 1, 0, 0, 0, 0, 0});
  CHECK(run("torch.isfinite", {x}) == V{0, 0, 0, 1, 1, 1, 1, 1});
  CHECK(run("torch.signbit", {x}) == V{0, 0, 1, 1, 0, 0, 1, 0});
  const double top = std::numeric_limits<float>::max();
  CHECK(run("torch.nan_to_num", {x}) == V{0, top, -top, -0.0, 0, 1.5, -2, 3});
  CHECK(run("torch.nan_to_num", {x}, {{"nan", Arg::ofFloat(7)}, {"posinf", Arg::ofFloat(8)},
                                      {"neginf", Arg::ofFloat(-8)}}) ==
        V{7, 8, -8, -0.0, 0, 1.5, -2, 3});
  V fmax = run("torch.fmax", {x, y});
  CHECK(fmax == V{1, inf, 2, -0.0, 0, inf, -2, 3}); // NaN only where both are
  V lae = run("torch.logaddexp", {y, y}); // equal arguments: y + log(2), infinities kept
  CHECK(std::isnan(lae[1]));
  CHECK(lae[4] == -inf);
  CHECK(lae[5] == inf);
  CHECK(std::fabs(lae[7] - (3 + std::log(2.0))) < 1e-6);
  V xl = run("torch.xlogy", {V{0, 0, 2, 0, 1, 1, 1, 1}, y}); // 0 * log(y) is 0 unless y is NaN
  CHECK(xl[0] == 0);
  CHECK(std::isnan(xl[1]));
  CHECK(std::isnan(xl[3]));
  V inv = run("torch.erfinv", {V{1, -1, 0, 0.5, 2, -0.0, 0.999, -0.999}});
  CHECK(inv[0] == inf);
  CHECK(inv[1] == -inf);
  CHECK(inv[2] == 0);
  CHECK(std::isnan(inv[4]));
  CHECK(std::fabs(inv[6] - 2.326753765513524) < 1e-5);
  // nextafter at zero, subnormals, powers of two, the largest float and infinities.
  const float tiny = std::numeric_limits<float>::denorm_min(),
              big = std::numeric_limits<float>::max();
  for (auto [from, to] : {std::pair<V, V>{{0.0, -0.0, tiny, -tiny, 1.0, 1.0, -0.5, 0x1p-126},
                                          {1.0, -1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0}},
                          std::pair<V, V>{{big, inf, -inf, 2.0, -big, 0x1p-125, 3.0, -tiny},
                                          {inf, 0.0, 0.0, 2.0, -inf, 1.0, -3.0, -1.0}}}) {
    V next = run("torch.nextafter", {from, to});
    for (size_t i = 0; i < from.size(); ++i) {
      INFO("nextafter(" << from[i] << ", " << to[i] << ")");
      CHECK(next[i] == double(std::nextafterf(float(from[i]), float(to[i]))));
    }
  }
  V nanNext = run("torch.nextafter", {x, y});
  CHECK(std::isnan(nanNext[0]));
  CHECK(std::isnan(nanNext[1]));
  CHECK(nanNext[7] == 3.0);
  V close = run("torch.isclose", {x, x}, {{"equal_nan", Arg::ofBool(true)}});
  CHECK(close == V{1, 1, 1, 1, 1, 1, 1, 1});
  CHECK(run("torch.isclose", {x, x})[0] == 0);
}
