// Schedule meshes and loop descriptors print and parse back unchanged.
// RUN: sotc-opt %s | FileCheck %s
// RUN: sotc-opt %s | sotc-opt | FileCheck %s

// CHECK: sched.injective = #sched.mesh<[#sched.injective<10>, #sched.injective<10>], [#sched.reshape<[100]>, #sched.padding<[128]>, #sched.reshape<[1, 128]>]>
// CHECK-SAME: sched.loops = [#sched.loop<S0x, 1>, #sched.loop<S1x, 128>]
// CHECK-SAME: sched.reduction = #sched.mesh<[#sched.injective<32>, #sched.reduced<128>], [#sched.transpose<[0, 1]>, #sched.reshape<[32, 1, 128]>, #sched.transpose<[0, 2, 1]>]>
// Round-up padding to a multiple (0 leaves a dim alone).
// CHECK-SAME: sched.round_up = #sched.mesh<[#sched.injective<100>, #sched.reduced<30>], [#sched.round_up<[0, 32]>, #sched.reshape<[100, 1, 32]>]>
// The module's target.
// CHECK-SAME: sched.target = #sched.target<cpu>
module attributes {
  sched.injective = #sched.mesh<[#sched.injective<10>, #sched.injective<10>],
                                [#sched.reshape<[100]>, #sched.padding<[128]>, #sched.reshape<[1, 128]>]>,
  sched.loops = [#sched.loop<S0x, 1>, #sched.loop<S1x, 128>],
  sched.reduction = #sched.mesh<[#sched.injective<32>, #sched.reduced<128>],
                                [#sched.transpose<[0, 1]>, #sched.reshape<[32, 1, 128]>, #sched.transpose<[0, 2, 1]>]>,
  sched.round_up = #sched.mesh<[#sched.injective<100>, #sched.reduced<30>], [#sched.round_up<[0, 32]>, #sched.reshape<[100, 1, 32]>]>,
  sched.target = #sched.target<cpu>
} {
}
