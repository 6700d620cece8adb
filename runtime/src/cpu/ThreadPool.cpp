#include "runtime/src/cpu/ThreadPool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace sotc::runtime::cpu {
namespace {
/// How long a worker looks for the next job before it sleeps: a run's steps follow each other
/// within microseconds, and a sleeping worker takes tens of them to wake.
constexpr auto kSpin = std::chrono::microseconds(200);
/// Chunks per thread: enough that a late worker's share is taken by the others in pieces.
constexpr int64_t kChunksPerThread = 4;

/// The claim word: a job's generation (its low 24 bits), its chunk count and its next chunk
/// (20 bits each), read and advanced as one, so that a thread that woke for an earlier job
/// never claims a chunk of another.
constexpr uint64_t kField = (uint64_t{1} << 20) - 1;
uint64_t claimWord(uint64_t generation, int64_t chunks) {
  return (generation & 0xffffff) << 40 | static_cast<uint64_t>(chunks) << 20;
}

void pause() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}
} // namespace

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned i = 1; i < std::max(threads, 1u); ++i)
    workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ThreadPool::runChunks(uint64_t generation) {
  uint64_t v = claim_.load();
  for (;;) {
    int64_t chunks = static_cast<int64_t>(v >> 20 & kField),
            chunk = static_cast<int64_t>(v & kField);
    if (v >> 40 != (generation & 0xffffff) || chunk >= chunks)
      return; // another job's (this thread woke late), or none left
    if (!claim_.compare_exchange_weak(v, v + 1))
      continue;
    // Claimed: the job stays until this thread leaves (active_), so its body and size are its.
    int64_t n = n_.load();
    (*body_.load())(n * chunk / chunks, n * (chunk + 1) / chunks);
    v = claim_.load();
  }
}

void ThreadPool::work() {
  uint64_t seen = 0;
  for (;;) {
    auto until = std::chrono::steady_clock::now() + kSpin;
    for (int spins = 0; generation_.load() == seen && !stop_; ++spins) {
      if (spins % 64 != 0 || std::chrono::steady_clock::now() < until) {
        pause();
        continue;
      }
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleeping_;
      wake_.wait(lock, [&] { return stop_ || generation_.load() != seen; });
      --sleeping_;
    }
    if (stop_)
      return;
    seen = generation_.load();
    ++active_; // before claiming: the caller waits for every thread inside a chunk
    runChunks(seen);
    --active_;
  }
}

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &body) {
  std::unique_lock<std::mutex> busy(busy_, std::defer_lock);
  if (workers_.empty() || n < 2 || !busy.try_lock()) {
    if (n > 0)
      body(0, n);
    return;
  }
  body_ = &body;
  n_ = n;
  int64_t chunks = std::min<int64_t>({n, kChunksPerThread * size(), kField});
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mutex_); // a worker going to sleep sees it or is woken
    generation = generation_.load() + 1;
    claim_ = claimWord(generation, chunks);
    generation_ = generation;
  }
  if (sleeping_ > 0)
    wake_.notify_all();
  ++active_;
  runChunks(generation);
  --active_;
  // Every chunk is claimed: wait for those still running on the workers.
  for (int spins = 0; active_.load() != 0; ++spins)
    spins < 4096 ? pause() : std::this_thread::yield();
}

} // namespace sotc::runtime::cpu
