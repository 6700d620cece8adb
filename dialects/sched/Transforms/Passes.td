//===- Passes.td - Passes over the sched dialect's module attributes ----------------------===//
#ifndef SOTC_DIALECT_SCHED_PASSES
#define SOTC_DIALECT_SCHED_PASSES

include "mlir/Pass/PassBase.td"

def SchedAttachTarget : Pass<"sotc-attach-target", "::mlir::ModuleOp"> {
  let summary = "Say on the module what it is compiled for: sched.target = #sched.target<...>";
  let description = [{
    The pipeline's first pass, as upstream's nvvm-attach-target. Every pass whose output
    depends on the target (the convolutions a target runs as steps, the GEMMs its library
    takes, the schedule policy, loops or GPU kernels) reads the module's target, so a pass run
    alone on a module compiles for that module's target. A module that already names another
    target is an error.
  }];
  let dependentDialects = ["::sotc::sched::SchedDialect"];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"", "cuda or cpu">,
  ];
}

#endif // SOTC_DIALECT_SCHED_PASSES
