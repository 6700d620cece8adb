//===- SirBase.td - The sir dialect: PaddleSOT-style statement IR -------------------------===//
#ifndef SOTC_DIALECT_SIR_BASE
#define SOTC_DIALECT_SIR_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Sir_Dialect : Dialect {
  let name = "sir";
  let cppNamespace = "::sotc::sir";
  let summary = "Statement IR: one op per Python-level tensor call, grouped into subgraphs";
  let description = [{
    The frontend's output. A `sir.subgraph` (`SIR_0`, `SIR_1`, ...) takes tensors and returns
    tensors; inside, each `sir.call` is one Python-level call as PaddleSOT records it: the
    callee's qualified name, its kind (api, method, operator), its positional and keyword
    arguments (tensors by operand, Python constants as attributes), and the Python source
    line as its location.
  }];
  let useDefaultAttributePrinterParser = 1;
}

class Sir_Op<string mnemonic, list<Trait> traits = []> : Op<Sir_Dialect, mnemonic, traits>;
class Sir_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Sir_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // SOTC_DIALECT_SIR_BASE
