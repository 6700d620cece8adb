//===- Passes.h - sir fusion groups to mapexpr kernels and library steps ----------------===//
#ifndef SOTC_CONVERSION_SIRTOMAPEXPR_PASSES_H
#define SOTC_CONVERSION_SIRTOMAPEXPR_PASSES_H

#include "dialects/mapexpr/IR/MapExprDialect.h"
#include "dialects/sir/IR/SirDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace sotc {

#define GEN_PASS_DECL_CONVERTCONVTOSTEP
#define GEN_PASS_DECL_CONVERTINDEXCOPYTOSTEP
#define GEN_PASS_DECL_CONVERTMATMULTOGEMM
#define GEN_PASS_DECL_CONVERTRUNTIMEPRIMSTOSTEPS
#define GEN_PASS_DECL_CONVERTSIRTOMAPEXPR
#define GEN_PASS_REGISTRATION
#include "compiler/conversion/SirToMapExpr/Passes.h.inc"

} // namespace sotc

#endif // SOTC_CONVERSION_SIRTOMAPEXPR_PASSES_H
