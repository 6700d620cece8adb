#include "runtime/src/cpu/Gemm.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>

namespace sotc::runtime::cpu {
namespace {

template <typename T> void run(const GemmStep &s, T *c, const T *a, const T *b, const T *bias) {
  CBLAS_TRANSPOSE ta = s.transposeA ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE tb = s.transposeB ? CblasTrans : CblasNoTrans;
  int64_t count = 1;
  for (int64_t size : s.batch)
    count *= size;
  std::vector<int64_t> index(s.batch.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offA = 0, offB = 0, offC = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      offA += index[d] * s.strideA[d];
      offB += index[d] * s.strideB[d];
      offC += index[d] * s.strideC[d];
    }
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
    for (size_t d = index.size(); d-- > 0;) { // next batch index, last dimension fastest
      if (++index[d] < s.batch[d])
        break;
      index[d] = 0;
    }
  }
}

} // namespace

std::string validate(const GemmStep &s) {
  if (s.m < 1 || s.n < 1 || s.k < 1)
    return "m, n and k must be positive";
  // Row-major: a row of op(X) as stored must fit its leading dimension.
  if (s.lda < std::max<int64_t>(1, s.transposeA ? s.m : s.k) ||
      s.ldb < std::max<int64_t>(1, s.transposeB ? s.k : s.n) || s.ldc < s.n)
    return "a leading dimension is smaller than its matrix's row";
  if (s.strideA.size() != s.batch.size() || s.strideB.size() != s.batch.size() ||
      s.strideC.size() != s.batch.size())
    return "every operand needs one stride per batch dimension";
  for (size_t d = 0; d < s.batch.size(); ++d)
    if (s.batch[d] < 1 || s.strideA[d] < 0 || s.strideB[d] < 0 || s.strideC[d] < 1)
      return "batch sizes and C's strides must be positive, A's and B's not negative";
  return "";
}

void runGemm(const GemmStep &s, void *c, const void *a, const void *b, const void *bias) {
  if (s.type == GemmStep::Type::F32)
    run(s, static_cast<float *>(c), static_cast<const float *>(a), static_cast<const float *>(b),
        static_cast<const float *>(bias));
  else
    run(s, static_cast<double *>(c), static_cast<const double *>(a), static_cast<const double *>(b),
        static_cast<const double *>(bias));
}

} // namespace sotc::runtime::cpu
