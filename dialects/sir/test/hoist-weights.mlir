// RUN: sotc-opt %s --pass-pipeline='builtin.module(sotc-sir-hoist-weights)' --split-input-file | FileCheck %s

// A conv weight reshaped to the GEMM's rows and a per-channel scale computed from weights
// move to @prepare_weights; the entry reads them as trailing arguments named after their
// largest weight. The scale's broadcast to the activation's shape stays: it would be
// larger than any weight it comes from. The constant both sides read is cloned.
// CHECK-LABEL: sir.subgraph @SIR_0
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x6xf32> {sir.name = "x"}
// CHECK-SAME: %[[PW:[^:]*]]: tensor<3x6xf32> {sir.name = "prepared.conv.weight", sir.stop_gradient = true}
// CHECK-SAME: %[[PS:[^:]*]]: tensor<1x3xf32> {sir.name = "prepared.bn.running_var", sir.stop_gradient = true}
// CHECK:      %[[MM:.*]] = sir.prim matmul(%[[X]], %[[PW]]) {transpose_x = false, transpose_y = true}
// CHECK-NEXT: %[[SB:.*]] = sir.prim broadcast_to(%[[PS]]) {shape = array<i64: 4, 3>}
// CHECK-NEXT: %[[Y:.*]] = sir.prim multiply(%[[MM]], %[[SB]])
// CHECK-NEXT: %[[ONE:.*]] = sir.prim fill_constant() {shape = array<i64: 4, 3>, value = 1.000000e+00 : f64}
// CHECK-NEXT: %[[Z:.*]] = sir.prim add(%[[Y]], %[[ONE]])
// CHECK-NEXT: sir.output %[[Z]]
// CHECK-LABEL: sir.subgraph @prepare_weights
// CHECK-SAME: (%[[W:[^:]*]]: tensor<3x2x3xf32> {sir.name = "conv.weight", sir.weight}, %[[V:[^:]*]]: tensor<3xf32> {sir.name = "bn.running_var", sir.weight}, %[[G:[^:]*]]: tensor<3xf32> {sir.name = "bn.weight", sir.weight})
// CHECK-SAME: -> (tensor<3x6xf32>, tensor<1x3xf32>)
// CHECK-NEXT: %[[R:.*]] = sir.prim reshape(%[[W]]) {name = "prepared.conv.weight", shape = array<i64: 3, 6>}
// CHECK-NEXT: %[[EPS:.*]] = sir.prim fill_constant() {shape = array<i64: 3>, value = 1.000000e+00 : f64}
// CHECK-NEXT: %[[VE:.*]] = sir.prim add(%[[V]], %[[EPS]])
// CHECK-NEXT: %[[RS:.*]] = sir.prim rsqrt(%[[VE]])
// CHECK-NEXT: %[[S:.*]] = sir.prim multiply(%[[RS]], %[[G]])
// CHECK-NEXT: %[[S2:.*]] = sir.prim reshape(%[[S]]) {name = "prepared.bn.running_var", shape = array<i64: 1, 3>}
// CHECK-NEXT: sir.output %[[R]], %[[S2]]
sir.subgraph @SIR_0(%x: tensor<4x6xf32> {sir.name = "x"}, %w: tensor<3x2x3xf32> {sir.name = "conv.weight", sir.weight}, %v: tensor<3xf32> {sir.name = "bn.running_var", sir.weight}, %g: tensor<3xf32> {sir.name = "bn.weight", sir.weight}) -> tensor<4x3xf32> {
  %0 = sir.prim reshape(%w) {shape = array<i64: 3, 6>} : (tensor<3x2x3xf32>) -> tensor<3x6xf32>
  %1 = sir.prim matmul(%x, %0) {transpose_x = false, transpose_y = true} : (tensor<4x6xf32>, tensor<3x6xf32>) -> tensor<4x3xf32>
  %2 = sir.prim fill_constant() {shape = array<i64: 3>, value = 1.0 : f64} : () -> tensor<3xf32>
  %3 = sir.prim add(%v, %2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %4 = sir.prim rsqrt(%3) : (tensor<3xf32>) -> tensor<3xf32>
  %5 = sir.prim multiply(%4, %g) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %6 = sir.prim reshape(%5) {shape = array<i64: 1, 3>} : (tensor<3xf32>) -> tensor<1x3xf32>
  %7 = sir.prim broadcast_to(%6) {shape = array<i64: 4, 3>} : (tensor<1x3xf32>) -> tensor<4x3xf32>
  %8 = sir.prim multiply(%1, %7) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %9 = sir.prim fill_constant() {shape = array<i64: 4, 3>, value = 1.0 : f64} : () -> tensor<4x3xf32>
  %10 = sir.prim add(%8, %9) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  sir.output %10 : tensor<4x3xf32>
}

// -----

// Nothing to prepare: weights read as they are, a weight-derived value the entry returns,
// and a subgraph with no weights at all (only the entry, the first subgraph, is looked at).
// CHECK-LABEL: sir.subgraph @SIR_0
// CHECK:      sir.prim neg(%arg1)
// CHECK-LABEL: sir.subgraph @SIR_1
// CHECK:      sir.prim neg(%arg0)
// CHECK-NOT:  prepare_weights
sir.subgraph @SIR_0(%x: tensor<4x3xf32> {sir.name = "x"}, %b: tensor<3xf32> {sir.name = "b", sir.weight}) -> (tensor<4x3xf32>, tensor<3xf32>) {
  %0 = sir.prim broadcast_to(%b) {shape = array<i64: 4, 3>} : (tensor<3xf32>) -> tensor<4x3xf32>
  %1 = sir.prim add(%x, %0) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = sir.prim neg(%b) : (tensor<3xf32>) -> tensor<3xf32>
  sir.output %1, %2 : tensor<4x3xf32>, tensor<3xf32>
}
sir.subgraph @SIR_1(%b: tensor<3xf32> {sir.name = "b", sir.weight}) -> tensor<3xf32> {
  %0 = sir.prim neg(%b) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = sir.prim neg(%0) : (tensor<3xf32>) -> tensor<3xf32>
  sir.output %1 : tensor<3xf32>
}

// -----

// A weight broadcast to the activation's shape stays, and so does what reads it: the sum of
// the broadcast bias is computed in the entry, not prepared from a value it does not have.
// CHECK-LABEL: sir.subgraph @SIR_0
// CHECK:      %[[B:.*]] = sir.prim broadcast_to(%arg1)
// CHECK:      sir.prim add(%arg0, %[[B]])
// CHECK:      %[[S:.*]] = sir.prim reduce_sum(%[[B]])
// CHECK:      sir.prim neg(%[[S]])
// CHECK-NOT:  prepare_weights
sir.subgraph @SIR_0(%x: tensor<4x3xf32> {sir.name = "x"}, %b: tensor<3xf32> {sir.name = "b", sir.weight}) -> tensor<4x3xf32> {
  %0 = sir.prim broadcast_to(%b) {shape = array<i64: 4, 3>} : (tensor<3xf32>) -> tensor<4x3xf32>
  %1 = sir.prim add(%x, %0) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = sir.prim reduce_sum(%0) {axes = array<i64: 0>, keepdim = false} : (tensor<4x3xf32>) -> tensor<3xf32>
  %3 = sir.prim neg(%2) : (tensor<3xf32>) -> tensor<3xf32>
  %4 = sir.prim broadcast_to(%3) {shape = array<i64: 4, 3>} : (tensor<3xf32>) -> tensor<4x3xf32>
  %5 = sir.prim add(%1, %4) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  sir.output %5 : tensor<4x3xf32>
}

// -----

// A state weight (sir.state: the program writes it in place, a KV cache) changes every call:
// nothing is computed from it ahead of the call. The plain weight's reshape is hoisted.
// CHECK-LABEL: sir.subgraph @SIR_0
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32> {sir.name = "x"}
// CHECK-SAME: %[[C:[^:]*]]: tensor<2x4xf32> {sir.name = "cache", sir.state, sir.weight}
// CHECK-SAME: %[[PW:[^:]*]]: tensor<4x2xf32> {sir.name = "prepared.w", sir.stop_gradient = true}
// CHECK:      %[[T:.*]] = sir.prim transpose(%[[C]])
// CHECK-NEXT: %[[A:.*]] = sir.prim add(%[[T]], %[[PW]])
// CHECK-LABEL: sir.subgraph @prepare_weights
// CHECK-SAME: (%{{[^:]*}}: tensor<8xf32> {sir.name = "w", sir.weight}) -> tensor<4x2xf32>
// CHECK-NOT: cache
sir.subgraph @SIR_0(%x: tensor<2x4xf32> {sir.name = "x"}, %c: tensor<2x4xf32> {sir.name = "cache", sir.weight, sir.state}, %w: tensor<8xf32> {sir.name = "w", sir.weight}) -> (tensor<4x2xf32>, tensor<2x4xf32>) {
  %0 = sir.prim transpose(%c) {perm = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %1 = sir.prim reshape(%w) {shape = array<i64: 4, 2>} : (tensor<8xf32>) -> tensor<4x2xf32>
  %2 = sir.prim add(%0, %1) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %3 = sir.prim add(%c, %x) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  sir.output %2, %3 : tensor<4x2xf32>, tensor<2x4xf32>
}
