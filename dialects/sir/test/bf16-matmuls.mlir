// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-bf16-matmuls))' --split-input-file | FileCheck %s
// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-bf16-matmuls,sotc-sir-widen-half{half-matmuls=true bf16-matmuls-only=true}))' --split-input-file | FileCheck %s --check-prefix=WIDEN
// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-bf16-matmuls{f32-products=true},sotc-sir-widen-half{half-matmuls=true bf16-matmuls-only=true}))' --split-input-file | FileCheck %s --check-prefix=CPU

// --precision bf16: a float32 matmul reads its operands rounded to bfloat16 and its product,
// rounded once, is widened for what reads it; the rest stays float32.
// CHECK-LABEL: sir.subgraph @linear
// CHECK:      %[[E:.*]] = sir.prim exp(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[A:.*]] = sir.prim cast(%[[E]]) : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK-NEXT: %[[W:.*]] = sir.prim cast(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xbf16>
// CHECK-NEXT: %[[M:.*]] = sir.prim matmul(%[[A]], %[[W]]) {name = "var_2"} : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
// CHECK-NEXT: %[[MW:.*]] = sir.prim cast(%[[M]]) : (tensor<4x16xbf16>) -> tensor<4x16xf32>
// CHECK-NEXT: sir.prim add(%[[MW]], %arg2) {name = "var_3"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
// sotc-sir-widen-half keeps it a bfloat16 GEMM (on the CPU too), the roundings as they are.
// WIDEN-LABEL: sir.subgraph @linear
// WIDEN:      %[[A:.*]] = sir.prim cast(%{{.*}}) : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// WIDEN:      %[[W:.*]] = sir.prim cast(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xbf16>
// WIDEN:      sir.prim matmul(%[[A]], %[[W]]) {name = "var_2"} : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
// On the CPU (f32-products: oneDNN stores the float32 product) nothing rounds it: the add reads
// it as it is.
// CPU-LABEL: sir.subgraph @linear
// CPU:      %[[A:.*]] = sir.prim cast(%{{.*}}) : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CPU:      %[[W:.*]] = sir.prim cast(%arg1) : (tensor<8x16xf32>) -> tensor<8x16xbf16>
// CPU-NEXT: %[[M:.*]] = sir.prim matmul(%[[A]], %[[W]]) {name = "var_2"} : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xf32>
// CPU-NEXT: sir.prim add(%[[M]], %arg2) {name = "var_3"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
sir.subgraph @linear(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = sir.prim exp(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = sir.prim matmul(%0, %w) {name = "var_2"} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %2 = sir.prim add(%1, %b) {name = "var_3"} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  sir.output %2 : tensor<4x16xf32>
}

// -----

// Left as they are: a matmul of dynamic shape (planned per call, widened again by
// sotc-sir-widen-half: it would only round), a float64 one, and one of integers.
// CHECK-LABEL: sir.subgraph @kept
// CHECK-NOT:  bf16
// CHECK:      sir.output
sir.subgraph @kept(%x: tensor<?x8xf32>, %w: tensor<8x16xf32>, %d: tensor<2x2xf64>, %i: tensor<2x2xi64>) -> (tensor<?x16xf32>, tensor<2x2xf64>, tensor<2x2xi64>) {
  %0 = sir.prim matmul(%x, %w) : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %1 = sir.prim matmul(%d, %d) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %2 = sir.prim matmul(%i, %i) : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  sir.output %0, %1, %2 : tensor<?x16xf32>, tensor<2x2xf64>, tensor<2x2xi64>
}
