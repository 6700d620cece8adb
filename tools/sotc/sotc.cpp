//===- sotc.cpp - The sotc command-line tool ---------------------------------------------===//
//
//   sotc compile TRACE -o k.fatbin           a CUDA fatbin + k.cuda.manifest.json
//   sotc compile TRACE --target cpu -o k.so  a shared library + k.manifest.json
//   sotc compile A.pb B.pb --target cpu -o k.so  one artifact of several traces (a bundle)
//   sotc compile TRACE --compile-to PHASE    the IR at a pipeline phase (or ptx)
//   sotc dump --bytecode TRACE               the trace's code, as CPython's dis prints it
//   sotc dump --sir / --guards TRACE         statement IR, guards
//   sotc explain TRACE                       graphs, graph breaks, guards
//   sotc inspect k.so|k.manifest.json [--dot]  what a compiled artifact holds
//   sotc run k.so --input x=@x.npy          run a CPU artifact through the runtime
//   sotc bench k.so --input x=random        time it: each run and each step
//   sotc ops [NAME]                          the supported callables and their signatures
//
// User errors print one coded line ("sotc: error E1002: ...") and exit with status 2.
//
//===--------------------------------------------------------------------------------------===//
#include "Inspect.h"
#include "Run.h"
#include "compiler/driver/Driver.h"
#include "compiler/frontend/BytecodeDump.h"
#include "compiler/frontend/TraceReader.h"
#include "compiler/ops/OpTable.h"
#include "compiler/support/Diagnostics.h"
#include "compiler/support/OutputFile.h"
#include "compiler/support/Version.h"
#include "compiler/target/cuda/CudaTarget.h"
#include "contract/ArtifactFiles.h"

#include <CLI/CLI.hpp>
#include <cuda.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

/// The binary an existing manifest describes, when that binary still exists beside it ("": no
/// manifest there, or its binary is gone): compiling k.so after k.fatbin replaces the
/// manifest both would use.
std::string binaryDescribedBy(const std::string &manifest) {
  std::ifstream in(manifest);
  nlohmann::json m = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json *file = m.is_object() && m.contains("binary") && m["binary"].is_object()
                                   ? &m["binary"]["file"]
                                   : nullptr;
  if (!file || !file->is_string())
    return "";
  size_t slash = manifest.rfind('/');
  std::string binary =
      (slash == std::string::npos ? "" : manifest.substr(0, slash + 1)) + file->get<std::string>();
  return std::ifstream(binary).good() ? binary : "";
}

using sotc::kSotcVersion;

std::string versionText() {
  std::ostringstream s;
  s << "sotc " << kSotcVersion << "\n"
    << "LLVM/MLIR " << LLVM_VERSION_STRING << "\n"
    << "CUDA " << CUDA_VERSION / 1000 << "." << (CUDA_VERSION % 1000) / 10
    << " (headers built with; a CUDA compilation calls the toolkit it finds)\n"
    << "trace format " << sotc::frontend::kTraceFormatVersion << "\n";
  return s.str();
}

/// SOTC_LOG_LEVEL sets the level; each -v lowers it one step (warn -> info -> debug -> trace).
void configureLogging(int verbosity) {
  auto logger = spdlog::stderr_logger_st("sotc");
  logger->set_pattern("sotc: %l: %v");
  spdlog::set_default_logger(logger);
  spdlog::level::level_enum level = spdlog::level::warn;
  if (const char *env = std::getenv("SOTC_LOG_LEVEL"))
    level = spdlog::level::from_str(env);
  for (int i = 0; i < verbosity && level > spdlog::level::trace; ++i)
    level = static_cast<spdlog::level::level_enum>(level - 1);
  spdlog::set_level(level);
}

using sotc::pipelines::Phase;

/// "sir, prim, fused, mapexpr, scheduled"
std::string phaseList() {
  std::string s;
  for (Phase p : sotc::pipelines::allPhases())
    s += std::string(s.empty() ? "" : ", ") + sotc::pipelines::phaseName(p);
  return s;
}

/// Frontend flags shared by dump, explain and compile.
/// The flags that shape the compiled program, which compile, dump and explain share.
struct FrontendFlags {
  bool allowHostCallbacks = false;
  std::vector<std::string> breakOn;
  std::string precision = "float32";

