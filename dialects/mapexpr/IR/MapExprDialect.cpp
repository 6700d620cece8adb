#include "dialects/mapexpr/IR/MapExprDialect.h"

#include "compiler/ops/Types.h"
#include "dialects/FunctionLike.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>

using namespace mlir;
using namespace sotc::mapexpr;

#include "dialects/mapexpr/IR/MapExprDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/mapexpr/IR/MapExprAttrs.cpp.inc"

void MapExprDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/mapexpr/IR/MapExprAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/mapexpr/IR/MapExprOps.cpp.inc"
      >();
}

//===-- IndexAttr -------------------------------------------------------------------------===//

std::vector<Expr> IndexAttr::getExprs() const {
  return *decodeIndex({getCode().begin(), getCode().end()});
}

IndexAttr IndexAttr::get(MLIRContext *ctx, const std::vector<Expr> &exprs) {
  return get(ctx, llvm::ArrayRef<int64_t>(encodeIndex(exprs)));
}

LogicalResult IndexAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                ArrayRef<int64_t> code) {
  if (!decodeIndex({code.begin(), code.end()}))
    return emitError() << "malformed index code";
  return success();
}

// #mapexpr.index<[...]> is only ever parsed as a dialect attribute, whose parser hands out
// the whole spec (MLIR's escape hatch for a separate parser); the lexer position after the
// attribute is restored by MLIR whatever the dialect consumed.
Attribute IndexAttr::parse(AsmParser &parser, Type) {
  auto *dialectParser = dynamic_cast<DialectAsmParser *>(&parser);
  llvm::StringRef spec = dialectParser ? dialectParser->getFullSymbolSpec() : "";
  if (!spec.consume_front("index<") || !spec.consume_back(">")) {
    parser.emitError(parser.getNameLoc(), "expected #mapexpr.index<[...]>");
    return {};
  }
  sotc::Expected<std::vector<Expr>> exprs = parseIndexList(spec.str());
  if (!exprs) {
    parser.emitError(parser.getNameLoc(), exprs.error().what());
    return {};
  }
  return IndexAttr::get(parser.getContext(), *exprs);
}

void IndexAttr::print(AsmPrinter &printer) const {
  printer << "<" << indexListStr(getExprs()) << ">";
}

#define GET_OP_CLASSES
#include "dialects/mapexpr/IR/MapExprOps.cpp.inc"

//===-- KernelOp --------------------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  return sotc::parseFunctionLike<KernelOp>(parser, result);
}

void KernelOp::print(OpAsmPrinter &p) { sotc::printFunctionLike(p, *this); }

static bool isInit(OpStmtOp op) {
  std::optional<OpStmt> s = OpStmt::named(op.getName());
  return s && s->isInit();
}

LogicalResult KernelOp::verify() {
  Block &body = getBody().front();
  if (body.getArgumentTypes() != getArgumentTypes())
    return emitOpError("block arguments do not match the kernel's input types");
  auto ret = dyn_cast<ReturnOp>(body.getTerminator());
  if (!ret || TypeRange(ret.getResults()) != TypeRange(getResultTypes()))
    return emitOpError("must end with a mapexpr.return of the kernel's result types");
  // Outputs are written once: every kernel tensor by exactly one statement (a reduction's
  // init and accumulate count as one), inputs by none.
  llvm::DenseMap<Value, int> writes;
  getOperation()->walk([&](OpStmtOp stmt) {
    for (Value out : stmt.getOuts())
      if (!isInit(stmt))
        ++writes[out];
  });
  for (BlockArgument arg : body.getArguments())
    if (writes.lookup(arg))
      return emitOpError("writes its input #") << arg.getArgNumber();
  for (auto tensor : body.getOps<TensorOp>())
    if (writes.lookup(tensor) != 1)
      return tensor.emitOpError("t_") << tensor.getName() << " is written " << writes.lookup(tensor)
                                      << " times (expected once)";
  for (Value v : ret.getResults())
    if (!v.getDefiningOp<TensorOp>())
      return ret.emitOpError("returns a value that is not a kernel tensor");
  // A kernel is one launch: once scheduled, every statement runs on one grid and block.
  std::optional<std::string> grid;
  for (auto [i, anchored] : llvm::enumerate(body.getOps<AnchoredOp>())) {
    if (!anchored.getLoops())
      continue;
    std::string spatial;
    for (const sotc::sched::LoopDescriptor &l : sotc::sched::loopsOf(*anchored.getLoops()))
      if (l.spatial())
        spatial += (spatial.empty() ? "" : ", ") + l.str();
    if (!grid)
      grid = spatial;
    else if (spatial != *grid)
      return anchored.emitOpError("AnchoredMapStmt ")
             << i << " runs on (" << spatial << ") but the kernel's first statement on (" << *grid
             << "): a kernel is one launch, one grid";
  }
  return success();
}

