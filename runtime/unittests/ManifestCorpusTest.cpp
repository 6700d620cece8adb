// The manifest fuzzer's kept corpus (runtime/fuzz/corpus) as a regression suite: every input
// reads into a plan or is refused with a coded error (E8001/E8002), never anything else.
#include "runtime/src/Artifact.h"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <fstream>
#include <sstream>

TEST_CASE("the manifest corpus is read or refused with a code", "[runtime][fuzz]") {
  DIR *dir = opendir("runtime/fuzz/corpus");
  REQUIRE(dir);
  int files = 0, read = 0;
  while (dirent *e = readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..")
      continue;
    std::ifstream in("runtime/fuzz/corpus/" + name, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    INFO(name);
    ++files;
    try {
      sotc::runtime::readManifest(text.str(), name);
      ++read;
    } catch (const sotc::runtime::Error &error) {
      CHECK((error.code() == "E8001" || error.code() == "E8002"));
    }
  }
  closedir(dir);
  CHECK(files >= 7);
  CHECK(read >= 6); // the seeds: manifests sotc wrote
}
