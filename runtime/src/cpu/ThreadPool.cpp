#include "runtime/src/cpu/ThreadPool.h"

#include <algorithm>

namespace sotc::runtime::cpu {

ThreadPool::ThreadPool(unsigned threads) {
  for (unsigned i = 1; i < std::max(threads, 1u); ++i)
    workers_.emplace_back([this, i] { work(i); });
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

namespace {
/// Worker `index`'s chunk of [0, n) among `parts`.
std::pair<int64_t, int64_t> chunk(int64_t n, unsigned parts, unsigned index) {
  int64_t per = n / parts, extra = n % parts;
  int64_t begin = index * per + std::min<int64_t>(index, extra);
  return {begin, begin + per + (static_cast<int64_t>(index) < extra ? 1 : 0)};
}
} // namespace

void ThreadPool::work(unsigned index) {
  uint64_t seen = 0;
  for (;;) {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_)
      return;
    seen = generation_;
    const std::function<void(int64_t, int64_t)> *body = body_;
    int64_t n = n_;
    lock.unlock();
    auto [begin, end] = chunk(n, size(), index);
    if (begin < end)
      (*body)(begin, end);
    lock.lock();
    if (--pending_ == 0)
      done_.notify_one();
  }
}

void ThreadPool::parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &body) {
  std::unique_lock<std::mutex> busy(busy_, std::defer_lock);
  if (workers_.empty() || n < 2 || !busy.try_lock()) {
    if (n > 0)
      body(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body_ = &body;
    n_ = n;
    pending_ = static_cast<unsigned>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  auto [begin, end] = chunk(n, size(), 0);
  if (begin < end)
    body(begin, end);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
}

} // namespace sotc::runtime::cpu
