// A tensor two readers index differently (x[i] against x[j]: a sort's comparisons) is read
// through a second kernel input, and a value computed in the group is recomputed for its
// second reader; a constant only a later stage reads is indexed there.
// RUN: sotc-opt %s --split-input-file --sotc-convert-sir-to-mapexpr | FileCheck %s

// CHECK-LABEL: mapexpr.launch @pairs(%arg0, %arg0)
// CHECK:       mapexpr.kernel @pairs(%arg0: tensor<3x5xf32> {mapexpr.name = "x"}, %arg1: tensor<3x5xf32> {mapexpr.name = "x"})
// CHECK:         mapexpr.op "reshape" {{.*}} ins(%arg0 : tensor<3x5xf32>) {indices = [#mapexpr.index<[i0, i1, 0]>, #mapexpr.index<[i0, i1]>]}
// CHECK:         mapexpr.op "reshape" {{.*}} ins(%arg1 : tensor<3x5xf32>) {indices = [#mapexpr.index<[i0, 0, i2]>, #mapexpr.index<[i0, i2]>]}
sir.subgraph @SIR_0(%x: tensor<3x5xf32> {sir.name = "x"}) -> tensor<3x5xf32> {
  %0 = sir.group "pairs" "reduction"(%x) : (tensor<3x5xf32>) -> tensor<3x5xf32> {
  ^bb0(%v: tensor<3x5xf32>):
    %a = sir.prim reshape(%v) {shape = array<i64: 3, 5, 1>} : (tensor<3x5xf32>) -> tensor<3x5x1xf32>
    %c = sir.prim reshape(%v) {shape = array<i64: 3, 1, 5>} : (tensor<3x5xf32>) -> tensor<3x1x5xf32>
    %ab = sir.prim broadcast_to(%a) {shape = array<i64: 3, 5, 5>} : (tensor<3x5x1xf32>) -> tensor<3x5x5xf32>
    %cb = sir.prim broadcast_to(%c) {shape = array<i64: 3, 5, 5>} : (tensor<3x1x5xf32>) -> tensor<3x5x5xf32>
    %d = sir.prim subtract(%cb, %ab) : (tensor<3x5x5xf32>, tensor<3x5x5xf32>) -> tensor<3x5x5xf32>
    %s = sir.prim reduce_sum(%d) {axes = array<i64: 2>, keepdim = false} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
    sir.yield %s : tensor<3x5xf32>
  }
  sir.output %0 : tensor<3x5xf32>
}

// -----

// exp(x) read at [i] and at [j]: the second reader gets its own exp.
// CHECK-LABEL: mapexpr.launch @computed(%arg0, %arg0)
// CHECK-COUNT-2: mapexpr.op "exp"
sir.subgraph @SIR_0(%x: tensor<3x5xf32> {sir.name = "x"}) -> tensor<3x5xf32> {
  %0 = sir.group "computed" "reduction"(%x) : (tensor<3x5xf32>) -> tensor<3x5xf32> {
  ^bb0(%v: tensor<3x5xf32>):
    %e = sir.prim exp(%v) : (tensor<3x5xf32>) -> tensor<3x5xf32>
    %a = sir.prim reshape(%e) {shape = array<i64: 3, 5, 1>} : (tensor<3x5xf32>) -> tensor<3x5x1xf32>
    %c = sir.prim reshape(%e) {shape = array<i64: 3, 1, 5>} : (tensor<3x5xf32>) -> tensor<3x1x5xf32>
    %ab = sir.prim broadcast_to(%a) {shape = array<i64: 3, 5, 5>} : (tensor<3x5x1xf32>) -> tensor<3x5x5xf32>
    %cb = sir.prim broadcast_to(%c) {shape = array<i64: 3, 5, 5>} : (tensor<3x1x5xf32>) -> tensor<3x5x5xf32>
    %d = sir.prim subtract(%cb, %ab) : (tensor<3x5x5xf32>, tensor<3x5x5xf32>) -> tensor<3x5x5xf32>
    %s = sir.prim reduce_sum(%d) {axes = array<i64: 2>, keepdim = false} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
    sir.yield %s : tensor<3x5xf32>
  }
  sir.output %0 : tensor<3x5xf32>
}

// -----

// m & m.transpose(-1, -2) of a mask cast to bool (HunyuanVideo's text mask): the transpose's
// one reader also reads its input directly, so the transpose gets its own copy of what it
// reads, the cast included, back to a second kernel input; the transpose's original, read by
// nothing then, is not computed.
// CHECK-LABEL: mapexpr.launch @mask_and_transpose(%arg0, %arg0)
// CHECK:         mapexpr.op "cast"
// CHECK-NEXT:    mapexpr.op "broadcast_to"
// CHECK-NEXT:    mapexpr.op "cast"
// CHECK-NEXT:    mapexpr.op "broadcast_to"
// CHECK-NEXT:    mapexpr.op "transpose"
// CHECK-NEXT:    mapexpr.op "logical_and"
sir.subgraph @SIR_0(%m: tensor<1x1x1x4xi64> {sir.name = "m"}) -> tensor<1x1x4x4xi1> {
  %0 = sir.group "mask_and_transpose" "injective"(%m) : (tensor<1x1x1x4xi64>) -> tensor<1x1x4x4xi1> {
  ^bb0(%v: tensor<1x1x1x4xi64>):
    %c = sir.prim cast(%v) : (tensor<1x1x1x4xi64>) -> tensor<1x1x1x4xi1>
    %b = sir.prim broadcast_to(%c) {shape = array<i64: 1, 1, 4, 4>} : (tensor<1x1x1x4xi1>) -> tensor<1x1x4x4xi1>
    %t = sir.prim transpose(%b) {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x1x4x4xi1>) -> tensor<1x1x4x4xi1>
    %a = sir.prim logical_and(%b, %t) : (tensor<1x1x4x4xi1>, tensor<1x1x4x4xi1>) -> tensor<1x1x4x4xi1>
    sir.yield %a : tensor<1x1x4x4xi1>
  }
  sir.output %0 : tensor<1x1x4x4xi1>
}
