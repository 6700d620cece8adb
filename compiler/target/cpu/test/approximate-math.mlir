// sotc-cpu-approximate-math: f32 exp, log, log1p, tanh and erf become inline polynomials
// (arithmetic and fma, no call); sin and anything f64 keep their library calls; powers by
// constants are products.
// RUN: sotc-opt %s --sotc-cpu-approximate-math | FileCheck %s

// CHECK-LABEL: func.func @f32
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK-NOT: math.log
// CHECK: math.fma
// CHECK: math.sin
// CHECK: return
func.func @f32(%x: f32) -> (f32, f32, f32, f32, f32, f32) {
  %0 = math.exp %x : f32
  %1 = math.tanh %x : f32
  %2 = math.erf %x : f32
  %3 = math.log %x : f32
  %4 = math.log1p %x : f32
  %5 = math.sin %x : f32
  return %0, %1, %2, %3, %4, %5 : f32, f32, f32, f32, f32, f32
}

// CHECK-LABEL: func.func @f64
// CHECK: math.exp
// CHECK: math.tanh
func.func @f64(%x: f64) -> (f64, f64) {
  %0 = math.exp %x : f64
  %1 = math.tanh %x : f64
  return %0, %1 : f64, f64
}

// Powers by constants MLIR's algebraic simplification knows are arithmetic (x^3: two
// multiplies, x^0.5: sqrt), not a powf call per element; other exponents keep the call.
// CHECK-LABEL: func.func @powers
// CHECK-NOT: math.powf %{{.*}}, %{{.*}} : vector
// CHECK: %[[SQ:.*]] = arith.mulf %arg0, %arg0 : vector<8xf32>
// CHECK: arith.mulf %arg0, %[[SQ]] : vector<8xf32>
// CHECK: math.sqrt %arg0 : vector<8xf32>
// CHECK: math.powf %arg1, %{{.*}} : f32
func.func @powers(%x: vector<8xf32>, %y: f32) -> (vector<8xf32>, vector<8xf32>, f32) {
  %three = arith.constant dense<3.0> : vector<8xf32>
  %half = arith.constant dense<0.5> : vector<8xf32>
  %other = arith.constant 2.5 : f32
  %0 = math.powf %x, %three : vector<8xf32>
  %1 = math.powf %x, %half : vector<8xf32>
  %2 = math.powf %y, %other : f32
  return %0, %1, %2 : vector<8xf32>, vector<8xf32>, f32
}
