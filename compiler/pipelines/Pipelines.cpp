#include "compiler/pipelines/Pipelines.h"

#include "compiler/conversion/MapExprToLoops/Passes.h"
#include "compiler/conversion/SirToMapExpr/Passes.h"
#include "compiler/target/cpu/Passes.h"
#include "compiler/target/cuda/CudaTarget.h"
#include "compiler/target/cuda/Passes.h"
#include "dialects/mapexpr/IR/MapExprDialect.h"
#include "dialects/mapexpr/Transforms/Passes.h"
#include "dialects/sched/IR/SchedDialect.h"
#include "dialects/sched/Transforms/Passes.h"
#include "dialects/sir/IR/SirDialect.h"
#include "dialects/sir/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace sotc::pipelines {

namespace {

struct PhaseInfo {
  Phase phase;
  const char *name;
};
constexpr PhaseInfo kPhases[] = {
    {Phase::Sir, "sir"},         {Phase::Prim, "prim"},           {Phase::Fused, "fused"},
    {Phase::MapExpr, "mapexpr"}, {Phase::Scheduled, "scheduled"}, {Phase::Loops, "loops"},
    {Phase::Llvm, "llvm"}};

/// The sotc-pipeline options, as sotc-opt reads them.
struct PipelineCLOptions : mlir::PassPipelineOptions<PipelineCLOptions> {
  Option<std::string> target{*this, "target", llvm::cl::desc("cuda or cpu"),
                             llvm::cl::init("cuda")};
  Option<std::string> compileTo{*this, "compile-to",
                                llvm::cl::desc("the last phase: sir, prim, fused, mapexpr, "
                                               "scheduled, loops, llvm"),
                                llvm::cl::init("scheduled")};
};

} // namespace

const char *phaseName(Phase phase) { return kPhases[static_cast<int>(phase)].name; }

std::optional<Phase> phaseByName(const std::string &name) {
  if (name == "gpu") // CUDA's loops are gpu.func kernels
    return Phase::Loops;
  if (name == "nvvm") // and its LLVM dialect is NVVM's
    return Phase::Llvm;
  for (const PhaseInfo &p : kPhases)
    if (name == p.name)
      return p.phase;
  return std::nullopt;
}

const std::vector<Phase> &allPhases() {
  static const std::vector<Phase> phases = [] {
    std::vector<Phase> v;
    for (const PhaseInfo &p : kPhases)
      v.push_back(p.phase);
    return v;
  }();
  return phases;
}

void buildPipeline(mlir::OpPassManager &pm, const PipelineOptions &options, Phase upTo,
                   Phase from) {
  auto reaches = [&](Phase p) {
    return static_cast<int>(from) < static_cast<int>(p) &&
           static_cast<int>(upTo) >= static_cast<int>(p);
  };
  // Every pass whose output depends on the target reads it from the module.
  if (static_cast<int>(from) < static_cast<int>(upTo)) {
    sched::SchedAttachTargetOptions attach;
    attach.target = targetName(options.target);
    pm.addPass(sched::createSchedAttachTarget(attach));
  }
  if (reaches(Phase::Prim)) {
    pm.nest<sir::SubgraphOp>().addPass(sir::createSirFoldBatchNorm());
    pm.nest<sir::SubgraphOp>().addPass(sir::createSirDecompose());
    pm.nest<sir::SubgraphOp>().addPass(sir::createSirExpandConvolutions());
    pm.nest<sir::SubgraphOp>().addPass(sir::createSirUnmergeBatch());
    pm.nest<sir::SubgraphOp>().addPass(sir::createSirCheckBatchDims());
    pm.nest<sir::SubgraphOp>().addPass(sir::createSirFoldEmptyTensors());
    if (options.bf16Matmuls) {
      // The CPU's oneDNN stores a bfloat16 product in float32 (what follows reads it without
      // converting, a float32 bias its epilogue); cuBLASLt's half GEMMs round it.
      sir::SirBf16MatmulsOptions bf16;
      bf16.f32Products = options.target != Target::Cuda;
      pm.nest<sir::SubgraphOp>().addPass(sir::createSirBf16Matmuls(bf16));
    }
    sir::SirWidenHalfOptions widen;
    // cuBLASLt: f16/bf16, f32 accumulation; the CPU's oneDNN: bf16 (AMX, AVX-512 BF16).
    widen.halfMatmuls = true;
    widen.bf16MatmulsOnly = options.target != Target::Cuda;
    pm.nest<sir::SubgraphOp>().addPass(sir::createSirWidenHalf(widen));
    pm.addPass(sir::createSirHoistWeights());
  }
  if (reaches(Phase::Fused)) {
    pm.nest<sir::SubgraphOp>().addPass(sir::createSirFuse());
    pm.nest<sir::SubgraphOp>().addPass(sir::createSirStoreHalf());
  }
  if (reaches(Phase::MapExpr)) {
    // The GEMM plans and kernel models from here on hold each dynamic size as its stand-in.
    pm.addPass(sched::createSchedChooseStandIns());
    ConvertConvToStepOptions convSteps;
    convSteps.bf16 = options.bf16Matmuls;
    pm.nest<sir::SubgraphOp>().addPass(createConvertConvToStep(convSteps));
    pm.nest<sir::SubgraphOp>().addPass(createConvertIndexCopyToStep());
    pm.nest<sir::SubgraphOp>().addPass(createConvertRuntimePrimsToSteps());
    pm.nest<sir::SubgraphOp>().addPass(createConvertMatmulToGemm());
    pm.addPass(createConvertSirToMapExpr());
  }
  if (reaches(Phase::Scheduled)) {
    pm.nest<mapexpr::KernelOp>().addPass(mapexpr::createMapExprSchedule());
    if (options.target == Target::Cuda) {
      mapexpr::MapExprSpillRowsOptions spill;
      spill.sizeMax.assign(options.sizeMax.begin(), options.sizeMax.end());
      pm.addPass(mapexpr::createMapExprSpillRows(spill));
    }
  }
  bool cuda = options.target == Target::Cuda;
  if (reaches(Phase::Loops)) {
    ConvertMapExprToLoopsOptions loops;
    loops.testingBreak = options.testingBreak;
    pm.addPass(createConvertMapExprToLoops(loops));
    // The index arithmetic of the mesh replay folds to what the loops need.
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
  }
  if (reaches(Phase::Llvm) && cuda)
    buildGpuToNvvm(pm, options);
  if (reaches(Phase::Llvm) && !cuda) {
    // The CPU ABI: a [begin, end) range of the grid, then bare buffer pointers.
    pm.addPass(cpu::createCpuKernelAbi());
    // exp, log, tanh, erf as inline polynomials: vectorized loops without library calls.
    pm.addPass(cpu::createCpuApproximateMath());
    pm.addPass(cpu::createCpuExpandArith());
    buildLoopsToLlvm(pm, /*barePointers=*/true);
  }
}

