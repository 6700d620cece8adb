// The mapexpr dialect prints and parses back unchanged.
// RUN: sotc-opt %s | FileCheck %s
// RUN: sotc-opt %s | sotc-opt | FileCheck %s
// RUN: sotc-opt %s --emit-bytecode | sotc-opt | FileCheck %s

// CHECK-LABEL: mapexpr.kernel @fill_constant_1_sin_0_max_2(%arg0: tensor<64xf32> {mapexpr.name = "x"}) -> tensor<64xf32>
// CHECK:       %[[Z:.*]] = mapexpr.tensor "zero" : tensor<64xf32>
// CHECK:       mapexpr.anchored %[[S:.*]] : tensor<64xf32> attributes {dims = [#sched.injective<64>], loops = [#sched.loop<S0x, 1>, #sched.loop<S1x, 64>], mesh = #sched.mesh<[#sched.injective<64>], [#sched.reshape<[64]>, #sched.reshape<[1, 64]>]>} {
// CHECK-NEXT:    mapexpr.op "fill_constant" outs(%[[Z]] : tensor<64xf32>) {indices = [#mapexpr.index<[i0]>], value = 0.000000e+00 : f64}
// CHECK-NEXT:    mapexpr.op "sin" outs(%[[S]] : tensor<64xf32>) ins(%arg0 : tensor<64xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
// CHECK:       mapexpr.return
mapexpr.kernel @fill_constant_1_sin_0_max_2(%x: tensor<64xf32> {mapexpr.name = "x"}) -> tensor<64xf32> {
  %zero = mapexpr.tensor "zero" : tensor<64xf32>
  %s = mapexpr.tensor "var_1" : tensor<64xf32>
  %m = mapexpr.tensor "var_2" : tensor<64xf32>
  mapexpr.anchored %s : tensor<64xf32> attributes {dims = [#sched.injective<64>],
      mesh = #sched.mesh<[#sched.injective<64>], [#sched.reshape<[64]>, #sched.reshape<[1, 64]>]>,
      loops = [#sched.loop<S0x, 1>, #sched.loop<S1x, 64>]} {
    mapexpr.op "fill_constant" outs(%zero : tensor<64xf32>) {indices = [#mapexpr.index<[i0]>], value = 0.000000e+00 : f64}
    mapexpr.op "sin" outs(%s : tensor<64xf32>) ins(%x : tensor<64xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
    mapexpr.op "max" outs(%m : tensor<64xf32>) ins(%s, %zero : tensor<64xf32>, tensor<64xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %m : tensor<64xf32>
}

// A matmul iterates its output plus the contracted dimension (`space`), reduced.
// CHECK-LABEL: mapexpr.kernel @matmul_0
// CHECK: mapexpr.anchored %{{.*}} : tensor<2x3xf32> attributes {dims = [#sched.injective<2>, #sched.injective<3>, #sched.reduced<4>], space = array<i64: 2, 3, 4>}
// CHECK: mapexpr.op "matmul_acc" {{.*}} {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i2]>, #mapexpr.index<[i2, i1]>]}
mapexpr.kernel @matmul_0(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %o = mapexpr.tensor "var_2" : tensor<2x3xf32>
  mapexpr.anchored %o : tensor<2x3xf32> attributes {dims = [#sched.injective<2>, #sched.injective<3>, #sched.reduced<4>], space = array<i64: 2, 3, 4>} {
    mapexpr.op "matmul_init" outs(%o : tensor<2x3xf32>) {indices = [#mapexpr.index<[i0, i1]>]}
    mapexpr.op "matmul_acc" outs(%o : tensor<2x3xf32>) ins(%a, %b : tensor<2x4xf32>, tensor<4x3xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i2]>, #mapexpr.index<[i2, i1]>]}
  }
  mapexpr.return %o : tensor<2x3xf32>
}

// A launch from a subgraph.
// CHECK-LABEL: sir.subgraph @SIR_0
// CHECK: mapexpr.launch @matmul_0(%arg0, %arg1) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
sir.subgraph @SIR_0(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %0 = mapexpr.launch @matmul_0(%a, %b) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  sir.output %0 : tensor<2x3xf32>
}

// Every form of index expression survives printing and parsing (and bytecode).
// CHECK-LABEL: mapexpr.kernel @indices
// CHECK: indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, (i1 * 2 + 1)]>]
// CHECK: indices = [#mapexpr.index<[i0]>, #mapexpr.index<[ListGetItem(IndexUnDot(i0, [4, 8]), 0), ListGetItem(IndexUnDot(i0, [4, 8]), 1)]>]
// CHECK: indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[IndexDot([i0, i1], [4, 8])]>, #mapexpr.index<[(i0 * 8 + 3)]>]
mapexpr.kernel @indices(%x: tensor<4x17xf32>, %z: tensor<35xf32>) -> (tensor<32xf32>, tensor<4x8xf32>) {
  %w = mapexpr.tensor "w" : tensor<4x8xf32>
  %y = mapexpr.tensor "y" : tensor<32xf32>
  %v = mapexpr.tensor "v" : tensor<4x8xf32>
  mapexpr.anchored %w : tensor<4x8xf32> attributes {dims = [#sched.injective<4>, #sched.injective<8>]} {
    mapexpr.op "exp" outs(%w : tensor<4x8xf32>) ins(%x : tensor<4x17xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, (i1 * 2 + 1)]>]}
  }
  mapexpr.anchored %y : tensor<32xf32> attributes {dims = [#sched.injective<32>]} {
    mapexpr.op "exp" outs(%y : tensor<32xf32>) ins(%w : tensor<4x8xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[ListGetItem(IndexUnDot(i0, [4, 8]), 0), ListGetItem(IndexUnDot(i0, [4, 8]), 1)]>]}
  }
  mapexpr.anchored %v : tensor<4x8xf32> attributes {dims = [#sched.injective<4>, #sched.injective<8>]} {
    mapexpr.op "add" outs(%v : tensor<4x8xf32>) ins(%y, %z : tensor<32xf32>, tensor<35xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[IndexDot([i0, i1], [4, 8])]>, #mapexpr.index<[(i0 * 8 + 3)]>]}
  }
  mapexpr.return %y, %v : tensor<32xf32>, tensor<4x8xf32>
}

// A GEMM step: a library call of the subgraph, with an optional bias row.
// CHECK-LABEL: sir.subgraph @gemm
// CHECK: mapexpr.gemm "matmul_0"(%arg0, %arg1) {names = ["h"], transpose_b = true} : (tensor<3x2x4xf32>, tensor<5x4xf32>) -> tensor<3x2x5xf32>
// CHECK: mapexpr.gemm "matmul_1"(%{{.*}}, %arg2 bias %arg3) : (tensor<3x2x5xf32>, tensor<5x6xf32>, tensor<6xf32>) -> tensor<3x2x6xf32>
sir.subgraph @gemm(%x: tensor<3x2x4xf32>, %w: tensor<5x4xf32>, %v: tensor<5x6xf32>, %b: tensor<6xf32>) -> tensor<3x2x6xf32> {
  %h = mapexpr.gemm "matmul_0"(%x, %w) {names = ["h"], transpose_b = true} : (tensor<3x2x4xf32>, tensor<5x4xf32>) -> tensor<3x2x5xf32>
  %o = mapexpr.gemm "matmul_1"(%h, %v bias %b) : (tensor<3x2x5xf32>, tensor<5x6xf32>, tensor<6xf32>) -> tensor<3x2x6xf32>
  sir.output %o : tensor<3x2x6xf32>
}

// --precision bf16 on the CPU: bfloat16 operands, a float32 product and bias.
// CHECK-LABEL: sir.subgraph @gemm_bf16_operands
// CHECK: mapexpr.gemm "matmul_0"(%arg0, %arg1 bias %arg2) : (tensor<2x4xbf16>, tensor<4x3xbf16>, tensor<3xf32>) -> tensor<2x3xf32>
sir.subgraph @gemm_bf16_operands(%x: tensor<2x4xbf16>, %w: tensor<4x3xbf16>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %o = mapexpr.gemm "matmul_0"(%x, %w bias %b) : (tensor<2x4xbf16>, tensor<4x3xbf16>, tensor<3xf32>) -> tensor<2x3xf32>
  sir.output %o : tensor<2x3xf32>
}
