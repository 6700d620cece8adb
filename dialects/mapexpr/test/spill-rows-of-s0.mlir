// sotc-mapexpr-spill-rows and rows of the dynamic size s0 (a softmax over T keeps its
// exponentials, a row of s0 floats): global memory (one more output) unless size-max
// bounds T so that the row fits what a kernel may opt in to (227 KiB: 1024 floats do, 100000
// do not); then the launch's dynamic shared memory (4*s0 bytes).
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cuda}),sotc-mapexpr-spill-rows)' | FileCheck %s --check-prefix=GLOBAL
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cuda}),sotc-mapexpr-spill-rows{size-max=100000})' | FileCheck %s --check-prefix=GLOBAL
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cuda}),sotc-mapexpr-spill-rows{size-max=1024})' | FileCheck %s --check-prefix=SHARED
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cuda}),sotc-mapexpr-spill-rows{size-max=1024},sotc-convert-mapexpr-to-loops{target=cuda})' | FileCheck %s --check-prefix=DYNAMIC
// GLOBAL: mapexpr.launch @rows_of_s0(%arg0) {names = ["y", "e"]} : (tensor<2x?xf32>) -> (tensor<2x?xf32>, tensor<2x?xf32>)
// GLOBAL: mapexpr.return %{{.*}}, %{{.*}} : tensor<2x?xf32>, tensor<2x?xf32>
// SHARED: mapexpr.launch @rows_of_s0(%arg0) {names = ["y"]} : (tensor<2x?xf32>) -> tensor<2x?xf32>
// DYNAMIC: sched.dynamic_shared_bytes = #sched.size<"4*s0">

sir.subgraph @SIR_0(%arg0: tensor<2x?xf32> {sir.name = "x", sir.stop_gradient = true}) -> tensor<2x?xf32> {
  %0 = mapexpr.launch @rows_of_s0(%arg0) {names = ["y"]} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  sir.output %0 : tensor<2x?xf32>
}
mapexpr.kernel @rows_of_s0(%x: tensor<2x?xf32> {mapexpr.name = "x"}) -> tensor<2x?xf32> {
  %y = mapexpr.tensor "y" : tensor<2x?xf32>
  %e = mapexpr.tensor "e" : tensor<2x?xf32>
  %s = mapexpr.tensor "s" : tensor<2x1xf32>
  mapexpr.anchored %x : tensor<2x?xf32> attributes {dims = [#sched.injective<2>, #sched.reduced<4099>]} {
    mapexpr.op "exp" outs(%e : tensor<2x?xf32>) ins(%x : tensor<2x?xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
    mapexpr.op "reduce_sum_init" outs(%s : tensor<2x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%s : tensor<2x1xf32>) ins(%e : tensor<2x?xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.anchored %y : tensor<2x?xf32> attributes {dims = [#sched.injective<2>, #sched.injective<4099>]} {
    mapexpr.op "divide" outs(%y : tensor<2x?xf32>) ins(%e, %s : tensor<2x?xf32>, tensor<2x1xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, 0]>]}
  }
  mapexpr.return %y : tensor<2x?xf32>
}
