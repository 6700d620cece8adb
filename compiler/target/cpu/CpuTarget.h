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

#include <string>
#include <vector>

namespace sotc::cpu {

constexpr const char *kTriple = "x86_64-unknown-linux-gnu";

struct CpuOptions {
  std::string cpu = "x86-64-v3"; // an LLVM x86 CPU name, or "native"
  int optLevel = 3;              // 0-3
};

/// The shared library's bytes. E9004 for a CPU LLVM does not know; E9005 when LLVM or lld
/// fails (a compiler bug).
Expected<std::string> buildSharedLibrary(mlir::ModuleOp module, const CpuOptions &options);

/// The instruction-set extensions code for `cpu` may use, of those a runtime must find on its
/// machine before it loads the library (sse4.2, avx, avx2, fma, avx512f, ...); E9004 for a
/// CPU LLVM does not know.
Expected<std::vector<std::string>> cpuFeatures(const std::string &cpu);

} // namespace sotc::cpu

#endif // SOTC_TARGET_CPU_CPUTARGET_H
