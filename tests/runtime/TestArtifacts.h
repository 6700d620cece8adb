//===- TestArtifacts.h - What the runtime's tests share -----------------------------------===//
//
// Files read and written whole, and float32 tensors as sotc_values over the caller's data.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_TESTS_RUNTIME_TESTARTIFACTS_H
#define SOTC_TESTS_RUNTIME_TESTARTIFACTS_H

#include "sotc/runtime.h"

#include <fstream>
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

} // namespace sotc::testing

#endif // SOTC_TESTS_RUNTIME_TESTARTIFACTS_H
