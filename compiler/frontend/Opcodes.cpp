#include "compiler/frontend/Opcodes.h"

#include <cstring>

namespace sotc::frontend {

struct OpcodeTableBuilder {
  template <typename Fill> static OpcodeTable build(unsigned minor, Fill fill) {
    OpcodeTable table(3, minor);
    fill(table);
    return table;
  }

  static void set(OpcodeTable &table, const char *name, unsigned number, unsigned flags,
                  Opcode op) {
    table.byNumber_[number] = {name, number, flags, 0, op};
  }

  static void setCacheEntries(OpcodeTable &table, const char *name, unsigned entries) {
    for (OpcodeInfo &info : table.byNumber_)
      if (info.name && std::strcmp(info.name, name) == 0)
        info.cacheEntries = entries;
  }
};

#define OPCODE(name, number, flags) OpcodeTableBuilder::set(t, #name, number, flags, Opcode::name);
#define CACHE_ENTRIES(name, entries) OpcodeTableBuilder::setCacheEntries(t, #name, entries);

const OpcodeTable *OpcodeTable::forVersion(unsigned major, unsigned minor) {
  static const OpcodeTable py311 = OpcodeTableBuilder::build(11, [](OpcodeTable &t) {
#include "compiler/frontend/Opcodes311.inc"
  });
  static const OpcodeTable py312 = OpcodeTableBuilder::build(12, [](OpcodeTable &t) {
#include "compiler/frontend/Opcodes312.inc"
  });
  static const OpcodeTable py313 = OpcodeTableBuilder::build(13, [](OpcodeTable &t) {
#include "compiler/frontend/Opcodes313.inc"
  });
  if (major != 3)
    return nullptr;
  switch (minor) {
  case 11:
    return &py311;
  case 12:
    return &py312;
  case 13:
    return &py313;
  default:
    return nullptr;
  }
}

#undef OPCODE
#undef CACHE_ENTRIES

std::string OpcodeTable::supportedVersions() { return "3.11, 3.12, 3.13"; }

const OpcodeInfo *OpcodeTable::lookup(unsigned opcode) const {
  if (opcode >= byNumber_.size() || !byNumber_[opcode].name)
    return nullptr;
  return &byNumber_[opcode];
}

unsigned OpcodeTable::nameIndex(const OpcodeInfo &info, unsigned arg) const {
  switch (info.op) {
  case Opcode::LOAD_GLOBAL:
    return arg >> 1;
  case Opcode::LOAD_ATTR:
    return minor_ >= 12 ? arg >> 1 : arg;
  case Opcode::LOAD_SUPER_ATTR:
    return arg >> 2;
  default:
    return arg;
  }
}

bool OpcodeTable::pushesNull(const OpcodeInfo &info, unsigned arg) const {
  return (info.op == Opcode::LOAD_GLOBAL || (info.op == Opcode::LOAD_ATTR && minor_ >= 12)) &&
         (arg & 1);
}

std::vector<unsigned> OpcodeTable::localIndices(const OpcodeInfo &info, unsigned arg) const {
  switch (info.op) {
  case Opcode::LOAD_FAST_LOAD_FAST:
  case Opcode::STORE_FAST_LOAD_FAST:
  case Opcode::STORE_FAST_STORE_FAST:
    return {arg >> 4, arg & 15};
  default:
    return {arg};
  }
}

unsigned OpcodeTable::compareIndex(unsigned arg) const {
  return minor_ == 11 ? arg : minor_ == 12 ? arg >> 4 : arg >> 5;
}

std::optional<unsigned> OpcodeTable::jumpTarget(const OpcodeInfo &info, unsigned offset,
                                                unsigned arg) const {
  if (!info.isJump())
    return std::nullopt;
  // Arguments count 2-byte code units, relative to the end of the inline caches; the
  // *BACKWARD* forms jump backwards (3.11's POP_JUMP_BACKWARD_IF_*, JUMP_BACKWARD).
  long next = static_cast<long>(offset) + 2 + 2 * static_cast<long>(info.cacheEntries);
  long delta = 2 * static_cast<long>(arg);
  long target = info.has(kHasJabs)                   ? delta
                : std::strstr(info.name, "BACKWARD") ? next - delta
                                                     : next + delta;
  if (target < 0)
    return std::nullopt;
  return static_cast<unsigned>(target);
}

} // namespace sotc::frontend
