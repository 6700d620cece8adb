// sotc-opt parses and prints MLIR with the dialects registered so far; the sotc dialects
// add their own round-trip tests next to their code.
// RUN: sotc-opt %s | FileCheck %s
// RUN: sotc-opt %s | sotc-opt | FileCheck %s

// CHECK-LABEL: func.func @add
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
func.func @add(%a: f32, %b: f32) -> f32 {
  %0 = arith.addf %a, %b : f32
  return %0 : f32
}