  void add(CLI::App *cmd) {
    cmd->add_flag(
        "--allow-host-callbacks", allowHostCallbacks,
        "record host-callback boundaries (print, .numpy(), --break-on) instead of failing");
    cmd->add_option("--break-on", breakOn, "force a graph boundary at every call of this API")
        ->type_name("API");
    cmd->add_option("--precision", precision,
                    "float32 (default: as traced) or bf16: float32 matrix products read "
                    "bfloat16 operands with float32 accumulation (AMX, AVX-512 BF16, tensor "
                    "cores), their products rounded to bfloat16")
        ->check(CLI::IsMember({"float32", "bf16"}));
  }
  sotc::pipelines::PipelineOptions options() const {
    sotc::pipelines::PipelineOptions o;
    o.allowHostCallbacks = allowHostCallbacks;
    o.breakOn = breakOn;
    o.bf16Matmuls = precision == "bf16";
    return o;
  }
};

sotc::frontend::Translation translateFile(const std::string &path, const FrontendFlags &flags) {
  return sotc::driver::translateTrace(path, flags.options());
}

struct DumpOptions {
  std::string trace;
  std::string output = "-";
  bool bytecode = false, sir = false, mlir = false, guards = false, prim = false, mapExpr = false,
       indexDetail = false;
  std::string target = "cuda";
  FrontendFlags frontend;
};

void runDump(const DumpOptions &opts) {
  int modes = opts.bytecode + opts.sir + opts.mlir + opts.guards + opts.prim + opts.mapExpr;
  if (modes != 1)
    throw CLI::ValidationError("sotc dump: choose exactly one of --bytecode, --sir, --mlir, "
                               "--guards, --prim, --map-expr");
  if (opts.mlir || opts.prim || opts.mapExpr) {
    Phase phase = opts.mapExpr ? Phase::Scheduled : opts.prim ? Phase::Prim : Phase::Sir;
    sotc::pipelines::PipelineOptions options = opts.frontend.options();
    std::optional<sotc::pipelines::Target> target = sotc::pipelines::targetByName(opts.target);
    if (!target)
      throw CLI::ValidationError("sotc dump: --target must be cuda or cpu");
    options.target = *target;
    auto context = sotc::driver::createContext();
    auto module = sotc::driver::compileTrace(*context, opts.trace, options, phase);
    sotc::writeOutputFile(opts.output, opts.mapExpr
                                           ? sotc::driver::mapExprText(*module, opts.indexDetail)
                                           : sotc::driver::printModule(*module));
    return;
  }
  if (opts.sir || opts.guards) {
    sotc::frontend::Translation t = translateFile(opts.trace, opts.frontend);
    std::string text = opts.sir ? t.sirText() : t.guardTable() + t.guardLambda() + "\n";
    sotc::writeOutputFile(opts.output, text);
    return;
  }
  sotc::trace::Trace loaded = sotc::frontend::loadTrace(opts.trace);
  spdlog::info("loaded {}: {} code objects, {} functions", opts.trace, loaded.code_objects_size(),
               loaded.functions_size());
  std::ostringstream text;
  sotc::frontend::dumpBytecode(loaded, text);
  sotc::writeOutputFile(opts.output, text.str());
}

struct CompileOptions {
  std::vector<std::string> traces; // several: one artifact with an entry per trace
  std::string output;
  std::string target = "cuda";
  std::string compileTo;
  std::string cpu; // "": the pipeline's default CPU and variants
  std::string gpuArch = "sm_80,sm_90";
  int optLevel = 3;
  bool timing = false;
  std::string dumpIrAfter, dumpDir = "dumps";
  std::string testingBreak;
  FrontendFlags frontend;
};

