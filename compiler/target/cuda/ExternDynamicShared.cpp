//===- ExternDynamicShared.cpp - Dynamic shared memory as CUDA's extern __shared__ -------===//
//
// A global of the kernels' module in address space 3 (shared) with a zero-length array type
// is the dynamic shared memory's base (what gpu.dynamic_shared_memory lowers to): it loses
// its initializer and becomes external, so that PTX declares it `.extern .shared ... []`.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/target/cuda/Passes.h"

namespace sotc::cuda {

#define GEN_PASS_DEF_CUDAEXTERNDYNAMICSHARED
#include "compiler/target/cuda/Passes.h.inc"

namespace {

constexpr unsigned kSharedAddressSpace = 3;

struct CudaExternDynamicSharedPass
    : impl::CudaExternDynamicSharedBase<CudaExternDynamicSharedPass> {
  void runOnOperation() override {
    for (auto global : getOperation().getOps<mlir::LLVM::GlobalOp>()) {
      auto array = mlir::dyn_cast<mlir::LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() != kSharedAddressSpace || !array || array.getNumElements() != 0)
        continue;
      global.setLinkage(mlir::LLVM::Linkage::External);
      global.removeValueAttr();
      global.getInitializerRegion().getBlocks().clear();
    }
  }
};

} // namespace
} // namespace sotc::cuda
