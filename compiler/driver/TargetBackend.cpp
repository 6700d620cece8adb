//===- TargetBackend.cpp - The CUDA and the CPU backends ---------------------------------===//
#include "compiler/driver/TargetBackend.h"

#include "compiler/target/cpu/CpuTarget.h"
#include "compiler/target/cuda/CudaTarget.h"
#include "dialects/sched/Utils/Mesh.h"

#include <algorithm>

namespace sotc::driver {
namespace {

/// A fatbin: SASS for each architecture, PTX for the highest; cuBLASLt runs GEMM steps.
class CudaBackend : public TargetBackend {
public:
  explicit CudaBackend(const pipelines::PipelineOptions &options) : options_(options) {}

  std::string outputNeeded() const override {
    return "a fatbin needs an output file (-o kernels.fatbin)";
  }

  Expected<TargetBinary> build(mlir::ModuleOp kernels,
                               std::map<std::string, manifest::KernelLaunch> &launches,
                               const std::string &abiNote,
                               Instrumentation &instrumentation) const override {
    Expected<cuda::Fatbin> fatbin =
        cuda::buildFatbin(kernels, options_.gpuArchs,
                          [&](const std::string &name) { return instrumentation.step(name); });
    if (!fatbin)
      return fatbin.error();
    // What ptxas allotted: registers per architecture, and the static shared memory (the
    // block's buffers and what the reductions use) of the most demanding one.
    for (auto &[arch, usages] : fatbin->usage)
      for (auto &[kernel, usage] : usages) {
        launches[kernel].registers[arch] = usage.registers;
        launches[kernel].sharedBytes =
            std::max<int64_t>(launches[kernel].sharedBytes, usage.sharedBytes);
      }
    return TargetBinary{std::move(fatbin->bytes),
                        {"cuda",
                         cuda::kTriple,
                         "",
                         {},
                         {},
                         options_.gpuArchs,
                         options_.gpuArchs.back(),
                         "__global__ void kernel(T *outputs..., const T *inputs...) "
                         "<<<grid, block>>>; buffers 16-byte aligned, never overlapping" +
                             abiNote,
                         "cublaslt"}};
  }

private:
  pipelines::PipelineOptions options_;
};

/// An x86-64 shared library: the kernels for the named CPU and for each variant, in tables
/// the runtime picks from by its machine; CBLAS runs GEMM steps.
class CpuBackend : public TargetBackend {
public:
  explicit CpuBackend(const pipelines::PipelineOptions &options) : options_(options) {}

  std::string outputNeeded() const override {
    return "a shared library needs an output file (-o kernels.so)";
  }

  Expected<TargetBinary> build(mlir::ModuleOp kernels,
                               std::map<std::string, manifest::KernelLaunch> &launches,
                               const std::string &abiNote,
                               Instrumentation &instrumentation) const override {
    Expected<std::string> library = [&] {
      mlir::TimingScope codegen = instrumentation.step("LLVM codegen and lld link");
      std::map<std::string, cpu::KernelSignature> signatures;
      // The kernel table's sizes are those at s0 = 1, as the runtime checks a plan at load.
      for (const auto &[kernel, launch] : launches) {
        cpu::KernelSignature &signature = signatures[kernel];
        signature = {
            launch.grid.factor, {}, launch.takesRows ? std::max<int>(1, launch.sizes.size()) : 0};
        for (const contract::SizeProduct &bytes : launch.bufferBytes)
          signature.bufferBytes.push_back(bytes.factor);
      }
      return cpu::buildSharedLibrary(
          kernels, {options_.cpu, options_.cpuVariants, options_.optLevel, signatures});
    }();
    if (!library)
      return library.error();
    Expected<std::vector<std::string>> features = cpu::cpuFeatures(options_.cpu);
    if (!features)
      return features.error();
    std::vector<manifest::Target::Variant> variants;
    for (const std::string &cpu : options_.cpuVariants) {
      Expected<std::vector<std::string>> has = cpu::cpuFeatures(cpu);
      if (!has)
        return has.error();
      variants.push_back({cpu, cpu::variantTable(cpu), *has});
    }
    return TargetBinary{std::move(*library),
                        {"cpu",
                         cpu::kTriple,
                         options_.cpu,
                         *features,
                         variants,
                         {},
                         "",
                         "void kernel(int64_t begin, int64_t end, T *outputs..., const T "
                         "*inputs...); buffers never overlapping" +
                             abiNote,
                         "cblas"}};
  }

private:
  pipelines::PipelineOptions options_;
};

} // namespace

std::unique_ptr<TargetBackend> targetBackend(const pipelines::PipelineOptions &options) {
  if (options.target == pipelines::Target::Cuda)
    return std::make_unique<CudaBackend>(options);
  return std::make_unique<CpuBackend>(options);
}

} // namespace sotc::driver
