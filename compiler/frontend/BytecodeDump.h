//===- BytecodeDump.h - Print traced bytecode as CPython's dis.dis does ------------------===//
#ifndef SOTC_FRONTEND_BYTECODEDUMP_H
#define SOTC_FRONTEND_BYTECODEDUMP_H

#include "compiler/frontend/trace.pb.h"

#include <ostream>

namespace sotc::frontend {

/// Prints the code of every traced function in `dis.dis` layout: the entry function first,
/// nested code objects after their parent ("Disassembly of <code object ...>:"), then the
/// other user functions the trace reached, each once. Code-object "addresses" are their
/// indices in the trace. The trace must have been validated.
void dumpBytecode(const trace::Trace &trace, std::ostream &os);

} // namespace sotc::frontend

#endif // SOTC_FRONTEND_BYTECODEDUMP_H
