// The CPU runtime's GEMM steps against a naive triple loop over the same step description.
#include "runtime/src/cpu/Gemm.h"
#include "runtime/src/cpu/GemmLibraries.h"
#include "runtime/src/cpu/Gemv.h"
#include "runtime/src/cpu/OnednnPrimitives.h"

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

using sotc::runtime::GemmPlan;
using sotc::runtime::validate;
using sotc::runtime::cpu::Cblas;
using sotc::runtime::cpu::cblasCandidates;
using sotc::runtime::cpu::familyForThisCpu;
using sotc::runtime::cpu::gemmImplementation;
using sotc::runtime::cpu::genericFamily;
using sotc::runtime::cpu::kOnednnCandidates;
using sotc::runtime::cpu::Onednn;
using sotc::runtime::cpu::openCblas;
using sotc::runtime::cpu::openOnednn;
using sotc::runtime::cpu::ParallelFor;
using sotc::runtime::cpu::prefersMatmulPrimitive;
using sotc::runtime::cpu::runActivationPrimitive;
using sotc::runtime::cpu::runGemm;
using sotc::runtime::cpu::runMatmulPrimitive;

namespace {

/// The step's activation of x, in double.
double activated(GemmPlan::Activation activation, double x) {
  switch (activation) {
  case GemmPlan::Activation::Relu:
    return std::max(x, 0.0);
  case GemmPlan::Activation::GeluTanh:
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  case GemmPlan::Activation::GeluErf:
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case GemmPlan::Activation::None:
    break;
  }
  return x;
}

/// What a step means, element by element: C[b][i][j] = act(alpha * sum_p A(i, p) B(p, j)
/// + beta * C0), with C0 the bias or the old C.
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
        out = static_cast<T>(
            activated(s.activation, s.alpha * sum + (s.beta != 0 ? s.beta * start : 0)));
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

namespace {
// The stand-ins, from the test's runfiles (runtime/BUILD.bazel builds them).
const std::string kFake = "runtime/unittests/libfake_openblas.so";
const std::string kFakeScipy = "runtime/unittests/libfake_openblas_scipy.so";

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// Opens `candidates` as the runtime would and closes the library again, so that the next
/// case loads the stand-in afresh (it reads OPENBLAS_CORETYPE when it loads).
Cblas openAndClose(const std::vector<std::string> &candidates) {
  Cblas blas = openCblas(candidates);
  if (blas.handle)
    dlclose(blas.handle);
  return blas;
}
} // namespace

TEST_CASE("an OpenBLAS on generic kernels is loaded again told the CPU's family",
          "[runtime][gemm][cblas]") {
  REQUIRE(std::getenv("OPENBLAS_CORETYPE") == nullptr);
  Cblas blas = openAndClose({kFake});
  REQUIRE(blas.failure.empty());
  CHECK(blas.sgemm != nullptr);
  if (familyForThisCpu().empty()) { // a CPU without AVX2: the generic kernels are right
    CHECK(blas.family == "Prescott");
    CHECK_FALSE(contains(blas.implementation, "warning"));
  } else {
    CHECK(blas.family == familyForThisCpu());
    CHECK(contains(blas.implementation, familyForThisCpu() + " kernels (corrected from its "
                                                             "generic Prescott kernels)"));
  }
  CHECK(contains(blas.implementation, "OpenBLAS 0.0 fake ("));
  CHECK(std::getenv("OPENBLAS_CORETYPE") == nullptr); // set for the load only
}

TEST_CASE("a kernel family the user chose stays, with a warning when it is generic",
          "[runtime][gemm][cblas]") {
  if (familyForThisCpu().empty()) {
    WARN("this CPU has no AVX2: generic kernels are no slow path here");
    return;
  }
  setenv("OPENBLAS_CORETYPE", "Prescott", 1);
  Cblas blas = openAndClose({kFake});
  unsetenv("OPENBLAS_CORETYPE");
  CHECK(blas.family == "Prescott");
  CHECK(contains(blas.implementation, "Prescott kernels; warning: generic kernels on a CPU with "
                                      "AVX2, several times slower (OPENBLAS_CORETYPE chose them)"));
}

TEST_CASE("scipy-openblas32's prefixed names are found", "[runtime][gemm][cblas]") {
  Cblas blas = openAndClose({kFakeScipy});
  REQUIRE(blas.failure.empty());
  CHECK(blas.sgemm != nullptr);
  CHECK(blas.dgemm != nullptr);
  CHECK(contains(blas.implementation, "libfake_openblas_scipy.so"));
}

TEST_CASE("CBLAS is looked for beside the runtime, then where pip puts scipy-openblas32",
          "[runtime][gemm][cblas]") {
  REQUIRE(std::getenv("SOTC_CBLAS") == nullptr);
  Dl_info self{};
  REQUIRE(dladdr(reinterpret_cast<void *>(&cblasCandidates), &self));
  std::string here = self.dli_fname; // this test: the runtime is linked into it
  std::string dir = here.substr(0, here.rfind('/') + 1);
  std::string one = dir.substr(0, dir.rfind('/', dir.size() - 2) + 1);
  std::string two = one.substr(0, one.rfind('/', one.size() - 2) + 1);
  CHECK(cblasCandidates() ==
        std::vector<std::string>{dir + "libscipy_openblas.so",
                                 one + "scipy_openblas32/lib/libscipy_openblas.so",
                                 two + "scipy_openblas32/lib/libscipy_openblas.so",
                                 "libscipy_openblas.so", "libopenblas.so.0"});
  setenv("SOTC_CBLAS", "/opt/my/libcblas.so", 1);
  CHECK(cblasCandidates() == std::vector<std::string>{"/opt/my/libcblas.so"});
  unsetenv("SOTC_CBLAS");
}

TEST_CASE("the first candidate that loads is taken; none loading says why",
          "[runtime][gemm][cblas]") {
  Cblas blas = openAndClose({"/nonexistent/libnone.so", kFakeScipy, kFake});
  REQUIRE(blas.failure.empty());
  CHECK(contains(blas.implementation, "libfake_openblas_scipy.so"));
  Cblas none = openAndClose({"/nonexistent/libnone.so", "libsotc-no-such-blas.so"});
  CHECK(none.sgemm == nullptr);
  CHECK(contains(none.failure, "a GEMM step needs CBLAS and none loads (/nonexistent/libnone.so"));
  CHECK(contains(none.failure, "libsotc-no-such-blas.so"));
}

TEST_CASE("this machine's GEMM steps run on no generic kernels unless a warning says so",
          "[runtime][gemm][cblas]") {
  std::string implementation = gemmImplementation();
  INFO(implementation);
  REQUIRE_FALSE(contains(implementation, "none:"));
  // Each library's description ends "<family or instruction set> kernels".
  bool slow = false;
  for (size_t end = implementation.find(" kernels"); end != std::string::npos;
       end = implementation.find(" kernels", end + 1)) {
    size_t begin = implementation.rfind(' ', end - 1) + 1;
    std::string kernels = implementation.substr(begin, end - begin);
    slow |= genericFamily(kernels) || kernels == "sse41" || kernels == "avx";
  }
  CHECK(contains(implementation, "warning") == (slow && !familyForThisCpu().empty()));
}

TEST_CASE("oneDNN's kernels use the CPU's AVX2 and AVX-512", "[runtime][gemm][onednn]") {
  Onednn onednn = openOnednn({std::begin(kOnednnCandidates), std::end(kOnednnCandidates)});
  if (!onednn.sgemm) {
    WARN("no oneDNN here (" << onednn.failure << "): float32 GEMMs run on CBLAS");
    return;
  }
  INFO(onednn.implementation);
  CHECK(onednn.setThreads != nullptr); // Debian's is an OpenMP build
  if (familyForThisCpu() == "SkylakeX")
    CHECK(contains(onednn.isa, "avx512_core"));
  else if (familyForThisCpu() == "Haswell")
    CHECK(contains(onednn.isa, "avx2"));
  CHECK_FALSE(contains(onednn.implementation, "warning"));
}

namespace {
/// Runs a batch of 9 float32 GEMMs m x k x n (one A for the batch, as a convolution's weights;
/// a bias) through a ParallelFor that says it has `threads` threads and runs two; checks the
/// results and returns the chunks it ran.
int batchOnTwoThreads(int64_t m, int64_t k, int64_t n, unsigned threads = 2) {
  GemmPlan s;
  s.m = m, s.n = n, s.k = k, s.lda = k, s.ldb = n, s.ldc = n, s.beta = 1;
  s.batch = {9};
  s.strideA = {0};
  s.strideB = {k * n};
  s.strideC = {m * n};
  REQUIRE(validate(s).empty());
  std::mt19937 rng(3);
  std::vector<float> a = random<float>(m * k, rng), b = random<float>(9 * k * n, rng),
                     bias = random<float>(n, rng), c(9 * m * n, 0.5f);
  std::vector<float> want = naive(s, a, b, c, bias.data());
  std::atomic<int> chunks{0};
  ParallelFor parallel{threads, [&](int64_t count, const std::function<void(int64_t, int64_t)> &body) {
                         std::thread other([&] { body(count / 2, count); });
                         body(0, count / 2);
                         other.join();
                         chunks += 2;
                       }};
  runGemm(s, c.data(), a.data(), b.data(), bias.data(), parallel);
  int wrong = 0;
  for (size_t i = 0; i < c.size(); ++i)
    wrong += !(std::fabs(c[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])) * s.k);
  CHECK(wrong == 0);
  return chunks;
}
} // namespace

