// sotc-convert-sir-to-mapexpr turns fusion groups into kernels (indices from the anchor,
// schedule dims, no schedule yet).
// RUN: sotc-opt %s --sotc-convert-sir-to-mapexpr | FileCheck %s --check-prefix=BUILD

// BUILD:      mapexpr.launch @exp_0_reduce_sum_1(%arg0) {names = ["var_1", "var_2"]} : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>)
// BUILD:      mapexpr.kernel @exp_0_reduce_sum_1(%arg0: tensor<4x8xf32> {mapexpr.name = "x"}) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
// BUILD:        mapexpr.anchored %{{.*}} : tensor<4x8xf32> attributes {dims = [#sched.injective<4>, #sched.reduced<8>]} {
// BUILD-NEXT:     mapexpr.op "exp" {{.*}} {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
// BUILD-NEXT:     mapexpr.op "reduce_sum_init" {{.*}} {indices = [#mapexpr.index<[i0, 0]>]}
// BUILD-NEXT:     mapexpr.op "reduce_sum_acc" {{.*}} {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}

// BUILD-NOT: mesh
sir.subgraph @SIR_0(%x: tensor<4x8xf32> {sir.name = "x"}) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %0:2 = sir.group "exp_0_reduce_sum_1" "reduction"(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %e = sir.prim exp(%a) {name = "var_1"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %s = sir.prim reduce_sum(%e) {axes = array<i64: 1>, keepdim = true, name = "var_2"} : (tensor<4x8xf32>) -> tensor<4x1xf32>
    sir.yield %e, %s : tensor<4x8xf32>, tensor<4x1xf32>
  }
  sir.output %0#0, %0#1 : tensor<4x8xf32>, tensor<4x1xf32>
}
