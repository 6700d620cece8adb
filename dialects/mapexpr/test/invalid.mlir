// Verifier errors of the mapexpr dialect.
// RUN: sotc-opt %s --split-input-file --verify-diagnostics

// Every tensor's index must be derivable from the anchor's iterators.
mapexpr.kernel @k(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mapexpr.tensor "y" : tensor<4xf32>
  mapexpr.anchored %y : tensor<4xf32> attributes {dims = [#sched.injective<4>]} {
    // expected-error @+1 {{index i1 uses an iterator the rank-1 iteration space does not have}}
    mapexpr.op "exp" outs(%y : tensor<4xf32>) ins(%x : tensor<4xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i1]>]}
  }
  mapexpr.return %y : tensor<4xf32>
}

// -----

mapexpr.kernel @k(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mapexpr.tensor "y" : tensor<4xf32>
  mapexpr.anchored %y : tensor<4xf32> attributes {dims = [#sched.injective<4>]} {
    // expected-error @+1 {{index expression '[IndexDot([i0], [4, 2])]', column 24: IndexDot needs one dim per item}}
    mapexpr.op "exp" outs(%y : tensor<4xf32>) ins(%x : tensor<4xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[IndexDot([i0], [4, 2])]>]}
  }
  mapexpr.return %y : tensor<4xf32>
}

// -----

