// The sir dialect prints and parses back to the same IR.
// RUN: sotc-opt %s | FileCheck %s
// RUN: sotc-opt %s | sotc-opt | FileCheck %s
// RUN: sotc-opt --mlir-print-op-generic %s | sotc-opt | FileCheck %s

// CHECK-LABEL: sir.subgraph @SIR_0(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[A:.*]] = sir.call "operator" "__add__"(%arg0, %arg1) {args = [#sir.arg<0>, #sir.arg<1>], kwargs = [], op = "__add__"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[B:.*]] = sir.call "api" "paddle.add"(%[[A]]) {args = [#sir.arg<0>, 1], kwargs = [], op = "paddle.add"}
// CHECK: sir.output %[[B]] : tensor<2x3xf32>
sir.subgraph @SIR_0(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = sir.call "operator" "__add__"(%x, %y) {op = "__add__", args = [#sir.arg<0>, #sir.arg<1>], kwargs = []}
      : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("prog.py":7:0)
  %1 = sir.call "api" "paddle.add"(%0) {op = "paddle.add", args = [#sir.arg<0>, 1 : i64], kwargs = []}
      : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("prog.py":8:0)
  sir.output %1 : tensor<2x3xf32>
}

// Every kind of Python argument value.
// CHECK-LABEL: sir.subgraph @SIR_1
// CHECK: args = [#sir.arg<0>, #sir.tuple<[#sir.slice<1 : i64, #sir.none, 2 : i64>, #sir.ellipsis, #sir.none]>]
// CHECK-SAME: kwargs = [#sir.kw<"axis", [0, -1]>, #sir.kw<"keepdim", true>, #sir.kw<"dtype", #sir.ref<"paddle.float16">>, #sir.kw<"eps", 1.000000e-05 : f64>, #sir.kw<"mode", "up">]
// CHECK: sir.call "method" "sum"(%{{.*}}) {args = [#sir.arg<0>], kwargs = [], op = "Tensor.sum"} : (tensor<?x4xf32>) -> tensor<f32>
sir.subgraph @SIR_1(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<f32>) {
  %0 = sir.call "api" "custom"(%x) {op = "custom", args = [#sir.arg<0>, #sir.tuple<[#sir.slice<1 : i64, #sir.none, 2 : i64>, #sir.ellipsis, #sir.none]>],
      kwargs = [#sir.kw<"axis", [0, -1]>, #sir.kw<"keepdim", true>, #sir.kw<"dtype", #sir.ref<"paddle.float16">>,
                #sir.kw<"eps", 1.0e-5 : f64>, #sir.kw<"mode", "up">]} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = sir.call "method" "sum"(%x) {op = "Tensor.sum", args = [#sir.arg<0>], kwargs = []} : (tensor<?x4xf32>) -> tensor<f32>
  sir.output %0, %1 : tensor<?x4xf32>, tensor<f32>
}

// A subgraph may return nothing (all its work is a side effect of a later segment).
// CHECK-LABEL: sir.subgraph @SIR_2()
// CHECK-NEXT: sir.output
sir.subgraph @SIR_2() {
  sir.output
}

// Primitives (after sotc-sir-decompose): strict operands, attributes per primitive.
// CHECK-LABEL: sir.subgraph @SIR_3
// CHECK: %[[Z:.*]] = sir.prim fill_constant() {shape = array<i64>, value = 0.000000e+00 : f64} : () -> tensor<f32>
// CHECK: %[[B:.*]] = sir.prim broadcast_to(%[[Z]]) {shape = array<i64: 4, 8>} : (tensor<f32>) -> tensor<4x8xf32>
// CHECK: sir.prim max(%arg0, %[[B]]) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: sir.prim reduce_sum(%{{.*}}) {axes = array<i64: 1>, keepdim = true}
sir.subgraph @SIR_3(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %0 = sir.prim fill_constant() {value = 0.0 : f64, shape = array<i64>} : () -> tensor<f32>
  %1 = sir.prim broadcast_to(%0) {shape = array<i64: 4, 8>} : (tensor<f32>) -> tensor<4x8xf32>
  %2 = sir.prim max(%x, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = sir.prim reduce_sum(%2) {axes = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  sir.output %3 : tensor<4x1xf32>
}
