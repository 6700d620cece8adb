//===- Passes.td - The CUDA target's passes ------------------------------------------------===//
#ifndef SOTC_TARGET_CUDA_PASSES
#define SOTC_TARGET_CUDA_PASSES

include "mlir/Pass/PassBase.td"

def CudaExternDynamicShared
    : Pass<"sotc-cuda-extern-dynamic-shared", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Declare the dynamic shared memory of NVVM kernels extern";
  let description = [{
    `convert-gpu-to-nvvm` lowers `gpu.dynamic_shared_memory` to an internal global of
    `!llvm.array<0 x i8>` in address space 3, which NVPTX prints as a static one-byte shared
    variable (`.shared .align 16 .b8 __dynamic_shmem__0;`): a block's dynamic shared memory
    would then start on top of the kernel's static shared buffers. Made external, with no
    initializer, it is printed as CUDA's `extern __shared__` array
    (`.extern .shared .align 16 .b8 __dynamic_shmem__0[];`), which starts after them.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // SOTC_TARGET_CUDA_PASSES