/// `--compile-to PHASE` writes the IR at that phase (`ptx`: the fatbin's PTX); otherwise the
/// target's binary (the CUDA fatbin, or the CPU shared library).
void runCompile(const CompileOptions &opts) {
  sotc::pipelines::PipelineOptions options = opts.frontend.options();
  std::optional<sotc::pipelines::Target> target = sotc::pipelines::targetByName(opts.target);
  if (!target)
    throw CLI::ValidationError("sotc compile: --target must be cuda or cpu");
  options.target = *target;
  // --cpu BASE[,VARIANT...]: the kernels for BASE, and a copy of each for every VARIANT.
  if (!opts.cpu.empty()) {
    llvm::SmallVector<llvm::StringRef> cpus;
    llvm::StringRef(opts.cpu).split(cpus, ',');
    if (llvm::any_of(cpus, [](llvm::StringRef c) { return c.trim().empty(); }))
      throw CLI::ValidationError("sotc compile: --cpu takes CPU names separated by commas");
    options.cpu = cpus.front().trim().str();
    options.cpuVariants.clear();
    for (llvm::StringRef variant : llvm::ArrayRef(cpus).drop_front())
      options.cpuVariants.push_back(variant.trim().str());
  }
  sotc::Expected<std::vector<std::string>> archs = sotc::cuda::parseArchs(opts.gpuArch);
  if (!archs)
    throw archs.error();
  options.gpuArchs = *archs;
  options.optLevel = opts.optLevel;
  options.timing = opts.timing;
  options.dumpIrAfter = opts.dumpIrAfter;
  options.dumpDir = opts.dumpDir;
  options.testingBreak = opts.testingBreak;
  if (opts.compileTo.empty()) {
    // A binary named for the other target would be opened as that target's (k.fatbin as a
    // fatbin) and share its manifest.
    auto named = [&](const std::string &ext) {
      return opts.output.size() > ext.size() &&
             opts.output.compare(opts.output.size() - ext.size(), ext.size(), ext) == 0;
    };
    bool cpu = *target == sotc::pipelines::Target::Cpu;
    if ((cpu && named(".fatbin")) || (!cpu && named(".so")))
      throw sotc::CodedError(sotc::DiagCode::CliOutputKind,
                             "-o " + opts.output + ": a " + (cpu ? "CPU" : "CUDA") +
                                 " artifact is a " + (cpu ? ".so" : ".fatbin") +
                                 " (--target " + opts.target + ")");
    std::string displaced = binaryDescribedBy(sotc::contract::manifestPathOf(opts.output));
    sotc::driver::writeBinary(opts.traces, options, opts.output);
    if (!displaced.empty() && displaced != opts.output)
      spdlog::warn("{} now describes {}; {} (of the same name) can no longer be opened: give "
                   "artifacts for different targets different names",
                   sotc::contract::manifestPathOf(opts.output), opts.output, displaced);
    return;
  }
  if (opts.traces.size() > 1)
    throw CLI::ValidationError("sotc compile: --compile-to takes one trace (several make one "
                               "artifact: -o k.so or -o k.fatbin)");
  const std::string &trace = opts.traces.front();
  if (opts.compileTo == "ptx") {
    if (*target != sotc::pipelines::Target::Cuda)
      throw CLI::ValidationError("sotc compile: --compile-to ptx needs --target cuda");
    sotc::writeOutputFile(opts.output.empty() ? "-" : opts.output,
                          sotc::driver::ptxText(trace, options));
    return;
  }
  std::optional<Phase> phase = sotc::pipelines::phaseByName(opts.compileTo);
  if (!phase)
    throw CLI::ValidationError("sotc compile: --compile-to must be one of " + phaseList());
  auto context = sotc::driver::createContext();
  auto module = sotc::driver::compileTrace(*context, trace, options, *phase);
  sotc::writeOutputFile(opts.output.empty() ? "-" : opts.output,
                        sotc::driver::printModule(*module));
}

