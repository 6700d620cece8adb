//===- Gemm.h - GEMM steps of a CPU plan, through CBLAS (OpenBLAS) ------------------------===//
//
// A manifest's `gemm` step (docs/manifest.md) as the CPU runtime runs it: row-major, per
// batch index C = alpha * op(A) * op(B) + beta * C, where C first holds the bias row in every
// row when the step has a bias epilogue.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_CPU_GEMM_H
#define SOTC_RUNTIME_CPU_GEMM_H

#include <cstdint>
#include <string>
#include <vector>

namespace sotc::runtime::cpu {

struct GemmStep {
  enum class Type { F32, F64 } type = Type::F32;
  int64_t m = 0, n = 0, k = 0;
  bool transposeA = false, transposeB = false;
  int64_t lda = 0, ldb = 0, ldc = 0;
  double alpha = 1, beta = 0;
  /// Batch sizes and, per operand, the element stride of each batch dimension (0: broadcast).
  std::vector<int64_t> batch, strideA, strideB, strideC;
};

/// Checks a step read from a manifest (dimensions, leading dimensions, strides); an empty
/// string when it can run, else why not.
std::string validate(const GemmStep &step);

/// Runs a validated step. `bias` (n elements, or null) is the epilogue's bias row.
void runGemm(const GemmStep &step, void *c, const void *a, const void *b, const void *bias);

} // namespace sotc::runtime::cpu

#endif // SOTC_RUNTIME_CPU_GEMM_H
