#include "compiler/driver/Driver.h"
#include "compiler/driver/ModelWeights.h"
#include "compiler/driver/TargetBackend.h"

#include "compiler/conversion/MapExprToLoops/Passes.h"
#include "compiler/conversion/SirToMapExpr/BuildKernel.h"
#include "compiler/frontend/SirEmitter.h"
#include "compiler/frontend/TraceReader.h"
#include "compiler/support/Format.h"
#include "compiler/support/MlirDiagnostics.h"
#include "compiler/support/OutputFile.h"
#include "compiler/target/cuda/CudaTarget.h"
#include "compiler/target/manifest/Manifest.h"

#include "contract/ArtifactFiles.h"
#include "dialects/mapexpr/IR/MapExprDialect.h"
#include "dialects/sched/IR/SchedDialect.h"
#include "dialects/sir/IR/SirDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <sstream>

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

namespace {
/// CUDA kernels index with 32-bit arithmetic when every buffer they touch has fewer than
/// 2^31 elements (cheaper on a GPU); the driver decides once the kernels exist.
pipelines::PipelineOptions withGpuIndexBits(mlir::ModuleOp module,
                                            pipelines::PipelineOptions options) {
  bool fits = true;
  module.walk([&](mlir::gpu::GPUFuncOp func) {
    // A dynamic size may make any buffer larger than 2^31 elements.
    fits &= !func->hasAttr(sched::kGridAttrName);
    for (mlir::BlockArgument arg : func.getBody().getArguments()) // parameters, workgroup
      if (auto memref = mlir::dyn_cast<mlir::MemRefType>(arg.getType()))
        fits &= memref.hasStaticShape() && memref.getNumElements() < (int64_t{1} << 31);
  });
  options.gpuIndexBits = fits ? 32 : 64;
  return options;
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
  pipelines::PipelineOptions traced = options;
  {
    mlir::TimingScope frontendTime = instrumentation->step("frontend");
    result.trace = frontend::loadTrace(path);
    result.translation = translateTrace(result.trace, options);
    module = frontend::emitSir(result.translation, context);
  }
  traced.sizeMax = result.translation.sizeMax;
  if (frontend)
    *frontend = std::move(result);
  using pipelines::Phase;
  Phase loops = std::min(upTo, Phase::Loops);
  runPipeline(*module, path, traced, Phase::Sir, loops, *instrumentation);
  if (upTo > loops)
    runPipeline(*module, path, withGpuIndexBits(*module, traced), loops, upTo, *instrumentation);
  return module;
}

namespace {
/// A buffer's bytes as the kernels store it.
int64_t bytesOf(mlir::MemRefType memref) {
  return memref.getNumElements() * manifest::elementBytes(memref.getElementType());
}

/// The sizes a kernel takes when not s0 alone (its sched.sizes: [1], [0, 1]).
std::vector<int> sizesTaken(mlir::Operation *func) {
  std::vector<int> sizes;
  if (auto taken = func->getAttrOfType<mlir::DenseI64ArrayAttr>(sched::kSizesAttrName))
    sizes.assign(taken.asArrayRef().begin(), taken.asArrayRef().end());
  return sizes;
}

/// Each kernel's launch, as the loops have it; the manifest tells the runtime.
std::map<std::string, manifest::KernelLaunch> kernelLaunches(mlir::ModuleOp module) {
  std::map<std::string, manifest::KernelLaunch> launches;
  // The loops and buffers are built for the dynamic sizes at their stand-ins.
  sched::SizeStandIns standIns = sched::standInsOf(module);
  module.walk([&](mlir::scf::ForallOp grid) { // CPU: the grid loop, over the kernel's buffers
    if (auto func = grid->getParentOfType<mlir::func::FuncOp>()) {
      manifest::KernelLaunch &launch = launches[func.getSymName().str()];
      launch.grid = standIns.sizeProduct(grid.getStaticUpperBound()[0]);
      launch.takesRows = func->hasAttr(sched::kGridAttrName);
      launch.sizes = sizesTaken(func);
      for (mlir::Type buffer : func.getArgumentTypes())
        if (auto memref = mlir::dyn_cast<mlir::MemRefType>(buffer)) // not the call's sizes
          launch.bufferBytes.push_back(standIns.sizeProduct(bytesOf(memref)));
    }
  });
  module.walk([&](mlir::gpu::GPUFuncOp func) { // CUDA: grid, block and shared memory
    manifest::KernelLaunch &launch = launches[func.getName().str()];
    if (auto grid = func->getAttrOfType<sched::SizeAttr>(sched::kGridAttrName))
      launch.grid = grid.getSize(), launch.takesRows = true;
    else
      launch.grid = contract::SizeProduct::constant((*func.getKnownGridSize())[0]);
    launch.sizes = sizesTaken(func);
    launch.block = (*func.getKnownBlockSize())[0];
    for (mlir::BlockArgument buffer : func.getWorkgroupAttributions())
      launch.sharedBytes += bytesOf(mlir::cast<mlir::MemRefType>(buffer.getType()));
    if (auto bytes = func->getAttrOfType<sched::SizeAttr>(sched::kDynamicSharedAttrName))
      launch.dynamicSharedBytes = bytes.getSize();
  });
  return launches;
}

/// The module's kernels without the host plan (the sir.subgraph ops the manifest describes).
mlir::OwningOpRef<mlir::ModuleOp> kernelsOnly(mlir::ModuleOp module) {
  mlir::OwningOpRef<mlir::ModuleOp> kernels = module.clone();
  for (sir::SubgraphOp subgraph : llvm::make_early_inc_range(kernels->getOps<sir::SubgraphOp>()))
    subgraph.erase();
  return kernels;
}

/// A definition as text without locations: two entries' kernels of one name are one kernel
/// when these agree.
std::string definitionText(mlir::Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, mlir::OpPrintingFlags().enableDebugInfo(false));
  return text;
}

/// Moves the definitions of `from` (a block of a later entry's module `fromModule`, at the
/// loops phase) into `into` (the kernels of the entries before it): a definition both have
/// alike is kept once, one whose name a different definition holds is renamed, and so are
/// the launches that call it. The CUDA kernels' gpu.module is merged with its namesake.
void mergeDefinitions(mlir::Operation *into, mlir::Block &from, mlir::ModuleOp fromModule,
                      size_t entry) {
  mlir::SymbolTable table(into);
  mlir::Block &intoBlock = into->getRegion(0).front();
  for (mlir::Operation &op : llvm::make_early_inc_range(from)) {
    if (mlir::isa<sir::SubgraphOp>(op))
      continue; // the host plan: the manifest's
    auto name = op.getAttrOfType<mlir::StringAttr>(mlir::SymbolTable::getSymbolAttrName());
    mlir::Operation *existing = name ? table.lookup(name) : nullptr;
    if (existing && mlir::isa<mlir::gpu::GPUModuleOp>(op) &&
        mlir::isa<mlir::gpu::GPUModuleOp>(existing)) {
      mergeDefinitions(existing, op.getRegion(0).front(), fromModule, entry);
      continue;
    }
    if (existing && definitionText(existing) == definitionText(&op))
      continue; // shared by the entries: emitted once
    if (existing) {
      std::string renamed = name.str() + "_" + std::to_string(entry);
      for (int k = 2; table.lookup(renamed); ++k)
        renamed = name.str() + "_" + std::to_string(entry) + "_" + std::to_string(k);
      auto attr = mlir::StringAttr::get(op.getContext(), renamed);
      if (mlir::failed(mlir::SymbolTable::replaceAllSymbolUses(&op, attr, fromModule)))
        throw CodedError(DiagCode::CliPassFailed, "cannot rename " + name.str());
      fromModule.walk([&](mapexpr::LaunchOp launch) { // the CUDA kernels' nested symbols
        if (launch.getKernel() == name.getValue())
          launch.setKernelAttr(mlir::FlatSymbolRefAttr::get(attr));
      });
      mlir::SymbolTable::setSymbolName(&op, attr);
    }
    mlir::OpBuilder builder = mlir::OpBuilder::atBlockEnd(&intoBlock);
    table.insert(builder.clone(op));
  }
}

/// "f(x, w)": the function a trace translates and its parameters, which every entry of an
/// artifact shares (it is called one way).
std::string signatureOf(const frontend::Translation &t) {
  std::string text = t.entry + "(";
  for (const frontend::VarPtr &p : t.parameters)
    if (p->weight.empty())
      text += (text.back() == '(' ? "" : ", ") + p->parameter;
  return text + ")";
}
} // namespace

