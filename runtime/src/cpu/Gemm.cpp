#include "runtime/src/cpu/Gemm.h"

#include <cblas.h>

#include <cstring>

namespace sotc::runtime::cpu {
namespace {

template <typename T> void run(const GemmPlan &s, T *c, const T *a, const T *b, const T *bias) {
  CBLAS_TRANSPOSE ta = s.transposeA ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE tb = s.transposeB ? CblasTrans : CblasNoTrans;
  for (int64_t i = 0, count = s.batchCount(); i < count; ++i) {
    int64_t offA, offB, offC;
    s.offsets(i, offA, offB, offC);
    T *out = c + offC;
    if (bias)
      for (int64_t row = 0; row < s.m; ++row)
        std::memcpy(out + row * s.ldc, bias, sizeof(T) * s.n);
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemm(CblasRowMajor, ta, tb, s.m, s.n, s.k, static_cast<float>(s.alpha), a + offA,
                  s.lda, b + offB, s.ldb, static_cast<float>(s.beta), out, s.ldc);
    else
      cblas_dgemm(CblasRowMajor, ta, tb, s.m, s.n, s.k, s.alpha, a + offA, s.lda, b + offB, s.ldb,
                  s.beta, out, s.ldc);
  }
}

} // namespace

std::string unsupported(const GemmPlan &s) {
  if (s.type != GemmPlan::Type::F32 && s.type != GemmPlan::Type::F64)
    return "a CPU GEMM step of float16 or bfloat16 (float32 and float64 are run)";
  if (s.activation != GemmPlan::Activation::None)
    return "a CPU GEMM step with an activation epilogue (cuBLASLt's; CUDA only)";
  return "";
}

void runGemm(const GemmPlan &s, void *c, const void *a, const void *b, const void *bias) {
  if (s.type == GemmPlan::Type::F32)
    run(s, static_cast<float *>(c), static_cast<const float *>(a), static_cast<const float *>(b),
        static_cast<const float *>(bias));
  else
    run(s, static_cast<double *>(c), static_cast<const double *>(a), static_cast<const double *>(b),
        static_cast<const double *>(bias));
}

} // namespace sotc::runtime::cpu