//===-- AnchoredOp ------------------------------------------------------------------------===//

LogicalResult AnchoredOp::verify() {
  auto anchor = cast<RankedTensorType>(getAnchor().getType());
  std::vector<sotc::sched::ScheduleDim> dims = sotc::sched::dimsOf(getDims());
  if (dims.size() != getDims().size())
    return emitOpError("dims must be #sched.injective or #sched.reduced");
  std::vector<int64_t> space = modelShapeOf(anchor, sotc::sched::standInsOf(*this));
  if (getSpace()) {
    ArrayRef<int64_t> s = *getSpace();
    if (s.size() < space.size() || !std::equal(space.begin(), space.end(), s.begin()))
      return emitOpError("the iteration space must extend the anchor's shape");
    space.assign(s.begin(), s.end());
  }
  if (dims.size() != space.size())
    return emitOpError("has ") << dims.size() << " schedule dims for a rank-" << space.size()
                               << " iteration space";
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].size != space[i])
      return emitOpError("schedule dim ")
             << i << " has size " << dims[i].size << ", the iteration space " << space[i];
  if (getLoops() && !getMesh())
    return emitOpError("has loops but no mesh");
  if (getMesh()) {
    auto mesh = dyn_cast<sotc::sched::MeshAttr>(*getMesh());
    if (!mesh)
      return emitOpError("mesh must be a #sched.mesh");
    sotc::sched::ScheduleMesh m = mesh.mesh();
    if (m.inputDims() != dims)
      return emitOpError("the mesh starts from other dims than the anchor's");
    if (!getLoops())
      return emitOpError("has a mesh but no loops");
    std::vector<sotc::sched::LoopDescriptor> loops = sotc::sched::loopsOf(*getLoops());
    if (loops.size() != m.outputRank())
      return emitOpError("has ") << loops.size() << " loops for a mesh with " << m.outputRank()
                                 << " output dims";
    for (size_t i = 0; i < loops.size(); ++i)
      if (loops[i].size != m.outputShape()[i])
        return emitOpError("loop ")
               << i << " (" << loops[i].str() << ") disagrees with the mesh's output dim of size "
               << m.outputShape()[i];
  }
  for (Operation &op : getBody().front())
    if (!isa<OpStmtOp>(op))
      return op.emitOpError("an AnchoredMapStmt holds mapexpr.op statements only");
  return success();
}

//===-- OpStmtOp --------------------------------------------------------------------------===//

LogicalResult OpStmtOp::verify() {
  if (!OpStmt::named(getName()))
    return emitOpError("'") << getName()
                            << "' is no primitive, nor a reduction's or matmul's _init or _acc";
  // fill_constant's value; a window's pad value, read where the window leaves its input.
  bool valued = getName() == "fill_constant" || getName() == "window";
  if (valued != getValue().has_value())
    return emitOpError("a value is what fill_constant and window, and only they, carry");
  size_t nargs = getOuts().size() + getIns().size();
  if (getIndices().size() != nargs)
    return emitOpError("has ") << getIndices().size() << " indices for " << nargs << " arguments";
  AnchoredOp parent = getParentOp();
  int rank = parent.getSpace()
                 ? static_cast<int>(parent.getSpace()->size())
                 : static_cast<int>(cast<RankedTensorType>(parent.getAnchor().getType()).getRank());
  llvm::SmallVector<Value> args(getOuts().begin(), getOuts().end());
  args.append(getIns().begin(), getIns().end());
  for (auto [arg, index] : llvm::zip(args, getIndices().getAsRange<IndexAttr>())) {
    std::vector<Expr> exprs = index.getExprs();
    int64_t tensorRank = cast<RankedTensorType>(arg.getType()).getRank();
    if (static_cast<int64_t>(exprs.size()) != tensorRank)
      return emitOpError("needs one index expression per dimension of ") << arg.getType();
    for (const Expr &e : exprs)
      if (maxIterator(e) >= rank)
        return emitOpError("index ") << e->str() << " uses an iterator the rank-" << rank
                                     << " iteration space does not have";
  }
  return success();
}

