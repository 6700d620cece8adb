//===- Format.h - Small text formatters shared by every layer ----------------------------===//
#ifndef SOTC_SUPPORT_FORMAT_H
#define SOTC_SUPPORT_FORMAT_H

#include <cstdint>
#include <string>
#include <vector>

namespace sotc {

/// "[1, 2, 3]", as Python prints a list of ints.
std::string formatInts(const std::vector<int64_t> &values);

} // namespace sotc

#endif // SOTC_SUPPORT_FORMAT_H
