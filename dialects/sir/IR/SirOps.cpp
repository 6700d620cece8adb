#include "dialects/sir/IR/SirDialect.h"

#include "compiler/ops/Primitives.h"

#include "dialects/FunctionLike.h"
#include "dialects/sir/IR/SirTypes.h"

using namespace mlir;
using namespace sotc::sir;

#define GET_OP_CLASSES
#include "dialects/sir/IR/SirOps.cpp.inc"

//===-- SubgraphOp ------------------------------------------------------------------------===//

ParseResult SubgraphOp::parse(OpAsmParser &parser, OperationState &result) {
  return sotc::parseFunctionLike<SubgraphOp>(parser, result);
}

void SubgraphOp::print(OpAsmPrinter &p) { sotc::printFunctionLike(p, *this); }

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
      return emitOpError("tensor operand ")
             << index << " is referenced " << count << " times in args/kwargs (expected once)";
  if ((kind == "method" || kind == "operator") &&
      (getArgs().empty() || !isa<OperandRefAttr>(getArgs()[0])))
    return emitOpError("a ") << kind << " call's first argument must be a tensor";
  return success();
}

//===-- PrimOp ----------------------------------------------------------------------------===//

/// Whether a primitive's `shape` attribute names its result's shape: -1 in the attribute is
/// a dynamic dimension (`?` in the type).
static bool isShapeOf(std::optional<ArrayRef<int64_t>> attr, RankedTensorType type) {
  if (!attr || attr->size() != static_cast<size_t>(type.getRank()))
    return false;
  for (auto [a, t] : llvm::zip(*attr, type.getShape()))
    if (a != (ShapedType::isDynamic(t) ? -1 : t))
      return false;
  return true;
}