//===-- LaunchOp --------------------------------------------------------------------------===//

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbols) {
  // After sotc-convert-mapexpr-to-loops the kernel is a func.func taking its outputs, then
  // its inputs, as memrefs of their buffer shapes (bufferShape), after the call's rows of a
  // dynamic batch and (after sotc-cpu-kernel-abi) a grid range.
  if (auto func = symbols.lookupNearestSymbolFrom<func::FuncOp>(*this, getKernelAttr())) {
    sotc::sched::SizeStandIns sizes = sotc::sched::standInsOf(*this);
    llvm::SmallVector<Type> expected;
    for (Type t : llvm::concat<const Type>(getResultTypes(), getInputs().getTypes())) {
      auto tensor = cast<RankedTensorType>(t);
      expected.push_back(MemRefType::get(bufferShapeOf(tensor, sizes), tensor.getElementType()));
    }
    ArrayRef<Type> args = func.getArgumentTypes();
    while (args.size() > expected.size() && args[0].isIndex())
      args = args.drop_front();
    if (TypeRange(args) != TypeRange(expected) || func.getNumResults())
      return emitOpError("types do not match lowered kernel ") << getKernelAttr();
    return success();
  }
  Operation *callee = symbols.lookupNearestSymbolFrom(*this, getKernelAttr());
  // A GPU kernel sits in a nested symbol table (its gpu.module).
  if (!callee)
    if (auto module = (*this)->getParentOfType<ModuleOp>())
      for (Operation &op : module.getBody()->getOperations())
        if (op.hasTrait<OpTrait::SymbolTable>())
          if (Operation *nested = SymbolTable::lookupSymbolIn(&op, getKernelAttr().getAttr()))
            callee = nested;
  auto kernel = dyn_cast_or_null<KernelOp>(callee);
  if (!kernel && isa_and_nonnull<FunctionOpInterface>(callee))
    return success(); // lowered past func.func: its signature is the target's ABI
  if (!kernel)
    return emitOpError("no mapexpr.kernel named ") << getKernelAttr();
  if (TypeRange(kernel.getArgumentTypes()) != TypeRange(getInputs().getTypes()) ||
      TypeRange(kernel.getResultTypes()) != TypeRange(getResultTypes()))
    return emitOpError("types do not match kernel ") << getKernelAttr();
  return success();
}

//===-- GemmOp ----------------------------------------------------------------------------===//

namespace {
/// The shape as the operator library writes it: a dynamic dimension as its size (-1 for s0).
std::vector<int64_t> shapeOf(Value v) {
  return sotc::sir::shapeWithSizes(cast<RankedTensorType>(v.getType()));
}
} // namespace

GemmPlan GemmOp::getPlan() {
  return *planGemm(shapeOf(getA()), shapeOf(getB()), getTransposeA(), getTransposeB(),
                   sotc::sched::standInsOf(*this));
}

LogicalResult GemmOp::verify() {
  std::string why;
  std::optional<GemmPlan> plan = planGemm(shapeOf(getA()), shapeOf(getB()), getTransposeA(),
                                          getTransposeB(), sotc::sched::standInsOf(*this), &why);
  if (!plan)
    return emitOpError("is not a GEMM: ") << why;
  if (plan->shape != shapeOf(getResult()))
    return emitOpError("result shape does not match the matmul of its operands");
  Type element = getResult().getType().getElementType();
  Type operand = getA().getType().getElementType();
  if (getB().getType().getElementType() != operand ||
      (operand != element && !(operand.isBF16() && element.isF32())))
    return emitOpError("operands must have the result's element type, or be bf16 with an f32 "
                       "result");
  if (getActivation() != "none" && getActivation() != "relu" && getActivation() != "gelu_tanh" &&
      getActivation() != "gelu_erf")
    return emitOpError("activation must be none, relu, gelu_tanh or gelu_erf, not '")
           << getActivation() << "'";
  if (Value bias = getBias()) {
    std::vector<int64_t> b = shapeOf(bias);
    bool row = !b.empty() && b.back() == plan->n && b.size() <= plan->shape.size();
    for (size_t d = 0; d + 1 < b.size(); ++d)
      row &= b[d] == 1;
    if (!row || cast<RankedTensorType>(bias.getType()).getElementType() != element)
      return emitOpError("bias must be one row of ") << plan->n << " elements of the result type";
  }
  return success();
}

