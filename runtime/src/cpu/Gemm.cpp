#include "runtime/src/cpu/Gemm.h"

#include "runtime/src/Error.h"
#include "runtime/src/cpu/GemmLibraries.h"
#include "runtime/src/cpu/Gemv.h"
#include "runtime/src/cpu/OnednnPrimitives.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <type_traits>
#include <vector>

namespace sotc::runtime::cpu {
namespace {

/// The process's GEMM libraries, opened when the first GEMM step runs, so that the runtime has
/// no link-time dependency on them and artifacts without GEMM steps run where there is none.
const Cblas &processCblas() {
  static const Cblas blas = openCblas(cblasCandidates());
  return blas;
}

/// C starts as the bias, repeated in every row (then beta = 1 adds the product to it).
template <typename T> void fillBias(const GemmPlan &s, T *out, const T *bias) {
  if (bias)
    for (int64_t row = 0; row < s.m; ++row)
      std::memcpy(out + row * s.ldc, bias, sizeof(T) * s.n);
}

/// The step's activation applied to C in place, element by element (where no oneDNN primitive
/// does it: float64, CBLAS alone).
template <typename T> void activateScalar(const GemmPlan &s, T *c) {
  auto f = [&](T x) { return activated(s.activation, x); };
  if (s.activation == GemmPlan::Activation::None)
    return;
  for (int64_t i = 0, count = s.batchCount(); i < count; ++i) {
    int64_t offA, offB, offC;
    s.offsets(i, offA, offB, offC);
    for (int64_t row = 0; row < s.m; ++row)
      for (T *x = c + offC + row * s.ldc, *end = x + s.n; x < end; ++x)
        *x = f(*x);
  }
}

/// The work below which a GEMM step runs on the calling thread alone (about 40 us on one
/// core): waking OpenMP's threads costs more (the GPT's last-token head, 8 x 256 x 1024, ran at
/// 60 GFLOP/s on two threads, 3x slower than on one).
constexpr double kOneThreadFlops = 8e6;

void runOnednnItem(const Onednn &onednn, const GemmPlan &s, int64_t item, float *c, const float *a,
                   const float *b, const float *bias) {
  int64_t offA, offB, offC;
  s.offsets(item, offA, offB, offC);
  fillBias(s, c + offC, bias);
  if (onednn.sgemm(s.transposeA ? 'T' : 'N', s.transposeB ? 'T' : 'N', s.m, s.n, s.k,
                   static_cast<float>(s.alpha), a + offA, s.lda, b + offB, s.ldb,
                   static_cast<float>(s.beta), c + offC, s.ldc) != 0)
    throw Error(ErrorCode::CannotRunHere, "oneDNN's dnnl_sgemm refused a GEMM step (m " +
                                              std::to_string(s.m) + ", n " + std::to_string(s.n) +
                                              ", k " + std::to_string(s.k) + ")");
}

void runOnednn(const Onednn &onednn, const GemmPlan &s, float *c, const float *a, const float *b,
               const float *bias, const ParallelFor &parallel) {
  int64_t count = s.batchCount();
  bool teams = onednn.setThreads && onednn.maxThreads;
  // OpenMP's team size is the calling thread's own: a thread that runs GEMMs on one thread
  // gives back what it had afterwards (its later large GEMMs use every thread again).
  auto onOneThread = [&](const std::function<void()> &work) {
    int before = onednn.maxThreads();
    onednn.setThreads(1);
    try {
      work();
    } catch (...) {
      onednn.setThreads(before);
      throw;
    }
    onednn.setThreads(before);
  };
  auto all = [&] {
    for (int64_t i = 0; i < count; ++i)
      runOnednnItem(onednn, s, i, c, a, b, bias);
  };
  double flops = 2.0 * s.m * s.n * s.k; // of one GEMM of the batch
  if (flops * count >= kOneThreadFlops && prefersMatmulPrimitive(s) &&
      runMatmulPrimitive(onednn, s, c, a, b, bias))
    return; // the activation included
  // After dnnl_sgemm: the activation as an eltwise primitive over C, on the same team.
  auto activate = [&] {
    if (s.activation != GemmPlan::Activation::None && !runActivationPrimitive(onednn, s, c))
      activateScalar(s, c);
  };
  if (teams && flops * count >= kOneThreadFlops && parallel.run && parallel.threads > 1 &&
      count >= parallel.threads) {
    // Each thread takes the next GEMM until none is left: a worker that wakes late (tens of
    // microseconds on these VMs) leaves its share to the others instead of delaying the step.
    std::atomic<int64_t> next{0};
    std::exception_ptr failure;
    std::mutex failureMutex;
    parallel.run(parallel.threads, [&](int64_t, int64_t) {
      try {
        onOneThread([&] {
          for (int64_t i; (i = next.fetch_add(1)) < count;)
            runOnednnItem(onednn, s, i, c, a, b, bias);
        });
      } catch (...) { // thrown on after every thread is done (the pool's threads cannot)
        std::lock_guard<std::mutex> lock(failureMutex);
        if (!failure)
          failure = std::current_exception();
        next = count;
      }
    });
    if (failure)
      std::rethrow_exception(failure);
    return activate();
  }
  // Small GEMMs (the whole step, or each of a batch not run side by side) on the calling
  // thread, one after another: waking OpenMP's threads for each costs more (64 attention heads
  // of 0.5 MFLOP with the pool at one thread: 3.9 ms so, 0.43 ms on one thread).
  if (teams && flops < kOneThreadFlops)
    return onOneThread([&] {
      all();
      activate();
    });
  all();
  activate();
}

template <typename T>
void runCblas(const GemmPlan &s, T *c, const T *a, const T *b, const T *bias) {
  const Cblas &blas = processCblas();
  if (!blas.failure.empty())
    throw Error(ErrorCode::CannotRunHere, blas.failure);
  CBLAS_TRANSPOSE ta = s.transposeA ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE tb = s.transposeB ? CblasTrans : CblasNoTrans;
  for (int64_t i = 0, count = s.batchCount(); i < count; ++i) {
    int64_t offA, offB, offC;
    s.offsets(i, offA, offB, offC);
    T *out = c + offC;
    fillBias(s, out, bias);
    if constexpr (std::is_same_v<T, float>)
      blas.sgemm(CblasRowMajor, ta, tb, s.m, s.n, s.k, static_cast<float>(s.alpha), a + offA, s.lda,
                 b + offB, s.ldb, static_cast<float>(s.beta), out, s.ldc);
    else
      blas.dgemm(CblasRowMajor, ta, tb, s.m, s.n, s.k, s.alpha, a + offA, s.lda, b + offB, s.ldb,
                 s.beta, out, s.ldc);
  }
  activateScalar(s, c);
}

/// bfloat16 is float32's upper half: widened exactly, rounded to the nearest even (NaN kept).
float widenBf16(uint16_t half) {
  uint32_t bits = static_cast<uint32_t>(half) << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

float asFloat(uint16_t bf16) { return widenBf16(bf16); }
float asFloat(float x) { return x; }

uint16_t roundBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40); // a quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

/// A step of bfloat16 operands where oneDNN has no fast primitive for it (an AVX2 CPU, a left
/// operand shared by the batch, C accumulated into): each product's operands widened to dense
/// float32 matrices, multiplied as a float32 step, its C rounded back where C is bfloat16 (one
/// rounding, as the primitive's) or written as it is (a float32 C and bias: `Out` float).
template <typename Out>
void runWidenedBf16(const GemmPlan &s, Out *c, const uint16_t *a, const uint16_t *b,
                    const Out *bias, const ParallelFor &parallel) {

  GemmPlan one = s;
  one.type = one.operands = GemmPlan::Type::F32;
  one.batch.clear(), one.strideA.clear(), one.strideB.clear(), one.strideC.clear();
  one.powers.clear();
  // op(A) is m x k and op(B) k x n, stored as the plan stores them but dense.
  int64_t aRows = s.transposeA ? s.k : s.m, aCols = s.transposeA ? s.m : s.k;
  int64_t bRows = s.transposeB ? s.n : s.k, bCols = s.transposeB ? s.k : s.n;
  one.lda = aCols, one.ldb = bCols, one.ldc = s.n;
  std::vector<float> wa(aRows * aCols), wb(bRows * bCols), wc(s.m * s.n), wbias;
  if (bias)
    for (int64_t j = 0; j < s.n; ++j)
      wbias.push_back(asFloat(bias[j]));
  auto widen = [](std::vector<float> &to, const auto *from, int64_t rows, int64_t cols,
                  int64_t ld) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j)
        to[r * cols + j] = asFloat(from[r * ld + j]);
  };
  for (int64_t i = 0, count = s.batchCount(); i < count; ++i) {
    int64_t offA, offB, offC;
    s.offsets(i, offA, offB, offC);
    widen(wa, a + offA, aRows, aCols, s.lda);
    widen(wb, b + offB, bRows, bCols, s.ldb);
    if (s.beta != 0 && !bias)
      widen(wc, c + offC, s.m, s.n, s.ldc);
    runGemm(one, wc.data(), wa.data(), wb.data(), bias ? wbias.data() : nullptr, parallel);
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t j = 0; j < s.n; ++j) {
        float x = wc[r * s.n + j];
        if constexpr (std::is_same_v<Out, float>)
          c[offC + r * s.ldc + j] = x;
        else
          c[offC + r * s.ldc + j] = roundBf16(x);
      }
  }
}

} // namespace

