//===- EpilogueMatcher.h - What a library step can fold of the group after it -------------===//
//
// A GEMM or convolution step can apply a bias, an activation (and a convolution a residual
// add) to its result before storing it. The passes that make those steps match the consumer
// group's primitives against those forms with EpilogueMatcher: patterns over values, built
// from primitives and constants, that remember every primitive a match used (a fold must use
// them all).
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_CONVERSION_SIRTOMAPEXPR_EPILOGUEMATCHER_H
#define SOTC_CONVERSION_SIRTOMAPEXPR_EPILOGUEMATCHER_H

#include "dialects/sir/IR/SirDialect.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace sotc::epilogue {

inline std::vector<int64_t> shapeOf(mlir::Value v) {
  llvm::ArrayRef<int64_t> s = mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
  return {s.begin(), s.end()};
}

/// The primitive `op` is, if it is one.
inline std::optional<ops::Prim> primOf(mlir::Operation *op) {
  auto prim = mlir::dyn_cast_or_null<sir::PrimOp>(op);
  return prim ? std::optional<ops::Prim>(sir::toOpsPrim(prim.getPrim())) : std::nullopt;
}

/// Matches a consumer group's primitives against an epilogue, op by op, remembering every
/// primitive it used (a fold must use all of them). Sums and products match either way round.
class EpilogueMatcher {
public:
  using Pattern = std::function<bool(mlir::Value)>;

  Pattern prim(ops::Prim p, std::vector<Pattern> operands, bool commutative = false) {
    return [=](mlir::Value v) {
      auto op = mlir::dyn_cast_or_null<sir::PrimOp>(v.getDefiningOp());
      if (primOf(op) != p || op->getNumOperands() != operands.size())
        return false;
      // An attempt that fails forgets what it used.
      auto all = [&](bool swapped) {
        size_t mark = used_.size();
        for (size_t i = 0; i < operands.size(); ++i)
          if (!operands[swapped ? operands.size() - 1 - i : i](op->getOperand(i))) {
            used_.resize(mark);
            return false;
          }
        return true;
      };
      if (!all(false) && !(commutative && all(true)))
        return false;
      used_.push_back(op);
      return true;
    };
  }
  Pattern add(Pattern a, Pattern b) { return prim(ops::Prim::Add, {a, b}, true); }
  Pattern mul(Pattern a, Pattern b) { return prim(ops::Prim::Mul, {a, b}, true); }
  /// A constant of value `c` (a fill_constant, possibly broadcast).
  Pattern constant(double c) {
    return [=](mlir::Value v) {
      auto op = mlir::dyn_cast_or_null<sir::PrimOp>(v.getDefiningOp());
      if (primOf(op) == ops::Prim::BroadcastTo && constant(c)(op->getOperand(0))) {
        used_.push_back(op);
        return true;
      }
      if (primOf(op) != ops::Prim::FillConstant || !op.getValue() ||
          std::abs(op.getValue()->convertToDouble() - c) > 1e-7 * std::max(1.0, std::abs(c)))
        return false;
      used_.push_back(op);
      return true;
    };
  }

  void use(mlir::Operation *op) { used_.push_back(op); }
  /// How many different primitives the match used.
  size_t usedCount() const {
    return std::set<mlir::Operation *>(used_.begin(), used_.end()).size();
  }
  void reset() { used_.clear(); }

private:
  std::vector<mlir::Operation *> used_;
};

/// The group that is `result`'s only reader, and the block argument it reads it as; a null
/// group where there is none.
inline std::pair<sir::GroupOp, mlir::BlockArgument> soleReader(mlir::Value result) {
  if (!result.hasOneUse())
    return {};
  mlir::OpOperand &use = *result.getUses().begin();
  auto reader = mlir::dyn_cast<sir::GroupOp>(use.getOwner());
  if (!reader)
    return {};
  return {reader, reader.getBody().getArgument(use.getOperandNumber())};
}

/// Puts a library step's result `step` in place of `group`'s, or of `consumer`'s where the step
/// folded that group in (null: none); erases what it replaced, remembering `consumer` in
/// `folded` (the pass's loop skips it).
inline void replaceWithStep(sir::GroupOp group, sir::GroupOp consumer, mlir::Value step,
                            std::set<mlir::Operation *> &folded) {
  if (consumer) {
    consumer->getResult(0).replaceAllUsesWith(step);
    folded.insert(consumer);
    consumer.erase();
  } else {
    group->getResult(0).replaceAllUsesWith(step);
  }
  group.erase();
}

} // namespace sotc::epilogue

#endif // SOTC_CONVERSION_SIRTOMAPEXPR_EPILOGUEMATCHER_H
