//===- HoistWeights.cpp - What depends on weights alone, computed once per set of weights --===//
//
// A model's kernels read its weights in other forms than the state dict holds: a conv weight
// reshaped to the GEMM's rows, a batch norm folded into it, a per-channel scale. None of that
// depends on the call's inputs, so it moves out of the entry subgraph into
// @prepare_weights, which the runtime runs when the weights are loaded or rebound; the entry
// subgraph reads its results as trailing arguments. (IREE hoists such expressions into
// global initializers; sotc keeps them rebindable, since `params=` swaps weights by name.)
//
// A primitive is hoisted when its operands are weights, hoisted results or operand-less
// constants, and at least one is a weight. A hoisted value the entry subgraph still reads is
// a prepared tensor; one larger than the largest weight it comes from (a bias broadcast to
// the activation's shape) or one the subgraph returns stays in the subgraph instead.
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sir/IR/SirTypes.h"
#include "dialects/sir/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <limits>
#include <map>

namespace sotc::sir {

#define GEN_PASS_DEF_SIRHOISTWEIGHTS
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

/// The elements of `v`; a tensor of the dynamic batch counts as larger than any weight.
int64_t elements(mlir::Value v) {
  auto t = mlir::cast<mlir::RankedTensorType>(v.getType());
  return t.hasStaticShape() ? t.getNumElements() : std::numeric_limits<int64_t>::max();
}

std::string nameOf(SubgraphOp subgraph, mlir::BlockArgument arg) {
  auto name = subgraph.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(), "sir.name");
  return name ? name.str() : "arg" + std::to_string(arg.getArgNumber());
}

class Hoister {
public:
  explicit Hoister(SubgraphOp entry) : entry_(entry) {}

  /// Moves what depends on weights alone into a new @prepare_weights subgraph after the entry.
  void run() {
    mlir::Block &body = entry_.getBody().front();
    for (mlir::BlockArgument arg : body.getArguments())
      if (entry_.getArgAttr(arg.getArgNumber(), kWeightAttr) &&
          !entry_.getArgAttr(arg.getArgNumber(), kStateAttr)) // state changes every call
        source_[arg] = {arg};
    if (source_.empty())
      return;
    for (mlir::Operation &op : body.without_terminator())
      consider(op);
    keepWhatMustStay();
    llvm::SetVector<mlir::Value> prepared = boundary();
    if (prepared.empty())
      return;
    build(prepared);
  }

private:
  /// The weights a hoisted value is computed from (by argument), or none for a constant.
  using Sources = llvm::SmallVector<mlir::BlockArgument, 4>;

  void consider(mlir::Operation &op) {
    auto prim = mlir::dyn_cast<PrimOp>(op);
    if (!prim)
      return;
    if (prim->getNumOperands() == 0) {
      constants_.insert(prim.getResult());
      return;
    }
    Sources from;
    for (mlir::Value operand : prim->getOperands()) {
      if (constants_.count(operand))
        continue;
      auto it = source_.find(operand);
      if (it == source_.end())
        return;
      for (mlir::BlockArgument w : it->second)
        if (!llvm::is_contained(from, w))
          from.push_back(w);
    }
    if (from.empty())
      return; // constants alone: canonicalization's business, not the weights'
    llvm::sort(from, [](mlir::BlockArgument a, mlir::BlockArgument b) {
      return a.getArgNumber() < b.getArgNumber();
    });
    source_[prim.getResult()] = from;
    hoisted_.insert(prim);
  }

  bool isHoisted(mlir::Operation *op) const { return op && hoisted_.count(op); }

  /// Values the subgraph reads that a hoisted primitive computes.
  llvm::SetVector<mlir::Value> boundary() {
    llvm::SetVector<mlir::Value> out;
    for (mlir::Operation &op : entry_.getBody().front())
      if (!isHoisted(&op))
        for (mlir::Value v : op.getOperands())
          if (isHoisted(v.getDefiningOp()))
            out.insert(v);
    return out;
  }

  /// Un-hoists prepared values that would be larger than their weights or are returned,
  /// until none is left (un-hoisting one makes its operands prepared values).
  void keepWhatMustStay() {
    mlir::Operation *terminator = entry_.getBody().front().getTerminator();
    for (bool changed = true; changed;) {
      changed = false;
      for (mlir::Value v : boundary()) {
        int64_t largest = 0;
        for (mlir::BlockArgument w : source_.at(v))
          largest = std::max(largest, elements(w));
        bool returned = llvm::is_contained(terminator->getOperands(), v);
        if (elements(v) > largest || returned) {
          hoisted_.remove(v.getDefiningOp());
          source_.erase(v);
          changed = true;
        }
      }
      // What reads a value that stays, stays too.
      for (mlir::Operation &op : entry_.getBody().front().without_terminator())
        if (isHoisted(&op) && llvm::any_of(op.getOperands(), [&](mlir::Value operand) {
              return !source_.count(operand) && !constants_.count(operand);
            })) {
          hoisted_.remove(&op);
          source_.erase(op.getResult(0));
          changed = true;
        }
    }
  }

