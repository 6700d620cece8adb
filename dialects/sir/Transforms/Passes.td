//===- Passes.td - Passes over the sir dialect --------------------------------------------===//
#ifndef SOTC_DIALECT_SIR_PASSES
#define SOTC_DIALECT_SIR_PASSES

include "mlir/Pass/PassBase.td"

def SirDecompose : Pass<"sotc-sir-decompose", "::sotc::sir::SubgraphOp"> {
  let summary = "Lower API-level sir.call statements to sir.prim primitives";
  let description = [{
    Each `sir.call` is resolved again against the operator library (its `op` entry and its
    Python arguments) and replaced by the entry's decomposition into the primitive set:
    elementwise primitives on operands of one shape and type, with explicit broadcast_to and
    cast, reductions with their axes, layout primitives with their attributes. The Python
    line of the call becomes every primitive's location. `sotc dump --prim` shows the result.
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
    names them (`fill_constant_1_sin_0_max_2`).
  }];
}

#endif // SOTC_DIALECT_SIR_PASSES
