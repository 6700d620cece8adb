// The CPU runtime's convolution steps (oneDNN's primitive, and columns times a GEMM or a direct
// loop where there is none) against a direct loop in double over the same step description.
#include "runtime/src/cpu/Convolution.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

using sotc::runtime::ChainLayout;
using sotc::runtime::ConvPlan;
using sotc::runtime::validate;
using sotc::runtime::cpu::convolutionChainLayout;
using sotc::runtime::cpu::PackedWeights;
using sotc::runtime::cpu::processOnednn;
using sotc::runtime::cpu::relayout;
using sotc::runtime::cpu::runConv;
using sotc::runtime::cpu::runConvWithoutPrimitive;

namespace {

ConvPlan planOf(int64_t n, int64_t c, int64_t h, int64_t oc, int64_t k, int64_t stride, int64_t pad,
                int64_t dilation = 1, int64_t groups = 1) {
  ConvPlan p;
  p.n = n, p.c = c, p.h = p.w = h, p.oc = oc, p.kh = p.kw = k, p.groups = groups;
  p.strides = {stride, stride};
  p.dilations = {dilation, dilation};
  int64_t span = h + 2 * pad - dilation * (k - 1);
  p.oh = p.ow = (span - 1) / stride + 1;
  // The least trailing padding that gives the size, as the compiler writes it.
  int64_t after = std::max<int64_t>(0, (p.oh - 1) * stride + dilation * (k - 1) + 1 - h - pad);
  p.pads = {pad, after, pad, after};
  return p;
}

std::vector<float> randomValues(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(static_cast<size_t>(count));
  for (float &x : v)
    x = normal(rng);
  return v;
}

/// The step's activation of x, in double.
double activated(ConvPlan::Activation activation, double x) {
  switch (activation) {
  case ConvPlan::Activation::Relu:
    return std::max(x, 0.0);
  case ConvPlan::Activation::Relu6:
    return std::min(std::max(x, 0.0), 6.0);
  case ConvPlan::Activation::Hardswish:
    return x * std::min(std::max(x + 3, 0.0), 6.0) / 6;
  case ConvPlan::Activation::None:
    break;
  }
  return x;
}

/// The step by definition, in double.
std::vector<double> reference(const ConvPlan &s, const std::vector<float> &x,
                              const std::vector<float> &w, const float *bias,
                              const float *residual) {
  std::vector<double> out;
  int64_t perGroup = s.c / s.groups, filters = s.oc / s.groups;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t o = 0; o < s.oc; ++o)
      for (int64_t p = 0; p < s.oh; ++p)
        for (int64_t q = 0; q < s.ow; ++q) {
          double acc = bias ? bias[o] : 0;
          for (int64_t c = 0; c < perGroup; ++c)
            for (int64_t i = 0; i < s.kh; ++i)
              for (int64_t j = 0; j < s.kw; ++j) {
                int64_t h = p * s.strides[0] + i * s.dilations[0] - s.pads[0];
                int64_t v = q * s.strides[1] + j * s.dilations[1] - s.pads[2];
                int64_t channel = o / filters * perGroup + c;
                if (h >= 0 && h < s.h && v >= 0 && v < s.w)
                  acc += double(x[((n * s.c + channel) * s.h + h) * s.w + v]) *
                         w[((o * perGroup + c) * s.kh + i) * s.kw + j];
              }
          if (residual)
            acc += residual[out.size()];
          out.push_back(activated(s.activation, acc));
        }
  return out;
}

void requireClose(const std::vector<float> &got, const std::vector<double> &want) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(got[i] - want[i]) / (1 + std::abs(want[i])));
  REQUIRE(worst < 1e-4);
}

} // namespace

