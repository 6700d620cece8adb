// The runtime's codes (ErrorCodes.def) and docs/diagnostics.md's "Runtime (E8xxx)" table say
// the same: each code has its row with its title, and each row is a code.
#include "runtime/src/Error.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

using namespace sotc::runtime;

TEST_CASE("the runtime's codes and the catalogue agree", "[errors]") {
  std::ifstream in("docs/diagnostics.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  std::string doc = text.str();
  std::set<std::string> ids;
  for (const ErrorCodeInfo &info : kErrorCodes) {
    INFO(info.id);
    CHECK(ids.insert(info.id).second);
    CHECK(errorId(info.code) == std::string(info.id));
    CHECK(doc.find(std::string("| ") + info.id + " | " + info.title + " |") != std::string::npos);
  }
  std::regex row(R"(\n\| (E8\d{3}) \|)");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator();
       ++it) {
    INFO((*it)[1].str());
    CHECK(ids.count((*it)[1].str()) == 1);
  }
}

TEST_CASE("an error carries its code's id", "[errors]") {
  Error e(ErrorCode::InputsMismatch, "x: expected float32[2], got float32[3]");
  CHECK(e.kind() == ErrorCode::InputsMismatch);
  CHECK(e.code() == "E8004");
}
