#include "compiler/frontend/Opcodes.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace sotc::frontend;

TEST_CASE("only CPython 3.11 has a table", "[opcodes]") {
  CHECK(OpcodeTable::forVersion(3, 11) != nullptr);
  CHECK(OpcodeTable::forVersion(3, 10) == nullptr);
  CHECK(OpcodeTable::forVersion(3, 12) == nullptr);
  CHECK(OpcodeTable::forVersion(2, 7) == nullptr);
  CHECK(OpcodeTable::supportedVersions() == "3.11");
}

TEST_CASE("3.11 opcodes carry CPython's numbers and flags", "[opcodes]") {
  const OpcodeTable &t = *OpcodeTable::forVersion(3, 11);
  const OpcodeInfo *loadFast = t.lookup(124);
  REQUIRE(loadFast);
  CHECK(std::strcmp(loadFast->name, "LOAD_FAST") == 0);
  CHECK(loadFast->has(kHasArg));
  CHECK(loadFast->has(kHasLocal));
  CHECK_FALSE(loadFast->has(kHasConst));

  const OpcodeInfo *ret = t.lookup(83);
  REQUIRE(ret);
  CHECK(std::strcmp(ret->name, "RETURN_VALUE") == 0);
  CHECK_FALSE(ret->has(kHasArg));

  CHECK(t.lookup(255) == nullptr); // unused in 3.11
  CHECK(t.lookup(1000) == nullptr);
  CHECK(t.lookup(116)->cacheEntries == 5); // LOAD_GLOBAL
}

TEST_CASE("3.11 LOAD_GLOBAL keeps a NULL flag in bit 0", "[opcodes]") {
  const OpcodeTable &t = *OpcodeTable::forVersion(3, 11);
  CHECK(t.nameIndex(*t.lookup(116), 5) == 2); // LOAD_GLOBAL
  CHECK(t.nameIndex(*t.lookup(106), 5) == 5); // LOAD_ATTR
}

TEST_CASE("3.11 jump targets count code units after the caches", "[opcodes]") {
  const OpcodeTable &t = *OpcodeTable::forVersion(3, 11);
  // Offsets from `dis` of a real function.
  CHECK(t.jumpTarget(*t.lookup(93), 48, 29) == 108u);         // FOR_ITER
  CHECK(t.jumpTarget(*t.lookup(140), 106, 30) == 48u);        // JUMP_BACKWARD
  CHECK(t.jumpTarget(*t.lookup(114), 118, 20) == 160u);       // POP_JUMP_FORWARD_IF_FALSE
  CHECK(t.jumpTarget(*t.lookup(140), 4, 10) == std::nullopt); // before the start
  CHECK(t.jumpTarget(*t.lookup(124), 0, 1) == std::nullopt);  // not a jump
}
