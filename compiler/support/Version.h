//===- Version.h - sotc's version, for the CLI and what it writes ------------------------===//
#ifndef SOTC_SUPPORT_VERSION_H
#define SOTC_SUPPORT_VERSION_H

namespace sotc {
constexpr const char *kSotcVersion = "0.1.0";
} // namespace sotc

#endif // SOTC_SUPPORT_VERSION_H
