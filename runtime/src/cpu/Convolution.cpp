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

/// Below about 64 KiB of output a pass runs faster on the calling thread than woken workers
/// take.
constexpr int64_t kSerialOutput = 16384;

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
  if (!parallel.run || s.outputElements() < kSerialOutput)
    return rows(0, s.n * s.oc);
  parallel.run(s.n * s.oc, rows);
}

/// `to[q] += sum over the KW taps j of taps[j] * row[q*SW + j*dw - left]` for the output
/// columns [lo, hi), whose taps all read inside the row: the taps unrolled, so the loop over q
/// vectorizes with one store per output.
template <int KW, int SW>
inline void accumulateInterior(float *to, const float *row, const float *taps, int64_t lo,
                               int64_t hi, int64_t dw, int64_t left) {
  for (int64_t q = lo; q < hi; ++q) {
    float sum = to[q];
    for (int j = 0; j < KW; ++j)
      sum += taps[j] * row[q * SW + j * dw - left];
    to[q] = sum;
  }
}

/// One output row p of a grouped convolution: `to` (ow values) = the sum over the group's
/// `perGroup` input planes (`image`, h x w each) and the taps (`taps`: the filter, [perGroup,
/// kh, kw]) of weight * input, the padding read as zeros. Compiled for AVX-512 and AVX2 too
/// (picked at load): the runtime itself targets any x86-64.
__attribute__((target_clones("avx512f", "avx2", "default"))) void
convolveRow(const ConvPlan &s, int64_t p, const float *image, int64_t perGroup, const float *taps,
            float *to) {
  std::fill(to, to + s.ow, 0.0f);
  int64_t sw = s.strides[1], dw = s.dilations[1], left = s.pads[2];
  // The columns whose every tap reads inside the row: q*sw >= left and
  // q*sw + (kw - 1)*dw - left < w.
  int64_t lo = std::min((left + sw - 1) / sw, s.ow);
  int64_t span = s.w + left - (s.kw - 1) * dw;
  int64_t hi = std::max(lo, std::min(span <= 0 ? 0 : (span + sw - 1) / sw, s.ow));
  for (int64_t c = 0; c < perGroup; ++c)
    for (int64_t i = 0; i < s.kh; ++i) {
      int64_t h = p * s.strides[0] + i * s.dilations[0] - s.pads[0];
      if (h < 0 || h >= s.h)
        continue;
      const float *row = image + (c * s.h + h) * s.w;
      const float *rowTaps = taps + (c * s.kh + i) * s.kw;
      auto checked = [&](int64_t q) {
        float sum = to[q];
        for (int64_t j = 0; j < s.kw; ++j)
          if (int64_t v = q * sw + j * dw - left; v >= 0 && v < s.w)
            sum += rowTaps[j] * row[v];
        to[q] = sum;
      };
      for (int64_t q = 0; q < lo; ++q)
        checked(q);
      for (int64_t q = hi; q < s.ow; ++q)
        checked(q);
      // MobileNet's and EfficientNet's filters: 3x3 and 5x5, stride 1 or 2.
      if (s.kw == 3 && sw == 1)
        accumulateInterior<3, 1>(to, row, rowTaps, lo, hi, dw, left);
      else if (s.kw == 3 && sw == 2)
        accumulateInterior<3, 2>(to, row, rowTaps, lo, hi, dw, left);
      else if (s.kw == 5 && sw == 1)
        accumulateInterior<5, 1>(to, row, rowTaps, lo, hi, dw, left);
      else if (s.kw == 5 && sw == 2)
        accumulateInterior<5, 2>(to, row, rowTaps, lo, hi, dw, left);
      else
        for (int64_t q = lo; q < hi; ++q)
          checked(q);
    }
}

/// A convolution of several groups as a direct loop, one output plane (image, channel) at a
/// time, a row at a time (no columns: a depthwise one reads C/groups = 1 input plane a plane).
void convolveGroups(const ConvPlan &s, float *out, const float *x, const float *weight,
                    const ParallelFor &parallel) {
  int64_t perGroup = s.c / s.groups, filters = s.oc / s.groups, pixels = s.oh * s.ow;
  auto planes = [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      int64_t n = plane / s.oc, o = plane % s.oc, group = o / filters;
      const float *image = x + (n * s.c + group * perGroup) * s.h * s.w;
      const float *taps = weight + o * perGroup * s.kh * s.kw;
      for (int64_t p = 0; p < s.oh; ++p)
        convolveRow(s, p, image, perGroup, taps, out + plane * pixels + p * s.ow);
    }
  };
  if (!parallel.run || s.outputElements() < kSerialOutput)
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
