// A kernel over the dynamic size s0 (sotc-sir-check-batch-dims): its model, mesh and loops are
// built for s0 = 4099 (the first stand-in, sotc-choose-stand-ins), which the code never reads:
// it takes the call's s0 first, a batch first in a tensor is the grid index's quotient (no
// remainder), and the function says what its grid is in s0. A short inner dim keeps its rows
// (no padding).
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cpu}), sotc-convert-mapexpr-to-loops{target=cpu})' --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%{{.*}}: index, %[[Y:[^:]*]]: memref<4099x2x3xf32>, %[[X:[^:]*]]: memref<4099x2x3xf32>)
// CHECK-SAME: attributes {sched.grid = #sched.size<"2*s0">}
// CHECK: scf.forall (%[[B:.*]]) in (8198)
// CHECK-NOT: remui %{{.*}}, %c4099
// CHECK: %[[ROW:.*]] = arith.divui %[[B]], %c2
// CHECK: memref.load %[[X]][%[[ROW]],
mapexpr.kernel @rows(%x: tensor<?x2x3xf32> {mapexpr.name = "x"}) -> tensor<?x2x3xf32> {
  %y = mapexpr.tensor "y" : tensor<?x2x3xf32>
  mapexpr.anchored %y : tensor<?x2x3xf32> attributes {dims = [#sched.injective<4099>, #sched.injective<2>, #sched.injective<3>]} {
    mapexpr.op "exp" outs(%y : tensor<?x2x3xf32>) ins(%x : tensor<?x2x3xf32>) {indices = [#mapexpr.index<[i0, i1, i2]>, #mapexpr.index<[i0, i1, i2]>]}
  }
  mapexpr.return %y : tensor<?x2x3xf32>
}

// -----

// A row reduction: one block per row of the batch.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-SAME: attributes {sched.grid = #sched.size<"s0">}
// CHECK: scf.forall (%{{.*}}) in (4099)
mapexpr.kernel @softmax_rows(%x: tensor<?x8xf32> {mapexpr.name = "x"}) -> tensor<?x1xf32> {
  %s = mapexpr.tensor "s" : tensor<?x1xf32>
  mapexpr.anchored %x : tensor<?x8xf32> attributes {dims = [#sched.injective<4099>, #sched.reduced<8>]} {
    mapexpr.op "reduce_sum_init" outs(%s : tensor<?x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%s : tensor<?x1xf32>) ins(%x : tensor<?x8xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %s : tensor<?x1xf32>
}

// -----

// A batch behind a static dim (an attention's q/k/v split): that tensor is a flat buffer whose
// index the kernel computes from the call's rows; the grid holds the batch once, first, so a
// block's coordinates are quotients by static sizes (no division by the rows).
// CHECK-LABEL: func.func @moved
// CHECK-SAME: (%[[ROWS:[^:]*]]: index, %[[Y:[^:]*]]: memref<32792xf32>, %[[X:[^:]*]]: memref<4099x4x2xf32>)
// CHECK-SAME: attributes {sched.grid = #sched.size<"4*s0">}
// CHECK: scf.forall (%[[B:.*]]) in (16396)
// CHECK-NOT: divui %{{.*}}, %[[ROWS]]
// CHECK-NOT: remui %{{.*}}, %[[ROWS]]
// CHECK: memref.load %[[X]]
// CHECK: arith.muli %{{.*}}, %[[ROWS]]
// CHECK: memref.store %{{.*}}, %[[Y]][%{{.*}}] : memref<32792xf32>
mapexpr.kernel @moved(%x: tensor<?x4x2xf32> {mapexpr.name = "x"}) -> tensor<4x?x2xf32> {
  %y = mapexpr.tensor "y" : tensor<4x?x2xf32>
  mapexpr.anchored %y : tensor<4x?x2xf32> attributes {dims = [#sched.injective<4>, #sched.injective<4099>, #sched.injective<2>]} {
    mapexpr.op "exp" outs(%y : tensor<4x?x2xf32>) ins(%x : tensor<?x4x2xf32>) {indices = [#mapexpr.index<[i0, i1, i2]>, #mapexpr.index<[i1, i0, i2]>]}
  }
  mapexpr.return %y : tensor<4x?x2xf32>
}

// -----

// A sequence length: a softmax over the T x T scores of 4 heads. The grid is the 4*s0 rows;
// the reduction loops run up to the call's s0, and what a block keeps of its row (the
// exponentials) is one heap buffer of s0 elements per call.
// CHECK-LABEL: func.func @scores
// CHECK-SAME: (%[[S0:[^:]*]]: index, %{{.*}}: memref<67207204xf32>, %{{.*}}: memref<67207204xf32>)
// CHECK-SAME: attributes {sched.grid = #sched.size<"4*s0">}
// CHECK: %[[ROW:.*]] = memref.alloc(%[[S0]]) : memref<?xf32>
// CHECK: scf.forall (%{{.*}}) in (16396)
// CHECK: scf.for %{{.*}} = %c0 to %[[S0]] step %c1
// CHECK: memref.dealloc %[[ROW]]
mapexpr.kernel @scores(%x: tensor<4x?x?xf32> {mapexpr.name = "x"}) -> tensor<4x?x?xf32> {
  %e = mapexpr.tensor "e" : tensor<4x?x?xf32>
  %s = mapexpr.tensor "s" : tensor<4x?x1xf32>
  %y = mapexpr.tensor "y" : tensor<4x?x?xf32>
  mapexpr.anchored %x : tensor<4x?x?xf32> attributes {dims = [#sched.injective<4>, #sched.injective<4099>, #sched.reduced<4099>]} {
    mapexpr.op "exp" outs(%e : tensor<4x?x?xf32>) ins(%x : tensor<4x?x?xf32>) {indices = [#mapexpr.index<[i0, i1, i2]>, #mapexpr.index<[i0, i1, i2]>]}
    mapexpr.op "reduce_sum_init" outs(%s : tensor<4x?x1xf32>) {indices = [#mapexpr.index<[i0, i1, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%s : tensor<4x?x1xf32>) ins(%e : tensor<4x?x?xf32>) {indices = [#mapexpr.index<[i0, i1, 0]>, #mapexpr.index<[i0, i1, i2]>]}
  }
  mapexpr.anchored %y : tensor<4x?x?xf32> attributes {dims = [#sched.injective<4>, #sched.injective<4099>, #sched.injective<4099>]} {
    mapexpr.op "divide" outs(%y : tensor<4x?x?xf32>) ins(%e, %s : tensor<4x?x?xf32>, tensor<4x?x1xf32>) {indices = [#mapexpr.index<[i0, i1, i2]>, #mapexpr.index<[i0, i1, i2]>, #mapexpr.index<[i0, i1, 0]>]}
  }
  mapexpr.return %y : tensor<4x?x?xf32>
}

// -----

// A batch's rows of 8000 floats keep more than a block's share (6144 elements): the CPU kernel
// allocates that scratch once per call, at the call's rows (never the stand-in's 4099).
// CHECK-LABEL: func.func @wide_rows
// CHECK-SAME: (%[[S0:[^:]*]]: index,
// CHECK: %[[SCRATCH:.*]] = memref.alloc(%[[S0]]) : memref<?x8000xf32>
// CHECK: scf.forall
// CHECK: memref.store %{{.*}}, %[[SCRATCH]]
// CHECK: memref.dealloc %[[SCRATCH]]
mapexpr.kernel @wide_rows(%x: tensor<?x8000xf32> {mapexpr.name = "x"}) -> tensor<?x8000xf32> {
  %e = mapexpr.tensor "e" : tensor<?x8000xf32>
  %s = mapexpr.tensor "s" : tensor<?x1xf32>
  %y = mapexpr.tensor "y" : tensor<?x8000xf32>
  mapexpr.anchored %x : tensor<?x8000xf32> attributes {dims = [#sched.injective<4099>, #sched.reduced<8000>]} {
    mapexpr.op "exp" outs(%e : tensor<?x8000xf32>) ins(%x : tensor<?x8000xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
    mapexpr.op "reduce_sum_init" outs(%s : tensor<?x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%s : tensor<?x1xf32>) ins(%e : tensor<?x8000xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.anchored %y : tensor<?x8000xf32> attributes {dims = [#sched.injective<4099>, #sched.injective<8000>]} {
    mapexpr.op "divide" outs(%y : tensor<?x8000xf32>) ins(%e, %s : tensor<?x8000xf32>, tensor<?x1xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, 0]>]}
  }
  mapexpr.return %y : tensor<?x8000xf32>
}

// -----

// Two dynamic sizes (a batch s0 and a sequence s1, named by the types' encoding): the model is
// built for each at its stand-in (4099, 4111); the kernel takes both, in order, and says so
// (sched.sizes); the row of s1 is a loop up to the call's s1, the flat index computed from it.
// CHECK-LABEL: func.func @sum_sequence
// CHECK-SAME: (%{{.*}}: index, %[[S1:[^:]*]]: index, %[[S:[^:]*]]: memref<4099x1xf32>, %[[X:[^:]*]]: memref<16850989xf32>)
// CHECK-SAME: attributes {sched.grid = #sched.size<"s0">, sched.sizes = array<i64: 0, 1>}
// CHECK: scf.forall (%[[B:.*]]) in (4099)
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[S1]]
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %[[S1]]
// CHECK: %[[AT:.*]] = arith.addi %[[ROW]], %[[T]]
// CHECK: memref.load %[[X]][%[[AT]]]
mapexpr.kernel @sum_sequence(%x: tensor<?x?xf32, #sir.dims<"s0", "s1">> {mapexpr.name = "x"}) -> tensor<?x1xf32> {
  %s = mapexpr.tensor "s" : tensor<?x1xf32>
  mapexpr.anchored %x : tensor<?x?xf32, #sir.dims<"s0", "s1">> attributes {dims = [#sched.injective<4099>, #sched.reduced<4111>]} {
    mapexpr.op "reduce_sum_init" outs(%s : tensor<?x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%s : tensor<?x1xf32>) ins(%x : tensor<?x?xf32, #sir.dims<"s0", "s1">>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %s : tensor<?x1xf32>
}

// -----

// A kernel over s1 alone takes s1 alone.
// CHECK-LABEL: func.func @exp_sequence
// CHECK-SAME: (%{{.*}}: index, %{{.*}}: memref<4111x4xf32>, %{{.*}}: memref<4111x4xf32>)
// CHECK-SAME: attributes {sched.grid = #sched.size<"s1">, sched.sizes = array<i64: 1>}
mapexpr.kernel @exp_sequence(%x: tensor<?x4xf32, #sir.dims<"s1">> {mapexpr.name = "x"}) -> tensor<?x4xf32, #sir.dims<"s1">> {
  %y = mapexpr.tensor "y" : tensor<?x4xf32, #sir.dims<"s1">>
  mapexpr.anchored %y : tensor<?x4xf32, #sir.dims<"s1">> attributes {dims = [#sched.injective<4111>, #sched.injective<4>]} {
    mapexpr.op "exp" outs(%y : tensor<?x4xf32, #sir.dims<"s1">>) ins(%x : tensor<?x4xf32, #sir.dims<"s1">>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %y : tensor<?x4xf32, #sir.dims<"s1">>
}

// -----

// Rows that are a product of two sizes (a batch and a sequence merged, [B*T, 4]): the kernel
// takes both, and the grid is their product.
// CHECK-LABEL: func.func @exp_tokens
// CHECK-SAME: (%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<16850989x4xf32>, %{{.*}}: memref<16850989x4xf32>)
// CHECK-SAME: attributes {sched.grid = #sched.size<"s0*s1">, sched.sizes = array<i64: 0, 1>}
mapexpr.kernel @exp_tokens(%x: tensor<?x4xf32, #sir.dims<"s0*s1">> {mapexpr.name = "x"}) -> tensor<?x4xf32, #sir.dims<"s0*s1">> {
  %y = mapexpr.tensor "y" : tensor<?x4xf32, #sir.dims<"s0*s1">>
  mapexpr.anchored %y : tensor<?x4xf32, #sir.dims<"s0*s1">> attributes {dims = [#sched.injective<16850989>, #sched.injective<4>]} {
    mapexpr.op "exp" outs(%y : tensor<?x4xf32, #sir.dims<"s0*s1">>) ins(%x : tensor<?x4xf32, #sir.dims<"s0*s1">>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %y : tensor<?x4xf32, #sir.dims<"s0*s1">>
}