void writeBinary(const std::vector<std::string> &paths, const pipelines::PipelineOptions &options,
                 const std::string &output) {
  std::unique_ptr<TargetBackend> backend = targetBackend(options);
  if (output.empty() || output == "-")
    throw CodedError(DiagCode::CliOutputUnwritable, backend->outputNeeded() + ", not stdout");
  auto context = createContext();
  Instrumentation instrumentation(options);
  // Every trace to loops, its kernels merged into one module (alike kernels once).
  std::vector<FrontendResult> frontends(paths.size());
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
  mlir::OwningOpRef<mlir::ModuleOp> kernels;
  for (size_t i = 0; i < paths.size(); ++i) {
    modules.push_back(compileTrace(*context, paths[i], options, pipelines::Phase::Loops,
                                   &frontends[i], &instrumentation));
    std::string first = signatureOf(frontends[0].translation),
                other = signatureOf(frontends[i].translation);
    if (other != first)
      throw CodedError(DiagCode::CliBundleMismatch,
                       paths[i] + " traces " + other + ", " + paths[0] + " traces " + first +
                           ": the traces of one artifact are of one function");
    if (i == 0)
      kernels = kernelsOnly(*modules[0]);
    else
      mergeDefinitions(*kernels, modules[i]->getBodyRegion().front(), *modules[i], i);
  }
  const std::string &path = paths[0];
  // A model's weights: checked before code generation, written beside the binary; every
  // entry reads the same file.
  std::optional<std::string> weights;
  for (size_t i = 0; i < paths.size(); ++i) {
    const auto &params = frontends[i].translation.parameters;
    std::optional<std::string> own;
    if (std::any_of(params.begin(), params.end(), [](auto &p) { return !p->weight.empty(); }))
      own = artifactWeights(paths[i], frontends[i].trace, frontends[i].translation);
    if (i == 0)
      weights = std::move(own);
    else if (own != weights)
      throw CodedError(DiagCode::CliBundleMismatch,
                       paths[i] + " and " + paths[0] +
                           " read different weights: the entries of one artifact read one "
                           "weights file");
  }
  // Each entry's launches are read in its own module, whose stand-ins its kernels are built
  // at, under the names the merge gave them (a kernel the entries share is one launch).
  std::map<std::string, manifest::KernelLaunch> launches;
  for (mlir::OwningOpRef<mlir::ModuleOp> &module : modules)
    launches.merge(kernelLaunches(*module));
  runPipeline(*kernels, path, withGpuIndexBits(*kernels, options), pipelines::Phase::Loops,
              pipelines::Phase::Llvm, instrumentation);
  auto fail = [&](const CodedError &e) { throw CodedError(e.code(), path + ": " + e.what()); };
  // Kernels over dynamic sizes take the call's sizes as well.
  bool rows = llvm::any_of(launches, [](const auto &l) { return l.second.takesRows; });
  std::string rowsAbi = rows ? "; a kernel of a tensor with a dynamic dimension takes int64_t s0 "
                               "(the call's size of it) before its buffers (several sizes: "
                               "those its step's `sizes` name, in order)"
                             : "";
  Expected<TargetBinary> built = backend->build(*kernels, launches, rowsAbi, instrumentation);
  if (!built)
    fail(built.error());
  std::string &binary = built->bytes;
  const manifest::Target &target = built->target;
  mlir::TimingScope writing = instrumentation.step("manifest and output files");
  std::optional<manifest::Artifact> weightsFile;
  if (weights)
    weightsFile =
        manifest::Artifact{llvm::sys::path::filename(contract::weightsPathOf(output)).str(),
                           manifest::sha256(*weights)};
  std::vector<manifest::Entry> entries;
  for (size_t i = 0; i < paths.size(); ++i) {
    auto traceBytes = llvm::MemoryBuffer::getFile(paths[i]);
    entries.push_back({&frontends[i].trace,
                       {llvm::sys::path::filename(paths[i]).str(),
                        manifest::sha256(traceBytes ? (*traceBytes)->getBuffer() : "")},
                       &frontends[i].translation,
                       *modules[i]});
  }
  std::string manifest = manifest::writeManifest(entries, launches, target,
                                                 {llvm::sys::path::filename(output).str(), ""},
                                                 weightsFile ? &*weightsFile : nullptr);
  manifest::seal(manifest, binary);
  writeOutputFile(output, binary);
  try { // all or none
    if (weights)
      writeOutputFile(contract::weightsPathOf(output), *weights);
    writeOutputFile(contract::manifestPathOf(output), manifest);
  } catch (const CodedError &) {
    llvm::sys::fs::remove(output);
    if (weights)
      llvm::sys::fs::remove(contract::weightsPathOf(output));
    throw;
  }
}

