// Each pass whose output depends on the target, run alone, compiles for the target its module
// says (sched.target, which sotc-attach-target sets first in the pipeline); a `target` option
// overrides it; neither is an error. Each RUN pair differs only in the module's attribute.
// RUN: sotc-opt %s --split-input-file --pass-pipeline="builtin.module(sir.subgraph(sotc-sir-expand-convolutions))" | FileCheck %s --check-prefix=CONV-CPU
// RUN: sed 's/#sched.target<cpu>/#sched.target<cuda>/' %s | sotc-opt --split-input-file --pass-pipeline="builtin.module(sir.subgraph(sotc-sir-expand-convolutions))" | FileCheck %s --check-prefix=CONV-CUDA
// RUN: sotc-opt %s --split-input-file --pass-pipeline="builtin.module(sir.subgraph(sotc-convert-matmul-to-gemm))" | FileCheck %s --check-prefix=GEMM-CPU
// RUN: sed 's/#sched.target<cpu>/#sched.target<cuda>/' %s | sotc-opt --split-input-file --pass-pipeline="builtin.module(sir.subgraph(sotc-convert-matmul-to-gemm))" | FileCheck %s --check-prefix=GEMM-CUDA
// RUN: sotc-opt %s --split-input-file --pass-pipeline="builtin.module(mapexpr.kernel(sotc-mapexpr-schedule))" | FileCheck %s --check-prefix=SCHED-CPU
// RUN: sed 's/#sched.target<cpu>/#sched.target<cuda>/' %s | sotc-opt --split-input-file --pass-pipeline="builtin.module(mapexpr.kernel(sotc-mapexpr-schedule))" | FileCheck %s --check-prefix=SCHED-CUDA
// RUN: sotc-opt %s --split-input-file --pass-pipeline="builtin.module(mapexpr.kernel(sotc-mapexpr-schedule),sotc-convert-mapexpr-to-loops)" | FileCheck %s --check-prefix=LOOPS-CPU
// RUN: sed 's/#sched.target<cpu>/#sched.target<cuda>/' %s | sotc-opt --split-input-file --pass-pipeline="builtin.module(mapexpr.kernel(sotc-mapexpr-schedule),sotc-convert-mapexpr-to-loops)" | FileCheck %s --check-prefix=LOOPS-CUDA
// The option overrides the module's target.
// RUN: sotc-opt %s --split-input-file --pass-pipeline="builtin.module(mapexpr.kernel(sotc-mapexpr-schedule{target=cuda}))" | FileCheck %s --check-prefix=SCHED-CUDA
// A module that says no target, run through a pass given none: an error naming the pass.
// RUN: sed 's/attributes {sched.target = #sched.target<cpu>}//' %s | not sotc-opt --split-input-file --pass-pipeline="builtin.module(mapexpr.kernel(sotc-mapexpr-schedule))" 2>&1 | FileCheck %s --check-prefix=NONE
// sotc-attach-target sets it, and refuses to change it.
// RUN: sed 's/attributes {sched.target = #sched.target<cpu>}//' %s | sotc-opt --split-input-file --sotc-attach-target=target=cuda | FileCheck %s --check-prefix=ATTACH
// RUN: not sotc-opt %s --split-input-file --sotc-attach-target=target=cuda 2>&1 | FileCheck %s --check-prefix=CONFLICT
// RUN: not sotc-opt %s --split-input-file --sotc-attach-target=target=tpu 2>&1 | FileCheck %s --check-prefix=BAD

// NONE: error: sotc-mapexpr-schedule: the module says no target (sched.target = #sched.target<cuda> or <cpu>) and the pass was given none (target=cuda or target=cpu)
// ATTACH: module attributes {sched.target = #sched.target<cuda>}
// CONFLICT: error: sotc-attach-target: the module is compiled for cpu, not cuda
// BAD: error: sotc-attach-target: target must be cuda or cpu, not 'tpu'

