// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-fold-batch-norm))' --split-input-file | FileCheck %s

// torch: a bias-less conv and its norm become one conv whose weight is scaled per output
// channel and whose new bias is beta - mean * s, s = gamma * rsqrt(var + eps); the conv
// takes the norm's name.
// CHECK-LABEL: sir.subgraph @torch_conv_bn
// CHECK-SAME: (%[[X:[^:]*]]: tensor<1x2x4x4xf32>, %[[W:[^:]*]]: tensor<3x2x1x1xf32> {{.*}}, %[[G:[^:]*]]: tensor<3xf32> {{.*}}, %[[BE:[^:]*]]: tensor<3xf32> {{.*}}, %[[M:[^:]*]]: tensor<3xf32> {{.*}}, %[[V:[^:]*]]: tensor<3xf32> {{.*}})
// CHECK:      %[[EPS:.*]] = sir.prim fill_constant() {shape = array<i64: 3>, value = 1.000000e-03 : f64}
// CHECK-NEXT: %[[VE:.*]] = sir.prim add(%[[V]], %[[EPS]])
// CHECK-NEXT: %[[R:.*]] = sir.prim rsqrt(%[[VE]])
// CHECK-NEXT: %[[S:.*]] = sir.prim multiply(%[[R]], %[[G]])
// CHECK-NEXT: %[[S4:.*]] = sir.prim reshape(%[[S]]) {shape = array<i64: 3, 1, 1, 1>}
// CHECK-NEXT: %[[SB:.*]] = sir.prim broadcast_to(%[[S4]]) {shape = array<i64: 3, 2, 1, 1>}
// CHECK-NEXT: %[[W2:.*]] = sir.prim multiply(%[[W]], %[[SB]])
// CHECK-NEXT: %[[NM:.*]] = sir.prim neg(%[[M]])
// CHECK-NEXT: %[[SH:.*]] = sir.prim multiply(%[[NM]], %[[S]])
// CHECK-NEXT: %[[B2:.*]] = sir.prim add(%[[SH]], %[[BE]])
// CHECK-NEXT: %[[C:.*]] = sir.call "api" "torch.nn.functional.conv2d"(%[[X]], %[[W2]], %[[B2]]) {args = [#sir.arg<0>, #sir.arg<1>, #sir.arg<2>], kwargs = [#sir.kw<"stride", 1 : i64>], names = ["bn_out"]
// CHECK-NOT:  batch_norm
// CHECK:      sir.output %[[C]]
sir.subgraph @torch_conv_bn(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32> {sir.weight}, %g: tensor<3xf32> {sir.weight}, %b: tensor<3xf32> {sir.weight}, %m: tensor<3xf32> {sir.weight}, %v: tensor<3xf32> {sir.weight}) -> tensor<1x3x4x4xf32> {
  %0 = sir.call "api" "torch.nn.functional.conv2d"(%x, %w) {op = "torch.nn.functional.conv2d", args = [#sir.arg<0>, #sir.arg<1>, #sir.none], kwargs = [#sir.kw<"stride", 1>], names = ["conv_out"]} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %1 = sir.call "api" "torch.nn.functional.batch_norm"(%0, %m, %v, %g, %b) {op = "torch.nn.functional.batch_norm", args = [#sir.arg<0>, #sir.arg<1>, #sir.arg<2>, #sir.arg<3>, #sir.arg<4>], kwargs = [#sir.kw<"training", false>, #sir.kw<"eps", 1.0e-3 : f64>], names = ["bn_out"]} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  sir.output %1 : tensor<1x3x4x4xf32>
}

// -----

// paddle: the conv's own bias enters as (b - mean) * s; a conv called without a bias
// argument gets one by keyword.
// CHECK-LABEL: sir.subgraph @paddle_conv_bias_bn
// CHECK-SAME: %[[CB:[^:]*]]: tensor<3xf32> {sir.weight}) 
// CHECK:      %[[D:.*]] = sir.prim subtract(%[[CB]], %{{.*}})
// CHECK-NEXT: %[[SH:.*]] = sir.prim multiply(%[[D]], %{{.*}})
// CHECK-NEXT: %[[B2:.*]] = sir.prim add(%[[SH]], %{{.*}})
// CHECK:      sir.call "api" "paddle.nn.functional.conv2d"(%{{.*}}, %{{.*}}, %[[B2]]) {args = [#sir.arg<0>, #sir.arg<1>, #sir.arg<2>], kwargs = []
// CHECK-LABEL: sir.subgraph @paddle_conv_no_bias_bn
// CHECK:      sir.call "api" "paddle.nn.functional.conv2d"(%{{.*}}, %{{.*}}, %{{.*}}) {args = [#sir.arg<0>, #sir.arg<1>], kwargs = [#sir.kw<"bias", #sir.arg<2>>]
sir.subgraph @paddle_conv_bias_bn(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32> {sir.weight}, %g: tensor<3xf32> {sir.weight}, %b: tensor<3xf32> {sir.weight}, %m: tensor<3xf32> {sir.weight}, %v: tensor<3xf32> {sir.weight}, %cb: tensor<3xf32> {sir.weight}) -> tensor<1x3x4x4xf32> {
  %0 = sir.call "api" "paddle.nn.functional.conv2d"(%x, %w, %cb) {op = "paddle.nn.functional.conv2d", args = [#sir.arg<0>, #sir.arg<1>, #sir.arg<2>], kwargs = []} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %1 = sir.call "api" "paddle.nn.functional.batch_norm"(%0, %m, %v, %g, %b) {op = "paddle.nn.functional.batch_norm", args = [#sir.arg<0>, #sir.arg<1>, #sir.arg<2>, #sir.arg<3>, #sir.arg<4>], kwargs = [#sir.kw<"training", false>]} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  sir.output %1 : tensor<1x3x4x4xf32>
}
sir.subgraph @paddle_conv_no_bias_bn(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32> {sir.weight}, %m: tensor<3xf32> {sir.weight}, %v: tensor<3xf32> {sir.weight}) -> tensor<1x3x4x4xf32> {
  %0 = sir.call "api" "paddle.nn.functional.conv2d"(%x, %w) {op = "paddle.nn.functional.conv2d", args = [#sir.arg<0>, #sir.arg<1>], kwargs = []} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %1 = sir.call "api" "paddle.nn.functional.batch_norm"(%0, %m, %v) {op = "paddle.nn.functional.batch_norm", args = [#sir.arg<0>, #sir.arg<1>, #sir.arg<2>], kwargs = []} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  sir.output %1 : tensor<1x3x4x4xf32>
}

// -----

// Left alone: statistics that are inputs, not weights (folding would change a function's
// numbers for nothing); a conv something else reads too; a norm in training mode; NHWC.
// CHECK-LABEL: sir.subgraph @not_weights
// CHECK: batch_norm
// CHECK-LABEL: sir.subgraph @conv_read_twice
// CHECK: batch_norm
// CHECK-LABEL: sir.subgraph @training
// CHECK: batch_norm
// CHECK-LABEL: sir.subgraph @channels_last
// CHECK: batch_norm
sir.subgraph @not_weights(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32> {sir.weight}, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = sir.call "api" "torch.nn.functional.conv2d"(%x, %w) {op = "torch.nn.functional.conv2d", args = [#sir.arg<0>, #sir.arg<1>], kwargs = []} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %1 = sir.call "api" "torch.nn.functional.batch_norm"(%0, %m, %v) {op = "torch.nn.functional.batch_norm", args = [#sir.arg<0>, #sir.arg<1>, #sir.arg<2>], kwargs = []} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  sir.output %1 : tensor<1x3x4x4xf32>
}
sir.subgraph @conv_read_twice(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32> {sir.weight}, %m: tensor<3xf32> {sir.weight}, %v: tensor<3xf32> {sir.weight}) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  %0 = sir.call "api" "torch.nn.functional.conv2d"(%x, %w) {op = "torch.nn.functional.conv2d", args = [#sir.arg<0>, #sir.arg<1>], kwargs = []} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %1 = sir.call "api" "torch.nn.functional.batch_norm"(%0, %m, %v) {op = "torch.nn.functional.batch_norm", args = [#sir.arg<0>, #sir.arg<1>, #sir.arg<2>], kwargs = []} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  sir.output %0, %1 : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}
sir.subgraph @training(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32> {sir.weight}, %m: tensor<3xf32> {sir.weight}, %v: tensor<3xf32> {sir.weight}) -> tensor<1x3x4x4xf32> {
  %0 = sir.call "api" "torch.nn.functional.conv2d"(%x, %w) {op = "torch.nn.functional.conv2d", args = [#sir.arg<0>, #sir.arg<1>], kwargs = []} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %1 = sir.call "api" "torch.nn.functional.batch_norm"(%0, %m, %v) {op = "torch.nn.functional.batch_norm", args = [#sir.arg<0>, #sir.arg<1>, #sir.arg<2>], kwargs = [#sir.kw<"training", true>]} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  sir.output %1 : tensor<1x3x4x4xf32>
}
sir.subgraph @channels_last(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32> {sir.weight}, %m: tensor<3xf32> {sir.weight}, %v: tensor<3xf32> {sir.weight}) -> tensor<1x3x4x4xf32> {
  %0 = sir.call "api" "paddle.nn.functional.conv2d"(%x, %w) {op = "paddle.nn.functional.conv2d", args = [#sir.arg<0>, #sir.arg<1>], kwargs = []} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %1 = sir.call "api" "paddle.nn.functional.batch_norm"(%0, %m, %v) {op = "paddle.nn.functional.batch_norm", args = [#sir.arg<0>, #sir.arg<1>, #sir.arg<2>], kwargs = [#sir.kw<"data_format", "NHWC">]} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  sir.output %1 : tensor<1x3x4x4xf32>
}
