//===- Gemm.h - GEMM steps of a CPU plan, through CBLAS (OpenBLAS) ------------------------===//
#ifndef SOTC_RUNTIME_CPU_GEMM_H
#define SOTC_RUNTIME_CPU_GEMM_H

#include "runtime/src/GemmPlan.h"

namespace sotc::runtime::cpu {

/// Why CBLAS cannot run a (validated) plan, or "": float32 and float64, no activation.
std::string unsupported(const GemmPlan &plan);

/// What GEMM steps run on: the CBLAS library and, for OpenBLAS, its build and the kernel
/// family it picked for this CPU, with a warning when that is a generic family on a CPU that
/// has AVX2 (several times slower); or why no CBLAS loads. Loads CBLAS; never throws.
std::string gemmImplementation();

/// Runs a validated plan that CBLAS supports. `bias`: n elements, or null.
void runGemm(const GemmPlan &plan, void *c, const void *a, const void *b, const void *bias);

} // namespace sotc::runtime::cpu

#endif // SOTC_RUNTIME_CPU_GEMM_H
