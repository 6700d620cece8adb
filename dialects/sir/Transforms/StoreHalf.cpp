//===- StoreHalf.cpp - Half values between kernels stored in half -------------------------===//
//
// After sotc-sir-fuse. sotc-sir-widen-half computes half programs in float32 and marks each
// float32 value that stands for a half one (`stored_as`). Inside a kernel it stays float32;
// where a group's result goes to other groups (global memory between kernels) it is rounded
// to its half type when the producer stores it and widened where each reader loads it, as the
// frameworks store every operator's result: half the bytes between kernels, one rounding per
// kernel. Matmul groups keep float32 on both sides (a GEMM library reads them as they are),
// and so does a concat that is a kernel of its own.
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sir/IR/SirTypes.h"
#include "dialects/sir/Transforms/Passes.h"
#include "dialects/sir/Transforms/PrimGraphs.h"

#include "compiler/ops/Primitives.h"

#include "mlir/IR/Builders.h"

namespace sotc::sir {

#define GEN_PASS_DEF_SIRSTOREHALF
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

/// Whether `use` can read a half value where it is: a group (not a matmul, not a concat,
/// which read their operands from memory as they are).
bool halfReader(mlir::OpOperand &use) {
  auto group = mlir::dyn_cast<GroupOp>(use.getOwner());
  if (!group || group.getKind() == "matmul")
    return false;
  mlir::BlockArgument arg = group.getBody().getArgument(use.getOperandNumber());
  return llvm::none_of(arg.getUsers(), [](mlir::Operation *u) {
    auto p = mlir::dyn_cast<PrimOp>(u);
    return p && toOpsPrim(p.getPrim()) == ops::Prim::Concat;
  });
}

/// Whether `use` moves data without arithmetic (a layout primitive's data operand): it runs
/// on the half values as they are (a window or a gather reads its operand from memory).
bool movesHalf(mlir::OpOperand &use) {
  auto p = mlir::dyn_cast<PrimOp>(use.getOwner());
  if (!p || ops::primKind(toOpsPrim(p.getPrim())) != ops::PrimKind::Layout)
    return false;
  return toOpsPrim(p.getPrim()) != ops::Prim::Gather || use.getOperandNumber() == 0;
}

/// A value's name in its kernel.
std::string nameOf(mlir::Value v) {
  auto p = v.getDefiningOp<PrimOp>();
  return p && p.getName() ? p.getName()->str() : "value";
}

/// A cast of `v` to `type` named `name` (names are the kernels' tensor names).
mlir::Value namedCast(mlir::OpBuilder &b, mlir::Value v, mlir::Type type, const std::string &name) {
  mlir::Value cast = castPrim(b, v.getLoc(), v, type);
  cast.getDefiningOp<PrimOp>().setNameAttr(b.getStringAttr(name));
  return cast;
}

/// The half value a group stores for its float32 `v`: the half value `v` widens, a rounding
/// the group already makes (the program's result), else a new one right after `v` (in the
/// stage of the kernel that computes `v`, not after a reduction that follows).
mlir::Value rounded(PrimOp v, mlir::Type half) {
  // (A kernel stores what it computes: a half argument passed through is rounded again.)
  if (toOpsPrim(v.getPrim()) == ops::Prim::Cast && v->getOperand(0).getType() == half &&
      v->getOperand(0).getDefiningOp())
    return v->getOperand(0);
  for (mlir::Operation *user : v->getUsers())
    if (auto p = mlir::dyn_cast<PrimOp>(user);
        p && toOpsPrim(p.getPrim()) == ops::Prim::Cast && p.getType() == half)
      return p.getResult();
  mlir::OpBuilder b(v);
  b.setInsertionPointAfter(v);
  return namedCast(b, v.getResult(), half, nameOf(v.getResult()) + "_half");
}

/// A reader group's argument `arg`, made half: layout primitives move it as it is (their
/// results widened after them), everything else reads it widened where the body starts.
void readWidened(mlir::BlockArgument arg, mlir::Type half, const std::string &name) {
  auto wide = mlir::cast<mlir::RankedTensorType>(arg.getType());
  arg.setType(half);
  mlir::Type element = mlir::cast<mlir::RankedTensorType>(half).getElementType();
  mlir::Value widened;
  for (mlir::OpOperand &read : llvm::make_early_inc_range(arg.getUses())) {
    if (movesHalf(read)) {
      auto mover = mlir::cast<PrimOp>(read.getOwner());
      mlir::Value moved = mover.getResult();
      mlir::Type movedWide = moved.getType();
      moved.setType(mlir::cast<mlir::RankedTensorType>(movedWide).clone(element));
      mlir::OpBuilder after(mover);
      after.setInsertionPointAfter(mover);
      mlir::Value w = namedCast(after, moved, movedWide, nameOf(moved) + "_wide");
      moved.replaceAllUsesExcept(w, w.getDefiningOp());
      if (auto storedAs = mover->getAttr(kStoredAs)) // what its group may store in half
        w.getDefiningOp()->setAttr(kStoredAs, storedAs);
      continue;
    }
    if (!widened) {
      auto top = mlir::OpBuilder::atBlockBegin(arg.getOwner());
      widened = namedCast(top, arg, wide, name + "_wide");
    }
    read.set(widened);
  }
}

/// Whether `group` is one concat (a kernel of its own that moves its operands as they are:
/// a rounding inside it would make it a fused kernel that concats).
bool loneConcat(GroupOp group) {
  mlir::Block &body = group.getBody().front();
  if (!llvm::hasSingleElement(body.without_terminator()))
    return false;
  auto p = mlir::dyn_cast<PrimOp>(body.front());
  return p && toOpsPrim(p.getPrim()) == ops::Prim::Concat;
}

struct SirStoreHalfPass : impl::SirStoreHalfBase<SirStoreHalfPass> {
  void runOnOperation() override {
    for (GroupOp group : getOperation().getBody().front().getOps<GroupOp>()) {
      if (group.getKind() == "matmul" || loneConcat(group))
        continue;
      mlir::Operation *yield = group.getBody().front().getTerminator();
      for (unsigned i = 0; i < group->getNumResults(); ++i) {
        mlir::Value result = group->getResult(i);
        auto def = yield->getOperand(i).getDefiningOp<PrimOp>();
        auto storedAs = def ? def->getAttrOfType<mlir::TypeAttr>(kStoredAs) : nullptr;
        // Only between kernels, to readers that can take it.
        if (!storedAs || result.use_empty() ||
            !llvm::all_of(result.getUses(), [](mlir::OpOperand &u) { return halfReader(u); }))
          continue;
        auto wide = mlir::cast<mlir::RankedTensorType>(result.getType());
        mlir::Value half = rounded(def, wide.clone(storedAs.getValue()));
        yield->setOperand(i, half);
        result.setType(half.getType());
        for (mlir::OpOperand &use : result.getUses()) {
          auto reader = mlir::cast<GroupOp>(use.getOwner());
          readWidened(reader.getBody().getArgument(use.getOperandNumber()), half.getType(),
                      nameOf(half));
        }
      }
    }
  }
};

} // namespace
} // namespace sotc::sir
