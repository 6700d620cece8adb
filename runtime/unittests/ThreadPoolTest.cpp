// The CPU runtime's thread pool: every index of a range runs exactly once, in contiguous
// chunks, whatever the number of threads and the size of the range.
#include "runtime/src/cpu/ThreadPool.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

using sotc::runtime::cpu::ThreadPool;

TEST_CASE("parallelFor covers [0, n) once, for any n and pool size", "[runtime][threads]") {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    ThreadPool pool(threads);
    CHECK(pool.size() == threads);
    for (int64_t n : {0, 1, 2, 7, 8, 9, 1000}) {
      INFO(threads << " threads, n = " << n);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> chunks{0}, empty{0}; // (Catch2's checks are for the test's thread)
      pool.parallelFor(n, [&](int64_t begin, int64_t end) {
        empty += begin >= end;
        ++chunks;
        for (int64_t i = begin; i < end; ++i)
          ++hits[static_cast<size_t>(i)];
      });
      for (const auto &h : hits)
        CHECK(h == 1);
      CHECK(empty == 0);
      CHECK(chunks <= static_cast<int>(4 * threads)); // a few per thread, claimed in turn
    }
  }
}

TEST_CASE("a worker busy with a long chunk leaves the rest to the caller", "[runtime][threads]") {
  // The first range's chunk that the worker claims blocks it until the caller has run every
  // other chunk of the range: the caller did not wait for the worker to take a share.
  ThreadPool pool(2);
  std::atomic<bool> released{false};
  std::atomic<int> heldBy{0}, ranByCaller{0};
  std::thread::id caller = std::this_thread::get_id();
  pool.parallelFor(64, [&](int64_t, int64_t) {
    if (std::this_thread::get_id() != caller) {
      ++heldBy;
      while (!released)
        std::this_thread::yield();
      return;
    }
    if (++ranByCaller == 7) // every chunk but the worker's one (8 in all)
      released = true;
  });
  released = true;
  CHECK(heldBy <= 1);
  CHECK(ranByCaller + heldBy == 8);
}

TEST_CASE("the pool runs one range after another", "[runtime][threads]") {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  for (int round = 0; round < 200; ++round)
    pool.parallelFor(100, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        sum += i;
    });
  CHECK(sum == 200 * 4950);
}

TEST_CASE("callers on several threads share the pool without waiting on each other",
          "[runtime][threads]") {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 8; ++t)
    callers.emplace_back([&] {
      for (int round = 0; round < 300; ++round)
        pool.parallelFor(100, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            sum += i;
        });
    });
  for (std::thread &t : callers)
    t.join();
  CHECK(sum == 8 * 300 * 4950);
}
