//===- Passes.td - Passes over MapExpr kernels --------------------------------------------===//
#ifndef SOTC_DIALECT_MAPEXPR_PASSES
#define SOTC_DIALECT_MAPEXPR_PASSES

include "mlir/Pass/PassBase.td"

def MapExprSchedule : Pass<"sotc-mapexpr-schedule", "::sotc::mapexpr::KernelOp"> {
  let summary = "Choose every AnchoredMapStmt's schedule mesh and loops by the target's policy";
  let description = [{
    A kernel is one launch, so its statements share one grid. GPU: an injective kernel
    flattens, pads to the block size and maps to blockIdx.x x threadIdx.x (+ Vectorize); a
    kernel with a reduction puts the reduction's rows on blocks, and every statement, the
    consumers of the reduction included, runs on those rows across the block's threads with
    per-thread Temporal loops. CPU: an outer parallel loop and an inner vector loop; with a
    reduction, rows on the parallel loop and within a row a serial reduction or a vector loop.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "cuda or cpu (default: the module's sched.target)">,
  ];
}

def MapExprSpillRows : Pass<"sotc-mapexpr-spill-rows", "::mlir::ModuleOp"> {
  let summary = "GPU: what a block keeps beyond its shared memory becomes a kernel output";
  let description = [{
    A CUDA block keeps the tensors one statement writes and a later one reads (a softmax's
    exponentials, a layer norm's centred row) in its shared memory, 48 KiB. When a scheduled
    kernel's tensors need more (a softmax over GPT-2's 50,257 logits: 201 KB a row), the
    largest of them become outputs of the kernel: global memory the runtime's arena provides,
    one more result of each `mapexpr.launch` that nothing reads, written and read back by the
    same block (a barrier separates the statements). What still fits stays shared. Rows of
    dynamic sizes stay in the launch's dynamic shared memory when `size-max` bounds each
    size they hold (s0 first: `size-max=64,512`) and, at the bounds, they fit what a kernel
    may opt in to (227 KiB); otherwise they become outputs too (dynamic ones, which the
    runtime's arena places per call).
  }];
  let options = [
    ListOption<"sizeMax", "size-max", "int64_t",
               "the most each dynamic size may be, s0 first (0 or none: no bound)">,
  ];
}

#endif // SOTC_DIALECT_MAPEXPR_PASSES
