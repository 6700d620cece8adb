// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-store-half))' --split-input-file | FileCheck %s

// A half value between two kernels (`stored_as`, an operator's result): rounded where its
// group computes it, widened where the reader's body starts; the reader computes in float32.
// CHECK-LABEL: sir.subgraph @between_kernels
// CHECK:       %[[P:.*]] = sir.group "exp_0" "injective"(%arg0) : (tensor<8xf16>) -> tensor<8xf16>
// CHECK:         %[[E:.*]] = sir.prim exp(%{{.*}}) {name = "var_1", stored_as = f16}
// CHECK-NEXT:    %[[H:.*]] = sir.prim cast(%[[E]]) {name = "var_1_half"} : (tensor<8xf32>) -> tensor<8xf16>
// CHECK:         sir.yield %[[H]] : tensor<8xf16>
// CHECK:       sir.group "sin_1" "injective"(%[[P]]) : (tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:  ^bb0(%[[A:.*]]: tensor<8xf16>):
// CHECK-NEXT:    %[[W:.*]] = sir.prim cast(%[[A]]) {name = "var_1_half_wide"} : (tensor<8xf16>) -> tensor<8xf32>
// CHECK-NEXT:    sir.prim sin(%[[W]])
sir.subgraph @between_kernels(%x: tensor<8xf16>) -> tensor<8xf16> {
  %0 = sir.group "exp_0" "injective"(%x) : (tensor<8xf16>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf16>):
    %w = sir.prim cast(%a) {name = "cast_0", stored_as = f16} : (tensor<8xf16>) -> tensor<8xf32>
    %e = sir.prim exp(%w) {name = "var_1", stored_as = f16} : (tensor<8xf32>) -> tensor<8xf32>
    sir.yield %e : tensor<8xf32>
  }
  %1 = sir.group "sin_1" "injective"(%0) : (tensor<8xf32>) -> tensor<8xf16> {
  ^bb0(%b: tensor<8xf32>):
    %s = sir.prim sin(%b) {name = "sin_1", stored_as = f16} : (tensor<8xf32>) -> tensor<8xf32>
    %r = sir.prim cast(%s) {name = "var_2"} : (tensor<8xf32>) -> tensor<8xf16>
    sir.yield %r : tensor<8xf16>
  }
  sir.output %1 : tensor<8xf16>
}

// -----

// Left in float32: a step inside one operator (no `stored_as`: a mean's sum may not fit in
// half), a value a matmul group reads (a GEMM library reads float32 as it is) and one a
// concat reads (from memory, beside operands of its own type).
// CHECK-LABEL: sir.subgraph @kept
// CHECK-NOT:   xf16>
// CHECK:       sir.group "reduce_sum_0" "reduction"(%arg0) : (tensor<4x8xf32>) -> tensor<4xf32>
// CHECK:       sir.group "exp_1" "injective"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK:       sir.group "tanh_2" "injective"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NOT:   xf16>
sir.subgraph @kept(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>, tensor<8x8xf32>) {
  %0 = sir.group "reduce_sum_0" "reduction"(%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %s = sir.prim reduce_sum(%a) {axes = array<i64: 1>, keepdim = false, name = "reduce_sum_0"} : (tensor<4x8xf32>) -> tensor<4xf32>
    sir.yield %s : tensor<4xf32>
  }
  %1 = sir.group "divide_3" "injective"(%0) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %d = sir.prim divide(%a, %a) {name = "divide_3", stored_as = f16} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    sir.yield %d : tensor<4xf32>
  }
  %2 = sir.group "exp_1" "injective"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %e = sir.prim exp(%a) {name = "exp_1", stored_as = f16} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    sir.yield %e : tensor<4x8xf32>
  }
  %3 = sir.group "matmul_4" "matmul"(%2, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>):
    %m = sir.prim matmul(%a, %b) {name = "matmul_4"} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    sir.yield %m : tensor<4x8xf32>
  }
  %4 = sir.group "tanh_2" "injective"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %t = sir.prim tanh(%a) {name = "tanh_2", stored_as = f16} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    sir.yield %t : tensor<4x8xf32>
  }
  %5 = sir.group "concat_5" "injective"(%4, %y) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    %c = sir.prim concat(%a, %b) {axis = 0, name = "concat_5"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    sir.yield %c : tensor<8x8xf32>
  }
  sir.output %1, %3, %5 : tensor<4xf32>, tensor<4x8xf32>, tensor<8x8xf32>
}

// -----