const Onednn &processOnednn() {
  static const Onednn onednn = [] {
    if (std::getenv("SOTC_CBLAS")) {
      Onednn none;
      none.failure = "SOTC_CBLAS is set";
      return none;
    }
    return openOnednn({std::begin(kOnednnCandidates), std::end(kOnednnCandidates)});
  }();
  return onednn;
}

std::string gemmImplementation() {
  const Cblas &blas = processCblas();
  std::string cblas = blas.failure.empty() ? blas.implementation : "none: " + blas.failure;
  const Onednn &onednn = processOnednn();
  if (!onednn.sgemm)
    return cblas;
  return "float32: " + onednn.implementation + "; float64: " + cblas;
}

std::string unsupported(const GemmPlan &s) {
  if (s.type == GemmPlan::Type::F16)
    return "a CPU GEMM step of float16 (bfloat16, float32 and float64 are run)";
  return "";
}

void runGemm(const GemmPlan &s, void *c, const void *a, const void *b, const void *bias,
             const ParallelFor &parallel) {
  if (s.type == GemmPlan::Type::BF16 || s.bf16Operands()) {
    // C overwritten (the bias its primitive's, alpha 1 then): one matmul primitive.
    bool overwrites = s.bias ? s.beta == 1 && s.alpha == 1 : s.beta == 0;
    if (overwrites && processOnednn().sgemm &&
        runMatmulPrimitive(processOnednn(), s, c, a, b, bias))
      return;
    auto *ah = static_cast<const uint16_t *>(a), *bh = static_cast<const uint16_t *>(b);
    if (s.bf16Operands())
      return runWidenedBf16(s, static_cast<float *>(c), ah, bh, static_cast<const float *>(bias),
                            parallel);
    return runWidenedBf16(s, static_cast<uint16_t *>(c), ah, bh,
                          static_cast<const uint16_t *>(bias), parallel);
  }
  auto *cf = static_cast<float *>(c);
  auto *af = static_cast<const float *>(a), *bf = static_cast<const float *>(b);
  if (s.type == GemmPlan::Type::F32 &&
      runGemv(s, cf, af, bf, static_cast<const float *>(bias), parallel))
    return;
  if (s.type == GemmPlan::Type::F32 && processOnednn().sgemm)
    runOnednn(processOnednn(), s, cf, af, bf, static_cast<const float *>(bias), parallel);
  else if (s.type == GemmPlan::Type::F32)
    runCblas(s, cf, af, bf, static_cast<const float *>(bias));
  else
    runCblas(s, static_cast<double *>(c), static_cast<const double *>(a),
             static_cast<const double *>(b), static_cast<const double *>(bias));
}

} // namespace sotc::runtime::cpu