LogicalResult ConvOp::verify() {
  std::vector<int64_t> x = shapeOf(getX()), w = shapeOf(getWeight()), y = shapeOf(getResult());
  if (getStrides().size() != 2 || getDilations().size() != 2 || getPads().size() != 4)
    return emitOpError("needs two strides, two dilations and four pads");
  int64_t groups = getGroups();
  if (x.size() != 4 || w.size() != 4 || y.size() != 4 || groups < 1 || x[1] != w[1] * groups ||
      y[0] != x[0] || y[1] != w[0] || y[1] % groups != 0)
    return emitOpError("takes an [N, C, H, W] tensor and an [OC, C/groups, KH, KW] weight to "
                       "[N, OC, OH, OW]");
  for (int i = 0; i < 2; ++i) {
    int64_t stride = getStrides()[i], dilation = getDilations()[i];
    int64_t span = x[2 + i] + getPads()[2 * i] + getPads()[2 * i + 1] - dilation * (w[2 + i] - 1);
    if (stride < 1 || dilation < 1 || getPads()[2 * i] < 0 || getPads()[2 * i + 1] < 0 ||
        span < 1 || (span - 1) / stride + 1 != y[2 + i])
      return emitOpError("result size ")
             << y[2 + i] << " does not fit the window over " << x[2 + i];
  }
  Type element = getResult().getType().getElementType();
  if (!element.isF32() || getX().getType().getElementType() != element ||
      getWeight().getType().getElementType() != element)
    return emitOpError("runs on float32 tensors");
  if (getActivation() != "none" && getActivation() != "relu" && getActivation() != "relu6" &&
      getActivation() != "hardswish")
    return emitOpError("activation must be none, relu, relu6 or hardswish, not '")
           << getActivation() << "'";
  if (Value bias = getBias()) {
    auto b = cast<RankedTensorType>(bias.getType());
    if (!b.hasStaticShape() || b.getNumElements() != w[0] || b.getElementType() != element)
      return emitOpError("bias must hold one element per output channel (") << w[0] << ")";
  }
  if (Value residual = getResidual(); residual && residual.getType() != getResult().getType())
    return emitOpError("residual must have the result's type");
  return success();
}

LogicalResult IndexCopyOp::verify() {
  std::vector<int64_t> x = shapeOf(getX()), index = shapeOf(getIndex()),
                       source = shapeOf(getSource());
  int64_t axis = getAxis();
  bool fits = axis >= 0 && axis < int64_t(x.size()) && index.size() == 1 &&
              getIndex().getType().getElementType().isInteger(64) && source.size() == x.size() &&
              getSource().getType().getElementType() == getX().getType().getElementType() &&
              getResult().getType() == getX().getType();
  for (size_t d = 0; fits && d < x.size(); ++d)
    fits = source[d] == (int64_t(d) == axis ? index[0] : x[d]);
  if (!fits)
    return emitOpError("takes x, an i64 index [M] and a source of x's shape with M at `axis`, "
                       "to x's type");
  return success();
}

LogicalResult NonzeroOp::verify() {
  auto result = getResult().getType();
  if (result.getRank() != 2 || result.isDynamicDim(1) ||
      result.getDimSize(1) != getX().getType().getRank() || !result.getElementType().isInteger(64))
    return emitOpError("takes a tensor to i64 [size, its rank]");
  return success();
}

