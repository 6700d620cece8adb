// Calls per second of one artifact shared by 1, 2, 4 and 8 threads, each calling it in a loop
// through the C API (sotc_run_into: the caller's buffers, nothing allocated per call), on
// random inputs of the compiled shapes.
//   bazel run //bench:concurrent_calls -- ARTIFACT [SECONDS_PER_POINT]
// Prints one line per number of callers: calls/s over all of them, and the median latency.
#include "sotc/runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

size_t bytesOf(const sotc_value &v) {
  size_t n = sotc_dtype_size(v.dtype);
  for (int32_t d = 0; d < v.rank; ++d)
    n *= static_cast<size_t>(v.shape[d]);
  return n;
}

/// One caller's parameters and result buffers, of the shapes a first run gave.
struct Caller {
  std::vector<std::vector<char>> storage;
  std::vector<sotc_value> inputs, outputs;
};

bool prepare(sotc_artifact *a, Caller &c, std::string &why) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  for (size_t i = 0; i < sotc_num_parameters(a); ++i) {
    sotc_value v;
    sotc_parameter_spec(a, i, &v);
    if (v.is_tensor) {
      c.storage.emplace_back(bytesOf(v));
      if (v.dtype == SOTC_FLOAT32)
        for (size_t e = 0; e < c.storage.back().size() / 4; ++e)
          reinterpret_cast<float *>(c.storage.back().data())[e] = d(rng);
      v.data = c.storage.back().data();
    }
    c.inputs.push_back(v);
  }
  sotc_value results[16];
  size_t n = 16;
  sotc_error error{};
  if (sotc_run(a, c.inputs.data(), c.inputs.size(), results, &n, &error)) {
    why = std::string(error.code) + ": " + error.message;
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    sotc_value out = results[i];
    c.storage.emplace_back(bytesOf(out));
    out.data = c.storage.back().data();
    c.outputs.push_back(out);
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: concurrent_calls ARTIFACT [SECONDS_PER_POINT]\n");
    return 2;
  }
  double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
  sotc_artifact *a = nullptr;
  sotc_error error{};
  if (sotc_open(argv[1], &a, &error)) {
    std::fprintf(stderr, "%s: %s\n", error.code, error.message);
    return 1;
  }
  std::printf("%s: %u hardware threads\n", argv[1], std::thread::hardware_concurrency());
  std::printf("callers  calls/s  median ms\n");
  for (int callers : {1, 2, 4, 8}) {
    std::vector<Caller> state(static_cast<size_t>(callers));
    for (Caller &c : state) {
      std::string why;
      if (!prepare(a, c, why)) {
        std::fprintf(stderr, "%s\n", why.c_str());
        return 1;
      }
    }
    std::atomic<bool> stop{false};
    std::atomic<int> failures{0};
    std::vector<std::vector<double>> latencies(static_cast<size_t>(callers));
    std::vector<std::thread> threads;
    auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < callers; ++t)
      threads.emplace_back([&, t] {
        Caller &c = state[static_cast<size_t>(t)];
        sotc_error e{};
        while (!stop) {
          auto begin = std::chrono::steady_clock::now();
          if (sotc_run_into(a, c.inputs.data(), c.inputs.size(), c.outputs.data(),
                            c.outputs.size(), &e))
            ++failures;
          latencies[static_cast<size_t>(t)].push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
        }
      });
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (std::thread &t : threads)
      t.join();
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<double> all;
    for (const auto &l : latencies)
      all.insert(all.end(), l.begin(), l.end());
    std::sort(all.begin(), all.end());
    if (failures || all.empty()) {
      std::fprintf(stderr, "%d calls failed\n", failures.load());
      return 1;
    }
    std::printf("%7d  %7.1f  %9.2f\n", callers, static_cast<double>(all.size()) / elapsed,
                all[all.size() / 2] * 1e3);
  }
  sotc_close(a);
  return 0;
}
