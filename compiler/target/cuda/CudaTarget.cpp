#include "compiler/target/cuda/CudaTarget.h"

#include "compiler/support/TempDir.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <set>
#include <sstream>
#include <variant>

namespace sotc::cuda {
namespace {

/// The architectures sotc compiles for: what LLVM's NVPTX backend and CUDA 13's ptxas both
/// take, by compute capability.
const std::set<int> kArchs = {75, 80, 86, 87, 89, 90, 100, 103, 120, 121};

int capability(const std::string &arch) { return std::stoi(arch.substr(3)); }

CodedError toolError(const std::string &what) {
  return CodedError(DiagCode::CodegenToolFailed, what);
}

/// The CUDA toolkit's root: $CUDA_PATH when set, else /usr/local/cuda, else the folder above
/// the ptxas on PATH. It holds bin/ptxas, bin/fatbinary and libdevice (nvvm/libdevice), which
/// NVPTX links for math functions.
Expected<std::string> findToolkit() {
  auto has = [](const std::string &root, const std::string &tool) {
    return llvm::sys::fs::can_execute(root + "/bin/" + tool);
  };
  std::string root;
  if (const char *path = std::getenv("CUDA_PATH")) {
    root = path;
  } else if (has("/usr/local/cuda", "ptxas")) {
    root = "/usr/local/cuda";
  } else if (llvm::ErrorOr<std::string> ptxas = llvm::sys::findProgramByName("ptxas")) {
    root = llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas)).str();
  } else {
    return toolError("ptxas not found in /usr/local/cuda/bin or PATH (install the CUDA toolkit "
                     "or set CUDA_PATH)");
  }
  for (const char *tool : {"ptxas", "fatbinary"})
    if (!has(root, tool))
      return toolError(std::string(tool) + " not found in $CUDA_PATH/bin (" + root + "/bin)");
  return root;
}

std::string readText(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? std::string((*buffer)->getBuffer()) : std::string();
}

/// Runs `args` (args[0] the program); its stderr goes to `log`. E9008 quoting the first
/// line that says error (or fatal) when it fails.
Expected<std::monostate> run(const std::vector<std::string> &args, const std::string &log) {
  llvm::SmallVector<llvm::StringRef> argv(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(args[0], argv, std::nullopt, redirects, 0, 0, &message);
  if (rc == 0)
    return std::monostate();
  std::string output = readText(log), first;
  std::istringstream lines(output);
  auto says = [](const std::string &line) {
    return line.find("error") != std::string::npos || line.find("fatal") != std::string::npos;
  };
  for (std::string line; std::getline(lines, line);)
    if (first.empty() || says(line)) {
      first = line;
      if (says(line))
        break;
    }
  std::string tool = llvm::sys::path::filename(args[0]).str();
  return toolError(tool + " failed" + (first.empty() ? ": " + message : ": " + first));
}

} // namespace

Expected<std::vector<std::string>> parseArchs(const std::string &list) {
  std::set<int> chosen;
  std::istringstream items(list);
  for (std::string arch; std::getline(items, arch, ',');) {
    static const std::regex form("sm_([0-9]+)");
    std::smatch m;
    if (!std::regex_match(arch, m, form) || !kArchs.count(std::stoi(m[1])))
      return CodedError(DiagCode::CodegenUnknownGpuArch,
                        "unknown GPU architecture '" + arch +
                            "' (sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_103, "
                            "sm_120 or sm_121)");
    chosen.insert(std::stoi(m[1]));
  }
  if (chosen.empty())
    return CodedError(DiagCode::CodegenUnknownGpuArch, "--gpu-arch names no architecture");
  std::vector<std::string> archs;
  for (int c : chosen)
    archs.push_back("sm_" + std::to_string(c));
  return archs;
}

std::string ptxFeature(const std::string &arch) {
  int c = capability(arch);
  return c >= 120 ? "+ptx87" : c >= 100 ? "+ptx86" : "+ptx80";
}

