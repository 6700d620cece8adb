#include "compiler/driver/Driver.h"

#include "compiler/frontend/SirEmitter.h"
#include "compiler/frontend/TraceReader.h"
#include "compiler/support/MlirDiagnostics.h"
#include "compiler/support/OutputFile.h"
#include "compiler/target/cpu/CpuTarget.h"
#include "dialects/mapexpr/IR/MapExprDialect.h"
#include "dialects/sir/IR/SirDialect.h"

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
                                               pipelines::Phase upTo) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      frontend::emitSir(translateTrace(path, options), context);
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
  mlir::OwningOpRef<mlir::ModuleOp> module =
      compileTrace(*context, path, cpu, pipelines::Phase::Llvm);
  // The subgraphs are the host's plan (the manifest's business); the library holds kernels.
  for (sir::SubgraphOp subgraph : llvm::make_early_inc_range(module->getOps<sir::SubgraphOp>()))
    subgraph.erase();
  Expected<std::string> library = cpu::buildSharedLibrary(*module, {options.cpu, options.optLevel});
  if (!library)
    throw CodedError(library.error().code(), path + ": " + library.error().what());
  writeOutputFile(output, *library);
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
