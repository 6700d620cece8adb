// Every dynamic dimension is a product of the sizes (s0, s1, s0*s1 where a view merges two,
// 4*s0), as its type says: reduced or contracted as any other (any number of times: T x T
// scores), reshaped into the same product of elements, sliced or concatenated along only into
// a size the module derives from it (`sir.derived_sizes`: x[1:] of s0 rows has s0 - 1), never
// met with a static size (windows and lookups take one only as their rows). What keeps them
// passes unchanged.
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

// CHECK-LABEL: sir.subgraph @sum_over_batch
// CHECK: sir.prim reduce_sum
sir.subgraph @sum_over_batch(%x: tensor<?x4xf32>) -> tensor<4xf32> {
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

sir.subgraph @moved_merged(%x: tensor<3x?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{E4002: every dynamic dimension is compiled as a product of the dynamic sizes; here a reshape changes the number of elements (12*s0 into 4*s0) (reshape to 'tensor<?x4xf32>'): trace each shape and compile the traces into one artifact (sotc compile a.pb b.pb -o k.so)}}
  %0 = sir.prim reshape(%x) {shape = array<i64: -1, 4>} : (tensor<3x?x4xf32>) -> tensor<?x4xf32>
  sir.output %0 : tensor<?x4xf32>
}

// -----

sir.subgraph @merged(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{here a reshape changes the number of elements (4*s0 into s0) (reshape to 'tensor<?xf32>')}}
  %0 = sir.prim reshape(%x) {shape = array<i64: -1>} : (tensor<?x4xf32>) -> tensor<?xf32>
  sir.output %0 : tensor<?xf32>
}

// -----

sir.subgraph @sliced(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{here a slice of the dynamic dimension that is not a size derived from it (slice to 'tensor<?x4xf32>')}}
  %0 = sir.prim slice(%x) {axes = array<i64: 0>, starts = array<i64: 1>, ends = array<i64: 9>, steps = array<i64: 1>} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  sir.output %0 : tensor<?x4xf32>
}

// -----

// Derived sizes (the module lists them): x[1:] of s0 rows is s1 = s0 - 1 (from 1 to s0, its
// end -1), x[:-1] s1 too (up to s1, -2), and a pad of one row s2 = s0 + 1 ([s0, 1], the second
// part starting at s0).
// CHECK-LABEL: sir.subgraph @derived
module attributes {sir.derived_sizes = ["s1=s0-1", "s2=s0+1"]} {
  sir.subgraph @derived(%x: tensor<?x4xf32>, %one: tensor<1x4xf32>) -> (tensor<?x4xf32, #sir.dims<"s1">>, tensor<?x4xf32, #sir.dims<"s1">>, tensor<?x4xf32, #sir.dims<"s2">>) {
    %0 = sir.prim slice(%x) {axes = array<i64: 0>, starts = array<i64: 1>, ends = array<i64: -1>, steps = array<i64: 1>} : (tensor<?x4xf32>) -> tensor<?x4xf32, #sir.dims<"s1">>
    %1 = sir.prim slice(%x) {axes = array<i64: 0>, starts = array<i64: 0>, ends = array<i64: -2>, steps = array<i64: 1>} : (tensor<?x4xf32>) -> tensor<?x4xf32, #sir.dims<"s1">>
    %2 = sir.prim concat(%x, %one) {axis = 0 : i64} : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32, #sir.dims<"s2">>
    sir.output %0, %1, %2 : tensor<?x4xf32, #sir.dims<"s1">>, tensor<?x4xf32, #sir.dims<"s1">>, tensor<?x4xf32, #sir.dims<"s2">>
  }
}

// -----

// A slice that does not take end - start of its size: x[1:] is not s0 - 2.
module attributes {sir.derived_sizes = ["s1=s0-2"]} {
  sir.subgraph @derived_wrongly(%x: tensor<?x4xf32>) -> tensor<?x4xf32, #sir.dims<"s1">> {
    // expected-error @+1 {{here a slice of the dynamic dimension that is not a size derived from it}}
    %0 = sir.prim slice(%x) {axes = array<i64: 0>, starts = array<i64: 1>, ends = array<i64: -1>, steps = array<i64: 1>} : (tensor<?x4xf32>) -> tensor<?x4xf32, #sir.dims<"s1">>
    sir.output %0 : tensor<?x4xf32, #sir.dims<"s1">>
  }
}

