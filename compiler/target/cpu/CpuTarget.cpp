#include "compiler/target/cpu/CpuTarget.h"

#include "compiler/support/TempDir.h"
#include "compiler/target/cpu/VectorMath.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "lld/Common/Driver.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>
#include <set>

LLD_HAS_DRIVER(elf)

namespace sotc::cpu {
namespace {

CodedError internal(const std::string &what) {
  return CodedError(DiagCode::CodegenFailed, "CPU code generation: " + what);
}

/// LLVM's default pipeline at `level`, with glibc's vector math library (libmvec) known to
/// the vectorizers: a loop of exp or sin calls becomes 8-wide AVX2 calls.
void optimize(llvm::Module &module, llvm::TargetMachine &machine, int level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = level > 1;
  tuning.SLPVectorization = level > 1;
  llvm::PassBuilder builder(&machine, tuning);
  llvm::TargetLibraryInfoImpl library(machine.getTargetTriple(), llvm::VectorLibrary::LIBMVEC);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(library); }); // before the defaults
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  static const llvm::OptimizationLevel levels[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1, llvm::OptimizationLevel::O2,
      llvm::OptimizationLevel::O3};
  llvm::OptimizationLevel ol = levels[std::clamp(level, 0, 3)];
  llvm::ModulePassManager passes =
      level == 0 ? builder.buildO0DefaultPipeline(ol) : builder.buildPerModuleDefaultPipeline(ol);
  passes.run(module, mam);
}

/// LLVM's x86-64 target and the machine for `cpu` ("native": this host's), or E9004.
Expected<std::unique_ptr<llvm::TargetMachine>> targetMachine(const std::string &cpuName,
                                                             int optLevel) {
  static std::once_flag targets;
  std::call_once(targets, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
  });
  std::string error;
  llvm::Triple triple(kTriple);
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return internal(error);
  std::string cpu = cpuName == "native" ? llvm::sys::getHostCPUName().str() : cpuName;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, "", llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      optLevel == 0 ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Aggressive));
  if (!machine || !machine->getMCSubtargetInfo()->isCPUStringValid(cpu))
    return CodedError(DiagCode::CodegenUnknownCpu,
                      "unknown CPU '" + cpuName +
                          "' (an LLVM x86 CPU name such as x86-64-v3, skylake, znver4, or native)");
  return machine;
}

} // namespace

Expected<std::vector<std::string>> cpuFeatures(const std::string &cpu) {
  Expected<std::unique_ptr<llvm::TargetMachine>> machine = targetMachine(cpu, 0);
  if (!machine)
    return machine.error();
  std::vector<std::string> features;
  for (const char *feature : {"sse4.2", "popcnt", "avx", "avx2", "fma", "bmi2", "f16c", "avx512f",
                              "avx512bw", "avx512dq", "avx512vl"})
    if ((*machine)->getMCSubtargetInfo()->checkFeatures(std::string("+") + feature))
      features.push_back(feature);
  return features;
}

namespace {
/// A CPU's name as part of a symbol: "x86_64_v4".
std::string symbolPart(const std::string &cpu) {
  std::string part;
  for (char c : cpu)
    part += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return part;
}

/// The name of a kernel's copy for a variant CPU.
std::string variantName(const std::string &kernel, const std::string &cpu) {
  return kernel + "." + symbolPart(cpu);
}
} // namespace

std::string variantTable(const std::string &cpu) {
  return std::string(kKernelTable) + "_" + symbolPart(cpu);
}

namespace {

/// Adds the kernel table (CpuTarget.h) `table` of `kernels` (their copies for `cpu` in a
/// variant's table), all of which `ir` must define; the error when one is missing or has
/// another number of buffers.
std::optional<CodedError> addKernelTable(llvm::Module &ir,
                                         const std::map<std::string, KernelSignature> &kernels,
                                         const std::string &table, const std::string &cpu) {
  llvm::LLVMContext &context = ir.getContext();
  auto *ptr = llvm::PointerType::get(context, 0);
  auto *i64 = llvm::Type::getInt64Ty(context);
  auto *entry = llvm::StructType::get(context, {ptr, i64, i64, ptr, ptr});
  std::vector<llvm::Constant *> entries;
  for (const auto &[name, signature] : kernels) {
    llvm::Function *kernel = ir.getFunction(cpu.empty() ? name : variantName(name, cpu));
    if (!kernel || kernel->isDeclaration() ||
        kernel->arg_size() != signature.bufferBytes.size() + 2 + signature.sizes)
      return internal("the kernel table's " + name + " is not a kernel of the module");
    auto *text = new llvm::GlobalVariable(ir, llvm::ArrayType::get(llvm::Type::getInt8Ty(context),
                                                                   name.size() + 1),
                                          true, llvm::GlobalValue::PrivateLinkage,
                                          llvm::ConstantDataArray::getString(context, name),
                                          "sotc.kernel_name");
    auto *bytes = new llvm::GlobalVariable(
        ir, llvm::ArrayType::get(i64, signature.bufferBytes.size()), true,
        llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantDataArray::get(context, llvm::ArrayRef<uint64_t>(
                                                  reinterpret_cast<const uint64_t *>(
                                                      signature.bufferBytes.data()),
                                                  signature.bufferBytes.size())),
        "sotc.kernel_buffer_bytes");
    // A variant's table lists the same names and sizes: LLVM merges the copies.
    text->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    bytes->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    entries.push_back(llvm::ConstantStruct::get(
        entry, {text, llvm::ConstantInt::get(i64, signature.grid),
                llvm::ConstantInt::get(i64, signature.bufferBytes.size()), bytes, kernel}));
  }
  auto *array = llvm::ArrayType::get(entry, entries.size());
  new llvm::GlobalVariable(ir, array, true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(array, entries), table);
  if (cpu.empty())
    new llvm::GlobalVariable(ir, i64, true, llvm::GlobalValue::ExternalLinkage,
                             llvm::ConstantInt::get(i64, entries.size()), kKernelCount);
  return std::nullopt;
}

/// Copies every kernel for the variant CPU `cpu` (its code generated for that CPU: LLVM
/// takes the subtarget of each function from its target-cpu attribute).
void addVariantKernels(llvm::Module &ir, const std::map<std::string, KernelSignature> &kernels,
                       const std::string &cpu) {
  for (const auto &entry : kernels) {
    llvm::Function *kernel = ir.getFunction(entry.first);
    llvm::ValueToValueMapTy map;
    llvm::Function *copy = llvm::CloneFunction(kernel, map);
    copy->setName(variantName(entry.first, cpu));
    copy->setLinkage(llvm::GlobalValue::InternalLinkage); // reached through its table only
    copy->removeFnAttr("target-features");
    copy->removeFnAttr("tune-cpu");
    copy->addFnAttr("target-cpu", cpu == "native" ? llvm::sys::getHostCPUName().str() : cpu);
  }
}

/// E9004 unless `variant` has every extension of `base` that a runtime checks.
std::optional<CodedError> checkVariant(const std::string &base, const std::string &variant) {
  Expected<std::vector<std::string>> has = cpuFeatures(base), variantHas = cpuFeatures(variant);
  if (!has)
    return has.error();
  if (!variantHas)
    return variantHas.error();
  for (const std::string &feature : *has)
    if (std::find(variantHas->begin(), variantHas->end(), feature) == variantHas->end())
      return CodedError(DiagCode::CodegenUnknownCpu, "the CPU variant '" + variant + "' lacks " +
                                                         feature + " of '" + base +
                                                         "', which every variant extends");
  return std::nullopt;
}
} // namespace

