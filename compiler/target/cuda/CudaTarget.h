//===- CudaTarget.h - Kernels as one multi-arch CUDA fatbin --------------------------------===//
//
// The CUDA target's binary: a module whose gpu.module @sotc_kernels is lowered to NVVM with
// one #nvvm.target per architecture becomes PTX per architecture (LLVM's NVPTX backend, in
// process), SASS per architecture (the toolkit's ptxas) and one fatbin (the toolkit's
// fatbinary) holding the SASS of every architecture and the PTX of the newest, so that later
// GPUs can still JIT it. The same module and options give the same bytes.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_TARGET_CUDA_CUDATARGET_H
#define SOTC_TARGET_CUDA_CUDATARGET_H

#include "compiler/support/Expected.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/Timing.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace sotc::cuda {

constexpr const char *kTriple = "nvptx64-nvidia-cuda";

/// The architectures of a `--gpu-arch` list ("sm_80,sm_90"), sorted oldest first and
/// without repeats; E9007 for one sotc does not compile for.
Expected<std::vector<std::string>> parseArchs(const std::string &list);
/// The PTX ISA an architecture needs, as an NVPTX feature ("+ptx80").
std::string ptxFeature(const std::string &arch);

/// What ptxas reports for one kernel on one architecture.
struct KernelUsage {
  int registers = 0;
  int sharedBytes = 0;
};

struct Fatbin {
  std::string bytes;
  /// Per architecture, per kernel.
  std::map<std::string, std::map<std::string, KernelUsage>> usage;
};

/// Times one external step (the driver's --timing).
using StepTimer = std::function<mlir::TimingScope(const std::string &)>;

/// The PTX of each architecture of `archs` (LLVM's NVPTX backend in process, libdevice from the
/// toolkit); `module`'s gpu.module, lowered to NVVM with one #nvvm.target per architecture,
/// becomes a gpu.binary. E9008 without a toolkit, E9005 when NVPTX refuses a kernel.
Expected<std::map<std::string, std::string>> emitPtx(mlir::ModuleOp module,
                                                     const std::vector<std::string> &archs);

/// Builds the fatbin from `module` (its gpu.module lowered to NVVM, one #nvvm.target per
/// architecture of `archs`). E9008 when ptxas or fatbinary is missing or fails.
Expected<Fatbin> buildFatbin(mlir::ModuleOp module, const std::vector<std::string> &archs,
                             const StepTimer &step);

/// The dialect extensions and translations the CUDA target needs in a context.
void registerCudaTarget(mlir::DialectRegistry &registry);

} // namespace sotc::cuda

#endif // SOTC_TARGET_CUDA_CUDATARGET_H
