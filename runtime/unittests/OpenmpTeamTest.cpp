// sotc's kernels on oneDNN's OpenMP team: every index of a range runs exactly once, in
// contiguous chunks, on more than one thread; a chunk's exception reaches the caller; callers
// on several threads at once each get their whole range run.
#include "runtime/src/cpu/OpenmpTeam.h"
#include "runtime/src/cpu/Gemm.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

using sotc::runtime::cpu::OpenmpTeam;
using sotc::runtime::cpu::processOnednn;

namespace {

std::unique_ptr<OpenmpTeam> team(unsigned threads) {
  return OpenmpTeam::of(processOnednn().handle, threads);
}

} // namespace

TEST_CASE("the team is oneDNN's OpenMP runtime's, where one loads", "[runtime][threads]") {
  if (!processOnednn().sgemm)
    return; // no oneDNN on this machine: kernels run on sotc's pool
  CHECK(team(2));
  CHECK_FALSE(team(1)); // one thread: no team to split over
  CHECK_FALSE(OpenmpTeam::of(nullptr, 2));
}

TEST_CASE("a team's parallelFor covers [0, n) once, on several threads", "[runtime][threads]") {
  std::unique_ptr<OpenmpTeam> t = team(3);
  if (!t)
    return;
  CHECK(t->size() == 3);
  for (int64_t n : {0, 1, 2, 7, 1000}) {
    INFO("n = " << n);
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::mutex mutex;
    std::set<std::thread::id> threads;
    t->parallelFor(n, [&](int64_t begin, int64_t end) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        threads.insert(std::this_thread::get_id());
      }
      for (int64_t i = begin; i < end; ++i)
        ++hits[static_cast<size_t>(i)];
      // Long enough that every thread of the team takes a chunk of the large range.
      if (n == 1000)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
    for (const auto &h : hits)
      CHECK(h == 1);
    if (n == 1000)
      CHECK(threads.size() > 1);
  }
}

TEST_CASE("a chunk's exception is thrown to the caller", "[runtime][threads]") {
  std::unique_ptr<OpenmpTeam> t = team(2);
  if (!t)
    return;
  CHECK_THROWS_AS(t->parallelFor(100,
                                 [](int64_t begin, int64_t) {
                                   if (begin == 0)
                                     throw std::runtime_error("chunk failed");
                                 }),
                  std::runtime_error);
}

TEST_CASE("callers on several threads each get their range run", "[runtime][threads]") {
  std::unique_ptr<OpenmpTeam> t = team(2);
  if (!t)
    return;
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int run = 0; run < 50; ++run)
        t->parallelFor(64, [&](int64_t begin, int64_t end) { total += end - begin; });
    });
  for (std::thread &c : callers)
    c.join();
  CHECK(total == 4 * 50 * 64);
}
