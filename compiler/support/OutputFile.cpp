#include "compiler/support/OutputFile.h"

#include "compiler/support/Diagnostics.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace sotc {

void writeOutputFile(const std::string &path, std::string_view contents) {
  if (path == "-") {
    std::cout.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    std::cout.flush();
    return;
  }
  // A device or a pipe (-o /dev/null, a FIFO) is written in place: renaming a temporary file
  // over it would replace the device with a regular file.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    std::FILE *f = S_ISDIR(st.st_mode) ? nullptr : std::fopen(path.c_str(), "wb");
    bool ok = f && std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
    ok = f && (std::fclose(f) == 0) && ok;
    if (!ok)
      throw CodedError(DiagCode::CliOutputUnwritable,
                       path + ": cannot write output (" +
                           (S_ISDIR(st.st_mode) ? std::string("a directory")
                                                : std::string(std::strerror(errno))) +
                           ")");
    return;
  }
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  auto fail = [&](const char *what) {
    std::string reason = std::strerror(errno);
    std::remove(tmp.c_str());
    throw CodedError(DiagCode::CliOutputUnwritable,
                     path + ": cannot write output (" + what + ": " + reason + ")");
  };
  std::FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    fail("open");
  bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok)
    fail("write");
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    fail("rename");
}

} // namespace sotc
