//===- Passes.h - Passes over MapExpr kernels ---------------------------------------------===//
#ifndef SOTC_DIALECT_MAPEXPR_TRANSFORMS_PASSES_H
#define SOTC_DIALECT_MAPEXPR_TRANSFORMS_PASSES_H

#include "dialects/mapexpr/IR/MapExprDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace sotc::mapexpr {

#define GEN_PASS_DECL
#include "dialects/mapexpr/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/mapexpr/Transforms/Passes.h.inc"

} // namespace sotc::mapexpr

#endif // SOTC_DIALECT_MAPEXPR_TRANSFORMS_PASSES_H