namespace {
/// Upstream passes by name: registered once, parsed into `pm` (no builtin.module wrapper,
/// which would make a module-level manager run nothing).
void addUpstreamPipeline(mlir::OpPassManager &pm, const std::string &pipeline) {
  static const bool registered = [] {
    mlir::registerAllPasses();
    return true;
  }();
  (void)registered;
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm)))
    llvm::report_fatal_error(llvm::Twine("sotc: a pipeline does not parse: ") + pipeline);
}
} // namespace

void buildGpuToNvvm(mlir::OpPassManager &pm, const PipelineOptions &options) {
  std::string pipeline =
      "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1 "
      "index-bitwidth=" +
      std::to_string(options.gpuIndexBits) + "},canonicalize,cse,reconcile-unrealized-casts)";
  for (const std::string &arch : options.gpuArchs)
    pipeline += std::string(",nvvm-attach-target{module=") + kGpuModuleName + " chip=" + arch +
                " features=" + cuda::ptxFeature(arch) + " O=" + std::to_string(options.optLevel) +
                "}";
  addUpstreamPipeline(pm, pipeline);
  pm.nest<mlir::gpu::GPUModuleOp>().addPass(cuda::createCudaExternDynamicShared());
}

void buildLoopsToLlvm(mlir::OpPassManager &pm, bool barePointers) {
  std::string pipeline =
      std::string("scf-forall-to-for,convert-math-to-funcs,"
                  "expand-strided-metadata,convert-scf-to-cf,convert-math-to-llvm,"
                  "convert-math-to-libm,finalize-memref-to-llvm,convert-arith-to-llvm,"
                  "convert-index-to-llvm,convert-func-to-llvm{use-bare-ptr-memref-call-conv=") +
      (barePointers ? "1" : "0") + "},convert-cf-to-llvm,reconcile-unrealized-casts";
  addUpstreamPipeline(pm, pipeline);
}

void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<sir::SirDialect, sched::SchedDialect, mapexpr::MapExprDialect>();
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect, mlir::gpu::GPUDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect, mlir::scf::SCFDialect>();
  cuda::registerCudaTarget(registry);
}

void registerAllPasses() {
  mlir::registerTransformsPasses();
  sched::registerSchedPasses();
  sir::registerSirPasses();
  mapexpr::registerMapExprPasses();
  registerConvertConvToStep();
  registerConvertIndexCopyToStep();
  registerConvertRuntimePrimsToSteps();
  registerConvertMatmulToGemm();
  registerConvertSirToMapExpr();
  registerConvertMapExprToLoops();
  cpu::registerCpuPasses();
  cuda::registerCudaPasses();
  registerSotcPipelines();
}

void registerSotcPipelines() {
  mlir::registerPassPipeline(
      "sotc-pipeline", "sotc's pipeline from frontend sir to the given phase",
      [](mlir::OpPassManager &pm, llvm::StringRef text,
         llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> error) {
        PipelineCLOptions cl;
        if (mlir::failed(cl.parseFromString(text)))
          return mlir::failure();
        std::optional<Target> target = targetByName(cl.target);
        if (!target)
          return error("sotc-pipeline: target must be cuda or cpu, not '" + cl.target + "'");
        std::optional<Phase> upTo = phaseByName(cl.compileTo);
        if (!upTo)
          return error("sotc-pipeline: unknown phase '" + cl.compileTo + "'");
        PipelineOptions options;
        options.target = *target;
        buildPipeline(pm, options, *upTo);
        return mlir::success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)> describe) {
        describe(PipelineCLOptions());
      });
}

} // namespace sotc::pipelines