void runOps(const std::string &name) {
  const sotc::ops::OpTable &table = sotc::ops::OpTable::get();
  if (name.empty()) {
    sotc::ops::printOpTable(table, std::cout);
    return;
  }
  const sotc::ops::OpEntry *entry = table.lookup(name);
  if (!entry)
    throw sotc::CodedError(sotc::DiagCode::OpUnknown,
                           name + " is not a supported operator" +
                               sotc::ops::refusalSuffix(name) + " (`sotc ops` lists them)");
  if (entry->name != name)
    std::cout << name << " is an alias of " << entry->name << "\n";
  sotc::ops::printOpEntry(*entry, std::cout);
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"sotc: an ahead-of-time graph compiler for traced Python tensor programs"};
  app.require_subcommand(1);
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity, "more log output (repeat for more; or SOTC_LOG_LEVEL)");
  app.add_flag_callback(
      "--version",
      [] {
        std::cout << versionText();
        throw CLI::Success();
      },
      "print sotc, LLVM/MLIR and CUDA versions");

  CompileOptions compileOpts;
  CLI::App *compile = app.add_subcommand("compile", "compile a trace into a fatbin + manifest");
  compile
      ->add_option("traces", compileOpts.traces,
                   "trace file (.pb or .pbtxt); several traces of one function make one "
                   "artifact whose runs take the first entry whose guards hold")
      ->required();
  compile->add_option("-o,--output", compileOpts.output, "output file ('-': stdout)");
  compile->add_option("--target", compileOpts.target, "cuda (default) or cpu");
  compile
      ->add_option("--cpu", compileOpts.cpu,
                   "CPU target: an LLVM x86 CPU name or native, then CPUs each kernel is also "
                   "compiled for, the runtime picking by its machine (default "
                   "x86-64-v3,x86-64-v4; one name pins the kernels to it)")
      ->type_name("NAME[,NAME...]");
  compile
      ->add_option("--gpu-arch", compileOpts.gpuArch,
                   "CUDA target: the architectures to build SASS for, comma-separated (default "
                   "sm_80,sm_90); the newest also gets PTX")
      ->type_name("sm_XX,...");
  compile->add_option("-O", compileOpts.optLevel, "optimization level (0-3, default 3)")
      ->check(CLI::Range(0, 3));
  compile->add_flag("--timing", compileOpts.timing,
                    "print the wall time of every pass and step on stderr");
  compile
      ->add_option("--dump-ir-after", compileOpts.dumpIrAfter,
                   "write the IR after this pass (its flag name) or after all passes")
      ->type_name("PASS|all");
  compile->add_option("--dump-dir", compileOpts.dumpDir,
                      "where --dump-ir-after writes (default dumps/)");
  compile
      ->add_option("--compile-to", compileOpts.compileTo,
                   "stop after this phase and write its IR: " + phaseList() +
                       " (CUDA: gpu = loops, nvvm = llvm; ptx: the fatbin's PTX)")
      ->type_name("PHASE");
  compileOpts.frontend.add(compile);
  // Hidden: for the tests that show the CUDA emulator catching a broken GPU lowering.
  compile
      ->add_option("--testing-break", compileOpts.testingBreak,
                   "testing only: lower GPU kernels wrongly (barrier, index or reduction)")
      ->check(CLI::IsMember({"barrier", "index", "reduction"}))
      ->group("");

  DumpOptions dump;
  CLI::App *dumpCmd = app.add_subcommand("dump", "print one stage of the pipeline as text");
  dumpCmd->add_option("trace", dump.trace, "trace file (.pb or .pbtxt)")->required();
  dumpCmd->add_option("-o,--output", dump.output, "write here instead of stdout");
  dumpCmd->add_flag("--bytecode", dump.bytecode, "the traced bytecode, as dis.dis prints it");
  dumpCmd->add_flag("--sir", dump.sir, "statement IR (PaddleSOT form)");
  dumpCmd->add_flag("--mlir", dump.mlir, "statement IR as sir dialect MLIR");
  dumpCmd->add_flag("--guards", dump.guards, "guards on the inputs");
  dumpCmd->add_flag("--prim", dump.prim, "the sir IR after decomposition into primitives");
  dumpCmd->add_flag("--map-expr", dump.mapExpr, "fused kernels in CINN MapExpr form");
  dumpCmd->add_option("--target", dump.target,
                      "with --prim and --map-expr: the pipeline of cuda (default) or cpu (where "
                      "convolutions are library steps)");
  dumpCmd->add_flag("--index-detail", dump.indexDetail,
                    "with --map-expr: each argument on its own line with its index expression");
  dump.frontend.add(dumpCmd);

  std::string explainTrace;
  FrontendFlags explainFlags;
  CLI::App *explain = app.add_subcommand("explain", "graphs, graph breaks, guards, kernels");
  explain->add_option("trace", explainTrace, "trace file (.pb or .pbtxt)")->required();
  explainFlags.add(explain);

  std::string inspectPath;
  bool inspectDot = false;
  CLI::App *inspectCmd = app.add_subcommand(
      "inspect", "what a compiled artifact holds: guards, segments, kernels, buffers");
  inspectCmd
      ->add_option("artifact", inspectPath, "k.so (its manifest beside it) or k.manifest.json")
      ->required();
  inspectCmd->add_flag("--dot", inspectDot, "segments, steps and control flow as Graphviz");

  // run and bench take an artifact and its inputs the same way.
  auto artifactOptions = [](CLI::App *cmd, sotc::run::RunOptions &opts) {
    cmd->add_option("artifact", opts.artifact,
                    "k.so or k.fatbin (its manifest beside it), or the manifest")
        ->required();
    cmd->add_option("--device", opts.device,
                    "cpu, cuda, cuda:N or emulator (a CUDA artifact on the CUDA emulator; default: the artifact's target, device 0)");
    cmd->add_option("--input", opts.inputs,
                    "NAME=@file.npy, NAME=random (seeded: normal floats, integers in 0..15), or "
                    "NAME=VALUE for a value traced as a constant (default: the traced value)")
        ->type_name("NAME=...");
    cmd->add_option("--seed", opts.seed, "seed of --input NAME=random (default 0)");
    cmd->add_option("--batch", opts.batch,
                    "the dynamic size (every ? dimension: a batch's rows, a sequence's "
                    "tokens) that NAME=random draws; N,M,... for s0, s1, ... of a trace "
                    "that names several (one N: all of them)")
        ->delimiter(',')
        ->check(CLI::PositiveNumber);
    cmd->add_option("--entry", opts.entry,
                    "an artifact of several traces: the entry whose shapes NAME=random and "
                    "unnamed constants take (default 0; the run takes the first that matches)");
  };
  sotc::run::RunOptions runOpts;
  CLI::App *runCmd =
      app.add_subcommand("run", "run a compiled artifact on inputs and print or save its results");
  artifactOptions(runCmd, runOpts);
  runCmd->add_option("--save", runOpts.saveDir, "write each result as DIR/<name>.npy")
      ->type_name("DIR");
  runCmd->add_option("-o,--output", runOpts.output, "write the results as one .npz archive")
      ->type_name("FILE.npz");

  sotc::run::RunOptions benchOpts;
  CLI::App *benchCmd = app.add_subcommand(
      "bench", "time a compiled artifact: each run and each step, with its bandwidth");
  artifactOptions(benchCmd, benchOpts);
  benchCmd->add_option("--repeat", benchOpts.repeat, "timed runs (default 100)")
      ->check(CLI::Range(1, 1000000));
  benchCmd->add_option("--warmup", benchOpts.warmup, "untimed runs first (default 3)");

  sotc::run::GenerateOptions generateOpts;
  CLI::App *generateCmd = app.add_subcommand(
      "generate", "greedy generation on a language model that keeps its KV cache as state");
  generateCmd->add_option("artifact", generateOpts.artifact, "k.so or k.fatbin")->required();
  generateCmd->add_option("--prompt-ids", generateOpts.prompt, "the prompt's token ids")
      ->delimiter(',')
      ->required();
  generateCmd->add_option("--max-new-tokens", generateOpts.maxNewTokens, "default 32")
      ->check(CLI::PositiveNumber);
  generateCmd->add_option("--eos-token-id", generateOpts.eos, "stop after one of these")
      ->delimiter(',');
  generateCmd->add_option("--device", generateOpts.device,
                          "cpu, cuda, cuda:N or emulator (default: the artifact's target)");
  generateCmd->add_flag("--timing", generateOpts.timing,
                        "print the prefill's time and the median decode step's");

  std::string opName;
  CLI::App *ops = app.add_subcommand("ops", "list the supported callables, or show one");
  ops->add_option("name", opName, "a callable, e.g. paddle.add, Tensor.sum, __add__, torch.add");

  try {
    app.parse(argc, argv);
    configureLogging(verbosity);
    if (*compile) {
      runCompile(compileOpts);
      return 0;
    }
    if (*explain) {
      std::cout << translateFile(explainTrace, explainFlags).explain();
      return 0;
    }
    if (*inspectCmd) {
      std::cout << sotc::inspect::inspect(inspectPath, inspectDot);
      return 0;
    }
    if (*ops) {
      runOps(opName);
      return 0;
    }
    if (*runCmd) {
      sotc::run::runArtifact(runOpts);
      return 0;
    }
    if (*benchCmd) {
      sotc::run::benchArtifact(benchOpts);
      return 0;
    }
    if (*generateCmd) {
      sotc::run::generateTokens(generateOpts);
      return 0;
    }
    runDump(dump);
    return 0;
  } catch (const CLI::ParseError &e) {
    // Help and --version exit 0; every usage error exits 2, as coded errors do.
    return app.exit(e) == 0 ? 0 : sotc::kExitUserError;
  } catch (const sotc::CodedError &e) {
    std::string line; // each error on a line of its own
    for (std::istringstream lines(e.render()); std::getline(lines, line);)
      std::cerr << "sotc: " << line << "\n";
    return sotc::kExitUserError;
  } catch (const sotc::run::RuntimeFailure &e) {
    std::cerr << "sotc: error " << e.code << ": " << e.what() << "\n" << e.table;
    return sotc::kExitUserError;
  }
}