void registerCudaTarget(mlir::DialectRegistry &registry) {
  registry.insert<mlir::NVVM::NVVMDialect>();
  // convert-gpu-to-nvvm lowers the kernels' arith, math, memref and cf ops through these.
  mlir::arith::registerConvertArithToLLVMInterface(registry);
  mlir::cf::registerConvertControlFlowToLLVMInterface(registry);
  mlir::index::registerConvertIndexToLLVMInterface(registry);
  mlir::registerConvertFuncToLLVMInterface(registry);
  mlir::registerConvertMathToLLVMInterface(registry);
  mlir::registerConvertMemRefToLLVMInterface(registry);
  mlir::registerConvertNVVMToLLVMInterface(registry);
  mlir::ub::registerConvertUBToLLVMInterface(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerGPUDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
}

namespace {
/// emitPtx with the toolkit (for libdevice) already found.
Expected<std::map<std::string, std::string>>
ptxWith(mlir::ModuleOp module, const std::vector<std::string> &archs, const std::string &toolkit) {
  mlir::PassManager pm(module.getContext());
  mlir::GpuModuleToBinaryPassOptions options;
  options.compilationTarget = "isa";
  options.toolkitPath = toolkit; // libdevice
  pm.addPass(mlir::createGpuModuleToBinaryPass(options));
  std::string why;
  mlir::ScopedDiagnosticHandler handler(module.getContext(), [&](mlir::Diagnostic &d) {
    if (why.empty())
      why = d.str();
    return mlir::success();
  });
  if (mlir::failed(pm.run(module)))
    return CodedError(DiagCode::CodegenFailed, "CUDA code generation: " + why);
  std::map<std::string, std::string> ptx;
  module.walk([&](mlir::gpu::BinaryOp binary) {
    for (mlir::Attribute a : binary.getObjects()) {
      auto object = mlir::cast<mlir::gpu::ObjectAttr>(a);
      auto target = mlir::cast<mlir::NVVM::NVVMTargetAttr>(object.getTarget());
      ptx[target.getChip().str()] = object.getObject().str();
    }
  });
  for (const std::string &arch : archs)
    if (!ptx.count(arch))
      return CodedError(DiagCode::CodegenFailed, "CUDA code generation: no PTX for " + arch);
  return ptx;
}
} // namespace

Expected<std::map<std::string, std::string>> emitPtx(mlir::ModuleOp module,
                                                     const std::vector<std::string> &archs) {
  Expected<std::string> toolkit = findToolkit();
  if (!toolkit)
    return toolkit.error();
  return ptxWith(module, archs, *toolkit);
}

Expected<Fatbin> buildFatbin(mlir::ModuleOp module, const std::vector<std::string> &archs,
                             const StepTimer &step) {
  Fatbin out;
  Expected<std::string> toolkit = findToolkit();
  if (!toolkit)
    return toolkit.error();
  // 1. PTX per architecture: the NVPTX backend, in process.
  Expected<std::map<std::string, std::string>> emitted = [&] {
    mlir::TimingScope timer = step("NVPTX: PTX per architecture");
    return ptxWith(module, archs, *toolkit);
  }();
  if (!emitted)
    return emitted.error();
  std::map<std::string, std::string> &ptx = *emitted;
  // 2. SASS per architecture (ptxas), 3. one fatbin (fatbinary).
  std::string ptxas = *toolkit + "/bin/ptxas", fatbinary = *toolkit + "/bin/fatbinary";
  TempDir dir("sotc-cuda");
  if (!dir.ok())
    return CodedError(DiagCode::CodegenFailed, "CUDA code generation: no temporary folder");
  // PTX uncompressed: the CUDA emulator reads it (SASS is never compressed by default).
  std::vector<std::string> fatbinArgs = {fatbinary, "-64", "--compress=false",
                                         "--create=" + dir.file("k.fatbin")};
  static const std::regex function(
      "Function properties for (\\S+)|Compiling entry function '([^']+)'"),
      used("Used (\\d+) registers"), smem("(\\d+) bytes smem");
  for (const std::string &arch : archs) {
    std::string source = dir.file(arch + ".ptx"), cubin = dir.file(arch + ".cubin");
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(source, ec);
      if (ec)
        return CodedError(DiagCode::CodegenFailed, "cannot write " + source);
      os << ptx[arch];
    }
    mlir::TimingScope timer = step("ptxas " + arch);
    std::string log = dir.file(arch + ".log");
    Expected<std::monostate> ran =
        run({ptxas, "-arch=" + arch, "-O3", "-v", source, "-o", cubin}, log);
    if (!ran)
      return ran.error();
    // ptxas -v: "Compiling entry function 'k' for 'sm_90'" ... "Used 27 registers, ... 776
    // bytes smem" (no smem part when the kernel has none).
    std::string current;
    std::istringstream lines(readText(log));
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_search(line, m, function))
        current = m[1].matched ? m[1].str() : m[2].str();
      else if (std::regex_search(line, m, used) && !current.empty()) {
        int registers = std::stoi(m[1]);
        int shared = std::regex_search(line, m, smem) ? std::stoi(m[1]) : 0; // none: no smem
        out.usage[arch][current] = {registers, shared};
      }
    }
    fatbinArgs.push_back("--image3=kind=elf,sm=" + arch.substr(3) + ",file=" + cubin);
  }
  const std::string &newest = archs.back();
  fatbinArgs.push_back("--image3=kind=ptx,sm=" + newest.substr(3) +
                       ",file=" + dir.file(newest + ".ptx"));
  {
    mlir::TimingScope timer = step("fatbinary");
    Expected<std::monostate> ran = run(fatbinArgs, dir.file("fatbinary.log"));
    if (!ran)
      return ran.error();
  }
  out.bytes = readText(dir.file("k.fatbin"));
  if (out.bytes.empty())
    return toolError("fatbinary wrote no fatbin");
  return out;
}

} // namespace sotc::cuda
