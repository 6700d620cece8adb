//===- TestArtifacts.h - What the runtime's tests share -----------------------------------===//
//
// Files read and written whole, float32 tensors as sotc_values over the caller's data, random
// inputs, and artifacts opened for the length of a test.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_TESTS_RUNTIME_TESTARTIFACTS_H
#define SOTC_TESTS_RUNTIME_TESTARTIFACTS_H

#include "sotc/runtime.h"

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace sotc::testing {

inline std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void spit(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// A float32 tensor of `shape` over `data`.
inline sotc_value tensor(std::vector<float> &data, const std::vector<int64_t> &shape) {
  sotc_value v{};
  v.is_tensor = 1;
  v.data = data.data();
  v.dtype = SOTC_FLOAT32;
  v.rank = static_cast<int32_t>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    v.shape[d] = shape[d];
  return v;
}

/// `n` floats drawn uniformly from [-1, 1).
inline std::vector<float> random(size_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

/// An artifact opened on `device` (nullptr: its own), closed at the end of the scope; on
/// failure `artifact` is null and `error` says why.
struct Opened {
  sotc_artifact *artifact = nullptr;
  sotc_error error{};
  explicit Opened(const std::string &path, const char *device = nullptr) {
    if (sotc_open_device(path.c_str(), device, &artifact, &error))
      artifact = nullptr;
  }
  ~Opened() { sotc_close(artifact); }
  Opened(const Opened &) = delete;
  Opened &operator=(const Opened &) = delete;
};

} // namespace sotc::testing

#endif // SOTC_TESTS_RUNTIME_TESTARTIFACTS_H
