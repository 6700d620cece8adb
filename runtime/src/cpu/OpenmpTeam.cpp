#include "runtime/src/cpu/OpenmpTeam.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

namespace sotc::runtime::cpu {
namespace {

/// Chunks per thread: a thread that starts late leaves its share to the others.
constexpr int64_t kChunksPerThread = 4;

struct Job {
  const std::function<void(int64_t, int64_t)> *body;
  int64_t n, chunks;
  std::atomic<int64_t> next{0};
  std::mutex failureMutex;
  std::exception_ptr failure;
};

void runChunks(void *data) {
  Job &job = *static_cast<Job *>(data);
  for (int64_t chunk; (chunk = job.next.fetch_add(1)) < job.chunks;) {
    try {
      (*job.body)(job.n * chunk / job.chunks, job.n * (chunk + 1) / job.chunks);
    } catch (...) { // an exception may not leave an OpenMP region
      std::lock_guard<std::mutex> lock(job.failureMutex);
      if (!job.failure)
        job.failure = std::current_exception();
      job.next = job.chunks;
    }
  }
}

} // namespace

std::unique_ptr<OpenmpTeam> OpenmpTeam::of(void *onednnHandle, unsigned threads) {
  if (!onednnHandle || threads < 2)
    return nullptr;
  // dlsym on oneDNN's handle searches its dependencies: the OpenMP runtime it runs on.
  auto parallel = reinterpret_cast<Parallel>(dlsym(onednnHandle, "GOMP_parallel"));
  if (!parallel)
    return nullptr;
  return std::unique_ptr<OpenmpTeam>(new OpenmpTeam(parallel, threads));
}

void OpenmpTeam::parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &body) {
  // One caller's range at a time: a caller that finds the team busy runs its whole range
  // itself (as on sotc's pool: with more callers than cores, each core runs one caller's).
  std::unique_lock<std::mutex> busy(busy_, std::defer_lock);
  if (n < 2 || !busy.try_lock()) {
    if (n > 0)
      body(0, n);
    return;
  }
  Job job;
  job.body = &body;
  job.n = n;
  job.chunks = std::min<int64_t>(n, kChunksPerThread * threads_);
  parallel_(runChunks, &job, threads_, 0);
  if (job.failure)
    std::rethrow_exception(job.failure);
}

} // namespace sotc::runtime::cpu
