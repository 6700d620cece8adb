#include "compiler/target/cpu/VectorMath.h"

#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/VFABIDemangler.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

namespace sotc::cpu {
namespace {

/// Unary functions libmvec has and LLVM's LIBMVEC table (VecFuncs.def) does not, by their
/// double-precision names; the float ones add an `f`.
constexpr const char *kUnary[] = {"acos",  "acosh", "asin",  "asinh", "atan",  "atanh",
                                  "cbrt",  "cosh",  "erf",   "erfc",  "exp10", "exp2",
                                  "expm1", "log10", "log1p", "log2",  "sinh",  "tanh"};

/// glibc's x86 ISA letters and vector widths in bits: SSE4 (b), AVX2 (d), AVX-512 (e).
struct Isa {
  char letter;
  unsigned bits;
  const char *feature; // nullptr: every x86-64 CPU has it
};
constexpr Isa kIsas[] = {{'b', 128, nullptr}, {'d', 256, "avx2"}, {'e', 512, "avx512f"}};

} // namespace

void addLibmvecVariants(llvm::Module &module, const llvm::MCSubtargetInfo &subtarget,
                        llvm::function_ref<bool(const llvm::Function &)> in) {
  // Each scalar function (the libm call, or the LLVM intrinsic math.tanh becomes) and the
  // libm name its vector variants are named after.
  llvm::SmallVector<std::pair<llvm::Function *, std::string>> scalars;
  for (const char *base : kUnary)
    for (bool f32 : {false, true}) {
      std::string libm = std::string(base) + (f32 ? "f" : "");
      for (const std::string &name : {libm, "llvm." + std::string(base) + (f32 ? ".f32" : ".f64")})
        if (llvm::Function *f = module.getFunction(name); f && f->isDeclaration())
          scalars.push_back({f, libm});
    }
  for (auto &[scalar, libm] : scalars) {
    llvm::Type *element = scalar->getReturnType();
    if (scalar->arg_size() != 1 || !(element->isFloatTy() || element->isDoubleTy()))
      continue;
    std::vector<std::string> variants;
    llvm::SmallVector<llvm::GlobalValue *> declared;
    for (const Isa &isa : kIsas) {
      if (isa.feature && !subtarget.checkFeatures(std::string("+") + isa.feature))
        continue;
      unsigned lanes = isa.bits / element->getPrimitiveSizeInBits();
      std::string vectorName =
          "_ZGV" + std::string(1, isa.letter) + "N" + std::to_string(lanes) + "v_" + libm;
      auto *vector = llvm::FixedVectorType::get(element, lanes);
      llvm::FunctionCallee callee =
          module.getOrInsertFunction(vectorName, llvm::FunctionType::get(vector, {vector}, false));
      auto *function = llvm::cast<llvm::Function>(callee.getCallee());
      function->setDoesNotAccessMemory();
      function->setDoesNotThrow();
      declared.push_back(function);
      variants.push_back("_ZGV_LLVM_N" + std::to_string(lanes) + "v_" + scalar->getName().str() +
                         "(" + vectorName + ")");
    }
    // Kept until the vectorizer has seen them (InjectTLIMappings does the same).
    llvm::appendToCompilerUsed(module, declared);
    if (!scalar->isIntrinsic()) {
      scalar->setDoesNotAccessMemory();
      scalar->setDoesNotThrow();
      scalar->setWillReturn();
    }
    for (llvm::User *user : scalar->users())
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(user); call && in(*call->getFunction()))
        llvm::VFABI::setVectorVariantNames(call, variants);
  }
}

} // namespace sotc::cpu
