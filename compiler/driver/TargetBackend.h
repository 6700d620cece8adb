//===- TargetBackend.h - What a target makes of the kernels' module ----------------------===//
//
// The driver's one branch on the target: a backend per target (IREE's TargetBackend shape)
// turns the kernels, lowered to the LLVM dialect, into the artifact's binary and its
// description in the manifest.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_DRIVER_TARGETBACKEND_H
#define SOTC_DRIVER_TARGETBACKEND_H

#include "compiler/driver/Driver.h"
#include "compiler/support/Expected.h"
#include "compiler/target/manifest/Manifest.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <memory>
#include <string>

namespace sotc::driver {

/// The artifact's binary and the manifest's description of it.
struct TargetBinary {
  std::string bytes;
  manifest::Target target;
};

class TargetBackend {
public:
  virtual ~TargetBackend() = default;
  /// Why stdout does not do as the output: the file the binary needs.
  virtual std::string outputNeeded() const = 0;
  /// The binary of `kernels` (at the LLVM phase). What building it finds out about a launch
  /// (CUDA: registers, shared memory) goes into `launches`; `abiNote` ends the ABI's text.
  virtual Expected<TargetBinary> build(mlir::ModuleOp kernels,
                                       std::map<std::string, manifest::KernelLaunch> &launches,
                                       const std::string &abiNote,
                                       Instrumentation &instrumentation) const = 0;
};

/// The backend of `options.target`.
std::unique_ptr<TargetBackend> targetBackend(const pipelines::PipelineOptions &options);

} // namespace sotc::driver

#endif // SOTC_DRIVER_TARGETBACKEND_H
