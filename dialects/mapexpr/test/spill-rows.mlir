// sotc-mapexpr-spill-rows: a softmax over rows of 16384 floats keeps its exponentials (64 KiB
// a row) between the sum and the division, more than a CUDA block's 48 KiB of shared memory:
// they become an output of the kernel (global memory from the arena), one more result of the
// launch that nothing reads; the row's maximum and sum (4 bytes each) stay shared. The GPU
// lowering then stores and loads them in the kernel's buffer argument.
// RUN: sotc-opt %s --sotc-mapexpr-spill-rows | FileCheck %s
// RUN: sotc-opt %s --sotc-mapexpr-spill-rows --sotc-convert-mapexpr-to-loops=target=cuda | FileCheck %s --check-prefix=GPU
// A kernel that fits is left as it is.
// RUN: sotc-opt %s --sotc-mapexpr-spill-rows | FileCheck %s --check-prefix=FITS

// CHECK: %[[Y:.*]]:2 = mapexpr.launch @reduce_max_0_{{.*}}_divide_6(%arg0) {names = ["var_5", "var_3"]} : (tensor<4x16384xf32>) -> (tensor<4x16384xf32>, tensor<4x16384xf32>)
// CHECK: sir.output %[[Y]]#0
// CHECK: mapexpr.kernel @reduce_max_0_{{.*}}_divide_6(%{{.*}}: tensor<4x16384xf32> {mapexpr.name = "x"}) -> (tensor<4x16384xf32>, tensor<4x16384xf32>)
// CHECK: %[[EXP:.*]] = mapexpr.tensor "var_3"
// CHECK: mapexpr.return %{{.*}}, %[[EXP]] : tensor<4x16384xf32>, tensor<4x16384xf32>

// GPU: gpu.func @reduce_max_0_{{.*}}_divide_6(%[[OUT:[^:]*]]: memref<4x16384xf32> {{.*}}, %[[EXPS:[^:]*]]: memref<4x16384xf32> {{.*}}, %{{.*}}: memref<4x16384xf32> {{.*}}) workgroup(%{{.*}} : memref<1xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<1xf32, #gpu.address_space<workgroup>>)
// GPU: memref.store %{{.*}}, %[[EXPS]][
// GPU: gpu.barrier
// GPU: memref.load %[[EXPS]][

