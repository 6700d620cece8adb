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

def SchedChooseStandIns : Pass<"sotc-choose-stand-ins", "::mlir::ModuleOp"> {
  let summary = "Say on the module which stand-ins its dynamic sizes have: sched.stand_ins";
  let description = [{
    The kernel models, schedules and loops hold each dynamic size s_k as a prime stand-in
    (sched::SizeStandIns), so a size holds s_k exactly where it is a multiple of s_k's. The
    stand-ins are the first primes from 4099 that divide no static dimension of the module's
    tensors: a model with a static dimension of 4099 has others. Where they are not the first
    eight the pass writes them on the module (sched.stand_ins = array<i64: ...>), and every
    pass after it reads them there. A module that already says its stand-ins keeps them, and
    is an error where one divides a static dimension.
  }];
  let dependentDialects = ["::sotc::sched::SchedDialect"];
}

#endif // SOTC_DIALECT_SCHED_PASSES
