#include "dialects/sir/IR/SirDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace sotc::sir;

#include "dialects/sir/IR/SirDialect.cpp.inc"
#include "dialects/sir/IR/SirEnums.cpp.inc"

#define PRIM(name, text, kind)                                                                     \
  static_assert(static_cast<int>(Primitive::name) == static_cast<int>(sotc::ops::Prim::name),      \
                "sir::Primitive and ops::Prim come from one list");
#include "compiler/ops/Primitives.def"
#undef PRIM

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