TEST_CASE("convolution steps compute what the step means, on oneDNN and on the GEMM",
          "[runtime][conv]") {
  struct Case {
    const char *what;
    ConvPlan plan;
  };
  std::vector<Case> cases = {
      {"3x3, stride 1, padded", planOf(2, 16, 10, 32, 3, 1, 1)},
      {"3x3, stride 2: no trailing padding", planOf(2, 16, 10, 32, 3, 2, 1)},
      {"a 7x7 stem of 3 channels", planOf(1, 3, 20, 16, 7, 2, 3)},
      {"1x1, stride 2", planOf(2, 32, 8, 16, 1, 2, 0)},
      {"pointwise: a GEMM over the images", planOf(3, 8, 6, 12, 1, 1, 0)},
      {"dilated", planOf(1, 8, 12, 8, 3, 1, 2, 2)},
      {"odd channel counts", planOf(3, 5, 9, 7, 3, 1, 1)},
      {"depthwise 3x3", planOf(2, 32, 10, 32, 3, 1, 1, 1, 32)},
      {"depthwise, stride 2, 24 channels", planOf(2, 24, 11, 24, 3, 2, 1, 1, 24)},
      {"depthwise 5x5, dilated", planOf(1, 16, 13, 16, 5, 1, 4, 2, 16)},
      {"depthwise 5x5, stride 2", planOf(2, 16, 13, 16, 5, 2, 2, 1, 16)},
      {"4 groups of 2 channels, 3 filters each", planOf(2, 8, 7, 12, 3, 1, 1, 1, 4)}};
  using A = ConvPlan::Activation;
  for (Case &c : cases)
    for (A activation : {A::None, A::Relu, A::Relu6, A::Hardswish})
      for (bool withBias : {false, true})
        for (bool withResidual : {false, true}) {
          ConvPlan s = c.plan;
          s.activation = activation;
          s.bias = withBias, s.residual = withResidual;
          REQUIRE(validate(s).empty());
          std::vector<float> x = randomValues(s.inputElements(), 1);
          std::vector<float> w = randomValues(s.weightElements(), 2);
          std::vector<float> b = randomValues(s.oc, 3);
          std::vector<float> r = randomValues(s.outputElements(), 4);
          const float *bias = withBias ? b.data() : nullptr;
          const float *residual = withResidual ? r.data() : nullptr;
          std::vector<double> want = reference(s, x, w, bias, residual);
          INFO(c.what << ", activation " << static_cast<int>(activation) << ", bias " << withBias
                      << ", residual " << withResidual);
          PackedWeights packed;
          std::vector<float> got(static_cast<size_t>(s.outputElements()), -7.0f);
          runConv(s, got.data(), x.data(), w.data(), bias, residual, packed);
          requireClose(got, want);
          std::vector<float> onGemm(got.size(), -7.0f);
          runConvWithoutPrimitive(s, onGemm.data(), x.data(), w.data(), bias, residual);
          requireClose(onGemm, want);
        }
}

TEST_CASE("a constant weight is packed once, until the weights change", "[runtime][conv]") {
  if (!processOnednn().sgemm) {
    WARN("no oneDNN (" << processOnednn().failure << "): nothing is packed");
    return;
  }
  ConvPlan s = planOf(1, 16, 8, 16, 3, 1, 1);
  s.constantWeight = true;
  std::vector<float> x = randomValues(s.inputElements(), 1);
  std::vector<float> w = randomValues(s.weightElements(), 2), first = w;
  std::vector<float> out(static_cast<size_t>(s.outputElements()));
  PackedWeights packed;
  runConv(s, out.data(), x.data(), w.data(), nullptr, nullptr, packed);
  requireClose(out, reference(s, x, first, nullptr, nullptr));
  // The weight changes in place (a model's setWeight): the packed copy still serves...
  std::vector<float> next = randomValues(s.weightElements(), 5);
  std::copy(next.begin(), next.end(), w.begin());
  runConv(s, out.data(), x.data(), w.data(), nullptr, nullptr, packed);
  requireClose(out, reference(s, x, first, nullptr, nullptr));
  // ...until the backend drops it; a weight that is not constant is read on every call.
  packed.clear();
  runConv(s, out.data(), x.data(), w.data(), nullptr, nullptr, packed);
  requireClose(out, reference(s, x, w, nullptr, nullptr));
  s.constantWeight = false;
  std::vector<float> third = randomValues(s.weightElements(), 6);
  runConv(s, out.data(), x.data(), third.data(), nullptr, nullptr, packed);
  requireClose(out, reference(s, x, third, nullptr, nullptr));
}

