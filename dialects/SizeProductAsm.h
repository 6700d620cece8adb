//===- SizeProductAsm.h - contract::SizeProduct as an attribute parameter -----------------===//
//
// The dialects' attributes that hold a size (#sir.size, #sir.dims, #sched.size) print and parse
// it as its one text form, quoted ("64*s0*s1^2"), with contract::SizeProduct's parser.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_DIALECTS_SIZEPRODUCTASM_H
#define SOTC_DIALECTS_SIZEPRODUCTASM_H

#include "contract/SizeProduct.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/Hashing.h"

namespace sotc::contract {
inline llvm::hash_code hash_value(const SizeProduct &p) {
  return llvm::hash_combine(p.factor, llvm::hash_combine_range(p.powers.begin(), p.powers.end()));
}
inline mlir::AsmPrinter &operator<<(mlir::AsmPrinter &printer, const SizeProduct &p) {
  printer.printString(p.text());
  return printer;
}
} // namespace sotc::contract

template <> struct mlir::FieldParser<sotc::contract::SizeProduct> {
  static mlir::FailureOr<sotc::contract::SizeProduct> parse(mlir::AsmParser &parser) {
    llvm::SMLoc loc = parser.getCurrentLocation();
    std::string text;
    if (parser.parseString(&text))
      return mlir::failure();
    if (std::optional<sotc::contract::SizeProduct> p = sotc::contract::SizeProduct::parse(text))
      return *p;
    return parser.emitError(loc, "a size is a number times powers of s0..s7 (\"64*s0*s1^2\"), "
                                 "not '")
           << text << "'";
  }
};

#endif // SOTC_DIALECTS_SIZEPRODUCTASM_H