// FITS: mapexpr.launch @fits(%arg0) {names = ["y"]} : (tensor<4x1024xf32>) -> tensor<4x1024xf32>
// FITS: mapexpr.return %{{.*}} : tensor<4x1024xf32>
sir.subgraph @SIR_0(%arg0: tensor<4x16384xf32> {sir.name = "x", sir.stop_gradient = true}) -> tensor<4x16384xf32> {
  %0 = mapexpr.launch @reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6(%arg0) {names = ["var_5"]} : (tensor<4x16384xf32>) -> tensor<4x16384xf32>
  sir.output %0 : tensor<4x16384xf32>
}
mapexpr.kernel @reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6(%arg0: tensor<4x16384xf32> {mapexpr.name = "x"}) -> tensor<4x16384xf32> {
  %0 = mapexpr.tensor "var_5" : tensor<4x16384xf32>
  %1 = mapexpr.tensor "var_1" : tensor<4x1xf32>
  %2 = mapexpr.tensor "broadcast_to_1" : tensor<4x16384xf32>
  %3 = mapexpr.tensor "var_2" : tensor<4x16384xf32>
  %4 = mapexpr.tensor "var_3" : tensor<4x16384xf32>
  %5 = mapexpr.tensor "var_4" : tensor<4x1xf32>
  %6 = mapexpr.tensor "broadcast_to_5" : tensor<4x16384xf32>
  mapexpr.anchored %arg0 : tensor<4x16384xf32> attributes {dims = [#sched.injective<4>, #sched.reduced<16384>], loops = [#sched.loop<S0x, 4>, #sched.loop<S1x, 256>, #sched.loop<Temporal, 64>], mesh = #sched.mesh<[#sched.injective<4>, #sched.reduced<16384>], [#sched.transpose<[0, 1]>, #sched.reshape<[4, 16384]>, #sched.reshape<[4, 64, 256]>, #sched.transpose<[0, 2, 1]>]>} {
    mapexpr.op "reduce_max_init" outs(%1 : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_max_acc" outs(%1 : tensor<4x1xf32>) ins(%arg0 : tensor<4x16384xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.anchored %2 : tensor<4x16384xf32> attributes {dims = [#sched.injective<4>, #sched.reduced<16384>], loops = [#sched.loop<S0x, 4>, #sched.loop<S1x, 256>, #sched.loop<Temporal, 64>], mesh = #sched.mesh<[#sched.injective<4>, #sched.reduced<16384>], [#sched.transpose<[0, 1]>, #sched.reshape<[4, 16384]>, #sched.reshape<[4, 64, 256]>, #sched.transpose<[0, 2, 1]>]>} {
    mapexpr.op "broadcast_to" outs(%2 : tensor<4x16384xf32>) ins(%1 : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, 0]>]}
    mapexpr.op "subtract" outs(%3 : tensor<4x16384xf32>) ins(%arg0, %2 : tensor<4x16384xf32>, tensor<4x16384xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
    mapexpr.op "exp" outs(%4 : tensor<4x16384xf32>) ins(%3 : tensor<4x16384xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
    mapexpr.op "reduce_sum_init" outs(%5 : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%5 : tensor<4x1xf32>) ins(%4 : tensor<4x16384xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.anchored %6 : tensor<4x16384xf32> attributes {dims = [#sched.injective<4>, #sched.injective<16384>], loops = [#sched.loop<S0x, 4>, #sched.loop<S1x, 256>, #sched.loop<Temporal, 64>], mesh = #sched.mesh<[#sched.injective<4>, #sched.injective<16384>], [#sched.transpose<[0, 1]>, #sched.reshape<[4, 16384]>, #sched.reshape<[4, 64, 256]>, #sched.transpose<[0, 2, 1]>]>} {
    mapexpr.op "broadcast_to" outs(%6 : tensor<4x16384xf32>) ins(%5 : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, 0]>]}
    mapexpr.op "divide" outs(%0 : tensor<4x16384xf32>) ins(%4, %6 : tensor<4x16384xf32>, tensor<4x16384xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %0 : tensor<4x16384xf32>
}


sir.subgraph @SIR_1(%arg0: tensor<4x1024xf32> {sir.name = "x", sir.stop_gradient = true}) -> tensor<4x1024xf32> {
  %0 = mapexpr.launch @fits(%arg0) {names = ["y"]} : (tensor<4x1024xf32>) -> tensor<4x1024xf32>
  sir.output %0 : tensor<4x1024xf32>
}
mapexpr.kernel @fits(%arg0: tensor<4x1024xf32> {mapexpr.name = "x"}) -> tensor<4x1024xf32> {
  %0 = mapexpr.tensor "y" : tensor<4x1024xf32>
  %1 = mapexpr.tensor "e" : tensor<4x1024xf32>
  %2 = mapexpr.tensor "s" : tensor<4x1xf32>
  mapexpr.anchored %arg0 : tensor<4x1024xf32> attributes {dims = [#sched.injective<4>, #sched.reduced<1024>], loops = [#sched.loop<S0x, 4>, #sched.loop<S1x, 256>, #sched.loop<Temporal, 4>], mesh = #sched.mesh<[#sched.injective<4>, #sched.reduced<1024>], [#sched.transpose<[0, 1]>, #sched.reshape<[4, 1024]>, #sched.reshape<[4, 4, 256]>, #sched.transpose<[0, 2, 1]>]>} {
    mapexpr.op "exp" outs(%1 : tensor<4x1024xf32>) ins(%arg0 : tensor<4x1024xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
    mapexpr.op "reduce_sum_init" outs(%2 : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%2 : tensor<4x1xf32>) ins(%1 : tensor<4x1024xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.anchored %0 : tensor<4x1024xf32> attributes {dims = [#sched.injective<4>, #sched.injective<1024>], loops = [#sched.loop<S0x, 4>, #sched.loop<S1x, 256>, #sched.loop<Temporal, 4>], mesh = #sched.mesh<[#sched.injective<4>, #sched.injective<1024>], [#sched.transpose<[0, 1]>, #sched.reshape<[4, 1024]>, #sched.reshape<[4, 4, 256]>, #sched.transpose<[0, 2, 1]>]>} {
    mapexpr.op "divide" outs(%0 : tensor<4x1024xf32>) ins(%1, %2 : tensor<4x1024xf32>, tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, 0]>]}
  }
  mapexpr.return %0 : tensor<4x1024xf32>
}
