//===- Opcodes.h - CPython opcode tables, one per supported version ----------------------===//
//
// The tables are generated from CPython's own `opcode` module (tools/scripts/
// gen_opcode_table.py). Versions differ in numbering and in how some arguments are encoded,
// so everything that interprets an argument asks the table of the trace's version.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_FRONTEND_OPCODES_H
#define SOTC_FRONTEND_OPCODES_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>

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

/// Every opcode by name, numbered independently of any CPython version: the executor
/// switches on meaning, and each version's table maps its numbers here. Generated from the
/// same table as the numbers (Opcodes311.inc); later versions add their names.
enum class Opcode : uint16_t {
#define OPCODE(name, number, flags) name,
#define CACHE_ENTRIES(name, entries)
#include "compiler/frontend/Opcodes311.inc"
#undef OPCODE
#undef CACHE_ENTRIES
};

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
  /// "3.11" — the versions forVersion() accepts, for error messages.
  static std::string supportedVersions();

  unsigned major() const { return major_; }
  unsigned minor() const { return minor_; }
  /// nullptr when `opcode` is not an opcode of this version.
  const OpcodeInfo *lookup(unsigned opcode) const;
  /// The co_names index an argument denotes (3.11's LOAD_GLOBAL keeps a NULL flag in bit 0).
  unsigned nameIndex(const OpcodeInfo &info, unsigned arg) const;
  /// The byte offset a jump goes to, from the instruction's offset and argument.
  std::optional<unsigned> jumpTarget(const OpcodeInfo &info, unsigned offset, unsigned arg) const;

private:
  OpcodeTable(unsigned major, unsigned minor) : major_(major), minor_(minor) {}
  friend struct OpcodeTableBuilder;

  unsigned major_, minor_;
  std::array<OpcodeInfo, 256> byNumber_{};
};

} // namespace sotc::frontend

#endif // SOTC_FRONTEND_OPCODES_H
