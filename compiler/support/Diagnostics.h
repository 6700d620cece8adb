//===- Diagnostics.h - sotc's coded, one-line errors -------------------------------------===//
//
// Every user-facing failure carries a stable code (DiagnosticCodes.def, documented in
// docs/diagnostics.md) and prints as one line:
//   sotc: error E1011: t.pb: code object 'f' (prog.py:7) offset 14: jump target 17 ...
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_SUPPORT_DIAGNOSTICS_H
#define SOTC_SUPPORT_DIAGNOSTICS_H

#include <stdexcept>
#include <string>
#include <vector>

namespace sotc {

enum class DiagCode {
#define DIAG(name, code, title) name,
#include "compiler/support/DiagnosticCodes.def"
#undef DIAG
};

struct DiagInfo {
  DiagCode code;
  const char *id;    // "E1002"
  const char *title; // "trace is not a valid binary trace"
};

/// The catalogue of all codes, in declaration order.
const std::vector<DiagInfo> &allDiagnostics();
const DiagInfo &diagInfo(DiagCode code);

/// A failure the user must see: a code plus a one-line message (no trailing newline).
class CodedError : public std::runtime_error {
public:
  CodedError(DiagCode code, std::string message);
  DiagCode code() const { return code_; }
  /// "error E1002: <message>", then one line for each error added with alsoReport().
  std::string render() const;
  /// Another error the same run found (every unsupported call of a program, not the first).
  void alsoReport(const CodedError &other) { also_.push_back(other.render()); }

private:
  DiagCode code_;
  std::vector<std::string> also_;
};

/// Exit status of the sotc tool for a CodedError.
constexpr int kExitUserError = 2;

} // namespace sotc

#endif // SOTC_SUPPORT_DIAGNOSTICS_H
