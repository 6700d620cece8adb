//===- ThreadPool.h - A fixed pool that splits a kernel's grid ----------------------------===//
#ifndef SOTC_RUNTIME_CPU_THREADPOOL_H
#define SOTC_RUNTIME_CPU_THREADPOOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sotc::runtime::cpu {

/// `threads` workers (the caller is one of them) that run a range [0, n) in contiguous
/// chunks, one chunk per worker: the CPU kernels' [begin, end) ABI. Any number of threads may
/// call parallelFor at once: one caller's range is split over the workers, and a caller that
/// finds them busy runs its whole range itself (no queue, so no caller waits on another's
/// kernel and none can deadlock).
class ThreadPool {
public:
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  /// Calls `body(begin, end)` over chunks that cover [0, n); returns when all have run.
  void parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &body);
  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

private:
  void work(unsigned index);

  std::vector<std::thread> workers_;
  std::mutex busy_; // held by the caller whose range the workers run
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t, int64_t)> *body_ = nullptr;
  int64_t n_ = 0;
  uint64_t generation_ = 0;
  unsigned pending_ = 0;
  bool stop_ = false;
};

} // namespace sotc::runtime::cpu

#endif // SOTC_RUNTIME_CPU_THREADPOOL_H
