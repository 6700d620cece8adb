// sotc-cpu-kernel-abi: a lowered kernel takes its grid range [begin, end) first and runs those
// rows, its buffers noalias; functions without a block-mapped grid are left alone.
// RUN: sotc-opt %s --sotc-cpu-kernel-abi | FileCheck %s

// CHECK-LABEL: func.func @kernel(%arg0: index, %arg1: index, %arg2: memref<4x8xf32> {llvm.noalias}, %arg3: memref<4x8xf32> {llvm.noalias})
// CHECK:         scf.for %[[ROW:.*]] = %arg0 to %arg1 step %{{.*}} {
// CHECK:           memref.load %arg3[%[[ROW]], %{{.*}}]
// CHECK:           memref.store %{{.*}}, %arg2[%[[ROW]], %{{.*}}]
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @kernel(%out: memref<4x8xf32>, %in: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.forall (%row) in (4) {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %in[%row, %j] : memref<4x8xf32>
      %y = math.exp %x : f32
      memref.store %y, %out[%row, %j] : memref<4x8xf32>
    }
  } {mapping = [#gpu.block<x>]}
  return
}

// CHECK-LABEL: func.func @helper(%arg0: memref<4xf32>)
// CHECK:         scf.forall
func.func @helper(%m: memref<4xf32>) {
  scf.forall (%i) in (4) {
    %c = arith.constant 0.0 : f32
    memref.store %c, %m[%i] : memref<4xf32>
  }
  return
}

// Per-block scratch is allocated once per call, not once per row.
// CHECK-LABEL: func.func @scratch(%arg0: index, %arg1: index, %arg2: memref<4x8xf32> {llvm.noalias})
// CHECK:         %[[SCRATCH:.*]] = memref.alloca() : memref<8xf32>
// CHECK:         scf.for %[[ROW:.*]] = %arg0 to %arg1
// CHECK-NOT:       memref.alloca
// CHECK:           memref.store %{{.*}}, %[[SCRATCH]]
func.func @scratch(%out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  scf.forall (%row) in (4) {
    %s = memref.alloca() : memref<8xf32>
    memref.store %f, %s[%c0] : memref<8xf32>
    %v = memref.load %s[%c0] : memref<8xf32>
    memref.store %v, %out[%row, %c0] : memref<4x8xf32>
  } {mapping = [#gpu.block<x>]}
  return
}
