#include "compiler/driver/Driver.h"

#include "compiler/conversion/SirToMapExpr/BuildKernel.h"
#include "compiler/frontend/SirEmitter.h"
#include "compiler/frontend/TraceReader.h"
#include "compiler/support/Format.h"
#include "compiler/support/MlirDiagnostics.h"
#include "compiler/support/OutputFile.h"
#include "compiler/target/cpu/CpuTarget.h"
#include "compiler/target/manifest/Manifest.h"

#include "dialects/mapexpr/IR/MapExprDialect.h"
#include "dialects/sir/IR/SirDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

namespace sotc::driver {

std::unique_ptr<mlir::MLIRContext> createContext() {
  mlir::DialectRegistry registry;
  pipelines::registerAllDialects(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

frontend::Translation translateTrace(const std::string &path,
                                     const pipelines::PipelineOptions &options) {
  return translateTrace(frontend::loadTrace(path), options);
}

frontend::Translation translateTrace(const trace::Trace &loaded,
                                     const pipelines::PipelineOptions &options) {
  frontend::TranslateOptions frontendOptions;
  frontendOptions.allowHostCallbacks = options.allowHostCallbacks;
  frontendOptions.breakOn = options.breakOn;
  return frontend::translate(loaded, frontendOptions);
}

Instrumentation::Instrumentation(const pipelines::PipelineOptions &options) : options_(options) {
  timing_.setEnabled(options.timing);
  root_ = timing_.getRootScope();
}

mlir::TimingScope Instrumentation::step(llvm::StringRef name) { return root_.nest(name); }

void Instrumentation::attach(mlir::PassManager &pm, const std::string &label) {
  if (options_.timing) {
    passScopes_.push_back(std::make_unique<mlir::TimingScope>(root_.nest("passes " + label)));
    pm.enableTiming(*passScopes_.back());
  }
  if (options_.dumpIrAfter.empty())
    return;
  std::string pass = options_.dumpIrAfter, dir = options_.dumpDir + "/" + label;
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    throw CodedError(DiagCode::CliOutputUnwritable,
                     "cannot create the dump folder " + dir + ": " + ec.message());
  pm.getContext()->disableMultithreading(); // MLIR prints IR only from one thread
  pm.enableIRPrintingToFileTree([](mlir::Pass *, mlir::Operation *) { return false; },
                                [pass](mlir::Pass *p, mlir::Operation *) {
                                  return pass == "all" || p->getArgument() == pass;
                                },
                                /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
                                /*printAfterOnlyOnFailure=*/false, dir);
}

void Instrumentation::detach() {
  if (!passScopes_.empty())
    passScopes_.back()->stop();
}

namespace {
/// Runs the pipeline from `from` to `upTo` on `module`; a failure is the pass's coded
/// diagnostic with the Python line (E9003 without a code).
void runPipeline(mlir::ModuleOp module, const std::string &path,
                 const pipelines::PipelineOptions &options, pipelines::Phase from,
                 pipelines::Phase upTo, Instrumentation &instrumentation) {
  mlir::MLIRContext *context = module.getContext();
  mlir::PassManager pm(context);
  pipelines::buildPipeline(pm, options, upTo, from);
  instrumentation.attach(pm, std::string(pipelines::phaseName(from)) + "-to-" +
                                 pipelines::phaseName(upTo));
  CodedDiagnosticCapture capture(context, DiagCode::CliPassFailed);
  mlir::LogicalResult result = pm.run(module);
  instrumentation.detach();
  if (mlir::failed(result)) {
    if (std::optional<CodedError> error = capture.error())
      throw CodedError(error->code(), path + ": " + error->what());
    throw CodedError(DiagCode::CliPassFailed,
                     path + ": the pipeline failed to reach phase " + pipelines::phaseName(upTo));
  }
}
} // namespace

mlir::OwningOpRef<mlir::ModuleOp> compileTrace(mlir::MLIRContext &context, const std::string &path,
                                               const pipelines::PipelineOptions &options,
                                               pipelines::Phase upTo, FrontendResult *frontend,
                                               Instrumentation *instrumentation) {
  std::optional<Instrumentation> own;
  if (!instrumentation)
    instrumentation = &own.emplace(options);
  FrontendResult result;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    mlir::TimingScope frontendTime = instrumentation->step("frontend");
    result.trace = frontend::loadTrace(path);
    result.translation = translateTrace(result.trace, options);
    module = frontend::emitSir(result.translation, context);
  }
  if (frontend)
    *frontend = std::move(result);
  runPipeline(*module, path, options, pipelines::Phase::Sir, upTo, *instrumentation);
  return module;
}

void writeCpuLibrary(const std::string &path, const pipelines::PipelineOptions &options,
                     const std::string &output) {
  if (output.empty() || output == "-")
    throw CodedError(DiagCode::CliOutputUnwritable,
                     "a shared library needs an output file (-o kernels.so), not stdout");
  auto context = createContext();
  pipelines::PipelineOptions cpu = options;
  cpu.target = pipelines::Target::Cpu;
  Instrumentation instrumentation(cpu);
  FrontendResult frontend;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      compileTrace(*context, path, cpu, pipelines::Phase::Loops, &frontend, &instrumentation);
  // Each kernel's grid, as the loops have it; the manifest tells the runtime.
  std::map<std::string, int64_t> grids;
  module->walk([&](mlir::scf::ForallOp grid) {
    grids[grid->getParentOfType<mlir::func::FuncOp>().getSymName().str()] =
        grid.getStaticUpperBound()[0];
  });
  runPipeline(*module, path, cpu, pipelines::Phase::Loops, pipelines::Phase::Llvm, instrumentation);
  // The subgraphs are the host's plan: the manifest describes them, the library holds kernels.
  mlir::OwningOpRef<mlir::ModuleOp> kernels = module->clone();
  for (sir::SubgraphOp subgraph : llvm::make_early_inc_range(kernels->getOps<sir::SubgraphOp>()))
    subgraph.erase();
  Expected<std::string> library = [&] {
    mlir::TimingScope codegen = instrumentation.step("LLVM codegen and lld link");
    return cpu::buildSharedLibrary(*kernels, {options.cpu, options.optLevel});
  }();
  if (!library)
    throw CodedError(library.error().code(), path + ": " + library.error().what());
  Expected<std::vector<std::string>> features = cpu::cpuFeatures(options.cpu);
  if (!features)
    throw CodedError(features.error().code(), path + ": " + features.error().what());
  mlir::TimingScope writing = instrumentation.step("manifest and output files");
  auto traceBytes = llvm::MemoryBuffer::getFile(path);
  std::string manifest = manifest::writeManifest(
      frontend.trace,
      {llvm::sys::path::filename(path).str(),
       manifest::sha256(traceBytes ? (*traceBytes)->getBuffer() : "")},
      frontend.translation, *module, grids,
      {"cpu", cpu::kTriple, options.cpu, *features,
       "void kernel(int64_t begin, int64_t end, T *outputs..., const T *inputs...)", "cblas"},
      {llvm::sys::path::filename(output).str(), manifest::sha256(*library)});
  writeOutputFile(output, *library);
  try {
    writeOutputFile(manifestPath(output), manifest);
  } catch (const CodedError &) {
    llvm::sys::fs::remove(output); // both or neither
    throw;
  }
}

std::string manifestPath(const std::string &binary) {
  llvm::StringRef stem(binary);
  if (!stem.consume_back(".so"))
    stem.consume_back(".fatbin");
  return stem.str() + ".manifest.json";
}

std::string printModule(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags()
                        .enableDebugInfo(/*enable=*/true, /*prettyForm=*/false)
                        .useLocalScope());
  os << "\n";
  return text;
}

namespace {
/// A GEMM step in the kernels' text form: a library call, not loops.
///   matmul_16(&t_var_9, t_var_7, t_w2, t_b2) {
///     LibraryCall(gemm, m=32, n=256, k=1024) {
///       matmul(&t_var_9, t_var_7, t_w2);
///       add_bias(&t_var_9, t_b2);
///     }
///   }
std::string gemmText(mapexpr::GemmOp gemm) {
  auto name = [](mlir::Value v) { return "t_" + mapexpr::tensorName(v); };
  auto shape = [](mlir::Value v) {
    llvm::ArrayRef<int64_t> s = mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
    return std::vector<int64_t>(s.begin(), s.end());
  };
  mapexpr::GemmPlan p = *mapexpr::planGemm(shape(gemm.getA()), shape(gemm.getB()),
                                           gemm.getTransposeA(), gemm.getTransposeB());
  std::string out = name(gemm.getResult()), text = gemm.getName().str() + "(&" + out + ", " +
                                                   name(gemm.getA()) + ", " + name(gemm.getB());
  if (gemm.getBias())
    text += ", " + name(gemm.getBias());
  text += ") {\n  LibraryCall(gemm, m=" + std::to_string(p.m) + ", n=" + std::to_string(p.n) +
          ", k=" + std::to_string(p.k);
  if (p.transposeA)
    text += ", transpose_a";
  if (p.transposeB)
    text += ", transpose_b";
  if (!p.batch.empty())
    text += ", batch=" + formatInts(p.batch);
  text += ") {\n    matmul(&" + out + ", " + name(gemm.getA()) + ", " + name(gemm.getB()) + ");\n";
  if (gemm.getBias())
    text += "    add_bias(&" + out + ", " + name(gemm.getBias()) + ");\n";
  return text + "  }\n}\n";
}
} // namespace

std::string mapExprText(mlir::ModuleOp module, bool indexDetail) {
  std::string text;
  mlir::SymbolTable symbols(module);
  module.walk([&](sir::SubgraphOp subgraph) {
    text += "// " + subgraph.getSymName().str() + "\n";
    for (mlir::Operation &op : subgraph.getBody().front()) {
      if (auto launch = mlir::dyn_cast<mapexpr::LaunchOp>(op))
        text += mapexpr::kernelFromIR(symbols.lookup<mapexpr::KernelOp>(launch.getKernel()))
                    .str(indexDetail) +
                "\n";
      else if (auto gemm = mlir::dyn_cast<mapexpr::GemmOp>(op))
        text += gemmText(gemm) + "\n";
    }
  });
  return text;
}

} // namespace sotc::driver
