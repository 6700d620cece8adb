//===- Passes.td - The CPU target's passes -------------------------------------------------===//
#ifndef SOTC_TARGET_CPU_PASSES
#define SOTC_TARGET_CPU_PASSES

include "mlir/Pass/PassBase.td"

def CpuKernelAbi : Pass<"sotc-cpu-kernel-abi", "::mlir::ModuleOp"> {
  let summary = "Give every kernel the CPU ABI: a [begin, end) range of its grid, then its buffers";
  let description = [{
    A lowered kernel (`func.func` whose body is one `scf.forall` over the blocks, mapped to
    `#gpu.block<x>`) becomes `func.func @k(%begin: index, %end: index, outputs..., inputs...)`
    whose grid loop runs blocks `begin` to `end`: the runtime's thread pool splits the grid
    into ranges and calls the kernel once per range. Lowered with bare pointers, the C
    signature is `void k(int64_t begin, int64_t end, T *out0, ..., T *in0, ...)`; shapes
    are static and recorded in the manifest. Per-block scratch (`memref.alloca`) moves out of
    the grid loop: one buffer per call, reused row after row. The buffers are `noalias`: the
    runtime never passes overlapping ones.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect"];
}

def CpuApproximateMath : Pass<"sotc-cpu-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Inline polynomial approximations of f32 exp, log and tanh-like functions, "
                "and powers by constants as products";
  let description = [{
    Rewrites f32 `math.exp`, `expm1`, `log`, `log1p`, `log2`, `tanh` and `erf` into MLIR's
    polynomial approximations (range reduction, then a polynomial in `math.fma`), accurate to
    a few ulp. Unlike a call to a vector math library, the result is plain arithmetic that the
    loop vectorizer keeps inline: no call, no spilling of every live vector around it. A
    fused elementwise kernel with an `exp` then runs at memory speed instead of at the speed
    of the call. Other functions (sin, cos, f64 anything) keep their library calls (libmvec
    variants where they exist), which are accurate over the whole range. A power by a constant
    that MLIR's algebraic simplification knows (x^2, x^3 and x^4 as products, x^0.5 as sqrt,
    x^-1, x^-0.5) is that arithmetic, not a scalar `powf` call per element: GPT-2's tanh GELU
    cubes its input.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def CpuExpandArith : Pass<"sotc-cpu-expand-arith", "::mlir::ModuleOp"> {
  let summary = "Expand the arith ops LLVM has no instruction for, and only those";
  let description = [{
    Integer floor and ceil division (Python's `//` on integers) and bf16 conversions become
    plain arithmetic. Unlike upstream `arith-expand`, `maximumf` and `minimumf` are left for
    `llvm.maximum`/`llvm.minimum`: expanded into compare-and-select they are a loop-carried
    branch that the vectorizer cannot turn into a reduction, and a row max (softmax) runs one
    element at a time.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // SOTC_TARGET_CPU_PASSES