TEST_CASE("a float32 batch runs its GEMMs side by side, one thread each",
          "[runtime][gemm][onednn]") {
  bool onednn = contains(gemmImplementation(), "oneDNN");
  // 9 x 64 x 128 x 64: 9.4 MFLOP, above the one-thread limit; CBLAS runs a batch one GEMM at
  // a time on its own threads
  CHECK(batchOnTwoThreads(64, 128, 64) == (onednn ? 2 : 0));
  // 9 x 6 x 7 x 5: a few microseconds, on the calling thread alone
  CHECK(batchOnTwoThreads(6, 7, 5) == 0);
  // fewer GEMMs than threads, each small: one after another on the calling thread
  CHECK(batchOnTwoThreads(64, 128, 64, 16) == 0);
}

namespace {
/// The attention scores of 2 x 3 heads: [2, 3, m, k] x [2, 3, n, k]^T, C [2, 3, m, n] with rows
/// of ldc (past n where ldc > n).
GemmPlan attentionScores(int64_t m, int64_t k, int64_t n, int64_t ldc) {
  GemmPlan s;
  s.m = m, s.n = n, s.k = k, s.transposeB = true, s.lda = k, s.ldb = k, s.ldc = ldc;
  s.batch = {2, 3};
  s.strideA = {3 * m * k, m * k};
  s.strideB = {3 * n * k, n * k};
  s.strideC = {3 * m * ldc, m * ldc};
  return s;
}

/// Runs `s` as a matmul primitive of the oneDNN the runtime loads and checks it against the
/// naive loop; false where that oneDNN has no primitive for it.
bool primitiveMatches(const GemmPlan &s, size_t sizeA, size_t sizeB, size_t sizeC, bool withBias) {
  REQUIRE(validate(s).empty());
  Onednn onednn = openOnednn({std::begin(kOnednnCandidates), std::end(kOnednnCandidates)});
  if (!onednn.handle)
    return false;
  std::mt19937 rng(11);
  std::vector<float> a = random<float>(sizeA, rng), b = random<float>(sizeB, rng), c(sizeC, 0.5f),
                     bias = random<float>(s.n, rng);
  std::vector<float> want = naive(s, a, b, c, withBias ? bias.data() : nullptr);
  if (!runMatmulPrimitive(onednn, s, c.data(), a.data(), b.data(),
                          withBias ? bias.data() : nullptr))
    return false;
  int wrong = 0;
  for (size_t i = 0; i < c.size(); ++i)
    wrong += !(std::fabs(c[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])) * s.k);
  CHECK(wrong == 0); // the padding past n in each row of C included: untouched
  return true;
}

