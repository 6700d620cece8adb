//===- MapExprOps.td - The mapexpr dialect: fused kernels in CINN's MapExpr model --------===//
#ifndef SOTC_DIALECT_MAPEXPR_OPS
#define SOTC_DIALECT_MAPEXPR_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def MapExpr_Dialect : Dialect {
  let name = "mapexpr";
  let cppNamespace = "::sotc::mapexpr";
  let summary = "Fused kernels: anchored map statements over schedule meshes";
  let description = [{
    A `mapexpr.kernel` is one fused kernel. Its body declares kernel-local tensors
    (`mapexpr.tensor`) and runs `mapexpr.anchored` statements in order; each has an anchor
    tensor whose iterators i0..iN index every tensor its `mapexpr.op` statements read or
    write, its schedule dims (injective / reduced), and once scheduled a `#sched.mesh` and
    the loop descriptors of its MapStmt. `mapexpr.launch` calls a kernel from a sir.subgraph.
  }];
  let dependentDialects = ["::sotc::sched::SchedDialect"];
  let useDefaultAttributePrinterParser = 1;
}

def MapExpr_IndexAttr : AttrDef<MapExpr_Dialect, "Index"> {
  let mnemonic = "index";
  // The body is read by the model's own parser (Utils/IndexExpr.h): MLIR's lexer does not
  // split CINN's syntax the way the model prints it.
  let hasCustomAssemblyFormat = 1;
  let summary = "One tensor's index: an expression over the anchor iterators per dimension";
  let description = [{
    `#mapexpr.index<[i0, ListGetItem(IndexUnDot(i1, [4, 8]), 1)]>`: CINN's index syntax
    (`i0`, constants, `(e * m + a)`, `IndexDot([...], [dims])`,
    `ListGetItem(IndexUnDot(e, [dims]), k)`). Stored as a flat code, so passes read the
    expressions through `getExprs()` without parsing text.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$code);
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The expressions, one per tensor dimension (verified, so this does not fail).
    std::vector<::sotc::mapexpr::Expr> getExprs() const;
    static IndexAttr get(::mlir::MLIRContext *ctx,
                         const std::vector<::sotc::mapexpr::Expr> &exprs);
  }];
}

class MapExpr_Op<string mnemonic, list<Trait> traits = []>
    : Op<MapExpr_Dialect, mnemonic, traits>;

