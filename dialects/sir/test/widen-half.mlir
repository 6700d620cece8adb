// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-widen-half))' --split-input-file | FileCheck %s

// A half softmax-like row sum: the input widened once where the body starts, the reduction
// accumulated in float32, the output rounded to half once, under the frontend's name. What
// the framework stores in half is marked `stored_as` (an input, an operator's result: named
// by the frontend), the steps inside an operator are not (sotc-sir-store-half reads it).
// CHECK-LABEL: sir.subgraph @row_sum
// CHECK:      %[[X:.*]] = sir.prim cast(%arg0) {stored_as = f16} : (tensor<4x8xf16>) -> tensor<4x8xf32>
// CHECK:      %[[E:.*]] = sir.prim exp(%[[X]]) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:      %[[S:.*]] = sir.prim reduce_sum(%[[E]]) {axes = array<i64: 1>, keepdim = false} : (tensor<4x8xf32>) -> tensor<4xf32>
// CHECK:      %[[T:.*]] = sir.prim broadcast_to(%[[S]]) {shape = array<i64: 8, 4>, stored_as = f16} : (tensor<4xf32>) -> tensor<8x4xf32>
// CHECK:      %[[R:.*]] = sir.prim cast(%[[T]]) {name = "var_3"} : (tensor<8x4xf32>) -> tensor<8x4xf16>
// CHECK-NOT:  f16
// CHECK:      sir.output %[[R]] : tensor<8x4xf16>
sir.subgraph @row_sum(%x: tensor<4x8xf16>) -> tensor<8x4xf16> {
  %0 = sir.prim exp(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %1 = sir.prim reduce_sum(%0) {axes = array<i64: 1>, keepdim = false} : (tensor<4x8xf16>) -> tensor<4xf16>
  %2 = sir.prim broadcast_to(%1) {shape = array<i64: 8, 4>, name = "var_3"} : (tensor<4xf16>) -> tensor<8x4xf16>
  sir.output %2 : tensor<8x4xf16>
}

// -----

// A cast to bfloat16 the program asks for keeps its rounding, and is returned as it is (no
// second rounding); a comparison of halves reads the widened values; a float32 result of
// half operands is computed from them directly.
// CHECK-LABEL: sir.subgraph @casts
// CHECK:      %[[Y:.*]] = sir.prim cast(%arg0) {name = "var_1"} : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK-NEXT: %[[W:.*]] = sir.prim cast(%[[Y]]) {stored_as = bf16} : (tensor<4xbf16>) -> tensor<4xf32>
// CHECK-NEXT: %[[L:.*]] = sir.prim less_than(%[[W]], %[[W]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT: %[[B:.*]] = sir.prim cast(%[[W]]) : (tensor<4xf32>) -> tensor<4xf64>
// CHECK-NEXT: sir.output %[[L]], %[[B]], %[[Y]]
sir.subgraph @casts(%x: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xf64>, tensor<4xbf16>) {
  %0 = sir.prim cast(%x) {name = "var_1"} : (tensor<4xf32>) -> tensor<4xbf16>
  %1 = sir.prim less_than(%0, %0) : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xi1>
  %2 = sir.prim cast(%0) : (tensor<4xbf16>) -> tensor<4xf64>
  sir.output %1, %2, %0 : tensor<4xi1>, tensor<4xf64>, tensor<4xbf16>
}

// -----

// An index_copy only moves values: it stays in half on every target, so a half KV cache (a
// state argument) is written as it is (in place, later) and its computed source is rounded to
// half once, as the framework stores it; what reads the new cache widens it.
// CHECK-LABEL: sir.subgraph @half_cache
// CHECK:      %[[K:.*]] = sir.prim cast(%arg2) {stored_as = f16} : (tensor<1x2x1x4xf16>) -> tensor<1x2x1x4xf32>
// CHECK:      %[[E:.*]] = sir.prim exp(%[[K]]) : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
// CHECK-NEXT: %[[H:.*]] = sir.prim cast(%[[E]]) : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf16>
// CHECK-NEXT: %[[C:.*]] = sir.prim index_copy(%arg0, %arg1, %[[H]]) {axis = 2 : i64} : (tensor<1x2x8x4xf16>, tensor<1xi64>, tensor<1x2x1x4xf16>) -> tensor<1x2x8x4xf16>
// CHECK-NEXT: %[[CW:.*]] = sir.prim cast(%[[C]]) {stored_as = f16} : (tensor<1x2x8x4xf16>) -> tensor<1x2x8x4xf32>
// CHECK-NEXT: sir.prim add(%[[CW]], %[[CW]])
// CHECK:      sir.output %[[C]]
sir.subgraph @half_cache(%cache: tensor<1x2x8x4xf16> {sir.name = "cache", sir.weight, sir.state}, %pos: tensor<1xi64>, %k: tensor<1x2x1x4xf16>) -> (tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16>) {
  %0 = sir.prim exp(%k) : (tensor<1x2x1x4xf16>) -> tensor<1x2x1x4xf16>
  %1 = sir.prim index_copy(%cache, %pos, %0) {axis = 2 : i64} : (tensor<1x2x8x4xf16>, tensor<1xi64>, tensor<1x2x1x4xf16>) -> tensor<1x2x8x4xf16>
  %2 = sir.prim add(%1, %1) : (tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16>) -> tensor<1x2x8x4xf16>
  sir.output %1, %2 : tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16>
}