// A float32 3x3 convolution: a oneDNN step on the CPU; windows and a GEMM on CUDA.
// CONV-CPU-LABEL:  sir.subgraph @conv3x3
// CONV-CPU-NEXT:     sir.prim conv2d
// CONV-CUDA-LABEL: sir.subgraph @conv3x3
// CONV-CUDA-NEXT:    sir.prim window
// CONV-CUDA:         sir.prim matmul
module attributes {sched.target = #sched.target<cpu>} {
sir.subgraph @conv3x3(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32> {
  %y = sir.prim conv2d(%x, %w) {name = "y", dilations = array<i64: 1, 1>, pads = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  sir.output %y : tensor<1x6x8x8xf32>
}
}

// -----

// A float16 matmul: cuBLASLt takes it; OpenBLAS does not, so the CPU keeps the group.
// GEMM-CPU-LABEL:  sir.subgraph @half
// GEMM-CPU-NOT:      mapexpr.gemm
// GEMM-CPU:          sir.group "matmul_0" "matmul"
// GEMM-CUDA-LABEL: sir.subgraph @half
// GEMM-CUDA-NEXT:    mapexpr.gemm "matmul_0"
module attributes {sched.target = #sched.target<cpu>} {
sir.subgraph @half(%x: tensor<8x16xf16>, %w: tensor<16x32xf16>) -> tensor<8x32xf16> {
  %0 = sir.group "matmul_0" "matmul"(%x, %w) : (tensor<8x16xf16>, tensor<16x32xf16>) -> tensor<8x32xf16> {
  ^bb0(%a: tensor<8x16xf16>, %c: tensor<16x32xf16>):
    %m = sir.prim matmul(%a, %c) {name = "mm", transpose_x = false, transpose_y = false} : (tensor<8x16xf16>, tensor<16x32xf16>) -> tensor<8x32xf16>
    sir.yield %m : tensor<8x32xf16>
  }
  sir.output %0 : tensor<8x32xf16>
}
}

// -----

// A row reduction: rows on blocks and threads across a row on CUDA; a parallel loop of rows
// and a serial loop within one on the CPU. Lowered: loops on the CPU, a gpu.func on CUDA.
// SCHED-CPU:  loops = [#sched.loop<S0x, 4>, #sched.loop<Temporal, 8>]
// SCHED-CUDA: loops = [#sched.loop<S0x, 4>, #sched.loop<S1x, 32>, #sched.loop<Temporal, 1>]
// LOOPS-CPU-NOT:  gpu.module
// LOOPS-CPU:      func.func @exp_0_reduce_sum_1
// LOOPS-CUDA:     gpu.module @sotc_kernels
// LOOPS-CUDA:     gpu.func @exp_0_reduce_sum_1
module attributes {sched.target = #sched.target<cpu>} {
mapexpr.kernel @exp_0_reduce_sum_1(%arg0: tensor<4x8xf32> {mapexpr.name = "x"}) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %0 = mapexpr.tensor "var_1" : tensor<4x8xf32>
  %1 = mapexpr.tensor "var_2" : tensor<4x1xf32>
  mapexpr.anchored %0 : tensor<4x8xf32> attributes {dims = [#sched.injective<4>, #sched.reduced<8>]} {
    mapexpr.op "exp" outs(%0 : tensor<4x8xf32>) ins(%arg0 : tensor<4x8xf32>) {indices = [#mapexpr.index<[i0, i1]>, #mapexpr.index<[i0, i1]>]}
    mapexpr.op "reduce_sum_init" outs(%1 : tensor<4x1xf32>) {indices = [#mapexpr.index<[i0, 0]>]}
    mapexpr.op "reduce_sum_acc" outs(%1 : tensor<4x1xf32>) ins(%0 : tensor<4x8xf32>) {indices = [#mapexpr.index<[i0, 0]>, #mapexpr.index<[i0, i1]>]}
  }
  mapexpr.return %0, %1 : tensor<4x8xf32>, tensor<4x1xf32>
}
}
