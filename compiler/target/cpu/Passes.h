//===- Passes.h - The CPU target's passes --------------------------------------------------===//
#ifndef SOTC_TARGET_CPU_PASSES_H
#define SOTC_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace sotc::cpu {

#define GEN_PASS_DECL_CPUKERNELABI
#define GEN_PASS_DECL_CPUAPPROXIMATEMATH
#define GEN_PASS_DECL_CPUEXPANDARITH
#define GEN_PASS_REGISTRATION
#include "compiler/target/cpu/Passes.h.inc"

} // namespace sotc::cpu

#endif // SOTC_TARGET_CPU_PASSES_H
