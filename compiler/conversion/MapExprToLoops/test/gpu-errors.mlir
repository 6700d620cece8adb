// GPU kernels this conversion cannot lower yet fail with a coded diagnostic naming them.
// RUN: sotc-opt %s --sotc-convert-mapexpr-to-loops=target=cuda --verify-diagnostics

// Softmax over rows of 16384 floats: exp, kept between the sum and the division, needs 64 KiB
// per block, more than a block's static shared memory: sotc-mapexpr-spill-rows (which the
// CUDA pipeline runs; dialects/mapexpr/test/spill-rows.mlir) makes it a kernel output first.
// (Rows of 8192 fit: 32 KiB.)
sir.subgraph @SIR_0(%arg0: tensor<4x16384xf32> {sir.name = "x", sir.stop_gradient = true}) -> tensor<4x16384xf32> {
  %0 = mapexpr.launch @reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6(%arg0) {names = ["var_5"]} : (tensor<4x16384xf32>) -> tensor<4x16384xf32>
  sir.output %0 : tensor<4x16384xf32>
}
// expected-error @+1 {{E4002: kernel reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_to_5_divide_6 keeps 65544 bytes per block between its statements, more than a block's shared memory (49152): run sotc-mapexpr-spill-rows first}}
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
