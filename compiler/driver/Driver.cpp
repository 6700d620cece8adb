#include "compiler/driver/Driver.h"

#include "compiler/frontend/SirEmitter.h"
#include "compiler/frontend/TraceReader.h"
#include "compiler/support/MlirDiagnostics.h"
#include "compiler/support/OutputFile.h"
#include "compiler/target/cpu/CpuTarget.h"
#include "compiler/target/manifest/Manifest.h"

#include "dialects/mapexpr/IR/MapExprDialect.h"
#include "dialects/sir/IR/SirDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
  trace::Trace loaded = frontend::loadTrace(path);
  frontend::TranslateOptions frontendOptions;
  frontendOptions.allowHostCallbacks = options.allowHostCallbacks;
  frontendOptions.breakOn = options.breakOn;
  return frontend::translate(loaded, frontendOptions);
}

mlir::OwningOpRef<mlir::ModuleOp> compileTrace(mlir::MLIRContext &context, const std::string &path,
                                               const pipelines::PipelineOptions &options,
                                               pipelines::Phase upTo,
                                               frontend::Translation *translation) {
  frontend::Translation translated = translateTrace(path, options);
  mlir::OwningOpRef<mlir::ModuleOp> module = frontend::emitSir(translated, context);
  if (translation)
    *translation = std::move(translated);
  mlir::PassManager pm(&context);
  pipelines::buildPipeline(pm, options, upTo);
  CodedDiagnosticCapture capture(&context, DiagCode::CliPassFailed);
  if (mlir::failed(pm.run(*module))) {
    if (std::optional<CodedError> error = capture.error())
      throw CodedError(error->code(), path + ": " + error->what());
    throw CodedError(DiagCode::CliPassFailed,
                     path + ": the pipeline failed to reach phase " + pipelines::phaseName(upTo));
  }
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
  frontend::Translation translation;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      compileTrace(*context, path, cpu, pipelines::Phase::Loops, &translation);
  // Each kernel's grid, as the loops have it; the manifest tells the runtime.
  std::map<std::string, int64_t> grids;
  module->walk([&](mlir::scf::ForallOp grid) {
    grids[grid->getParentOfType<mlir::func::FuncOp>().getSymName().str()] =
        grid.getStaticUpperBound()[0];
  });
  mlir::PassManager pm(context.get());
  pipelines::buildPipeline(pm, cpu, pipelines::Phase::Llvm, pipelines::Phase::Loops);
  {
    CodedDiagnosticCapture capture(context.get(), DiagCode::CliPassFailed);
    if (mlir::failed(pm.run(*module)))
      throw capture.error().value_or(
          CodedError(DiagCode::CliPassFailed, path + ": lowering to LLVM failed"));
  }
  // The subgraphs are the host's plan: the manifest describes them, the library holds kernels.
  mlir::OwningOpRef<mlir::ModuleOp> kernels = module->clone();
  for (sir::SubgraphOp subgraph : llvm::make_early_inc_range(kernels->getOps<sir::SubgraphOp>()))
    subgraph.erase();
  Expected<std::string> library =
      cpu::buildSharedLibrary(*kernels, {options.cpu, options.optLevel});
  if (!library)
    throw CodedError(library.error().code(), path + ": " + library.error().what());
  auto traceBytes = llvm::MemoryBuffer::getFile(path);
  std::string manifest = manifest::writeManifest(
      frontend::loadTrace(path),
      {llvm::sys::path::filename(path).str(),
       manifest::sha256(traceBytes ? (*traceBytes)->getBuffer() : "")},
      translation, *module, grids,
      {"cpu", cpu::kTriple, options.cpu,
       "void kernel(int64_t begin, int64_t end, T *outputs..., const T *inputs...)"},
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

std::string mapExprText(mlir::ModuleOp module, bool indexDetail) {
  std::string text;
  mlir::SymbolTable symbols(module);
  module.walk([&](sir::SubgraphOp subgraph) {
    text += "// " + subgraph.getSymName().str() + "\n";
    subgraph.walk([&](mapexpr::LaunchOp launch) {
      auto kernel = symbols.lookup<mapexpr::KernelOp>(launch.getKernel());
      text += mapexpr::kernelFromIR(kernel).str(indexDetail) + "\n";
    });
  });
  return text;
}

} // namespace sotc::driver
