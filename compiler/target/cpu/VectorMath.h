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

#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace sotc::cpu {

/// Declares the libmvec variants the target can run and names them on every call of their
/// scalar function. The calls are also marked as not touching memory: MLIR's math ops have no
/// errno, so neither do the kernels' libm calls.
void addLibmvecVariants(llvm::Module &module, const llvm::TargetMachine &machine);

} // namespace sotc::cpu

#endif // SOTC_TARGET_CPU_VECTORMATH_H
