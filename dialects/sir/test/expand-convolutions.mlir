// sotc-sir-expand-convolutions: a conv2d the target runs as a step stays (cpu: float32 of
// static sizes, any groups); every other becomes windows (im2col) times the
// filters, one GEMM (a depthwise one: the taps times the filters, summed).
// RUN: sotc-opt %s --split-input-file --pass-pipeline="builtin.module(sir.subgraph(sotc-sir-expand-convolutions{target=cpu}))" | FileCheck %s
// RUN: sotc-opt %s --split-input-file --pass-pipeline="builtin.module(sir.subgraph(sotc-sir-expand-convolutions{target=cuda}))" | FileCheck %s --check-prefix=CUDA

// A 3x3 float32 convolution: a step on the CPU; on CUDA the windows, reshaped to columns
// [N, C*9, OH*OW], times the weight [OC, C*9], reshaped back, with the convolution's name.
// CHECK-LABEL: sir.subgraph @conv3x3
// CHECK-NEXT:    sir.prim conv2d(%arg0, %arg1)
// CHECK-NOT:     window
// CUDA-LABEL:  sir.subgraph @conv3x3
// CUDA-NEXT:     %[[W:.*]] = sir.prim window(%arg0) {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>, value = 0.000000e+00 : f64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x3x3x8x8xf32>
// CUDA-NEXT:     %[[C:.*]] = sir.prim reshape(%[[W]]) {shape = array<i64: 1, 36, 64>}
// CUDA-NEXT:     %[[K:.*]] = sir.prim reshape(%arg1) {shape = array<i64: 6, 36>}
// CUDA-NEXT:     %[[M:.*]] = sir.prim matmul(%[[K]], %[[C]])
// CUDA-NEXT:     %[[Y:.*]] = sir.prim reshape(%[[M]]) {name = "y", shape = array<i64: 1, 6, 8, 8>}
// CUDA-NEXT:     sir.output %[[Y]]
sir.subgraph @conv3x3(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32> {
  %y = sir.prim conv2d(%x, %w) {name = "y", dilations = array<i64: 1, 1>, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  sir.output %y : tensor<1x6x8x8xf32>
}

// -----

// Pointwise (1x1, stride 1, unpadded): a step on the CPU too (its epilogue folds; the runtime
// runs it as a GEMM on NCHW, or as oneDNN's between blocked convolutions); expanded, a plain
// GEMM of x itself, no windows.
// CHECK-LABEL: sir.subgraph @pointwise
// CHECK-NEXT:    sir.prim conv2d(%arg0, %arg1)
// CUDA-LABEL:  sir.subgraph @pointwise
// CUDA-NOT:      window
// CUDA:          sir.prim matmul
sir.subgraph @pointwise(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x1x1xf32>) -> tensor<1x6x8x8xf32> {
  %y = sir.prim conv2d(%x, %w) {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x1x1xf32>) -> tensor<1x6x8x8xf32>
  sir.output %y : tensor<1x6x8x8xf32>
}

// -----

// float64: oneDNN has no such convolution, so the CPU expands it too. A stride-2 window reads
// no trailing padding: the expansion's window is padded (1, 0) like the convolution.
// CHECK-LABEL: sir.subgraph @double
// CHECK-NOT:     conv2d
// CHECK:         sir.prim window(%arg0) {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1>, strides = array<i64: 2, 2>, value = 0.000000e+00 : f64} : (tensor<1x2x8x8xf64>) -> tensor<1x2x3x3x4x4xf64>
sir.subgraph @double(%x: tensor<1x2x8x8xf64>, %w: tensor<3x2x3x3xf64>) -> tensor<1x3x4x4xf64> {
  %y = sir.prim conv2d(%x, %w) {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x8x8xf64>, tensor<3x2x3x3xf64>) -> tensor<1x3x4x4xf64>
  sir.output %y : tensor<1x3x4x4xf64>
}

// -----

// A dynamic batch: the step's sizes would be static, so the CPU expands it (one GEMM per
// image of the call's batch).
// CHECK-LABEL: sir.subgraph @dynamic_batch
// CHECK-NOT:     conv2d
// CHECK:         sir.prim window(%arg0)
// CHECK:         sir.prim matmul
sir.subgraph @dynamic_batch(%x: tensor<?x2x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<?x3x8x8xf32> {
  %y = sir.prim conv2d(%x, %w) {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<?x3x8x8xf32>
  sir.output %y : tensor<?x3x8x8xf32>
}

// -----

// Depthwise (a filter per channel: groups = C = OC): a step on the CPU; expanded, the windows
// times each channel's taps, summed over the taps (no GEMM).
// CHECK-LABEL: sir.subgraph @depthwise
// CHECK-NEXT:    sir.prim conv2d(%arg0, %arg1) {dilations = array<i64: 1, 1>, groups = 4 : i64
// CUDA-LABEL:  sir.subgraph @depthwise
// CUDA:          sir.prim reshape(%arg1) {shape = array<i64: 1, 4, 3, 3, 1, 1>}
// CUDA:          sir.prim window(%arg0)
// CUDA:          sir.prim multiply
// CUDA:          sir.prim reduce_sum({{.*}}) {axes = array<i64: 2, 3>
// CUDA-NOT:      matmul
sir.subgraph @depthwise(%x: tensor<2x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<2x4x8x8xf32> {
  %y = sir.prim conv2d(%x, %w) {dilations = array<i64: 1, 1>, groups = 4 : i64, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x8x8xf32>
  sir.output %y : tensor<2x4x8x8xf32>
}

// -----

// Other groups (2 of 2 channels, 3 filters each): a step on the CPU; expanded, the groups one
// batched GEMM, [G, OC/G, C/G*9] x [N, G, C/G*9, OH*OW].
// CHECK-LABEL: sir.subgraph @grouped
// CHECK-NEXT:    sir.prim conv2d(%arg0, %arg1) {dilations = array<i64: 1, 1>, groups = 2 : i64
// CUDA-LABEL:  sir.subgraph @grouped
// CUDA:          sir.prim reshape(%arg1) {shape = array<i64: 2, 3, 18>}
// CUDA:          sir.prim matmul
sir.subgraph @grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x8x8xf32> {
  %y = sir.prim conv2d(%x, %w) {dilations = array<i64: 1, 1>, groups = 2 : i64, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x8x8xf32>
  sir.output %y : tensor<1x6x8x8xf32>
}
