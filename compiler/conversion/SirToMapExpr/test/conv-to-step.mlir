// sotc-convert-conv-to-step: conv groups become mapexpr.conv steps; a consumer that only adds
// a bias per channel and a residual, then applies relu, relu6 or hardswish, folds into the
// step.
// RUN: sotc-opt %s --split-input-file --pass-pipeline="builtin.module(sir.subgraph(sotc-convert-conv-to-step))" | FileCheck %s
// RUN: sotc-opt %s --split-input-file --pass-pipeline="builtin.module(sir.subgraph(sotc-convert-conv-to-step{bf16=true}))" | FileCheck %s --check-prefix=BF16

// A ResNet block's second convolution: bias, the skip connection, relu. One step where the
// sum was (the residual may be computed after the convolution), the group gone; the step's
// result keeps the relu's Python name. The trailing padding is the least that gives 8x8.
// CHECK-LABEL: sir.subgraph @residual_block
// CHECK-NEXT:    %[[S:.*]] = sir.prim fill_constant() {name = "skip"
// CHECK-NEXT:    %[[C:.*]] = mapexpr.conv "conv2d_0"(%arg0, %arg1 bias %arg2 residual %[[S]]) {activation = "relu", dilations = array<i64: 1, 1>, names = ["out"], pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6x1x1xf32>, tensor<2x6x8x8xf32>) -> tensor<2x6x8x8xf32>
// CHECK-NEXT:    sir.output %[[C]]
// CHECK-NOT:     bf16
// With --precision bf16 the step computes in bfloat16.
// BF16-LABEL: sir.subgraph @residual_block
// BF16:         mapexpr.conv "conv2d_0"(%arg0, %arg1 bias %arg2 residual %{{.*}}) {activation = "relu", bf16, dilations
sir.subgraph @residual_block(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %b: tensor<6x1x1xf32>) -> tensor<2x6x8x8xf32> {
  %0 = sir.group "conv2d_0" "conv"(%x, %w) : (tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<2x6x8x8xf32> {
  ^bb0(%a: tensor<2x4x8x8xf32>, %c: tensor<6x4x3x3xf32>):
    %y = sir.prim conv2d(%a, %c) {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<2x6x8x8xf32>
    sir.yield %y : tensor<2x6x8x8xf32>
  }
  %skip = sir.prim fill_constant() {name = "skip", shape = array<i64: 2, 6, 8, 8>, value = 1.0 : f64} : () -> tensor<2x6x8x8xf32>
  %1 = sir.group "epilogue" "injective"(%b, %0, %skip) : (tensor<6x1x1xf32>, tensor<2x6x8x8xf32>, tensor<2x6x8x8xf32>) -> tensor<2x6x8x8xf32> {
  ^bb0(%r: tensor<6x1x1xf32>, %m: tensor<2x6x8x8xf32>, %s: tensor<2x6x8x8xf32>):
    %z = sir.prim fill_constant() {shape = array<i64>, value = 0.0 : f64} : () -> tensor<f32>
    %zb = sir.prim broadcast_to(%z) {shape = array<i64: 2, 6, 8, 8>} : (tensor<f32>) -> tensor<2x6x8x8xf32>
    %e = sir.prim broadcast_to(%r) {shape = array<i64: 2, 6, 8, 8>} : (tensor<6x1x1xf32>) -> tensor<2x6x8x8xf32>
    %t = sir.prim add(%m, %e) : (tensor<2x6x8x8xf32>, tensor<2x6x8x8xf32>) -> tensor<2x6x8x8xf32>
    %u = sir.prim add(%t, %s) : (tensor<2x6x8x8xf32>, tensor<2x6x8x8xf32>) -> tensor<2x6x8x8xf32>
    %v = sir.prim max(%u, %zb) {name = "out"} : (tensor<2x6x8x8xf32>, tensor<2x6x8x8xf32>) -> tensor<2x6x8x8xf32>
    sir.yield %v : tensor<2x6x8x8xf32>
  }
  sir.output %1 : tensor<2x6x8x8xf32>
}

// -----

// MobileNetV2: the bias as [OC] reshaped inside the group, then relu6 (min(max(t, 0), 6)),
// stride 2: the last row and column of the input are never read, so no trailing padding.
// CHECK-LABEL: sir.subgraph @relu6
// CHECK-NEXT:    %[[C:.*]] = mapexpr.conv "conv2d_0"(%arg0, %arg1 bias %arg2) {activation = "relu6", dilations = array<i64: 1, 1>, names = ["y"], pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 2>}
// CHECK-NEXT:    sir.output %[[C]]
sir.subgraph @relu6(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = sir.group "conv2d_0" "conv"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  ^bb0(%a: tensor<1x3x8x8xf32>, %c: tensor<4x3x3x3xf32>):
    %y = sir.prim conv2d(%a, %c) {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
    sir.yield %y : tensor<1x4x4x4xf32>
  }
  %1 = sir.group "epilogue" "injective"(%b, %0) : (tensor<4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  ^bb0(%r: tensor<4xf32>, %m: tensor<1x4x4x4xf32>):
    %rr = sir.prim reshape(%r) {shape = array<i64: 4, 1, 1>} : (tensor<4xf32>) -> tensor<4x1x1xf32>
    %e = sir.prim broadcast_to(%rr) {shape = array<i64: 1, 4, 4, 4>} : (tensor<4x1x1xf32>) -> tensor<1x4x4x4xf32>
    %t = sir.prim add(%e, %m) : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    %z = sir.prim fill_constant() {shape = array<i64: 1, 4, 4, 4>, value = 0.0 : f64} : () -> tensor<1x4x4x4xf32>
    %s = sir.prim fill_constant() {shape = array<i64: 1, 4, 4, 4>, value = 6.0 : f64} : () -> tensor<1x4x4x4xf32>
    %lo = sir.prim max(%t, %z) : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    %hi = sir.prim min(%lo, %s) {name = "y"} : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    sir.yield %hi : tensor<1x4x4x4xf32>
  }
  sir.output %1 : tensor<1x4x4x4xf32>
}

// -----

// A consumer that does more than the library can (a multiply by 2) stays a group: the step
// has no epilogue and keeps the convolution's name.
// CHECK-LABEL: sir.subgraph @scaled
// CHECK-NEXT:    %[[C:.*]] = mapexpr.conv "conv2d_0"(%arg0, %arg1) {dilations = array<i64: 1, 1>, names = ["c"], pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
// CHECK-NEXT:    %[[G:.*]] = sir.group "scale" "injective"(%[[C]])
// CHECK:         sir.output %[[G]]
sir.subgraph @scaled(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x2x2xf32> {
  %0 = sir.group "conv2d_0" "conv"(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x2x2xf32> {
  ^bb0(%a: tensor<1x2x4x4xf32>, %c: tensor<2x2x3x3xf32>):
    %y = sir.prim conv2d(%a, %c) {name = "c", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x2x2xf32>
    sir.yield %y : tensor<1x2x2x2xf32>
  }
  %1 = sir.group "scale" "injective"(%0) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  ^bb0(%m: tensor<1x2x2x2xf32>):
    %two = sir.prim fill_constant() {shape = array<i64: 1, 2, 2, 2>, value = 2.0 : f64} : () -> tensor<1x2x2x2xf32>
    %t = sir.prim multiply(%m, %two) : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    sir.yield %t : tensor<1x2x2x2xf32>
  }
  sir.output %1 : tensor<1x2x2x2xf32>
}

// -----

// A downsampling block adds two convolutions, each with its bias, then relu: the 1x1
// convolution becomes a step with its bias, computed first, and the 3x3 one takes its result
// as the residual. Both steps where the sum was; no group is left.
// CHECK-LABEL: sir.subgraph @downsample
// CHECK-NEXT:    %[[D:.*]] = mapexpr.conv "conv2d_1"(%arg2, %arg3 bias %arg5) {dilations = array<i64: 1, 1>, names = ["ds"], pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
// CHECK-NEXT:    %[[C:.*]] = mapexpr.conv "conv2d_0"(%arg0, %arg1 bias %arg4 residual %[[D]]) {activation = "relu", {{.*}}names = ["out"]
// CHECK-NEXT:    sir.output %[[C]]
sir.subgraph @downsample(%h: tensor<1x8x4x4xf32>, %w: tensor<8x8x3x3xf32>, %x: tensor<1x4x8x8xf32>, %wd: tensor<8x4x1x1xf32>, %b: tensor<8x1x1xf32>, %bd: tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32> {
  %0 = sir.group "conv2d_0" "conv"(%h, %w) : (tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32> {
  ^bb0(%a: tensor<1x8x4x4xf32>, %c: tensor<8x8x3x3xf32>):
    %y = sir.prim conv2d(%a, %c) {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32>
    sir.yield %y : tensor<1x8x4x4xf32>
  }
  %1 = sir.group "conv2d_1" "conv"(%x, %wd) : (tensor<1x4x8x8xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x4x4xf32> {
  ^bb0(%a: tensor<1x4x8x8xf32>, %c: tensor<8x4x1x1xf32>):
    %y = sir.prim conv2d(%a, %c) {name = "ds", dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x4x4xf32>
    sir.yield %y : tensor<1x8x4x4xf32>
  }
  %2 = sir.group "epilogue" "injective"(%b, %0, %bd, %1) : (tensor<8x1x1xf32>, tensor<1x8x4x4xf32>, tensor<8x1x1xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  ^bb0(%r: tensor<8x1x1xf32>, %m: tensor<1x8x4x4xf32>, %rd: tensor<8x1x1xf32>, %md: tensor<1x8x4x4xf32>):
    %e = sir.prim broadcast_to(%r) {shape = array<i64: 1, 8, 4, 4>} : (tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
    %t = sir.prim add(%m, %e) : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %ed = sir.prim broadcast_to(%rd) {shape = array<i64: 1, 8, 4, 4>} : (tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
    %td = sir.prim add(%md, %ed) : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %u = sir.prim add(%t, %td) : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %z = sir.prim fill_constant() {shape = array<i64: 1, 8, 4, 4>, value = 0.0 : f64} : () -> tensor<1x8x4x4xf32>
    %v = sir.prim max(%u, %z) {name = "out"} : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    sir.yield %v : tensor<1x8x4x4xf32>
  }
  sir.output %2 : tensor<1x8x4x4xf32>
}

// -----

// MobileNetV2's depthwise convolution (groups = C = OC, a [C, 1, 3, 3] weight) with its folded
// batch norm's bias and relu6: one step of 16 groups.
// A depthwise step stays float32 with --precision bf16 (memory-bound).
// BF16-LABEL: sir.subgraph @depthwise
// BF16:         mapexpr.conv "conv2d_0"(%arg0, %arg1 bias %arg2) {activation = "relu6", dilations
// CHECK-LABEL: sir.subgraph @depthwise
// CHECK-NEXT:    %[[C:.*]] = mapexpr.conv "conv2d_0"(%arg0, %arg1 bias %arg2) {activation = "relu6", dilations = array<i64: 1, 1>, groups = 16 : i64, names = ["y"], pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x1x3x3xf32>, tensor<16x1x1xf32>) -> tensor<1x16x8x8xf32>
// CHECK-NEXT:    sir.output %[[C]]
sir.subgraph @depthwise(%x: tensor<1x16x8x8xf32>, %w: tensor<16x1x3x3xf32>, %b: tensor<16x1x1xf32>) -> tensor<1x16x8x8xf32> {
  %0 = sir.group "conv2d_0" "conv"(%x, %w) : (tensor<1x16x8x8xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x8x8xf32> {
  ^bb0(%a: tensor<1x16x8x8xf32>, %c: tensor<16x1x3x3xf32>):
    %y = sir.prim conv2d(%a, %c) {dilations = array<i64: 1, 1>, groups = 16 : i64, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x8x8xf32>
    sir.yield %y : tensor<1x16x8x8xf32>
  }
  %1 = sir.group "epilogue" "injective"(%b, %0) : (tensor<16x1x1xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  ^bb0(%r: tensor<16x1x1xf32>, %m: tensor<1x16x8x8xf32>):
    %z = sir.prim fill_constant() {shape = array<i64>, value = 0.0 : f64} : () -> tensor<f32>
    %zb = sir.prim broadcast_to(%z) {shape = array<i64: 1, 16, 8, 8>} : (tensor<f32>) -> tensor<1x16x8x8xf32>
    %six = sir.prim fill_constant() {shape = array<i64>, value = 6.0 : f64} : () -> tensor<f32>
    %sb = sir.prim broadcast_to(%six) {shape = array<i64: 1, 16, 8, 8>} : (tensor<f32>) -> tensor<1x16x8x8xf32>
    %e = sir.prim broadcast_to(%r) {shape = array<i64: 1, 16, 8, 8>} : (tensor<16x1x1xf32>) -> tensor<1x16x8x8xf32>
    %t = sir.prim add(%m, %e) : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
    %u = sir.prim max(%t, %zb) : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
    %v = sir.prim min(%u, %sb) {name = "y"} : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
    sir.yield %v : tensor<1x16x8x8xf32>
  }
  sir.output %1 : tensor<1x16x8x8xf32>
}