LogicalResult PrimOp::verify() {
  sotc::ops::Prim prim = toOpsPrim(getPrim());
  using sotc::ops::PrimKind;
  PrimKind kind = sotc::ops::primKind(prim);
  auto operands = getOperands();
  auto resultType = cast<RankedTensorType>(getResult().getType());
  auto expectOperands = [&](size_t n) -> LogicalResult {
    if (operands.size() != n)
      return emitOpError() << stringifyPrimitive(getPrim()) << " takes " << n << " operands, not "
                           << operands.size();
    return success();
  };
  auto sameShape = [&](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape() == resultType.getShape();
  };
  switch (kind) {
  case PrimKind::Source:
    if (failed(expectOperands(0)))
      return failure();
    if (prim == sotc::ops::Prim::Iota)
      return isShapeOf(getShape(), resultType) && resultType.getRank() == 1 && !getValue()
                 ? success()
                 : emitOpError("iota needs a 1-d shape equal to its result's, and no value");
    if (!getValue() || !isShapeOf(getShape(), resultType))
      return emitOpError("fill_constant needs a value and a shape equal to its result's");
    return success();
  case PrimKind::Unary:
    if (failed(expectOperands(1)))
      return failure();
    if (!sameShape(operands[0]))
      return emitOpError("result shape differs from the operand's");
    if (prim != sotc::ops::Prim::Cast && operands[0].getType() != resultType)
      return emitOpError("result type differs from the operand's");
    return success();
  case PrimKind::Binary:
  case PrimKind::Compare:
    if (failed(expectOperands(2)))
      return failure();
    if (operands[0].getType() != operands[1].getType())
      return emitOpError(
          "operands must have one type (decompositions broadcast and cast explicitly)");
    if (!sameShape(operands[0]))
      return emitOpError("result shape differs from the operands'");
    if (kind == PrimKind::Compare && !resultType.getElementType().isInteger(1))
      return emitOpError("a comparison returns i1 tensors");
    return success();
  case PrimKind::Select:
    if (failed(expectOperands(3)))
      return failure();
    if (operands[1].getType() != operands[2].getType() || operands[1].getType() != resultType ||
        !sameShape(operands[0]) ||
        !cast<RankedTensorType>(operands[0].getType()).getElementType().isInteger(1))
      return emitOpError("select takes an i1 condition and two values of the result's type");
    return success();
  case PrimKind::Reduce:
    if (failed(expectOperands(1)))
      return failure();
    if (!getAxes() || !getKeepdim())
      return emitOpError("a reduction needs axes and keepdim");
    return success();
  case PrimKind::Matmul:
    return expectOperands(2);
  case PrimKind::Conv: {
    if (failed(expectOperands(2)))
      return failure();
    auto pair = [](std::optional<ArrayRef<int64_t>> v) { return v && v->size() == 2; };
    if (!pair(getStrides()) || !pair(getDilations()) || !pair(getPads()))
      return emitOpError("conv2d needs strides, dilations and pads of two values");
    auto in = cast<RankedTensorType>(operands[0].getType());
    auto weight = cast<RankedTensorType>(operands[1].getType());
    auto out = resultType.getShape();
    int64_t groups = getGroups().value_or(1);
    if (in.getRank() != 4 || weight.getRank() != 4 || out.size() != 4 || groups < 1 ||
        out[0] != in.getDimSize(0) || out[1] != weight.getDimSize(0) ||
        in.getDimSize(1) != weight.getDimSize(1) * groups || out[1] % groups != 0)
      return emitOpError("conv2d takes an NCHW tensor and an [OC, C/groups, KH, KW] weight "
                         "to [N, OC, OH, OW]");
    return success();
  }
  case PrimKind::Layout:
    if (prim == sotc::ops::Prim::Concat) {
      if (operands.empty() || !getAxis())
        return emitOpError("concat needs operands and an axis");
      return success();
    }
    if (prim == sotc::ops::Prim::IndexCopy) {
      if (failed(expectOperands(3)))
        return failure();
      auto x = cast<RankedTensorType>(operands[0].getType());
      auto index = cast<RankedTensorType>(operands[1].getType());
      auto source = cast<RankedTensorType>(operands[2].getType());
      std::optional<int64_t> axis = getAxis();
      bool fits = axis && *axis >= 0 && *axis < x.getRank() && index.getRank() == 1 &&
                  index.getElementType().isInteger(64) && source.getRank() == x.getRank() &&
                  source.getElementType() == x.getElementType() && x == resultType;
      for (int64_t d = 0; fits && d < x.getRank(); ++d)
        fits = source.getDimSize(d) == (d == *axis ? index.getDimSize(0) : x.getDimSize(d));
      if (!fits)
        return emitOpError("index_copy takes x, an i64 index [M] and a source of x's shape with "
                           "M at `axis`, to x's type");
      return success();
    }
    if (prim == sotc::ops::Prim::Nonzero) {
      if (failed(expectOperands(1)))
        return failure();
      auto x = cast<RankedTensorType>(operands[0].getType());
      if (!getValue() || resultType.getRank() != 2 || resultType.isDynamicDim(1) ||
          resultType.getDimSize(1) != x.getRank() || !resultType.getElementType().isInteger(64))
        return emitOpError("nonzero takes a tensor to i64 [size, its rank], with a fill value");
      return success();
    }
    if (prim == sotc::ops::Prim::Nms) {
      if (failed(expectOperands(2)))
        return failure();
      auto boxes = cast<RankedTensorType>(operands[0].getType());
      auto scores = cast<RankedTensorType>(operands[1].getType());
      if (!getValue() || boxes.getRank() != 2 || boxes.getDimSize(1) != 4 ||
          scores.getRank() != 1 || scores.getElementType() != boxes.getElementType() ||
          !isa<FloatType>(boxes.getElementType()) || resultType.getRank() != 1 ||
          !resultType.getElementType().isInteger(64) ||
          resultType.getDimSize(0) != scores.getDimSize(0) ||
          boxes.getDimSize(0) != scores.getDimSize(0))
        return emitOpError("nms takes boxes [N, 4] and scores [N] of one float type to i64 [N], "
                           "with an IoU threshold");
      return success();
    }
    if (prim == sotc::ops::Prim::Argsort) {
      if (failed(expectOperands(1)))
        return failure();
      auto x = cast<RankedTensorType>(operands[0].getType());
      std::optional<int64_t> axis = getAxis();
      if (!axis || *axis < 0 || *axis >= x.getRank() || !getDescending() ||
          x.getShape() != resultType.getShape() || !resultType.getElementType().isInteger(64) ||
          isa<ComplexType>(x.getElementType()))
        return emitOpError("argsort takes a real tensor to i64 of its shape, with an axis and "
                           "descending");
      return success();
    }
    if (prim == sotc::ops::Prim::Gather) {
      if (failed(expectOperands(2)))
        return failure();
      auto table = cast<RankedTensorType>(operands[0].getType());
      auto index = cast<RankedTensorType>(operands[1].getType());
      llvm::SmallVector<int64_t> shape(index.getShape());
      if (table.getRank() >= 1)
        shape.append(table.getShape().begin() + 1, table.getShape().end());
      if (!index.getElementType().isSignlessInteger() || index.getElementType().isInteger(1) ||
          table.getRank() < 1 || resultType.getShape() != llvm::ArrayRef<int64_t>(shape) ||
          resultType.getElementType() != table.getElementType())
        return emitOpError("gather takes a table [V, D...] and an integer index [I...] to the "
                           "table's rows [I..., D...]");
      return success();
    }
    if (failed(expectOperands(1)))
      return failure();
    if ((prim == sotc::ops::Prim::BroadcastTo || prim == sotc::ops::Prim::Reshape) &&
        !isShapeOf(getShape(), resultType))
      return emitOpError("needs a shape equal to its result's");
    if (prim == sotc::ops::Prim::BroadcastTo) {
      // numpy rules, right-aligned: each operand dim is 1 or the result's (a dynamic one
      // may be either: the broadcast holds for the sizes a guard allows).
      auto in = cast<RankedTensorType>(operands[0].getType()).getShape();
      auto out = resultType.getShape();
      bool ok = in.size() <= out.size();
      for (size_t i = 0; ok && i < in.size(); ++i) {
        int64_t d = in[in.size() - 1 - i], r = out[out.size() - 1 - i];
        ok = d == 1 || d == r || ShapedType::isDynamic(d);
      }
      if (!ok)
        return emitOpError("cannot broadcast ") << operands[0].getType() << " to " << resultType;
    }
    if (prim == sotc::ops::Prim::Reshape &&
        cast<RankedTensorType>(operands[0].getType()).hasStaticShape() &&
        resultType.hasStaticShape() &&
        cast<RankedTensorType>(operands[0].getType()).getNumElements() !=
            resultType.getNumElements())
      return emitOpError("reshape changes the element count");
    if (prim == sotc::ops::Prim::Transpose && !getPerm())
      return emitOpError("transpose needs perm");
    if (prim == sotc::ops::Prim::Window) {
      auto in = cast<RankedTensorType>(operands[0].getType());
      auto pair = [](std::optional<ArrayRef<int64_t>> v) { return v && v->size() == 2; };
      if (!pair(getKernel()) || !pair(getStrides()) || !pair(getDilations()) || !pair(getPads()) ||
          !getValue())
        return emitOpError("window needs kernel, strides, dilations and pads of two values, "
                           "and a value");
      auto out = resultType.getShape();
      if (in.getRank() != 4 || out.size() != 6 || out[0] != in.getDimSize(0) ||
          out[1] != in.getDimSize(1) || out[2] != (*getKernel())[0] || out[3] != (*getKernel())[1])
        return emitOpError("window takes an NCHW tensor to [N, C, KH, KW, OH, OW]");
    }
    if (prim == sotc::ops::Prim::Slice &&
        (!getAxes() || !getStarts() || !getEnds() || !getSteps() ||
         getAxes()->size() != getStarts()->size() || getStarts()->size() != getEnds()->size() ||
         getEnds()->size() != getSteps()->size()))
      return emitOpError("slice needs axes, starts, ends and steps of one length");
    return success();
  }
  return success();
}