TEST_CASE("one convolution step runs on several threads at once", "[runtime][conv]") {
  ConvPlan s = planOf(2, 16, 12, 32, 3, 1, 1);
  s.constantWeight = true, s.bias = true, s.residual = true;
  s.activation = ConvPlan::Activation::Relu;
  std::vector<float> w = randomValues(s.weightElements(), 2), b = randomValues(s.oc, 3);
  PackedWeights packed;
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 10; ++round) {
        std::vector<float> x = randomValues(s.inputElements(), 10 + t * 100 + round);
        std::vector<float> r = randomValues(s.outputElements(), 20 + t * 100 + round);
        std::vector<float> out(static_cast<size_t>(s.outputElements()));
        runConv(s, out.data(), x.data(), w.data(), b.data(), r.data(), packed);
        std::vector<double> want = reference(s, x, w, b.data(), r.data());
        for (size_t i = 0; i < out.size(); ++i)
          failures[t] += std::abs(out[i] - want[i]) > 1e-4 * (1 + std::abs(want[i]));
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (int f : failures)
    REQUIRE(f == 0);
}

TEST_CASE("convolutions pass tensors in the layout of a chain", "[runtime][conv]") {
  if (convolutionChainLayout() == ChainLayout::None) {
    WARN("no oneDNN primitives: every tensor stays NCHW");
    return;
  }
  // x, the residual and the output in the chain's layout; the primitive reads and writes them
  // as they are, and without a primitive the direct path converts around it.
  ChainLayout layout = GENERATE(ChainLayout::ChannelsLast, ChainLayout::Blocks8);
  int64_t groups = GENERATE(as<int64_t>{}, 1, 32);
  bool viaPrimitive = GENERATE(true, false);
  INFO("layout " << static_cast<int>(layout) << ", groups " << groups << ", primitive "
                 << viaPrimitive);
  ConvPlan s = planOf(2, 32, 9, 32, 3, 1, 1, 1, groups);
  s.bias = s.residual = true;
  s.activation = ConvPlan::Activation::Relu;
  s.chain = layout;
  s.chainedInput = s.chainedResidual = s.chainedOutput = true;
  std::vector<float> x = randomValues(s.inputElements(), 1),
                     w = randomValues(s.weightElements(), 2), b = randomValues(s.oc, 3),
                     r = randomValues(s.outputElements(), 4);
  std::vector<float> xb(x.size()), rb(r.size()), outb(r.size()), out(r.size());
  std::array<int64_t, 4> in{s.n, s.c, s.h, s.w}, result{s.n, s.oc, s.oh, s.ow};
  relayout(processOnednn(), in, layout, true, x.data(), xb.data());
  relayout(processOnednn(), result, layout, true, r.data(), rb.data());
  REQUIRE(xb != x); // a layout of its own
  PackedWeights packed;
  if (viaPrimitive)
    runConv(s, outb.data(), xb.data(), w.data(), b.data(), rb.data(), packed);
  else
    runConvWithoutPrimitive(s, outb.data(), xb.data(), w.data(), b.data(), rb.data());
  relayout(processOnednn(), result, layout, false, outb.data(), out.data());
  requireClose(out, reference(s, x, w, b.data(), r.data()));
}

TEST_CASE("validate refuses convolution steps whose sizes do not fit", "[runtime][conv]") {
  ConvPlan s = planOf(1, 4, 8, 4, 3, 1, 1);
  REQUIRE(validate(s).empty());
  ConvPlan wrong = s;
  wrong.oh = 9;
  REQUIRE(validate(wrong) == "the output size is not the window's over the padded input");
  wrong = s;
  wrong.strides[1] = 0;
  REQUIRE(!validate(wrong).empty());
  wrong = s;
  wrong.c = 0;
  REQUIRE(!validate(wrong).empty());
  wrong = s;
  wrong.groups = 3;
  REQUIRE(validate(wrong) == "groups must divide the input and output channels");
}
