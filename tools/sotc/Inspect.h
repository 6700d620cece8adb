//===- Inspect.h - sotc inspect: what a compiled artifact holds ----------------------------===//
#ifndef SOTC_TOOLS_SOTC_INSPECT_H
#define SOTC_TOOLS_SOTC_INSPECT_H

#include <string>

namespace sotc::inspect {

/// The artifact at `path` (a binary with its manifest beside it, or the manifest) as text:
/// target, binary, inputs, guards, segments with their kernel steps, control flow, arena.
/// With `dot`, a Graphviz digraph of segments, steps and control flow instead. Checks that
/// the binary's sha256 matches the manifest's and, for a shared library, that it exports
/// every kernel the manifest calls (E9006 otherwise).
std::string inspect(const std::string &path, bool dot);

} // namespace sotc::inspect

#endif // SOTC_TOOLS_SOTC_INSPECT_H
