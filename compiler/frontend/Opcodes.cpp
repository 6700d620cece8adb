#include "compiler/frontend/Opcodes.h"

#include <cstring>

namespace sotc::frontend {

struct OpcodeTableBuilder {
  static OpcodeTable py311() {
    OpcodeTable table(3, 11);
#define OPCODE(name, number, flags)                                                                \
  table.byNumber_[number] = {#name, number, flags, 0, Opcode::name};
#define CACHE_ENTRIES(name, entries) setCacheEntries(table, #name, entries);
#include "compiler/frontend/Opcodes311.inc"
#undef OPCODE
#undef CACHE_ENTRIES
    return table;
  }

  static void setCacheEntries(OpcodeTable &table, const char *name, unsigned entries) {
    for (OpcodeInfo &info : table.byNumber_)
      if (info.name && std::strcmp(info.name, name) == 0)
        info.cacheEntries = entries;
  }
};

const OpcodeTable *OpcodeTable::forVersion(unsigned major, unsigned minor) {
  static const OpcodeTable py311 = OpcodeTableBuilder::py311();
  if (major == 3 && minor == 11)
    return &py311;
  return nullptr;
}

std::string OpcodeTable::supportedVersions() { return "3.11"; }

const OpcodeInfo *OpcodeTable::lookup(unsigned opcode) const {
  if (opcode >= byNumber_.size() || !byNumber_[opcode].name)
    return nullptr;
  return &byNumber_[opcode];
}

unsigned OpcodeTable::nameIndex(const OpcodeInfo &info, unsigned arg) const {
  if (major_ == 3 && minor_ == 11 && std::strcmp(info.name, "LOAD_GLOBAL") == 0)
    return arg >> 1;
  return arg;
}

std::optional<unsigned> OpcodeTable::jumpTarget(const OpcodeInfo &info, unsigned offset,
                                                unsigned arg) const {
  if (!info.isJump())
    return std::nullopt;
  // 3.11: arguments count 2-byte code units, relative to the end of the inline caches;
  // the *_BACKWARD* forms jump backwards.
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
