//===- SirEmitter.h - A translation as sir dialect IR -------------------------------------===//
#ifndef SOTC_FRONTEND_SIREMITTER_H
#define SOTC_FRONTEND_SIREMITTER_H

#include "compiler/frontend/Translation.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace sotc::frontend {

/// One sir.subgraph per segment; statements become sir.call ops located at their Python
/// line. The context must have the sir dialect loaded. The module is verified.
mlir::OwningOpRef<mlir::ModuleOp> emitSir(const Translation &translation,
                                          mlir::MLIRContext &context);

} // namespace sotc::frontend

#endif // SOTC_FRONTEND_SIREMITTER_H
