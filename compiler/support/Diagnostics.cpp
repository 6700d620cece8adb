#include "compiler/support/Diagnostics.h"

#include <algorithm>

namespace sotc {

const std::vector<DiagInfo> &allDiagnostics() {
  static const std::vector<DiagInfo> table = {
#define DIAG(name, code, title) {DiagCode::name, code, title},
#include "compiler/support/DiagnosticCodes.def"
#undef DIAG
  };
  return table;
}

const DiagInfo &diagInfo(DiagCode code) { return allDiagnostics()[static_cast<size_t>(code)]; }

static std::string oneLine(std::string text) {
  // A message is one line whatever it quotes (a corrupt trace may hold newlines).
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

CodedError::CodedError(DiagCode code, std::string message)
    : std::runtime_error(oneLine(std::move(message))), code_(code) {}

std::string CodedError::render() const {
  std::string out = std::string("error ") + diagInfo(code_).id + ": " + what();
  for (const std::string &line : also_)
    out += "\n" + line;
  return out;
}

} // namespace sotc
