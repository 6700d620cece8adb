#include "dialects/sir/Transforms/PrimGraphs.h"
#include "dialects/sir/IR/SirTypes.h"

namespace sotc::sir {
namespace {

/// An argument attribute as the operator library sees it; tensor operands carry their
/// operand index in `intValue` so the graph's inputs can be matched back to them.
mlir::FailureOr<ops::Arg> toArg(CallOp call, mlir::Attribute attr) {
  if (auto ref = mlir::dyn_cast<OperandRefAttr>(attr)) {
    auto type = mlir::cast<mlir::RankedTensorType>(call.getTensors()[ref.getIndex()].getType());
    std::optional<ops::TensorMeta> meta = metaOf(type);
    if (!meta)
      return call.emitOpError("operand ") << ref.getIndex() << " has an element type with no dtype";
    ops::Arg a = ops::Arg::ofTensor(*meta);
    a.intValue = ref.getIndex();
    return a;
  }
  if (mlir::isa<NoneAttr>(attr))
    return ops::Arg::none();
  if (mlir::isa<EllipsisAttr>(attr))
    return ops::Arg::ellipsis();
  if (auto b = mlir::dyn_cast<mlir::BoolAttr>(attr))
    return ops::Arg::ofBool(b.getValue());
  if (auto i = mlir::dyn_cast<mlir::IntegerAttr>(attr))
    return ops::Arg::ofInt(i.getInt());
  if (auto f = mlir::dyn_cast<mlir::FloatAttr>(attr))
    return ops::Arg::ofFloat(f.getValueAsDouble());
  if (auto s = mlir::dyn_cast<mlir::StringAttr>(attr))
    return ops::Arg::ofString(s.str());
  if (auto r = mlir::dyn_cast<RefAttr>(attr))
    return ops::Arg::ofString(r.getName().str());
  if (auto size = mlir::dyn_cast<SizeAttr>(attr)) // verified: a product of sizes
    return ops::Arg::ofInt(ops::sizeOfDim(ops::productDim(size.getSize())));
  auto items = [&](mlir::ArrayAttr array) -> mlir::FailureOr<std::vector<ops::Arg>> {
    std::vector<ops::Arg> out;
    for (mlir::Attribute item : array) {
      mlir::FailureOr<ops::Arg> a = toArg(call, item);
      if (mlir::failed(a))
        return mlir::failure();
      out.push_back(*a);
    }
    return out;
  };
  if (auto array = mlir::dyn_cast<mlir::ArrayAttr>(attr)) {
    auto list = items(array);
    return mlir::failed(list) ? mlir::FailureOr<ops::Arg>(mlir::failure()) : ops::Arg::list(*list);
  }
  if (auto tuple = mlir::dyn_cast<TupleAttr>(attr)) {
    auto list = items(tuple.getItems());
    return mlir::failed(list) ? mlir::FailureOr<ops::Arg>(mlir::failure()) : ops::Arg::tuple(*list);
  }
  if (auto slice = mlir::dyn_cast<SliceAttr>(attr)) {
    auto start = toArg(call, slice.getStart()), stop = toArg(call, slice.getStop()),
         step = toArg(call, slice.getStep());
    if (mlir::failed(start) || mlir::failed(stop) || mlir::failed(step))
      return mlir::failure();
    return ops::Arg::slice(*start, *stop, *step);
  }
  return call.emitOpError("cannot read argument ") << attr;
}

mlir::DenseI64ArrayAttr ints(mlir::Builder &b, const std::vector<int64_t> &v) {
  return b.getDenseI64ArrayAttr(v);
}

/// Sizes as a `shape` attribute holds them: every dynamic one as -1 (the result's type names
/// its symbol).
mlir::DenseI64ArrayAttr sizes(mlir::Builder &b, std::vector<int64_t> v) {
  for (int64_t &d : v)
    d = ops::isDynamicDim(d) ? -1 : d;
  return b.getDenseI64ArrayAttr(v);
}

/// One sir.prim for `op`; attributes only where the primitive reads them.
mlir::Value emitPrim(mlir::OpBuilder &b, mlir::Location loc, const ops::PrimOp &op,
                     mlir::ValueRange operands) {
  using ops::Prim;
  using ops::PrimKind;
  PrimOp prim = createPrim(b, loc, tensorType(b.getContext(), op.result), op.prim, operands);
  const ops::PrimAttrs &a = op.attrs;
  switch (ops::primKind(op.prim)) {
  case PrimKind::Source:
    if (op.prim == Prim::FillConstant)
      prim.setValueAttr(b.getF64FloatAttr(a.value));
    prim.setShapeAttr(sizes(b, a.shape));
    break;
  case PrimKind::Reduce:
    prim.setAxesAttr(ints(b, a.axes));
    prim.setKeepdimAttr(b.getBoolAttr(a.keepdim));
    break;
  case PrimKind::Matmul:
    prim.setTransposeXAttr(b.getBoolAttr(a.transposeX));
    prim.setTransposeYAttr(b.getBoolAttr(a.transposeY));
    break;
  case PrimKind::Conv:
    prim.setStridesAttr(ints(b, a.strides));
    prim.setDilationsAttr(ints(b, a.dilations));
    prim.setPadsAttr(ints(b, a.pads));
    if (a.groups != 1)
      prim.setGroupsAttr(b.getI64IntegerAttr(a.groups));
    break;
  case PrimKind::Layout:
    if (op.prim == Prim::BroadcastTo || op.prim == Prim::Reshape)
      prim.setShapeAttr(sizes(b, op.result.shape));
    else if (op.prim == Prim::Transpose)
      prim.setPermAttr(ints(b, a.perm));
    else if (op.prim == Prim::Concat || op.prim == Prim::IndexCopy)
      prim.setAxisAttr(b.getI64IntegerAttr(a.axis));
    else if (op.prim == Prim::Nonzero || op.prim == Prim::Nms)
      prim.setValueAttr(b.getF64FloatAttr(a.value));
    else if (op.prim == Prim::Argsort) {
      prim.setAxisAttr(b.getI64IntegerAttr(a.axis));
      prim.setDescendingAttr(b.getBoolAttr(a.descending));
    } else if (op.prim == Prim::Window) {
      prim.setKernelAttr(ints(b, a.kernel));
      prim.setStridesAttr(ints(b, a.strides));
      prim.setDilationsAttr(ints(b, a.dilations));
      prim.setPadsAttr(ints(b, a.pads));
      prim.setValueAttr(b.getF64FloatAttr(a.value));
    } else if (op.prim == Prim::Slice) {
      prim.setAxesAttr(ints(b, a.axes));
      prim.setStartsAttr(ints(b, a.starts));
      prim.setEndsAttr(ints(b, a.ends)); // a dynamic end as its size: -2 for s1
      prim.setStepsAttr(ints(b, a.steps));
    }
    break;
  default:
    break;
  }
  return prim.getResult();
}

} // namespace

mlir::FailureOr<ops::CallArgs> callArgs(CallOp call) {
  ops::CallArgs args;
  for (mlir::Attribute a : call.getArgs()) {
    mlir::FailureOr<ops::Arg> arg = toArg(call, a);
    if (mlir::failed(arg))
      return mlir::failure();
    args.positional.push_back(*arg);
  }
  for (mlir::Attribute a : call.getKwargs()) {
    auto kw = mlir::cast<KeywordAttr>(a);
    mlir::FailureOr<ops::Arg> arg = toArg(call, kw.getValue());
    if (mlir::failed(arg))
      return mlir::failure();
    args.keywords.push_back({kw.getName().str(), *arg});
  }
  return args;
}

std::vector<mlir::Value> emitPrimGraph(mlir::OpBuilder &b, mlir::Location loc,
                                       const ops::PrimGraph &graph,
                                       llvm::ArrayRef<mlir::Value> inputs) {
  std::vector<mlir::Value> values(inputs.begin(), inputs.end());
  for (const ops::PrimOp &op : graph.ops) {
    llvm::SmallVector<mlir::Value> operands;
    for (int v : op.operands)
      operands.push_back(values[v]);
    values.push_back(emitPrim(b, loc, op, operands));
  }
  return values;
}

PrimOp createPrim(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, ops::Prim prim,
                  mlir::ValueRange operands) {
  // The attributes each kind of primitive needs are set by the caller.
  mlir::NamedAttribute kind(
      PrimOp::getPrimAttrName(mlir::OperationName(PrimOp::getOperationName(), b.getContext())),
      PrimitiveAttr::get(b.getContext(), fromOpsPrim(prim)));
  return PrimOp::create(b, loc, mlir::TypeRange{type}, operands, {kind});
}

mlir::Value castPrim(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v, mlir::Type type) {
  return createPrim(b, loc, type, ops::Prim::Cast, v).getResult();
}

} // namespace sotc::sir
