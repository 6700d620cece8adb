// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-decompose))' --split-input-file | FileCheck %s

// relu is max against zero; a Python scalar operand is a fill_constant of the operand's
// shape (constants are broadcast and cast when they are made, not by extra primitives).
// CHECK-LABEL: sir.subgraph @relu_add
// CHECK:      %[[S:.*]] = sir.prim sin(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[Z:.*]] = sir.prim fill_constant() {shape = array<i64: 4, 8>, value = 0.000000e+00 : f64} : () -> tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = sir.prim max(%[[S]], %[[Z]])
// CHECK-NEXT: %[[ONE:.*]] = sir.prim fill_constant() {shape = array<i64: 4, 8>, value = 1.500000e+00 : f64}
// CHECK-NEXT: %[[A:.*]] = sir.prim add(%[[R]], %[[ONE]])
// CHECK-NEXT: sir.output %[[A]]
sir.subgraph @relu_add(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = sir.call "api" "paddle.sin"(%x) {op = "paddle.sin", args = [#sir.arg<0>], kwargs = []} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = sir.call "api" "paddle.nn.functional.relu"(%0) {op = "paddle.nn.functional.relu", args = [#sir.arg<0>], kwargs = []} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = sir.call "operator" "__add__"(%1) {op = "__add__", args = [#sir.arg<0>, 1.5], kwargs = []} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  sir.output %2 : tensor<4x8xf32>
}

// -----

// Keyword arguments given out of parameter order still reach the right primitives:
// weight multiplies, bias adds.
// CHECK-LABEL: sir.subgraph @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[B:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>)
// CHECK:      sir.prim reduce_sum(%[[X]]) {axes = array<i64: 1>, keepdim = true}
// CHECK:      sir.prim rsqrt
// CHECK:      %[[WB:.*]] = sir.prim broadcast_to(%[[W]]) {shape = array<i64: 2, 4>}
// CHECK-NEXT: %[[Y:.*]] = sir.prim multiply(%{{.*}}, %[[WB]])
// CHECK-NEXT: %[[BB:.*]] = sir.prim broadcast_to(%[[B]]) {shape = array<i64: 2, 4>}
// CHECK-NEXT: sir.prim add(%[[Y]], %[[BB]])
sir.subgraph @layer_norm(%x: tensor<2x4xf32>, %b: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = sir.call "api" "paddle.nn.functional.layer_norm"(%x, %b, %w) {op = "paddle.nn.functional.layer_norm",
      args = [#sir.arg<0>, [4]], kwargs = [#sir.kw<"bias", #sir.arg<1>>, #sir.kw<"weight", #sir.arg<2>>]}
      : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  sir.output %0 : tensor<2x4xf32>
}

// -----

// Integer division computes in float32; matmul and reductions carry their attributes.
// CHECK-LABEL: sir.subgraph @mixed
// CHECK: %[[C0:.*]] = sir.prim cast(%arg0) : (tensor<3xi32>) -> tensor<3xf32>
// CHECK: %[[C1:.*]] = sir.prim cast(%arg0) : (tensor<3xi32>) -> tensor<3xf32>
// CHECK: sir.prim divide(%[[C0]], %[[C1]])
// CHECK: sir.prim matmul(%arg1, %arg2) {transpose_x = false, transpose_y = true} : (tensor<2x5xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
sir.subgraph @mixed(%i: tensor<3xi32>, %a: tensor<2x5xf32>, %b: tensor<4x5xf32>) -> (tensor<3xf32>, tensor<2x4xf32>) {
  %0 = sir.call "api" "paddle.divide"(%i, %i) {op = "paddle.divide", args = [#sir.arg<0>, #sir.arg<1>], kwargs = []} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xf32>
  %1 = sir.call "api" "paddle.matmul"(%a, %b) {op = "paddle.matmul", args = [#sir.arg<0>, #sir.arg<1>], kwargs = [#sir.kw<"transpose_y", true>]} : (tensor<2x5xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
  sir.output %0, %1 : tensor<3xf32>, tensor<2x4xf32>
}


// -----

// Sizes passed as Python ints are #sir.size: x.view(B, T // 2, 2 * C) of a T taken as 2*s1
// (its half s1), and x[:, 1:] of T positions, T - 1 -- a size the module derives (s2), from
// position 1 up to T (its end, -2).
// CHECK-LABEL: sir.subgraph @sizes
// CHECK: sir.prim reshape(%arg0) {shape = array<i64: -1, -1, 16>} : (tensor<?x?x8xf32, #sir.dims<"s0", "2*s1">>) -> tensor<?x?x16xf32, #sir.dims<"s0", "s1">>
// CHECK: sir.prim slice(%arg1) {axes = array<i64: 1>, ends = array<i64: -2>, starts = array<i64: 1>, steps = array<i64: 1>} : (tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> tensor<?x?x8xf32, #sir.dims<"s0", "s2">>
module attributes {sir.derived_sizes = ["s2=s1-1"]} {
  sir.subgraph @sizes(%x: tensor<?x?x8xf32, #sir.dims<"s0", "2*s1">>, %y: tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> (tensor<?x?x16xf32, #sir.dims<"s0", "s1">>, tensor<?x?x8xf32, #sir.dims<"s0", "s2">>) {
    %0 = sir.call "method" "view"(%x) {args = [#sir.arg<0>, #sir.tuple<[#sir.size<"s0">, #sir.size<"s1">, 16]>], kwargs = [], op = "torch.Tensor.view"} : (tensor<?x?x8xf32, #sir.dims<"s0", "2*s1">>) -> tensor<?x?x16xf32, #sir.dims<"s0", "s1">>
    %1 = sir.call "operator" "__getitem__"(%y) {args = [#sir.arg<0>, #sir.tuple<[#sir.slice<#sir.none, #sir.none, #sir.none>, #sir.slice<1 : i64, #sir.none, #sir.none>]>], kwargs = [], op = "__getitem__"} : (tensor<?x?x8xf32, #sir.dims<"s0", "s1">>) -> tensor<?x?x8xf32, #sir.dims<"s0", "s2">>
    sir.output %0, %1 : tensor<?x?x16xf32, #sir.dims<"s0", "s1">>, tensor<?x?x8xf32, #sir.dims<"s0", "s2">>
  }
}

// -----

// A slice that keeps every element is its operand: x[:, :2] of a [1, 2] tensor is no
// primitive (one would hide x's index from the fused kernel's later readers); x[:, :1] is.
// CHECK-LABEL: sir.subgraph @whole_slice
// CHECK-NOT:  ends = array<i64: 1, 2>
// CHECK:      %[[S:.*]] = sir.prim slice(%arg0) {axes = array<i64: 0, 1>, ends = array<i64: 1, 1>
// CHECK:      sir.output %arg0, %[[S]]
sir.subgraph @whole_slice(%x: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x1xf32>) {
  %0 = sir.call "operator" "__getitem__"(%x) {args = [#sir.arg<0>, #sir.tuple<[#sir.slice<#sir.none, #sir.none, #sir.none>, #sir.slice<#sir.none, 2 : i64, #sir.none>]>], kwargs = [], op = "__getitem__"} : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %1 = sir.call "operator" "__getitem__"(%x) {args = [#sir.arg<0>, #sir.tuple<[#sir.slice<#sir.none, #sir.none, #sir.none>, #sir.slice<#sir.none, 1 : i64, #sir.none>]>], kwargs = [], op = "__getitem__"} : (tensor<1x2xf32>) -> tensor<1x1xf32>
  sir.output %0, %1 : tensor<1x2xf32>, tensor<1x1xf32>
}
