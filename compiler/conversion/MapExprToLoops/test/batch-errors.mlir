// Kernels over a dynamic size that could not run at the call's s0 are refused by name.
// RUN: sotc-opt %s --sotc-convert-mapexpr-to-loops=target=cpu --split-input-file --verify-diagnostics

// A mesh that pads s0 would read its size (its mask).
// expected-error @+1 {{E4002: kernel padded over a dynamic size: its schedule ([I(4099), I(3)].reshape([12297]).padding([12304]).reshape([1538, 8])) pads the dynamic size}}
mapexpr.kernel @padded(%x: tensor<?x3xf32> {mapexpr.name = "x"}) -> tensor<?x3xf32> {
  %y = mapexpr.tensor "y" : tensor<?x3xf32>
  mapexpr.anchored %y : tensor<?x3xf32> attributes {dims = [#sched.injective<4099>, #sched.injective<3>], loops = [#sched.loop<S0x, 1538>, #sched.loop<Vectorize, 8>], mesh = #sched.mesh<[#sched.injective<4099>, #sched.injective<3>], [#sched.reshape<[12297]>, #sched.padding<[12304]>, #sched.reshape<[1538, 8]>]>} {
    mapexpr.op "exp" outs(%y : tensor<?x3xf32>) ins(%x : tensor<?x3xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %y : tensor<?x3xf32>
}
