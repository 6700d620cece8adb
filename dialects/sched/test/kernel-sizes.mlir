// A lowered kernel over dynamic sizes carries its grid, the sizes it takes and its dynamic
// shared memory as sched attributes: #sched.size round-trips in its one text form, and each
// attribute is checked where it sits.
// RUN: sotc-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @kernel
// CHECK-SAME: sched.dynamic_shared_bytes = #sched.size<"1024*s0">
// CHECK-SAME: sched.grid = #sched.size<"64*s0*s1^2">
// CHECK-SAME: sched.sizes = array<i64: 0, 1>
func.func @kernel(%s0: index, %s1: index) attributes {
    sched.grid = #sched.size<"64*s0*s1^2">, sched.sizes = array<i64: 0, 1>,
    sched.dynamic_shared_bytes = #sched.size<"1024*s0">} {
  return
}

// -----

// CHECK-LABEL: func.func @static_and_alone
// CHECK-SAME: sched.grid = #sched.size<"8">
// CHECK-SAME: sched.sizes = array<i64: 3>
func.func @static_and_alone(%s3: index) attributes {sched.grid = #sched.size<"8">,
                                                    sched.sizes = array<i64: 3>} {
  return
}

// -----

// expected-error @+2 {{a size is a number times powers of s0..s7 ("64*s0*s1^2"), not 's0*s0'}}
// expected-error @+1 {{failed to parse Sched_SizeAttr parameter 'size'}}
func.func @twice() attributes {sched.grid = #sched.size<"s0*s0">} { return }

// -----

// expected-error @+2 {{a size is a number times powers of s0..s7 ("64*s0*s1^2"), not '4*s8'}}
// expected-error @+1 {{failed to parse Sched_SizeAttr parameter 'size'}}
func.func @no_such_size() attributes {sched.grid = #sched.size<"4*s8">} { return }

// -----

// expected-error @+1 {{sched.grid must be a #sched.size}}
func.func @text() attributes {sched.grid = "24*s0"} { return }

// -----

// expected-error @+1 {{sched.sizes must list sizes 0 to 7 in increasing order (array<i64: 0, 1>)}}
func.func @unordered() attributes {sched.sizes = array<i64: 1, 0>} { return }

// -----

// expected-error @+1 {{sched.sizes must list sizes 0 to 7 in increasing order (array<i64: 0, 1>)}}
func.func @past_the_last() attributes {sched.sizes = array<i64: 8>} { return }

// -----

// expected-error @+1 {{sched.dynamic_shared_bytes belongs on a kernel function}}
module attributes {sched.dynamic_shared_bytes = #sched.size<"4*s0">} {}