/// Whether the oneDNN here has matmul primitives (oneDNN 2, as scripts/setup.sh installs).
bool havePrimitives() {
  if (contains(gemmImplementation(), "matmul primitives"))
    return true;
  WARN("no oneDNN 2 here (" << gemmImplementation() << "): steps run on dnnl_sgemm or CBLAS");
  return false;
}
} // namespace

TEST_CASE("the matmul primitive takes batched and medium GEMMs, dnnl_sgemm the rest",
          "[runtime][gemm][onednn]") {
  CHECK(prefersMatmulPrimitive(attentionScores(128, 32, 128, 128)));
  GemmPlan qkv; // 1024 x 256 x 768, a Linear's weights [n, k]
  qkv.m = 1024, qkv.n = 768, qkv.k = 256, qkv.transposeB = true;
  qkv.lda = 256, qkv.ldb = 256, qkv.ldc = 768, qkv.bias = true, qkv.beta = 1;
  CHECK(prefersMatmulPrimitive(qkv));
  GemmPlan scaled = qkv;
  scaled.alpha = 0.125; // with a bias: oneDNN would scale the bias too
  CHECK_FALSE(prefersMatmulPrimitive(scaled));
  scaled.bias = false, scaled.beta = 0;
  CHECK(prefersMatmulPrimitive(scaled));
  GemmPlan accumulate = scaled;
  accumulate.beta = 1; // C's old contents added: no bias to stand for them
  CHECK_FALSE(prefersMatmulPrimitive(accumulate));
  GemmPlan vector = qkv; // a row: dnnl_sgemm's matrix-vector kernels
  vector.m = 8;
  CHECK_FALSE(prefersMatmulPrimitive(vector));
  GemmPlan large = qkv; // 1024 x 768 x 3072: 4.8 GFLOP
  large.k = 768, large.n = 3072, large.lda = 768, large.ldb = 768, large.ldc = 3072;
  CHECK_FALSE(prefersMatmulPrimitive(large));
  GemmPlan filters; // a convolution's: one A for the batch
  filters.m = 64, filters.n = 3136, filters.k = 576, filters.lda = 576, filters.ldb = 3136;
  filters.ldc = 3136, filters.batch = {8}, filters.strideA = {0};
  filters.strideB = {576 * 3136}, filters.strideC = {64 * 3136};
  CHECK_FALSE(prefersMatmulPrimitive(filters));
  GemmPlan doubles = qkv;
  doubles.type = GemmPlan::Type::F64;
  CHECK_FALSE(prefersMatmulPrimitive(doubles));
}

