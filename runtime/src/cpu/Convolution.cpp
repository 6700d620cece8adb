#include "runtime/src/cpu/Convolution.h"

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

} // namespace

void runConvOnGemm(const ConvPlan &s, float *out, const float *x, const float *weight,
                   const float *bias, const float *residual, const ParallelFor &parallel) {
  int64_t taps = s.c * s.kh * s.kw, pixels = s.oh * s.ow;
  GemmPlan g;
  g.m = s.oc, g.n = pixels, g.k = taps;
  g.lda = taps, g.ldb = pixels, g.ldc = pixels;
  thread_local std::vector<float> columns;
  columns.resize(static_cast<size_t>(taps * pixels));
  for (int64_t n = 0; n < s.n; ++n) {
    im2col(s, x + n * s.c * s.h * s.w, columns.data());
    runGemm(g, out + n * s.oc * pixels, weight, columns.data(), nullptr, parallel);
  }
  for (int64_t i = 0, count = s.outputElements(); i < count; ++i) {
    float v = out[i];
    if (bias)
      v += bias[(i / pixels) % s.oc];
    if (residual)
      v += residual[i];
    out[i] = activate(s.activation, v);
  }
}

void runConv(const ConvPlan &s, float *out, const float *x, const float *weight, const float *bias,
             const float *residual, PackedWeights &packed, const ParallelFor &parallel) {
  if (processOnednn().sgemm &&
      runConvPrimitive(processOnednn(), s, out, x, weight, bias, residual, packed))
    return;
  runConvOnGemm(s, out, x, weight, bias, residual, parallel);
}

} // namespace sotc::runtime::cpu
