// Rows of a size other than s0 (a softmax over T, s1, of a batch and a sequence both
// dynamic): global memory unless size-max bounds s1 (its second entry) so that the row fits
// what a kernel may opt in to; a bound on s0 alone leaves them global.
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cuda}),sotc-mapexpr-spill-rows{size-max=1024})' | FileCheck %s --check-prefix=GLOBAL
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cuda}),sotc-mapexpr-spill-rows{size-max=0,1024})' | FileCheck %s --check-prefix=SHARED
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cuda}),sotc-mapexpr-spill-rows{size-max=0,1024},sotc-convert-mapexpr-to-loops{target=cuda})' | FileCheck %s --check-prefix=DYNAMIC
// GLOBAL: mapexpr.launch @rows_of_s1(%arg0) {names = ["y", "e"]}
// SHARED: mapexpr.launch @rows_of_s1(%arg0) {names = ["y"]} : (tensor<2x?xf32, #sir.dims<"s1">>) -> tensor<2x?xf32, #sir.dims<"s1">>
// DYNAMIC: sched.dynamic_shared_bytes = #sched.size<"4*s1">

sir.subgraph @SIR_0(%arg0: tensor<2x?xf32, #sir.dims<"s1">> {sir.name = "x", sir.stop_gradient = true}) -> tensor<2x?xf32, #sir.dims<"s1">> {
  %0 = mapexpr.launch @rows_of_s1(%arg0) {names = ["y"]} : (tensor<2x?xf32, #sir.dims<"s1">>) -> tensor<2x?xf32, #sir.dims<"s1">>
  sir.output %0 : tensor<2x?xf32, #sir.dims<"s1">>
}
mapexpr.kernel @rows_of_s1(%x: tensor<2x?xf32, #sir.dims<"s1">> {mapexpr.name = "x"}) -> tensor<2x?xf32, #sir.dims<"s1">> {
  %y = mapexpr.tensor "y" : tensor<2x?xf32, #sir.dims<"s1">>
  %e = mapexpr.tensor "e" : tensor<2x?xf32, #sir.dims<"s1">>
  %s = mapexpr.tensor "s" : tensor<2x1xf32>
  mapexpr.anchored %x : tensor<2x?xf32, #sir.dims<"s1">> attributes {dims = [#sched.injective<2>, #sched.reduced<4111>]} {
    mapexpr.op "exp" outs(%e : tensor<2x?xf32, #sir.dims<"s1">>) ins(%x : tensor<2x?xf32, #sir.dims<"s1">>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
    mapexpr.op "reduce_sum_init" outs(%s : tensor<2x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%s : tensor<2x1xf32>) ins(%e : tensor<2x?xf32, #sir.dims<"s1">>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.anchored %y : tensor<2x?xf32, #sir.dims<"s1">> attributes {dims = [#sched.injective<2>, #sched.injective<4111>]} {
    mapexpr.op "divide" outs(%y : tensor<2x?xf32, #sir.dims<"s1">>) ins(%e, %s : tensor<2x?xf32, #sir.dims<"s1">>, tensor<2x1xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, 0]>]}
  }
  mapexpr.return %y : tensor<2x?xf32, #sir.dims<"s1">>
}
