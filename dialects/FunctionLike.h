//===- FunctionLike.h - Shared assembly of sotc's function-like ops -----------------------===//
//
// sir.subgraph and mapexpr.kernel print and parse as func.func does (a symbol, typed block
// arguments with attributes, results, a body); this is the one implementation they share.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_DIALECTS_FUNCTIONLIKE_H
#define SOTC_DIALECTS_FUNCTIONLIKE_H

#include "mlir/Interfaces/FunctionImplementation.h"

namespace sotc {

template <typename OpTy>
mlir::ParseResult parseFunctionLike(mlir::OpAsmParser &parser, mlir::OperationState &result) {
  auto buildType = [](mlir::Builder &builder, llvm::ArrayRef<mlir::Type> args,
                      llvm::ArrayRef<mlir::Type> results,
                      mlir::function_interface_impl::VariadicFlag,
                      std::string &) { return builder.getFunctionType(args, results); };
  return mlir::function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false, OpTy::getFunctionTypeAttrName(result.name),
      buildType, OpTy::getArgAttrsAttrName(result.name), OpTy::getResAttrsAttrName(result.name));
}

template <typename OpTy> void printFunctionLike(mlir::OpAsmPrinter &p, OpTy op) {
  mlir::function_interface_impl::printFunctionOp(
      p, op, /*isVariadic=*/false, op.getFunctionTypeAttrName(), op.getArgAttrsAttrName(),
      op.getResAttrsAttrName());
}

} // namespace sotc

#endif // SOTC_DIALECTS_FUNCTIONLIKE_H
