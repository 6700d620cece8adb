//===- Gemm.h - GEMM steps of a CPU plan, through CBLAS (OpenBLAS) ------------------------===//
#ifndef SOTC_RUNTIME_CPU_GEMM_H
#define SOTC_RUNTIME_CPU_GEMM_H

#include "runtime/src/GemmPlan.h"

#include <cblas.h> // the types only: the functions come from dlopen

#include <string>
#include <vector>

namespace sotc::runtime::cpu {

/// The OpenBLAS that scripts/setup.sh installs (PyPI's scipy-openblas32: a current OpenBLAS
/// that picks its kernels for the CPU at load, including CPUs newer than the distribution's).
constexpr const char *kBundledOpenblas = "libscipy_openblas.so";

/// A CBLAS library's GEMM entry points and what it reports of itself.
struct Cblas {
  void *handle = nullptr; // dlopen's, never closed by the runtime
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  std::string family;         // OpenBLAS's kernel family ("SkylakeX"), "" for another CBLAS
  std::string implementation; // what gemmImplementation() reports
  std::string failure;        // why there is none, or ""
};

/// Whether an OpenBLAS kernel family ("Prescott") is one of its generic ones, which use no AVX2.
bool genericFamily(const std::string &family);

/// The OpenBLAS kernel family this CPU's instructions allow: SkylakeX with AVX-512, Haswell
/// with AVX2 and FMA, else "" (the generic families are then the right ones).
std::string familyForThisCpu();

/// Where the runtime looks for CBLAS, in order: SOTC_CBLAS alone where it is set; else the
/// bundled OpenBLAS beside the runtime's own library, then on the loader's path, then the
/// distribution's libopenblas.so.0.
std::vector<std::string> cblasCandidates();

/// The first of `candidates` that loads. An OpenBLAS that picked a generic kernel family on a
/// CPU with AVX2 is loaded again told the CPU's family (Haswell, SkylakeX), unless the user
/// chose one with OPENBLAS_CORETYPE; a generic family that stays is reported as a warning.
Cblas openCblas(const std::vector<std::string> &candidates);

/// Why CBLAS cannot run a (validated) plan, or "": float32 and float64, no activation.
std::string unsupported(const GemmPlan &plan);

/// What GEMM steps run on: the CBLAS library (its file) and, for OpenBLAS, its build and the
/// kernel family it runs on this CPU, with a note where that was corrected and a warning where
/// it is a generic family on a CPU that has AVX2 (several times slower); or why no CBLAS loads.
/// Loads CBLAS (once per process); never throws.
std::string gemmImplementation();

/// Runs a validated plan that CBLAS supports. `bias`: n elements, or null.
void runGemm(const GemmPlan &plan, void *c, const void *a, const void *b, const void *bias);

} // namespace sotc::runtime::cpu

#endif // SOTC_RUNTIME_CPU_GEMM_H