TEST_CASE("matmul primitives compute what the step means", "[runtime][gemm][onednn]") {
  if (!havePrimitives())
    return;
  SECTION("batched attention scores, B transposed, C rows padded") {
    GemmPlan s = attentionScores(24, 16, 20, 23);
    CHECK(primitiveMatches(s, 6 * 24 * 16, 6 * 20 * 16, 6 * 24 * 23, false));
  }
  SECTION("scaled by alpha, then the same shape unscaled (a primitive of its own)") {
    GemmPlan s = attentionScores(24, 16, 20, 20);
    s.alpha = 0.25;
    CHECK(primitiveMatches(s, 6 * 24 * 16, 6 * 20 * 16, 6 * 24 * 20, false));
    s.alpha = 1;
    CHECK(primitiveMatches(s, 6 * 24 * 16, 6 * 20 * 16, 6 * 24 * 20, false));
  }
  SECTION("a bias row, A transposed") {
    GemmPlan s;
    s.m = 40, s.n = 24, s.k = 12, s.transposeA = true, s.lda = 40, s.ldb = 24, s.ldc = 24;
    s.bias = true, s.beta = 1;
    CHECK(primitiveMatches(s, 12 * 40, 12 * 24, 40 * 24, true));
  }
  SECTION("a bias and an activation as the primitive's post-op") {
    for (GemmPlan::Activation activation :
         {GemmPlan::Activation::Relu, GemmPlan::Activation::GeluTanh,
          GemmPlan::Activation::GeluErf}) {
      GemmPlan s;
      s.m = 40, s.n = 24, s.k = 12, s.transposeB = true, s.lda = 12, s.ldb = 12, s.ldc = 24;
      s.bias = true, s.beta = 1, s.activation = activation;
      INFO("activation " << static_cast<int>(activation));
      CHECK(primitiveMatches(s, 40 * 12, 24 * 12, 40 * 24, true));
    }
  }
  SECTION("B shared by the batch (its weights), A batched") {
    GemmPlan s;
    s.m = 32, s.n = 16, s.k = 8, s.lda = 8, s.ldb = 16, s.ldc = 16;
    s.batch = {5}, s.strideA = {32 * 8}, s.strideB = {0}, s.strideC = {32 * 16};
    CHECK(primitiveMatches(s, 5 * 32 * 8, 8 * 16, 5 * 32 * 16, false));
  }
}

