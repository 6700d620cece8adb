//===- Passes.h - The CUDA target's passes -------------------------------------------------===//
#ifndef SOTC_TARGET_CUDA_PASSES_H
#define SOTC_TARGET_CUDA_PASSES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/Pass.h"

namespace sotc::cuda {

#define GEN_PASS_DECL_CUDAEXTERNDYNAMICSHARED
#define GEN_PASS_REGISTRATION
#include "compiler/target/cuda/Passes.h.inc"

} // namespace sotc::cuda

#endif // SOTC_TARGET_CUDA_PASSES_H
