// CUDA kernels take the dynamic size s0 in their grid only, once (a batch): one whose grid
// holds s0^2, or whose threads would loop over s0, is refused by name (the CPU's compile).
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=gpu}), sotc-convert-mapexpr-to-loops{target=gpu})' --split-input-file --verify-diagnostics

// expected-error @+1 {{E4002: kernel square over a dynamic size: its schedule ([I(4099), I(4099)].transpose([0, 1]).reshape([16801801, 1]).padding([16801801, 32]).reshape([16801801, 1, 32]).transpose([0, 2, 1])) loops over the dynamic size outside its grid, which CUDA kernels do not do yet (the CPU's do)}}
mapexpr.kernel @square(%x: tensor<?x?xf32> {mapexpr.name = "x"}) -> tensor<?x?xf32> {
  %y = mapexpr.tensor "y" : tensor<?x?xf32>
  mapexpr.anchored %y : tensor<?x?xf32> attributes {dims = [#sched.injective<4099>, #sched.injective<4099>]} {
    mapexpr.op "exp" outs(%y : tensor<?x?xf32>) ins(%x : tensor<?x?xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %y : tensor<?x?xf32>
}

// -----

// A softmax over a sequence: its threads would split a row of s0 (padded to their count).
// expected-error @+1 {{pads the dynamic size}}
mapexpr.kernel @scores(%x: tensor<4x?x?xf32> {mapexpr.name = "x"}) -> tensor<4x?x1xf32> {
  %s = mapexpr.tensor "s" : tensor<4x?x1xf32>
  mapexpr.anchored %x : tensor<4x?x?xf32> attributes {dims = [#sched.injective<4>, #sched.injective<4099>, #sched.reduced<4099>]} {
    mapexpr.op "reduce_sum_init" outs(%s : tensor<4x?x1xf32>) {indices = [#mapexpr.index<[i0, i1, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%s : tensor<4x?x1xf32>) ins(%x : tensor<4x?x?xf32>) {indices = [#mapexpr.index<[i0, i1, 0]>, #mapexpr.index<[i0, i1, i2]>]}
  }
  mapexpr.return %s : tensor<4x?x1xf32>
}
