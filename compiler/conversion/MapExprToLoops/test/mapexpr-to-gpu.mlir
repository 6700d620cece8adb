// sotc-convert-mapexpr-to-loops{target=cuda}: scheduled GPU kernels become gpu.func kernels
// in one gpu.module, with block and thread ids for the S0x and S1x loops. The inputs are what
// `--sotc-pipeline="target=cuda compile-to=scheduled"` makes of softmax over [32, 128], a
// row sum of exp over [4, 1000] (rows padded to 1024) and relu(sin(x)) over 100 elements.
// RUN: sotc-opt %s --split-input-file --sotc-convert-mapexpr-to-loops=target=cuda --canonicalize --cse | FileCheck %s
//
// testing-break lowers wrongly on purpose (the CUDA emulator's tests show it caught): no
// barriers between statements, each thread on the next one's element, partial results left
// uncombined. Anything else is refused.
// RUN: sotc-opt %s --split-input-file --sotc-convert-mapexpr-to-loops="target=cuda testing-break=barrier" | FileCheck %s --check-prefix=BARRIER
// RUN: sotc-opt %s --split-input-file --sotc-convert-mapexpr-to-loops="target=cuda testing-break=index" | FileCheck %s --check-prefix=INDEX
// RUN: sotc-opt %s --split-input-file --sotc-convert-mapexpr-to-loops="target=cuda testing-break=reduction" | FileCheck %s --check-prefix=REDUCTION
// RUN: not sotc-opt %s --split-input-file --sotc-convert-mapexpr-to-loops="target=cuda testing-break=other" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// BARRIER-LABEL: gpu.func @reduce_max_0_
// BARRIER-NOT:     gpu.barrier
// BARRIER:         gpu.return
// INDEX-LABEL:   gpu.func @reduce_max_0_
// INDEX:           %[[T:.*]] = gpu.thread_id x
// INDEX-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// INDEX-NEXT:      arith.addi %[[T]], %[[ONE]] : index
// REDUCTION-LABEL: gpu.func @reduce_max_0_
// REDUCTION-NOT:   gpu.all_reduce
// REDUCTION:       gpu.return
// UNKNOWN: error: sotc-convert-mapexpr-to-loops: testing-break is barrier, index or reduction, not 'other'

