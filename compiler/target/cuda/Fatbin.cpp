#include "compiler/target/cuda/Fatbin.h"

#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <cstring>

namespace sotc::cuda {
namespace {

template <typename T> T read(std::string_view bytes, size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

CodedError bad(const std::string &why) { return CodedError(DiagCode::InspectMismatch, why); }

/// The kernels a cubin defines: its global function symbols that CUDA's ELF marks as entry
/// points (st_other 0x10, STO_CUDA_ENTRY); helper functions are weak or local.
std::vector<std::string> kernelsOf(std::string_view elf) {
  std::vector<std::string> names;
  auto object = llvm::object::ObjectFile::createELFObjectFile(
      llvm::MemoryBufferRef(llvm::StringRef(elf.data(), elf.size()), "cubin"));
  if (!object) {
    llvm::consumeError(object.takeError());
    return names;
  }
  for (const llvm::object::SymbolRef &sym : (*object)->symbols()) {
    llvm::Expected<llvm::object::SymbolRef::Type> type = sym.getType();
    llvm::Expected<llvm::StringRef> name = sym.getName();
    llvm::object::ELFSymbolRef elfSym(sym);
    if (type && name && *type == llvm::object::SymbolRef::ST_Function && !name->empty() &&
        elfSym.getBinding() == llvm::ELF::STB_GLOBAL && (elfSym.getOther() & 0x10))
      names.push_back(name->str());
    if (!type)
      llvm::consumeError(type.takeError());
    if (!name)
      llvm::consumeError(name.takeError());
  }
  return names;
}

} // namespace

Expected<std::vector<FatbinEntry>> readFatbin(std::string_view bytes) {
  // Header: magic, version, header size, then the size of the entries that follow.
  if (bytes.size() < 16 || read<uint32_t>(bytes, 0) != 0xBA55ED50u)
    return bad("not a fatbin (no 0xBA55ED50 magic)");
  size_t offset = read<uint16_t>(bytes, 6);
  uint64_t end = offset + read<uint64_t>(bytes, 8);
  if (end > bytes.size())
    return bad("truncated fatbin: its header promises " + std::to_string(end) + " bytes");
  std::vector<FatbinEntry> entries;
  // Each entry: kind (1 PTX, 2 ELF), header size, payload size, flags, architecture.
  while (offset + 64 <= end) {
    uint16_t kind = read<uint16_t>(bytes, offset);
    uint32_t headerSize = read<uint32_t>(bytes, offset + 4);
    uint64_t payloadSize = read<uint64_t>(bytes, offset + 8);
    uint32_t arch = read<uint32_t>(bytes, offset + 28);
    uint64_t flags = read<uint64_t>(bytes, offset + 40);
    if ((kind != 1 && kind != 2) || offset + headerSize + payloadSize > end)
      return bad("malformed fatbin entry at byte " + std::to_string(offset));
    FatbinEntry e{kind == 2 ? FatbinEntry::Kind::Sass : FatbinEntry::Kind::Ptx,
                  "sm_" + std::to_string(arch),
                  (flags & 0x8000) != 0 || (flags & 0x2000) != 0,
                  bytes.substr(offset + headerSize, payloadSize),
                  {}};
    if (e.kind == FatbinEntry::Kind::Sass && !e.compressed)
      e.kernels = kernelsOf(e.payload);
    entries.push_back(std::move(e));
    offset += headerSize + payloadSize;
  }
  return entries;
}

} // namespace sotc::cuda