TEST_CASE("one matmul primitive runs on several threads at once", "[runtime][gemm][onednn]") {
  if (!havePrimitives())
    return;
  Onednn onednn = openOnednn({std::begin(kOnednnCandidates), std::end(kOnednnCandidates)});
  GemmPlan s = attentionScores(64, 32, 64, 64);
  std::mt19937 rng(5);
  std::vector<float> a = random<float>(6 * 64 * 32, rng), b = random<float>(6 * 64 * 32, rng);
  std::vector<float> want =
      naive(s, a, b, std::vector<float>(6 * 64 * 64), static_cast<const float *>(nullptr));
  std::atomic<int> wrong{0}, ran{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        std::vector<float> c(want.size(), -1.0f);
        ran += runMatmulPrimitive(onednn, s, c.data(), a.data(), b.data(), nullptr);
        for (size_t i = 0; i < c.size(); ++i)
          wrong += !(std::fabs(c[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])) * s.k);
      }
    });
  for (std::thread &caller : callers)
    caller.join();
  CHECK(ran == 80);
  CHECK(wrong == 0);
}

TEST_CASE("a batched float32 step runs as one matmul primitive", "[runtime][gemm][onednn]") {
  if (!havePrimitives())
    return;
  // 6 heads of 128 x 64 x 128: 12.6 MFLOP, above the one-thread limit; a pool that would count
  // its chunks sees none (the primitive threads itself)
  GemmPlan s = attentionScores(128, 64, 128, 128);
  std::mt19937 rng(9);
  std::vector<float> a = random<float>(6 * 128 * 64, rng), b = random<float>(6 * 128 * 64, rng),
                     c(6 * 128 * 128);
  std::vector<float> want = naive(s, a, b, c, static_cast<const float *>(nullptr));
  int chunks = 0;
  ParallelFor parallel{2,
                       [&](int64_t, const std::function<void(int64_t, int64_t)> &) { ++chunks; }};
  runGemm(s, c.data(), a.data(), b.data(), nullptr, parallel);
  CHECK(chunks == 0);
  int wrong = 0;
  for (size_t i = 0; i < c.size(); ++i)
    wrong += !(std::fabs(c[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])) * s.k);
  CHECK(wrong == 0);
}

TEST_CASE("an activation after dnnl_sgemm or CBLAS", "[runtime][gemm]") {
  for (GemmPlan::Activation activation :
       {GemmPlan::Activation::Relu, GemmPlan::Activation::GeluTanh,
        GemmPlan::Activation::GeluErf}) {
    INFO("activation " << static_cast<int>(activation));
    // 8 rows: dnnl_sgemm's, then an eltwise primitive over C (its padded rows included)
    GemmPlan s;
    s.m = 8, s.n = 30, s.k = 16, s.lda = 16, s.ldb = 30, s.ldc = 33, s.bias = true, s.beta = 1;
    s.activation = activation;
    check<float>(s, 8 * 16, 16 * 30, 8 * 33, true);
    s.ldc = 30; // dense: oneDNN's vectorized eltwise kernel
    check<float>(s, 8 * 16, 16 * 30, 8 * 30, true);
    // a batch of float64 GEMMs: CBLAS, then a loop over C
    GemmPlan d;
    d.type = GemmPlan::Type::F64;
    d.m = 5, d.n = 6, d.k = 7, d.lda = 7, d.ldb = 6, d.ldc = 6, d.activation = activation;
    d.batch = {3}, d.strideA = {35}, d.strideB = {0}, d.strideC = {30};
    check<double>(d, 3 * 35, 42, 3 * 30, false);
  }
}

TEST_CASE("an activation over a dense C is an eltwise primitive", "[runtime][gemm][onednn]") {
  if (!havePrimitives())
    return;
  Onednn onednn = openOnednn({std::begin(kOnednnCandidates), std::end(kOnednnCandidates)});
  GemmPlan s;
  s.m = 64, s.n = 48, s.k = 1, s.lda = 1, s.ldb = 48, s.ldc = 48;
  s.activation = GemmPlan::Activation::GeluErf;
  std::mt19937 rng(4);
  std::vector<float> c = random<float>(64 * 48, rng), before = c;
  REQUIRE(runActivationPrimitive(onednn, s, c.data()));
  int wrong = 0;
  for (size_t i = 0; i < c.size(); ++i)
    wrong += !(std::fabs(c[i] - activated(s.activation, before[i])) <= 1e-6);
  CHECK(wrong == 0);
}

