//===- SchedBase.td - The sched dialect: schedule meshes and loop descriptors ------------===//
#ifndef SOTC_DIALECT_SCHED_BASE
#define SOTC_DIALECT_SCHED_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Sched_Dialect : Dialect {
  let name = "sched";
  let cppNamespace = "::sotc::sched";
  let summary = "Schedule meshes and loop descriptors (CINN's schedule algebra)";
  let description = [{
    Attributes only: `#sched.injective<64>` / `#sched.reduced<128>` schedule dims,
    `#sched.reshape<[-1, 128]>`, `#sched.transpose<[1, 0]>`, `#sched.padding<[...]>` and
    `#sched.round_up<[256]>` mesh steps, `#sched.mesh<[dims], [steps]>` (verified by replaying the algebra of
    dialects/sched/Utils/Mesh.h), `#sched.loop<S0x, 4>` loop descriptors, and
    `#sched.target<cuda>`: the machine a module is compiled for, which the module carries as
    its `sched.target` attribute for every pass whose output depends on it, and
    `#sched.size<"64*s0">`: a count that holds dynamic sizes, which a lowered kernel function
    carries as its `sched.grid` and `sched.dynamic_shared_bytes` (with `sched.sizes`, the
    sizes it takes before its buffers).
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
}

class Sched_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Sched_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Sched_InjectiveDimAttr : Sched_Attr<"InjectiveDim", "injective"> {
  let summary = "An injective schedule dim of the given size";
  let parameters = (ins "int64_t":$size);
  let assemblyFormat = "`<` $size `>`";
}

def Sched_ReducedDimAttr : Sched_Attr<"ReducedDim", "reduced"> {
  let summary = "A reduced schedule dim of the given size";
  let parameters = (ins "int64_t":$size);
  let assemblyFormat = "`<` $size `>`";
}

def Sched_ReshapeAttr : Sched_Attr<"Reshape", "reshape"> {
  let summary = "Mesh reshape: a static shape, one -1 allowed, same element count";
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape);
  let assemblyFormat = "`<` `[` $shape `]` `>`";
}

def Sched_TransposeAttr : Sched_Attr<"Transpose", "transpose"> {
  let summary = "Mesh transpose: a permutation of the output dims";
  let parameters = (ins ArrayRefParameter<"int64_t">:$perm);
  let assemblyFormat = "`<` `[` $perm `]` `>`";
}

def Sched_PaddingAttr : Sched_Attr<"Padding", "padding"> {
  let summary = "Mesh padding: pad each dim to a size; no dim may shrink";
  let parameters = (ins ArrayRefParameter<"int64_t">:$to);
  let assemblyFormat = "`<` `[` $to `]` `>`";
}

def Sched_RoundUpAttr : Sched_Attr<"RoundUp", "round_up"> {
  let summary = "Mesh round-up padding: each dim up to a multiple of its alignment (0: leave it)";
  let parameters = (ins ArrayRefParameter<"int64_t">:$align);
  let assemblyFormat = "`<` `[` $align `]` `>`";
}

def Sched_MeshAttr : Sched_Attr<"Mesh", "mesh"> {
  let summary = "A schedule mesh: schedule dims and the steps applied to them";
  let parameters = (ins "::mlir::ArrayAttr":$dims, "::mlir::ArrayAttr":$steps);
  let assemblyFormat = "`<` $dims `,` $steps `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The mesh the attribute describes (verified, so this does not throw).
    ::sotc::sched::ScheduleMesh mesh() const;
    static MeshAttr get(::mlir::MLIRContext *ctx, const ::sotc::sched::ScheduleMesh &mesh);
  }];
}

// In the order of sched::LoopType (Utils/Mesh.h); SchedDialect.cpp checks each value.
def Sched_LoopKind : I32EnumAttr<"LoopKind", "what a loop maps to", [
  I32EnumAttrCase<"S0x", 0>, I32EnumAttrCase<"S0y", 1>, I32EnumAttrCase<"S0z", 2>,
  I32EnumAttrCase<"S1x", 3>, I32EnumAttrCase<"S1y", 4>, I32EnumAttrCase<"S1z", 5>,
  I32EnumAttrCase<"Temporal", 6>, I32EnumAttrCase<"Vectorize", 7>, I32EnumAttrCase<"Unroll", 8>
]> {
  let cppNamespace = "::sotc::sched";
  let genSpecializedAttr = 0;
}

def Sched_LoopAttr : Sched_Attr<"Loop", "loop"> {
  let summary = "A loop descriptor: S0x..S0z (blockIdx), S1x..S1z (threadIdx), Temporal, Vectorize, Unroll";
  let parameters = (ins EnumParameter<Sched_LoopKind>:$kind, "int64_t":$size);
  let assemblyFormat = "`<` $kind `,` $size `>`";
  let genVerifyDecl = 1;
}

def Sched_TargetAttr : Sched_Attr<"Target", "target"> {
  let summary = "The machine a module is compiled for: cuda or cpu";
  let parameters = (ins "::sotc::sched::Target":$target);
  let assemblyFormat = "`<` $target `>`";
}

def Sched_SizeAttr : Sched_Attr<"Size", "size"> {
  let summary = "A count as a number times powers of the dynamic sizes: \"64*s0*s1^2\"";
  let description = [{
    The artifact contract's size product (contract/SizeProduct.h) in its one text form,
    parsed and checked where the attribute is read: `#sched.size<"24*s0">`.
  }];
  let parameters = (ins "::sotc::contract::SizeProduct":$size);
  let assemblyFormat = "`<` $size `>`";
}

#endif // SOTC_DIALECT_SCHED_BASE