std::string ptxText(const std::string &path, const pipelines::PipelineOptions &options) {
  auto context = createContext();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      compileTrace(*context, path, options, pipelines::Phase::Llvm);
  mlir::OwningOpRef<mlir::ModuleOp> kernels = kernelsOnly(*module);
  // The fatbin holds the newest architecture's PTX: no need for ptxas or fatbinary here.
  Expected<std::map<std::string, std::string>> ptx = cuda::emitPtx(*kernels, options.gpuArchs);
  if (!ptx)
    throw CodedError(ptx.error().code(), path + ": " + ptx.error().what());
  return ptx->at(options.gpuArchs.back());
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
  mapexpr::GemmPlan p = gemm.getPlan();
  std::string out = name(gemm.getResult()), text = gemm.getName().str() + "(&" + out + ", " +
                                                   name(gemm.getA()) + ", " + name(gemm.getB());
  if (gemm.getBias())
    text += ", " + name(gemm.getBias());
  // A dynamic size: a count as the power of s0 it holds times the rest.
  auto size = [&](int64_t n) { return p.standIns.sizeText(n, true); };
  text += ") {\n  LibraryCall(gemm, m=" + size(p.m) + ", n=" + size(p.n) + ", k=" + size(p.k);
  if (p.transposeA)
    text += ", transpose_a";
  if (p.transposeB)
    text += ", transpose_b";
  if (!p.batch.empty()) {
    text += ", batch=[";
    for (size_t d = 0; d < p.batch.size(); ++d)
      text += (d ? ", " : "") + size(p.batch[d]);
    text += "]";
  }
  if (gemm.getA().getType().getElementType() != gemm.getResult().getType().getElementType())
    text += ", bf16_operands"; // --precision bf16 on the CPU: a float32 product
  text += ") {\n    matmul(&" + out + ", " + name(gemm.getA()) + ", " + name(gemm.getB()) + ");\n";
  if (gemm.getBias())
    text += "    add_bias(&" + out + ", " + name(gemm.getBias()) + ");\n";
  if (gemm.getActivation() != "none")
    text += "    " + gemm.getActivation().str() + "(&" + out + ");\n";
  return text + "  }\n}\n";
}
/// A convolution step in the same form:
///   conv2d_3(&t_var_5, t_x, t_w, t_b, t_var_1) {
///     LibraryCall(conv, n=8, c=64, h=56, w=56, oc=64, kernel=[3, 3], strides=[1, 1],
///                 dilations=[1, 1], pads=[1, 1, 1, 1]) {
///       conv2d(&t_var_5, t_x, t_w);
///       add_bias(&t_var_5, t_b);
///       add(&t_var_5, t_var_1);
///       relu(&t_var_5);
///     }
///   }
std::string convText(mapexpr::ConvOp conv) {
  auto name = [](mlir::Value v) { return "t_" + mapexpr::tensorName(v); };
  auto ints = [](llvm::ArrayRef<int64_t> v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  };
  auto shape = [](mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
  };
  llvm::ArrayRef<int64_t> x = shape(conv.getX()), w = shape(conv.getWeight());
  std::string out = name(conv.getResult());
  std::string text =
      conv.getName().str() + "(&" + out + ", " + name(conv.getX()) + ", " + name(conv.getWeight());
  for (mlir::Value v : {conv.getBias(), conv.getResidual()})
    if (v)
      text += ", " + name(v);
  text += ") {\n  LibraryCall(conv, n=" + std::to_string(x[0]) + ", c=" + std::to_string(x[1]) +
          ", h=" + std::to_string(x[2]) + ", w=" + std::to_string(x[3]) +
          ", oc=" + std::to_string(w[0]) + ", kernel=" + ints(w.drop_front(2)) +
          ", strides=" + ints(conv.getStrides()) + ", dilations=" + ints(conv.getDilations()) +
          ", pads=" + ints(conv.getPads()) +
          (conv.getGroups() != 1 ? ", groups=" + std::to_string(conv.getGroups()) : "") +
          (conv.getBf16() ? ", bf16" : "") + ") {\n    conv2d(&" + out + ", " + name(conv.getX()) + ", " + name(conv.getWeight()) +
          ");\n";
  if (conv.getBias())
    text += "    add_bias(&" + out + ", " + name(conv.getBias()) + ");\n";
  if (conv.getResidual())
    text += "    add(&" + out + ", " + name(conv.getResidual()) + ");\n";
  if (conv.getActivation() != "none")
    text += "    " + conv.getActivation().str() + "(&" + out + ");\n";
  return text + "  }\n}\n";
}
/// An index_copy step in the same form (in place: the result is x's own buffer):
///   index_copy_4(&t_keys, t_keys, t_pos, t_var_3) {
///     RuntimeCall(index_copy, axis=2, in_place) {
///       index_copy(&t_keys, t_pos, t_var_3);
///     }
///   }
std::string indexCopyText(mapexpr::IndexCopyOp copy) {
  auto name = [](mlir::Value v) { return "t_" + mapexpr::tensorName(v); };
  std::string out = name(copy.getResult());
  return copy.getName().str() + "(&" + out + ", " + name(copy.getX()) + ", " +
         name(copy.getIndex()) + ", " + name(copy.getSource()) +
         ") {\n  RuntimeCall(index_copy, axis=" + std::to_string(copy.getAxis()) +
         (copy.getInPlace() ? ", in_place" : "") + ") {\n    index_copy(&" + out + ", " +
         name(copy.getIndex()) + ", " + name(copy.getSource()) + ");\n  }\n}\n";
}
/// A nonzero step in the same form:
///   nonzero_3(&t_var_4, t_var_2) {
///     RuntimeCall(nonzero, fill=0) {
///       nonzero(&t_var_4, t_var_2);
///     }
///   }
std::string nonzeroText(mapexpr::NonzeroOp nonzero) {
  std::string out = "t_" + mapexpr::tensorName(nonzero.getResult()),
              x = "t_" + mapexpr::tensorName(nonzero.getX());
  return nonzero.getName().str() + "(&" + out + ", " + x + ") {\n  RuntimeCall(nonzero, fill=" +
         std::to_string(static_cast<int64_t>(nonzero.getFill().convertToDouble())) +
         ") {\n    nonzero(&" + out + ", " + x + ");\n  }\n}\n";
}
/// An nms step in the same form:
///   nms_3(&t_keep, t_boxes, t_scores) {
///     RuntimeCall(nms, iou_threshold=0.5) {
///       nms(&t_keep, t_boxes, t_scores);
///     }
///   }
std::string nmsText(mapexpr::NmsOp nms) {
  auto name = [](mlir::Value v) { return "t_" + mapexpr::tensorName(v); };
  std::string out = name(nms.getResult()), in = name(nms.getBoxes()) + ", " + name(nms.getScores());
  std::ostringstream iou;
  iou << nms.getIouThreshold().convertToDouble();
  return nms.getName().str() + "(&" + out + ", " + in +
         ") {\n  RuntimeCall(nms, iou_threshold=" + iou.str() + ") {\n    nms(&" + out + ", " + in +
         ");\n  }\n}\n";
}
/// An argsort step in the same form:
///   argsort_2(&t_order, t_scores) {
///     RuntimeCall(argsort, axis=0, descending) {
///       argsort(&t_order, t_scores);
///     }
///   }
std::string argsortText(mapexpr::ArgsortOp sort) {
  std::string out = "t_" + mapexpr::tensorName(sort.getResult()),
              x = "t_" + mapexpr::tensorName(sort.getX());
  return sort.getName().str() + "(&" + out + ", " + x +
         ") {\n  RuntimeCall(argsort, axis=" + std::to_string(sort.getAxis()) +
         (sort.getDescending() ? ", descending" : "") + ") {\n    argsort(&" + out + ", " + x +
         ");\n  }\n}\n";
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
      else if (auto conv = mlir::dyn_cast<mapexpr::ConvOp>(op))
        text += convText(conv) + "\n";
      else if (auto copy = mlir::dyn_cast<mapexpr::IndexCopyOp>(op))
        text += indexCopyText(copy) + "\n";
      else if (auto nonzero = mlir::dyn_cast<mapexpr::NonzeroOp>(op))
        text += nonzeroText(nonzero) + "\n";
      else if (auto nms = mlir::dyn_cast<mapexpr::NmsOp>(op))
        text += nmsText(nms) + "\n";
      else if (auto sort = mlir::dyn_cast<mapexpr::ArgsortOp>(op))
        text += argsortText(sort) + "\n";
    }
  });
  return text;
}

} // namespace sotc::driver