// -----

// Parts after the first that start at a size plus a number ([s0, 1, 1]: the third at s0 + 1).
module attributes {sir.derived_sizes = ["s1=s0+2"]} {
  sir.subgraph @padded_twice(%x: tensor<?x4xf32>, %one: tensor<1x4xf32>) -> tensor<?x4xf32, #sir.dims<"s1">> {
    // expected-error @+1 {{here a concatenation along the dynamic dimension whose parts start at a size plus a number}}
    %0 = sir.prim concat(%x, %one, %one) {axis = 0 : i64} : (tensor<?x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32, #sir.dims<"s1">>
    sir.output %0 : tensor<?x4xf32, #sir.dims<"s1">>
  }
}

// -----

// A concatenation of another length than its parts' ([s0, 1] is not s0 + 2).
module attributes {sir.derived_sizes = ["s1=s0+2"]} {
  sir.subgraph @padded_wrongly(%x: tensor<?x4xf32>, %one: tensor<1x4xf32>) -> tensor<?x4xf32, #sir.dims<"s1">> {
    // expected-error @+1 {{here a concatenation along the dynamic dimension of another length than its parts'}}
    %0 = sir.prim concat(%x, %one) {axis = 0 : i64} : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32, #sir.dims<"s1">>
    sir.output %0 : tensor<?x4xf32, #sir.dims<"s1">>
  }
}

// -----

// expected-error @+1 {{sir.derived_sizes holds "s1", not a derived size ("s2=s1-1")}}
module attributes {sir.derived_sizes = ["s1"]} {
  sir.subgraph @listed_wrongly(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    sir.output %x : tensor<?x4xf32>
  }
}

// -----

// x + y with y of 3 rows: the sum has 3, which would pin the batch to 3.
sir.subgraph @pinned(%x: tensor<?x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{here the dynamic size meets a static one (3) (broadcast_to to 'tensor<3x4xf32>')}}
  %0 = sir.prim broadcast_to(%x) {shape = array<i64: 3, 4>} : (tensor<?x4xf32>) -> tensor<3x4xf32>
  sir.output %0 : tensor<3x4xf32>
}

// -----

