// Tensors the anchor does not reach through the group's primitives: a tensor of the anchor's
// whole shape starts from the anchor's iterators itself, and a reduction runs in the stage
// of the rows it reads, wherever program order put it.
// RUN: sotc-opt %s --split-input-file --sotc-convert-sir-to-mapexpr | FileCheck %s

// Two weights broadcast over one image, each a kernel output (a linear resize's weights).
// CHECK-LABEL: mapexpr.kernel @weights
// CHECK:         mapexpr.anchored %[[A:.*]] : tensor<2x3x11xf32>
// CHECK:         mapexpr.op "broadcast_to" outs(%[[A]] : {{.*}}) ins(%arg0 : {{.*}}) {indices = [#mapexpr.index<[i0, i1, i2]>, #mapexpr.index<[0, 0, i2]>]}
// CHECK-NEXT:    mapexpr.op "broadcast_to" outs(%{{.*}} : {{.*}}) ins(%{{.*}} : {{.*}}) {indices = [#mapexpr.index<[i0, i1, i2]>, #mapexpr.index<[0, 0, i2]>]}
sir.subgraph @SIR_0(%w: tensor<1x1x11xf32> {sir.name = "w"}) -> (tensor<2x3x11xf32>, tensor<2x3x11xf32>) {
  %0:2 = sir.group "weights" "injective"(%w) : (tensor<1x1x11xf32>) -> (tensor<2x3x11xf32>, tensor<2x3x11xf32>) {
  ^bb0(%v: tensor<1x1x11xf32>):
    %one = sir.prim fill_constant() {shape = array<i64: 1, 1, 11>, value = 1.0 : f64} : () -> tensor<1x1x11xf32>
    %keep = sir.prim subtract(%one, %v) : (tensor<1x1x11xf32>, tensor<1x1x11xf32>) -> tensor<1x1x11xf32>
    %a = sir.prim broadcast_to(%v) {shape = array<i64: 2, 3, 11>} : (tensor<1x1x11xf32>) -> tensor<2x3x11xf32>
    %b = sir.prim broadcast_to(%keep) {shape = array<i64: 2, 3, 11>} : (tensor<1x1x11xf32>) -> tensor<2x3x11xf32>
    sir.yield %a, %b : tensor<2x3x11xf32>, tensor<2x3x11xf32>
  }
  sir.output %0#0, %0#1 : tensor<2x3x11xf32>, tensor<2x3x11xf32>
}

// -----

// Two sums over the rows of two tensors nothing connects: one stage, one anchor.
// CHECK-LABEL: mapexpr.kernel @two_sums
// CHECK:         mapexpr.anchored {{.*}} : tensor<8xf32> attributes {dims = [#sched.reduced<8>]}
// CHECK-COUNT-2:   mapexpr.op "reduce_sum_acc" {{.*}} #mapexpr.index<[i0]>]}
// CHECK:         mapexpr.anchored {{.*}} : tensor<f32>
// CHECK-NEXT:      mapexpr.op "divide"
sir.subgraph @SIR_0(%x: tensor<8x1xf32> {sir.name = "x"}, %y: tensor<8x1xf32> {sir.name = "y"}) -> tensor<f32> {
  %0 = sir.group "two_sums" "reduction"(%x, %y) : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<8x1xf32>, %b: tensor<8x1xf32>):
    %ra = sir.prim reshape(%a) {shape = array<i64: 8>} : (tensor<8x1xf32>) -> tensor<8xf32>
    %rb = sir.prim reshape(%b) {shape = array<i64: 8>} : (tensor<8x1xf32>) -> tensor<8xf32>
    %sa = sir.prim reduce_sum(%ra) {axes = array<i64: 0>, keepdim = false} : (tensor<8xf32>) -> tensor<f32>
    %sb = sir.prim reduce_sum(%rb) {axes = array<i64: 0>, keepdim = false} : (tensor<8xf32>) -> tensor<f32>
    %q = sir.prim divide(%sa, %sb) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    sir.yield %q : tensor<f32>
  }
  sir.output %0 : tensor<f32>
}

// -----

