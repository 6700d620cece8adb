//===- Passes.td - Passes over the sir dialect --------------------------------------------===//
#ifndef SOTC_DIALECT_SIR_PASSES
#define SOTC_DIALECT_SIR_PASSES

include "mlir/Pass/PassBase.td"

def SirFoldBatchNorm : Pass<"sotc-sir-fold-batch-norm", "::sotc::sir::SubgraphOp"> {
  let summary = "Fold inference batch norms into the convolutions before them";
  let description = [{
    Runs on API-level statements, before sotc-sir-decompose. `batch_norm(conv2d(x, W, b),
    mean, var, gamma, beta)` in inference (NCHW, the convolution read by nothing else, every
    parameter a model weight of the convolution's float dtype) becomes `conv2d(x, W', b')`
    with `s = gamma * rsqrt(var + eps)`, `W' = W * s` per output channel and
    `b' = (b - mean) * s + beta`, computed by primitives on the weights that
    sotc-sir-hoist-weights then moves out of the call. The convolution takes the norm's
    Python name.
  }];
}

def SirDecompose : Pass<"sotc-sir-decompose", "::sotc::sir::SubgraphOp"> {
  let summary = "Lower API-level sir.call statements to sir.prim primitives";
  let description = [{
    Each `sir.call` is resolved again against the operator library (its `op` entry and its
    Python arguments) and replaced by the entry's decomposition into the primitive set:
    elementwise primitives on operands of one shape and type, with explicit broadcast_to and
    cast, reductions with their axes, layout primitives with their attributes. The Python
    line of the call becomes every primitive's location. `sotc dump --prim` shows the result.
    Sizes a call derives (x[:, 1:] of T positions: T - 1) are the module's
    `sir.derived_sizes` ("s2=s1-1"), as the frontend numbered them; a call that would derive
    another is an error.
  }];
}

def SirExpandConvolutions : Pass<"sotc-sir-expand-convolutions", "::sotc::sir::SubgraphOp"> {
  let summary = "Expand the conv2d primitives the target runs no step for into windows and GEMMs";
  let description = [{
    Runs after sotc-sir-decompose. A conv2d stays where the target runs convolutions as
    library steps (`cpu`: float32 of static sizes, any groups); the others become
    the operator library's expansion (a dynamic batch's too: its GEMM takes the rows at run
    time): the windows (im2col) times the filters, one GEMM (over the whole batch's columns for
    small maps; batched over the groups; a depthwise one's taps times its filters, summed), the
    form every target's kernels and GEMM steps compute.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "cuda or cpu (default: the module's sched.target)">,
  ];
}

def SirUnmergeBatch : Pass<"sotc-sir-unmerge-batch", "::sotc::sir::SubgraphOp"> {
  let summary = "Compute rows flattened with their batch on the unflattened tensors";
  let description = [{
    Runs after sotc-sir-decompose, before sotc-sir-check-batch-dims. A reshape that merges a
    dynamic size with the dims after it (`[?, 16, 64] -> [16*s0, 64]`, `[B, T, C] -> [B*T,
    C]`: transformers' Conv1D flattening tokens with their batch around a GEMM) makes rows
    that are a product of sizes. Its row-wise users -- elementwise primitives (with broadcasts and constants of
    static values made again at the wider shape), a matmul with it as A's rows, reductions
    over the other dims, broadcasts within its rows, and a reshape that unmerges it again --
    are rewritten onto the unmerged tensor, so the merge disappears; what still reads the
    merged rows (a result) reads a view of the unmerged work. Other users keep the merging
    reshape, whose kernels index the rows by the product of the sizes.
  }];
}

def SirCheckBatchDims : Pass<"sotc-sir-check-batch-dims", "::sotc::sir::SubgraphOp"> {
  let summary = "Check that every dynamic dimension is a product of the dynamic sizes";
  let description = [{
    Runs after sotc-sir-decompose. sotc compiles the dynamic sizes `s0`, `s1`, ... of a
    function (a batch, a sequence length): every `?` of a tensor type is one of them or a
    product of them and a number (its encoding names which: `"s0,s1"`, `"s0*s1"`, `"16*s0"`),
    any number of times in a tensor (the `s0 x s0` scores of an attention), so that every
    size of the program is a static number times powers of the sizes (the kernels compute
    them from the sizes, the GEMM steps take them at run time, the manifest writes
    `64*s0*s1`). Elementwise primitives, broadcasts (of 1 or of a size to it), reductions and
    matmuls over any dimension, transposes, reshapes into the same product of elements,
    gathers with a size in the index and the window of a convolution over it as rows pass; a
    reshape that changes the number of elements, a slice or concatenation along a size, a
    static size it meets (which would pin it), a window or table over it is E4002 with its
    line.
  }];
}

def SirFoldEmptyTensors : Pass<"sotc-sir-fold-empty-tensors", "::sotc::sir::SubgraphOp"> {
  let summary = "Compute tensors with no elements by nothing";
  let description = [{
    Runs after sotc-sir-decompose. A primitive whose result has no elements becomes an
    operand-less `fill_constant` (sotc-sir-fuse leaves it outside every group: no kernel
    computes it, the runtime only shapes it). A primitive that reads such a tensor and has
    elements itself folds: a reduction over nothing to its identity (sum 0, prod 1, max
    -inf, min +inf), a matmul over k = 0 to zeros, a concat to the concat of its other
    operands. Any other is E4002.
  }];
}

def SirBf16Matmuls : Pass<"sotc-sir-bf16-matmuls", "::sotc::sir::SubgraphOp"> {
  let summary = "Compute float32 matmuls in bfloat16 (`sotc compile --precision bf16`)";
  let description = [{
    Runs after sotc-sir-decompose, before sotc-sir-widen-half. A float32 matmul of static
    shapes reads its operands rounded to bfloat16 and rounds its product once, which is
    widened for what reads it: a bfloat16 GEMM step with float32 accumulation (AMX or
    AVX-512 BF16 on the CPU, tensor cores on CUDA), as OpenVINO's bf16 inference precision
    and torch's CPU autocast compute. A weight operand's rounding is hoisted (done once, at
    load); normalizations, softmax and elementwise math stay float32. With `f32-products`
    (the CPU: oneDNN reads bfloat16 and stores float32) the product is not rounded: the
    matmul reads bfloat16 and returns float32, which what follows reads as it is.
  }];
  let options = [
    Option<"f32Products", "f32-products", "bool", /*default=*/"false",
           "a matmul of bfloat16 operands returns its float32 product">,
  ];
}

def SirWidenHalf : Pass<"sotc-sir-widen-half", "::sotc::sir::SubgraphOp"> {
  let summary = "Compute float16 and bfloat16 in float32";
  let description = [{
    Runs after sotc-sir-decompose. Every primitive that produces or reads a float16/bfloat16
    tensor is rebuilt on float32, as the frameworks compute half precision (float32
    registers, float32 accumulation): a half input is widened where it is read, a half
    output is rounded once before it is returned, and a cast to half the program asks for
    keeps its rounding (a cast to half and back). Layout primitives move the widened
    values; values between kernels stay in float32. With `half-matmuls` (CUDA), a matmul of
    half operands stays one: the GEMM library reads half, accumulates in float32 and rounds
    once when it stores (tensor cores; on the CPU, bfloat16 only: oneDNN's AMX and
    AVX-512 BF16 kernels).
  }];
  let options = [
    Option<"halfMatmuls", "half-matmuls", "bool", /*default=*/"false",
           "keep matmuls of half operands in half (a GEMM library with float32 accumulation "
           "runs them)">,
    Option<"bf16MatmulsOnly", "bf16-matmuls-only", "bool", /*default=*/"false",
           "with half-matmuls, only bfloat16 ones (the CPU's oneDNN has bfloat16 GEMMs with "
           "float32 accumulation, no float16 ones)">,
  ];
}

def SirStoreHalf : Pass<"sotc-sir-store-half", "::sotc::sir::SubgraphOp"> {
  let summary = "Store half values in half between kernels";
  let description = [{
    Runs after sotc-sir-fuse. A group result that sotc-sir-widen-half computed in float32
    for a half value (its `stored_as` attribute) and that only other, non-matmul groups
    read is rounded to the half type where its group yields it and widened back where each
    reader's body starts: kernels store and load half, compute in float32 (one rounding per
    kernel, as the frameworks round every stored result). Matmul groups keep float32.
  }];
}

def SirHoistWeights : Pass<"sotc-sir-hoist-weights", "::mlir::ModuleOp"> {
  let summary = "Move what depends on a model's weights alone into @prepare_weights";
  let description = [{
    Runs after sotc-sir-decompose. In the entry subgraph (the first), a primitive whose
    operands are weights (`sir.weight` arguments), hoisted results or operand-less constants,
    at least one a weight, is moved into a new `sir.subgraph @prepare_weights` whose
    arguments are those weights and whose results are the hoisted values the entry still
    reads; the entry reads them as trailing arguments named `prepared.<weight>` (after the
    largest weight each comes from). A value larger than the largest weight it comes from
    (a broadcast to an activation's shape) or returned by the entry stays. The runtime runs
    @prepare_weights once per set of weights: at load and after weights are rebound.
  }];
}

def SirFuse : Pass<"sotc-sir-fuse", "::sotc::sir::SubgraphOp"> {
  let summary = "Group primitives into fusion groups, one per future kernel";
  let description = [{
    Runs after sotc-sir-decompose. Walking the primitives in order, a producer's group and
    its consumer's group merge when neither holds a matmul or a concat, every tensor of the merged group
    can be indexed from its anchor (the largest tensor: equal element count, as reshapes and
    transposes keep, or broadcast-compatible, as reductions with keepdim and broadcast
    sources are), and the merge creates no cycle between groups. So elementwise, broadcast
    and layout primitives fuse, producers fuse into reductions, and a reduction's consumers
    that keep its row structure fuse after it (softmax, layer_norm, RMSNorm are one group);
    a matmul is a group of its own. The result is deterministic; groups are named as CINN
    names them (`fill_constant_1_sin_0_max_2`). A tensor with no elements (an operand-less
    fill after sotc-sir-fold-empty-tensors) stays outside every group: no kernel computes it.
  }];
}

#endif // SOTC_DIALECT_SIR_PASSES
