// The machine's memory limit, measured the way STREAM does: copy (c = a) and triad
// (a = b + s * c) over arrays far larger than the caches, on 1..N threads pinned one per core,
// with ordinary stores and with non-temporal (streaming) stores, which skip the read of the
// destination line that an ordinary store costs. Prints one JSON object: GB/s per kernel,
// store kind and thread count (bytes counted as STREAM does: every array read or written once).
//
//   stream [THREADS] [MiB per array]     (defaults: every core, 256)
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

void copyRange(float *c, const float *a, size_t begin, size_t end, bool streaming) {
  size_t i = begin;
  if (streaming)
    for (; i + 8 <= end; i += 8)
      _mm256_stream_ps(c + i, _mm256_load_ps(a + i));
  for (; i < end; ++i)
    c[i] = a[i];
}

void triadRange(float *a, const float *b, const float *c, size_t begin, size_t end,
                bool streaming) {
  const __m256 s = _mm256_set1_ps(3.0f);
  size_t i = begin;
  if (streaming)
    for (; i + 8 <= end; i += 8)
      _mm256_stream_ps(a + i, _mm256_fmadd_ps(s, _mm256_load_ps(c + i), _mm256_load_ps(b + i)));
  for (; i < end; ++i)
    a[i] = b[i] + 3.0f * c[i];
}

/// Best of `repeats` runs of `body(begin, end)` split over `threads` pinned threads, in s.
double best(unsigned threads, size_t n, int repeats,
            const std::function<void(size_t, size_t)> &body) {
  double fastest = 1e30;
  for (int r = 0; r < repeats; ++r) {
    std::vector<std::thread> pool;
    auto start = std::chrono::steady_clock::now();
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(t, &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
        size_t chunk = (n / threads + 7) / 8 * 8;
        body(std::min(n, t * chunk), std::min(n, (t + 1) * chunk));
      });
    for (std::thread &t : pool)
      t.join();
    fastest = std::min(
        fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return fastest;
}

} // namespace

int main(int argc, char **argv) {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  unsigned maxThreads = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : cores;
  size_t n = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256) * (1 << 20) / sizeof(float);
  auto array = [&] { return static_cast<float *>(std::aligned_alloc(64, n * sizeof(float))); };
  float *a = array(), *b = array(), *c = array();
  for (size_t i = 0; i < n; ++i) // touch every page first: no page faults in the timings
    a[i] = 1, b[i] = 2, c[i] = 0;
  std::printf("{\"array_bytes\": %zu, \"results\": [", n * sizeof(float));
  const char *sep = "";
  for (unsigned threads = 1; threads <= maxThreads; ++threads)
    for (bool streaming : {false, true}) {
      double copy = best(threads, n, 5, [&](size_t i, size_t j) { copyRange(c, a, i, j, streaming); });
      double triad =
          best(threads, n, 5, [&](size_t i, size_t j) { triadRange(a, b, c, i, j, streaming); });
      std::printf("%s\n  {\"threads\": %u, \"stores\": \"%s\", \"copy_gbs\": %.2f, "
                  "\"triad_gbs\": %.2f}",
                  sep, threads, streaming ? "non-temporal" : "ordinary",
                  2.0 * n * sizeof(float) / copy / 1e9, 3.0 * n * sizeof(float) / triad / 1e9);
      sep = ",";
    }
  std::printf("\n]}\n");
  std::free(a), std::free(b), std::free(c);
  return 0;
}