TEST_CASE("a step of one row runs as a matrix-vector product, split over the pool",
          "[runtime][gemm]") {
  // B [N, K] (a linear layer's weight) and [K, N] (GPT-2's Conv1D), sizes that leave vector
  // and four-row remainders, large enough (>= 2 MiB of B) to be split over two threads; A a
  // row, or a column of a transposed A; a bias with GELU; alpha and beta on the old C.
  for (bool transposeB : {true, false})
    for (bool transposeA : {false, true})
      for (int64_t n : {1, 67, 1031}) {
        GemmPlan s;
        s.m = 1, s.n = n, s.k = 771, s.transposeA = transposeA, s.transposeB = transposeB;
        s.lda = transposeA ? 3 : s.k, s.ldb = transposeB ? s.k : s.n, s.ldc = s.n;
        bool withBias = n != 67;
        if (withBias)
          s.beta = 1, s.activation = GemmPlan::Activation::GeluTanh;
        else
          s.alpha = 0.5, s.beta = 2;
        REQUIRE(validate(s).empty());
        INFO("transposeB " << transposeB << ", transposeA " << transposeA << ", n " << n);
        std::mt19937 rng(11);
        size_t sizeA = transposeA ? static_cast<size_t>(s.k * 3) : static_cast<size_t>(s.k);
        std::vector<float> a = random<float>(sizeA, rng),
                           b = random<float>(static_cast<size_t>(s.n * s.k), rng),
                           bias = random<float>(static_cast<size_t>(s.n), rng),
                           c(static_cast<size_t>(s.n), 0.5f);
        std::vector<float> want = naive(s, a, b, c, withBias ? bias.data() : nullptr);
        std::atomic<int> split{0};
        ParallelFor parallel{2,
                             [&](int64_t count, const std::function<void(int64_t, int64_t)> &body) {
                               std::thread other([&] { body(count / 2, count); });
                               body(0, count / 2);
                               other.join();
                               ++split;
                             }};
        REQUIRE(sotc::runtime::cpu::runGemv(s, c.data(), a.data(), b.data(),
                                            withBias ? bias.data() : nullptr, parallel));
        CHECK(split == (n == 1031 ? 1 : 0)); // 3 MiB of B: split; the others on one thread
        for (size_t i = 0; i < c.size(); ++i) {
          INFO("element " << i);
          CHECK(std::fabs(c[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])) * s.k);
        }
      }
  GemmPlan batched; // not one row, or a batch of them: left to the GEMM libraries
  batched.m = 1, batched.n = 4, batched.k = 4, batched.lda = 4, batched.ldb = 4, batched.ldc = 4;
  batched.batch = {2}, batched.strideA = {4}, batched.strideB = {16}, batched.strideC = {4};
  float x[32] = {};
  CHECK_FALSE(sotc::runtime::cpu::runGemv(batched, x, x, x, nullptr, {}));
}

namespace {

uint16_t toBf16(float x) { // round to nearest even (no NaN here)
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1)) >> 16);
}

float fromBf16(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

/// A bfloat16 step against the naive product of its operands widened (in double): every
/// element within one bfloat16 rounding (2^-8 relative) of it, plus float32 accumulation.
void checkBf16(const GemmPlan &s, size_t sizeA, size_t sizeB, size_t sizeC, bool withBias) {
  REQUIRE(validate(s).empty());
  std::mt19937 rng(11);
  std::vector<float> a = random<float>(sizeA, rng), b = random<float>(sizeB, rng), c(sizeC, 0.5f),
                     bias = random<float>(s.n, rng);
  std::vector<uint16_t> ha, hb, hc, hbias;
  for (auto [from, to] : {std::pair{&a, &ha}, {&b, &hb}, {&c, &hc}, {&bias, &hbias}})
    for (float &x : *from) {
      to->push_back(toBf16(x));
      x = fromBf16(to->back()); // the reference reads the rounded operands
    }
  GemmPlan wide = s;
  wide.type = GemmPlan::Type::F32;
  std::vector<float> want = naive(wide, a, b, c, withBias ? bias.data() : nullptr);
  runGemm(s, hc.data(), ha.data(), hb.data(), withBias ? hbias.data() : nullptr);
  for (size_t i = 0; i < hc.size(); ++i) {
    INFO("element " << i);
    CHECK(std::fabs(fromBf16(hc[i]) - want[i]) <=
          std::ldexp(1.0, -8) * std::fabs(want[i]) + 1e-5 * s.k);
  }
}

} // namespace

