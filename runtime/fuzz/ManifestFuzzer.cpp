// libFuzzer target: the runtime's manifest reader on arbitrary bytes. A manifest either reads
// into a consistent plan or is refused with a coded Error; nothing else may happen.
#include "runtime/src/Artifact.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    sotc::runtime::readManifest(std::string(reinterpret_cast<const char *>(data), size),
                                "fuzz.manifest.json");
  } catch (const sotc::runtime::Error &) {
  }
  return 0;
}
