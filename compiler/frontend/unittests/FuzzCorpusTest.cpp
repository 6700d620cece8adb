// The libFuzzer corpus (tools/fuzz/corpus) as a regression suite: every input is either
// rejected with a CodedError or validates, prints and translates, as the fuzz target requires.
#include "compiler/frontend/BytecodeDump.h"
#include "compiler/frontend/TraceReader.h"
#include "compiler/frontend/Translation.h"
#include "compiler/support/Diagnostics.h"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <fstream>
#include <sstream>

using namespace sotc::frontend;

TEST_CASE("every fuzz corpus input is handled", "[reader][fuzz]") {
  DIR *dir = opendir("tools/fuzz/corpus");
  REQUIRE(dir);
  int inputs = 0, accepted = 0;
  while (dirent *entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name[0] == '.')
      continue;
    std::ifstream in("tools/fuzz/corpus/" + name, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    std::string data = bytes.str();
    if (data.empty())
      continue;
    ++inputs;
    INFO(name);
    // Same convention as TraceFuzzer.cpp: the first byte picks the encoding.
    TraceEncoding encoding = (data[0] & 1) ? TraceEncoding::Text : TraceEncoding::Binary;
    try {
      sotc::trace::Trace trace = parseTrace(std::string_view(data).substr(1), encoding, name);
      validateTrace(trace, name);
      std::ostringstream out;
      dumpBytecode(trace, out);
      ++accepted;
      translate(trace);
    } catch (const sotc::CodedError &) {
    }
  }
  closedir(dir);
  CHECK(inputs > 100);
  CHECK(accepted > 0); // the seeds are valid traces
}
