//===- Opcodes.h - CPython opcode tables and argument decoding, one per version ---------===//
//
// The tables are generated from each CPython's own `opcode` module (tools/scripts/
// gen_opcode_table.py): numbers, flags and inline cache sizes. What the generator cannot
// read from `opcode` -- how an argument packs its fields, where CALL's NULL sits, where an
// exhausted FOR_ITER resumes -- is each version's Decoding (Opcodes.cpp), so that the
// symbolic executor above is one switch over Opcode for every version.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_FRONTEND_OPCODES_H
#define SOTC_FRONTEND_OPCODES_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sotc::frontend {

enum OpcodeFlag : unsigned {
  kHasArg = 1u << 0,
  kHasConst = 1u << 1,
  kHasName = 1u << 2,
  kHasLocal = 1u << 3,
  kHasFree = 1u << 4,
  kHasJrel = 1u << 5,
  kHasJabs = 1u << 6,
  kHasCompare = 1u << 7,
};

/// Every opcode name of every supported version (OpcodeNames.inc, generated), numbered
/// independently of any of them: the executor switches on this, and each version's table
/// maps its numbers here.
enum class Opcode : uint16_t {
#define OPCODE_NAME(name) name,
#include "compiler/frontend/OpcodeNames.inc"
#undef OPCODE_NAME
};
/// The number of Opcode enumerators.
constexpr size_t kOpcodeCount = 0
#define OPCODE_NAME(name) +1
#include "compiler/frontend/OpcodeNames.inc"
#undef OPCODE_NAME
    ;

struct OpcodeInfo {
  const char *name = nullptr; // nullptr: no such opcode in this version
  unsigned number = 0;
  unsigned flags = 0;
  unsigned cacheEntries = 0; // inline CACHE code units that follow the instruction
  Opcode op = Opcode::CACHE;

  bool has(OpcodeFlag flag) const { return (flags & flag) != 0; }
  bool isJump() const { return has(kHasJrel) || has(kHasJabs); }
};

class OpcodeTable {
public:
  /// The table for CPython major.minor, or nullptr when that version is not supported.
  static const OpcodeTable *forVersion(unsigned major, unsigned minor);
  /// "3.11, 3.12, 3.13" -- the versions forVersion() accepts, for messages.
  static std::string supportedVersions();

  unsigned major() const { return major_; }
  unsigned minor() const { return minor_; }
  /// nullptr when `opcode` is not an opcode of this version.
  const OpcodeInfo *lookup(unsigned opcode) const;

  // Argument decoding.
  /// The co_names index an argument denotes (LOAD_GLOBAL keeps a NULL flag in bit 0, 3.12's
  /// LOAD_ATTR a method flag, LOAD_SUPER_ATTR two flags).
  unsigned nameIndex(const OpcodeInfo &info, unsigned arg) const;
  /// LOAD_GLOBAL pushes a NULL for CALL; LOAD_ATTR (3.12 on) loads a method for CALL.
  bool pushesNull(const OpcodeInfo &info, unsigned arg) const;
  /// The local slots an argument names: one, or two packed in 4-bit fields (3.13's
  /// LOAD_FAST_LOAD_FAST, STORE_FAST_LOAD_FAST, STORE_FAST_STORE_FAST).
  std::vector<unsigned> localIndices(const OpcodeInfo &info, unsigned arg) const;
  /// COMPARE_OP's index into ("<", "<=", "==", "!=", ">", ">="): the low bits hold a cache
  /// mask from 3.12 and a to-bool flag from 3.13.
  unsigned compareIndex(unsigned arg) const;
  /// The byte offset a jump goes to, from the instruction's offset and argument.
  std::optional<unsigned> jumpTarget(const OpcodeInfo &info, unsigned offset, unsigned arg) const;

  // Stack layout.
  /// Where a NULL (no self) sits for CALL: below the callable (3.11, 3.12) or above it (3.13).
  bool nullBelowCallable() const { return minor_ <= 12; }
  /// Instructions an exhausted FOR_ITER skips past its target, after popping the iterator:
  /// 3.12's END_FOR, 3.13's END_FOR and POP_TOP (3.11 jumps past the loop directly).
  unsigned forIterExitSkip() const { return minor_ == 11 ? 0 : minor_ == 12 ? 1 : 2; }

private:
  OpcodeTable(unsigned major, unsigned minor) : major_(major), minor_(minor) {}
  friend struct OpcodeTableBuilder;

  unsigned major_, minor_;
  std::array<OpcodeInfo, 256> byNumber_{};
};

} // namespace sotc::frontend

#endif // SOTC_FRONTEND_OPCODES_H
