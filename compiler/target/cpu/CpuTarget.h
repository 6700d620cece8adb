//===- CpuTarget.h - Kernels as an x86-64 shared library ----------------------------------===//
//
// The CPU target's binary: an LLVM-dialect module of kernels (each with the CPU ABI of
// sotc-cpu-kernel-abi) becomes LLVM IR with the target's triple and data layout, optimized,
// compiled to an object by LLVM's TargetMachine and linked into an ELF shared library by lld,
// all in this process. The same module and options give the same bytes.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_TARGET_CPU_CPUTARGET_H
#define SOTC_TARGET_CPU_CPUTARGET_H

#include "compiler/support/Expected.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sotc::cpu {

constexpr const char *kTriple = "x86_64-unknown-linux-gnu";

/// What a kernel was compiled for: its grid and the bytes of each of its buffers (outputs,
/// then inputs); over a dynamic size s0, those at s0 = 1.
struct KernelSignature {
  int64_t grid = 0;
  std::vector<int64_t> bufferBytes;
  int sizes = 0; // the call's dynamic sizes it takes before its buffers (s0: 1)
};

struct CpuOptions {
  std::string cpu = "x86-64-v3"; // an LLVM x86 CPU name, or "native"
  /// CPUs the library also carries every kernel for (x86-64-v4 on top of x86-64-v3), each in
  /// a kernel table of its own (variantTable); the runtime picks the last one its machine runs.
  std::vector<std::string> variants;
  int optLevel = 3;              // 0-3
  std::map<std::string, KernelSignature> kernels; // by symbol, for the library's kernel table
};

/// The library's kernel table, which the runtime reads instead of looking up symbols and
/// checks each step against: the array `sotc_kernels`, one entry per kernel by name, and its
/// length in the int64 `sotc_kernel_count`. Entry: {const char *name; int64_t grid; int64_t
/// buffers; const int64_t *buffer_bytes; void *function}.
constexpr const char *kKernelTable = "sotc_kernels";
constexpr const char *kKernelCount = "sotc_kernel_count";

/// The kernel table of a variant CPU: "sotc_kernels_x86_64_v4" for x86-64-v4, the same kernels
/// in the same order as sotc_kernels (and as many), compiled for that CPU.
std::string variantTable(const std::string &cpu);

/// The shared library's bytes, with the kernel table of `options.kernels` and one per variant.
/// E9004 for a CPU LLVM does not know, or a variant that lacks an extension of `options.cpu`;
/// E9005 when LLVM or lld fails (a compiler bug).
Expected<std::string> buildSharedLibrary(mlir::ModuleOp module, const CpuOptions &options);

/// The instruction-set extensions code for `cpu` may use, of those a runtime must find on its
/// machine before it loads the library (sse4.2, avx, avx2, fma, avx512f, ...); E9004 for a
/// CPU LLVM does not know.
Expected<std::vector<std::string>> cpuFeatures(const std::string &cpu);

} // namespace sotc::cpu

#endif // SOTC_TARGET_CPU_CPUTARGET_H
