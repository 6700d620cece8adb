//===- TraceReader.h - Load and validate sotc traces -------------------------------------===//
//
// A trace is untrusted input: after parsing (.pb binary or .pbtxt text), validateTrace checks
// everything later stages index by, so nothing past this point needs to bounds-check the
// trace. Every failure is a CodedError (E1xxx) naming the code object and offset.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_FRONTEND_TRACEREADER_H
#define SOTC_FRONTEND_TRACEREADER_H

#include "compiler/frontend/trace.pb.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace sotc::frontend {

/// The trace format this build reads; tools/python/sotc/_version.py writes the same.
constexpr uint32_t kTraceFormatVersion = 1;

enum class TraceEncoding { Binary, Text };

/// Picks the encoding from the file name (.pb / .pbtxt); E1004 otherwise.
TraceEncoding encodingForPath(const std::string &path);

/// Parses bytes without validating them. `name` is used in messages.
trace::Trace parseTrace(std::string_view bytes, TraceEncoding encoding, const std::string &name);

/// Checks versions, indices, instructions and jump targets; throws CodedError.
void validateTrace(const trace::Trace &trace, const std::string &name);

/// Reads, parses and validates the trace at `path`.
trace::Trace loadTrace(const std::string &path);

/// "'f' (prog.py:7)": how messages name a code object.
std::string describeCode(const trace::CodeObject &code);

} // namespace sotc::frontend

#endif // SOTC_FRONTEND_TRACEREADER_H
