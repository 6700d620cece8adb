#include "runtime/src/cpu/Convolution.h"

#include <algorithm>
#include <array>
#include <vector>

namespace sotc::runtime::cpu {
namespace {

/// Image `n`'s columns: row (c, i, j) holds, for every output pixel, the input it reads
/// through tap (i, j) of channel c (0 in the padding).
void im2col(const ConvPlan &s, const float *image, float *columns) {
  for (int64_t c = 0; c < s.c; ++c)
    for (int64_t i = 0; i < s.kh; ++i)
      for (int64_t j = 0; j < s.kw; ++j)
        for (int64_t p = 0; p < s.oh; ++p) {
          int64_t h = p * s.strides[0] + i * s.dilations[0] - s.pads[0];
          for (int64_t q = 0; q < s.ow; ++q) {
            int64_t w = q * s.strides[1] + j * s.dilations[1] - s.pads[2];
            bool inside = h >= 0 && h < s.h && w >= 0 && w < s.w;
            *columns++ = inside ? image[(c * s.h + h) * s.w + w] : 0.0f;
          }
        }
}

/// The activation A of one value, inline (ConvPlan's activate() is one call per value).
template <ConvPlan::Activation A> inline float activated(float v) {
  if constexpr (A == ConvPlan::Activation::Relu)
    return std::max(v, 0.0f);
  else if constexpr (A == ConvPlan::Activation::Relu6)
    return std::min(std::max(v, 0.0f), 6.0f);
  else if constexpr (A == ConvPlan::Activation::Hardswish)
    return v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f);
  else
    return v;
}

/// The epilogue over one output row (`pixels` values of one channel): + bias, + residual, then
/// the activation, in loops the compiler vectorizes (one per activation).
template <ConvPlan::Activation A>
void finishRow(float *out, int64_t pixels, float bias, const float *residual) {
  if (residual)
    for (int64_t i = 0; i < pixels; ++i)
      out[i] = activated<A>(out[i] + bias + residual[i]);
  else
    for (int64_t i = 0; i < pixels; ++i)
      out[i] = activated<A>(out[i] + bias);
}

/// The epilogue over the whole output, its rows split over `parallel`.
void finish(const ConvPlan &s, float *out, const float *bias, const float *residual,
            const ParallelFor &parallel) {
  if (!bias && !residual && s.activation == ConvPlan::Activation::None)
    return;
  int64_t pixels = s.oh * s.ow;
  auto rows = [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      float *o = out + row * pixels;
      const float *r = residual ? residual + row * pixels : nullptr;
      float b = bias ? bias[row % s.oc] : 0.0f;
      switch (s.activation) {
      case ConvPlan::Activation::None:
        finishRow<ConvPlan::Activation::None>(o, pixels, b, r);
        break;
      case ConvPlan::Activation::Relu:
        finishRow<ConvPlan::Activation::Relu>(o, pixels, b, r);
        break;
      case ConvPlan::Activation::Relu6:
        finishRow<ConvPlan::Activation::Relu6>(o, pixels, b, r);
        break;
      case ConvPlan::Activation::Hardswish:
        finishRow<ConvPlan::Activation::Hardswish>(o, pixels, b, r);
        break;
      }
    }
  };
  // Below about 64 KiB a pass runs faster on the calling thread than woken workers take.
  if (!parallel.run || s.outputElements() < 16384)
    return rows(0, s.n * s.oc);
  parallel.run(s.n * s.oc, rows);
}

/// A convolution of several groups as a direct loop, one output plane (image, channel) at a
/// time: each tap of each of the group's input channels adds the weight times the input rows it
/// reads (no columns: a depthwise one reads C/groups = 1 channel a plane).
void convolveGroups(const ConvPlan &s, float *out, const float *x, const float *weight,
                    const ParallelFor &parallel) {
  int64_t perGroup = s.c / s.groups, filters = s.oc / s.groups, pixels = s.oh * s.ow;
  // The output columns q whose tap j reads inside the row: 0 <= q*sw + j*dw - left < w.
  auto columns = [&](int64_t j) {
    int64_t offset = j * s.dilations[1] - s.pads[2], sw = s.strides[1];
    int64_t first = offset >= 0 ? 0 : (-offset + sw - 1) / sw;
    int64_t last = s.w - offset <= 0 ? 0 : (s.w - offset + sw - 1) / sw;
    return std::pair{std::min(first, s.ow), std::min(last, s.ow)};
  };
  auto planes = [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      int64_t n = plane / s.oc, o = plane % s.oc, group = o / filters;
      float *y = out + plane * pixels;
      std::fill(y, y + pixels, 0.0f);
      for (int64_t c = 0; c < perGroup; ++c) {
        const float *image = x + (n * s.c + group * perGroup + c) * s.h * s.w;
        for (int64_t i = 0; i < s.kh; ++i)
          for (int64_t j = 0; j < s.kw; ++j) {
            float tap = weight[((o * perGroup + c) * s.kh + i) * s.kw + j];
            auto [first, last] = columns(j);
            int64_t offset = j * s.dilations[1] - s.pads[2];
            for (int64_t p = 0; p < s.oh; ++p) {
              int64_t h = p * s.strides[0] + i * s.dilations[0] - s.pads[0];
              if (h < 0 || h >= s.h)
                continue;
              const float *row = image + h * s.w;
              float *to = y + p * s.ow;
              for (int64_t q = first; q < last; ++q)
                to[q] += tap * row[q * s.strides[1] + offset];
            }
          }
      }
    }
  };
  if (!parallel.run || s.outputElements() < 16384)
    return planes(0, s.n * s.oc);
  parallel.run(s.n * s.oc, planes);
}