TEST_CASE("bfloat16 steps: float32 accumulation, the product rounded once", "[runtime][gemm]") {
  SECTION("C overwritten (a matmul primitive where oneDNN has bfloat16 kernels)") {
    GemmPlan s;
    s.type = GemmPlan::Type::BF16;
    s.m = 33, s.n = 20, s.k = 24, s.lda = 24, s.ldb = 20, s.ldc = 20;
    checkBf16(s, 33 * 24, 24 * 20, 33 * 20, false);
  }
  SECTION("a bias row and GELU, B transposed") {
    GemmPlan s;
    s.type = GemmPlan::Type::BF16;
    s.m = 40, s.n = 24, s.k = 12, s.transposeB = true, s.lda = 12, s.ldb = 12, s.ldc = 24;
    s.bias = true, s.beta = 1, s.activation = GemmPlan::Activation::GeluTanh;
    checkBf16(s, 40 * 12, 24 * 12, 40 * 24, true);
  }
  SECTION("A shared by the batch, A transposed (oneDNN 2: widened to float32)") {
    GemmPlan s;
    s.type = GemmPlan::Type::BF16;
    s.m = 6, s.n = 5, s.k = 7, s.transposeA = true, s.lda = 6, s.ldb = 5, s.ldc = 5;
    s.batch = {3}, s.strideA = {0}, s.strideB = {7 * 5}, s.strideC = {6 * 5};
    checkBf16(s, 7 * 6, 3 * 7 * 5, 3 * 6 * 5, false);
  }
  SECTION("C accumulated into (beta 1, no bias): widened") {
    GemmPlan s;
    s.type = GemmPlan::Type::BF16;
    s.m = 4, s.n = 9, s.k = 5, s.lda = 5, s.ldb = 9, s.ldc = 9, s.beta = 1;
    checkBf16(s, 4 * 5, 5 * 9, 4 * 9, false);
  }
}

TEST_CASE("the CPU refuses float16 GEMM steps, not bfloat16 ones", "[runtime][gemm]") {
  GemmPlan s;
  s.m = s.n = s.k = s.lda = s.ldb = s.ldc = 2;
  s.type = GemmPlan::Type::BF16;
  CHECK(sotc::runtime::cpu::unsupported(s).empty());
  s.type = GemmPlan::Type::F16;
  CHECK_FALSE(sotc::runtime::cpu::unsupported(s).empty());
}

TEST_CASE("bfloat16 operands with a float32 C and bias (--precision bf16)", "[runtime][gemm]") {
  for (bool sharedA : {false, true}) { // a left operand shared by the batch: widened
    GemmPlan s;
    s.operands = GemmPlan::Type::BF16;
    s.m = 20, s.n = 12, s.k = 16, s.lda = 16, s.ldb = 12, s.ldc = 12;
    s.bias = true, s.beta = 1, s.activation = GemmPlan::Activation::Relu;
    s.batch = {2}, s.strideA = {sharedA ? 0 : 20 * 16}, s.strideB = {16 * 12},
    s.strideC = {20 * 12};
    REQUIRE(s.bf16Operands());
    REQUIRE(validate(s).empty());
    std::mt19937 rng(5);
    std::vector<float> a = random<float>(2 * 20 * 16, rng), b = random<float>(2 * 16 * 12, rng),
                       bias = random<float>(12, rng), c(2 * 20 * 12, 0.5f);
    std::vector<uint16_t> ha, hb;
    for (auto [from, to] : {std::pair{&a, &ha}, {&b, &hb}})
      for (float &x : *from) {
        to->push_back(toBf16(x));
        x = fromBf16(to->back());
      }
    GemmPlan wide = s;
    wide.operands = GemmPlan::Type::F32;
    std::vector<float> want = naive(wide, a, b, c, bias.data());
    runGemm(s, c.data(), ha.data(), hb.data(), bias.data());
    INFO("A shared by the batch: " << sharedA);
    for (size_t i = 0; i < c.size(); ++i) // float32 accumulation of exact products: no rounding
      CHECK(std::fabs(c[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])) * s.k);
  }
}
