#include "FmaPeak.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace sotc::bench {
namespace {

// Twelve independent accumulators: more than FMA latency x ports (4 x 2) on current x86
// cores, so the loop is bound by FMA throughput alone. Each round: 12 FMAs per iteration.
constexpr int kChains = 12;
constexpr long kIterations = 1 << 16;

// The same loop for each vector width, spelled out: a function without the target attribute
// between them would keep the FMAs from being inlined.
#define SOTC_FMA_ROUNDS(V, FMA, SET)                                                              \
  V acc[kChains];                                                                                  \
  for (int i = 0; i < kChains; ++i)                                                                \
    acc[i] = SET(1.0f + i * 1e-3f);                                                                \
  V scale = SET(0.999999f), shift = SET(1e-7f);                                                    \
  for (long r = 0; r < rounds * kIterations; ++r)                                                  \
    _Pragma("GCC unroll 16") /* the accumulators in registers */                                   \
    for (int i = 0; i < kChains; ++i)                                                              \
      acc[i] = FMA(acc[i], scale, shift);                                                          \
  float sum = 0;                                                                                   \
  for (int i = 0; i < kChains; ++i) {                                                              \
    float lane;                                                                                    \
    std::memcpy(&lane, &acc[i], sizeof lane); /* a result keeps every chain alive */               \
    sum += lane;                                                                                   \
  }                                                                                                \
  return sum;

__attribute__((target("avx2,fma"))) float avx2Rounds(long rounds) {
  SOTC_FMA_ROUNDS(__m256, _mm256_fmadd_ps, _mm256_set1_ps)
}
__attribute__((target("avx512f"))) float avx512Rounds(long rounds) {
  SOTC_FMA_ROUNDS(__m512, _mm512_fmadd_ps, _mm512_set1_ps)
}
#undef SOTC_FMA_ROUNDS

} // namespace

FmaPeak measureFmaPeak(unsigned threads, double seconds) {
  FmaPeak peak;
  peak.threads = std::max(threads, 1u);
  bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
    return peak;
  peak.isa = avx512 ? "AVX-512" : "AVX2";
  int lanes = avx512 ? 16 : 8;
  auto rounds = [&](long count) { return avx512 ? avx512Rounds(count) : avx2Rounds(count); };
  // Rounds per thread for about `seconds / 4`, from one timed round.
  auto start = std::chrono::steady_clock::now();
  volatile float sink = rounds(1);
  double once = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long count = std::max(1L, static_cast<long>(seconds / 4 / std::max(once, 1e-6)));
  for (int trial = 0; trial < 4; ++trial) {
    std::atomic<unsigned> ready{0};
    std::vector<std::thread> workers;
    std::vector<double> elapsed(peak.threads);
    for (unsigned t = 0; t < peak.threads; ++t)
      workers.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < peak.threads) {
        }
        auto begin = std::chrono::steady_clock::now();
        sink = rounds(count);
        auto end = std::chrono::steady_clock::now();
        elapsed[t] = std::chrono::duration<double>(end - begin).count();
      });
    for (std::thread &worker : workers)
      worker.join();
    double slowest = *std::max_element(elapsed.begin(), elapsed.end());
    double flops = 2.0 * lanes * kChains * kIterations * count * peak.threads;
    peak.gflops = std::max(peak.gflops, flops / slowest / 1e9);
  }
  (void)sink;
  return peak;
}

} // namespace sotc::bench