// A row sum of x written after work that reads another row sum: it runs with the first sum.
// CHECK-LABEL: mapexpr.kernel @late_sum
// CHECK:         mapexpr.anchored {{.*}} : tensor<8x6xf32> attributes {dims = [#sched.injective<8>, #sched.reduced<6>]}
// CHECK:           mapexpr.op "reduce_sum_acc" {{.*}} ins(%{{.*}} : tensor<8x6xf32>)
// CHECK:           mapexpr.op "reduce_sum_acc" {{.*}} ins(%arg0 : tensor<8x6xf32>)
// CHECK:         mapexpr.anchored {{.*}} : tensor<8x1xf32>
// CHECK-NEXT:      mapexpr.op "neg"
// CHECK-NEXT:    {{^ +}}}{{$}}
sir.subgraph @SIR_0(%x: tensor<8x6xf32> {sir.name = "x"}) -> (tensor<8x1xf32>, tensor<8xf32>) {
  %0:2 = sir.group "late_sum" "reduction"(%x) : (tensor<8x6xf32>) -> (tensor<8x1xf32>, tensor<8xf32>) {
  ^bb0(%v: tensor<8x6xf32>):
    %e = sir.prim exp(%v) : (tensor<8x6xf32>) -> tensor<8x6xf32>
    %s = sir.prim reduce_sum(%e) {axes = array<i64: 1>, keepdim = true} : (tensor<8x6xf32>) -> tensor<8x1xf32>
    %n = sir.prim neg(%s) : (tensor<8x1xf32>) -> tensor<8x1xf32>
    %t = sir.prim reduce_sum(%v) {axes = array<i64: 1>, keepdim = false} : (tensor<8x6xf32>) -> tensor<8xf32>
    sir.yield %n, %t : tensor<8x1xf32>, tensor<8xf32>
  }
  sir.output %0#0, %0#1 : tensor<8x1xf32>, tensor<8xf32>
}

// -----

// x read through a channel shuffle and, directly, by a value computed from it: whichever
// anchor is tried first, x itself is what is passed twice.
// CHECK-LABEL: mapexpr.launch @shuffle_and_scale(%arg0, %arg0, %arg0)
sir.subgraph @SIR_0(%x: tensor<2x6xf32> {sir.name = "x"}) -> tensor<2x6xf32> {
  %0 = sir.group "shuffle_and_scale" "injective"(%x) : (tensor<2x6xf32>) -> tensor<2x6xf32> {
  ^bb0(%v: tensor<2x6xf32>):
    %a = sir.prim reshape(%v) {shape = array<i64: 2, 3, 2>} : (tensor<2x6xf32>) -> tensor<2x3x2xf32>
    %t = sir.prim transpose(%a) {perm = array<i64: 0, 2, 1>} : (tensor<2x3x2xf32>) -> tensor<2x2x3xf32>
    %s = sir.prim reshape(%t) {shape = array<i64: 2, 6>} : (tensor<2x2x3xf32>) -> tensor<2x6xf32>
    %e = sir.prim exp(%v) : (tensor<2x6xf32>) -> tensor<2x6xf32>
    %d = sir.prim divide(%v, %e) : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
    %r = sir.prim add(%s, %d) : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
    sir.yield %r : tensor<2x6xf32>
  }
  sir.output %0 : tensor<2x6xf32>
}

// -----

// The anchor covers what the stage writes. The table a gather reads whole is also read at
// the points by a select: from the [3] results the input is passed twice, once per reading;
// a [1] anchor (the gather's row) would write one of the three outputs (it once did).
// CHECK-LABEL: mapexpr.kernel @table_read_twice
// CHECK-SAME:    (%{{.*}}: tensor<3xi64> {mapexpr.name = "t"}, %{{.*}}: tensor<1xi64> {mapexpr.name = "i"}, %{{.*}}: tensor<3xi1> {mapexpr.name = "m"}, %{{.*}}: tensor<3xi64> {mapexpr.name = "t"})
// CHECK:         mapexpr.anchored {{.*}} : tensor<3xi64>
// CHECK-NOT:     mapexpr.anchored
sir.subgraph @SIR_0(%t: tensor<3xi64> {sir.name = "t"}, %i: tensor<1xi64> {sir.name = "i"}, %m: tensor<3xi1> {sir.name = "m"}) -> tensor<3xi64> {
  %0 = sir.group "table_read_twice" "injective"(%t, %i, %m) : (tensor<3xi64>, tensor<1xi64>, tensor<3xi1>) -> tensor<3xi64> {
  ^bb0(%table: tensor<3xi64>, %index: tensor<1xi64>, %mask: tensor<3xi1>):
    %row = sir.prim gather(%table, %index) : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
    %wide = sir.prim broadcast_to(%row) {shape = array<i64: 3>} : (tensor<1xi64>) -> tensor<3xi64>
    %out = sir.prim select(%mask, %wide, %table) : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
    sir.yield %out : tensor<3xi64>
  }
  sir.output %0 : tensor<3xi64>
}

