// Kernels this conversion cannot lower yet fail with a coded diagnostic naming them.
// RUN: sotc-opt %s --sotc-convert-mapexpr-to-loops=target=cpu --split-input-file --verify-diagnostics

// A GPU schedule maps threads: the GPU lowering's job (target=cuda).
// expected-error @+1 {{E9001: kernel gpu_kernel maps threadIdx.x=0..64: thread-level loops lower to the GPU (target=cuda); schedule for the CPU (target=cpu)}}
mapexpr.kernel @gpu_kernel(%x: tensor<64xf32> {mapexpr.name = "x"}) -> tensor<64xf32> {
  %y = mapexpr.tensor "y" : tensor<64xf32>
  mapexpr.anchored %y : tensor<64xf32> attributes {dims = [#sched.injective<64>], loops = [#sched.loop<S0x, 1>, #sched.loop<S1x, 64>], mesh = #sched.mesh<[#sched.injective<64>], [#sched.reshape<[64]>, #sched.padding<[64]>, #sched.reshape<[1, 64]>]>} {
    mapexpr.op "exp" outs(%y : tensor<64xf32>) ins(%x : tensor<64xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %y : tensor<64xf32>
}

// -----

// expected-error @+1 {{'mapexpr.kernel' op is not scheduled: run sotc-mapexpr-schedule first}}
mapexpr.kernel @unscheduled(%x: tensor<64xf32> {mapexpr.name = "x"}) -> tensor<64xf32> {
  %y = mapexpr.tensor "y" : tensor<64xf32>
  mapexpr.anchored %y : tensor<64xf32> attributes {dims = [#sched.injective<64>]} {
    mapexpr.op "exp" outs(%y : tensor<64xf32>) ins(%x : tensor<64xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %y : tensor<64xf32>
}

// -----

// expected-error @+1 {{E4002: kernel complex: element type 'complex<f32>' is not lowered yet (floats, signless integers and bool are)}}
mapexpr.kernel @complex(%x: tensor<8xcomplex<f32>> {mapexpr.name = "x"}) -> tensor<8xcomplex<f32>> {
  %y = mapexpr.tensor "y" : tensor<8xcomplex<f32>>
  mapexpr.anchored %y : tensor<8xcomplex<f32>> attributes {dims = [#sched.injective<8>], loops = [#sched.loop<S0x, 1>, #sched.loop<Vectorize, 8>], mesh = #sched.mesh<[#sched.injective<8>], [#sched.reshape<[8]>, #sched.padding<[8]>, #sched.reshape<[1, 8]>]>} {
    mapexpr.op "exp" outs(%y : tensor<8xcomplex<f32>>) ins(%x : tensor<8xcomplex<f32>>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %y : tensor<8xcomplex<f32>>
}

// -----

// A lane reduction (sched::cpuLaneReductionSchedule) keeps its results in its outputs; one
// into what a later statement reads is refused (the schedule policy never makes it).
// expected-error @+1 {{E4002: kernel lane_into_shared: a lane reduction accumulates in its outputs, and s is shared}}
mapexpr.kernel @lane_into_shared(%x: tensor<4x128x16xf32> {mapexpr.name = "x"}) -> tensor<4x16xf32> {
  %s = mapexpr.tensor "s" : tensor<4x16xf32>
  %y = mapexpr.tensor "y" : tensor<4x16xf32>
  mapexpr.anchored %x : tensor<4x128x16xf32> attributes {dims = [#sched.injective<4>, #sched.reduced<128>, #sched.injective<16>], loops = [#sched.loop<S0x, 4>, #sched.loop<Temporal, 128>, #sched.loop<Vectorize, 16>], mesh = #sched.mesh<[#sched.injective<4>, #sched.reduced<128>, #sched.injective<16>], [#sched.reshape<[4, 128, 16]>]>} {
    mapexpr.op "reduce_sum_init" outs(%s : tensor<4x16xf32>) {indices = [#mapexpr.index<[i0, i2]>]}
    mapexpr.op "reduce_sum_acc" outs(%s : tensor<4x16xf32>) ins(%x : tensor<4x128x16xf32>) {indices = [#mapexpr.index<[i0, i2]>, #mapexpr.index<[i0, i1, i2]>]}
  }
  mapexpr.anchored %y : tensor<4x16xf32> attributes {dims = [#sched.injective<4>, #sched.injective<16>], loops = [#sched.loop<S0x, 4>, #sched.loop<Vectorize, 16>], mesh = #sched.mesh<[#sched.injective<4>, #sched.injective<16>], [#sched.reshape<[4, 16]>]>} {
    mapexpr.op "exp" outs(%y : tensor<4x16xf32>) ins(%s : tensor<4x16xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %y : tensor<4x16xf32>
}
