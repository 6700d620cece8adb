//===- Error.h - The runtime's failures: a stable code and one line ------------------------===//
#ifndef SOTC_RUNTIME_ERROR_H
#define SOTC_RUNTIME_ERROR_H

#include <stdexcept>
#include <string>

namespace sotc::runtime {

/// The runtime's codes (ErrorCodes.def; docs/diagnostics.md).
enum class ErrorCode {
#define RUNTIME_ERROR(name, code, title) name,
#include "runtime/src/ErrorCodes.def"
#undef RUNTIME_ERROR
};

struct ErrorCodeInfo {
  ErrorCode code;
  const char *id;    // "E8001"
  const char *title; // the catalogue's title
};

inline constexpr ErrorCodeInfo kErrorCodes[] = {
#define RUNTIME_ERROR(name, code, title) {ErrorCode::name, code, title},
#include "runtime/src/ErrorCodes.def"
#undef RUNTIME_ERROR
};

inline const char *errorId(ErrorCode code) { return kErrorCodes[static_cast<int>(code)].id; }

/// A runtime failure: a stable code and one line. The C API returns it as a sotc_error;
/// nothing throws across that boundary.
class Error : public std::runtime_error {
public:
  Error(ErrorCode code, const std::string &message)
      : std::runtime_error(message), kind_(code), code_(errorId(code)) {}
  ErrorCode kind() const { return kind_; }
  const std::string &code() const { return code_; } // "E8001"

private:
  ErrorCode kind_;
  std::string code_;
};

} // namespace sotc::runtime

#endif // SOTC_RUNTIME_ERROR_H
