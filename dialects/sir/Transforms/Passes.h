//===- Passes.h - Passes over the sir dialect ---------------------------------------------===//
#ifndef SOTC_DIALECT_SIR_TRANSFORMS_PASSES_H
#define SOTC_DIALECT_SIR_TRANSFORMS_PASSES_H

#include "dialects/sir/IR/SirDialect.h"

#include "mlir/Pass/Pass.h"

namespace sotc::sir {

#define GEN_PASS_DECL
#include "dialects/sir/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/sir/Transforms/Passes.h.inc"

} // namespace sotc::sir

#endif // SOTC_DIALECT_SIR_TRANSFORMS_PASSES_H
