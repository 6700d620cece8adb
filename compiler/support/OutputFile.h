//===- OutputFile.h - All-or-nothing output files ----------------------------------------===//
//
// Outputs are written to a temporary file beside the target and renamed into place on
// commit(), so a failed run never leaves a half-written file behind.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_SUPPORT_OUTPUTFILE_H
#define SOTC_SUPPORT_OUTPUTFILE_H

#include <string>
#include <string_view>

namespace sotc {

/// Writes `contents` to `path` atomically ("-" means stdout); throws CodedError (E9002).
void writeOutputFile(const std::string &path, std::string_view contents);

} // namespace sotc

#endif // SOTC_SUPPORT_OUTPUTFILE_H
