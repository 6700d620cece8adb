#include "compiler/support/OutputFile.h"

#include "compiler/support/Diagnostics.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <unistd.h>

namespace sotc {

void writeOutputFile(const std::string &path, std::string_view contents) {
  if (path == "-") {
    std::cout.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    std::cout.flush();
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
