//===- SirAttrs.td - Python values as call arguments --------------------------------------===//
//
// A call's `args` and `kwargs` hold its arguments in order: `#sir.arg<N>` stands for tensor
// operand N; Python constants use builtin attributes (i64 ints, f64 floats, bools, strings,
// arrays for lists) or the attributes below.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_DIALECT_SIR_ATTRS
#define SOTC_DIALECT_SIR_ATTRS

include "dialects/sir/IR/SirBase.td"

def Sir_OperandRefAttr : Sir_Attr<"OperandRef", "arg"> {
  let summary = "The call's tensor operand with this index";
  let parameters = (ins "unsigned":$index);
  let assemblyFormat = "`<` $index `>`";
}

def Sir_NoneAttr : Sir_Attr<"None", "none"> {
  let summary = "Python's None";
}

def Sir_EllipsisAttr : Sir_Attr<"Ellipsis", "ellipsis"> {
  let summary = "Python's Ellipsis (`...`)";
}

def Sir_TupleAttr : Sir_Attr<"Tuple", "tuple"> {
  let summary = "A Python tuple (a builtin array is a list)";
  let parameters = (ins "::mlir::ArrayAttr":$items);
  let assemblyFormat = "`<` $items `>`";
}

def Sir_SliceAttr : Sir_Attr<"Slice", "slice"> {
  let summary = "A Python slice; each part is #sir.none or an integer";
  let parameters = (ins "::mlir::Attribute":$start, "::mlir::Attribute":$stop,
                        "::mlir::Attribute":$step);
  let assemblyFormat = "`<` $start `,` $stop `,` $step `>`";
}

def Sir_SizeAttr : Sir_Attr<"Size", "size"> {
  let summary = "A dynamic size passed as a Python int: x.shape[1] (s1), B * T (s0*s1)";
  let description = [{
    A size known at run time only, as the types' encodings write it (`#sir.size<"s0">`,
    `#sir.size<"s0*s1">`, `#sir.size<"2*s1">`): what a reshape, an expand, a slice bound or
    `arange` takes where Python passed `x.shape[d]` or arithmetic on it.
  }];
  let parameters = (ins "::sotc::contract::SizeProduct":$size);
  let assemblyFormat = "`<` $size `>`";
  let genVerifyDecl = 1;
}

def Sir_DimsAttr : Sir_Attr<"Dims", "dims"> {
  let summary = "The sizes of a tensor type's dynamic dimensions, in order (its encoding)";
  let description = [{
    `tensor<?x?x4xf32, #sir.dims<"s0*s1", "s1">>`: rows of a batch and a sequence merged,
    then the sequence. A type without it has s0 for every `?`.
  }];
  let parameters = (ins ArrayRefParameter<"::sotc::contract::SizeProduct">:$sizes);
  let assemblyFormat = "`<` $sizes `>`";
  let genVerifyDecl = 1;
}

def Sir_RefAttr : Sir_Attr<"Ref", "ref"> {
  let summary = "A library object by qualified name, e.g. paddle.float32";
  let parameters = (ins StringRefParameter<>:$name);
  let assemblyFormat = "`<` $name `>`";
}

def Sir_KeywordAttr : Sir_Attr<"Keyword", "kw"> {
  let summary = "A keyword argument: its name and value";
  let parameters = (ins StringRefParameter<>:$name, "::mlir::Attribute":$value);
  let assemblyFormat = "`<` $name `,` $value `>`";
}

#endif // SOTC_DIALECT_SIR_ATTRS