// Softmax: a block per row, a thread per element. Each reduction combines the threads'
// values with a uniform all-reduce; thread 0 keeps the row's result in shared memory, and
// barriers separate the statements (the max, exp-and-sum, divide). exp stays in shared memory
// between the sum and the division: the row is read from global memory once.
// CHECK:       module attributes {gpu.container_module}
// CHECK:       mapexpr.launch @reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6(%arg0)
// CHECK-LABEL: gpu.module @sotc_kernels
// CHECK:       gpu.func @reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6(%arg0: memref<32x128xf32> {llvm.align = 16 : i64, llvm.noalias}, %arg1: memref<32x128xf32> {llvm.align = 16 : i64, llvm.noalias})
// CHECK-SAME:    workgroup(%[[MAX:.*]] : memref<1xf32, #gpu.address_space<workgroup>>, %[[EXP:.*]] : memref<128xf32, #gpu.address_space<workgroup>>, %[[SUM:.*]] : memref<1xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME:    kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 32, 1, 1>}
// CHECK:         %[[BLOCK:.*]] = gpu.block_id x
// CHECK:         %[[THREAD:.*]] = gpu.thread_id x
// CHECK:         %[[X:.*]] = memref.load %arg1[%[[ROW:.*]], %[[COL:.*]]] : memref<32x128xf32>
// CHECK:         %[[M:.*]] = gpu.all_reduce maximumf %[[X]] uniform
// CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %[[THREAD]], %c0
// CHECK:         scf.if %[[FIRST]] {
// CHECK-NEXT:      memref.store %[[M]], %[[MAX]][%c0]
// CHECK:         gpu.barrier
// CHECK:         math.exp
// CHECK:         memref.store %{{.*}}, %[[EXP]][%[[COL]]]
// CHECK:         gpu.all_reduce add
// CHECK:         gpu.barrier
// CHECK:         %[[E:.*]] = memref.load %[[EXP]][%[[COL]]]
// CHECK:         arith.divf %[[E]]
// CHECK:         memref.store %{{.*}}, %arg0[%[[ROW]], %[[COL]]]
// CHECK:         gpu.return
sir.subgraph @SIR_0(%arg0: tensor<32x128xf32> {sir.name = "x", sir.stop_gradient = true}) -> tensor<32x128xf32> {
  %0 = mapexpr.launch @reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6(%arg0) {names = ["var_5"]} : (tensor<32x128xf32>) -> tensor<32x128xf32>
  sir.output %0 : tensor<32x128xf32>
}
mapexpr.kernel @reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6(%arg0: tensor<32x128xf32> {mapexpr.name = "x"}) -> tensor<32x128xf32> {
  %0 = mapexpr.tensor "var_5" : tensor<32x128xf32>
  %1 = mapexpr.tensor "var_1" : tensor<32x1xf32>
  %2 = mapexpr.tensor "broadcast_to_1" : tensor<32x128xf32>
  %3 = mapexpr.tensor "var_2" : tensor<32x128xf32>
  %4 = mapexpr.tensor "var_3" : tensor<32x128xf32>
  %5 = mapexpr.tensor "var_4" : tensor<32x1xf32>
  %6 = mapexpr.tensor "broadcast_to_5" : tensor<32x128xf32>
  mapexpr.anchored %arg0 : tensor<32x128xf32> attributes {dims = [#sched.injective<32>, #sched.reduced<128>], loops = [#sched.loop<S0x, 32>, #sched.loop<S1x, 128>, #sched.loop<Temporal, 1>], mesh = #sched.mesh<[#sched.injective<32>, #sched.reduced<128>], [#sched.transpose<[0, 1]>, #sched.reshape<[32, 128]>, #sched.reshape<[32, 1, 128]>, #sched.transpose<[0, 2, 1]>]>} {
    mapexpr.op "reduce_max_init" outs(%1 : tensor<32x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_max_acc" outs(%1 : tensor<32x1xf32>) ins(%arg0 : tensor<32x128xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.anchored %2 : tensor<32x128xf32> attributes {dims = [#sched.injective<32>, #sched.reduced<128>], loops = [#sched.loop<S0x, 32>, #sched.loop<S1x, 128>, #sched.loop<Temporal, 1>], mesh = #sched.mesh<[#sched.injective<32>, #sched.reduced<128>], [#sched.transpose<[0, 1]>, #sched.reshape<[32, 128]>, #sched.reshape<[32, 1, 128]>, #sched.transpose<[0, 2, 1]>]>} {
    mapexpr.op "broadcast_to" outs(%2 : tensor<32x128xf32>) ins(%1 : tensor<32x1xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, 0]>]}
    mapexpr.op "subtract" outs(%3 : tensor<32x128xf32>) ins(%arg0, %2 : tensor<32x128xf32>, tensor<32x128xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
    mapexpr.op "exp" outs(%4 : tensor<32x128xf32>) ins(%3 : tensor<32x128xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
    mapexpr.op "reduce_sum_init" outs(%5 : tensor<32x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%5 : tensor<32x1xf32>) ins(%4 : tensor<32x128xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.anchored %6 : tensor<32x128xf32> attributes {dims = [#sched.injective<32>, #sched.injective<128>], loops = [#sched.loop<S0x, 32>, #sched.loop<S1x, 128>, #sched.loop<Temporal, 1>], mesh = #sched.mesh<[#sched.injective<32>, #sched.injective<128>], [#sched.transpose<[0, 1]>, #sched.reshape<[32, 128]>, #sched.reshape<[32, 1, 128]>, #sched.transpose<[0, 2, 1]>]>} {
    mapexpr.op "broadcast_to" outs(%6 : tensor<32x128xf32>) ins(%5 : tensor<32x1xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, 0]>]}
    mapexpr.op "divide" outs(%0 : tensor<32x128xf32>) ins(%4, %6 : tensor<32x128xf32>, tensor<32x128xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %0 : tensor<32x128xf32>
}

// -----

// A row of 1000 on 256 threads: four temporal steps per thread over the row padded to 1024;
// padding points leave the thread's partial sum as it is, and every thread reaches the
// all-reduce (uniform: no thread skips it).
// CHECK-LABEL: gpu.func @exp_0_reduce_sum_1(%arg0: memref<4x1xf32> {{.*}}, %arg1: memref<4x1000xf32> {{.*}}) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 4, 1, 1>}
// CHECK:         %[[PARTIAL:.*]] = scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(%[[ACC:.*]] = %cst) -> (f32) {
// CHECK:           %[[REAL:.*]] = arith.cmpi ult, %{{.*}}, %c1000 : index
// CHECK:           %[[NEXT:.*]] = scf.if %[[REAL]] -> (f32) {
// CHECK:             math.exp
// CHECK:             arith.addf %[[ACC]], %{{.*}} fastmath<reassoc>
// CHECK:           } else {
// CHECK-NEXT:        scf.yield %[[ACC]] : f32
// CHECK:           scf.yield %[[NEXT]]
// CHECK:         %[[ROWSUM:.*]] = gpu.all_reduce add %[[PARTIAL]] uniform
// CHECK:         scf.if
// CHECK:           memref.store %[[ROWSUM]], %arg0[
sir.subgraph @SIR_0(%arg0: tensor<4x1000xf32> {sir.name = "x", sir.stop_gradient = true}) -> tensor<4x1xf32> {
  %0 = mapexpr.launch @exp_0_reduce_sum_1(%arg0) {names = ["var_2"]} : (tensor<4x1000xf32>) -> tensor<4x1xf32>
  sir.output %0 : tensor<4x1xf32>
}
mapexpr.kernel @exp_0_reduce_sum_1(%arg0: tensor<4x1000xf32> {mapexpr.name = "x"}) -> tensor<4x1xf32> {
  %0 = mapexpr.tensor "var_2" : tensor<4x1xf32>
  %1 = mapexpr.tensor "var_1" : tensor<4x1000xf32>
  mapexpr.anchored %1 : tensor<4x1000xf32> attributes {dims = [#sched.injective<4>, #sched.reduced<1000>], loops = [#sched.loop<S0x, 4>, #sched.loop<S1x, 256>, #sched.loop<Temporal, 4>], mesh = #sched.mesh<[#sched.injective<4>, #sched.reduced<1000>], [#sched.transpose<[0, 1]>, #sched.reshape<[4, 1000]>, #sched.padding<[4, 1024]>, #sched.reshape<[4, 4, 256]>, #sched.transpose<[0, 2, 1]>]>} {
    mapexpr.op "exp" outs(%1 : tensor<4x1000xf32>) ins(%arg0 : tensor<4x1000xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
    mapexpr.op "reduce_sum_init" outs(%0 : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%0 : tensor<4x1xf32>) ins(%1 : tensor<4x1000xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %0 : tensor<4x1xf32>
}

// -----

// An elementwise kernel: one block of 128 threads over 100 elements; the padding threads do
// nothing, and no barrier or shared memory is needed.
// CHECK-LABEL: gpu.func @fill_constant_1_sin_0_max_2(%arg0: memref<100xf32> {{.*}}, %arg1: memref<100xf32> {{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK:         %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c100 : index
// CHECK-NEXT:    scf.if %[[IN]] {
// CHECK:           math.sin
// CHECK:           arith.maximumf
// CHECK-NOT:     gpu.barrier
// CHECK:         gpu.return
sir.subgraph @SIR_0(%arg0: tensor<100xf32> {sir.name = "x", sir.stop_gradient = true}) -> tensor<100xf32> {
  %0 = mapexpr.launch @fill_constant_1_sin_0_max_2(%arg0) {names = ["var_2"]} : (tensor<100xf32>) -> tensor<100xf32>
  sir.output %0 : tensor<100xf32>
}
mapexpr.kernel @fill_constant_1_sin_0_max_2(%arg0: tensor<100xf32> {mapexpr.name = "x"}) -> tensor<100xf32> {
  %0 = mapexpr.tensor "var_2" : tensor<100xf32>
  %1 = mapexpr.tensor "var_1" : tensor<100xf32>
  %2 = mapexpr.tensor "zero" : tensor<100xf32>
  mapexpr.anchored %1 : tensor<100xf32> attributes {dims = [#sched.injective<100>], loops = [#sched.loop<S0x, 1>, #sched.loop<S1x, 128>], mesh = #sched.mesh<[#sched.injective<100>], [#sched.reshape<[100]>, #sched.padding<[128]>, #sched.reshape<[1, 128]>]>} {
    mapexpr.op "fill_constant" outs(%2 : tensor<100xf32>) {indices = [#mapexpr.index<[i0]>], value = 0.000000e+00 : f64}
    mapexpr.op "sin" outs(%1 : tensor<100xf32>) ins(%arg0 : tensor<100xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
    mapexpr.op "max" outs(%0 : tensor<100xf32>) ins(%1, %2 : tensor<100xf32>, tensor<100xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %0 : tensor<100xf32>
}

// -----

// any() over rows of bools: warp shuffles move 32-bit words, so the i1 partial results widen
// for the block-wide OR and narrow back.
// CHECK-LABEL: gpu.func @fill_constant_0_greater_than_1_reduce_max_2
// CHECK:         %[[WIDE:.*]] = arith.extui %{{.*}} : i1 to i32
// CHECK-NEXT:    %[[ANY:.*]] = gpu.all_reduce or %[[WIDE]] uniform
// CHECK:         arith.trunci %[[ANY]] : i32 to i1
module {
  sir.subgraph @SIR_0(%arg0: tensor<4x256xf32> {sir.name = "m", sir.stop_gradient = true}) -> tensor<4xi1> {
    %0 = mapexpr.launch @fill_constant_0_greater_than_1_reduce_max_2(%arg0) {names = ["var_2"]} : (tensor<4x256xf32>) -> tensor<4xi1>
    sir.output %0 : tensor<4xi1>
  }
  mapexpr.kernel @fill_constant_0_greater_than_1_reduce_max_2(%arg0: tensor<4x256xf32> {mapexpr.name = "m"}) -> tensor<4xi1> {
    %0 = mapexpr.tensor "var_2" : tensor<4xi1>
    %1 = mapexpr.tensor "var_1" : tensor<4x256xi1>
    %2 = mapexpr.tensor "zero" : tensor<4x256xf32>
    mapexpr.anchored %1 : tensor<4x256xi1> attributes {dims = [#sched.injective<4>, #sched.reduced<256>], loops = [#sched.loop<S0x, 4>, #sched.loop<S1x, 256>, #sched.loop<Temporal, 1>], mesh = #sched.mesh<[#sched.injective<4>, #sched.reduced<256>], [#sched.transpose<[0, 1]>, #sched.reshape<[4, 256]>, #sched.reshape<[4, 1, 256]>, #sched.transpose<[0, 2, 1]>]>} {
      mapexpr.op "fill_constant" outs(%2 : tensor<4x256xf32>) {indices = [#mapexpr.index<[i0, i1]>], value = 0.000000e+00 : f64}
      mapexpr.op "greater_than" outs(%1 : tensor<4x256xi1>) ins(%arg0, %2 : tensor<4x256xf32>, tensor<4x256xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
      mapexpr.op "reduce_max_init" outs(%0 : tensor<4xi1>) {indices = [#mapexpr.index<[i0]>]}
      mapexpr.op "reduce_max_acc" outs(%0 : tensor<4xi1>) ins(%1 : tensor<4x256xi1>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0, i1]>]}
    }
    mapexpr.return %0 : tensor<4xi1>
  }
}
