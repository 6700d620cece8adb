//===- Passes.h - sir fusion groups to mapexpr kernels ------------------------------------===//
#ifndef SOTC_CONVERSION_SIRTOMAPEXPR_PASSES_H
#define SOTC_CONVERSION_SIRTOMAPEXPR_PASSES_H

#include "dialects/mapexpr/IR/MapExprDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace sotc {

#define GEN_PASS_DECL_CONVERTSIRTOMAPEXPR
#define GEN_PASS_REGISTRATION
#include "compiler/conversion/SirToMapExpr/Passes.h.inc"

} // namespace sotc

#endif // SOTC_CONVERSION_SIRTOMAPEXPR_PASSES_H
