//===- Passes.td - sir fusion groups to mapexpr kernels -----------------------------------===//
#ifndef SOTC_CONVERSION_SIRTOMAPEXPR_PASSES
#define SOTC_CONVERSION_SIRTOMAPEXPR_PASSES

include "mlir/Pass/PassBase.td"

def ConvertSirToMapExpr : Pass<"sotc-convert-sir-to-mapexpr", "::mlir::ModuleOp"> {
  let summary = "Turn each sir.group into a mapexpr.kernel and launch it";
  let description = [{
    Runs after sotc-sir-fuse. For every fusion group: split it into AnchoredMapStmts (a new
    one where a reduction's result is needed whole), pick each anchor, infer every tensor's
    index from the anchor's iterators (dot / undot / broadcast / affine equations; a conflict
    is an error), mark the schedule dims a reduction runs over, and emit the kernel at module
    level; the group becomes a `mapexpr.launch` of it. Kernels are not scheduled yet.
  }];
  let dependentDialects = ["::sotc::mapexpr::MapExprDialect", "::sotc::sched::SchedDialect"];
}

def ConvertConvToStep : Pass<"sotc-convert-conv-to-step", "::sotc::sir::SubgraphOp"> {
  let summary = "Turn conv groups into mapexpr.conv library steps, with their epilogue";
  let description = [{
    Runs after sotc-sir-fuse, before sotc-convert-sir-to-mapexpr. Every conv group (a conv2d
    sotc-sir-expand-convolutions kept for the target) becomes a `mapexpr.conv` step of the
    subgraph. When the convolution's only reader is a group that only adds a bias per output
    channel and/or a residual of the result's shape, then applies relu, relu6 or hardswish
    (or none), that group folds into the step and goes; a residual that is another
    convolution plus its bias (a downsampling ResNet block) makes that convolution a step with
    the bias, computed first. With `bf16` (`--precision bf16`) every step but a depthwise
    one (memory-bound) computes in bfloat16 with float32 accumulation (its `bf16`
    attribute).
  }];
  let options = [
    Option<"bf16", "bf16", "bool", /*default=*/"false",
           "the steps read x and the weight in bfloat16, accumulating in float32">,
  ];
  let dependentDialects = ["::sotc::mapexpr::MapExprDialect"];
}

def ConvertIndexCopyToStep : Pass<"sotc-convert-index-copy-to-step", "::sotc::sir::SubgraphOp"> {
  let summary = "Turn index_copy groups into mapexpr.index_copy steps, in place into state";
  let description = [{
    Runs after sotc-sir-fuse, before sotc-convert-sir-to-mapexpr. Every index_copy (alone in
    its group) becomes a `mapexpr.index_copy` step, which the runtime runs by copying the
    slices the index names. The step is `in_place` where the tensor it writes is a state
    weight of the entry subgraph (`sir.state`, a KV cache the program overwrites) or an
    in-place step's result, and the step is its only reader: the runtime then writes the
    state's buffer and copies nothing else.
  }];
  let dependentDialects = ["::sotc::mapexpr::MapExprDialect"];
}

def ConvertRuntimePrimsToSteps
    : Pass<"sotc-convert-runtime-prims-to-steps", "::sotc::sir::SubgraphOp"> {
  let summary = "Turn nonzero, nms and argsort groups into the runtime's steps";
  let description = [{
    Runs after sotc-sir-fuse, before sotc-convert-sir-to-mapexpr. Every nonzero primitive
    (alone in its group: nonzero's rows at their bound, torch.nonzero_static) becomes a
    `mapexpr.nonzero` step, which the runtime runs in one pass over its input, every nms
    (torchvision's non-maximum suppression) a `mapexpr.nms` step, the greedy loop over the
    boxes sorted by score, and every argsort a `mapexpr.argsort` step, a sort of each row.
  }];
  let dependentDialects = ["::sotc::mapexpr::MapExprDialect"];
}

def ConvertMatmulToGemm : Pass<"sotc-convert-matmul-to-gemm", "::sotc::sir::SubgraphOp"> {
  let summary = "Turn matmul groups that a GEMM library can run into mapexpr.gemm steps";
  let description = [{
    Runs after sotc-sir-fuse, before sotc-convert-sir-to-mapexpr. A matmul group of an
    element type the target's GEMM library takes (cpu: OpenBLAS, f32 and f64; cuda:
    cuBLASLt, also f16 and bf16) becomes a `mapexpr.gemm` step of the subgraph; other matmuls
    stay groups and become loop kernels. When the matmul's only reader is a group that only
    adds a broadcast bias row, the bias folds into the step as its epilogue and that group
    goes; a bias add or activation inside a larger group stays there (fused, it is free).
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "cuda or cpu (default: the module's sched.target)">,
  ];
  let dependentDialects = ["::sotc::mapexpr::MapExprDialect"];
}

#endif // SOTC_CONVERSION_SIRTOMAPEXPR_PASSES
