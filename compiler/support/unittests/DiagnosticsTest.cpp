#include "compiler/support/Diagnostics.h"
#include "compiler/support/OutputFile.h"

#include <catch2/catch.hpp>

#include <thread>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace sotc;

TEST_CASE("diagnostic codes are unique, well-formed and titled", "[diagnostics]") {
  std::set<std::string> seen;
  for (const DiagInfo &info : allDiagnostics()) {
    INFO(info.id);
    CHECK(std::regex_match(info.id, std::regex("E[0-9]{4}")));
    CHECK(seen.insert(info.id).second);
    CHECK(std::string(info.title).size() > 5);
    CHECK(&diagInfo(info.code) == &info);
  }
}

TEST_CASE("every code is catalogued in docs/diagnostics.md", "[diagnostics]") {
  std::ifstream in("docs/diagnostics.md");
  REQUIRE(in);
  std::stringstream doc;
  doc << in.rdbuf();
  for (const DiagInfo &info : allDiagnostics()) {
    INFO(info.id);
    CHECK(doc.str().find(std::string("| ") + info.id + " |") != std::string::npos);
  }
}

TEST_CASE("a coded error renders as one line", "[diagnostics]") {
  CodedError e(DiagCode::TraceMalformed, "t.pb: bad\nbytes");
  CHECK(e.code() == DiagCode::TraceMalformed);
  CHECK(e.render() == "error E1002: t.pb: bad bytes");
}

TEST_CASE("output files are written whole or not at all", "[output]") {
  char dir[] = "/tmp/sotc-output-XXXXXX";
  REQUIRE(mkdtemp(dir));
  std::string path = std::string(dir) + "/out.txt";
  writeOutputFile(path, "hello\n");
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  CHECK(line == "hello");

  SECTION("a missing directory is E9002 and leaves nothing behind") {
    std::string bad = std::string(dir) + "/missing/out.txt";
    try {
      writeOutputFile(bad, "x");
      FAIL("expected an error");
    } catch (const CodedError &err) {
      CHECK(err.code() == DiagCode::CliOutputUnwritable);
      CHECK(std::string(err.what()).find(bad) == 0);
    }
    struct stat st;
    CHECK(stat(bad.c_str(), &st) != 0);
  }
  SECTION("a FIFO is written in place, never replaced by a regular file") {
    // As -o /dev/null: renaming a temporary file over a device as root would replace it.
    std::string fifo = std::string(dir) + "/pipe";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    std::string got;
    std::thread reader([&] {
      std::ifstream in(fifo);
      std::getline(in, got);
    });
    writeOutputFile(fifo, "through the pipe\n");
    reader.join();
    CHECK(got == "through the pipe");
    struct stat st;
    REQUIRE(stat(fifo.c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
    std::remove(fifo.c_str());
  }
  SECTION("a directory is E9002") { CHECK_THROWS_AS(writeOutputFile(dir, "x"), CodedError); }
  std::remove(path.c_str());
  rmdir(dir);
}
