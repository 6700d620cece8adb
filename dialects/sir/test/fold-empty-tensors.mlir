// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-fold-empty-tensors))' --split-input-file --verify-diagnostics | FileCheck %s
// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-fold-empty-tensors,sotc-sir-fuse))' --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=FUSED

// What computes a tensor with no elements becomes an operand-less fill of its name; what
// reduces one becomes the reduction's identity; a matmul over k = 0 is zeros.
// CHECK-LABEL: sir.subgraph @reduce_empty
// CHECK-DAG:  %[[E:.*]] = sir.prim fill_constant() {name = "var_1", shape = array<i64: 0, 3>, value = 0.000000e+00 : f64} : () -> tensor<0x3xf32>
// CHECK-DAG:  %[[S:.*]] = sir.prim fill_constant() {name = "var_2", shape = array<i64: 3>, value = 0.000000e+00 : f64} : () -> tensor<3xf32>
// CHECK-DAG:  %[[M:.*]] = sir.prim fill_constant() {name = "var_3", shape = array<i64: 3>, value = 0xFFF0000000000000 : f64} : () -> tensor<3xf32>
// CHECK-DAG:  %[[P:.*]] = sir.prim fill_constant() {name = "var_4", shape = array<i64: 3>, value = 1.000000e+00 : f64} : () -> tensor<3xi64>
// CHECK-DAG:  %[[G:.*]] = sir.prim fill_constant() {name = "var_5", shape = array<i64: 3, 3>, value = 0.000000e+00 : f64} : () -> tensor<3x3xf32>
// CHECK-NOT:  exp
// CHECK:      sir.output %[[E]], %[[S]], %[[M]], %[[P]], %[[G]]
// The empty fill stays outside every group.
// FUSED-LABEL: sir.subgraph @reduce_empty
// FUSED:       sir.prim fill_constant() {name = "var_1"{{.*}} -> tensor<0x3xf32>
// FUSED-NOT:   sir.group {{.*}} -> tensor<0x3xf32>
sir.subgraph @reduce_empty(%x: tensor<0x3xf32>, %i: tensor<0x3xi64>) -> (tensor<0x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi64>, tensor<3x3xf32>) {
  %0 = sir.prim exp(%x) {name = "var_1"} : (tensor<0x3xf32>) -> tensor<0x3xf32>
  %1 = sir.prim reduce_sum(%x) {axes = array<i64: 0>, keepdim = false, name = "var_2"} : (tensor<0x3xf32>) -> tensor<3xf32>
  %2 = sir.prim reduce_max(%0) {axes = array<i64: 0>, keepdim = false, name = "var_3"} : (tensor<0x3xf32>) -> tensor<3xf32>
  %3 = sir.prim reduce_prod(%i) {axes = array<i64: 0>, keepdim = false, name = "var_4"} : (tensor<0x3xi64>) -> tensor<3xi64>
  %4 = sir.prim matmul(%x, %x) {transpose_x = true, transpose_y = false, name = "var_5"} : (tensor<0x3xf32>, tensor<0x3xf32>) -> tensor<3x3xf32>
  sir.output %0, %1, %2, %3, %4 : tensor<0x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi64>, tensor<3x3xf32>
}

// -----

// A concat drops its empty operands; with one left, it is that operand.
// CHECK-LABEL: sir.subgraph @concat_empty
// CHECK:      %[[C:.*]] = sir.prim concat(%arg1, %arg1) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK:      sir.output %[[C]], %arg1
sir.subgraph @concat_empty(%x: tensor<0x3xf32>, %y: tensor<2x3xf32>) -> (tensor<4x3xf32>, tensor<2x3xf32>) {
  %0 = sir.prim concat(%x, %y, %x, %y) {axis = 0 : i64} : (tensor<0x3xf32>, tensor<2x3xf32>, tensor<0x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %1 = sir.prim concat(%x, %y) {axis = 0 : i64} : (tensor<0x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  sir.output %0, %1 : tensor<4x3xf32>, tensor<2x3xf32>
}

// -----

// A primitive with no meaning over an empty operand is a coded error.
sir.subgraph @gather_empty(%x: tensor<0x3xf32>, %i: tensor<2xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{E4002: gather of a tensor with no elements into 'tensor<2x3xf32>' is not supported yet}}
  %0 = sir.prim gather(%x, %i) : (tensor<0x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  sir.output %0 : tensor<2x3xf32>
}

// -----

// A static dimension of 0 empties a tensor whatever its dynamic sizes (a rotary embedding over
// none of a head's dims, at every sequence length); the fill keeps the dynamic one as -1.
// CHECK-LABEL: sir.subgraph @empty_beside_dynamic
// CHECK-DAG:  %[[E:.*]] = sir.prim fill_constant() {name = "var_1", shape = array<i64: -1, 0>, value = 0.000000e+00 : f64} : () -> tensor<?x0xf32>
// CHECK-DAG:  %[[S:.*]] = sir.prim fill_constant() {name = "var_2", shape = array<i64: -1>, value = 0.000000e+00 : f64} : () -> tensor<?xf32>
// CHECK-NOT:  exp
// CHECK:      sir.output %[[E]], %[[S]]
sir.subgraph @empty_beside_dynamic(%x: tensor<?x0xf32>) -> (tensor<?x0xf32>, tensor<?xf32>) {
  %0 = sir.prim exp(%x) {name = "var_1"} : (tensor<?x0xf32>) -> tensor<?x0xf32>
  %1 = sir.prim reduce_sum(%0) {axes = array<i64: 1>, keepdim = false, name = "var_2"} : (tensor<?x0xf32>) -> tensor<?xf32>
  sir.output %0, %1 : tensor<?x0xf32>, tensor<?xf32>
}