LogicalResult NmsOp::verify() {
  std::vector<int64_t> boxes = shapeOf(getBoxes()), scores = shapeOf(getScores()),
                       result = shapeOf(getResult());
  if (boxes.size() != 2 || boxes[1] != 4 || scores.size() != 1 || result != scores ||
      boxes[0] != scores[0] || !getResult().getType().getElementType().isInteger(64))
    return emitOpError("takes boxes [N, 4] and scores [N] to i64 [N]");
  return success();
}

LogicalResult ArgsortOp::verify() {
  std::vector<int64_t> x = shapeOf(getX()), result = shapeOf(getResult());
  if (getAxis() >= x.size() || result != x || !getResult().getType().getElementType().isInteger(64))
    return emitOpError("takes a tensor to i64 of its shape, sorted along one of its axes");
  return success();
}

//===-- IR -> model -----------------------------------------------------------------------===//

namespace sotc::mapexpr {

std::vector<int64_t> modelShapeOf(mlir::RankedTensorType type, const sched::SizeStandIns &sizes) {
  return modelShape(sir::shapeWithSizes(type), sizes);
}

std::vector<int64_t> bufferShapeOf(mlir::RankedTensorType type, const sched::SizeStandIns &sizes) {
  return bufferShape(sir::shapeWithSizes(type), sizes);
}

Kernel kernelFromIR(KernelOp op, std::vector<Value> *values) {
  Kernel k;
  if (values)
    values->clear();
  k.name = op.getSymName().str();
  k.standIns = sched::standInsOf(op);
  std::map<const void *, int> ids;
  auto id = [&](Value v) {
    auto it = ids.find(v.getAsOpaquePointer());
    if (it != ids.end())
      return it->second;
    std::string name;
    if (auto t = v.getDefiningOp<TensorOp>())
      name = t.getName().str();
    else if (auto arg = dyn_cast<BlockArgument>(v))
      if (auto n = op.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "mapexpr.name"))
        name = n.str();
    auto type = cast<RankedTensorType>(v.getType());
    Type element = type.getElementType();
    auto complex = dyn_cast<ComplexType>(element);
    int64_t bits = complex ? 2 * complex.getElementType().getIntOrFloatBitWidth()
                           : element.getIntOrFloatBitWidth();
    k.tensors.push_back({name, modelShapeOf(type, k.standIns), std::max<int64_t>(bits / 8, 1)});
    k.batch |= !type.hasStaticShape();
    if (values)
      values->push_back(v);
    return ids[v.getAsOpaquePointer()] = static_cast<int>(k.tensors.size()) - 1;
  };
  Block &body = op.getBody().front();
  for (Value v : body.getTerminator()->getOperands())
    k.outputs.push_back(id(v));
  for (BlockArgument arg : body.getArguments())
    k.inputs.push_back(id(arg));
  for (AnchoredOp anchored : body.getOps<AnchoredOp>()) {
    AnchoredMapStmt a;
    a.anchor = id(anchored.getAnchor());
    a.space = anchored.getSpace()
                  ? std::vector<int64_t>(anchored.getSpace()->begin(), anchored.getSpace()->end())
                  : k.tensors[a.anchor].shape;
    a.dims = sched::dimsOf(anchored.getDims());
    if (anchored.getMesh())
      a.schedule = sched::Schedule{cast<sched::MeshAttr>(*anchored.getMesh()).mesh(),
                                   sched::loopsOf(*anchored.getLoops())};
    for (OpStmtOp stmt : anchored.getBody().front().getOps<OpStmtOp>()) {
      // The verifier checked that the name is a statement's.
      OpStmt s = OpStmt::named(stmt.getName()).value_or(OpStmt());
      if (stmt.getValue())
        s.value = stmt.getValue()->convertToDouble();
      for (Value v : stmt.getOuts())
        s.outs.push_back(id(v));
      for (Value v : stmt.getIns())
        s.ins.push_back(id(v));
      std::vector<int> args = s.outs;
      args.insert(args.end(), s.ins.begin(), s.ins.end());
      for (auto [t, index] : llvm::zip(args, stmt.getIndices().getAsRange<IndexAttr>()))
        a.index[t] = index.getExprs();
      a.stmts.push_back(s);
    }
    k.stmts.push_back(std::move(a));
  }
  return k;
}

} // namespace sotc::mapexpr
