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
/// chunks: the CPU kernels' [begin, end) ABI. Each thread claims the next chunk until none is
/// left, so a worker that wakes late (tens of microseconds on a VM) leaves its share to the
/// others instead of delaying the step; a worker spins a little after its last chunk before
/// it sleeps, so that a run's next step (microseconds later) finds it awake. Any number of
/// threads may call parallelFor at once: one caller's range is split over the workers, and a
/// caller that finds them busy runs its whole range itself (no queue, so no caller waits on
/// another's kernel and none can deadlock).
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
  void work();
  /// Runs the chunks of job `generation` that no thread has claimed yet.
  void runChunks(uint64_t generation);

  std::vector<std::thread> workers_;
  std::mutex busy_; // held by the caller whose range the workers run
  std::mutex mutex_; // guards sleeping on wake_ (the job itself is in atomics)
  std::condition_variable wake_;
  // The job, written before generation_ and claim_ publish it.
  std::atomic<const std::function<void(int64_t, int64_t)> *> body_{nullptr};
  std::atomic<int64_t> n_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> claim_{0}; // the job's generation, chunk count and next chunk
  std::atomic<int> active_{0};     // threads inside runChunks
  std::atomic<int> sleeping_{0};   // workers waiting on wake_
  std::atomic<bool> stop_{false};
};

} // namespace sotc::runtime::cpu

#endif // SOTC_RUNTIME_CPU_THREADPOOL_H
