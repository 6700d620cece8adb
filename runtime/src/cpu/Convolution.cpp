#include "runtime/src/cpu/Convolution.h"

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

int convolutionChannelBlock() {
  const Onednn &onednn = processOnednn();
  if (!onednn.sgemm || !whyNoPrimitives(onednn).empty())
    return 0;
  return onednn.isa.find("avx512") != std::string::npos ? 16 : 8;
}

void runConv(const ConvPlan &s, float *out, const float *x, const float *weight, const float *bias,
             const float *residual, PackedWeights &packed, const ParallelFor &parallel) {
  const Onednn &onednn = processOnednn();
  if (onednn.sgemm && runConvPrimitive(onednn, s, out, x, weight, bias, residual, packed))
    return;
  if (!s.blockedInput && !s.blockedResidual && !s.blockedOutput)
    return runConvOnGemm(s, out, x, weight, bias, residual, parallel);
  // Tensors in blocked layouts (which only a backend with oneDNN's primitives sets up), for a
  // shape oneDNN has no fast kernel for: NCHW copies around the GEMM path.
  thread_local std::vector<float> plainX, plainResidual, plainOut;
  std::array<int64_t, 4> in{s.n, s.c, s.h, s.w}, result{s.n, s.oc, s.oh, s.ow};
  if (s.blockedInput) {
    plainX.resize(static_cast<size_t>(s.inputElements()));
    relayout(onednn, in, s.block, false, x, plainX.data());
    x = plainX.data();
  }
  if (residual && s.blockedResidual) {
    plainResidual.resize(static_cast<size_t>(s.outputElements()));
    relayout(onednn, result, s.block, false, residual, plainResidual.data());
    residual = plainResidual.data();
  }
  float *to = out;
  if (s.blockedOutput) {
    plainOut.resize(static_cast<size_t>(s.outputElements()));
    to = plainOut.data();
  }
  runConvOnGemm(s, to, x, weight, bias, residual, parallel);
  if (s.blockedOutput)
    relayout(onednn, result, s.block, true, to, out);
}

} // namespace sotc::runtime::cpu