  /// A readable, unique name for a prepared value: after its largest weight (the first of
  /// equals), as "prepared.<weight>", numbered from the second one on.
  std::string preparedName(mlir::Value v) {
    mlir::BlockArgument root = source_.at(v).front();
    for (mlir::BlockArgument w : source_.at(v))
      if (elements(w) > elements(root))
        root = w;
    std::string base = "prepared." + nameOf(entry_, root);
    int n = ++named_[base];
    return n == 1 ? base : base + "." + std::to_string(n);
  }

  void build(const llvm::SetVector<mlir::Value> &prepared) {
    mlir::Block &body = entry_.getBody().front();
    mlir::OpBuilder b(entry_.getContext());
    b.setInsertionPointAfter(entry_);
    // Its arguments: the weights the hoisted primitives read, in the entry's order.
    llvm::SmallVector<mlir::BlockArgument> weights;
    for (mlir::Operation *op : hoisted_)
      for (mlir::Value operand : op->getOperands())
        if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(operand))
          if (!llvm::is_contained(weights, arg))
            weights.push_back(arg);
    llvm::sort(weights, [](mlir::BlockArgument a, mlir::BlockArgument c) {
      return a.getArgNumber() < c.getArgNumber();
    });
    llvm::SmallVector<mlir::Type> argTypes, resultTypes;
    llvm::SmallVector<mlir::Attribute> argAttrs;
    for (mlir::BlockArgument w : weights) {
      argTypes.push_back(w.getType());
      argAttrs.push_back(entry_.getArgAttrDict(w.getArgNumber()));
    }
    for (mlir::Value v : prepared)
      resultTypes.push_back(v.getType());
    auto prepare = SubgraphOp::create(b, entry_.getLoc(), kPrepareWeights,
                                      b.getFunctionType(argTypes, resultTypes), nullptr,
                                      b.getArrayAttr(argAttrs), nullptr);
    mlir::Block *block = b.createBlock(&prepare.getBody());
    mlir::IRMapping map;
    for (mlir::BlockArgument w : weights)
      map.map(w, block->addArgument(w.getType(), w.getLoc()));
    // The hoisted primitives in order, with the constants they read.
    for (mlir::Operation &op : body.without_terminator()) {
      bool constant = op.getNumResults() == 1 && constants_.count(op.getResult(0));
      bool read = constant && llvm::any_of(op.getUsers(), [&](mlir::Operation *user) {
                    return isHoisted(user);
                  });
      if (isHoisted(&op) || read)
        b.clone(op, map);
    }
    llvm::SmallVector<mlir::Value> results;
    for (mlir::Value v : prepared) {
      mlir::Value inside = map.lookup(v);
      mlir::cast<PrimOp>(inside.getDefiningOp()).setNameAttr(b.getStringAttr(preparedName(v)));
      results.push_back(inside);
    }
    OutputOp::create(b, entry_.getLoc(), results);

    // The entry reads the prepared values as trailing arguments, named as @prepare_weights
    // names its results; what only the hoisted primitives read goes.
    for (mlir::Value v : prepared) {
      mlir::StringAttr name =
          mlir::cast<PrimOp>(map.lookup(v).getDefiningOp()).getNameAttr();
      unsigned index = body.getNumArguments();
      mlir::DictionaryAttr attrs = b.getDictionaryAttr(
          {b.getNamedAttr("sir.name", name),
           b.getNamedAttr("sir.stop_gradient", b.getBoolAttr(true))});
      if (mlir::failed(entry_.insertArgument(index, v.getType(), attrs, v.getLoc())))
        continue;
      v.replaceAllUsesWith(body.getArgument(index));
    }
    llvm::SmallVector<mlir::Operation *> gone;
    for (mlir::Operation &op : body.without_terminator())
      if (isHoisted(&op) || (op.getNumResults() == 1 && constants_.count(op.getResult(0))))
        gone.push_back(&op);
    for (mlir::Operation *op : llvm::reverse(gone))
      if (op->use_empty())
        op->erase();
  }

  SubgraphOp entry_;
  llvm::DenseMap<mlir::Value, Sources> source_;
  llvm::DenseSet<mlir::Value> constants_;
  llvm::SetVector<mlir::Operation *> hoisted_;
  std::map<std::string, int> named_;
};

struct SirHoistWeightsPass : impl::SirHoistWeightsBase<SirHoistWeightsPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    if (module.lookupSymbol(kPrepareWeights))
      return; // already hoisted
    // The runtime binds weights where a call starts: the entry subgraph, the first one.
    auto subgraphs = module.getOps<SubgraphOp>();
    if (!subgraphs.empty())
      Hoister(*subgraphs.begin()).run();
  }
};

} // namespace
} // namespace sotc::sir
