// sotc-cpu-expand-arith: integer floor division (Python's //) becomes plain arithmetic, and
// maximumf/minimumf stay (LLVM's maximum/minimum intrinsics keep row maxima vectorizable).
// RUN: sotc-opt %s --sotc-cpu-expand-arith | FileCheck %s

// CHECK-LABEL: func.func @ops
// CHECK-NOT: arith.floordivsi
// CHECK: arith.divsi
// CHECK: arith.maximumf
// CHECK: arith.minimumf
func.func @ops(%a: i64, %b: i64, %x: f32, %y: f32) -> (i64, f32, f32) {
  %0 = arith.floordivsi %a, %b : i64
  %1 = arith.maximumf %x, %y : f32
  %2 = arith.minimumf %x, %y : f32
  return %0, %1, %2 : i64, f32, f32
}