/// The convolution on NCHW tensors: for one group each image's columns (a pointwise one's x as
/// it is) times the weight, for several the direct loop; then the epilogue.
void convolveNchw(const ConvPlan &s, float *out, const float *x, const float *weight,
                  const float *bias, const float *residual, const ParallelFor &parallel) {
  if (s.groups > 1) {
    convolveGroups(s, out, x, weight, parallel);
    return finish(s, out, bias, residual, parallel);
  }
  int64_t taps = s.c * s.kh * s.kw, pixels = s.oh * s.ow;
  GemmPlan g;
  g.m = s.oc, g.n = pixels, g.k = taps;
  g.lda = taps, g.ldb = pixels, g.ldc = pixels;
  if (s.pointwise()) {
    // One step over the images, the weight shared: the GEMM library runs them side by side.
    g.batch = {s.n}, g.strideA = {0}, g.strideB = {taps * pixels}, g.strideC = {s.oc * pixels};
    runGemm(g, out, weight, x, nullptr, parallel);
  } else {
    thread_local std::vector<float> columns;
    columns.resize(static_cast<size_t>(taps * pixels));
    for (int64_t n = 0; n < s.n; ++n) {
      im2col(s, x + n * s.c * s.h * s.w, columns.data());
      runGemm(g, out + n * s.oc * pixels, weight, columns.data(), nullptr, parallel);
    }
  }
  finish(s, out, bias, residual, parallel);
}

} // namespace

void runConvWithoutPrimitive(const ConvPlan &s, float *out, const float *x, const float *weight,
                             const float *bias, const float *residual,
                             const ParallelFor &parallel) {
  if (!s.chainedInput && !s.chainedResidual && !s.chainedOutput)
    return convolveNchw(s, out, x, weight, bias, residual, parallel);
  // Tensors in a chain's layout (which only a backend with oneDNN's primitives sets up), for a
  // shape oneDNN has no fast kernel for: NCHW copies around the NCHW path.
  const Onednn &onednn = processOnednn();
  thread_local std::vector<float> plainX, plainResidual, plainOut;
  std::array<int64_t, 4> in{s.n, s.c, s.h, s.w}, result{s.n, s.oc, s.oh, s.ow};
  if (s.chainedInput) {
    plainX.resize(static_cast<size_t>(s.inputElements()));
    relayout(onednn, in, s.chain, false, x, plainX.data());
    x = plainX.data();
  }
  if (residual && s.chainedResidual) {
    plainResidual.resize(static_cast<size_t>(s.outputElements()));
    relayout(onednn, result, s.chain, false, residual, plainResidual.data());
    residual = plainResidual.data();
  }
  float *to = out;
  if (s.chainedOutput) {
    plainOut.resize(static_cast<size_t>(s.outputElements()));
    to = plainOut.data();
  }
  convolveNchw(s, to, x, weight, bias, residual, parallel);
  if (s.chainedOutput)
    relayout(onednn, result, s.chain, true, to, out);
}

ChainLayout convolutionChainLayout() {
  const Onednn &onednn = processOnednn();
  if (!onednn.sgemm || !whyNoPrimitives(onednn).empty())
    return ChainLayout::None;
  // oneDNN 2's AVX-512 kernels (brgconv, brdgmm_dw) run channels last; ResNet-18 at batch 8 and
  // 1 ran 5-20% faster than with nChw16c, MobileNetV2 1.5-2x (depthwise and pointwise kernels
  // pick NHWC). Its AVX2 ones are for nChw8c: MobileNetV2 1.7x faster than on NHWC there.
  return onednn.isa.find("avx512") != std::string::npos ? ChainLayout::ChannelsLast
                                                        : ChainLayout::Blocks8;
}

void runConv(const ConvPlan &s, float *out, const float *x, const float *weight, const float *bias,
             const float *residual, PackedWeights &packed, const ParallelFor &parallel) {
  const Onednn &onednn = processOnednn();
  // A pointwise convolution on NCHW tensors is a GEMM as they lie: oneDNN's convolution would
  // reorder them (2.5x the product, ResNet-50's 1x1 at batch 8) or, asked for NCHW, run 5-30x
  // slower (MobileNetV2's at batch 1).
  bool plainGemm = s.pointwise() && !s.chainedInput && !s.chainedOutput && !s.chainedResidual;
  if (!plainGemm && onednn.sgemm &&
      runConvPrimitive(onednn, s, out, x, weight, bias, residual, packed))
    return;
  runConvWithoutPrimitive(s, out, x, weight, bias, residual, parallel);
}

} // namespace sotc::runtime::cpu