// -----

// Two mean losses: the first divides its full sum by the count in the stage of the second
// sum, where nothing connects that single element to the anchor; it is read at index 0.
// CHECK-LABEL: mapexpr.kernel @two_losses
// CHECK:         mapexpr.anchored {{.*}} : tensor<2x7xf32> attributes {dims = [#sched.reduced<2>, #sched.reduced<7>]}
// CHECK:           mapexpr.op "reduce_sum_acc"
// CHECK:         mapexpr.anchored {{.*}} : tensor<2x7xf32> attributes {dims = [#sched.reduced<2>, #sched.reduced<7>]}
// CHECK:           mapexpr.op "divide" {{.*}} {indices = [#mapexpr.index<[]>, #mapexpr.index<[]>, #mapexpr.index<[]>]}
// CHECK:           mapexpr.op "reduce_sum_acc"
// CHECK:         mapexpr.anchored {{.*}} : tensor<f32>
// CHECK-NEXT:      mapexpr.op "fill_constant"
// CHECK-NEXT:      mapexpr.op "divide"
sir.subgraph @SIR_0(%x: tensor<2x7xf32> {sir.name = "x"}, %y: tensor<2x7xf32> {sir.name = "y"}) -> (tensor<f32>, tensor<f32>) {
  %0:2 = sir.group "two_losses" "reduction"(%x, %y) : (tensor<2x7xf32>, tensor<2x7xf32>) -> (tensor<f32>, tensor<f32>) {
  ^bb0(%a: tensor<2x7xf32>, %b: tensor<2x7xf32>):
    %n1 = sir.prim fill_constant() {shape = array<i64>, value = 14.0 : f64} : () -> tensor<f32>
    %n2 = sir.prim fill_constant() {shape = array<i64>, value = 14.0 : f64} : () -> tensor<f32>
    %d1 = sir.prim subtract(%a, %b) : (tensor<2x7xf32>, tensor<2x7xf32>) -> tensor<2x7xf32>
    %s1 = sir.prim multiply(%d1, %d1) : (tensor<2x7xf32>, tensor<2x7xf32>) -> tensor<2x7xf32>
    %r1 = sir.prim reduce_sum(%s1) {axes = array<i64: 0, 1>, keepdim = false} : (tensor<2x7xf32>) -> tensor<f32>
    %m1 = sir.prim divide(%r1, %n1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %d2 = sir.prim subtract(%b, %a) : (tensor<2x7xf32>, tensor<2x7xf32>) -> tensor<2x7xf32>
    %s2 = sir.prim multiply(%d2, %d2) : (tensor<2x7xf32>, tensor<2x7xf32>) -> tensor<2x7xf32>
    %r2 = sir.prim reduce_sum(%s2) {axes = array<i64: 0, 1>, keepdim = false} : (tensor<2x7xf32>) -> tensor<f32>
    %m2 = sir.prim divide(%r2, %n2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    sir.yield %m1, %m2 : tensor<f32>, tensor<f32>
  }
  sir.output %0#0, %0#1 : tensor<f32>, tensor<f32>
}

// -----

// A gated norm: the rows are the heads of a transposed tensor, the gate is another tensor
// reshaped to them. The stage after the sum runs on the sum's rows (24 of 8), not on the
// gate's 4-d shape of as many elements, whose rows would not be the sum's.
// CHECK-LABEL: mapexpr.kernel @gated_norm
// CHECK:         mapexpr.anchored {{.*}} : tensor<24x8xf32> attributes {dims = [#sched.injective<24>, #sched.reduced<8>]}
// CHECK:         mapexpr.anchored {{.*}} : tensor<24x8xf32> attributes {dims = [#sched.injective<24>, #sched.injective<8>]}
sir.subgraph @SIR_0(%x: tensor<2x4x3x8xf32> {sir.name = "x"}, %g: tensor<2x3x32xf32> {sir.name = "g"}) -> tensor<2x3x32xf32> {
  %0 = sir.group "gated_norm" "reduction"(%x, %g) : (tensor<2x4x3x8xf32>, tensor<2x3x32xf32>) -> tensor<2x3x32xf32> {
  ^bb0(%a: tensor<2x4x3x8xf32>, %b: tensor<2x3x32xf32>):
    %gate4 = sir.prim reshape(%b) {shape = array<i64: 2, 3, 4, 8>} : (tensor<2x3x32xf32>) -> tensor<2x3x4x8xf32>
    %t = sir.prim transpose(%a) {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x3x8xf32>) -> tensor<2x3x4x8xf32>
    %rows = sir.prim reshape(%t) {shape = array<i64: 24, 8>} : (tensor<2x3x4x8xf32>) -> tensor<24x8xf32>
    %gate = sir.prim reshape(%gate4) {shape = array<i64: 24, 8>} : (tensor<2x3x4x8xf32>) -> tensor<24x8xf32>
    %sq = sir.prim multiply(%rows, %rows) : (tensor<24x8xf32>, tensor<24x8xf32>) -> tensor<24x8xf32>
    %sum = sir.prim reduce_sum(%sq) {axes = array<i64: 1>, keepdim = true} : (tensor<24x8xf32>) -> tensor<24x1xf32>
    %inv = sir.prim rsqrt(%sum) : (tensor<24x1xf32>) -> tensor<24x1xf32>
    %wide = sir.prim broadcast_to(%inv) {shape = array<i64: 24, 8>} : (tensor<24x1xf32>) -> tensor<24x8xf32>
    %normed = sir.prim multiply(%rows, %wide) : (tensor<24x8xf32>, tensor<24x8xf32>) -> tensor<24x8xf32>
    %e = sir.prim exp(%gate) : (tensor<24x8xf32>) -> tensor<24x8xf32>
    %gated = sir.prim multiply(%normed, %e) : (tensor<24x8xf32>, tensor<24x8xf32>) -> tensor<24x8xf32>
    %out = sir.prim reshape(%gated) {shape = array<i64: 2, 3, 32>} : (tensor<24x8xf32>) -> tensor<2x3x32xf32>
    sir.yield %out : tensor<2x3x32xf32>
  }
  sir.output %0 : tensor<2x3x32xf32>
}

// -----

// A tensor of as many elements as the anchor in another shape, that nothing indexed connects
// to it (FSMT's causal mask broadcast to [batch, heads, tgt, src] and handed on, beside the
// softmax rows it masks): indexed by the anchor's points in row-major order.

// CHECK-LABEL: mapexpr.kernel @masked_softmax
// CHECK:         mapexpr.anchored %{{.*}} : tensor<8x8x8xf32> attributes {dims = [#sched.injective<8>, #sched.injective<8>, #sched.injective<8>]}
// CHECK:           mapexpr.op "multiply" outs(%{{.*}} : tensor<2x4x8x8xf32>) {{.*}}indices = [#mapexpr.index<[ListGetItem(IndexUnDot(i0, [2, 4]), 0), ListGetItem(IndexUnDot(i0, [2, 4]), 1), i1, i2]>
module {
  sir.subgraph @SIR_0(%arg0: tensor<8x8x8xf32> {sir.name = "w", sir.stop_gradient = true}) -> (tensor<8x8x8xf32>, tensor<2x4x8x8xf32>) {
    %0:2 = sir.group "masked_softmax" "reduction"(%arg0) : (tensor<8x8x8xf32>) -> (tensor<8x8x8xf32>, tensor<2x4x8x8xf32>) {
    ^bb0(%arg1: tensor<8x8x8xf32>):
      %1 = sir.prim fill_constant() {name = "var_2", shape = array<i64: 8, 8>, value = -3.000000e+38 : f64} : () -> tensor<8x8xf32>
      %2 = sir.prim iota() {name = "iota_1", shape = array<i64: 8>} : () -> tensor<8xi64>
      %3 = sir.prim iota() {name = "iota_3", shape = array<i64: 8>} : () -> tensor<8xi64>
      %4 = sir.prim fill_constant() {name = "one", shape = array<i64: 8, 1>, value = 1.000000e+00 : f64} : () -> tensor<8x1xi64>
      %5 = sir.prim fill_constant() {name = "zero", shape = array<i64: 8, 8>, value = 0.000000e+00 : f64} : () -> tensor<8x8xf32>
      %6 = sir.prim fill_constant() {name = "fill_constant_24", shape = array<i64: 2, 4, 8, 8>, value = 1.000000e+00 : f64} : () -> tensor<2x4x8x8xf32>
      %7 = sir.prim reshape(%2) {name = "reshape_2", shape = array<i64: 8, 1>} : (tensor<8xi64>) -> tensor<8x1xi64>
      %8 = sir.prim reshape(%3) {name = "reshape_4", shape = array<i64: 1, 8>} : (tensor<8xi64>) -> tensor<1x8xi64>
      %9 = sir.prim add(%7, %4) {name = "add_6"} : (tensor<8x1xi64>, tensor<8x1xi64>) -> tensor<8x1xi64>
      %10 = sir.prim broadcast_to(%8) {name = "broadcast_to_7", shape = array<i64: 8, 8>} : (tensor<1x8xi64>) -> tensor<8x8xi64>
      %11 = sir.prim broadcast_to(%9) {name = "broadcast_to_8", shape = array<i64: 8, 8>} : (tensor<8x1xi64>) -> tensor<8x8xi64>
      %12 = sir.prim greater_equal(%10, %11) {name = "greater_equal_9"} : (tensor<8x8xi64>, tensor<8x8xi64>) -> tensor<8x8xi1>
      %13 = sir.prim select(%12, %1, %5) {name = "var_3"} : (tensor<8x8xi1>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
      %14 = sir.prim reshape(%arg1) {name = "var_4", shape = array<i64: 2, 4, 8, 8>} : (tensor<8x8x8xf32>) -> tensor<2x4x8x8xf32>
      %15 = sir.prim broadcast_to(%13) {name = "broadcast_to_13", shape = array<i64: 2, 4, 8, 8>} : (tensor<8x8xf32>) -> tensor<2x4x8x8xf32>
      %16 = sir.prim add(%14, %15) {name = "var_5"} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
      %17 = sir.prim reshape(%16) {name = "var_6", shape = array<i64: 8, 8, 8>} : (tensor<2x4x8x8xf32>) -> tensor<8x8x8xf32>
      %18 = sir.prim reduce_max(%17) {axes = array<i64: 2>, keepdim = true, name = "reduce_max_16"} : (tensor<8x8x8xf32>) -> tensor<8x8x1xf32>
      %19 = sir.prim broadcast_to(%18) {name = "broadcast_to_17", shape = array<i64: 8, 8, 8>} : (tensor<8x8x1xf32>) -> tensor<8x8x8xf32>
      %20 = sir.prim subtract(%17, %19) {name = "subtract_18"} : (tensor<8x8x8xf32>, tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
      %21 = sir.prim exp(%20) {name = "exp_19"} : (tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
      %22 = sir.prim reduce_sum(%21) {axes = array<i64: 2>, keepdim = true, name = "reduce_sum_20"} : (tensor<8x8x8xf32>) -> tensor<8x8x1xf32>
      %23 = sir.prim broadcast_to(%22) {name = "broadcast_to_21", shape = array<i64: 8, 8, 8>} : (tensor<8x8x1xf32>) -> tensor<8x8x8xf32>
      %24 = sir.prim divide(%21, %23) {name = "var_7"} : (tensor<8x8x8xf32>, tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
      %25 = sir.prim broadcast_to(%13) {name = "var_8", shape = array<i64: 2, 4, 8, 8>} : (tensor<8x8xf32>) -> tensor<2x4x8x8xf32>
      %26 = sir.prim multiply(%25, %6) {name = "var_9"} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
      sir.yield %24, %26 : tensor<8x8x8xf32>, tensor<2x4x8x8xf32>
    }
    sir.output %0#0, %0#1 : tensor<8x8x8xf32>, tensor<2x4x8x8xf32>
  }
}