// Outputs are written once.
mapexpr.kernel @k(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{t_y is written 2 times (expected once)}}
  %y = mapexpr.tensor "y" : tensor<4xf32>
  mapexpr.anchored %y : tensor<4xf32> attributes {dims = [#sched.injective<4>]} {
    mapexpr.op "exp" outs(%y : tensor<4xf32>) ins(%x : tensor<4xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
    mapexpr.op "sin" outs(%y : tensor<4xf32>) ins(%x : tensor<4xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{writes its input #0}}
mapexpr.kernel @k(%x: tensor<4xf32>) -> tensor<4xf32> {
  mapexpr.anchored %x : tensor<4xf32> attributes {dims = [#sched.injective<4>]} {
    mapexpr.op "exp" outs(%x : tensor<4xf32>) ins(%x : tensor<4xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %x : tensor<4xf32>
}

// -----

// Loop descriptors agree with the mesh.
mapexpr.kernel @k(%x: tensor<64xf32>) -> tensor<64xf32> {
  %y = mapexpr.tensor "y" : tensor<64xf32>
  // expected-error @+1 {{loop 1 (threadIdx.x=0..32) disagrees with the mesh's output dim of size 64}}
  mapexpr.anchored %y : tensor<64xf32> attributes {dims = [#sched.injective<64>],
      mesh = #sched.mesh<[#sched.injective<64>], [#sched.reshape<[1, 64]>]>,
      loops = [#sched.loop<S0x, 1>, #sched.loop<S1x, 32>]} {
    mapexpr.op "exp" outs(%y : tensor<64xf32>) ins(%x : tensor<64xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %y : tensor<64xf32>
}

// -----

mapexpr.kernel @k(%x: tensor<64xf32>) -> tensor<64xf32> {
  %y = mapexpr.tensor "y" : tensor<64xf32>
  // expected-error @+1 {{the mesh starts from other dims than the anchor's}}
  mapexpr.anchored %y : tensor<64xf32> attributes {dims = [#sched.injective<64>],
      mesh = #sched.mesh<[#sched.reduced<64>], [#sched.reshape<[1, 64]>]>,
      loops = [#sched.loop<S0x, 1>, #sched.loop<S1x, 64>]} {
    mapexpr.op "exp" outs(%y : tensor<64xf32>) ins(%x : tensor<64xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %y : tensor<64xf32>
}

// -----

mapexpr.kernel @k(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mapexpr.tensor "y" : tensor<4xf32>
  // expected-error @+1 {{schedule dim 0 has size 8, the iteration space 4}}
  mapexpr.anchored %y : tensor<4xf32> attributes {dims = [#sched.injective<8>]} {
    mapexpr.op "exp" outs(%y : tensor<4xf32>) ins(%x : tensor<4xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %y : tensor<4xf32>
}

// -----

sir.subgraph @SIR_0(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{no mapexpr.kernel named @missing}}
  %0 = mapexpr.launch @missing(%a) : (tensor<2xf32>) -> tensor<2xf32>
  sir.output %0 : tensor<2xf32>
}

// -----

mapexpr.kernel @k(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mapexpr.tensor "y" : tensor<4xf32>
  mapexpr.anchored %y : tensor<4xf32> attributes {dims = [#sched.injective<4>]} {
    // expected-error @+1 {{index expression '[ListGetItem(IndexUnDot(i0, [0, 2]), 1)]', column 31: dims must be positive}}
    mapexpr.op "exp" outs(%y : tensor<4xf32>) ins(%x : tensor<4xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[ListGetItem(IndexUnDot(i0, [0, 2]), 1)]>]}
  }
  mapexpr.return %y : tensor<4xf32>
}

// -----

mapexpr.kernel @k(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %y = mapexpr.tensor "y" : tensor<4x2xf32>
  mapexpr.anchored %y : tensor<4x2xf32> attributes {dims = [#sched.injective<4>, #sched.injective<2>]} {
    // expected-error @+1 {{needs one index expression per dimension of 'tensor<4x2xf32>'}}
    mapexpr.op "exp" outs(%y : tensor<4x2xf32>) ins(%x : tensor<4x2xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %y : tensor<4x2xf32>
}

// -----

// Statements of one kernel share one launch: a consumer of a reduction runs on its rows.
mapexpr.kernel @softmax_like(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = mapexpr.tensor "s" : tensor<4x1xf32>
  %y = mapexpr.tensor "y" : tensor<4x8xf32>
  mapexpr.anchored %x : tensor<4x8xf32> attributes {dims = [#sched.injective<4>, #sched.reduced<8>], loops = [#sched.loop<S0x, 4>, #sched.loop<S1x, 32>, #sched.loop<Temporal, 1>], mesh = #sched.mesh<[#sched.injective<4>, #sched.reduced<8>], [#sched.transpose<[0, 1]>, #sched.reshape<[4, 8]>, #sched.padding<[4, 32]>, #sched.reshape<[4, 1, 32]>, #sched.transpose<[0, 2, 1]>]>} {
    mapexpr.op "reduce_sum_init" outs(%s : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%s : tensor<4x1xf32>) ins(%x : tensor<4x8xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  // expected-error @+1 {{AnchoredMapStmt 1 runs on (blockIdx.x=0..1, threadIdx.x=0..32) but the kernel's first statement on (blockIdx.x=0..4, threadIdx.x=0..32): a kernel is one launch, one grid}}
  mapexpr.anchored %y : tensor<4x8xf32> attributes {dims = [#sched.injective<4>, #sched.injective<8>], loops = [#sched.loop<S0x, 1>, #sched.loop<S1x, 32>], mesh = #sched.mesh<[#sched.injective<4>, #sched.injective<8>], [#sched.reshape<[32]>, #sched.reshape<[1, 32]>]>} {
    mapexpr.op "divide" outs(%y : tensor<4x8xf32>) ins(%x, %s : tensor<4x8xf32>, tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, 0]>]}
  }
  mapexpr.return %y : tensor<4x8xf32>
}

// -----

// A GEMM step's result is the matmul of its operands.
sir.subgraph @g(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'mapexpr.gemm' op result shape does not match the matmul of its operands}}
  %o = mapexpr.gemm "matmul_0"(%x, %w) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  sir.output %o : tensor<2x4xf32>
}

// -----

sir.subgraph @g(%x: tensor<2x4xf32>, %w: tensor<5x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'mapexpr.gemm' op is not a GEMM: matmul(): contraction dimensions differ: [2, 4] and [5, 3] (4 vs 5)}}
  %o = mapexpr.gemm "matmul_0"(%x, %w) : (tensor<2x4xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  sir.output %o : tensor<2x3xf32>
}

// -----

// Operands of the result's type, or bfloat16 ones with a float32 result; not float16 ones.
sir.subgraph @g(%x: tensor<2x4xf16>, %w: tensor<4x3xf16>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'mapexpr.gemm' op operands must have the result's element type, or be bf16 with an f32 result}}
  %o = mapexpr.gemm "matmul_0"(%x, %w) : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf32>
  sir.output %o : tensor<2x3xf32>
}

// -----

// The bias is one row of n elements.
sir.subgraph @g(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'mapexpr.gemm' op bias must be one row of 3 elements of the result type}}
  %o = mapexpr.gemm "matmul_0"(%x, %w bias %b) : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  sir.output %o : tensor<2x3xf32>
}

// -----

// A statement computes a primitive, or a reduction's start (_init) or step (_acc).
mapexpr.kernel @k(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mapexpr.tensor "y" : tensor<4xf32>
  mapexpr.anchored %y : tensor<4xf32> attributes {dims = [#sched.injective<4>]} {
    // expected-error @+1 {{'explode' is no primitive, nor a reduction's or matmul's _init or _acc}}
    mapexpr.op "explode" outs(%y : tensor<4xf32>) ins(%x : tensor<4xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %y : tensor<4xf32>
}

// -----

mapexpr.kernel @k(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = mapexpr.tensor "y" : tensor<4xf32>
  mapexpr.anchored %y : tensor<4xf32> attributes {dims = [#sched.injective<4>]} {
    // expected-error @+1 {{'exp_acc' is no primitive, nor a reduction's or matmul's _init or _acc}}
    mapexpr.op "exp_acc" outs(%y : tensor<4xf32>) ins(%x : tensor<4xf32>) {indices = [#mapexpr.index<[i0]>, #mapexpr.index<[i0]>]}
  }
  mapexpr.return %y : tensor<4xf32>
}