//===-- GroupOp ---------------------------------------------------------------------------===//

LogicalResult GroupOp::verify() {
  StringRef kind = getKind();
  if (kind != "injective" && kind != "reduction" && kind != "matmul" && kind != "conv")
    return emitOpError("kind must be \"injective\", \"reduction\", \"matmul\" or \"conv\", "
                       "not \"")
           << kind << "\"";
  Block &body = getBody().front();
  if (body.getArgumentTypes() != getInputs().getTypes())
    return emitOpError("block arguments do not match the group's inputs");
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || TypeRange(yield.getResults()) != getResultTypes())
    return emitOpError("must end with a sir.yield of the group's result types");
  bool reduction = false, matmul = false, conv = false;
  for (Operation &op : body.without_terminator()) {
    auto prim = dyn_cast<PrimOp>(op);
    if (!prim)
      return op.emitOpError("a fusion group holds sir.prim ops only");
    sotc::ops::Prim p = toOpsPrim(prim.getPrim());
    reduction |= sotc::ops::primKind(p) == sotc::ops::PrimKind::Reduce;
    matmul |= p == sotc::ops::Prim::Matmul;
    conv |= p == sotc::ops::Prim::Conv2d;
  }
  StringRef expected = conv ? "conv" : matmul ? "matmul" : reduction ? "reduction" : "injective";
  if (kind != expected)
    return emitOpError("holds ") << (conv        ? "a conv2d"
                                     : matmul    ? "a matmul"
                                     : reduction ? "a reduction"
                                                 : "no reduction")
                                 << ", so its kind is \"" << expected << "\"";
  return success();
}

