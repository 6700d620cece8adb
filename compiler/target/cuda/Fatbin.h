//===- Fatbin.h - Reading NVIDIA's fatbin container ---------------------------------------===//
//
// A fatbin (magic 0xBA55ED50) holds one entry per image: SASS as a CUDA ELF (a cubin) for
// one architecture, or PTX text (often zstd-compressed) for one architecture. `sotc inspect`
// lists them and checks them against the manifest.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_TARGET_CUDA_FATBIN_H
#define SOTC_TARGET_CUDA_FATBIN_H

#include "compiler/support/Expected.h"

#include <string>
#include <string_view>
#include <vector>

namespace sotc::cuda {

struct FatbinEntry {
  enum class Kind { Sass, Ptx } kind;
  std::string arch;                 // "sm_90"
  bool compressed = false;          // the payload is compressed (PTX, usually)
  std::string_view payload;         // into the fatbin's bytes
  std::vector<std::string> kernels; // SASS: the kernel entry points its ELF defines
};

/// The entries of `bytes`; E9006 when it is no fatbin or an entry runs past its end.
Expected<std::vector<FatbinEntry>> readFatbin(std::string_view bytes);

} // namespace sotc::cuda

#endif // SOTC_TARGET_CUDA_FATBIN_H
