//===- Pipelines.h - sotc's pass pipeline, its options and phases ------------------------===//
//
// The one place that says which passes run, in which order, for which target. Every tool
// (sotc, sotc-opt, the fuzz target, tests) builds its pipeline and registers its dialects
// through here, as upstream's GPUToNVVMPipeline and IREE's Pipelines/ do.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_PIPELINES_PIPELINES_H
#define SOTC_PIPELINES_PIPELINES_H

#include "dialects/sched/Utils/Target.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <optional>
#include <string>
#include <vector>

namespace sotc::pipelines {

/// Where a compilation stops, in pipeline order. Each phase names the IR it leaves.
enum class Phase {
  Sir,       // API-level sir statements, as the frontend emits them
  Prim,      // after sotc-sir-decompose: primitives only
  Fused,     // after sotc-sir-fuse: sir.group fusion groups
  MapExpr,   // after sotc-convert-sir-to-mapexpr: mapexpr.kernel + mapexpr.launch, mapexpr.gemm
  Scheduled, // after sotc-mapexpr-schedule: every AnchoredMapStmt has its mesh and loops
  Loops,     // after sotc-convert-mapexpr-to-loops: loop nests on memrefs (CUDA: gpu.func)
  Llvm,      // kernels in the LLVM dialect (CUDA: NVVM, with a target per architecture)
};

/// "sir", "prim", "fused", "mapexpr", "scheduled"
const char *phaseName(Phase phase);
std::optional<Phase> phaseByName(const std::string &name);
/// Every phase, in order.
const std::vector<Phase> &allPhases();

using sched::Target;
using sched::targetByName;
using sched::targetName;

/// Everything a compilation is parameterized by, from the command line or a build rule.
struct PipelineOptions {
  Target target = Target::Cuda;
  /// CUDA: the archs that get SASS ("sm_80", ...); the highest also gets PTX.
  std::vector<std::string> gpuArchs = {"sm_80", "sm_90"};
  /// CPU: the LLVM CPU name ("x86-64-v3", "native"), and the CPUs the library also carries
  /// every kernel for, which the runtime picks from by its machine (cpu::CpuOptions).
  std::string cpu = "x86-64-v3";
  std::vector<std::string> cpuVariants = {"x86-64-v4"};
  int optLevel = 3;
  /// CUDA: the width of index arithmetic in kernels (32 when every tensor has fewer than 2^31
  /// elements; the driver decides).
  int gpuIndexBits = 64;
  /// Frontend: record host-callback boundaries instead of failing, and force boundaries at
  /// these APIs.
  bool allowHostCallbacks = false;
  std::vector<std::string> breakOn;
  /// Instrumentation: time every pass and step; write the IR after a pass ("all": every
  /// pass) into files under dumpDir.
  bool timing = false;
  std::string dumpIrAfter;
  std::string dumpDir = "dumps";
  /// Testing only: a GPU lowering broken on purpose (ConvertMapExprToLoops' testing-break).
  std::string testingBreak;
  /// The most each dynamic size may be, s0 first (an input's `T<=N`, a table sliced to it), 0
  /// for no bound: CUDA keeps rows of a size in shared memory only within one
  /// (sotc-mapexpr-spill-rows).
  std::vector<int64_t> sizeMax;
  /// `--precision bf16`: float32 matmuls read bfloat16 operands, accumulate in float32 and
  /// round their products to bfloat16 (sotc-sir-bf16-matmuls); false: as traced.
  bool bf16Matmuls = false;
};

/// Adds the passes that take a module at phase `from` (the frontend's sir by default) to
/// `upTo`.
void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options, Phase upTo,
                   Phase from = Phase::Sir);
/// The loops -> LLVM dialect part of it (upstream conversions; math without an LLVM
/// intrinsic calls libm). With `barePointers`, memrefs become plain element pointers (the
/// CPU kernel ABI); without, MLIR's memref descriptors.
void buildLoopsToLlvm(mlir::OpPassManager &pm, bool barePointers);
/// The CUDA part: the gpu.module's kernels to NVVM (bare pointers, `gpuIndexBits`-bit index
/// arithmetic), and one #nvvm.target per architecture.
void buildGpuToNvvm(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Every dialect sotc's IR may hold, for every tool.
void registerAllDialects(mlir::DialectRegistry &registry);
/// The `sotc-pipeline` pass pipeline
/// (`sotc-opt --sotc-pipeline="target=cpu compile-to=scheduled"`).
void registerSotcPipelines();
/// Every sotc pass, the upstream passes sotc-opt offers, and registerSotcPipelines().
void registerAllPasses();

} // namespace sotc::pipelines

#endif // SOTC_PIPELINES_PIPELINES_H
