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

#endif // SOTC_DIALECT_SIR_PASSES
