// sotc-convert-index-copy-to-step: every index_copy group becomes a mapexpr.index_copy step;
// in place where it writes a state weight of the entry subgraph that nothing else reads (a
// KV cache), or the result of such a step (the next update of the same cache).
// RUN: sotc-opt %s --split-input-file --pass-pipeline="builtin.module(sir.subgraph(sotc-convert-index-copy-to-step))" | FileCheck %s

// A decode step's cache update: the keys of one new position into a [1, 2, 8, 4] cache. The
// step writes the state's buffer, and the attention reads the step's result (that buffer);
// a second update of the same cache stays in place.
// CHECK-LABEL: sir.subgraph @decode
// CHECK-NEXT:    %[[K:.*]] = mapexpr.index_copy "index_copy_0"(%arg0, %arg1, %arg2) {axis = 2 : i64, in_place, names = ["keys"]} : (tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
// CHECK-NEXT:    %[[K2:.*]] = mapexpr.index_copy "index_copy_1"(%[[K]], %arg1, %arg2) {axis = 2 : i64, in_place, names = [""]}
// CHECK-NEXT:    %[[R:.*]] = sir.prim reduce_sum(%[[K2]])
// CHECK-NEXT:    sir.output %[[R]], %[[K2]]
sir.subgraph @decode(%cache: tensor<1x2x8x4xf32> {sir.name = "cache", sir.weight, sir.state}, %pos: tensor<1xi64> {sir.name = "pos"}, %k: tensor<1x2x1x4xf32> {sir.name = "k"}) -> (tensor<1x2x1x1xf32>, tensor<1x2x8x4xf32>) {
  %0 = sir.group "index_copy_0" "injective"(%cache, %pos, %k) : (tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32> {
  ^bb0(%a: tensor<1x2x8x4xf32>, %b: tensor<1xi64>, %c: tensor<1x2x1x4xf32>):
    %y = sir.prim index_copy(%a, %b, %c) {axis = 2 : i64, name = "keys"} : (tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
    sir.yield %y : tensor<1x2x8x4xf32>
  }
  %1 = sir.group "index_copy_1" "injective"(%0, %pos, %k) : (tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32> {
  ^bb0(%a: tensor<1x2x8x4xf32>, %b: tensor<1xi64>, %c: tensor<1x2x1x4xf32>):
    %y = sir.prim index_copy(%a, %b, %c) {axis = 2 : i64} : (tensor<1x2x8x4xf32>, tensor<1xi64>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
    sir.yield %y : tensor<1x2x8x4xf32>
  }
  %2 = sir.prim reduce_sum(%1) {axes = array<i64: 2, 3>, keepdim = true} : (tensor<1x2x8x4xf32>) -> tensor<1x2x1x1xf32>
  sir.output %2, %1 : tensor<1x2x1x1xf32>, tensor<1x2x8x4xf32>
}

// -----

// Not in place: a plain input (the caller's tensor), a weight that is not state (threads
// share it), and a state the program also reads as it was (the old cache is still needed).
// CHECK-LABEL: sir.subgraph @copies
// CHECK-NEXT:    mapexpr.index_copy "index_copy_0"(%arg0, %arg3, %arg4) {axis = 0 : i64, names = [""]}
// CHECK-NEXT:    mapexpr.index_copy "index_copy_1"(%arg1, %arg3, %arg4) {axis = 0 : i64, names = [""]}
// CHECK-NEXT:    mapexpr.index_copy "index_copy_2"(%arg2, %arg3, %arg4) {axis = 0 : i64, names = [""]}
// CHECK-NOT:     in_place
sir.subgraph @copies(%x: tensor<4x3xf32> {sir.name = "x"}, %w: tensor<4x3xf32> {sir.name = "w", sir.weight}, %s: tensor<4x3xf32> {sir.name = "s", sir.weight, sir.state}, %i: tensor<2xi64> {sir.name = "i"}, %v: tensor<2x3xf32> {sir.name = "v"}) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = sir.group "index_copy_0" "injective"(%x, %i, %v) : (tensor<4x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>, %b: tensor<2xi64>, %c: tensor<2x3xf32>):
    %y = sir.prim index_copy(%a, %b, %c) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
    sir.yield %y : tensor<4x3xf32>
  }
  %1 = sir.group "index_copy_1" "injective"(%w, %i, %v) : (tensor<4x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>, %b: tensor<2xi64>, %c: tensor<2x3xf32>):
    %y = sir.prim index_copy(%a, %b, %c) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
    sir.yield %y : tensor<4x3xf32>
  }
  %2 = sir.group "index_copy_2" "injective"(%s, %i, %v) : (tensor<4x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<4x3xf32>, %b: tensor<2xi64>, %c: tensor<2x3xf32>):
    %y = sir.prim index_copy(%a, %b, %c) {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
    sir.yield %y : tensor<4x3xf32>
  }
  sir.output %0, %1, %2, %s : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}
