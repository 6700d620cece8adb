// sotc-convert-nonzero-to-step: every nonzero group becomes a mapexpr.nonzero step, which the
// runtime runs in one pass over its input; other groups stay. A nonzero with company in its
// group (sotc-sir-fuse never makes one) and a nonzero of a dynamic shape are errors.
// RUN: sotc-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(sir.subgraph(sotc-convert-nonzero-to-step))" | FileCheck %s

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

sir.subgraph @dynamic(%x: tensor<?xf32> {sir.name = "x"}) -> (tensor<5x1xi64>) {
  %0 = sir.group "nonzero_0" "injective"(%x) : (tensor<?xf32>) -> tensor<5x1xi64> {
  ^bb0(%a: tensor<?xf32>):
    // expected-error @+1 {{nonzero takes a tensor of static shape to i64 [size, its rank], with a fill value}}
    %y = sir.prim nonzero(%a) {value = 0.0 : f64} : (tensor<?xf32>) -> tensor<5x1xi64>
    sir.yield %y : tensor<5x1xi64>
  }
  sir.output %0 : tensor<5x1xi64>
}
