//===- Gemm.h - GEMM steps of a CPU plan, through oneDNN or CBLAS (GemmLibraries.h) -------===//
#ifndef SOTC_RUNTIME_CPU_GEMM_H
#define SOTC_RUNTIME_CPU_GEMM_H

#include "runtime/src/GemmPlan.h"
#include "runtime/src/cpu/GemmLibraries.h"

#include <cmath>
#include <functional>
#include <string>

namespace sotc::runtime::cpu {

/// Why the CPU's GEMM libraries cannot run a (validated) plan, or "": float32 and float64, with
/// any activation (a matmul primitive's post-op, an eltwise primitive after dnnl_sgemm, else a
/// loop over C).
std::string unsupported(const GemmPlan &plan);

/// What GEMM steps run on: with oneDNN, "float32: <oneDNN's version, file and kernels>;
/// float64: <CBLAS>", else the CBLAS alone: the library (its file) and, for OpenBLAS, its
/// build and the kernel family it runs on this CPU, with a note where that was corrected and a
/// warning where it is a generic family on a CPU that has AVX2 (several times slower); or
/// "none: why" where no CBLAS loads. Loads the libraries (once per process); never throws.
std::string gemmImplementation();

/// The process's oneDNN, for float32 (opened on first use), unless SOTC_CBLAS names the
/// library for every GEMM: then its `failure` says so.
const Onednn &processOnednn();

/// A step's activation of one value, as the operator library decomposes it (where no oneDNN
/// primitive applies it).
template <typename T> T activated(GemmPlan::Activation activation, T x) {
  switch (activation) {
  case GemmPlan::Activation::Relu:
    return x > 0 ? x : T(0);
  case GemmPlan::Activation::GeluTanh:
    return T(0.5) * x * (T(1) + std::tanh(T(0.7978845608028654) * (x + T(0.044715) * x * x * x)));
  case GemmPlan::Activation::GeluErf:
    return T(0.5) * x * (T(1) + std::erf(x * T(0.7071067811865476)));
  case GemmPlan::Activation::None:
    break;
  }
  return x;
}

/// Splits [0, n) over `threads` threads (the CPU backend's pool): body(begin, end) per chunk.
struct ParallelFor {
  unsigned threads = 1;
  std::function<void(int64_t n, const std::function<void(int64_t, int64_t)> &body)> run;
};

/// Runs a validated plan that unsupported() accepts: float32 on oneDNN where one loads (E8003
/// where it refuses the step), otherwise, and float64 always, on CBLAS (E8003 where none
/// loads), then its activation. On oneDNN, a float32 step of at least 8 MFLOP that
/// prefersMatmulPrimitive() takes is one matmul primitive (OnednnPrimitives.h); otherwise it
/// runs on dnnl_sgemm: under 8 MFLOP on the calling thread alone, a batch of at least
/// `parallel.threads` GEMMs side by side on `parallel`, one thread each, and a smaller batch
/// of GEMMs under 8 MFLOP each on the calling thread.
void runGemm(const GemmPlan &plan, void *c, const void *a, const void *b, const void *bias,
             const ParallelFor &parallel = {});

} // namespace sotc::runtime::cpu

#endif // SOTC_RUNTIME_CPU_GEMM_H
