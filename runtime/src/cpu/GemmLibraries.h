//===- GemmLibraries.h - the libraries CPU GEMM steps run on, found at run time -----------===//
//
// float32 GEMMs run on oneDNN where a oneDNN loads (its matmul primitives or dnnl_sgemm:
// OnednnPrimitives.h; it picks its kernels by the CPU's instruction sets, never by its model,
// and is the fastest here on the models' shapes: docs/benchmarks.md#gemm), float64 ones and
// everything under SOTC_CBLAS on CBLAS.
//
//===----------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_CPU_GEMMLIBRARIES_H
#define SOTC_RUNTIME_CPU_GEMMLIBRARIES_H

#include <cblas.h> // the types only: the functions come from dlopen

#include <cstdint>
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
/// bundled OpenBLAS beside the runtime's own library, then in a scipy_openblas32 package one or
/// two folders above it (pip's install beside the sotc wheels), then on the loader's path, then
/// the distribution's libopenblas.so.0.
std::vector<std::string> cblasCandidates();

/// The first of `candidates` that loads. An OpenBLAS that picked a generic kernel family on a
/// CPU with AVX2 is loaded again told the CPU's family (Haswell, SkylakeX), unless the user
/// chose one with OPENBLAS_CORETYPE; a generic family that stays is reported as a warning.
Cblas openCblas(const std::vector<std::string> &candidates);

/// oneDNN's row-major sgemm and what it reports of itself (its matmul primitives:
/// OnednnPrimitives.h).
struct Onednn {
  void *handle = nullptr; // dlopen's, never closed by the runtime
  int (*sgemm)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
               const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
               int64_t ldc) = nullptr; // dnnl_status_t: 0 on success
  // OpenMP's, which oneDNN threads with: the calling thread's team size (null where oneDNN
  // runs on another threading runtime)
  void (*setThreads)(int) = nullptr;
  int (*maxThreads)() = nullptr;
  std::string isa;            // the kernels' instruction set ("avx512_core"), as oneDNN names it
  // "oneDNN 2.6.3 matmul primitives and dnnl_sgemm (file), avx512_core kernels"
  std::string implementation;
  std::string failure;        // why there is none, or ""
};

/// Where the runtime looks for oneDNN (Debian's libdnnl2, which scripts/setup.sh installs, or
/// a later one), unless SOTC_CBLAS routes every GEMM to one CBLAS.
constexpr const char *kOnednnCandidates[] = {"libdnnl.so.3", "libdnnl.so.2"};

/// The first of `candidates` that loads, with a warning where its kernels use no AVX2 on a CPU
/// that has it.
Onednn openOnednn(const std::vector<std::string> &candidates);

} // namespace sotc::runtime::cpu

#endif // SOTC_RUNTIME_CPU_GEMMLIBRARIES_H
