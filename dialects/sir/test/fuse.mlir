// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-fuse))' --split-input-file | FileCheck %s
// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-fuse))' --split-input-file | sotc-opt --split-input-file | FileCheck %s

// relu(sin(x)): one injective group, named as CINN names it, the constant first.
// CHECK-LABEL: sir.subgraph @relu_sin
// CHECK:      %[[G:.*]] = sir.group "fill_constant_1_sin_0_max_2" "injective"(%arg0) : (tensor<64xf32>) -> tensor<64xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<64xf32>):
// CHECK-NEXT:   %[[Z:.*]] = sir.prim fill_constant()
// CHECK-NEXT:   %[[S:.*]] = sir.prim sin(%[[A]])
// CHECK-NEXT:   %[[M:.*]] = sir.prim max(%[[S]], %[[Z]])
// CHECK-NEXT:   sir.yield %[[M]] : tensor<64xf32>
// CHECK:      sir.output %[[G]]
sir.subgraph @relu_sin(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = sir.prim sin(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %1 = sir.prim fill_constant() {value = 0.0 : f64, shape = array<i64: 64>} : () -> tensor<64xf32>
  %2 = sir.prim max(%0, %1) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  sir.output %2 : tensor<64xf32>
}

// -----

// Softmax: producers fuse into the reductions, and the consumers that broadcast the row
// results back fuse after them: one reduction group.
// CHECK-LABEL: sir.subgraph @softmax
// CHECK-COUNT-1: sir.group
// CHECK-SAME: "reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6" "reduction"
// CHECK-NOT: sir.group
sir.subgraph @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = sir.prim reduce_max(%x) {axes = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %1 = sir.prim broadcast_to(%0) {shape = array<i64: 4, 8>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = sir.prim subtract(%x, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = sir.prim exp(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = sir.prim reduce_sum(%3) {axes = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %5 = sir.prim broadcast_to(%4) {shape = array<i64: 4, 8>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %6 = sir.prim divide(%3, %5) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  sir.output %6 : tensor<4x8xf32>
}

// -----

// A matmul is its own group. h feeds both the matmul and the multiply after it; fusing the
// add with the multiply would make the two groups wait on each other, so they stay apart.
// CHECK-LABEL: sir.subgraph @no_cycle
// CHECK:      %[[H:.*]] = sir.group "add_0" "injective"(%arg0, %arg1)
// CHECK-NEXT: ^bb0
// CHECK:      %[[M:.*]] = sir.group "matmul_1" "matmul"(%[[H]], %arg2)
// CHECK:      %[[Y:.*]] = sir.group "multiply_2" "injective"(%[[H]], %[[M]])
// CHECK:      sir.output %[[Y]]
sir.subgraph @no_cycle(%x: tensor<4x4xf32>, %one: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %h = sir.prim add(%x, %one) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = sir.prim matmul(%h, %w) {transpose_x = false, transpose_y = false} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = sir.prim multiply(%h, %m) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  sir.output %y : tensor<4x4xf32>
}

// -----

// A reduction without keepdim leaves the row space ([4] is not broadcast-aligned with
// [4, 8]): its consumer starts a new group. Outputs used later leave their group.
// CHECK-LABEL: sir.subgraph @row_sum
// CHECK: %[[R:.*]]:2 = sir.group "exp_0_reduce_sum_1" "reduction"(%arg0) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
// CHECK: %[[N:.*]] = sir.group "neg_2" "injective"(%[[R]]#1)
// CHECK: sir.output %[[R]]#0, %[[N]]
sir.subgraph @row_sum(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %0 = sir.prim exp(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = sir.prim reduce_sum(%0) {axes = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  %2 = sir.prim neg(%1) : (tensor<4xf32>) -> tensor<4xf32>
  sir.output %0, %2 : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// A column sum and a row sum of one tensor need two row structures: two groups (the
// producer fuses into the first), never one kernel whose accumulators would mix rows.
// CHECK-LABEL: sir.subgraph @two_axes
// CHECK:       sir.group "exp_0_reduce_sum_1" "reduction"
// CHECK:       sir.group "reduce_sum_2" "reduction"
sir.subgraph @two_axes(%x: tensor<4x8xf32>) -> (tensor<1x8xf32>, tensor<4x1xf32>) {
  %0 = sir.prim exp(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = sir.prim reduce_sum(%0) {axes = array<i64: 0>, keepdim = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %2 = sir.prim reduce_sum(%0) {axes = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  sir.output %1, %2 : tensor<1x8xf32>, tensor<4x1xf32>
}

// -----

// x[0] + x[1]: two windows of one tensor cannot share a kernel (a kernel indexes each tensor
// one way): the second slice is a group of its own.
// CHECK-LABEL: sir.subgraph @two_windows
// CHECK:      sir.group "slice_1" "injective"
// CHECK:      sir.group "slice_0_add_2" "injective"
// CHECK-NOT:  sir.group
sir.subgraph @two_windows(%x: tensor<3x4xf32>) -> tensor<1x4xf32> {
  %0 = sir.prim slice(%x) {axes = array<i64: 0>, starts = array<i64: 0>, ends = array<i64: 1>, steps = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<1x4xf32>
  %1 = sir.prim slice(%x) {axes = array<i64: 0>, starts = array<i64: 1>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<1x4xf32>
  %2 = sir.prim add(%0, %1) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  sir.output %2 : tensor<1x4xf32>
}

// -----

// A value the group makes and also returns is read whole by the caller: a slice of it is a
// second window, so the slice is not fused with its producer.
// CHECK-LABEL: sir.subgraph @sliced_and_returned
// CHECK:      sir.group "exp_0" "injective"
// CHECK:      sir.group "slice_1" "injective"
sir.subgraph @sliced_and_returned(%x: tensor<6xf32>) -> (tensor<6xf32>, tensor<1xf32>) {
  %0 = sir.prim exp(%x) : (tensor<6xf32>) -> tensor<6xf32>
  %1 = sir.prim slice(%0) {axes = array<i64: 0>, starts = array<i64: 1>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<6xf32>) -> tensor<1xf32>
  sir.output %0, %1 : tensor<6xf32>, tensor<1xf32>
}

// -----

// A primitive nothing reads is dropped (an item assignment's replaced window).
// CHECK-LABEL: sir.subgraph @dead
// CHECK-COUNT-1: sir.group
// CHECK-NOT: sir.prim sin
sir.subgraph @dead(%x: tensor<6xf32>) -> tensor<6xf32> {
  %0 = sir.prim sin(%x) : (tensor<6xf32>) -> tensor<6xf32>
  %1 = sir.prim exp(%x) : (tensor<6xf32>) -> tensor<6xf32>
  sir.output %1 : tensor<6xf32>
}

// -----

// A window (im2col) reads its input through the padding, so the input comes whole from
// outside the group: exp is a kernel of its own; the reshape of the windows joins them.
// CHECK-LABEL: sir.subgraph @im2col
// CHECK:      sir.group "exp_0" "injective"
// CHECK:      sir.group "window_1_reshape_2" "injective"
// CHECK-NOT:  sir.group
sir.subgraph @im2col(%x: tensor<1x2x4x4xf32>) -> tensor<1x18x16xf32> {
  %0 = sir.prim exp(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %1 = sir.prim window(%0) {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1>, value = 0.0 : f64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3x4x4xf32>
  %2 = sir.prim reshape(%1) {shape = array<i64: 1, 18, 16>} : (tensor<1x2x3x3x4x4xf32>) -> tensor<1x18x16xf32>
  sir.output %2 : tensor<1x18x16xf32>
}

// -----

// A gather reads its table and its index as they are (both come from outside the group);
// what reads the rows joins it.
// CHECK-LABEL: sir.subgraph @embedding
// CHECK:      sir.group "gather_0_exp_1" "injective"
// CHECK-NOT:  sir.group
sir.subgraph @embedding(%table: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = sir.prim gather(%table, %ids) : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %1 = sir.prim exp(%0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  sir.output %1 : tensor<2x3x4xf32>
}

// -----

// A slice of a reduction's rows computes some rows only, while the kernel runs all of the
// reduction's: softmax(x)[:, -1:] is two groups (one kernel would read rows it never made).
// CHECK-LABEL: sir.subgraph @softmax_last_row
// CHECK:      sir.group "reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6" "reduction"
// CHECK:      sir.group "fill_constant_8_slice_7_multiply_9" "injective"
// CHECK-NOT:  sir.group
sir.subgraph @softmax_last_row(%x: tensor<4x8xf32>) -> tensor<1x8xf32> {
  %0 = sir.prim reduce_max(%x) {axes = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %1 = sir.prim broadcast_to(%0) {shape = array<i64: 4, 8>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %2 = sir.prim subtract(%x, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = sir.prim exp(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = sir.prim reduce_sum(%3) {axes = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %5 = sir.prim broadcast_to(%4) {shape = array<i64: 4, 8>} : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %6 = sir.prim divide(%3, %5) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = sir.prim slice(%6) {axes = array<i64: 0>, starts = array<i64: 3>, ends = array<i64: 4>, steps = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %8 = sir.prim fill_constant() {value = 2.0 : f64, shape = array<i64: 1, 8>} : () -> tensor<1x8xf32>
  %9 = sir.prim multiply(%7, %8) : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  sir.output %9 : tensor<1x8xf32>
}

// -----

// Any of the largest tensors may anchor a group: the bias [C, 1, 1] broadcast over a conv's
// [N, C, H, W] result indexes from that result, not from the GEMM's [N, C, H*W] it reshapes,
// so bias and ReLU after the GEMM are one group.
// CHECK-LABEL: sir.subgraph @bias_relu_after_gemm
// CHECK:      sir.group "matmul_0" "matmul"
// CHECK:      sir.group "fill_constant_4_reshape_1_broadcast_to_2_add_3_max_5" "injective"
// CHECK-NOT:  sir.group
sir.subgraph @bias_relu_after_gemm(%w: tensor<3x5xf32>, %cols: tensor<2x5x16xf32>, %b: tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32> {
  %0 = sir.prim matmul(%w, %cols) {transpose_x = false, transpose_y = false} : (tensor<3x5xf32>, tensor<2x5x16xf32>) -> tensor<2x3x16xf32>
  %1 = sir.prim reshape(%0) {shape = array<i64: 2, 3, 4, 4>} : (tensor<2x3x16xf32>) -> tensor<2x3x4x4xf32>
  %2 = sir.prim broadcast_to(%b) {shape = array<i64: 2, 3, 4, 4>} : (tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %3 = sir.prim add(%1, %2) : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %4 = sir.prim fill_constant() {value = 0.0 : f64, shape = array<i64: 2, 3, 4, 4>} : () -> tensor<2x3x4x4xf32>
  %5 = sir.prim max(%3, %4) : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  sir.output %5 : tensor<2x3x4x4xf32>
}

// -----

// What a slice reads from outside its group is read at the slice's positions, not indexed
// from the anchor: one head of a fused QKV projection is sliced, reshaped to heads and
// transposed by one group, though the projection is larger than every tensor in it.
// CHECK-LABEL: sir.subgraph @qkv_head
// CHECK:      sir.group "slice_0_reshape_1_transpose_2" "injective"
// CHECK-NOT:  sir.group
sir.subgraph @qkv_head(%qkv: tensor<2x12x96xf32>) -> tensor<2x4x12x8xf32> {
  %0 = sir.prim slice(%qkv) {axes = array<i64: 2>, starts = array<i64: 32>, ends = array<i64: 64>, steps = array<i64: 1>} : (tensor<2x12x96xf32>) -> tensor<2x12x32xf32>
  %1 = sir.prim reshape(%0) {shape = array<i64: 2, 12, 4, 8>} : (tensor<2x12x32xf32>) -> tensor<2x12x4x8xf32>
  %2 = sir.prim transpose(%1) {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x12x4x8xf32>) -> tensor<2x4x12x8xf32>
  sir.output %2 : tensor<2x4x12x8xf32>
}

// -----

// A sort's pick: the ranks (a reduction over j of x[i] against x[j]) are read along the
// second reduction's reduced axis, not broadcast over their own rows: two groups.
// CHECK-LABEL: sir.subgraph @ranks_then_pick
// CHECK:      sir.group "{{.*}}reduce_sum_{{[0-9]+}}" "reduction"
// CHECK:      sir.group "{{.*}}reduce_sum_{{[0-9]+}}" "reduction"
sir.subgraph @ranks_then_pick(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %a = sir.prim reshape(%x) {shape = array<i64: 3, 5, 1>} : (tensor<3x5xf32>) -> tensor<3x5x1xf32>
  %c = sir.prim reshape(%x) {shape = array<i64: 3, 1, 5>} : (tensor<3x5xf32>) -> tensor<3x1x5xf32>
  %ab = sir.prim broadcast_to(%a) {shape = array<i64: 3, 5, 5>} : (tensor<3x5x1xf32>) -> tensor<3x5x5xf32>
  %cb = sir.prim broadcast_to(%c) {shape = array<i64: 3, 5, 5>} : (tensor<3x1x5xf32>) -> tensor<3x5x5xf32>
  %lt = sir.prim less_than(%cb, %ab) : (tensor<3x5x5xf32>, tensor<3x5x5xf32>) -> tensor<3x5x5xi1>
  %f = sir.prim cast(%lt) : (tensor<3x5x5xi1>) -> tensor<3x5x5xf32>
  %rank = sir.prim reduce_sum(%f) {axes = array<i64: 2>, keepdim = false} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
  %r = sir.prim reshape(%rank) {shape = array<i64: 3, 1, 5>} : (tensor<3x5xf32>) -> tensor<3x1x5xf32>
  %rb = sir.prim broadcast_to(%r) {shape = array<i64: 3, 5, 5>} : (tensor<3x1x5xf32>) -> tensor<3x5x5xf32>
  %p = sir.prim multiply(%rb, %cb) : (tensor<3x5x5xf32>, tensor<3x5x5xf32>) -> tensor<3x5x5xf32>
  %s = sir.prim reduce_sum(%p) {axes = array<i64: 2>, keepdim = false} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
  sir.output %s : tensor<3x5xf32>
}

// -----

// A histogram of counts: the counts (rows over j) pass through an elementwise op and are then
// laid along the reduced axis of a second reduction of the same [4, 4] shape (equal sizes make
// the shapes agree, not the indices): two groups, however many ops lie between.
// CHECK-LABEL: sir.subgraph @counts_through_elementwise
// CHECK:      %[[C:.*]] = sir.group "reduce_sum_0_floor_1_reshape_2" "reduction"
// CHECK:      sir.group "broadcast_to_3_multiply_4_reduce_sum_5" "reduction"(%[[C]], %arg0)
sir.subgraph @counts_through_elementwise(%x: tensor<4x4xf32>) -> tensor<4xf32> {
  %c = sir.prim reduce_sum(%x) {axes = array<i64: 1>, keepdim = false} : (tensor<4x4xf32>) -> tensor<4xf32>
  %f = sir.prim floor(%c) : (tensor<4xf32>) -> tensor<4xf32>
  %r = sir.prim reshape(%f) {shape = array<i64: 1, 4>} : (tensor<4xf32>) -> tensor<1x4xf32>
  %rb = sir.prim broadcast_to(%r) {shape = array<i64: 4, 4>} : (tensor<1x4xf32>) -> tensor<4x4xf32>
  %p = sir.prim multiply(%rb, %x) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = sir.prim reduce_sum(%p) {axes = array<i64: 1>, keepdim = false} : (tensor<4x4xf32>) -> tensor<4xf32>
  sir.output %s : tensor<4xf32>
}

// -----

// A small tensor handed on from beside a softmax's rows (UNet's mask bias [1, 4], read by the
// softmax and, reshaped, by later layers): the reshape handed on is no part of the rows'
// kernel, which could not index it; constants stay in (they are made where they are read).
// CHECK-LABEL: sir.subgraph @handed_on_beside_rows
// CHECK:      sir.group "fill_constant_0_multiply_1_broadcast_to_2_add_3_reduce_max_4" "reduction"
// CHECK:      sir.group "reshape_5" "injective"
sir.subgraph @handed_on_beside_rows(%m: tensor<1x4xf32>, %s: tensor<1x2x3x4xf32>) -> (tensor<1x2x3x1xf32>, tensor<1x1x1x4xf32>) {
  %c = sir.prim fill_constant() {shape = array<i64: 1, 4>, value = -1.000000e+04 : f64} : () -> tensor<1x4xf32>
  %bias = sir.prim multiply(%m, %c) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %b = sir.prim broadcast_to(%bias) {shape = array<i64: 1, 2, 3, 4>} : (tensor<1x4xf32>) -> tensor<1x2x3x4xf32>
  %a = sir.prim add(%s, %b) : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %mx = sir.prim reduce_max(%a) {axes = array<i64: 3>, keepdim = true} : (tensor<1x2x3x4xf32>) -> tensor<1x2x3x1xf32>
  %later = sir.prim reshape(%bias) {shape = array<i64: 1, 1, 1, 4>} : (tensor<1x4xf32>) -> tensor<1x1x1x4xf32>
  sir.output %mx, %later : tensor<1x2x3x1xf32>, tensor<1x1x1x4xf32>
}

// -----

// Cycles are checked between groups, not primitives: {gather, cos, add} reads exp's result
// and gives cos's to the second add, so exp and that add may not merge around it (they
// once did, and the groups could not be ordered: the pass never ended). The add joins the
// gather's group instead, which reads exp's result from outside.
// CHECK-LABEL: sir.subgraph @group_cycle
// CHECK:      %[[A:.*]] = sir.group "exp_0" "injective"
// CHECK:      sir.group "gather_1_cos_2_add_3_add_4" "injective"(%[[A]], %arg1, %arg2)
// CHECK-NOT:  sir.group
sir.subgraph @group_cycle(%x: tensor<3x4xf32>, %i: tensor<3xi64>, %y: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %a = sir.prim exp(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %b = sir.prim gather(%a, %i) : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  %d = sir.prim cos(%y) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %e = sir.prim add(%b, %d) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %c = sir.prim add(%a, %d) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  sir.output %e, %c : tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// A broadcast to a shape smaller than the group's anchor that leaves the group (Falcon's
// rotary table for its one key head beside the query heads' [2, 2, 4, 4]) is made by a
// group of its own size: the query heads' group does not store it.
// CHECK-LABEL: sir.subgraph @partial_broadcast_handed_on
// CHECK:      sir.group "reshape_0_transpose_1_broadcast_to_2_multiply_3" "injective"
// CHECK-NOT:  broadcast_to_4
// CHECK:      sir.yield {{.*}} : tensor<1x1x4x4xf32>, tensor<2x2x4x4xf32>
// CHECK:      sir.group "broadcast_to_4" "injective"
// CHECK-SAME: -> tensor<2x1x4x4xf32>
sir.subgraph @partial_broadcast_handed_on(%t: tensor<1x4x4xf32>, %x: tensor<2x4x2x4xf32>) -> (tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32>) {
  %0 = sir.prim reshape(%t) {shape = array<i64: 1, 1, 4, 4>} : (tensor<1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %1 = sir.prim transpose(%x) {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x2x4xf32>) -> tensor<2x2x4x4xf32>
  %2 = sir.prim broadcast_to(%0) {shape = array<i64: 2, 2, 4, 4>} : (tensor<1x1x4x4xf32>) -> tensor<2x2x4x4xf32>
  %3 = sir.prim multiply(%1, %2) : (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
  %4 = sir.prim broadcast_to(%0) {shape = array<i64: 2, 1, 4, 4>} : (tensor<1x1x4x4xf32>) -> tensor<2x1x4x4xf32>
  sir.output %3, %4 : tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32>
}

// -----

// Elements are the same only where each dynamic size has the same power: [s0, s1] is no
// reshape of [s0, s1, s1] (both hold s0 and s1), so its producer is not indexed from that
// anchor (transformers' masks: an E4002 at kernel building before).
// CHECK-LABEL: sir.subgraph @different_powers
// CHECK:      sir.group "add_0_reshape_1" "injective"
// CHECK-SAME: -> (tensor<?x?xi64, #sir.dims<"s0", "s1">>, tensor<?x?x1xi64, #sir.dims<"s0", "s1">>)
// CHECK:      sir.group "broadcast_to_2_add_3" "injective"
sir.subgraph @different_powers(%q: tensor<?x?xi64, #sir.dims<"s0", "s1">>, %k: tensor<?x?x?xi64, #sir.dims<"s0", "s1", "s1">>) -> (tensor<?x?xi64, #sir.dims<"s0", "s1">>, tensor<?x?x?xi64, #sir.dims<"s0", "s1", "s1">>) {
  %0 = sir.prim add(%q, %q) : (tensor<?x?xi64, #sir.dims<"s0", "s1">>, tensor<?x?xi64, #sir.dims<"s0", "s1">>) -> tensor<?x?xi64, #sir.dims<"s0", "s1">>
  %1 = sir.prim reshape(%0) {shape = array<i64: -1, -1, 1>} : (tensor<?x?xi64, #sir.dims<"s0", "s1">>) -> tensor<?x?x1xi64, #sir.dims<"s0", "s1">>
  %2 = sir.prim broadcast_to(%1) {shape = array<i64: -1, -1, -1>} : (tensor<?x?x1xi64, #sir.dims<"s0", "s1">>) -> tensor<?x?x?xi64, #sir.dims<"s0", "s1", "s1">>
  %3 = sir.prim add(%2, %k) : (tensor<?x?x?xi64, #sir.dims<"s0", "s1", "s1">>, tensor<?x?x?xi64, #sir.dims<"s0", "s1", "s1">>) -> tensor<?x?x?xi64, #sir.dims<"s0", "s1", "s1">>
  sir.output %0, %3 : tensor<?x?xi64, #sir.dims<"s0", "s1">>, tensor<?x?x?xi64, #sir.dims<"s0", "s1", "s1">>
}

// -----

// A constant read by two chains with nothing else in common is made for each: shared, it
// would merge them into one kernel (SVD's UNet: one zero [1, 2] merged 43 chains, two of them
// broadcasts to [2, 4, 32] and [1, 32, 2, 2, 2] that no one anchor indexes: E4002).
// CHECK-LABEL: sir.subgraph @shared_constant
// CHECK:      sir.group "fill_constant_0_add_1_reshape_2" "injective"(%arg0)
// CHECK:      sir.group "broadcast_to_3" "injective"
// CHECK:      sir.group "fill_constant_4_add_5_reshape_6_broadcast_to_7" "injective"(%arg1)
sir.subgraph @shared_constant(%x: tensor<1x2xf32>, %y: tensor<1x2xf32>) -> (tensor<2x4x32xf32>, tensor<1x32x2x2x2xf32>) {
  %c = sir.prim fill_constant() {value = 1.0 : f64, shape = array<i64: 1, 2>} : () -> tensor<1x2xf32>
  %0 = sir.prim add(%x, %c) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %1 = sir.prim reshape(%0) {shape = array<i64: 2, 1, 1>} : (tensor<1x2xf32>) -> tensor<2x1x1xf32>
  %2 = sir.prim broadcast_to(%1) {shape = array<i64: 2, 4, 32>} : (tensor<2x1x1xf32>) -> tensor<2x4x32xf32>
  %3 = sir.prim add(%y, %c) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %4 = sir.prim reshape(%3) {shape = array<i64: 1, 1, 2, 1, 1>} : (tensor<1x2xf32>) -> tensor<1x1x2x1x1xf32>
  %5 = sir.prim broadcast_to(%4) {shape = array<i64: 1, 32, 2, 2, 2>} : (tensor<1x1x2x1x1xf32>) -> tensor<1x32x2x2x2xf32>
  sir.output %2, %5 : tensor<2x4x32xf32>, tensor<1x32x2x2x2xf32>
}

// -----

// What a slice reads is computed at the window's points only, and so is what that is computed
// from: a broadcast the group also hands on whole (through a reshape) is the other window, so
// the slice of its reshape starts a group of its own.
// CHECK-LABEL: sir.subgraph @slice_of_a_reshape_handed_on
// CHECK:      sir.group "broadcast_to_0_exp_1_reshape_2" "injective"
// CHECK:      sir.group "slice_3" "injective"
sir.subgraph @slice_of_a_reshape_handed_on(%x: tensor<1x4x32xf32>) -> (tensor<2x4x32xf32>, tensor<1x1x4x32xf32>) {
  %0 = sir.prim broadcast_to(%x) {shape = array<i64: 2, 4, 32>} : (tensor<1x4x32xf32>) -> tensor<2x4x32xf32>
  %1 = sir.prim exp(%0) : (tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %2 = sir.prim reshape(%1) {shape = array<i64: 1, 2, 4, 32>} : (tensor<2x4x32xf32>) -> tensor<1x2x4x32xf32>
  %3 = sir.prim slice(%2) {axes = array<i64: 0, 1>, starts = array<i64: 0, 0>, ends = array<i64: 1, 1>, steps = array<i64: 1, 1>} : (tensor<1x2x4x32xf32>) -> tensor<1x1x4x32xf32>
  sir.output %1, %3 : tensor<2x4x32xf32>, tensor<1x1x4x32xf32>
}

// -----

// A count over [s0] rows (summed away) beside a running count's [s0, s0] comparisons: apart,
// since a kernel over [s0, s0] runs a block per row and with s0 of 0 none would write the sum.
// CHECK-LABEL: sir.subgraph @count_beside_running
// CHECK:      sir.group "add_0_reduce_sum_1_reshape_2" "reduction"
// CHECK:      sir.group "broadcast_to_3" "injective"
sir.subgraph @count_beside_running(%f: tensor<?xi64, #sir.dims<"s0">>) -> (tensor<i64>, tensor<?x?xi64, #sir.dims<"s0", "s0">>) {
  %0 = sir.prim add(%f, %f) : (tensor<?xi64, #sir.dims<"s0">>, tensor<?xi64, #sir.dims<"s0">>) -> tensor<?xi64, #sir.dims<"s0">>
  %1 = sir.prim reduce_sum(%0) {axes = array<i64: 0>, keepdim = false} : (tensor<?xi64, #sir.dims<"s0">>) -> tensor<i64>
  %2 = sir.prim reshape(%0) {shape = array<i64: -1, 1>} : (tensor<?xi64, #sir.dims<"s0">>) -> tensor<?x1xi64, #sir.dims<"s0">>
  %3 = sir.prim broadcast_to(%2) {shape = array<i64: -1, -1>} : (tensor<?x1xi64, #sir.dims<"s0">>) -> tensor<?x?xi64, #sir.dims<"s0", "s0">>
  sir.output %1, %3 : tensor<i64>, tensor<?x?xi64, #sir.dims<"s0", "s0">>
}

// -----

// Bin positions [1, 3] computed beside rows [s0, 3] they are added to, and handed on: apart,
// since a kernel over the s0 rows writes nothing when s0 is 0 (a roi_align over no boxes).
// CHECK-LABEL: sir.subgraph @static_beside_counted_rows
// CHECK:      sir.group "iota_0_reshape_1_cast_2" "injective"
// CHECK:      sir.group "broadcast_to_3_add_4" "injective"
sir.subgraph @static_beside_counted_rows(%r: tensor<?x3xf32, #sir.dims<"s0">>) -> (tensor<?x3xf32, #sir.dims<"s0">>, tensor<1x3xf32>) {
  %0 = sir.prim iota() {shape = array<i64: 3>} : () -> tensor<3xi64>
  %1 = sir.prim reshape(%0) {shape = array<i64: 1, 3>} : (tensor<3xi64>) -> tensor<1x3xi64>
  %2 = sir.prim cast(%1) : (tensor<1x3xi64>) -> tensor<1x3xf32>
  %3 = sir.prim broadcast_to(%2) {shape = array<i64: -1, 3>} : (tensor<1x3xf32>) -> tensor<?x3xf32, #sir.dims<"s0">>
  %4 = sir.prim add(%r, %3) : (tensor<?x3xf32, #sir.dims<"s0">>, tensor<?x3xf32, #sir.dims<"s0">>) -> tensor<?x3xf32, #sir.dims<"s0">>
  sir.output %4, %2 : tensor<?x3xf32, #sir.dims<"s0">>, tensor<1x3xf32>
}
