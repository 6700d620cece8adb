//===- OpenmpTeam.h - sotc's kernels on oneDNN's OpenMP threads ---------------------------===//
//
// An artifact with GEMM or convolution steps runs them on oneDNN's OpenMP threads. Its kernels
// ran on sotc's own pool (ThreadPool.h): two sets of threads on the same cores, each asleep
// or spinning while the other works, so every step paid a wake-up (tens of microseconds on a
// VM) or lost a core to the other set's spin. The team runs a kernel's range on the same
// OpenMP threads as the library steps around it (libgomp's GOMP_parallel, looked up in the
// OpenMP runtime oneDNN loaded), each thread claiming chunks until none is left.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_CPU_OPENMPTEAM_H
#define SOTC_RUNTIME_CPU_OPENMPTEAM_H

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace sotc::runtime::cpu {

class OpenmpTeam {
public:
  /// The team of `threads` threads of the libgomp that `onednnHandle` (a dlopen handle of
  /// oneDNN) depends on; null where it has none (oneDNN built with another threading).
  static std::unique_ptr<OpenmpTeam> of(void *onednnHandle, unsigned threads);

  /// Calls `body(begin, end)` over chunks that cover [0, n); returns when all have run. An
  /// exception a chunk throws is thrown here, after every thread is done. Any number of
  /// threads may call it at once: one caller's range is split over the team, and a caller
  /// that finds it busy runs its whole range itself.
  void parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &body);
  unsigned size() const { return threads_; }

private:
  using Parallel = void (*)(void (*)(void *), void *, unsigned, unsigned);
  OpenmpTeam(Parallel parallel, unsigned threads) : parallel_(parallel), threads_(threads) {}

  Parallel parallel_;
  unsigned threads_;
  std::mutex busy_; // held by the caller whose range the team runs
};

} // namespace sotc::runtime::cpu

#endif // SOTC_RUNTIME_CPU_OPENMPTEAM_H
