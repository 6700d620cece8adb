// CUDA kernels over the dynamic size s0 anywhere: the grid is a power of s0, and a row that
// holds s0 is padded to a multiple of the block's threads, which loop over it
// ceil(s0 / threads) times (the call's count: the proxy's 17 is never read) with a mask of
// the call's s0. What a block keeps of such a row is in the launch's dynamic shared memory.
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cuda}), sotc-convert-mapexpr-to-loops{target=cuda}, canonicalize, cse)' --split-input-file | FileCheck %s

// The T x T scores elementwise: a block per row of T (not per element), 256 threads over it.
// CHECK-LABEL: gpu.func @square
// CHECK-SAME: (%[[S0:[^:]*]]: index,
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>, sched.grid = #sched.size<"s0">
// CHECK: %[[PADDED:.*]] = arith.addi %[[S0]], %c255
// CHECK: %[[TRIPS:.*]] = arith.divui %[[PADDED]], %c256
// CHECK: scf.for %[[T:.*]] = %c0 to %[[TRIPS]] step %c1
// CHECK: %[[AT:.*]] = arith.muli %[[T]], %c256
// CHECK: %[[COL:.*]] = arith.addi %[[AT]], %{{.*}}thread_id
// CHECK: arith.cmpi ult, %[[COL]], %[[S0]]
// CHECK-NOT: 17
// CHECK: gpu.return
mapexpr.kernel @square(%x: tensor<?x?xf32> {mapexpr.name = "x"}) -> tensor<?x?xf32> {
  %y = mapexpr.tensor "y" : tensor<?x?xf32>
  mapexpr.anchored %y : tensor<?x?xf32> attributes {dims = [#sched.injective<4099>, #sched.injective<4099>]} {
    mapexpr.op "exp" outs(%y : tensor<?x?xf32>) ins(%x : tensor<?x?xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %y : tensor<?x?xf32>
}

// -----

// A softmax over the sequence of 4 heads' scores: 4*s0 rows; the exponentials a block keeps
// between its two statements are a view of s0 floats of the dynamic shared memory, whose
// bytes per launch the function names.
// CHECK-LABEL: gpu.func @scores
// CHECK-SAME: (%[[S0:[^:]*]]: index,
// CHECK-SAME: sched.dynamic_shared_bytes = #sched.size<"4*s0">
// CHECK-SAME: sched.grid = #sched.size<"4*s0">
// CHECK: %[[BASE:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[ROW:.*]] = memref.view %[[BASE]][%c0][%[[S0]]] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}}, %[[ROW]]
// CHECK: gpu.all_reduce add
// CHECK: gpu.barrier
// CHECK: memref.load %[[ROW]]
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

// A CUDA kernel over a second size takes the sizes it holds, in order, and says which.
// CHECK-LABEL: gpu.func @exp_sequence
// CHECK-SAME: (%{{.*}}: index, %{{.*}}: memref<4111x4xf32> {llvm.align = 16 : i64, llvm.noalias}
// CHECK-SAME: sched.grid = #sched.size<"s1">, sched.sizes = array<i64: 1>
mapexpr.kernel @exp_sequence(%x: tensor<?x4xf32, #sir.dims<"s1">> {mapexpr.name = "x"}) -> tensor<?x4xf32, #sir.dims<"s1">> {
  %y = mapexpr.tensor "y" : tensor<?x4xf32, #sir.dims<"s1">>
  mapexpr.anchored %y : tensor<?x4xf32, #sir.dims<"s1">> attributes {dims = [#sched.injective<4111>, #sched.injective<4>]} {
    mapexpr.op "exp" outs(%y : tensor<?x4xf32, #sir.dims<"s1">>) ins(%x : tensor<?x4xf32, #sir.dims<"s1">>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %y : tensor<?x4xf32, #sir.dims<"s1">>
}
