// The CPU runtime's GEMM steps against a naive triple loop over the same step description.
#include "runtime/src/cpu/Gemm.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using sotc::runtime::GemmPlan;
using sotc::runtime::validate;
using sotc::runtime::cpu::runGemm;

namespace {

/// What a step means, element by element: C[b][i][j] = alpha * sum_p A(i, p) B(p, j)
/// + beta * C0, with C0 the bias or the old C.
template <typename T>
std::vector<T> naive(const GemmPlan &s, const std::vector<T> &a, const std::vector<T> &b,
                     std::vector<T> c, const T *bias) {
  int64_t count = 1;
  for (int64_t size : s.batch)
    count *= size;
  for (int64_t i = 0; i < count; ++i) {
    int64_t offA = 0, offB = 0, offC = 0, rest = i;
    for (size_t d = s.batch.size(); d-- > 0;) {
      int64_t at = rest % s.batch[d];
      rest /= s.batch[d];
      offA += at * s.strideA[d];
      offB += at * s.strideB[d];
      offC += at * s.strideC[d];
    }
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t col = 0; col < s.n; ++col) {
        double sum = 0;
        for (int64_t p = 0; p < s.k; ++p) {
          T x = s.transposeA ? a[offA + p * s.lda + r] : a[offA + r * s.lda + p];
          T y = s.transposeB ? b[offB + col * s.ldb + p] : b[offB + p * s.ldb + col];
          sum += static_cast<double>(x) * y;
        }
        T &out = c[offC + r * s.ldc + col];
        T start = bias ? bias[col] : out;
        out = static_cast<T>(s.alpha * sum + (s.beta != 0 ? s.beta * start : 0));
      }
  }
  return c;
}

template <typename T> std::vector<T> random(size_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> v(n);
  for (T &x : v)
    x = static_cast<T>(d(rng));
  return v;
}

template <typename T>
void check(const GemmPlan &s, size_t sizeA, size_t sizeB, size_t sizeC, bool withBias) {
  REQUIRE(validate(s).empty());
  std::mt19937 rng(7);
  std::vector<T> a = random<T>(sizeA, rng), b = random<T>(sizeB, rng), c(sizeC, T(0.5)),
                 bias = random<T>(s.n, rng);
  std::vector<T> want = naive(s, a, b, c, withBias ? bias.data() : nullptr);
  runGemm(s, c.data(), a.data(), b.data(), withBias ? bias.data() : nullptr);
  double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  for (size_t i = 0; i < c.size(); ++i) {
    INFO("element " << i);
    CHECK(std::fabs(c[i] - want[i]) <= tolerance * (1 + std::fabs(want[i])) * s.k);
  }
}

} // namespace

TEST_CASE("a plain f32 GEMM, C overwritten", "[runtime][gemm]") {
  GemmPlan s;
  s.m = 5, s.n = 7, s.k = 3, s.lda = 3, s.ldb = 7, s.ldc = 7;
  check<float>(s, 15, 21, 35, false);
}

TEST_CASE("transposed operands", "[runtime][gemm]") {
  GemmPlan s;
  s.m = 4, s.n = 6, s.k = 9, s.transposeA = true, s.transposeB = true;
  s.lda = 4, s.ldb = 9, s.ldc = 6; // A stored [k, m], B stored [n, k]
  check<float>(s, 36, 54, 24, false);
}

TEST_CASE("a bias epilogue: C starts as the bias rows, beta = 1", "[runtime][gemm]") {
  GemmPlan s;
  s.m = 3, s.n = 8, s.k = 5, s.lda = 5, s.ldb = 8, s.ldc = 8, s.beta = 1;
  check<float>(s, 15, 40, 24, true);
}

TEST_CASE("a broadcast batch: A walks [2, 3], B only the last dimension", "[runtime][gemm]") {
  GemmPlan s;
  s.type = GemmPlan::Type::F64;
  s.m = 2, s.n = 3, s.k = 4, s.lda = 4, s.ldb = 3, s.ldc = 3;
  s.batch = {2, 3};
  s.strideA = {3 * 8, 8}; // A [2, 3, 2, 4]
  s.strideB = {0, 12};    // B [3, 4, 3]
  s.strideC = {3 * 6, 6};
  check<double>(s, 48, 36, 36, false);
}

TEST_CASE("validate refuses steps that would read out of bounds", "[runtime][gemm]") {
  GemmPlan s;
  s.m = 2, s.n = 2, s.k = 2, s.lda = 2, s.ldb = 2, s.ldc = 2;
  CHECK(validate(s).empty());
  GemmPlan small = s;
  small.lda = 1;
  CHECK(validate(small) == "a leading dimension is smaller than its matrix's row");
  GemmPlan strides = s;
  strides.batch = {3};
  CHECK(validate(strides) == "every operand needs one stride per batch dimension");
  GemmPlan empty = s;
  empty.k = 0;
  CHECK(validate(empty) == "m, n and k must be positive");
}
