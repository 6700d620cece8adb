//===- Convolution.h - Convolution steps of a CPU plan, through oneDNN or a GEMM ----------===//
#ifndef SOTC_RUNTIME_CPU_CONVOLUTION_H
#define SOTC_RUNTIME_CPU_CONVOLUTION_H

#include "runtime/src/ConvPlan.h"
#include "runtime/src/cpu/Gemm.h"
#include "runtime/src/cpu/OnednnPrimitives.h"

namespace sotc::runtime::cpu {

/// Runs a validated float32 convolution step: one oneDNN convolution primitive where the
/// process's oneDNN has one for it (OnednnPrimitives.h; the weight packed into `packed` when
/// the plan says it is constant), else, and for a pointwise one on NCHW tensors always,
/// runConvWithoutPrimitive.
/// `bias` and `residual` are null where the step has none.
void runConv(const ConvPlan &plan, float *out, const float *x, const float *weight,
             const float *bias, const float *residual, PackedWeights &packed,
             const ParallelFor &parallel = {});

/// The layout convolution steps pass tensors to each other in (ConvPlan::chain): channels last
/// where oneDNN runs AVX-512 kernels, else channels in blocks of 8; None where the process's
/// oneDNN has no primitives (then every tensor stays NCHW).
ChainLayout convolutionChainLayout();

/// runConv's path without oneDNN's convolution, on NCHW tensors (copies of chained ones): for
/// one group each image's columns (im2col; a pointwise one's x as it is) times the weight as
/// GEMMs (runGemm on `parallel`), for several a direct loop over the output planes; then the
/// bias, the residual and the activation in one pass.
void runConvWithoutPrimitive(const ConvPlan &plan, float *out, const float *x, const float *weight,
                             const float *bias, const float *residual,
                             const ParallelFor &parallel = {});

} // namespace sotc::runtime::cpu

#endif // SOTC_RUNTIME_CPU_CONVOLUTION_H
