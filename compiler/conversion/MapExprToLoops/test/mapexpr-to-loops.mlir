// sotc-convert-mapexpr-to-loops: scheduled kernels (CPU) become loop nests on memrefs. The
// input is what `--sotc-pipeline="target=cpu compile-to=scheduled"` makes of softmax, relu on
// 10 elements (a padded vector loop), concat, matmul, an integer remainder and abs.
// RUN: sotc-opt %s --sotc-convert-mapexpr-to-loops=target=cpu --canonicalize --cse | FileCheck %s

// Launches now name the lowered functions.
// CHECK: mapexpr.launch @reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6(%arg0)

// Softmax: one grid of 4 rows; per row the max, then exp (kept in the row's scratch) and the
// sum, then the division; reductions are loop-carried accumulators.
// CHECK-LABEL: func.func @reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6(%arg0: memref<4x8xf32>, %arg1: memref<4x8xf32>)
// CHECK-DAG:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.forall (%[[ROW:.*]]) in (4) {
// CHECK-NEXT:      %[[MAX:.*]] = memref.alloca() : memref<1xf32>
// CHECK-NEXT:      %[[EXP:.*]] = memref.alloca() : memref<8xf32>
// CHECK-NEXT:      %[[SUM:.*]] = memref.alloca() : memref<1xf32>
// CHECK-NEXT:      %[[M:.*]] = scf.for %[[J:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[NEGINF]]) -> (f32) {
// CHECK-NEXT:        %[[X:.*]] = memref.load %arg1[%[[ROW]], %[[J]]]
// CHECK-NEXT:        %[[NEXT:.*]] = arith.maximumf %[[ACC]], %[[X]] : f32
// CHECK-NEXT:        scf.yield %[[NEXT]] : f32
// CHECK:           memref.store %[[M]], %[[MAX]][%{{.*}}]
// CHECK:           scf.for {{.*}} iter_args({{.*}} = %[[ZERO]]) -> (f32) {
// CHECK:             math.exp
// CHECK:             memref.store {{.*}}, %[[EXP]][
// CHECK:             arith.addf
// CHECK:           memref.store {{.*}}, %[[SUM]][
// CHECK:           scf.for
// CHECK:             %[[E:.*]] = memref.load %[[EXP]][
// CHECK:             arith.divf %[[E]],
// CHECK:             memref.store {{.*}}, %arg0[%[[ROW]],
// CHECK:         } {mapping = [#gpu.block<x>]}

// relu on 10 elements: 2 blocks of an 8-wide loop, the padding skipped.
// CHECK-LABEL: func.func @fill_constant_0_max_1(%arg0: memref<10xf32>, %arg1: memref<10xf32>)
// CHECK:         scf.forall (%{{.*}}) in (2) {
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c10 : index
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK:             arith.maximumf

// concat along axis 1: the first input below its width, the second shifted by it.
// CHECK-LABEL: func.func @concat_0(%arg0: memref<2x8xf32>, %arg1: memref<2x3xf32>, %arg2: memref<2x5xf32>)
// CHECK:         %[[FIRST:.*]] = arith.cmpi ult, %{{.*}}, %c3 : index
// CHECK-NEXT:    scf.if %[[FIRST]] -> (f32) {
// CHECK-NEXT:      memref.load %arg1
// CHECK:         } else {
// CHECK-NEXT:      %[[SHIFTED:.*]] = arith.subi %{{.*}}, %c3 : index
// CHECK-NEXT:      memref.load %arg2[%{{.*}}, %[[SHIFTED]]]

// matmul: one accumulator per output element over the contracted axis.
// CHECK-LABEL: func.func @matmul_0(%arg0: memref<2x3xf32>, %arg1: memref<2x4xf32>, %arg2: memref<4x3xf32>)
// CHECK:         scf.forall (%{{.*}}) in (6) {
// CHECK:           scf.for {{.*}} iter_args
// CHECK:             arith.mulf
// CHECK-NEXT:        arith.addf

// Python's integer remainder: a - floor(a / b) * b.
// CHECK-LABEL: func.func @remainder_0(
// CHECK:           arith.floordivsi
// CHECK-NEXT:      arith.muli
// CHECK-NEXT:      arith.subi

