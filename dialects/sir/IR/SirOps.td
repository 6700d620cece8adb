//===- SirOps.td - sir subgraphs and statements -------------------------------------------===//
#ifndef SOTC_DIALECT_SIR_OPS
#define SOTC_DIALECT_SIR_OPS

include "dialects/sir/IR/SirAttrs.td"
include "dialects/sir/IR/SirPrimitives.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Sir_SubgraphOp : Sir_Op<"subgraph", [FunctionOpInterface, IsolatedFromAbove]> {
  let summary = "One compiled subgraph (SIR_N): tensors in, tensors out";
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() { return getFunctionType().getResults(); }
  }];
}

def Sir_CallOp : Sir_Op<"call"> {
  let summary = "One Python-level call on tensors";
  let description = [{
    ```mlir
    %2 = sir.call "api" "paddle.add"(%0) {args = [#sir.arg<0>, 1 : i64], kwargs = []}
         : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("prog.py":7:0)
    ```
    `kind` is "api" (a library function), "method" (a tensor method; the tensor is the first
    argument) or "operator" (a Python operator such as `__add__`). `op` names the
    operator-library entry the call resolved to (`Tensor.sum`, `paddle.add`); `sotc ops OP`
    shows it. Each tensor operand is referenced exactly once by a `#sir.arg<N>` inside
    `args` or `kwargs`.
  }];
  let arguments = (ins StrAttr:$kind, StrAttr:$callee, StrAttr:$op, ArrayAttr:$args,
                       ArrayAttr:$kwargs, Variadic<AnyRankedTensor>:$tensors,
                       OptionalAttr<StrArrayAttr>:$names);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $kind $callee `(` $tensors `)` attr-dict `:` functional-type($tensors, $results)
  }];
  let hasVerifier = 1;
}

def Sir_PrimOp : Sir_Op<"prim", [Pure]> {
  let summary = "One primitive of the operator library (after sotc-sir-decompose)";
  let description = [{
    ```mlir
    %2 = sir.prim broadcast_to(%1) {shape = array<i64: 4, 8>} : (tensor<f32>) -> tensor<4x8xf32>
    %3 = sir.prim max(%0, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
    The primitive is an enum generated from compiler/ops/Primitives.def, the list the
    operator library uses (`sotc ops` lists it); each kind of primitive requires its own
    attributes (the verifier checks them). `name` is the Python-level name of the result,
    where the frontend or the fuse pass gave it one. Primitives are
    strict: elementwise operands share one shape and element type, so every index mapping is
    explicit. fill_constant and cast take their dtype from the result type. `window` gathers
    the 2-d windows of an NCHW tensor (`kernel`, `strides`, `dilations` and the leading
    `pads`, each (h, w); `value` where a window reaches outside). A `slice` takes
    `ends - starts` elements of each of its `axes` (`steps` apart); an end that is a dynamic
    size is written as its dimension, `-1 - k` for s_k (x[:, 1:] of s1 ends at -2 and takes
    s1 - 1, a derived size):
    `tensor<NxCxHxW>` -> `tensor<NxCxKHxKWxOHxOW>`. `conv2d` convolves an NCHW tensor with
    an `[OC, C/groups, KH, KW]` weight (`strides`, `dilations`, leading `pads`, zeros
    outside; `groups`, 1 where absent, slices the channels, each slice convolved with its own
    OC/groups filters): `tensor<NxCxHxW>`, `tensor<OCx(C/groups)xKHxKW>` -> `tensor<NxOCxOHxOW>`.
    `argsort` gives the positions that sort its operand along `axis` (stable; `descending`
    where set): `tensor<...xT>` -> `tensor<...xi64>`, a step the runtime runs.
  }];
  let arguments = (ins Sir_PrimitiveAttr:$prim, Variadic<AnyRankedTensor>:$operands,
                       OptionalAttr<F64Attr>:$value,
                       OptionalAttr<DenseI64ArrayAttr>:$shape,
                       OptionalAttr<DenseI64ArrayAttr>:$perm,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       OptionalAttr<DenseI64ArrayAttr>:$starts,
                       OptionalAttr<DenseI64ArrayAttr>:$ends,
                       OptionalAttr<DenseI64ArrayAttr>:$steps,
                       OptionalAttr<I64Attr>:$axis,
                       OptionalAttr<DenseI64ArrayAttr>:$kernel,
                       OptionalAttr<DenseI64ArrayAttr>:$strides,
                       OptionalAttr<DenseI64ArrayAttr>:$dilations,
                       OptionalAttr<DenseI64ArrayAttr>:$pads,
                       OptionalAttr<I64Attr>:$groups,
                       OptionalAttr<BoolAttr>:$keepdim,
                       OptionalAttr<BoolAttr>:$descending,
                       OptionalAttr<BoolAttr>:$transpose_x,
                       OptionalAttr<BoolAttr>:$transpose_y,
                       OptionalAttr<StrAttr>:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $prim `(` $operands `)` attr-dict `:` functional-type($operands, $result)
  }];
  let hasVerifier = 1;
}

def Sir_GroupOp : Sir_Op<"group", [IsolatedFromAbove]> {
  let summary = "A fusion group: the primitives that will become one kernel (sotc-sir-fuse)";
  let description = [{
    ```mlir
    %0 = sir.group "fill_constant_1_sin_0_max_2" "injective"(%x) : (tensor<64xf32>) -> tensor<64xf32> {
    ^bb0(%a: tensor<64xf32>):
      ...sir.prim ops...
      sir.yield %r : tensor<64xf32>
    }
    ```
    The name follows CINN: each primitive's name and its index in the subgraph, joined by
    `_`, constants first. `kind` is "injective" (elementwise, broadcast and layout
    primitives), "reduction" (at least one reduction), "matmul" (a matmul on its own) or
    "conv" (a conv2d on its own).
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$kind, Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $name $kind `(` $inputs `)` attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
}

def Sir_YieldOp : Sir_Op<"yield", [Terminator, ReturnLike, HasParent<"GroupOp">]> {
  let summary = "A fusion group's results";
  let arguments = (ins Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "($results^ `:` type($results))? attr-dict";
}

def Sir_OutputOp : Sir_Op<"output", [Terminator, ReturnLike, HasParent<"SubgraphOp">]> {
  let summary = "The subgraph's results";
  let arguments = (ins Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "($results^ `:` type($results))? attr-dict";
}

#endif // SOTC_DIALECT_SIR_OPS
