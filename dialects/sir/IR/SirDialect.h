//===- SirDialect.h - The sir dialect -----------------------------------------------------===//
#ifndef SOTC_DIALECT_SIR_IR_SIRDIALECT_H
#define SOTC_DIALECT_SIR_IR_SIRDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/sir/IR/SirDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/sir/IR/SirAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/sir/IR/SirOps.h.inc"

#endif // SOTC_DIALECT_SIR_IR_SIRDIALECT_H