// A sequence length: attention over s0 tokens of 2 heads (the scores s0 x s0, softmax rows
// reduced over s0, the values contracted over it), then the heads merged back.
// CHECK-LABEL: sir.subgraph @attention
// CHECK: sir.prim reshape
sir.subgraph @attention(%q: tensor<2x?x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<2x?x8xf32>) -> tensor<?x16xf32> {
  %0 = sir.prim matmul(%q, %k) {transpose_x = false, transpose_y = true} : (tensor<2x?x8xf32>, tensor<2x?x8xf32>) -> tensor<2x?x?xf32>
  %1 = sir.prim reduce_max(%0) {axes = array<i64: 2>, keepdim = true} : (tensor<2x?x?xf32>) -> tensor<2x?x1xf32>
  %2 = sir.prim broadcast_to(%1) {shape = array<i64: 2, -1, -1>} : (tensor<2x?x1xf32>) -> tensor<2x?x?xf32>
  %3 = sir.prim subtract(%0, %2) : (tensor<2x?x?xf32>, tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %4 = sir.prim matmul(%3, %v) {transpose_x = false, transpose_y = false} : (tensor<2x?x?xf32>, tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %5 = sir.prim transpose(%4) {perm = array<i64: 1, 0, 2>} : (tensor<2x?x8xf32>) -> tensor<?x2x8xf32>
  %6 = sir.prim reshape(%5) {shape = array<i64: -1, 16>} : (tensor<?x2x8xf32>) -> tensor<?x16xf32>
  sir.output %6 : tensor<?x16xf32>
}

// -----

// A static batch against s0 in a matmul's batch dimensions would pin it.
sir.subgraph @batch_pinned(%x: tensor<?x4x2xf32>, %y: tensor<3x2x4xf32>) -> tensor<3x4x4xf32> {
  // expected-error @+1 {{here the dynamic size meets a static one (3) (matmul to 'tensor<3x4x4xf32>')}}
  %0 = sir.prim matmul(%x, %y) {transpose_x = false, transpose_y = false} : (tensor<?x4x2xf32>, tensor<3x2x4xf32>) -> tensor<3x4x4xf32>
  sir.output %0 : tensor<3x4x4xf32>
}

// -----

sir.subgraph @cubed(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-error @+1 {{here a tensor of s0^3 or more elements (exp to 'tensor<?x?x?xf32>')}}
  %0 = sir.prim exp(%x) : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  sir.output %0 : tensor<?x?x?xf32>
}

// -----

// A second dynamic size (int64[B,T]: T is s1) is named by the type's encoding, and each
// size follows the rules of one: a batch and a sequence in one tensor pass.
// CHECK-LABEL: sir.subgraph @two_sizes
// CHECK: sir.prim exp
sir.subgraph @two_sizes(%x: tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> tensor<?x?x8xf32, #sir.dims<"s0", "s1">> {
  %0 = sir.prim exp(%x) : (tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> tensor<?x?x8xf32, #sir.dims<"s0", "s1">>
  sir.output %0 : tensor<?x?x8xf32, #sir.dims<"s0", "s1">>
}

// -----

// The encoding of s0 alone is the plain type's: nothing to refuse.
// CHECK-LABEL: sir.subgraph @named_s0
sir.subgraph @named_s0(%x: tensor<?x8xf32, #sir.dims<"s0">>) -> tensor<?x8xf32, #sir.dims<"s0">> {
  %0 = sir.prim exp(%x) : (tensor<?x8xf32, #sir.dims<"s0">>) -> tensor<?x8xf32, #sir.dims<"s0">>
  sir.output %0 : tensor<?x8xf32, #sir.dims<"s0">>
}

// -----

// Merged sizes: the batch and the sequence as one dim of s0*s1 rows, a batch with the dims
// after it as 4*s0, and back.
// CHECK-LABEL: sir.subgraph @merged_sizes
// CHECK: sir.prim reshape(%arg0) {shape = array<i64: -1, 8>} : (tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> tensor<?x8xf32, #sir.dims<"s0*s1">>
sir.subgraph @merged_sizes(%x: tensor<?x?x8xf32, #sir.dims<"s0", "s1">>, %y: tensor<?x4x8xf32>) -> (tensor<?x?x8xf32, #sir.dims<"s0", "s1">>, tensor<?x8xf32, #sir.dims<"4*s0">>) {
  %0 = sir.prim reshape(%x) {shape = array<i64: -1, 8>} : (tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> tensor<?x8xf32, #sir.dims<"s0*s1">>
  %1 = sir.prim exp(%0) : (tensor<?x8xf32, #sir.dims<"s0*s1">>) -> tensor<?x8xf32, #sir.dims<"s0*s1">>
  %2 = sir.prim reshape(%1) {shape = array<i64: -1, -1, 8>} : (tensor<?x8xf32, #sir.dims<"s0*s1">>) -> tensor<?x?x8xf32, #sir.dims<"s0", "s1">>
  %3 = sir.prim reshape(%y) {shape = array<i64: -1, 8>} : (tensor<?x4x8xf32>) -> tensor<?x8xf32, #sir.dims<"4*s0">>
  sir.output %2, %3 : tensor<?x?x8xf32, #sir.dims<"s0", "s1">>, tensor<?x8xf32, #sir.dims<"4*s0">>
}

// -----

sir.subgraph @merged_wrongly(%x: tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> tensor<?x8xf32, #sir.dims<"s0^2">> {
  // expected-error @+1 {{here a reshape changes the number of elements (8*s0*s1 into 8*s0^2)}}
  %0 = sir.prim reshape(%x) {shape = array<i64: -1, 8>} : (tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> tensor<?x8xf32, #sir.dims<"s0^2">>
  sir.output %0 : tensor<?x8xf32, #sir.dims<"s0^2">>
}

