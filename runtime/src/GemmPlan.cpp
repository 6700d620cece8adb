#include "runtime/src/GemmPlan.h"

#include <algorithm>

namespace sotc::runtime {

int64_t GemmPlan::batchCount() const {
  int64_t count = 1;
  for (int64_t size : batch)
    count *= size;
  return count;
}

void GemmPlan::offsets(int64_t index, int64_t &a, int64_t &b, int64_t &c) const {
  a = b = c = 0;
  for (size_t d = batch.size(); d-- > 0;) {
    int64_t i = index % batch[d];
    index /= batch[d];
    a += i * strideA[d];
    b += i * strideB[d];
    c += i * strideC[d];
  }
}

std::string validate(const GemmPlan &s) {
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

} // namespace sotc::runtime
