#include "compiler/support/Format.h"

namespace sotc {

std::string formatInts(const std::vector<int64_t> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

} // namespace sotc
