// Rows flattened with their batch ([?, 4, 8] -> [4*s0, 8]; [B, T, 8] -> [s0*s1, 8]) around
// row-wise work are computed on the unflattened tensor: the merge disappears, or moves after
// the work where a result is returned merged. Work that is not row-wise keeps the merge (its
// kernels index the rows by the product of the sizes).
// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-unmerge-batch))' --split-input-file | FileCheck %s

// transformers' Conv1D: view(-1, C), addmm, view back.
// CHECK-LABEL: sir.subgraph @conv1d
// CHECK-NOT: reshape
// CHECK: %[[MM:.*]] = sir.prim matmul(%arg0, %arg1) {{.*}} : (tensor<?x4x8xf32>, tensor<8x6xf32>) -> tensor<?x4x6xf32>
// CHECK: %[[B:.*]] = sir.prim broadcast_to(%arg2) {shape = array<i64: -1, 4, 6>} : (tensor<6xf32>) -> tensor<?x4x6xf32>
// CHECK: %[[SUM:.*]] = sir.prim add(%[[B]], %[[MM]]) : (tensor<?x4x6xf32>, tensor<?x4x6xf32>) -> tensor<?x4x6xf32>
// CHECK: %[[MAX:.*]] = sir.prim reduce_max(%[[SUM]]) {axes = array<i64: 2>, keepdim = true} : (tensor<?x4x6xf32>) -> tensor<?x4x1xf32>
// CHECK: sir.output %[[SUM]], %[[MAX]] : tensor<?x4x6xf32>, tensor<?x4x1xf32>
sir.subgraph @conv1d(%x: tensor<?x4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> (tensor<?x4x6xf32>, tensor<?x4x1xf32>) {
  %0 = sir.prim reshape(%x) {shape = array<i64: -1, 8>} : (tensor<?x4x8xf32>) -> tensor<?x8xf32, #sir.dims<"4*s0">>
  %1 = sir.prim matmul(%0, %w) {transpose_x = false, transpose_y = false} : (tensor<?x8xf32, #sir.dims<"4*s0">>, tensor<8x6xf32>) -> tensor<?x6xf32, #sir.dims<"4*s0">>
  %2 = sir.prim broadcast_to(%b) {shape = array<i64: -1, 6>} : (tensor<6xf32>) -> tensor<?x6xf32, #sir.dims<"4*s0">>
  %3 = sir.prim add(%2, %1) : (tensor<?x6xf32, #sir.dims<"4*s0">>, tensor<?x6xf32, #sir.dims<"4*s0">>) -> tensor<?x6xf32, #sir.dims<"4*s0">>
  %4 = sir.prim reduce_max(%3) {axes = array<i64: 1>, keepdim = true} : (tensor<?x6xf32, #sir.dims<"4*s0">>) -> tensor<?x1xf32, #sir.dims<"4*s0">>
  %5 = sir.prim reshape(%3) {shape = array<i64: -1, 4, 6>} : (tensor<?x6xf32, #sir.dims<"4*s0">>) -> tensor<?x4x6xf32>
  %6 = sir.prim reshape(%4) {shape = array<i64: -1, 4, 1>} : (tensor<?x1xf32, #sir.dims<"4*s0">>) -> tensor<?x4x1xf32>
  sir.output %5, %6 : tensor<?x4x6xf32>, tensor<?x4x1xf32>
}

// -----

// A merged result returned as it is: computed apart, then viewed merged (once).
// CHECK-LABEL: sir.subgraph @returned
// CHECK: %[[E:.*]] = sir.prim exp(%arg0) : (tensor<?x4x8xf32>) -> tensor<?x4x8xf32>
// CHECK: %[[M:.*]] = sir.prim reshape(%[[E]]) {shape = array<i64: -1, 8>} : (tensor<?x4x8xf32>) -> tensor<?x8xf32, #sir.dims<"4*s0">>
// CHECK: sir.output %[[M]] : tensor<?x8xf32, #sir.dims<"4*s0">>
sir.subgraph @returned(%x: tensor<?x4x8xf32>) -> tensor<?x8xf32, #sir.dims<"4*s0">> {
  %0 = sir.prim reshape(%x) {shape = array<i64: -1, 8>} : (tensor<?x4x8xf32>) -> tensor<?x8xf32, #sir.dims<"4*s0">>
  %1 = sir.prim exp(%0) : (tensor<?x8xf32, #sir.dims<"4*s0">>) -> tensor<?x8xf32, #sir.dims<"4*s0">>
  sir.output %1 : tensor<?x8xf32, #sir.dims<"4*s0">>
}

// -----

// A transpose of the merged rows is not row-wise: the merge stays.
// CHECK-LABEL: sir.subgraph @moved
// CHECK: sir.prim reshape(%arg0) {shape = array<i64: -1, 8>}
// CHECK: sir.prim transpose
sir.subgraph @moved(%x: tensor<?x4x8xf32>) -> tensor<8x?xf32, #sir.dims<"4*s0">> {
  %0 = sir.prim reshape(%x) {shape = array<i64: -1, 8>} : (tensor<?x4x8xf32>) -> tensor<?x8xf32, #sir.dims<"4*s0">>
  %1 = sir.prim transpose(%0) {perm = array<i64: 1, 0>} : (tensor<?x8xf32, #sir.dims<"4*s0">>) -> tensor<8x?xf32, #sir.dims<"4*s0">>
  sir.output %1 : tensor<8x?xf32, #sir.dims<"4*s0">>
}

// -----

// A softmax over the merged rows: its maximum and sum broadcast within each row.
// CHECK-LABEL: sir.subgraph @softmax
// CHECK-NOT: reshape
// CHECK: %[[MAX:.*]] = sir.prim reduce_max(%arg0) {axes = array<i64: 2>, keepdim = true} : (tensor<?x4x6xf32>) -> tensor<?x4x1xf32>
// CHECK: sir.prim broadcast_to(%[[MAX]]) {shape = array<i64: -1, 4, 6>} : (tensor<?x4x1xf32>) -> tensor<?x4x6xf32>
sir.subgraph @softmax(%x: tensor<?x4x6xf32>) -> tensor<?x4x6xf32> {
  %0 = sir.prim reshape(%x) {shape = array<i64: -1, 6>} : (tensor<?x4x6xf32>) -> tensor<?x6xf32, #sir.dims<"4*s0">>
  %1 = sir.prim reduce_max(%0) {axes = array<i64: 1>, keepdim = true} : (tensor<?x6xf32, #sir.dims<"4*s0">>) -> tensor<?x1xf32, #sir.dims<"4*s0">>
  %2 = sir.prim broadcast_to(%1) {shape = array<i64: -1, 6>} : (tensor<?x1xf32, #sir.dims<"4*s0">>) -> tensor<?x6xf32, #sir.dims<"4*s0">>
  %3 = sir.prim subtract(%0, %2) : (tensor<?x6xf32, #sir.dims<"4*s0">>, tensor<?x6xf32, #sir.dims<"4*s0">>) -> tensor<?x6xf32, #sir.dims<"4*s0">>
  %4 = sir.prim reshape(%3) {shape = array<i64: -1, 4, 6>} : (tensor<?x6xf32, #sir.dims<"4*s0">>) -> tensor<?x4x6xf32>
  sir.output %4 : tensor<?x4x6xf32>
}

// -----

// Two sizes merged (transformers' Conv1D on [B, T, C]): rows of s0*s1 computed as [B, T].
// CHECK-LABEL: sir.subgraph @tokens
// CHECK-NOT: reshape
// CHECK: %[[MM:.*]] = sir.prim matmul(%arg0, %arg1) {{.*}} : (tensor<?x?x8xf32, #sir.dims<"s0", "s1">>, tensor<8x6xf32>) -> tensor<?x?x6xf32, #sir.dims<"s0", "s1">>
// CHECK: %[[E:.*]] = sir.prim exp(%[[MM]]) : (tensor<?x?x6xf32, #sir.dims<"s0", "s1">>) -> tensor<?x?x6xf32, #sir.dims<"s0", "s1">>
// CHECK: %[[S:.*]] = sir.prim reduce_sum(%[[E]]) {axes = array<i64: 2>, keepdim = false} : (tensor<?x?x6xf32, #sir.dims<"s0", "s1">>) -> tensor<?x?xf32, #sir.dims<"s0", "s1">>
// CHECK: sir.output %[[E]], %[[S]] : tensor<?x?x6xf32, #sir.dims<"s0", "s1">>, tensor<?x?xf32, #sir.dims<"s0", "s1">>
sir.subgraph @tokens(%x: tensor<?x?x8xf32, #sir.dims<"s0", "s1">>, %w: tensor<8x6xf32>) -> (tensor<?x?x6xf32, #sir.dims<"s0", "s1">>, tensor<?x?xf32, #sir.dims<"s0", "s1">>) {
  %0 = sir.prim reshape(%x) {shape = array<i64: -1, 8>} : (tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> tensor<?x8xf32, #sir.dims<"s0*s1">>
  %1 = sir.prim matmul(%0, %w) {transpose_x = false, transpose_y = false} : (tensor<?x8xf32, #sir.dims<"s0*s1">>, tensor<8x6xf32>) -> tensor<?x6xf32, #sir.dims<"s0*s1">>
  %2 = sir.prim exp(%1) : (tensor<?x6xf32, #sir.dims<"s0*s1">>) -> tensor<?x6xf32, #sir.dims<"s0*s1">>
  %3 = sir.prim reduce_sum(%2) {axes = array<i64: 1>, keepdim = false} : (tensor<?x6xf32, #sir.dims<"s0*s1">>) -> tensor<?xf32, #sir.dims<"s0*s1">>
  %4 = sir.prim reshape(%2) {shape = array<i64: -1, -1, 6>} : (tensor<?x6xf32, #sir.dims<"s0*s1">>) -> tensor<?x?x6xf32, #sir.dims<"s0", "s1">>
  %5 = sir.prim reshape(%3) {shape = array<i64: -1, -1>} : (tensor<?xf32, #sir.dims<"s0*s1">>) -> tensor<?x?xf32, #sir.dims<"s0", "s1">>
  sir.output %4, %5 : tensor<?x?x6xf32, #sir.dims<"s0", "s1">>, tensor<?x?xf32, #sir.dims<"s0", "s1">>
}

// -----

// Merged rows read both ways (viewed back and returned merged): one GEMM over [B, T], the
// merged result a view of it.
// CHECK-LABEL: sir.subgraph @both
// CHECK-COUNT-1: sir.prim matmul
// CHECK-NOT: sir.prim matmul
// CHECK: %[[V:.*]] = sir.prim reshape(%{{.*}}) {shape = array<i64: -1, 6>} : (tensor<?x?x6xf32, #sir.dims<"s0", "s1">>) -> tensor<?x6xf32, #sir.dims<"s0*s1">>
// CHECK: sir.output %{{.*}}, %[[V]]
sir.subgraph @both(%x: tensor<?x?x8xf32, #sir.dims<"s0", "s1">>, %w: tensor<8x6xf32>) -> (tensor<?x?x6xf32, #sir.dims<"s0", "s1">>, tensor<?x6xf32, #sir.dims<"s0*s1">>) {
  %0 = sir.prim reshape(%x) {shape = array<i64: -1, 8>} : (tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> tensor<?x8xf32, #sir.dims<"s0*s1">>
  %1 = sir.prim matmul(%0, %w) {transpose_x = false, transpose_y = false} : (tensor<?x8xf32, #sir.dims<"s0*s1">>, tensor<8x6xf32>) -> tensor<?x6xf32, #sir.dims<"s0*s1">>
  %2 = sir.prim reshape(%1) {shape = array<i64: -1, -1, 6>} : (tensor<?x6xf32, #sir.dims<"s0*s1">>) -> tensor<?x?x6xf32, #sir.dims<"s0", "s1">>
  sir.output %2, %1 : tensor<?x?x6xf32, #sir.dims<"s0", "s1">>, tensor<?x6xf32, #sir.dims<"s0*s1">>
}
