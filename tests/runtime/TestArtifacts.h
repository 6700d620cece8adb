//===- TestArtifacts.h - What the runtime's tests share -----------------------------------===//
//
// Files read and written whole, float32 tensors as sotc_values over the caller's data, random
// inputs, and artifacts opened for the length of a test.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_TESTS_RUNTIME_TESTARTIFACTS_H
#define SOTC_TESTS_RUNTIME_TESTARTIFACTS_H

#include "sotc/runtime.h"

#include <cmath>
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

/// testdata's gelu_mlp on random inputs: gelu_tanh(x w1 + b1) w2 + b2 for x [32, 256],
/// w1 [256, 1024], w2 [1024, 256]; and what it computes, in double precision.
struct GeluMlp {
  std::vector<float> x, w1, b1, w2, b2;
  explicit GeluMlp(std::mt19937 &rng)
      : x(random(32 * 256, rng)), w1(random(256 * 1024, rng)), b1(random(1024, rng)),
        w2(random(1024 * 256, rng)), b2(random(256, rng)) {}

  /// The artifact's five parameters, over this object's data.
  std::vector<sotc_value> values() {
    return {tensor(x, {32, 256}), tensor(w1, {256, 1024}), tensor(b1, {1024}),
            tensor(w2, {1024, 256}), tensor(b2, {256})};
  }

  /// The exact result, and each output's sum of |terms| (what its float32 rounding grows
  /// with).
  void reference(std::vector<double> &want, std::vector<double> &magnitude) const {
    std::vector<double> h(32 * 1024);
    for (int i = 0; i < 32; ++i)
      for (int j = 0; j < 1024; ++j) {
        double s = b1[j];
        for (int k = 0; k < 256; ++k)
          s += static_cast<double>(x[i * 256 + k]) * w1[k * 1024 + j];
        h[i * 1024 + j] =
            0.5 * s * (1 + std::tanh(std::sqrt(2 / M_PI) * (s + 0.044715 * s * s * s)));
      }
    want.assign(32 * 256, 0);
    magnitude.assign(32 * 256, 0);
    for (int i = 0; i < 32; ++i)
      for (int j = 0; j < 256; ++j) {
        double s = b2[j], m = std::fabs(b2[j]);
        for (int k = 0; k < 1024; ++k) {
          s += h[i * 1024 + k] * w2[k * 256 + j];
          m += std::fabs(h[i * 1024 + k] * w2[k * 256 + j]);
        }
        want[i * 256 + j] = s, magnitude[i * 256 + j] = m;
      }
  }
};

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
