//===- Driver.h - Trace in, IR or text out: what the sotc tools call ---------------------===//
//
// Loads a trace, translates it, runs the pipeline to a phase and renders the result. Every
// failure is a CodedError whose message carries the Python file:line where one is known.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_DRIVER_DRIVER_H
#define SOTC_DRIVER_DRIVER_H

#include "compiler/frontend/Translation.h"
#include "compiler/pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include <string>

namespace sotc::driver {

/// A context with every sotc dialect registered and loaded.
std::unique_ptr<mlir::MLIRContext> createContext();

/// The trace at `path`, loaded, validated and translated with the options' frontend flags.
frontend::Translation translateTrace(const std::string &path,
                                     const pipelines::PipelineOptions &options);
frontend::Translation translateTrace(const trace::Trace &loaded,
                                     const pipelines::PipelineOptions &options);

/// The trace translated into sir and lowered to `upTo`. A pass failure is the pass's coded
/// diagnostic (E9003 when it has no code) with the Python line of the failing op.
/// Timing (`--timing`: every pass and external step, reported on stderr when the compilation
/// ends) and IR dumps (`--dump-ir-after PASS|all` into `--dump-dir`) of one compilation.
class Instrumentation {
public:
  explicit Instrumentation(const pipelines::PipelineOptions &options);
  /// Times and dumps the passes of `pm` (under `label`, e.g. "sir-to-loops").
  void attach(mlir::PassManager &pm, const std::string &label);
  /// The passes attached last have run.
  void detach();
  /// Times a step outside the pass manager while the scope lives.
  mlir::TimingScope step(llvm::StringRef name);

private:
  pipelines::PipelineOptions options_;
  mlir::DefaultTimingManager timing_;
  mlir::TimingScope root_;
  std::vector<std::unique_ptr<mlir::TimingScope>> passScopes_; // live while their passes run
};

/// What the frontend made of a trace: the trace as loaded, and its translation (guards,
/// segments).
struct FrontendResult {
  trace::Trace trace;
  frontend::Translation translation;
};

/// `frontend`, when given, receives the frontend's result;
/// `instrumentation`, when given, times and dumps this compilation as part of a larger one.
mlir::OwningOpRef<mlir::ModuleOp> compileTrace(mlir::MLIRContext &context, const std::string &path,
                                               const pipelines::PipelineOptions &options,
                                               pipelines::Phase upTo,
                                               FrontendResult *frontend = nullptr,
                                               Instrumentation *instrumentation = nullptr);

/// Compiles the traces (one, or several of one function: a bundle, one manifest entry each,
/// kernels alike emitted once) for `options.target` and writes the binary to `output` (the
/// CPU's shared library for `options.cpu`; the CUDA fatbin for `options.gpuArchs`) and its
/// manifest beside it (k.so -> k.manifest.json) and, for a model, its weights
/// (k.weights.safetensors), each atomically; nothing is left behind when one fails.
void writeBinary(const std::vector<std::string> &paths, const pipelines::PipelineOptions &options,
                 const std::string &output);

/// The PTX of the newest of `options.gpuArchs`, as the fatbin would hold it.
std::string ptxText(const std::string &path, const pipelines::PipelineOptions &options);

/// The module as MLIR text, locations inline so every statement shows its Python line.
std::string printModule(mlir::ModuleOp module);

/// Every kernel in launch order, subgraph by subgraph, in CINN's MapExpr text form.
std::string mapExprText(mlir::ModuleOp module, bool indexDetail);

} // namespace sotc::driver

#endif // SOTC_DRIVER_DRIVER_H
