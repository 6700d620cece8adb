#include "dialects/sir/IR/SirDialect.h"

#include "mlir/Interfaces/FunctionImplementation.h"

using namespace mlir;
using namespace sotc::sir;

#define GET_OP_CLASSES
#include "dialects/sir/IR/SirOps.cpp.inc"

//===-- SubgraphOp ------------------------------------------------------------------------===//

ParseResult SubgraphOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildType = [](Builder &builder, ArrayRef<Type> args, ArrayRef<Type> results,
                      function_interface_impl::VariadicFlag, std::string &) {
    return builder.getFunctionType(args, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false, getFunctionTypeAttrName(result.name), buildType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void SubgraphOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(p, *this, /*isVariadic=*/false,
                                           getFunctionTypeAttrName(), getArgAttrsAttrName(),
                                           getResAttrsAttrName());
}

LogicalResult SubgraphOp::verify() {
  if (getBody().empty())
    return emitOpError("needs a body");
  Block &entry = getBody().front();
  if (entry.getArgumentTypes() != getArgumentTypes())
    return emitOpError("block arguments do not match the subgraph's input types");
  auto output = dyn_cast<OutputOp>(entry.getTerminator());
  if (!output)
    return emitOpError("must end with sir.output");
  if (TypeRange(output.getResults()) != TypeRange(getResultTypes()))
    return output.emitOpError("result types do not match the subgraph's result types");
  return success();
}

//===-- CallOp ----------------------------------------------------------------------------===//

/// Counts the operand references inside an argument value, checking each index.
static LogicalResult countRefs(CallOp op, Attribute value, SmallVectorImpl<unsigned> &uses) {
  if (auto ref = dyn_cast<OperandRefAttr>(value)) {
    if (ref.getIndex() >= uses.size())
      return op.emitOpError("argument #sir.arg<")
             << ref.getIndex() << "> refers past the " << uses.size() << " tensor operands";
    ++uses[ref.getIndex()];
    return success();
  }
  if (auto array = dyn_cast<ArrayAttr>(value)) {
    for (Attribute item : array)
      if (failed(countRefs(op, item, uses)))
        return failure();
    return success();
  }
  if (auto tuple = dyn_cast<TupleAttr>(value))
    return countRefs(op, tuple.getItems(), uses);
  if (auto kw = dyn_cast<KeywordAttr>(value))
    return countRefs(op, kw.getValue(), uses);
  return success();
}

LogicalResult CallOp::verify() {
  StringRef kind = getKind();
  if (kind != "api" && kind != "method" && kind != "operator")
    return emitOpError("kind must be \"api\", \"method\" or \"operator\", not \"") << kind << "\"";
  if (getCallee().empty())
    return emitOpError("needs a callee name");
  for (Attribute kw : getKwargs())
    if (!isa<KeywordAttr>(kw))
      return emitOpError("kwargs must hold #sir.kw<name, value> entries");
  SmallVector<unsigned> uses(getTensors().size(), 0);
  if (failed(countRefs(*this, getArgs(), uses)) || failed(countRefs(*this, getKwargs(), uses)))
    return failure();
  for (auto [index, count] : llvm::enumerate(uses))
    if (count != 1)
      return emitOpError("tensor operand ") << index << " is referenced " << count
                                             << " times in args/kwargs (expected once)";
  if ((kind == "method" || kind == "operator") &&
      (getArgs().empty() || !isa<OperandRefAttr>(getArgs()[0])))
    return emitOpError("a ") << kind << " call's first argument must be a tensor";
  return success();
}
