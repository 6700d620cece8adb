// RUN: sotc-opt --sotc-choose-stand-ins --split-input-file --verify-diagnostics %s | FileCheck %s

// The first eight primes from 4099 divide none of the module's static sizes: the module says
// nothing.
// CHECK-LABEL: module {
// CHECK-NOT: sched.stand_ins
func.func @first(%x: tensor<?x4098xf32>) -> tensor<?x4098xf32> {
  return %x : tensor<?x4098xf32>
}

// -----

// A static 4099 and a multiple of 4127: s0 stands in as 4111, s1 as 4129, and so on.
// CHECK: module attributes {sched.stand_ins = array<i64: 4111, 4129, 4133, 4139, 4153, 4157, 4159, 4177>}
func.func @moved(%x: tensor<?x4099xf32>, %y: tensor<12381xf32>) -> tensor<?x4099xf32> {
  return %x : tensor<?x4099xf32>
}

// -----

// Stand-ins the module already names are kept.
// CHECK: module attributes {sched.stand_ins = array<i64: 4127, 4129, 4133, 4139, 4153, 4157, 4159, 4177>}
module attributes {sched.stand_ins = array<i64: 4127, 4129, 4133, 4139, 4153, 4157, 4159, 4177>} {
  func.func @kept(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    return %x : tensor<?x4xf32>
  }
}

// -----

// expected-error @+1 {{sotc-choose-stand-ins: the module's stand-in 4127 divides its static dimension 8254, which would read as a dynamic size}}
module attributes {sched.stand_ins = array<i64: 4127, 4129, 4133, 4139, 4153, 4157, 4159, 4177>} {
  func.func @clash(%x: tensor<?x8254xf32>) -> tensor<?x8254xf32> {
    return %x : tensor<?x8254xf32>
  }
}

// -----

// expected-error @+1 {{sched.stand_ins must be 8 increasing primes from 4099 (array<i64: ...>)}}
module attributes {sched.stand_ins = array<i64: 4099, 4100>} {
}

// -----

func.func @nested() attributes {sched.stand_ins = array<i64: 4111, 4129, 4133, 4139, 4153, 4157, 4159, 4177>} {
  // expected-error @-1 {{sched.stand_ins belongs on a module}}
  return
}