Expected<std::string> buildSharedLibrary(mlir::ModuleOp module, const CpuOptions &options) {
  Expected<std::unique_ptr<llvm::TargetMachine>> made =
      targetMachine(options.cpu, options.optLevel);
  if (!made)
    return made.error();
  std::unique_ptr<llvm::TargetMachine> &machine = *made;
  llvm::Triple triple(kTriple);

  // 1. LLVM IR for the target, optimized.
  mlir::registerBuiltinDialectTranslation(*module->getContext());
  mlir::registerLLVMDialectTranslation(*module->getContext());
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = mlir::translateModuleToLLVMIR(module, context, "sotc");
  if (!ir)
    return internal("the module does not translate to LLVM IR");
  ir->setTargetTriple(triple);
  ir->setDataLayout(machine->createDataLayout());
  if (std::optional<CodedError> missing = addKernelTable(*ir, options.kernels, kKernelTable, ""))
    return *missing;
  // Every function so far is the base CPU's; the variants' copies are told apart by name.
  std::set<const llvm::Function *> base;
  for (const llvm::Function &function : *ir)
    base.insert(&function);
  addLibmvecVariants(*ir, *machine->getMCSubtargetInfo(),
                     [&](const llvm::Function &f) { return base.count(&f) > 0; });
  std::set<std::string> seen = {options.cpu};
  for (const std::string &cpu : options.variants) {
    if (!seen.insert(cpu).second)
      return CodedError(DiagCode::CodegenUnknownCpu, "the CPU '" + cpu + "' is named twice");
    if (std::optional<CodedError> bad = checkVariant(options.cpu, cpu))
      return *bad;
    Expected<std::unique_ptr<llvm::TargetMachine>> variant = targetMachine(cpu, options.optLevel);
    if (!variant)
      return variant.error();
    addVariantKernels(*ir, options.kernels, cpu);
    std::string suffix = variantName("", cpu);
    addLibmvecVariants(*ir, *(*variant)->getMCSubtargetInfo(), [&](const llvm::Function &f) {
      return !base.count(&f) && f.getName().ends_with(suffix);
    });
    if (std::optional<CodedError> missing =
            addKernelTable(*ir, options.kernels, variantTable(cpu), cpu))
      return *missing;
  }
  optimize(*ir, *machine, options.optLevel);

  // 2. The object.
  llvm::SmallVector<char, 0> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      return internal("the target cannot emit an object file");
    codegen.run(*ir);
  }

  // 3. The shared library, linked by lld in this process.
  TempDir dir("sotc-cpu");
  if (!dir.ok())
    return internal("no temporary folder");
  std::string objectPath = dir.file("kernels.o"), libraryPath = dir.file("kernels.so");
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(objectPath, ec);
    if (ec)
      return internal("cannot write " + objectPath + ": " + ec.message());
    out.write(object.data(), object.size());
  }
  std::string diagnostics;
  llvm::raw_string_ostream errs(diagnostics), outs(diagnostics);
  const char *args[] = {"ld.lld",
                        "-shared",
                        "--build-id=none",
                        "-o",
                        libraryPath.c_str(),
                        objectPath.c_str(),
                        "-L/usr/lib/x86_64-linux-gnu",
                        "-lm",
                        "-lmvec"};
  lld::Result linked = lld::lldMain(args, outs, errs, {{lld::Gnu, &lld::elf::link}});
  if (linked.retCode != 0)
    return internal("lld: " + diagnostics);
  auto library = llvm::MemoryBuffer::getFile(libraryPath);
  if (!library)
    return internal("lld wrote no library");
  return std::string((*library)->getBuffer());
}

} // namespace sotc::cpu
