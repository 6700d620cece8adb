#include "runtime/src/cpu/Gemv.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

namespace sotc::runtime::cpu {
namespace {

/// Columns per unit of work the pool splits (a multiple of the widest vector).
constexpr int64_t kBlock = 64;
/// B's bytes from which a product is split over the pool: below, waking the workers costs
/// about what they save.
constexpr int64_t kParallelBytes = int64_t{2} << 20;

/// y[j] = sum_k a[k] B[j, k] for j in [begin, end): B [N, K] (a linear layer's weight), rows
/// `ldb` apart.
template <typename Dot>
void rowsOfB(const float *a, const float *b, int64_t ldb, int64_t k, float *y, int64_t begin,
             int64_t end, Dot dot) {
  for (int64_t j = begin; j < end; ++j)
    y[j] = dot(a, b + j * ldb, k);
}

float dotScalar(const float *a, const float *row, int64_t k) {
  float s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= k; i += 8)
    for (int l = 0; l < 8; ++l)
      s[l] += a[i + l] * row[i + l];
  float sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; i < k; ++i)
    sum += a[i] * row[i];
  return sum;
}

__attribute__((target("avx2,fma"))) float dotAvx2(const float *a, const float *row, int64_t k) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(),
         s3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= k; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(row + i), _mm256_loadu_ps(a + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(row + i + 8), _mm256_loadu_ps(a + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(row + i + 16), _mm256_loadu_ps(a + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(row + i + 24), _mm256_loadu_ps(a + i + 24), s3);
  }
  for (; i + 8 <= k; i += 8)
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(row + i), _mm256_loadu_ps(a + i), s0);
  __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  float sum = _mm_cvtss_f32(h);
  for (; i < k; ++i)
    sum += a[i] * row[i];
  return sum;
}

/// y[0..n) = sum_k a[k] B[k, :] over B's rows [first, last): B [K, N] (GPT-2's Conv1D
/// weight), rows `ldb` apart, four at a time, so that a thread streams one contiguous range of B.
template <typename Axpy4>
void rowsOfKB(const float *a, const float *b, int64_t ldb, int64_t first, int64_t last, int64_t n,
              float *y, Axpy4 axpy4) {
  std::fill(y, y + n, 0.0f);
  int64_t r = first;
  for (; r + 4 <= last; r += 4)
    axpy4(y, n, a + r, b + r * ldb, ldb);
  for (; r < last; ++r)
    for (int64_t j = 0; j < n; ++j)
      y[j] += a[r] * b[r * ldb + j];
}

void axpy4Scalar(float *acc, int64_t width, const float *a, const float *b, int64_t ldb) {
  for (int64_t j = 0; j < width; ++j)
    acc[j] += a[0] * b[j] + a[1] * b[ldb + j] + a[2] * b[2 * ldb + j] + a[3] * b[3 * ldb + j];
}

__attribute__((target("avx2,fma"))) void axpy4Avx2(float *acc, int64_t width, const float *a,
                                                   const float *b, int64_t ldb) {
  __m256 a0 = _mm256_set1_ps(a[0]), a1 = _mm256_set1_ps(a[1]), a2 = _mm256_set1_ps(a[2]),
         a3 = _mm256_set1_ps(a[3]);
  int64_t j = 0;
  for (; j + 8 <= width; j += 8) {
    __m256 s = _mm256_loadu_ps(acc + j);
    s = _mm256_fmadd_ps(a0, _mm256_loadu_ps(b + j), s);
    s = _mm256_fmadd_ps(a1, _mm256_loadu_ps(b + ldb + j), s);
    s = _mm256_fmadd_ps(a2, _mm256_loadu_ps(b + 2 * ldb + j), s);
    s = _mm256_fmadd_ps(a3, _mm256_loadu_ps(b + 3 * ldb + j), s);
    _mm256_storeu_ps(acc + j, s);
  }
  for (; j < width; ++j)
    acc[j] += a[0] * b[j] + a[1] * b[ldb + j] + a[2] * b[2 * ldb + j] + a[3] * b[3 * ldb + j];
}

bool hasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

} // namespace

bool runGemv(const GemmPlan &s, float *c, const float *a, const float *b, const float *bias,
             const ParallelFor &parallel) {
  if (s.type != GemmPlan::Type::F32 || s.m != 1 || s.batchCount() != 1 || s.n <= 0 || s.k <= 0)
    return false;
  int64_t offA, offB, offC;
  s.offsets(0, offA, offB, offC);
  a += offA, b += offB, c += offC;
  std::vector<float> gathered; // a column of a transposed A: its k values, contiguous
  if (s.transposeA && s.lda != 1) {
    gathered.resize(static_cast<size_t>(s.k));
    for (int64_t i = 0; i < s.k; ++i)
      gathered[static_cast<size_t>(i)] = a[i * s.lda];
    a = gathered.data();
  }
  bool avx2 = hasAvx2();
  bool split = parallel.run && parallel.threads > 1 &&
               s.n * s.k * static_cast<int64_t>(sizeof(float)) >= kParallelBytes;
  // C = act(alpha y + beta C), C first the bias where the step has one, over [begin, end).
  auto epilogue = [&](const float *y, int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      float base = bias ? bias[j] : c[j];
      float v = static_cast<float>(s.alpha) * y[j] +
                (s.beta != 0 ? static_cast<float>(s.beta) * base : 0.0f);
      c[j] = activated(s.activation, v);
    }
  };
  if (s.transposeB) { // B [N, K]: each thread the dot products of its blocks of C's columns
    auto body = [&](int64_t first, int64_t last) {
      int64_t begin = first * kBlock, end = std::min(s.n, last * kBlock);
      thread_local std::vector<float> y; // the thread's, reused
      y.resize(static_cast<size_t>(end - begin));
      avx2 ? rowsOfB(a, b, s.ldb, s.k, y.data() - begin, begin, end, dotAvx2)
           : rowsOfB(a, b, s.ldb, s.k, y.data() - begin, begin, end, dotScalar);
      epilogue(y.data() - begin, begin, end);
    };
    int64_t blocks = (s.n + kBlock - 1) / kBlock;
    split &&blocks > 1 ? parallel.run(blocks, body) : body(0, blocks);
    return true;
  }
  // B [K, N]: each part of B's rows its partial sums of all of C, added up after.
  int64_t parts = split ? std::min<int64_t>(parallel.threads, s.k / 4) : 1;
  parts = std::max<int64_t>(parts, 1);
  std::vector<float> partial(static_cast<size_t>(parts * s.n));
  auto body = [&](int64_t first, int64_t last) {
    for (int64_t p = first; p < last; ++p) {
      int64_t lo = s.k * p / parts / 4 * 4,
              hi = p + 1 == parts ? s.k : s.k * (p + 1) / parts / 4 * 4;
      float *y = partial.data() + p * s.n;
      avx2 ? rowsOfKB(a, b, s.ldb, lo, hi, s.n, y, axpy4Avx2)
           : rowsOfKB(a, b, s.ldb, lo, hi, s.n, y, axpy4Scalar);
    }
  };
  parts > 1 ? parallel.run(parts, body) : body(0, 1);
  for (int64_t p = 1; p < parts; ++p)
    for (int64_t j = 0; j < s.n; ++j)
      partial[static_cast<size_t>(j)] += partial[static_cast<size_t>(p * s.n + j)];
  epilogue(partial.data(), 0, s.n);
  return true;
}

} // namespace sotc::runtime::cpu
