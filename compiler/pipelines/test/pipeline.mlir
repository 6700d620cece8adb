// The registered pipeline takes frontend sir to any phase, for either target.
// RUN: sotc-opt %s --sotc-pipeline="compile-to=prim" | FileCheck %s --check-prefix=PRIM
// RUN: sotc-opt %s --sotc-pipeline="compile-to=fused" | FileCheck %s --check-prefix=FUSED
// RUN: sotc-opt %s --sotc-pipeline="compile-to=mapexpr" | FileCheck %s --check-prefix=MAPEXPR
// RUN: sotc-opt %s --sotc-pipeline | FileCheck %s --check-prefix=GPU
// RUN: sotc-opt %s --sotc-pipeline="target=cpu compile-to=scheduled" | FileCheck %s --check-prefix=CPU
// RUN: sotc-opt %s --sotc-pipeline="target=cpu compile-to=loops" | FileCheck %s --check-prefix=LOOPS
// RUN: sotc-opt %s --sotc-pipeline="target=cpu compile-to=llvm" | FileCheck %s --check-prefix=LLVM
// RUN: not sotc-opt %s --sotc-pipeline="compile-to=ptx" 2>&1 | FileCheck %s --check-prefix=BADPHASE
// RUN: not sotc-opt %s --sotc-pipeline="target=tpu" 2>&1 | FileCheck %s --check-prefix=BADTARGET

// PRIM-NOT: sir.call
// PRIM: sir.prim fill_constant
// PRIM: sir.prim max
// PRIM-NOT: sir.group

// FUSED: sir.group "fill_constant_0_max_1" "injective"
// FUSED-NOT: mapexpr.kernel

// MAPEXPR: mapexpr.launch @fill_constant_0_max_1
// MAPEXPR: mapexpr.kernel @fill_constant_0_max_1
// MAPEXPR-NOT: #sched.loop

// GPU: #sched.loop<S0x, 1>, #sched.loop<S1x, 32>
// CPU: #sched.loop<S0x, 4>, #sched.loop<Vectorize, 8>

// LOOPS: func.func @fill_constant_0_max_1(%arg0: memref<4x8xf32>, %arg1: memref<4x8xf32>)
// LOOPS: arith.maximumf
// LOOPS-NOT: mapexpr.kernel

// LLVM: llvm.func @fill_constant_0_max_1(%arg0: i64, %arg1: i64, %arg2: !llvm.ptr {llvm.noalias}, %arg3: !llvm.ptr {llvm.noalias})
// LLVM: llvm.intr.maximum
// LLVM-NOT: func.func

// BADPHASE: sotc-pipeline: unknown phase 'ptx'
// BADTARGET: sotc-pipeline: target must be cuda or cpu, not 'tpu'
sir.subgraph @SIR_0(%x: tensor<4x8xf32> {sir.name = "x"}) -> tensor<4x8xf32> {
  %0 = sir.call "api" "paddle.nn.functional.relu"(%x) {op = "paddle.nn.functional.relu", args = [#sir.arg<0>], kwargs = []} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  sir.output %0 : tensor<4x8xf32>
}
