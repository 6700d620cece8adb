// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-widen-half{half-matmuls=true}))' --split-input-file | FileCheck %s
// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-widen-half))' --split-input-file | FileCheck %s --check-prefix=WIDE
// RUN: sotc-opt %s --pass-pipeline='builtin.module(sir.subgraph(sotc-sir-widen-half{half-matmuls=true bf16-matmuls-only=true}))' --split-input-file | FileCheck %s --check-prefix=CPU

// With half-matmuls (CUDA: cuBLASLt reads half and accumulates in float32), a matmul stays
// in half: a computed operand is rounded to half once (as the framework stores it), an input
// is read as it is, and the product is widened for the float32 math after it. Without the
// option the matmul is computed in float32 like everything else.
// CHECK-LABEL: sir.subgraph @linear
// CHECK:      %[[X:.*]] = sir.prim cast(%arg0) {stored_as = f16} : (tensor<4x8xf16>) -> tensor<4x8xf32>
// CHECK:      %[[E:.*]] = sir.prim exp(%[[X]]) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[H:.*]] = sir.prim cast(%[[E]]) : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK-NEXT: %[[M:.*]] = sir.prim matmul(%[[H]], %arg1) : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
// CHECK-NEXT: %[[MW:.*]] = sir.prim cast(%[[M]]) {stored_as = f16} : (tensor<4x16xf16>) -> tensor<4x16xf32>
// CHECK:      %[[A:.*]] = sir.prim add(%[[MW]], %{{.*}}) {stored_as = f16} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[R:.*]] = sir.prim cast(%[[A]]) {name = "var_3"} : (tensor<4x16xf32>) -> tensor<4x16xf16>
// CHECK-NEXT: sir.output %[[R]]
// WIDE-LABEL: sir.subgraph @linear
// WIDE:       sir.prim matmul(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// On the CPU (oneDNN: bfloat16 GEMMs, no float16 ones) a float16 matmul is widened.
// CPU-LABEL: sir.subgraph @linear
// CPU:       sir.prim matmul(%{{.*}}, %{{.*}}) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
sir.subgraph @linear(%x: tensor<4x8xf16>, %w: tensor<8x16xf16>, %b: tensor<4x16xf16>) -> tensor<4x16xf16> {
  %0 = sir.prim exp(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %1 = sir.prim matmul(%0, %w) : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
  %2 = sir.prim add(%1, %b) {name = "var_3"} : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  sir.output %2 : tensor<4x16xf16>
}

// -----

// A product the program returns is the library's half result, named as the frontend named it;
// an operand the program itself rounded to bfloat16 is read as that rounding (no second one).
// CHECK-LABEL: sir.subgraph @returned
// CHECK:      %[[C:.*]] = sir.prim cast(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xbf16>
// CHECK-NEXT: %[[M:.*]] = sir.prim matmul(%[[C]], %arg1) {name = "var_2"} : (tensor<2x3xbf16>, tensor<3x5xbf16>) -> tensor<2x5xbf16>
// CHECK-NEXT: sir.output %[[M]] : tensor<2x5xbf16>
// CPU-LABEL: sir.subgraph @returned
// CPU:       sir.prim matmul(%{{.*}}, %arg1) {name = "var_2"} : (tensor<2x3xbf16>, tensor<3x5xbf16>) -> tensor<2x5xbf16>
sir.subgraph @returned(%x: tensor<2x3xf32>, %w: tensor<3x5xbf16>) -> tensor<2x5xbf16> {
  %0 = sir.prim cast(%x) : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %1 = sir.prim matmul(%0, %w) {name = "var_2"} : (tensor<2x3xbf16>, tensor<3x5xbf16>) -> tensor<2x5xbf16>
  sir.output %1 : tensor<2x5xbf16>
}
