//===- VectorMath.h - libmvec variants of the libm calls LLVM's table lacks ---------------===//
//
// LLVM knows glibc's vector math library (libmvec) for sin, cos, exp, log and pow only; glibc
// 2.35+ also has tanh, erf, log1p and more. This marks each such libm call with its libmvec
// variants for the target's vector widths (SSE 4/2 lanes, AVX2 8/4, AVX-512 16/8), the way
// LLVM's InjectTLIMappings does for its own table, so the loop vectorizer calls
// `_ZGVdN8v_tanhf` for eight lanes at once instead of `tanhf` eight times.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_TARGET_CPU_VECTORMATH_H
#define SOTC_TARGET_CPU_VECTORMATH_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"

namespace sotc::cpu {

/// Declares the libmvec variants `subtarget` can run and names them on every call of their
/// scalar function in the functions `in` accepts. The calls are also marked as not touching
/// memory: MLIR's math ops have no errno, so neither do the kernels' libm calls.
void addLibmvecVariants(llvm::Module &module, const llvm::MCSubtargetInfo &subtarget,
                        llvm::function_ref<bool(const llvm::Function &)> in);

} // namespace sotc::cpu

#endif // SOTC_TARGET_CPU_VECTORMATH_H
