// One artifact called from many threads at once (the C API's promise, runtime.h): every call
// gets exactly the result a sequential call gives, through runtime-owned outputs and the
// caller's buffers, with GEMM steps and branches; sotc_close waits for calls in flight, and a
// call on a closed artifact is E8005.
#include "sotc/runtime.h"

#include "tests/runtime/TestArtifacts.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using sotc::testing::tensor;

constexpr int kThreads = 8, kCalls = 150;


/// An artifact's parameters (float32 tensors of the given shapes) filled from `seed`; a
/// branch's sign flips with the seed so that both sides run.
struct Inputs {
  std::vector<std::vector<float>> data;
  std::vector<sotc_value> values;
  Inputs(const std::vector<std::vector<int64_t>> &shapes, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1, 1);
    float sign = seed % 2 ? 1.0f : -1.0f;
    for (const auto &shape : shapes) {
      size_t n = 1;
      for (int64_t e : shape)
        n *= static_cast<size_t>(e);
      data.emplace_back(n);
      for (float &x : data.back())
        x = sign * (d(rng) + 1.5f) / 2;
    }
    for (size_t i = 0; i < shapes.size(); ++i)
      values.push_back(tensor(data[i], shapes[i]));
  }
};

struct Case {
  const char *path;
  std::vector<std::vector<int64_t>> inputs;
  std::vector<int64_t> output;
};

size_t count(const std::vector<int64_t> &shape) {
  size_t n = 1;
  for (int64_t e : shape)
    n *= static_cast<size_t>(e);
  return n;
}

/// Runs `c` on seed `seed`, into the caller's buffer or not.
std::vector<float> call(sotc_artifact *a, const Case &c, unsigned seed, bool into,
                        std::string &error) {
  Inputs in(c.inputs, seed);
  std::vector<float> result(count(c.output));
  sotc_error e{};
  if (into) {
    sotc_value out = tensor(result, c.output);
    if (sotc_run_into(a, in.values.data(), in.values.size(), &out, 1, &e))
      error = std::string(e.code) + ": " + e.message;
    return result;
  }
  sotc_value out[1];
  size_t n = 1;
  if (sotc_run(a, in.values.data(), in.values.size(), out, &n, &e)) {
    error = std::string(e.code) + ": " + e.message;
    return result;
  }
  // Another thread's runs must not touch this thread's results before it runs again.
  std::this_thread::yield();
  std::memcpy(result.data(), out[0].data, result.size() * sizeof(float));
  return result;
}

} // namespace

TEST_CASE("many threads on one artifact get the sequential results", "[runtime][threads]") {
  const std::vector<Case> cases = {
      {"testdata/softmax_cpu.so", {{32, 128}}, {32, 128}},
      {"testdata/gelu_mlp_cpu.so", {{32, 256}, {256, 1024}, {1024}, {1024, 256}, {256}}, {32, 256}},
      {"testdata/tensor_branch_cpu.so", {{8}}, {8}},
  };
  for (const Case &c : cases) {
    INFO(c.path);
    sotc_artifact *a = nullptr;
    sotc_error e{};
    REQUIRE(sotc_open(c.path, &a, &e) == 0);
    constexpr unsigned kSeeds = 16;
    std::vector<std::vector<float>> want;
    for (unsigned seed = 0; seed < kSeeds; ++seed) {
      std::string error;
      want.push_back(call(a, c, seed, false, error));
      REQUIRE(error.empty());
    }
    std::atomic<int> wrong{0}, failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < kCalls; ++i) {
          unsigned seed = static_cast<unsigned>(t * 7 + i) % kSeeds;
          std::string error;
          std::vector<float> got = call(a, c, seed, (t + i) % 2 == 0, error);
          if (!error.empty())
            ++failed;
          else if (got != want[seed])
            ++wrong;
        }
      });
    for (std::thread &t : threads)
      t.join();
    CHECK(failed == 0);
    CHECK(wrong == 0);
    sotc_close(a);
  }
}

TEST_CASE("sotc_close waits for calls in flight; later calls are E8005", "[runtime][threads]") {
  Case c{"testdata/gelu_mlp_cpu.so", {{32, 256}, {256, 1024}, {1024}, {1024, 256}, {256}},
         {32, 256}};
  for (int round = 0; round < 5; ++round) {
    sotc_artifact *a = nullptr;
    sotc_error e{};
    REQUIRE(sotc_open(c.path, &a, &e) == 0);
    std::atomic<int> succeeded{0}, refused{0}, other{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (;;) {
          std::string error;
          call(a, c, static_cast<unsigned>(t), /*into=*/true, error); // results outlive close
          if (error.empty())
            ++succeeded;
          else if (error.rfind("E8005: ", 0) == 0 && error.find("closed") != std::string::npos)
            return (void)++refused;
          else
            return (void)++other;
        }
      });
    while (succeeded < 8)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    sotc_close(a);
    for (std::thread &t : threads)
      t.join();
    CHECK(refused == 4);
    CHECK(other == 0);
    sotc_close(a); // a second close is nothing
  }
}
