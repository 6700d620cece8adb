// A dynamic dimension compiles as a batch: a dimension of its own in every tensor that has
// one (a transpose may move it; GEMMs, windows and lookups take it first), never reduced,
// merged, sliced or met with a static size. What keeps it passes unchanged.
// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-check-batch-dims))' --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: sir.subgraph @rows
// CHECK: sir.prim matmul
sir.subgraph @rows(%x: tensor<?x4x2xf32>, %w: tensor<8xf32>, %m: tensor<8x3xf32>) -> tensor<?x3xf32> {
  %0 = sir.prim reshape(%x) {shape = array<i64: -1, 8>} : (tensor<?x4x2xf32>) -> tensor<?x8xf32>
  %1 = sir.prim broadcast_to(%w) {shape = array<i64: -1, 8>} : (tensor<8xf32>) -> tensor<?x8xf32>
  %2 = sir.prim add(%0, %1) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %3 = sir.prim reduce_max(%2) {axes = array<i64: 1>, keepdim = true} : (tensor<?x8xf32>) -> tensor<?x1xf32>
  %4 = sir.prim broadcast_to(%3) {shape = array<i64: -1, 8>} : (tensor<?x1xf32>) -> tensor<?x8xf32>
  %5 = sir.prim subtract(%2, %4) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %6 = sir.prim matmul(%5, %m) {transpose_x = false, transpose_y = false} : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
  sir.output %6 : tensor<?x3xf32>
}

// -----

// CHECK-LABEL: sir.subgraph @heads
// CHECK: sir.prim transpose
sir.subgraph @heads(%q: tensor<?x4x2x8xf32>, %k: tensor<?x2x4x8xf32>) -> tensor<?x2x4x4xf32> {
  %0 = sir.prim transpose(%q) {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x4x2x8xf32>) -> tensor<?x2x4x8xf32>
  %1 = sir.prim matmul(%0, %k) {transpose_x = false, transpose_y = true} : (tensor<?x2x4x8xf32>, tensor<?x2x4x8xf32>) -> tensor<?x2x4x4xf32>
  sir.output %1 : tensor<?x2x4x4xf32>
}

// -----

sir.subgraph @sum_over_batch(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{E4002: a dynamic dimension is compiled as a batch (a dimension of its own in every tensor, rows that never meet); here a reduction over the dynamic dimension (reduce_sum to 'tensor<4xf32>'): trace each shape and compile the traces into one artifact (sotc compile a.pb b.pb -o k.so)}}
  %0 = sir.prim reduce_sum(%x) {axes = array<i64: 0>, keepdim = false} : (tensor<?x4xf32>) -> tensor<4xf32>
  sir.output %0 : tensor<4xf32>
}

// -----

// nanoGPT's and timm's attention: the batch behind the q/k/v split while the heads are
// separated, then first again for the GEMMs.
// CHECK-LABEL: sir.subgraph @moved
// CHECK: sir.prim matmul
sir.subgraph @moved(%x: tensor<?x4x6xf32>) -> tensor<?x4x4xf32> {
  %0 = sir.prim reshape(%x) {shape = array<i64: -1, 4, 3, 2>} : (tensor<?x4x6xf32>) -> tensor<?x4x3x2xf32>
  %1 = sir.prim transpose(%0) {perm = array<i64: 2, 0, 1, 3>} : (tensor<?x4x3x2xf32>) -> tensor<3x?x4x2xf32>
  %2 = sir.prim slice(%1) {axes = array<i64: 0>, starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<3x?x4x2xf32>) -> tensor<1x?x4x2xf32>
  %3 = sir.prim reshape(%2) {shape = array<i64: -1, 4, 2>} : (tensor<1x?x4x2xf32>) -> tensor<?x4x2xf32>
  %4 = sir.prim reduce_max(%1) {axes = array<i64: 0, 3>, keepdim = false} : (tensor<3x?x4x2xf32>) -> tensor<?x4xf32>
  %5 = sir.prim matmul(%3, %3) {transpose_x = false, transpose_y = true} : (tensor<?x4x2xf32>, tensor<?x4x2xf32>) -> tensor<?x4x4xf32>
  sir.output %5 : tensor<?x4x4xf32>
}

