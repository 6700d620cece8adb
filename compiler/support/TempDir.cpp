#include "compiler/support/TempDir.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

namespace sotc {

TempDir::TempDir(const std::string &prefix) {
  llvm::SmallString<128> path;
  if (!llvm::sys::fs::createUniqueDirectory(prefix, path))
    path_ = std::string(path);
}

TempDir::~TempDir() {
  if (!path_.empty())
    llvm::sys::fs::remove_directories(path_);
}

} // namespace sotc
