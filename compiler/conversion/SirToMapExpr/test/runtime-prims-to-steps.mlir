// sotc-convert-runtime-prims-to-steps: every nonzero group becomes a mapexpr.nonzero step (the
// runtime's pass over its input), every nms group a mapexpr.nms step (its greedy loop), every
// argsort group a mapexpr.argsort step (a sort of each row); other groups stay. Either with company in its group (sotc-sir-fuse never makes one) is an error.
// RUN: sotc-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(sir.subgraph(sotc-convert-runtime-prims-to-steps))" | FileCheck %s

// nonzero's rows at their bound: the coordinates of a [3, 4] mask's nonzeros, 12 rows.
// CHECK-LABEL: sir.subgraph @rows
// CHECK-NEXT:    %[[N:.*]] = mapexpr.nonzero "nonzero_1"(%arg0) {fill = 0.000000e+00 : f64, names = ["var_2"]} : (tensor<3x4xi1>) -> tensor<12x2xi64>
// CHECK-NEXT:    %[[S:.*]] = sir.group "reduce_sum_2"
// CHECK:         sir.output %[[N]], %[[S]]
sir.subgraph @rows(%m: tensor<3x4xi1> {sir.name = "m"}) -> (tensor<12x2xi64>, tensor<i64>) {
  %0 = sir.group "nonzero_1" "injective"(%m) : (tensor<3x4xi1>) -> tensor<12x2xi64> {
  ^bb0(%a: tensor<3x4xi1>):
    %y = sir.prim nonzero(%a) {value = 0.0 : f64, name = "var_2"} : (tensor<3x4xi1>) -> tensor<12x2xi64>
    sir.yield %y : tensor<12x2xi64>
  }
  %1 = sir.group "reduce_sum_2" "reduction"(%m) : (tensor<3x4xi1>) -> tensor<i64> {
  ^bb0(%a: tensor<3x4xi1>):
    %c = sir.prim cast(%a) {dtype = "int64"} : (tensor<3x4xi1>) -> tensor<3x4xi64>
    %s = sir.prim reduce_sum(%c) {axes = array<i64: 0, 1>, keepdim = false} : (tensor<3x4xi64>) -> tensor<i64>
    sir.yield %s : tensor<i64>
  }
  sir.output %0, %1 : tensor<12x2xi64>, tensor<i64>
}

// -----

// torch.nonzero_static(x, size=2, fill_value=-1): the first two rows, -1 after.
// CHECK-LABEL: sir.subgraph @first_two
// CHECK-NEXT:    mapexpr.nonzero "nonzero_0"(%arg0) {fill = -1.000000e+00 : f64, names = [""]} : (tensor<5xf32>) -> tensor<2x1xi64>
sir.subgraph @first_two(%x: tensor<5xf32> {sir.name = "x"}) -> (tensor<2x1xi64>) {
  %0 = sir.group "nonzero_0" "injective"(%x) : (tensor<5xf32>) -> tensor<2x1xi64> {
  ^bb0(%a: tensor<5xf32>):
    %y = sir.prim nonzero(%a) {value = -1.0 : f64} : (tensor<5xf32>) -> tensor<2x1xi64>
    sir.yield %y : tensor<2x1xi64>
  }
  sir.output %0 : tensor<2x1xi64>
}

// -----

sir.subgraph @fused(%x: tensor<5xf32> {sir.name = "x"}) -> (tensor<5x1xi64>) {
  // expected-error @+1 {{a nonzero group holds its nonzero and nothing else}}
  %0 = sir.group "nonzero_0" "injective"(%x) : (tensor<5xf32>) -> tensor<5x1xi64> {
  ^bb0(%a: tensor<5xf32>):
    %y = sir.prim nonzero(%a) {value = 0.0 : f64} : (tensor<5xf32>) -> tensor<5x1xi64>
    %z = sir.prim neg(%y) : (tensor<5x1xi64>) -> tensor<5x1xi64>
    sir.yield %z : tensor<5x1xi64>
  }
  sir.output %0 : tensor<5x1xi64>
}

// -----

// nonzero's rows where the mask has a dynamic size (rows another segment counted): as many
// as its elements.
// CHECK-LABEL: sir.subgraph @dynamic
// CHECK-NEXT:    mapexpr.nonzero "nonzero_0"(%arg0) {fill = 0.000000e+00 : f64, names = [""]} : (tensor<?xi1>) -> tensor<?x1xi64>
sir.subgraph @dynamic(%m: tensor<?xi1> {sir.name = "m"}) -> (tensor<?x1xi64>) {
  %0 = sir.group "nonzero_0" "injective"(%m) : (tensor<?xi1>) -> tensor<?x1xi64> {
  ^bb0(%a: tensor<?xi1>):
    %y = sir.prim nonzero(%a) {value = 0.0 : f64} : (tensor<?xi1>) -> tensor<?x1xi64>
    sir.yield %y : tensor<?x1xi64>
  }
  sir.output %0 : tensor<?x1xi64>
}

