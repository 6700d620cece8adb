// The mesh attribute replays its steps through the algebra: each broken rule is an error.
// RUN: sotc-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{padding [4, 5] would shrink dim 1 from 6 to 5}}
module attributes {m = #sched.mesh<[#sched.injective<4>, #sched.reduced<6>], [#sched.padding<[4, 5]>]>} {}

// -----

// expected-error @+1 {{reshape [5, 5] has 25 elements, the mesh [4, 6] has 24}}
module attributes {m = #sched.mesh<[#sched.injective<4>, #sched.reduced<6>], [#sched.reshape<[5, 5]>]>} {}

// -----

// expected-error @+1 {{transpose [0, 0] is not a permutation}}
module attributes {m = #sched.mesh<[#sched.injective<4>, #sched.reduced<6>], [#sched.transpose<[0, 0]>]>} {}

// -----

// expected-error @+1 {{mesh steps must be #sched.reshape, #sched.transpose, #sched.padding or #sched.round_up}}
module attributes {m = #sched.mesh<[#sched.injective<4>], [#sched.injective<4>]>} {}

// -----

// expected-error @+2 {{expected ::sotc::sched::LoopKind to be one of: S0x, S0y, S0z, S1x, S1y, S1z, Temporal, Vectorize, Unroll}}
// expected-error @+1 {{failed to parse Sched_LoopAttr parameter 'kind'}}
module attributes {l = #sched.loop<S2x, 4>} {}

// -----

// expected-error @+1 {{loop size must not be negative, not -1}}
module attributes {l = #sched.loop<Temporal, -1>} {}

// -----

// expected-error @+1 {{round-up padding of rank 1 does not fit a rank-2 mesh}}
module attributes {m = #sched.mesh<[#sched.injective<4>, #sched.reduced<6>], [#sched.round_up<[32]>]>} {}

// -----

// A module's target is cuda or cpu, as #sched.target, on the module itself.
// expected-error @+2 {{a target is cuda or cpu, not 'tpu'}}
// expected-error @+1 {{failed to parse Sched_TargetAttr parameter 'target'}}
module attributes {sched.target = #sched.target<tpu>} {}

// -----

// expected-error @+1 {{sched.target must be a #sched.target}}
module attributes {sched.target = "cpu"} {}

// -----

module {
  // expected-error @+1 {{sched.target belongs on a module}}
  func.func @f() attributes {sched.target = #sched.target<cpu>} {
    return
  }
}