namespace {
/// Whether `p` is a size a dimension may be: dynamic, within what ops::productDim encodes.
bool isDimensionSize(const sotc::contract::SizeProduct &p) {
  return p.dynamic() && sotc::ops::parseProduct(p.text()).has_value();
}
} // namespace

LogicalResult SizeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               sotc::contract::SizeProduct size) {
  if (!isDimensionSize(size))
    return emitError() << "#sir.size holds \"" << size.text()
                       << "\", not a product of sizes (s0*s1)";
  return success();
}

LogicalResult DimsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<sotc::contract::SizeProduct> sizes) {
  for (const sotc::contract::SizeProduct &size : sizes)
    if (!isDimensionSize(size))
      return emitError() << "#sir.dims holds \"" << size.text()
                         << "\", not a product of sizes (s0*s1)";
  return success();
}

mlir::FailureOr<sotc::ops::DerivedSizes> sotc::sir::derivedSizesOf(mlir::Operation *op) {
  auto module = mlir::isa<mlir::ModuleOp>(op) ? mlir::cast<mlir::ModuleOp>(op)
                                              : op->getParentOfType<mlir::ModuleOp>();
  std::vector<ops::SizeOffset> sizes;
  if (auto list = module ? module->getAttrOfType<mlir::ArrayAttr>(kDerivedSizesAttr) : nullptr)
    for (mlir::Attribute a : list) {
      auto text = mlir::dyn_cast<mlir::StringAttr>(a);
      std::optional<ops::SizeOffset> d = text ? ops::DerivedSizes::parse(text.str()) : std::nullopt;
      if (!d)
        return module->emitError()
               << kDerivedSizesAttr << " holds " << a << ", not a derived size (\"s2=s1-1\")";
      sizes.push_back(*d);
    }
  return ops::DerivedSizes(std::move(sizes));
}

sotc::ops::PrimAttrs sotc::sir::primAttrsOf(PrimOp op) {
  sotc::ops::PrimAttrs a;
  auto ints = [](std::optional<llvm::ArrayRef<int64_t>> v) {
    return v ? std::vector<int64_t>(v->begin(), v->end()) : std::vector<int64_t>();
  };
  a.value = op.getValue() ? op.getValue()->convertToDouble() : 0;
  a.shape = ints(op.getShape());
  a.perm = ints(op.getPerm());
  a.axes = ints(op.getAxes());
  a.starts = ints(op.getStarts());
  a.ends = ints(op.getEnds());
  a.steps = ints(op.getSteps());
  a.axis = op.getAxis().value_or(0);
  a.kernel = ints(op.getKernel());
  a.strides = ints(op.getStrides());
  a.dilations = ints(op.getDilations());
  a.pads = ints(op.getPads());
  a.groups = op.getGroups().value_or(1);
  a.keepdim = op.getKeepdim().value_or(false);
  a.descending = op.getDescending().value_or(false);
  a.transposeX = op.getTransposeX().value_or(false);
  a.transposeY = op.getTransposeY().value_or(false);
  auto type = cast<RankedTensorType>(op.getResult().getType());
  a.dtype = dtypeOf(type.getElementType()).value_or(sotc::ops::DType::Float32);
  // A -1 in `shape` is a dynamic size; the result's type says which (`ends` name theirs).
  std::optional<sotc::ops::TensorMeta> result = metaOf(type);
  if (result && a.shape.size() == result->shape.size())
    a.shape = result->shape;
  return a;
}

std::vector<int64_t> sotc::sir::convolutionPadding(PrimOp conv) {
  auto in = cast<RankedTensorType>(conv->getOperand(0).getType());
  auto weight = cast<RankedTensorType>(conv->getOperand(1).getType());
  std::vector<int64_t> pads;
  for (int i = 0; i < 2; ++i) {
    int64_t before = (*conv.getPads())[i];
    int64_t reach = (conv.getType().getDimSize(2 + i) - 1) * (*conv.getStrides())[i] +
                    (*conv.getDilations())[i] * (weight.getDimSize(2 + i) - 1) + 1;
    pads.push_back(before);
    pads.push_back(std::max<int64_t>(0, reach - in.getDimSize(2 + i) - before));
  }
  return pads;
}