// -----

// torchvision.ops.nms(boxes, scores, 0.5): the kept indices, then -1.
// CHECK-LABEL: sir.subgraph @suppressed
// CHECK-NEXT:    mapexpr.nms "nms_0"(%arg0, %arg1) {iou_threshold = 5.000000e-01 : f64, names = ["keep"]} : (tensor<6x4xf32>, tensor<6xf32>) -> tensor<6xi64>
sir.subgraph @suppressed(%b: tensor<6x4xf32> {sir.name = "b"}, %s: tensor<6xf32> {sir.name = "s"}) -> (tensor<6xi64>) {
  %0 = sir.group "nms_0" "injective"(%b, %s) : (tensor<6x4xf32>, tensor<6xf32>) -> tensor<6xi64> {
  ^bb0(%x: tensor<6x4xf32>, %y: tensor<6xf32>):
    %k = sir.prim nms(%x, %y) {value = 0.5 : f64, name = "keep"} : (tensor<6x4xf32>, tensor<6xf32>) -> tensor<6xi64>
    sir.yield %k : tensor<6xi64>
  }
  sir.output %0 : tensor<6xi64>
}

// -----

sir.subgraph @wrong(%b: tensor<6x3xf32> {sir.name = "b"}, %s: tensor<6xf32> {sir.name = "s"}) -> (tensor<6xi64>) {
  %0 = sir.group "nms_0" "injective"(%b, %s) : (tensor<6x3xf32>, tensor<6xf32>) -> tensor<6xi64> {
  ^bb0(%x: tensor<6x3xf32>, %y: tensor<6xf32>):
    // expected-error @+1 {{nms takes boxes [N, 4] and scores [N] of one float type to i64 [N], with an IoU threshold}}
    %k = sir.prim nms(%x, %y) {value = 0.5 : f64} : (tensor<6x3xf32>, tensor<6xf32>) -> tensor<6xi64>
    sir.yield %k : tensor<6xi64>
  }
  sir.output %0 : tensor<6xi64>
}

// -----

// torch.sort(x, dim=1, descending=True) of long rows: the order from the runtime, the values
// gathered by a kernel after it (a group that stays).
// CHECK-LABEL: sir.subgraph @sorted
// CHECK-NEXT:    %[[O:.*]] = mapexpr.argsort "argsort_0"(%arg0) {axis = 1 : i64, descending = true, names = ["order"]} : (tensor<2x2000xf32>) -> tensor<2x2000xi64>
// CHECK-NEXT:    sir.group "gather_1"
// CHECK:         sir.output
sir.subgraph @sorted(%x: tensor<2x2000xf32> {sir.name = "x"}) -> (tensor<2x2000xi64>, tensor<4000xf32>) {
  %0 = sir.group "argsort_0" "injective"(%x) : (tensor<2x2000xf32>) -> tensor<2x2000xi64> {
  ^bb0(%a: tensor<2x2000xf32>):
    %o = sir.prim argsort(%a) {axis = 1 : i64, descending = true, name = "order"} : (tensor<2x2000xf32>) -> tensor<2x2000xi64>
    sir.yield %o : tensor<2x2000xi64>
  }
  %1 = sir.group "gather_1" "injective"(%x, %0) : (tensor<2x2000xf32>, tensor<2x2000xi64>) -> tensor<4000xf32> {
  ^bb0(%a: tensor<2x2000xf32>, %o: tensor<2x2000xi64>):
    %f = sir.prim reshape(%a) {shape = array<i64: 4000>} : (tensor<2x2000xf32>) -> tensor<4000xf32>
    %i = sir.prim reshape(%o) {shape = array<i64: 4000>} : (tensor<2x2000xi64>) -> tensor<4000xi64>
    %g = sir.prim gather(%f, %i) : (tensor<4000xf32>, tensor<4000xi64>) -> tensor<4000xf32>
    sir.yield %g : tensor<4000xf32>
  }
  sir.output %0, %1 : tensor<2x2000xi64>, tensor<4000xf32>
}

// -----

// An argsort with company in its group.
sir.subgraph @argsort_fused(%x: tensor<3000xf32> {sir.name = "x"}) -> (tensor<3000xi64>) {
  // expected-error @+1 {{an argsort group holds its argsort and nothing else}}
  %0 = sir.group "argsort_0" "injective"(%x) : (tensor<3000xf32>) -> tensor<3000xi64> {
  ^bb0(%a: tensor<3000xf32>):
    %o = sir.prim argsort(%a) {axis = 0 : i64, descending = false} : (tensor<3000xf32>) -> tensor<3000xi64>
    %z = sir.prim neg(%o) : (tensor<3000xi64>) -> tensor<3000xi64>
    sir.yield %z : tensor<3000xi64>
  }
  sir.output %0 : tensor<3000xi64>
}
