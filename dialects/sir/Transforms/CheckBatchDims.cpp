//===- CheckBatchDims.cpp - Every dynamic dimension is a product of the sizes --------------===//
//
// sotc compiles the dynamic sizes s0, s1, ... of a function (a batch, a sequence length) as
// products: every `?` of every tensor is a static number times powers of them (s0, s1,
// s0*s1 where a view merges a batch and a sequence, 16*s0), as its type's encoding says, and
// no primitive may make a size of another kind -- a size plus or minus something (a
// concatenation along it) other than a size the module derives with its own symbol (x[:, 1:]
// of T: s2 = s1 - 1, `sir.derived_sizes`), or a size equal to a static one. Then every size of the
// program is such a product, which the kernels compute from the sizes (their arguments), the GEMM
// steps take at run time and the manifest writes as `64*s0`, `4*s0*s1^2`. Windows and lookups
// still take a size only as their rows (a convolution over a dynamic image, a table of
// dynamic size are not compiled).
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sir/Transforms/Passes.h"

#include "compiler/ops/Primitives.h"
#include "compiler/support/MlirDiagnostics.h"
#include "dialects/sir/IR/SirTypes.h"

namespace sotc::sir {

#define GEN_PASS_DEF_SIRCHECKBATCHDIMS
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

using ops::Prim;
using ops::PrimKind;

mlir::RankedTensorType typeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

bool dynamic(mlir::RankedTensorType t) { return !t.hasStaticShape(); }
/// Whether `t`'s first dimension is s0 and no other is (what windows and lookups take).
bool dynamicFirstOnly(mlir::RankedTensorType t) {
  return t.getRank() > 0 && t.isDynamicDim(0) &&
         llvm::count_if(t.getShape(), mlir::ShapedType::isDynamic) == 1;
}

/// Why a concatenation along a dynamic size does not compile, or "": each part starts at a
/// static position or a product of sizes (the kernel computes both: [T, 1] of a pad, [1, T],
/// [T, T]), and the result is their lengths' sum (T + 1: a size the module derives).
std::string concatAlongSize(PrimOp op, const ops::DerivedSizes &sizes) {
  auto axis = static_cast<size_t>(*op.getAxis());
  std::optional<ops::SizeProduct> start = ops::SizeProduct{0, {}};
  int64_t end = 0; // where the last part starts, as a dimension
  for (mlir::Value operand : op->getOperands()) {
    if (!start)
      return "a concatenation along the dynamic dimension whose parts start at a size plus a "
             "number";
    end = ops::productDim(*start);
    ops::SizeProduct length = ops::productOf(shapeWithSizes(typeOf(operand))[axis]);
    if (start->factor == 0)
      start = length;
    else if (length.powers == start->powers)
      start->factor += length.factor;
    else
      start = std::nullopt;
  }
  int64_t last = shapeWithSizes(typeOf(op->getOperands().back()))[axis],
          result = shapeWithSizes(typeOf(op.getResult()))[axis];
  bool sums = start ? ops::productDim(*start) == result
                    : (!ops::isDynamicDim(end) && sizes.difference(result, last) == end) ||
                          (!ops::isDynamicDim(last) && sizes.difference(result, end) == last);
  return sums ? ""
              : "a concatenation along the dynamic dimension of another length than its parts'";
}

/// Why `op` makes a size other than a static one times a power of s0 or a size `sizes` derives,
/// or an empty string.
std::string violation(PrimOp op, const ops::DerivedSizes &sizes) {
  Prim prim = toOpsPrim(op.getPrim());
  mlir::RankedTensorType out = typeOf(op.getResult());
  bool anyDynamic = false;
  for (mlir::Type t : llvm::concat<const mlir::Type>(op->getOperandTypes(), op->getResultTypes())) {
    auto tensor = mlir::cast<mlir::RankedTensorType>(t);
    anyDynamic |= dynamic(tensor);
    // Sizes are computed as powers of the sizes at their stand-ins (sched::SizeStandIns,
    // primes from 4099): a square of each (the scores of an attention, s0^2 or
    // s0*s1^2 with a batch) is as far as they go.
    std::vector<int> symbols = dynamicSymbols(tensor);
    for (int k : symbols)
      if (llvm::count(symbols, k) > 2 || symbols.size() > 3)
        return "a tensor of s" + std::to_string(k) + "^3 or more elements";
  }
  if (!anyDynamic)
    return "";
  // The (first) operand; a source's result.
  mlir::RankedTensorType in = op->getNumOperands() ? typeOf(op->getOperand(0)) : out;
  // Right-aligned dims of `from` that are s0 where `to` has a static size.
  auto pinned = [](mlir::RankedTensorType from, mlir::RankedTensorType to, int64_t skipLast) {
    for (int64_t i = skipLast; i < from.getRank() && i < to.getRank(); ++i)
      if (from.isDynamicDim(from.getRank() - 1 - i) && !to.isDynamicDim(to.getRank() - 1 - i))
        return to.getDimSize(to.getRank() - 1 - i);
    return int64_t{-1};
  };
  auto meets = [](int64_t size) {
    return "the dynamic size meets a static one (" + std::to_string(size) + ")";
  };
  switch (ops::primKind(prim)) {
  case PrimKind::Source:
  case PrimKind::Unary:
  case PrimKind::Binary:
  case PrimKind::Compare:
  case PrimKind::Select: // operands of one type, sizes included (the op's verifier)
  case PrimKind::Reduce: // a loop over a size, or the size kept
    return "";
  case PrimKind::Matmul: {
    // Batch dimensions broadcast against each other: s0 against a static one pins it.
    for (mlir::Value operand : op->getOperands())
      if (int64_t size = pinned(typeOf(operand), out, 2); size >= 0)
        return meets(size);
    return "";
  }
  case PrimKind::Conv: // over images of the batch
    return dynamicFirstOnly(out) && dynamicFirstOnly(in)
               ? ""
               : "a convolution over the dynamic dimension";
  case PrimKind::Layout:
    break;
  }
  switch (prim) {
  case Prim::BroadcastTo: // right-aligned
    if (int64_t size = pinned(in, out, 0); size >= 0)
      return meets(size);
    return "";
  case Prim::Reshape: { // the same product of sizes (B * T rows of x.view(-1, C) included)
    ops::SizeProduct from = ops::productOf(shapeWithSizes(in)),
                     to = ops::productOf(shapeWithSizes(out));
    return from == to ? ""
                      : "a reshape changes the number of elements (" + from.text() + " into " +
                            to.text() + ")";
  }
  case Prim::Transpose:
    return "";
  case Prim::Slice: {
    // Along a size T: static positions from its start (x[:, 0], x[:, :4]; the frontend guards
    // T to reach them), or from a position to T less a number, a size derived from T (x[:, 1:]
    // takes T - 1 from 1 to T, its end), whose derivation the module lists.
    ops::PrimAttrs a = primAttrsOf(op);
    std::vector<int64_t> from = shapeWithSizes(in), to = shapeWithSizes(out);
    for (size_t i = 0; i < a.axes.size(); ++i) {
      int64_t axis = a.axes[i];
      if (!ops::isDynamicDim(from[axis]) || !ops::isDynamicDim(to[axis]))
        continue;
      std::optional<int64_t> beyond = sizes.difference(a.ends[i], from[axis]),
                             taken = sizes.difference(to[axis], a.ends[i]);
      if (!beyond || *beyond > 0 || !taken || *taken != -a.starts[i] || a.steps[i] != 1)
        return "a slice of the dynamic dimension that is not a size derived from it";
    }
    return "";
  }
  case Prim::Concat:
    if (!op.getAxis())
      return "a concatenation without an axis";
    if (out.isDynamicDim(static_cast<int64_t>(*op.getAxis())))
      return concatAlongSize(op, sizes);
    for (mlir::Value operand : op->getOperands())
      if (int64_t size = pinned(typeOf(operand), out, 0); size >= 0)
        return meets(size);
    return "";
  case Prim::IndexCopy: // a step over its buffers' sizes at each call
  case Prim::Nonzero:   // a step over its buffers' sizes at each call
  case Prim::Nms:
  case Prim::Argsort:
    return "";
  case Prim::Gather: // rows of a table of any rows (its other dims are the lookup's)
    return "";
  case Prim::Window:
    return dynamicFirstOnly(out) && dynamicFirstOnly(in) ? ""
                                                         : "a window over the dynamic dimension";
  default:
    return "a " + std::string(ops::primName(prim)) + " of a dynamic size";
  }
}

struct SirCheckBatchDimsPass : impl::SirCheckBatchDimsBase<SirCheckBatchDimsPass> {
  void runOnOperation() override {
    mlir::FailureOr<ops::DerivedSizes> sizes = derivedSizesOf(getOperation());
    if (mlir::failed(sizes))
      return signalPassFailure();
    mlir::WalkResult result = getOperation().walk([&](PrimOp op) {
      std::string why = violation(op, *sizes);
      if (why.empty())
        return mlir::WalkResult::advance();
      (void)(emitCodedError(op.getLoc(), DiagCode::KernelUnsupported)
             << "every dynamic dimension is compiled as a product of the dynamic sizes; here "
             << why << " (" << ops::primName(toOpsPrim(op.getPrim())) << " to "
             << op.getResult().getType() << "): trace each shape and compile the traces into "
             << "one artifact (sotc compile a.pb b.pb -o k.so)");
      return mlir::WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace sotc::sir
