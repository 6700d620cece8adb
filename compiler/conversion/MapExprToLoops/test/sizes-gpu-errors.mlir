// A kernel over dynamic sizes other than s0 alone (a sequence s1 beside a batch) is CPU-only
// so far: the CUDA conversion refuses it by name.
// RUN: sotc-opt %s --sotc-convert-mapexpr-to-loops=target=gpu --verify-diagnostics


// CUDA kernels take s0 alone so far: a second dynamic size is refused by name.
// expected-error @+1 {{E4002: kernel exp_sequence over a dynamic size: a CUDA kernel takes s0 alone so far (this one holds s1)}}
mapexpr.kernel @exp_sequence(%x: tensor<?x4xf32, "s1"> {mapexpr.name = "x"}) -> tensor<?x4xf32, "s1"> {
  %y = mapexpr.tensor "y" : tensor<?x4xf32, "s1">
  mapexpr.anchored %y : tensor<?x4xf32, "s1"> attributes {dims = [#sched.injective<4111>, #sched.injective<4>], loops = [#sched.loop<S0x, 4111>, #sched.loop<S1x, 4>], mesh = #sched.mesh<[#sched.injective<4111>, #sched.injective<4>], [#sched.reshape<[4111, 4]>]>} {
    mapexpr.op "exp" outs(%y : tensor<?x4xf32, "s1">) ins(%x : tensor<?x4xf32, "s1">) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %y : tensor<?x4xf32, "s1">
}
