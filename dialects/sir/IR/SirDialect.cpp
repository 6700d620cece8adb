#include "dialects/sir/IR/SirDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace sotc::sir;

#include "dialects/sir/IR/SirDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/sir/IR/SirAttrs.cpp.inc"

void SirDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/sir/IR/SirAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/sir/IR/SirOps.cpp.inc"
      >();
}
