//===- Gemv.h - GEMM steps of one row: a decode step's projections ------------------------===//
//
// A language model's decode step multiplies one token's row by every weight matrix: m = 1,
// where a GEMM library's blocking buys nothing and the step is a stream over B at the
// machine's memory bandwidth. dnnl_sgemm runs such a step on one thread (under its 8 MFLOP
// threshold) at about half the bandwidth of two; here B's columns are split over the CPU
// backend's pool and each thread streams its rows of B once (AVX2 and FMA where the CPU has
// them).
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_CPU_GEMV_H
#define SOTC_RUNTIME_CPU_GEMV_H

#include "runtime/src/GemmPlan.h"
#include "runtime/src/cpu/Gemm.h"

namespace sotc::runtime::cpu {

/// Runs `plan` when it is one float32 product of one row (m = 1, no batch): C = act(alpha *
/// a op(B) + beta * C), C first the bias where the step has one; false (nothing done) for any
/// other plan.
bool runGemv(const GemmPlan &plan, float *c, const float *a, const float *b, const float *bias,
             const ParallelFor &parallel);

} // namespace sotc::runtime::cpu

#endif // SOTC_RUNTIME_CPU_GEMV_H
