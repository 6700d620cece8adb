//===- Error.h - The runtime's failures: a stable code and one line ------------------------===//
#ifndef SOTC_RUNTIME_ERROR_H
#define SOTC_RUNTIME_ERROR_H

#include <stdexcept>
#include <string>

namespace sotc::runtime {

/// A runtime failure: a stable code (E8xxx, docs/diagnostics.md) and one line. The C API
/// returns it as a sotc_error; nothing throws across that boundary.
class Error : public std::runtime_error {
public:
  Error(std::string code, const std::string &message)
      : std::runtime_error(message), code_(std::move(code)) {}
  const std::string &code() const { return code_; }

private:
  std::string code_;
};

} // namespace sotc::runtime

#endif // SOTC_RUNTIME_ERROR_H
