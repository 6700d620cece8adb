//===- TraceFuzzer.cpp - libFuzzer target for the trace reader ---------------------------===//
//
// Any byte string, read as a binary or (first byte odd) text trace, must either be rejected
// with a CodedError or validate, print with `sotc dump --bytecode` and translate (or fail to
// translate with a CodedError) without crashing.
// Built and run by tools/fuzz/run.sh with clang-22's -fsanitize=fuzzer,address.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/BytecodeDump.h"
#include "compiler/frontend/TraceReader.h"
#include "compiler/frontend/Translation.h"
#include "compiler/support/Diagnostics.h"

#include <cstddef>
#include <cstdint>
#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  using namespace sotc::frontend;
  TraceEncoding encoding = (data[0] & 1) ? TraceEncoding::Text : TraceEncoding::Binary;
  std::string_view bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  try {
    sotc::trace::Trace trace = parseTrace(bytes, encoding, "fuzz");
    validateTrace(trace, "fuzz");
    std::ostringstream out;
    dumpBytecode(trace, out);
    translate(trace);
  } catch (const sotc::CodedError &) {
  }
  return 0;
}