// Integer abs: max(x, 0 - x) in arith, which the NVVM lowering takes too (math.absi it does not).
// CHECK-LABEL: func.func @abs_0(
// CHECK:           %[[A:.*]] = memref.load %arg1
// CHECK-NEXT:      %[[NEG:.*]] = arith.subi %{{.*}}, %[[A]] : i64
// CHECK-NEXT:      arith.maxsi %[[A]], %[[NEG]] : i64
// CHECK-NOT:       math.absi
module {
  sir.subgraph @softmax(%arg0: tensor<4x8xf32> {sir.name = "x"}) -> tensor<4x8xf32> {
    %0 = mapexpr.launch @reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6(%arg0) {names = ["divide_6"]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    sir.output %0 : tensor<4x8xf32>
  }
  sir.subgraph @padded(%arg0: tensor<10xf32> {sir.name = "x"}) -> tensor<10xf32> {
    %0 = mapexpr.launch @fill_constant_0_max_1(%arg0) {names = ["max_1"]} : (tensor<10xf32>) -> tensor<10xf32>
    sir.output %0 : tensor<10xf32>
  }
  sir.subgraph @concat(%arg0: tensor<2x3xf32> {sir.name = "x"}, %arg1: tensor<2x5xf32> {sir.name = "y"}) -> tensor<2x8xf32> {
    %0 = mapexpr.launch @concat_0(%arg0, %arg1) {names = ["concat_0"]} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    sir.output %0 : tensor<2x8xf32>
  }
  sir.subgraph @matmul(%arg0: tensor<2x4xf32> {sir.name = "x"}, %arg1: tensor<4x3xf32> {sir.name = "w"}) -> tensor<2x3xf32> {
    %0 = mapexpr.launch @matmul_0(%arg0, %arg1) {names = ["matmul_0"]} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
    sir.output %0 : tensor<2x3xf32>
  }
  sir.subgraph @ints(%arg0: tensor<6xi32> {sir.name = "a"}, %arg1: tensor<6xi32> {sir.name = "b"}) -> tensor<6xi32> {
    %0 = mapexpr.launch @remainder_0(%arg0, %arg1) {names = ["remainder_0"]} : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
    sir.output %0 : tensor<6xi32>
  }
  sir.subgraph @abs(%arg0: tensor<6xi64> {sir.name = "a"}) -> tensor<6xi64> {
    %0 = mapexpr.launch @abs_0(%arg0) {names = ["abs_0"]} : (tensor<6xi64>) -> tensor<6xi64>
    sir.output %0 : tensor<6xi64>
  }
  mapexpr.kernel @reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6(%arg0: tensor<4x8xf32> {mapexpr.name = "x"}) -> tensor<4x8xf32> {
    %0 = mapexpr.tensor "divide_6" : tensor<4x8xf32>
    %1 = mapexpr.tensor "reduce_max_0" : tensor<4x1xf32>
    %2 = mapexpr.tensor "broadcast_to_1" : tensor<4x8xf32>
    %3 = mapexpr.tensor "subtract_2" : tensor<4x8xf32>
    %4 = mapexpr.tensor "exp_3" : tensor<4x8xf32>
    %5 = mapexpr.tensor "reduce_sum_4" : tensor<4x1xf32>
    %6 = mapexpr.tensor "broadcast_to_5" : tensor<4x8xf32>
    mapexpr.anchored %arg0 : tensor<4x8xf32> attributes {dims = [#sched.injective<4>, #sched.reduced<8>], loops = [#sched.loop<S0x, 4>, #sched.loop<Temporal, 8>], mesh = #sched.mesh<[#sched.injective<4>, #sched.reduced<8>], [#sched.transpose<[0, 1]>, #sched.reshape<[4, 8]>]>} {
      mapexpr.op "reduce_max_init" outs(%1 : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
      mapexpr.op "reduce_max_acc" outs(%1 : tensor<4x1xf32>) ins(%arg0 : tensor<4x8xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
    }
    mapexpr.anchored %2 : tensor<4x8xf32> attributes {dims = [#sched.injective<4>, #sched.reduced<8>], loops = [#sched.loop<S0x, 4>, #sched.loop<Temporal, 8>], mesh = #sched.mesh<[#sched.injective<4>, #sched.reduced<8>], [#sched.transpose<[0, 1]>, #sched.reshape<[4, 8]>]>} {
      mapexpr.op "broadcast_to" outs(%2 : tensor<4x8xf32>) ins(%1 : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, 0]>]}
      mapexpr.op "subtract" outs(%3 : tensor<4x8xf32>) ins(%arg0, %2 : tensor<4x8xf32>, tensor<4x8xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
      mapexpr.op "exp" outs(%4 : tensor<4x8xf32>) ins(%3 : tensor<4x8xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
      mapexpr.op "reduce_sum_init" outs(%5 : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
      mapexpr.op "reduce_sum_acc" outs(%5 : tensor<4x1xf32>) ins(%4 : tensor<4x8xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
    }
    mapexpr.anchored %6 : tensor<4x8xf32> attributes {dims = [#sched.injective<4>, #sched.injective<8>], loops = [#sched.loop<S0x, 4>, #sched.loop<Vectorize, 8>], mesh = #sched.mesh<[#sched.injective<4>, #sched.injective<8>], [#sched.transpose<[0, 1]>, #sched.reshape<[4, 8]>]>} {
      mapexpr.op "broadcast_to" outs(%6 : tensor<4x8xf32>) ins(%5 : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, 0]>]}
      mapexpr.op "divide" outs(%0 : tensor<4x8xf32>) ins(%4, %6 : tensor<4x8xf32>, tensor<4x8xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
    }
    mapexpr.return %0 : tensor<4x8xf32>
  }
  mapexpr.kernel @fill_constant_0_max_1(%arg0: tensor<10xf32> {mapexpr.name = "x"}) -> tensor<10xf32> {
    %0 = mapexpr.tensor "max_1" : tensor<10xf32>
    %1 = mapexpr.tensor "zero" : tensor<10xf32>
    mapexpr.anchored %0 : tensor<10xf32> attributes {dims = [#sched.injective<10>], loops = [#sched.loop<S0x, 2>, #sched.loop<Vectorize, 8>], mesh = #sched.mesh<[#sched.injective<10>], [#sched.reshape<[10]>, #sched.padding<[16]>, #sched.reshape<[2, 8]>]>} {
      mapexpr.op "fill_constant" outs(%1 : tensor<10xf32>) {indices = [#mapexpr.index<[i0]>], value = 0.000000e+00 : f64}
      mapexpr.op "max" outs(%0 : tensor<10xf32>) ins(%arg0, %1 : tensor<10xf32>, tensor<10xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
    }
    mapexpr.return %0 : tensor<10xf32>
  }
  mapexpr.kernel @concat_0(%arg0: tensor<2x3xf32> {mapexpr.name = "x"}, %arg1: tensor<2x5xf32> {mapexpr.name = "y"}) -> tensor<2x8xf32> {
    %0 = mapexpr.tensor "concat_0" : tensor<2x8xf32>
    mapexpr.anchored %0 : tensor<2x8xf32> attributes {dims = [#sched.injective<2>, #sched.injective<8>], loops = [#sched.loop<S0x, 2>, #sched.loop<Vectorize, 8>], mesh = #sched.mesh<[#sched.injective<2>, #sched.injective<8>], [#sched.reshape<[16]>, #sched.reshape<[2, 8]>]>} {
      mapexpr.op "concat" outs(%0 : tensor<2x8xf32>) ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<2x5xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, (i1 - 3)]>]}
    }
    mapexpr.return %0 : tensor<2x8xf32>
  }
  mapexpr.kernel @matmul_0(%arg0: tensor<2x4xf32> {mapexpr.name = "x"}, %arg1: tensor<4x3xf32> {mapexpr.name = "w"}) -> tensor<2x3xf32> {
    %0 = mapexpr.tensor "matmul_0" : tensor<2x3xf32>
    mapexpr.anchored %0 : tensor<2x3xf32> attributes {dims = [#sched.injective<2>, #sched.injective<3>, #sched.reduced<4>], loops = [#sched.loop<S0x, 6>, #sched.loop<Temporal, 4>], mesh = #sched.mesh<[#sched.injective<2>, #sched.injective<3>, #sched.reduced<4>], [#sched.transpose<[0, 1, 2]>, #sched.reshape<[6, 4]>]>, space = array<i64: 2, 3, 4>} {
      mapexpr.op "matmul_init" outs(%0 : tensor<2x3xf32>) {indices = [#mapexpr.index<[i0, i1]>]}
      mapexpr.op "matmul_acc" outs(%0 : tensor<2x3xf32>) ins(%arg0, %arg1 : tensor<2x4xf32>, tensor<4x3xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i2]>, #mapexpr.index<[i2, i1]>]}
    }
    mapexpr.return %0 : tensor<2x3xf32>
  }
  mapexpr.kernel @remainder_0(%arg0: tensor<6xi32> {mapexpr.name = "a"}, %arg1: tensor<6xi32> {mapexpr.name = "b"}) -> tensor<6xi32> {
    %0 = mapexpr.tensor "remainder_0" : tensor<6xi32>
    mapexpr.anchored %0 : tensor<6xi32> attributes {dims = [#sched.injective<6>], loops = [#sched.loop<S0x, 1>, #sched.loop<Vectorize, 8>], mesh = #sched.mesh<[#sched.injective<6>], [#sched.reshape<[6]>, #sched.padding<[8]>, #sched.reshape<[1, 8]>]>} {
      mapexpr.op "remainder" outs(%0 : tensor<6xi32>) ins(%arg0, %arg1 : tensor<6xi32>, tensor<6xi32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
    }
    mapexpr.return %0 : tensor<6xi32>
  }
  mapexpr.kernel @abs_0(%arg0: tensor<6xi64> {mapexpr.name = "a"}) -> tensor<6xi64> {
    %0 = mapexpr.tensor "abs_0" : tensor<6xi64>
    mapexpr.anchored %0 : tensor<6xi64> attributes {dims = [#sched.injective<6>], loops = [#sched.loop<S0x, 1>, #sched.loop<Vectorize, 8>], mesh = #sched.mesh<[#sched.injective<6>], [#sched.reshape<[6]>, #sched.padding<[8]>, #sched.reshape<[1, 8]>]>} {
      mapexpr.op "abs" outs(%0 : tensor<6xi64>) ins(%arg0 : tensor<6xi64>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
    }
    mapexpr.return %0 : tensor<6xi64>
  }
}
