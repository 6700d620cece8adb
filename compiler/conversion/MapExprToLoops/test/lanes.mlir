// CPU lanes (sched::cpuLaneReductionSchedule, MapExprToLoops' lane lowering): a reduction whose
// innermost dim is injective -- a depthwise convolution's or a pooling's taps, x.sum(1) of
// [B, T, C] -- runs rows of the other injective dims, the reduced dims a serial loop and the
// innermost dim a vector loop, [rows, reduce, lanes]. Up to 64 reduced points unroll inside
// the lane loop (4 chains of accumulators in registers, sums of products as fused
// multiply-adds); more run around it, accumulating in the output.
// Lanes whose windows stay inside their inputs read them unchecked (no clamp, contiguous
// loads); the border lanes around them check. Elementwise windows (im2col) peel the same way
// and keep rows down to 4 lanes (a 7x7 feature map).
// RUN: sotc-opt %s --split-input-file --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cpu}))' | FileCheck %s --check-prefix=SCHED
// RUN: sotc-opt %s --split-input-file --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cpu}),sotc-convert-mapexpr-to-loops{target=cpu},canonicalize,cse)' | FileCheck %s

// A depthwise 3x3 convolution, padding 1, over 8 x 16: rows of (n, c, oh), 9 taps, 16 lanes.
// SCHED: loops = [#sched.loop<S0x, 16>, #sched.loop<Temporal, 9>, #sched.loop<Vectorize, 16>]
// SCHED-SAME: [#sched.transpose<[0, 1, 4, 2, 3, 5]>, #sched.reshape<[16, 9, 16]>]
// CHECK-LABEL: func.func @window_1_broadcast_to_2_multiply_3_reduce_sum_4
// CHECK-SAME: (%[[Y:[^:]*]]: memref<1x2x8x16xf32>, %[[X:[^:]*]]: memref<1x2x8x16xf32>,
// CHECK-NOT: memref.load %[[Y]]
// The interior lanes 1..15 read every tap unchecked along the lanes (the rows' checks stay).
// CHECK: scf.for %[[L:.*]] = %c1 to %c15 step %c1 {
// CHECK-NOT: minsi
// CHECK: memref.load %[[X]][%c0, %{{.*}}, %{{.*}}, %[[L]]]
// Each tap one multiply-add into one of 4 chains (taps 0, 4, 8 / 1, 5 / 2, 6 / 3, 7), added
// up as a tree at the end.
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: minsi
// CHECK: %[[C01:.*]] = arith.addf %{{.*}}, %{{.*}} fastmath<reassoc>
// CHECK-NEXT: %[[C23:.*]] = arith.addf
// CHECK-NEXT: %[[ALL:.*]] = arith.addf %[[C01]], %[[C23]]
// CHECK-NEXT: memref.store %[[ALL]], %[[Y]][%c0, %{{.*}}, %{{.*}}, %[[L]]]
// CHECK-NEXT: }
mapexpr.kernel @window_1_broadcast_to_2_multiply_3_reduce_sum_4(%arg0: tensor<1x2x8x16xf32> {mapexpr.name = "x"}, %arg1: tensor<1x2x3x3x1x1xf32> {mapexpr.name = "reshape_0"}) -> tensor<1x2x8x16xf32> {
  %0 = mapexpr.tensor "var_2" : tensor<1x2x8x16xf32>
  %1 = mapexpr.tensor "multiply_3" : tensor<1x2x3x3x8x16xf32>
  %2 = mapexpr.tensor "window_1" : tensor<1x2x3x3x8x16xf32>
  %3 = mapexpr.tensor "broadcast_to_2" : tensor<1x2x3x3x8x16xf32>
  mapexpr.anchored %1 : tensor<1x2x3x3x8x16xf32> attributes {dims = [#sched.injective<1>, #sched.injective<2>, #sched.reduced<3>, #sched.reduced<3>, #sched.injective<8>, #sched.injective<16>]} {
    mapexpr.op "window" outs(%2 : tensor<1x2x3x3x8x16xf32>) ins(%arg0 : tensor<1x2x8x16xf32>) {indices = [#mapexpr.index<[i0, i1, i2, i3, i4, i5]>, #mapexpr.index<[i0, i1, IndexSum(i4, (i2 - 1)), IndexSum(i5, (i3 - 1))]>], value = 0.000000e+00 : f64}
    mapexpr.op "broadcast_to" outs(%3 : tensor<1x2x3x3x8x16xf32>) ins(%arg1 : tensor<1x2x3x3x1x1xf32>) {indices = [#mapexpr.index<[i0, i1, i2, i3, i4, i5]>, #mapexpr.index<[i0, i1, i2, i3, 0, 0]>]}
    mapexpr.op "multiply" outs(%1 : tensor<1x2x3x3x8x16xf32>) ins(%2, %3 : tensor<1x2x3x3x8x16xf32>, tensor<1x2x3x3x8x16xf32>) {indices = [#mapexpr.index<[i0, i1, i2, i3, i4, i5]>, #mapexpr.index<[i0, i1, i2, i3, i4, i5]>, #mapexpr.index<[i0, i1, i2, i3, i4, i5]>]}
    mapexpr.op "reduce_sum_init" outs(%0 : tensor<1x2x8x16xf32>) {indices = [#mapexpr.index<[i0, i1, i4, i5]>]}
    mapexpr.op "reduce_sum_acc" outs(%0 : tensor<1x2x8x16xf32>) ins(%1 : tensor<1x2x3x3x8x16xf32>) {indices = [#mapexpr.index<[i0, i1, i4, i5]>, #mapexpr.index<[i0, i1, i2, i3, i4, i5]>]}
  }
  mapexpr.return %0 : tensor<1x2x8x16xf32>
}

// -----

// A sum over the middle dim, 128 points: accumulated in the output, each lane in place.
// SCHED: loops = [#sched.loop<S0x, 4>, #sched.loop<Temporal, 128>, #sched.loop<Vectorize, 16>]
// CHECK-LABEL: func.func @reduce_sum_0
// CHECK-SAME: (%[[Y:[^:]*]]: memref<4x16xf32>, %[[X:[^:]*]]: memref<4x128x16xf32>)
// CHECK: scf.forall (%[[ROW:.*]]) in (4)
// CHECK: scf.for %[[I:.*]] = %c0 to %c16
// CHECK-NEXT: memref.store %cst, %[[Y]][%[[ROW]], %[[I]]]
// CHECK: scf.for %[[R:.*]] = %c0 to %c128
// CHECK-NEXT: scf.for %[[L:.*]] = %c0 to %c16
// CHECK-NEXT: %[[XV:.*]] = memref.load %[[X]][%[[ROW]], %[[R]], %[[L]]]
// CHECK-NEXT: %[[ACC:.*]] = memref.load %[[Y]][%[[ROW]], %[[L]]]
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[ACC]], %[[XV]]
// CHECK-NEXT: memref.store %[[SUM]], %[[Y]][%[[ROW]], %[[L]]]
mapexpr.kernel @reduce_sum_0(%arg0: tensor<4x128x16xf32> {mapexpr.name = "x"}) -> tensor<4x16xf32> {
  %0 = mapexpr.tensor "var_1" : tensor<4x16xf32>
  mapexpr.anchored %arg0 : tensor<4x128x16xf32> attributes {dims = [#sched.injective<4>, #sched.reduced<128>, #sched.injective<16>]} {
    mapexpr.op "reduce_sum_init" outs(%0 : tensor<4x16xf32>) {indices = [#mapexpr.index<[i0, i2]>]}
    mapexpr.op "reduce_sum_acc" outs(%0 : tensor<4x16xf32>) ins(%arg0 : tensor<4x128x16xf32>) {indices = [#mapexpr.index<[i0, i2]>, #mapexpr.index<[i0, i1, i2]>]}
  }
  mapexpr.return %0 : tensor<4x16xf32>
}

// -----

// A 3x3 max-pool, stride 2, padding 1, 9 x 9 -> 5 x 5: the interior lanes are 1..4
// (2 * ow + kw - 1 stays in 0..8 for every tap).
// SCHED: loops = [#sched.loop<S0x, 10>, #sched.loop<Temporal, 9>, #sched.loop<Vectorize, 5>]
// CHECK-LABEL: func.func @window_0_reduce_max_1
// CHECK: arith.maximumf
// CHECK: scf.for %{{.*}} = %c1 to %c4 step %c1 {
mapexpr.kernel @window_0_reduce_max_1(%arg0: tensor<1x2x9x9xf32> {mapexpr.name = "x"}) -> tensor<1x2x5x5xf32> {
  %0 = mapexpr.tensor "var_1" : tensor<1x2x5x5xf32>
  %1 = mapexpr.tensor "window_0" : tensor<1x2x3x3x5x5xf32>
  mapexpr.anchored %1 : tensor<1x2x3x3x5x5xf32> attributes {dims = [#sched.injective<1>, #sched.injective<2>, #sched.reduced<3>, #sched.reduced<3>, #sched.injective<5>, #sched.injective<5>]} {
    mapexpr.op "window" outs(%1 : tensor<1x2x3x3x5x5xf32>) ins(%arg0 : tensor<1x2x9x9xf32>) {indices = [#mapexpr.index<[i0, i1, i2, i3, i4, i5]>, #mapexpr.index<[i0, i1, IndexSum((i4 * 2), (i2 - 1)), IndexSum((i5 * 2), (i3 - 1))]>], value = 0xFFF0000000000000 : f64}
    mapexpr.op "reduce_max_init" outs(%0 : tensor<1x2x5x5xf32>) {indices = [#mapexpr.index<[i0, i1, i4, i5]>]}
    mapexpr.op "reduce_max_acc" outs(%0 : tensor<1x2x5x5xf32>) ins(%1 : tensor<1x2x3x3x5x5xf32>) {indices = [#mapexpr.index<[i0, i1, i4, i5]>, #mapexpr.index<[i0, i1, i2, i3, i4, i5]>]}
  }
  mapexpr.return %0 : tensor<1x2x5x5xf32>
}

// -----

// An im2col over a 7 x 7 map: rows of 7 lanes (not flat chunks of 8, which would compute
// every element's window coordinates), peeled at bounds that depend on the row's tap.
// SCHED: loops = [#sched.loop<S0x, 126>, #sched.loop<Vectorize, 7>]
// SCHED-SAME: [#sched.reshape<[126, 7]>]
// CHECK-LABEL: func.func @window_0_reshape_1
// CHECK: scf.for %{{.*}} = %c0 to %[[BEGIN:[^ ]*]] step %c1 {
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to %[[END:[^ ]*]] step %c1 {
// CHECK: scf.for %{{.*}} = %[[END]] to %c7 step %c1 {
mapexpr.kernel @window_0_reshape_1(%arg0: tensor<1x2x7x7xf32> {mapexpr.name = "x"}) -> tensor<1x18x49xf32> {
  %0 = mapexpr.tensor "reshape_1" : tensor<1x18x49xf32>
  %1 = mapexpr.tensor "window_0" : tensor<1x2x3x3x7x7xf32>
  mapexpr.anchored %1 : tensor<1x2x3x3x7x7xf32> attributes {dims = [#sched.injective<1>, #sched.injective<2>, #sched.injective<3>, #sched.injective<3>, #sched.injective<7>, #sched.injective<7>]} {
    mapexpr.op "window" outs(%1 : tensor<1x2x3x3x7x7xf32>) ins(%arg0 : tensor<1x2x7x7xf32>) {indices = [#mapexpr.index<[i0, i1, i2, i3, i4, i5]>, #mapexpr.index<[i0, i1, IndexSum(i4, (i2 - 1)), IndexSum(i5, (i3 - 1))]>], value = 0.000000e+00 : f64}
    mapexpr.op "reshape" outs(%0 : tensor<1x18x49xf32>) ins(%1 : tensor<1x2x3x3x7x7xf32>) {indices = [#mapexpr.index<[0, IndexDot([i1, i2, i3], [2, 3, 3]), IndexDot([i4, i5], [7, 7])]>, #mapexpr.index<[i0, i1, i2, i3, i4, i5]>]}
  }
  mapexpr.return %0 : tensor<1x18x49xf32>
}
