#include "compiler/frontend/TraceReader.h"

#include "compiler/support/Diagnostics.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sotc::frontend {

static bool endsWith(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TraceEncoding encodingForPath(const std::string &path) {
  if (endsWith(path, ".pbtxt"))
    return TraceEncoding::Text;
  if (endsWith(path, ".pb"))
    return TraceEncoding::Binary;
  throw CodedError(DiagCode::TraceUnknownExtension,
                   path + ": cannot tell the trace encoding; use .pb (binary) or .pbtxt (text)");
}

namespace {
/// Keeps the first text-format error instead of letting protobuf log it to stderr.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
public:
  void AddError(int line, int column, const std::string &message) override {
    if (first.empty())
      first =
          "line " + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
  }
  void AddWarning(int, int, const std::string &) override {}
  std::string first;
};
} // namespace

trace::Trace parseTrace(std::string_view bytes, TraceEncoding encoding, const std::string &name) {
  // libprotobuf logs parse problems (e.g. invalid UTF-8) to stderr; sotc reports them as
  // one coded line instead.
  static const bool silenced = (google::protobuf::SetLogHandler(nullptr), true);
  (void)silenced;
  trace::Trace result;
  if (encoding == TraceEncoding::Text) {
    google::protobuf::TextFormat::Parser parser;
    FirstErrorCollector errors;
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(std::string(bytes), &result))
      throw CodedError(DiagCode::TraceTextMalformed,
                       name + ": not a valid text trace: " + errors.first);
    return result;
  }
  if (bytes.empty())
    throw CodedError(DiagCode::TraceMalformed, name + ": the trace file is empty");
  if (!result.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw CodedError(DiagCode::TraceMalformed,
                     name + ": not a valid binary trace (truncated or corrupt protobuf, " +
                         std::to_string(bytes.size()) + " bytes)");
  return result;
}

trace::Trace loadTrace(const std::string &path) {
  TraceEncoding encoding = encodingForPath(path);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw CodedError(DiagCode::TraceUnreadable,
                     path + ": cannot open trace: " + std::strerror(errno));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad())
    throw CodedError(DiagCode::TraceUnreadable, path + ": cannot read trace");
  trace::Trace result = parseTrace(contents.str(), encoding, path);
  validateTrace(result, path);
  return result;
}

std::string describeCode(const trace::CodeObject &code) {
  return "'" + code.qualname() + "' (" + code.filename() + ":" +
         std::to_string(code.firstlineno()) + ")";
}

} // namespace sotc::frontend