// -----

sir.subgraph @moved_reduced(%x: tensor<4x?xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{here a reduction over the dynamic dimension (reduce_sum to 'tensor<4xf32>')}}
  %0 = sir.prim reduce_sum(%x) {axes = array<i64: 1>, keepdim = false} : (tensor<4x?xf32>) -> tensor<4xf32>
  sir.output %0 : tensor<4xf32>
}

// -----

sir.subgraph @moved_merged(%x: tensor<3x?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{here a reshape merges or splits the dynamic dimension (reshape to 'tensor<?x4xf32>')}}
  %0 = sir.prim reshape(%x) {shape = array<i64: -1, 4>} : (tensor<3x?x4xf32>) -> tensor<?x4xf32>
  sir.output %0 : tensor<?x4xf32>
}

// -----

sir.subgraph @moved_into_a_gemm(%x: tensor<4x?x2xf32>, %y: tensor<2x3xf32>) -> tensor<4x?x3xf32> {
  // expected-error @+1 {{here a matmul of a tensor whose dynamic dimension is not its first (matmul to 'tensor<4x?x3xf32>')}}
  %0 = sir.prim matmul(%x, %y) {transpose_x = false, transpose_y = false} : (tensor<4x?x2xf32>, tensor<2x3xf32>) -> tensor<4x?x3xf32>
  sir.output %0 : tensor<4x?x3xf32>
}

// -----

sir.subgraph @two_sizes(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{here two dynamic dimensions in one tensor (exp to 'tensor<?x?xf32>')}}
  %0 = sir.prim exp(%x) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  sir.output %0 : tensor<?x?xf32>
}

// -----

sir.subgraph @merged(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{here a reshape merges or splits the dynamic dimension (reshape to 'tensor<?xf32>')}}
  %0 = sir.prim reshape(%x) {shape = array<i64: -1>} : (tensor<?x4xf32>) -> tensor<?xf32>
  sir.output %0 : tensor<?xf32>
}

// -----

sir.subgraph @contracted(%x: tensor<?x4xf32>, %y: tensor<?x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{here the dynamic dimension is contracted (matmul to 'tensor<4x3xf32>')}}
  %0 = sir.prim matmul(%x, %y) {transpose_x = true, transpose_y = false} : (tensor<?x4xf32>, tensor<?x3xf32>) -> tensor<4x3xf32>
  sir.output %0 : tensor<4x3xf32>
}

// -----

sir.subgraph @sliced(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{here a slice of the dynamic dimension (slice to 'tensor<?x4xf32>')}}
  %0 = sir.prim slice(%x) {axes = array<i64: 0>, starts = array<i64: 1>, ends = array<i64: 9>, steps = array<i64: 1>} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  sir.output %0 : tensor<?x4xf32>
}

// -----

// x + y with y of 3 rows: the sum has 3, which would pin the batch to 3.
sir.subgraph @pinned(%x: tensor<?x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{here the dynamic size meets a static one (3) (broadcast_to to 'tensor<3x4xf32>')}}
  %0 = sir.prim broadcast_to(%x) {shape = array<i64: 3, 4>} : (tensor<?x4xf32>) -> tensor<3x4xf32>
  sir.output %0 : tensor<3x4xf32>
}

// -----

sir.subgraph @sum_all(%x: tensor<?x4xf32>) -> tensor<f32> {
  // expected-error @+1 {{here a reduction over the dynamic dimension (reduce_sum to 'tensor<f32>')}}
  %0 = sir.prim reduce_sum(%x) {axes = array<i64>, keepdim = false} : (tensor<?x4xf32>) -> tensor<f32>
  sir.output %0 : tensor<f32>
}
