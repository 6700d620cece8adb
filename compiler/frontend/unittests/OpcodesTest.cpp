#include "compiler/frontend/Opcodes.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace sotc::frontend;

TEST_CASE("CPython 3.11, 3.12 and 3.13 have tables", "[opcodes]") {
  CHECK(OpcodeTable::forVersion(3, 11) != nullptr);
  CHECK(OpcodeTable::forVersion(3, 12) != nullptr);
  CHECK(OpcodeTable::forVersion(3, 13) != nullptr);
  CHECK(OpcodeTable::forVersion(3, 10) == nullptr);
  CHECK(OpcodeTable::forVersion(3, 14) == nullptr);
  CHECK(OpcodeTable::forVersion(2, 7) == nullptr);
  CHECK(OpcodeTable::supportedVersions() == "3.11, 3.12, 3.13");
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

// The numbers below are what each interpreter's dis.get_instructions gives for
//   def f(x, ys):
//       for y in ys: x = x + y
//       if x > 1: return x.sum()
//       return x

TEST_CASE("3.12 decoding: method flag, compare mask, relative jumps", "[opcodes]") {
  const OpcodeTable &t = *OpcodeTable::forVersion(3, 12);
  const OpcodeInfo &loadAttr = *t.lookup(106);
  CHECK(loadAttr.op == Opcode::LOAD_ATTR);
  CHECK(t.nameIndex(loadAttr, 1) == 0);
  CHECK(t.pushesNull(loadAttr, 1));
  CHECK_FALSE(t.pushesNull(loadAttr, 2));
  CHECK(t.compareIndex(68) == 4);                     // ">"
  CHECK(t.jumpTarget(*t.lookup(93), 6, 7) == 24u);    // FOR_ITER
  CHECK(t.jumpTarget(*t.lookup(140), 22, 9) == 6u);   // JUMP_BACKWARD
  CHECK(t.jumpTarget(*t.lookup(114), 34, 16) == 68u); // POP_JUMP_IF_FALSE
  CHECK(t.nullBelowCallable());
  CHECK(t.forIterExitSkip() == 1);
}

TEST_CASE("3.13 decoding: packed locals, to-bool flag, NULL above the callable", "[opcodes]") {
  const OpcodeTable &t = *OpcodeTable::forVersion(3, 13);
  const OpcodeInfo &pair = *t.lookup(88);
  CHECK(pair.op == Opcode::LOAD_FAST_LOAD_FAST);
  CHECK(t.localIndices(pair, 2) == std::vector<unsigned>{0, 2});
  CHECK(t.localIndices(*t.lookup(85), 2) == std::vector<unsigned>{2}); // LOAD_FAST
  CHECK(t.compareIndex(148) == 4);                                     // ">" with the to-bool bit
  CHECK(t.jumpTarget(*t.lookup(77), 20, 9) == 6u);   // JUMP_BACKWARD, one cache entry
  CHECK(t.jumpTarget(*t.lookup(97), 36, 16) == 72u); // POP_JUMP_IF_FALSE, one cache entry
  CHECK(t.pushesNull(*t.lookup(82), 1));             // LOAD_ATTR method flag
  CHECK_FALSE(t.nullBelowCallable());
  CHECK(t.forIterExitSkip() == 2);
}

TEST_CASE("one Opcode names the same operation in every version", "[opcodes]") {
  for (auto [minor, number] : {std::pair{11u, 124u}, {12u, 124u}, {13u, 85u}}) {
    const OpcodeInfo *info = OpcodeTable::forVersion(3, minor)->lookup(number);
    REQUIRE(info);
    CHECK(info->op == Opcode::LOAD_FAST);
  }
}
