// sotc-convert-matmul-to-gemm: matmul groups the target's GEMM library takes become
// mapexpr.gemm steps; a consumer that only adds a bias row and applies an activation the
// library has folds into the step.
// RUN: sotc-opt %s --split-input-file --pass-pipeline="builtin.module(sir.subgraph(sotc-convert-matmul-to-gemm{target=cpu}))" | FileCheck %s
// RUN: sotc-opt %s --split-input-file --pass-pipeline="builtin.module(sir.subgraph(sotc-convert-matmul-to-gemm{target=cuda}))" | FileCheck %s --check-prefix=CUDA

// linear: matmul, then a group that only adds the broadcast bias. One step, the group gone;
// the step's result keeps the sum's Python name.
// CHECK-LABEL: sir.subgraph @linear
// CHECK-NEXT:    %[[G:.*]] = mapexpr.gemm "matmul_0"(%arg0, %arg1 bias %arg2) {names = ["out"], transpose_b = true} : (tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT:    sir.output %[[G]]
sir.subgraph @linear(%x: tensor<8x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<8x32xf32> {
  %0 = sir.group "matmul_0" "matmul"(%x, %w) : (tensor<8x16xf32>, tensor<32x16xf32>) -> tensor<8x32xf32> {
  ^bb0(%a: tensor<8x16xf32>, %c: tensor<32x16xf32>):
    %m = sir.prim matmul(%a, %c) {name = "mm", transpose_x = false, transpose_y = true} : (tensor<8x16xf32>, tensor<32x16xf32>) -> tensor<8x32xf32>
    sir.yield %m : tensor<8x32xf32>
  }
  %1 = sir.group "broadcast_to_1_add_2" "injective"(%b, %0) : (tensor<32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32> {
  ^bb0(%r: tensor<32xf32>, %m: tensor<8x32xf32>):
    %e = sir.prim broadcast_to(%r) {name = "bb", shape = array<i64: 8, 32>} : (tensor<32xf32>) -> tensor<8x32xf32>
    %s = sir.prim add(%e, %m) {name = "out"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    sir.yield %s : tensor<8x32xf32>
  }
  sir.output %1 : tensor<8x32xf32>
}

// -----

// Bias and relu fold: cuBLASLt's epilogue on CUDA, oneDNN's post-op on the CPU (a loop over C
// for float64, which CBLAS runs).
// CHECK-LABEL: sir.subgraph @linear_relu
// CHECK-NEXT:    %[[G:.*]] = mapexpr.gemm "matmul_0"(%arg0, %arg1 bias %arg2) {activation = "relu", names = ["y"]} : (tensor<8x16xf64>, tensor<16x32xf64>, tensor<32xf64>) -> tensor<8x32xf64>
// CHECK-NEXT:    sir.output %[[G]]
// CUDA-LABEL:  sir.subgraph @linear_relu
// CUDA-NEXT:     %[[G:.*]] = mapexpr.gemm "matmul_0"(%arg0, %arg1 bias %arg2) {activation = "relu", names = ["y"]}
// CUDA-NEXT:     sir.output %[[G]]
sir.subgraph @linear_relu(%x: tensor<8x16xf64>, %w: tensor<16x32xf64>, %b: tensor<32xf64>) -> tensor<8x32xf64> {
  %0 = sir.group "matmul_0" "matmul"(%x, %w) : (tensor<8x16xf64>, tensor<16x32xf64>) -> tensor<8x32xf64> {
  ^bb0(%a: tensor<8x16xf64>, %c: tensor<16x32xf64>):
    %m = sir.prim matmul(%a, %c) {name = "mm", transpose_x = false, transpose_y = false} : (tensor<8x16xf64>, tensor<16x32xf64>) -> tensor<8x32xf64>
    sir.yield %m : tensor<8x32xf64>
  }
  %1 = sir.group "broadcast_to_1_add_2_max_3" "injective"(%b, %0) : (tensor<32xf64>, tensor<8x32xf64>) -> tensor<8x32xf64> {
  ^bb0(%r: tensor<32xf64>, %m: tensor<8x32xf64>):
    %z = sir.prim fill_constant() {name = "zero", shape = array<i64: 8, 32>, value = 0.0 : f64} : () -> tensor<8x32xf64>
    %e = sir.prim broadcast_to(%r) {name = "bb", shape = array<i64: 8, 32>} : (tensor<32xf64>) -> tensor<8x32xf64>
    %s = sir.prim add(%m, %e) {name = "h"} : (tensor<8x32xf64>, tensor<8x32xf64>) -> tensor<8x32xf64>
    %y = sir.prim max(%s, %z) {name = "y"} : (tensor<8x32xf64>, tensor<8x32xf64>) -> tensor<8x32xf64>
    sir.yield %y : tensor<8x32xf64>
  }
  sir.output %1 : tensor<8x32xf64>
}

// -----

// tanh-GELU without a bias, as the operator library decomposes it (operands in any order).
// CHECK-LABEL: sir.subgraph @gelu
// CHECK-NEXT:    %[[G:.*]] = mapexpr.gemm "matmul_0"(%arg0, %arg1) {activation = "gelu_tanh", names = ["out"]}
// CHECK-NEXT:    sir.output %[[G]]
// CUDA-LABEL:  sir.subgraph @gelu
// CUDA-NEXT:     %[[G:.*]] = mapexpr.gemm "matmul_0"(%arg0, %arg1) {activation = "gelu_tanh", names = ["out"]}
// CUDA-NEXT:     sir.output %[[G]]
sir.subgraph @gelu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = sir.group "matmul_0" "matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<8x16xf32>):
    %m = sir.prim matmul(%a, %c) {name = "mm", transpose_x = false, transpose_y = false} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    sir.yield %m : tensor<4x16xf32>
  }
  %1 = sir.group "gelu" "injective"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%h: tensor<4x16xf32>):
    %c1 = sir.prim fill_constant() {name = "c1", shape = array<i64: 4, 16>, value = 0.044715 : f64} : () -> tensor<4x16xf32>
    %c2 = sir.prim fill_constant() {name = "c2", shape = array<i64: 4, 16>, value = 0.79788456080286541 : f64} : () -> tensor<4x16xf32>
    %c3 = sir.prim fill_constant() {name = "one", shape = array<i64: 4, 16>, value = 1.0 : f64} : () -> tensor<4x16xf32>
    %c4 = sir.prim fill_constant() {name = "half", shape = array<i64: 4, 16>, value = 0.5 : f64} : () -> tensor<4x16xf32>
    %sq = sir.prim multiply(%h, %h) {name = "sq"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %cube = sir.prim multiply(%sq, %h) {name = "cube"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %k = sir.prim multiply(%c1, %cube) {name = "k"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %in = sir.prim add(%k, %h) {name = "in"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %s = sir.prim multiply(%in, %c2) {name = "s"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %t = sir.prim tanh(%s) {name = "t"} : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %t1 = sir.prim add(%c3, %t) {name = "t1"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %hh = sir.prim multiply(%h, %c4) {name = "hh"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %out = sir.prim multiply(%hh, %t1) {name = "out"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    sir.yield %out : tensor<4x16xf32>
  }
  sir.output %1 : tensor<4x16xf32>
}

// -----

// erf-GELU after a bias (torch's nn.GELU(), BERT's): oneDNN's post-op on the CPU. cuBLASLt has
// no erf form: on CUDA the consumer keeps the bias and the activation.
// CHECK-LABEL: sir.subgraph @gelu_erf
// CHECK-NEXT:    %[[G:.*]] = mapexpr.gemm "matmul_0"(%arg0, %arg1 bias %arg2) {activation = "gelu_erf", names = ["out"], transpose_b = true}
// CHECK-NEXT:    sir.output %[[G]]
// CUDA-LABEL:  sir.subgraph @gelu_erf
// CUDA:          mapexpr.gemm "matmul_0"(%arg0, %arg1) {names = ["mm"], transpose_b = true}
// CUDA:          sir.group "gelu_erf"
sir.subgraph @gelu_erf(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = sir.group "matmul_0" "matmul"(%x, %w) : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<16x8xf32>):
    %m = sir.prim matmul(%a, %c) {name = "mm", transpose_x = false, transpose_y = true} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
    sir.yield %m : tensor<4x16xf32>
  }
  %1 = sir.group "gelu_erf" "injective"(%b, %0) : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%r: tensor<16xf32>, %p: tensor<4x16xf32>):
    %bb = sir.prim broadcast_to(%r) {name = "bb", shape = array<i64: 4, 16>} : (tensor<16xf32>) -> tensor<4x16xf32>
    %h = sir.prim add(%bb, %p) {name = "h"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %c1 = sir.prim fill_constant() {name = "rsqrt2", shape = array<i64: 4, 16>, value = 0.70710678118654746 : f64} : () -> tensor<4x16xf32>
    %c2 = sir.prim fill_constant() {name = "one", shape = array<i64: 4, 16>, value = 1.0 : f64} : () -> tensor<4x16xf32>
    %c3 = sir.prim fill_constant() {name = "half", shape = array<i64: 4, 16>, value = 0.5 : f64} : () -> tensor<4x16xf32>
    %s = sir.prim multiply(%h, %c1) {name = "s"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %e = sir.prim erf(%s) {name = "e"} : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %e1 = sir.prim add(%e, %c2) {name = "e1"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %hh = sir.prim multiply(%h, %c3) {name = "hh"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %y = sir.prim multiply(%hh, %e1) {name = "out"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    sir.yield %y : tensor<4x16xf32>
  }
  sir.output %1 : tensor<4x16xf32>
}

// -----

// A consumer that does more than the epilogue (here it also scales by 2) keeps its kernel.
// CUDA-LABEL:  sir.subgraph @more
// CUDA:          mapexpr.gemm "matmul_0"(%arg0, %arg1) {names = ["mm"]}
// CUDA:          sir.group "relu_times_two"
sir.subgraph @more(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = sir.group "matmul_0" "matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: tensor<4x8xf32>, %c: tensor<8x16xf32>):
    %m = sir.prim matmul(%a, %c) {name = "mm", transpose_x = false, transpose_y = false} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    sir.yield %m : tensor<4x16xf32>
  }
  %1 = sir.group "relu_times_two" "injective"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%h: tensor<4x16xf32>):
    %z = sir.prim fill_constant() {name = "zero", shape = array<i64: 4, 16>, value = 0.0 : f64} : () -> tensor<4x16xf32>
    %two = sir.prim fill_constant() {name = "two", shape = array<i64: 4, 16>, value = 2.0 : f64} : () -> tensor<4x16xf32>
    %r = sir.prim max(%h, %z) {name = "r"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %y = sir.prim multiply(%r, %two) {name = "y"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    sir.yield %y : tensor<4x16xf32>
  }
  sir.output %1 : tensor<4x16xf32>
}

// -----

// An integer matmul is no BLAS call: it stays a group and becomes a loop kernel. float16
// GEMMs are the CUDA library's (cuBLASLt), not OpenBLAS's.
// CHECK-LABEL: sir.subgraph @no_library
// CHECK-NOT:     mapexpr.gemm
// CUDA-LABEL:  sir.subgraph @no_library
// CUDA:          sir.group "matmul_0"
// CUDA:          mapexpr.gemm "matmul_1"
sir.subgraph @no_library(%x: tensor<2x3xi32>, %w: tensor<3x4xi32>, %h: tensor<2x3xf16>, %v: tensor<3x4xf16>) -> (tensor<2x4xi32>, tensor<2x4xf16>) {
  %0 = sir.group "matmul_0" "matmul"(%x, %w) : (tensor<2x3xi32>, tensor<3x4xi32>) -> tensor<2x4xi32> {
  ^bb0(%a: tensor<2x3xi32>, %c: tensor<3x4xi32>):
    %m = sir.prim matmul(%a, %c) {name = "mi", transpose_x = false, transpose_y = false} : (tensor<2x3xi32>, tensor<3x4xi32>) -> tensor<2x4xi32>
    sir.yield %m : tensor<2x4xi32>
  }
  %1 = sir.group "matmul_1" "matmul"(%h, %v) : (tensor<2x3xf16>, tensor<3x4xf16>) -> tensor<2x4xf16> {
  ^bb0(%a: tensor<2x3xf16>, %c: tensor<3x4xf16>):
    %m = sir.prim matmul(%a, %c) {name = "mh", transpose_x = false, transpose_y = false} : (tensor<2x3xf16>, tensor<3x4xf16>) -> tensor<2x4xf16>
    sir.yield %m : tensor<2x4xf16>
  }
  sir.output %0, %1 : tensor<2x4xi32>, tensor<2x4xf16>
}

// -----

// Matrix times vector: no n dimension to add a row along, so a following add stays a kernel.
// CHECK-LABEL: sir.subgraph @matvec
// CHECK:         %[[G:.*]] = mapexpr.gemm "matmul_0"(%arg0, %arg1) {names = ["mv"]} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4xf32>
// CHECK:         sir.group "broadcast_to_1_add_2" "injective"(%arg2, %[[G]])
sir.subgraph @matvec(%x: tensor<4x3xf32>, %v: tensor<3xf32>, %b: tensor<1xf32>) -> tensor<4xf32> {
  %0 = sir.group "matmul_0" "matmul"(%x, %v) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x3xf32>, %c: tensor<3xf32>):
    %m = sir.prim matmul(%a, %c) {name = "mv", transpose_x = false, transpose_y = false} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4xf32>
    sir.yield %m : tensor<4xf32>
  }
  %1 = sir.group "broadcast_to_1_add_2" "injective"(%b, %0) : (tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%r: tensor<1xf32>, %m: tensor<4xf32>):
    %e = sir.prim broadcast_to(%r) {name = "bb", shape = array<i64: 4>} : (tensor<1xf32>) -> tensor<4xf32>
    %s = sir.prim add(%m, %e) {name = "out"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    sir.yield %s : tensor<4xf32>
  }
  sir.output %1 : tensor<4xf32>
}

// -----

// A half GEMM's consumer computes in float32 (sotc-sir-widen-half): it widens the product and
// the bias row and rounds the result. cuBLASLt's epilogue does the same in one call: bias and
// relu fold, the bias read in half. A bias in float32 stays in the consumer.
// CUDA-LABEL:  sir.subgraph @half_linear_relu
// CUDA-NEXT:     %[[G:.*]] = mapexpr.gemm "matmul_0"(%arg0, %arg1 bias %arg2) {activation = "relu", names = ["y"]} : (tensor<8x16xf16>, tensor<16x32xf16>, tensor<32xf16>) -> tensor<8x32xf16>
// CUDA-NEXT:     sir.output %[[G]]
sir.subgraph @half_linear_relu(%x: tensor<8x16xf16>, %w: tensor<16x32xf16>, %b: tensor<32xf16>) -> tensor<8x32xf16> {
  %0 = sir.group "matmul_0" "matmul"(%x, %w) : (tensor<8x16xf16>, tensor<16x32xf16>) -> tensor<8x32xf16> {
  ^bb0(%a: tensor<8x16xf16>, %c: tensor<16x32xf16>):
    %m = sir.prim matmul(%a, %c) {name = "mm", transpose_x = false, transpose_y = false} : (tensor<8x16xf16>, tensor<16x32xf16>) -> tensor<8x32xf16>
    sir.yield %m : tensor<8x32xf16>
  }
  %1 = sir.group "cast_1_broadcast_to_2_add_3_max_4_cast_5" "injective"(%b, %0) : (tensor<32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16> {
  ^bb0(%r: tensor<32xf16>, %m: tensor<8x32xf16>):
    %rw = sir.prim cast(%r) : (tensor<32xf16>) -> tensor<32xf32>
    %mw = sir.prim cast(%m) : (tensor<8x32xf16>) -> tensor<8x32xf32>
    %z = sir.prim fill_constant() {shape = array<i64: 8, 32>, value = 0.0 : f64} : () -> tensor<8x32xf32>
    %e = sir.prim broadcast_to(%rw) {shape = array<i64: 8, 32>} : (tensor<32xf32>) -> tensor<8x32xf32>
    %s = sir.prim add(%mw, %e) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %y = sir.prim max(%s, %z) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %h = sir.prim cast(%y) {name = "y"} : (tensor<8x32xf32>) -> tensor<8x32xf16>
    sir.yield %h : tensor<8x32xf16>
  }
  sir.output %1 : tensor<8x32xf16>
}

// -----

// CUDA-LABEL:  sir.subgraph @half_float_bias
// CUDA:          mapexpr.gemm "matmul_0"(%arg0, %arg1) {names = ["mm"]}
// CUDA:          sir.group "cast_1_broadcast_to_2_add_3_cast_4"
sir.subgraph @half_float_bias(%x: tensor<8x16xf16>, %w: tensor<16x32xf16>, %b: tensor<32xf32>) -> tensor<8x32xf16> {
  %0 = sir.group "matmul_0" "matmul"(%x, %w) : (tensor<8x16xf16>, tensor<16x32xf16>) -> tensor<8x32xf16> {
  ^bb0(%a: tensor<8x16xf16>, %c: tensor<16x32xf16>):
    %m = sir.prim matmul(%a, %c) {name = "mm", transpose_x = false, transpose_y = false} : (tensor<8x16xf16>, tensor<16x32xf16>) -> tensor<8x32xf16>
    sir.yield %m : tensor<8x32xf16>
  }
  %1 = sir.group "cast_1_broadcast_to_2_add_3_cast_4" "injective"(%b, %0) : (tensor<32xf32>, tensor<8x32xf16>) -> tensor<8x32xf16> {
  ^bb0(%r: tensor<32xf32>, %m: tensor<8x32xf16>):
    %mw = sir.prim cast(%m) : (tensor<8x32xf16>) -> tensor<8x32xf32>
    %e = sir.prim broadcast_to(%r) {shape = array<i64: 8, 32>} : (tensor<32xf32>) -> tensor<8x32xf32>
    %s = sir.prim add(%mw, %e) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
    %h = sir.prim cast(%s) {name = "y"} : (tensor<8x32xf32>) -> tensor<8x32xf16>
    sir.yield %h : tensor<8x32xf16>
  }
  sir.output %1 : tensor<8x32xf16>
}
