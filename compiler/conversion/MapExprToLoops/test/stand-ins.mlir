// A module with a static dimension of 4099 holds s0 as the next prime (its sched.stand_ins,
// sotc-choose-stand-ins): each pass run alone reads the module's stand-ins, so 4111 is s0 and
// the 4099 columns stay a static loop.
// RUN: sotc-opt %s --pass-pipeline='builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cpu}), sotc-convert-mapexpr-to-loops{target=cpu})' | FileCheck %s
// Without them, 4111 is no size of s0 at the first stand-ins: the anchor's space disagrees.
// RUN: sed 's/attributes {sched.stand_ins = .*} {/{/' %s | not sotc-opt 2>&1 | FileCheck %s --check-prefix=FIRST

// CHECK-LABEL: func.func @row_sums
// CHECK-SAME: (%[[ROWS:[^:]*]]: index, %{{.*}}: memref<4111x1xf32>, %[[X:[^:]*]]: memref<4111x4099xf32>)
// CHECK-SAME: attributes {sched.grid = #sched.size<"s0">}
// CHECK: scf.forall (%{{.*}}) in (4111)
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4099{{.*}} step
// CHECK-NOT: %[[ROWS]]
// CHECK: memref.load %[[X]]
// FIRST: error: 'mapexpr.anchored' op schedule dim 0 has size 4111, the iteration space 4099
module attributes {sched.stand_ins = array<i64: 4111, 4127, 4129, 4133, 4139, 4153, 4157, 4159>} {
  mapexpr.kernel @row_sums(%x: tensor<?x4099xf32> {mapexpr.name = "x"}) -> tensor<?x1xf32> {
    %s = mapexpr.tensor "s" : tensor<?x1xf32>
    mapexpr.anchored %x : tensor<?x4099xf32> attributes {dims = [#sched.injective<4111>, #sched.reduced<4099>]} {
      mapexpr.op "reduce_sum_init" outs(%s : tensor<?x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
      mapexpr.op "reduce_sum_acc" outs(%s : tensor<?x1xf32>) ins(%x : tensor<?x4099xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
    }
    mapexpr.return %s : tensor<?x1xf32>
  }
}
