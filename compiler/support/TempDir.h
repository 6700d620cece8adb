//===- TempDir.h - A private temporary folder, removed with everything in it ---------------===//
#ifndef SOTC_SUPPORT_TEMPDIR_H
#define SOTC_SUPPORT_TEMPDIR_H

#include <string>

namespace sotc {

/// A fresh folder under the system's temporary directory for the files external steps
/// (lld, ptxas, fatbinary) read and write; removed, with its contents, on destruction.
class TempDir {
public:
  explicit TempDir(const std::string &prefix);
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  bool ok() const { return !path_.empty(); }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

} // namespace sotc

#endif // SOTC_SUPPORT_TEMPDIR_H
