// sotc-cuda-extern-dynamic-shared: the zero-length shared global that gpu.dynamic_shared_memory
// lowers to becomes external with no initializer (PTX's `.extern .shared ... []`); static
// shared buffers and globals of other address spaces stay as they are.
// RUN: sotc-opt %s --pass-pipeline='builtin.module(gpu.module(sotc-cuda-extern-dynamic-shared))' | FileCheck %s

// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @__wg_k_0() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<32 x f32>
// CHECK: llvm.mlir.global internal @empty_global() {addr_space = 1 : i32} : !llvm.array<0 x i8>
module attributes {gpu.container_module} {
  gpu.module @sotc_kernels {
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global internal @__wg_k_0() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<32 x f32>
    llvm.mlir.global internal @empty_global() {addr_space = 1 : i32} : !llvm.array<0 x i8>
  }
}