def MapExpr_KernelOp : MapExpr_Op<"kernel", [FunctionOpInterface, IsolatedFromAbove, Symbol]> {
  let summary = "A fused kernel: outputs first, then inputs, as CINN prints it";
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

def MapExpr_TensorOp : MapExpr_Op<"tensor", [HasParent<"KernelOp">]> {
  let summary = "A kernel-local tensor (t_<name>)";
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def MapExpr_AnchoredOp : MapExpr_Op<"anchored", [HasParent<"KernelOp">, SingleBlock,
                                                 NoTerminator]> {
  let summary = "AnchoredMapStmt: statements over the anchor's iteration space";
  let description = [{
    `dims` are the schedule dims (#sched.injective / #sched.reduced) of the iteration space:
    the anchor's shape, or `space` when it extends the anchor (a matmul iterates its output
    plus the contracted dimension). After sotc-mapexpr-schedule, `mesh` maps them to loops
    and `loops` are the MapStmt's loop descriptors, which must agree with the mesh.
  }];
  let arguments = (ins AnyRankedTensor:$anchor, ArrayAttr:$dims,
                       OptionalAttr<DenseI64ArrayAttr>:$space,
                       OptionalAttr<AnyAttr>:$mesh, OptionalAttr<ArrayAttr>:$loops);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$anchor `:` type($anchor) attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def MapExpr_OpStmtOp : MapExpr_Op<"op", [HasParent<"AnchoredOp">, AttrSizedOperandSegments]> {
  let summary = "OpStmt: one primitive writing `outs` from `ins`";
  let description = [{
    `indices` holds one `#mapexpr.index` per argument (outputs, then inputs) with one index
    expression per tensor dimension, over the anchor iterators: `i0`, `0`, `(i0 * 2 + 1)`,
    `IndexDot([i0, i1], [4, 8])`, `ListGetItem(IndexUnDot(i0, [4, 8]), 1)`. `value` is a
    fill_constant's value.
  }];
  let arguments = (ins StrAttr:$name, Variadic<AnyRankedTensor>:$outs,
                       Variadic<AnyRankedTensor>:$ins,
                       TypedArrayAttrBase<MapExpr_IndexAttr, "one index per argument">:$indices,
                       OptionalAttr<F64Attr>:$value);
  let assemblyFormat = [{
    $name `outs` `(` $outs `:` type($outs) `)` (`ins` `(` $ins^ `:` type($ins) `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def MapExpr_ReturnOp : MapExpr_Op<"return", [Terminator, ReturnLike, HasParent<"KernelOp">]> {
  let summary = "The kernel's outputs";
  let arguments = (ins Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "($results^ `:` type($results))? attr-dict";
}

def MapExpr_LaunchOp : MapExpr_Op<"launch", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Runs a mapexpr.kernel on tensors of a sir.subgraph";
  let description = [{
    `names` are the Python-level names of the results, for the kernels that read them.
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<AnyRankedTensor>:$inputs,
                       OptionalAttr<StrArrayAttr>:$names);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "$kernel `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)";
}

def MapExpr_GemmOp : MapExpr_Op<"gemm"> {
  let summary = "A matmul group run by a GEMM library, as a step of a sir.subgraph";
  let description = [{
    `result = activation(a @ b + bias)` with matmul's transpose flags and batch
    broadcasting; `bias` (shape `[n]` or `[1, ..., 1, n]`, added to every row) and
    `activation` (`none`, `relu`, `gelu_tanh`, and `gelu_erf` on the CPU) are the epilogue
    folded in. The operands are of the result's type, or bfloat16 with a float32 result (the
    CPU's `--precision bf16`: the library reads bfloat16 and accumulates and stores float32).
    Not a kernel: the runtime calls the target's GEMM library (oneDNN or CBLAS on the CPU), so the
    manifest describes it with its m, n, k, leading dimensions and batch strides
    (Utils/Gemm.h). `name` is the fusion group's name; `names` the result's Python name.
  }];
  let arguments = (ins StrAttr:$name, AnyRankedTensor:$a, AnyRankedTensor:$b,
                       Optional<AnyRankedTensor>:$bias,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$activation,
                       OptionalAttr<StrArrayAttr>:$names);
  let results = (outs AnyRankedTensor:$result);
  let extraClassDeclaration = [{
    /// The library call's plan: m, n, k, leading dimensions, batch strides (verified, so
    /// this does not fail).
    ::sotc::mapexpr::GemmPlan getPlan();
  }];
  let assemblyFormat = [{
    $name `(` $a `,` $b (`bias` $bias^)? `)` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MapExpr_ConvOp : MapExpr_Op<"conv", [AttrSizedOperandSegments]> {
  let summary = "A conv2d group run by a convolution library, as a step of a sir.subgraph";
  let description = [{
    `result = activation(conv2d(x, weight) + bias + residual)` over NCHW tensors: `x`
    `[N, C, H, W]`, `weight` `[OC, C/groups, KH, KW]`, `strides`, `dilations` (h, w) and
    `pads` (top, bottom, left, right; zeros outside x), the result `[N, OC, OH, OW]`; `groups`
    slices the channels (each slice convolved with its own OC/groups filters; depthwise:
    groups = C = OC). The
    epilogue folded in: `bias` (OC elements, one per output channel), `residual` (a tensor of
    the result's shape, added before the activation: a residual block's skip connection) and
    `activation` (`none`, `relu`, `relu6`, `hardswish`).
    Not a kernel: the CPU runtime runs it as a oneDNN convolution (docs/manifest.md), so the
    manifest describes it by its sizes. `name` is the fusion group's name; `names` the
    result's Python name. `bf16` (`sotc compile --precision bf16`): the library reads x and
    the weight rounded to bfloat16 and accumulates in float32 (AMX, AVX-512 BF16); the
    result and the epilogue stay float32.
  }];
  let arguments = (ins StrAttr:$name, AnyRankedTensor:$x, AnyRankedTensor:$weight,
                       Optional<AnyRankedTensor>:$bias, Optional<AnyRankedTensor>:$residual,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads, DefaultValuedAttr<I64Attr, "1">:$groups,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$activation,
                       OptionalAttr<StrArrayAttr>:$names, UnitAttr:$bf16);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $name `(` $x `,` $weight (`bias` $bias^)? (`residual` $residual^)? `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MapExpr_IndexCopyOp : MapExpr_Op<"index_copy"> {
  let summary = "An index_copy run by the runtime, as a step of a sir.subgraph";
  let description = [{
    `result` is `x` with its slices at `index` (i64 `[M]`, negative from the end) along
    `axis` replaced by `source`'s M slices there (`source` has x's shape with M at `axis`;
    of a position written twice, the last write stays). Not a kernel: the runtime copies
    the M slices (a one-token write into a KV cache moves the token's bytes), after copying
    `x` into the result unless `in_place`. `in_place` (set where `x` is a state the program
    overwrites and nothing else reads: sotc-convert-index-copy-to-step) makes the result `x`'s
    own buffer, which the step updates: nothing is copied but the slices. `name` is the
    fusion group's name; `names` the result's Python name.
  }];
  let arguments = (ins StrAttr:$name, AnyRankedTensor:$x, AnyRankedTensor:$index,
                       AnyRankedTensor:$source, I64Attr:$axis, UnitAttr:$in_place,
                       OptionalAttr<StrArrayAttr>:$names);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $name `(` $x `,` $index `,` $source `)` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MapExpr_NonzeroOp : MapExpr_Op<"nonzero"> {
  let summary = "The coordinates of a tensor's nonzeros, compacted by the runtime as a step";
  let description = [{
    `result` (i64 `[size, rank]`; `size` may be dynamic: x's element count at a dynamic size)
    holds the coordinates of `x`'s first `size` nonzero elements
    in row-major order (a float's zero of either sign is zero, NaN is not), and `fill` in each
    row past x's count of them. Not a kernel: the runtime compacts them in one pass over `x`
    (a kernel of static shapes would compare every element with every row, work of size times
    x's elements). `name` is the fusion group's name; `names` the result's Python name.
  }];
  let arguments = (ins StrAttr:$name, AnyRankedTensor:$x, F64Attr:$fill,
                       OptionalAttr<StrArrayAttr>:$names);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $name `(` $x `)` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MapExpr_NmsOp : MapExpr_Op<"nms"> {
  let summary = "Non-maximum suppression, run by the runtime as a step";
  let description = [{
    `result` (i64 `[N]`) holds the indices of the `boxes` (`[N, 4]`: x1, y1, x2, y2) kept in
    decreasing `scores` order, then -1: a box is dropped where its IoU with a box kept before
    it is above `iou_threshold` (torchvision's nms). Not a kernel: the runtime runs the greedy
    loop. `name` is the fusion group's name; `names` the result's Python name.
  }];
  let arguments = (ins StrAttr:$name, AnyRankedTensor:$boxes, AnyRankedTensor:$scores,
                       F64Attr:$iou_threshold, OptionalAttr<StrArrayAttr>:$names);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $name `(` $boxes `,` $scores `)` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def MapExpr_ArgsortOp : MapExpr_Op<"argsort"> {
  let summary = "The positions that sort a tensor along an axis, run by the runtime as a step";
  let description = [{
    `result` (i64, `x`'s shape) holds, for each row of `x` along `axis`, the positions of its
    elements in sorted order: stable (equal elements keep their order), ascending or
    `descending`, NaN the largest. Not a kernel: the runtime sorts each row (n log n
    comparisons, at the row's length of the call). `name` is the fusion group's name; `names`
    the result's Python name.
  }];
  let arguments = (ins StrAttr:$name, AnyRankedTensor:$x, I64Attr:$axis, BoolAttr:$descending,
                       OptionalAttr<StrArrayAttr>:$names);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $name `(` $x `)` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // SOTC_DIALECT_MAPEXPR_OPS
