//===- Interpreter.h - One kernel launch run on the CPU with CUDA's semantics ---------------===//
//
// A launch runs block after block (several host threads take blocks side by side: blocks are
// independent, as CUDA lets them be). Within a block, warps of 32 lanes execute together;
// each lane keeps its own program counter, the lanes at the lowest one run as a group (so
// branches that diverge reconverge where they meet again), lanes that reach bar.sync wait for
// the whole block, and shfl.sync/vote.sync exchange values between the lanes of a warp that
// take part. While it runs it checks, as compute-sanitizer does, every access against the
// buffers it may touch, shared memory for races between barriers, barriers that not every
// thread reaches, and shuffles that read lanes not taking part; the first fault ends the
// launch with a report naming kernel, block, thread, address and PTX line.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_EMULATOR_INTERPRETER_H
#define SOTC_RUNTIME_EMULATOR_INTERPRETER_H

#include "runtime/src/emulator/Ptx.h"

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

namespace sotc::runtime::emulator {

/// Memory a kernel may access in the global space: an allocation or a module's variable.
struct Region {
  uint64_t base = 0, bytes = 0;
  std::string what; // "allocation", "__cudart_i2opi_f"
};

/// What a launch found wrong (docs/emulator.md lists the kinds); the message is one line.
class Fault : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct LaunchConfig {
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  uint64_t dynamicSharedBytes = 0;
  void **params = nullptr; // one pointer per kernel parameter, to its value
};

/// Runs `kernel` to completion; `regions` sorted by base. `threads` host threads take blocks
/// (0: as many as the machine has, at most 8). Throws Fault.
void runKernel(const Kernel &kernel, const LaunchConfig &config,
               const std::vector<Region> &regions, unsigned threads);

} // namespace sotc::runtime::emulator

#endif // SOTC_RUNTIME_EMULATOR_INTERPRETER_H
