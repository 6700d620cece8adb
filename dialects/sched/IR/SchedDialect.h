//===- SchedDialect.h - The sched dialect -------------------------------------------------===//
#ifndef SOTC_DIALECT_SCHED_IR_SCHEDDIALECT_H
#define SOTC_DIALECT_SCHED_IR_SCHEDDIALECT_H

#include "dialects/SizeProductAsm.h"
#include "dialects/sched/Utils/Mesh.h"
#include "dialects/sched/Utils/Target.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

namespace sotc::sched {
inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, Target target) {
  return os << targetName(target);
}
} // namespace sotc::sched

/// `cuda` or `cpu`, the parameter of #sched.target.
template <> struct mlir::FieldParser<sotc::sched::Target> {
  static mlir::FailureOr<sotc::sched::Target> parse(mlir::AsmParser &parser) {
    llvm::SMLoc loc = parser.getCurrentLocation();
    llvm::StringRef name;
    if (parser.parseKeyword(&name))
      return mlir::failure();
    if (std::optional<sotc::sched::Target> target = sotc::sched::targetByName(name))
      return *target;
    return parser.emitError(loc, "a target is cuda or cpu, not '") << name << "'";
  }
};

#include "dialects/sched/IR/SchedDialect.h.inc"
#include "dialects/sched/IR/SchedEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/sched/IR/SchedAttrs.h.inc"

namespace sotc::sched {
/// The loop descriptors of `loops` (#sched.loop attributes).
std::vector<LoopDescriptor> loopsOf(mlir::ArrayAttr loops);
mlir::ArrayAttr loopsAttr(mlir::MLIRContext *ctx, const std::vector<LoopDescriptor> &loops);
std::vector<ScheduleDim> dimsOf(mlir::ArrayAttr dims);
mlir::ArrayAttr dimsAttr(mlir::MLIRContext *ctx, const std::vector<ScheduleDim> &dims);

/// A lowered kernel function over dynamic sizes: its grid's blocks (#sched.size), the sizes it
/// takes before its buffers where not s0 alone (an array of their numbers, increasing: [0, 1],
/// [1]), and, on CUDA, the shared bytes a launch gives each block (#sched.size). Its loops are
/// written for the sizes' stand-ins and never read these counts; the runtime does, per call.
inline constexpr llvm::StringLiteral kGridAttrName = "sched.grid";
inline constexpr llvm::StringLiteral kSizesAttrName = "sched.sizes";
inline constexpr llvm::StringLiteral kDynamicSharedAttrName = "sched.dynamic_shared_bytes";

/// The module attribute that names its sizes' stand-ins (SizeStandIns), an array of them, s0's
/// first; absent where they are the first eight.
inline constexpr llvm::StringLiteral kStandInsAttrName = "sched.stand_ins";
/// The stand-ins of the module around `op` (or `op` itself).
SizeStandIns standInsOf(mlir::Operation *op);
/// Writes `sizes` on `module` as its sched.stand_ins (none where they are the first).
void setStandIns(mlir::Operation *module, const SizeStandIns &sizes);

/// The module attribute that says what the module is compiled for (#sched.target<cpu>).
inline constexpr llvm::StringLiteral kTargetAttrName = "sched.target";
/// The target of the module around `op` (or `op` itself), if it says one.
std::optional<Target> moduleTarget(mlir::Operation *op);
/// What a pass whose output depends on the target compiles for: its `target` option where
/// given (an override), else the target of the module around `op`. Neither, or an option that
/// names no target, is an error on `op` that names `pass`.
mlir::FailureOr<Target> passTarget(mlir::Operation *op, llvm::StringRef option,
                                   llvm::StringRef pass);
} // namespace sotc::sched

#endif // SOTC_DIALECT_SCHED_IR_SCHEDDIALECT_H
