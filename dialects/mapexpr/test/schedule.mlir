// sotc-mapexpr-schedule adds every AnchoredMapStmt's mesh and loops by the target's policy.
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cuda}))' | FileCheck %s --check-prefix=GPU
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cpu}))' | FileCheck %s --check-prefix=CPU
// RUN: not sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=tpu}))' 2>&1 | FileCheck %s --check-prefix=BAD

// GPU: loops = [#sched.loop<S0x, 4>, #sched.loop<S1x, 32>, #sched.loop<Temporal, 1>]
// GPU-SAME: mesh = #sched.mesh<[#sched.injective<4>, #sched.reduced<8>], [#sched.transpose<[0, 1]>, #sched.reshape<[4, 8]>, #sched.padding<[4, 32]>, #sched.reshape<[4, 1, 32]>, #sched.transpose<[0, 2, 1]>]>
// CPU: loops = [#sched.loop<S0x, 4>, #sched.loop<Temporal, 8>]
// BAD: sotc-mapexpr-schedule: target must be cuda or cpu, not 'tpu'
mapexpr.kernel @exp_0_reduce_sum_1(%arg0: tensor<4x8xf32> {mapexpr.name = "x"}) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %0 = mapexpr.tensor "var_1" : tensor<4x8xf32>
  %1 = mapexpr.tensor "var_2" : tensor<4x1xf32>
  mapexpr.anchored %0 : tensor<4x8xf32> attributes {dims = [#sched.injective<4>, #sched.reduced<8>]} {
    mapexpr.op "exp" outs(%0 : tensor<4x8xf32>) ins(%arg0 : tensor<4x8xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
    mapexpr.op "reduce_sum_init" outs(%1 : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%1 : tensor<4x1xf32>) ins(%0 : tensor<4x8xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %0, %1 : tensor<4x8xf32>, tensor<4x1xf32>
}