// A concat that is a kernel of its own stores float32 (a rounding inside it would fuse it with
// a cast), read by a kernel that takes half values.
// CHECK-LABEL: sir.subgraph @lone_concat
// CHECK:       sir.group "concat_0" "injective"(%arg0, %arg0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    sir.prim concat
// CHECK-NEXT:    sir.yield %{{.*}} : tensor<8x8xf32>
// CHECK:       sir.group "exp_1" "injective"(%{{.*}}) : (tensor<8x8xf32>) -> tensor<8x8xf16>
sir.subgraph @lone_concat(%x: tensor<4x8xf32>) -> tensor<8x8xf16> {
  %0 = sir.group "concat_0" "injective"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>):
    %c = sir.prim concat(%a, %b) {axis = 0, name = "concat_0", stored_as = f16} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    sir.yield %c : tensor<8x8xf32>
  }
  %1 = sir.group "exp_1" "injective"(%0) : (tensor<8x8xf32>) -> tensor<8x8xf16> {
  ^bb0(%a: tensor<8x8xf32>):
    %e = sir.prim exp(%a) {name = "exp_1", stored_as = f16} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %r = sir.prim cast(%e) {name = "var_2"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
    sir.yield %r : tensor<8x8xf16>
  }
  sir.output %1 : tensor<8x8xf16>
}

// -----

// A layout primitive moves the half values as they are (a window reads its operand from
// memory); its result is widened after it.
// CHECK-LABEL: sir.subgraph @moved
// CHECK:       sir.group "transpose_1" "injective"(%{{.*}}) : (tensor<4x8xbf16>) -> tensor<8x4xf32>
// CHECK-NEXT:  ^bb0(%[[A:.*]]: tensor<4x8xbf16>):
// CHECK-NEXT:    %[[T:.*]] = sir.prim transpose(%[[A]]) {name = "transpose_1", perm = array<i64: 1, 0>} : (tensor<4x8xbf16>) -> tensor<8x4xbf16>
// CHECK-NEXT:    %[[W:.*]] = sir.prim cast(%[[T]]) {name = "transpose_1_wide"} : (tensor<8x4xbf16>) -> tensor<8x4xf32>
// CHECK-NEXT:    sir.prim exp(%[[W]])
sir.subgraph @moved(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = sir.group "sin_0" "injective"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %s = sir.prim sin(%a) {name = "sin_0", stored_as = bf16} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    sir.yield %s : tensor<4x8xf32>
  }
  %1 = sir.group "transpose_1" "injective"(%0) : (tensor<4x8xf32>) -> tensor<8x4xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %t = sir.prim transpose(%a) {name = "transpose_1", perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
    %e = sir.prim exp(%t) {name = "exp_2"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    sir.yield %e : tensor<8x4xf32>
  }
  sir.output %1 : tensor<8x4xf32>
}

// -----

// A widened value is stored as the half value it widens; a half argument the group only
// widens is stored by a kernel of its own computing (a kernel returns what it computes).
// CHECK-LABEL: sir.subgraph @widened
// CHECK:       sir.group "sin_0" "injective"(%arg0) : (tensor<8xf32>) -> tensor<8xf16>
// CHECK:         %[[H:.*]] = sir.prim cast(%{{.*}}) {name = "var_1"} : (tensor<8xf32>) -> tensor<8xf16>
// CHECK-NEXT:    %[[W:.*]] = sir.prim cast(%[[H]]) {stored_as = f16} : (tensor<8xf16>) -> tensor<8xf32>
// CHECK-NEXT:    sir.yield %[[H]] : tensor<8xf16>
// CHECK:       sir.group "cast_1" "injective"(%arg1) : (tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:  ^bb0(%[[A:.*]]: tensor<8xf16>):
// CHECK-NEXT:    %[[C:.*]] = sir.prim cast(%[[A]]) {name = "cast_1", stored_as = f16}
// CHECK-NEXT:    %[[R:.*]] = sir.prim cast(%[[C]]) {name = "cast_1_half"} : (tensor<8xf32>) -> tensor<8xf16>
// CHECK-NEXT:    sir.yield %[[R]] : tensor<8xf16>
sir.subgraph @widened(%x: tensor<8xf32>, %y: tensor<8xf16>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = sir.group "sin_0" "injective"(%x) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %s = sir.prim sin(%a) {name = "sin_0"} : (tensor<8xf32>) -> tensor<8xf32>
    %h = sir.prim cast(%s) {name = "var_1"} : (tensor<8xf32>) -> tensor<8xf16>
    %w = sir.prim cast(%h) {stored_as = f16} : (tensor<8xf16>) -> tensor<8xf32>
    sir.yield %w : tensor<8xf32>
  }
  %1 = sir.group "cast_1" "injective"(%y) : (tensor<8xf16>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf16>):
    %c = sir.prim cast(%a) {name = "cast_1", stored_as = f16} : (tensor<8xf16>) -> tensor<8xf32>
    sir.yield %c : tensor<8xf32>
  }
  %2:2 = sir.group "exp_2" "injective"(%0, %1) : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%a: tensor<8xf32>, %b: tensor<8xf32>):
    %e = sir.prim exp(%a) {name = "exp_2"} : (tensor<8xf32>) -> tensor<8xf32>
    %f = sir.prim exp(%b) {name = "exp_3"} : (tensor<8xf32>) -> tensor<8xf32>
    sir.yield %e, %f : tensor<8xf32>, tensor<8xf32>
  }
  sir.output %2#0, %2#1 : tensor<8xf32>, tensor<8xf32>
}
