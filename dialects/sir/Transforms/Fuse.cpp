//===- Fuse.cpp - Primitives into fusion groups -------------------------------------------===//
//
// 1. Number the subgraph's primitives; each starts in a group of its own.
// 2. For each primitive in order, try to merge the groups of its operands' producers into
//    its group (legality: no matmul or conv2d, one anchor iteration space, no cycle between
//    groups).
// 3. Order the groups topologically (ties by first primitive) and rebuild the subgraph as
//    sir.group ops, each holding its primitives, constants first. A tensor with no
//    elements stays an operand-less fill outside every group: no kernel computes it.
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/sir/Transforms/Passes.h"

#include "compiler/ops/Inference.h"
#include "compiler/ops/Primitives.h"
#include "compiler/support/Diagnostics.h"
#include "dialects/sir/IR/SirTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

namespace sotc::sir {

#define GEN_PASS_DEF_SIRFUSE
#include "dialects/sir/Transforms/Passes.h.inc"

namespace {

ops::Prim primOf(PrimOp op) { return toOpsPrim(op.getPrim()); }

/// The most buffers (inputs and outputs) one kernel may take.
constexpr size_t kMaxKernelBuffers = 64;

/// A tensor's elements: -1 where a dynamic size counts (0 where a static dimension is 0).
int64_t numel(mlir::Type t) {
  auto shaped = mlir::cast<mlir::RankedTensorType>(t);
  if (llvm::is_contained(shaped.getShape(), 0))
    return 0;
  return shaped.hasStaticShape() ? shaped.getNumElements() : -1;
}

/// A tensor's size as fusion compares them: one with dynamic sizes (each a dimension of its
/// own, sotc-sir-check-batch-dims) outweighs any static one, more sizes outweigh fewer, then
/// the elements of a row count.
struct Extent {
  int sizes = 0;        // how many of the dynamic sizes it has
  unsigned which = 0;   // which (bit k: s_k)
  int64_t elements = 0; // of one row of them

  explicit Extent(mlir::Type type) {
    auto t = mlir::cast<mlir::RankedTensorType>(type);
    for (int k : dynamicSymbols(t))
      which |= 1u << k;
    sizes = llvm::popcount(which);
    elements = ops::productOf(shapeWithSizes(t)).factor;
  }
  Extent() = default;
  bool operator==(const Extent &o) const { return which == o.which && elements == o.elements; }
  bool operator<(const Extent &o) const {
    return std::tie(sizes, which, elements) < std::tie(o.sizes, o.which, o.elements);
  }
};

/// Whether tensor `t` can be indexed from the anchor's iteration space.
bool derivable(mlir::RankedTensorType t, mlir::RankedTensorType anchor) {
  std::vector<int64_t> a = shapeWithSizes(t), b = shapeWithSizes(anchor);
  if (a == b)
    return true;
  // A reshape or transpose of the same elements: the same product, each size to the same
  // power ([s0, s1] is not [s0, s1, s1], though both have s0 and s1).
  if (ops::productOf(a) == ops::productOf(b))
    return true;
  // A reduced (keepdim) or broadcast source: numpy broadcasting of t to the anchor's shape.
  if (a.size() > b.size())
    return false;
  for (size_t i = 1; i <= a.size(); ++i)
    if (a[a.size() - i] != 1 && a[a.size() - i] != b[b.size() - i])
      return false;
  return true;
}

class Fuser {
public:
  explicit Fuser(SubgraphOp subgraph) : subgraph_(subgraph) {}

  mlir::LogicalResult run() {
    // Primitives nothing reads compute nothing: drop them (a kernel needs an output).
    for (bool erased = true; erased;) {
      std::vector<mlir::Operation *> dead;
      for (mlir::Operation &op : subgraph_.getBody().front().without_terminator())
        if (mlir::isa<PrimOp>(op) && op.use_empty())
          dead.push_back(&op);
      for (mlir::Operation *op : dead)
        op->erase();
      erased = !dead.empty();
    }
    cloneSharedConstants();
    for (mlir::Operation &op : subgraph_.getBody().front().without_terminator()) {
      auto prim = mlir::dyn_cast<PrimOp>(op);
      if (!prim)
        return op.emitOpError(
            "sotc-sir-fuse expects primitives only: run sotc-sir-decompose first");
      // A tensor with no elements (sotc-sir-fold-empty-tensors) needs no kernel.
      if (numel(prim.getType()) == 0) {
        empties_.push_back(prim);
        continue;
      }
      for (mlir::Value v : prim.getOperands())
        if (numel(v.getType()) == 0)
          return op.emitOpError("reads a tensor with no elements: run "
                                "sotc-sir-fold-empty-tensors first");
      index_[prim] = prims_.size();
      prims_.push_back(prim);
    }
    nameUnnamed();
    parent_.resize(prims_.size());
    std::iota(parent_.begin(), parent_.end(), 0);
    members_.resize(prims_.size());
    visited_.assign(prims_.size(), 0);
    for (size_t i = 0; i < prims_.size(); ++i)
      members_[i] = {i};
    for (size_t i = 0; i < prims_.size(); ++i)
      for (mlir::Value operand : prims_[i].getOperands())
        if (auto def = operand.getDefiningOp<PrimOp>())
          tryMerge(index_.at(def), i);
    rebuild();
    return mlir::success();
  }

private:
  /// A constant (a fill, an iota) read by several primitives is made again for each reader:
  /// made wherever it is read, it costs nothing, and as one shared producer it would merge
  /// readers that have nothing else in common into one kernel (SVD's one zero [1, 2] read by
  /// 43 chains, one of them broadcast to another shape of the anchor's size: no one index).
  /// The original keeps its name for the subgraph's outputs; the copies are named later.
  void cloneSharedConstants() {
    mlir::Block &block = subgraph_.getBody().front();
    for (mlir::Operation &op : llvm::make_early_inc_range(block.without_terminator())) {
      auto prim = mlir::cast<PrimOp>(op);
      if (ops::primKind(primOf(prim)) != ops::PrimKind::Source || prim->hasOneUse())
        continue;
      bool keep = llvm::any_of(prim->getUsers(),
                               [&](mlir::Operation *u) { return u == block.getTerminator(); });
      std::vector<mlir::OpOperand *> uses;
      for (mlir::OpOperand &use : prim->getUses())
        if (use.getOwner() != block.getTerminator())
          uses.push_back(&use);
      std::sort(uses.begin(), uses.end(), [](mlir::OpOperand *a, mlir::OpOperand *b) {
        return a->getOwner() != b->getOwner() ? a->getOwner()->isBeforeInBlock(b->getOwner())
                                              : a->getOperandNumber() < b->getOperandNumber();
      });
      for (mlir::OpOperand *use : uses) {
        if (!keep) { // the first reader reads the original
          keep = true;
          continue;
        }
        mlir::OpBuilder b(use->getOwner());
        auto copy = mlir::cast<PrimOp>(b.clone(op));
        copy.removeNameAttr();
        use->set(copy.getResult());
      }
    }
  }

  size_t find(size_t i) { return parent_[i] == i ? i : parent_[i] = find(parent_[i]); }

  /// The primitives of the group whose root is `root`, in program order.
  const std::vector<size_t> &members(size_t root) const { return members_[root]; }

  /// Whether the groups of `a` and `b` may become one group.
  bool legal(size_t a, size_t b) {
    std::vector<size_t> ops = members(a);
    ops.insert(ops.end(), members(b).begin(), members(b).end());
    std::set<size_t> inUnion(ops.begin(), ops.end());
    // One anchor: a largest tensor any member reads or writes.
    std::vector<mlir::RankedTensorType> tensors;
    for (size_t i : ops) {
      // A matmul, a conv2d, the runtime's steps (index_copy, nonzero, nms, argsort) and a
      // concat (each output element reads one of several inputs) stay alone.
      if (primOf(prims_[i]) == ops::Prim::Matmul || primOf(prims_[i]) == ops::Prim::Conv2d ||
          ops::isRuntimeStep(primOf(prims_[i])) || primOf(prims_[i]) == ops::Prim::Concat)
        return false;
      // What a window or a gather reads is read through it (padded windows, rows picked by
      // values), not indexed from the anchor: it comes from outside the group, whole.
      if (primOf(prims_[i]) == ops::Prim::Window || primOf(prims_[i]) == ops::Prim::Gather) {
        for (mlir::Value v : prims_[i]->getOperands())
          if (auto def = v.getDefiningOp<PrimOp>(); def && inUnion.count(index_.at(def)))
            return false;
      } else if (primOf(prims_[i]) == ops::Prim::Slice) {
        // What a slice reads from outside the group is read at the slice's positions of
        // the anchor's points (the heads of a fused QKV projection): not checked against it.
        mlir::Value v = prims_[i]->getOperand(0);
        auto def = v.getDefiningOp<PrimOp>();
        if (def && inUnion.count(index_.at(def)))
          tensors.push_back(mlir::cast<mlir::RankedTensorType>(v.getType()));
      } else {
        for (mlir::Value v : prims_[i]->getOperands())
          tensors.push_back(mlir::cast<mlir::RankedTensorType>(v.getType()));
      }
      // A reduction's result is indexed through the reduction itself; whoever reads it
      // outside the row structure brings it in as an operand, which is checked.
      if (ops::primKind(primOf(prims_[i])) != ops::PrimKind::Reduce)
        tensors.push_back(mlir::cast<mlir::RankedTensorType>(prims_[i].getType()));
    }
    // A reduction that sums a dynamic size away writes its result even where the size is 0
    // (a kernel counted none): among tensors of that size to a higher power (a cumsum's
    // [s0, s0] beside a count over [s0]) the kernel's blocks would run over the rows, none
    // of them there to write it.
    for (size_t i : ops) {
      if (ops::primKind(primOf(prims_[i])) != ops::PrimKind::Reduce)
        continue;
      ops::SizeProduct in = ops::productOf(shapeWithSizes(
                           mlir::cast<mlir::RankedTensorType>(prims_[i]->getOperand(0).getType()))),
                       out = ops::productOf(shapeWithSizes(
                           mlir::cast<mlir::RankedTensorType>(prims_[i].getType())));
      for (mlir::RankedTensorType t : tensors) {
        ops::SizeProduct p = ops::productOf(shapeWithSizes(t));
        for (size_t k = 0; k < in.powers.size(); ++k)
          if (in.powers[k] > out.powers[k] && p.powers[k] > in.powers[k])
            return false;
      }
    }
    // Any of the largest tensors may be the anchor (sotc-convert-sir-to-mapexpr tries them
    // all): a bias read as [C, 1, 1] indexes from a conv's [N, C, H, W] result, not from the
    // GEMM's [N, C, H*W] it reshapes.
    Extent most;
    for (mlir::RankedTensorType t : tensors)
      most = std::max(most, Extent(t));
    bool anchored = false;
    for (mlir::RankedTensorType anchor : tensors)
      if (Extent(anchor) == most &&
          llvm::all_of(tensors, [&](mlir::RankedTensorType t) { return derivable(t, anchor); })) {
        anchored = true;
        break;
      }
    if (!anchored)
      return false;
    // One window per tensor: a kernel indexes each tensor one way, so what a slice reads has
    // no other reader in the group (x[0] + x[1] reads two windows of x: two kernels).
    for (size_t i : ops) {
      if (primOf(prims_[i]) != ops::Prim::Slice)
        continue;
      mlir::Value sliced = prims_[i]->getOperand(0);
      for (size_t j : ops)
        if (j != i && llvm::is_contained(prims_[j]->getOperands(), sliced))
          return false;
      // Made in the group, what the slice reads is computed at the window's points only: so
      // must everything in the group it is computed from (constants aside, made wherever they
      // are read). Needed by anything else, in the group or outside, it would be the other
      // window (SVD's eleven x[:1] of one broadcast that is also handed on).
      std::set<size_t> cone;
      std::vector<mlir::Value> work = {sliced};
      while (!work.empty()) {
        auto def = work.back().getDefiningOp<PrimOp>();
        work.pop_back();
        if (!def || !index_.count(def) || !inUnion.count(index_.at(def)) ||
            ops::primKind(primOf(def)) == ops::PrimKind::Source ||
            !cone.insert(index_.at(def)).second)
          continue;
        for (mlir::Value v : def->getOperands())
          work.push_back(v);
      }
      for (size_t c : cone)
        for (mlir::Operation *user : prims_[c]->getUsers()) {
          auto p = mlir::dyn_cast<PrimOp>(user);
          if (!p || !index_.count(p) || (index_.at(p) != i && !cone.count(index_.at(p))))
            return false;
        }
    }
    // A slice of what a reduction's rows feed computes some of those rows only: the kernel
    // runs the reduction's rows, so the slice starts a kernel of its own
    // (softmax(x)[:, -1:] is two kernels).
    std::set<size_t> afterReduction;
    for (size_t i : inUnion) { // in program order
      bool after = ops::primKind(primOf(prims_[i])) == ops::PrimKind::Reduce;
      for (mlir::Value v : prims_[i]->getOperands())
        if (auto def = v.getDefiningOp<PrimOp>(); def && afterReduction.count(index_.at(def)))
          after = true;
      if (after && primOf(prims_[i]) == ops::Prim::Slice)
        return false;
      if (after)
        afterReduction.insert(i);
    }
    // A reduction kernel computes what its rows need: a smaller tensor off that path (neither
    // feeding a reduction nor computed from one: UNet's mask bias [1, 1, 1, 4] handed on to
    // the later attention layers from inside the first one's softmax) has no index there.
    // Constants are made wherever they are read.
    std::set<size_t> feedsReduction;
    {
      std::vector<size_t> work;
      for (size_t i : ops)
        if (ops::primKind(primOf(prims_[i])) == ops::PrimKind::Reduce)
          work.push_back(i);
      while (!work.empty()) {
        size_t i = work.back();
        work.pop_back();
        for (mlir::Value v : prims_[i]->getOperands())
          if (auto def = v.getDefiningOp<PrimOp>();
              def && inUnion.count(index_.at(def)) && feedsReduction.insert(index_.at(def)).second)
            work.push_back(index_.at(def));
      }
    }
    bool reduces = std::any_of(ops.begin(), ops.end(), [&](size_t i) {
      return ops::primKind(primOf(prims_[i])) == ops::PrimKind::Reduce;
    });
    for (size_t i : ops)
      if (reduces && !afterReduction.count(i) && !feedsReduction.count(i) &&
          ops::primKind(primOf(prims_[i])) != ops::PrimKind::Source &&
          Extent(prims_[i].getType()) < most)
        return false;
    // What the group hands on is stored at the anchor's points. A broadcast to a shape
    // smaller than the anchor that no reduction's rows carry may have no one point per
    // element there (Falcon's rotary tables: [1, 1, 16, 16] broadcast to [2, 1, 16, 16] for
    // its one key head, in a group anchored at the query heads' [2, 4, 16, 16] transposed from
    // [2, 16, 4, 16]): a broadcast handed on is made by a group of its own size.
    for (size_t i : ops) {
      if (primOf(prims_[i]) != ops::Prim::BroadcastTo || afterReduction.count(i) ||
          Extent(prims_[i].getType()) == most)
        continue;
      for (mlir::Operation *user : prims_[i]->getUsers()) {
        auto p = mlir::dyn_cast<PrimOp>(user);
        if (!p || !index_.count(p) || !inUnion.count(index_.at(p)))
          return false;
      }
    }
    // A kernel's points span the anchor's dynamic sizes, which a kernel may have counted as 0:
    // a result it hands on without one of them (the [1, 1, 3, 1] bin positions beside a
    // roi_align's [s0, C, 3, 3] samples) would then go unwritten, so it is made by a group of
    // its own. (A reduction's rows are the reduction rule's above.)
    for (size_t i : ops) {
      if (afterReduction.count(i) || (Extent(prims_[i].getType()).which & most.which) == most.which)
        continue;
      for (mlir::Operation *user : prims_[i]->getUsers()) {
        auto p = mlir::dyn_cast<PrimOp>(user);
        if (!p || !index_.count(p) || !inUnion.count(index_.at(p)))
          return false;
      }
    }
    // One row structure: every reduction reduces the same axes of the same shape (softmax's
    // max and sum do; a column sum and a row sum of one tensor would need two), and the rows
    // span the kernel: nothing in the group is larger than what the reductions read.
    std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>> rows;
    for (size_t i : ops) {
      if (ops::primKind(primOf(prims_[i])) != ops::PrimKind::Reduce)
        continue;
      auto in = mlir::cast<mlir::RankedTensorType>(prims_[i]->getOperand(0).getType());
      if (Extent(in) < most)
        return false;
      std::vector<int64_t> shape = shapeWithSizes(in);
      std::vector<int64_t> axes = primAttrsOf(prims_[i]).axes;
      if (axes.empty()) // every axis
        for (size_t d = 0; d < shape.size(); ++d)
          axes.push_back(static_cast<int64_t>(d));
      std::sort(axes.begin(), axes.end());
      if (rows && *rows != std::make_pair(shape, axes))
        return false;
      rows = std::make_pair(shape, axes);
    }
    // A reduction's result, and whatever the group computes from it, is broadcast back over
    // the reduction's own rows only: its kept dims where the reduction's input has them and
    // size 1 at the reduced axes (softmax's max). A sort's ranks, computed per element and then
    // compared along the reduced axis, and a histogram's bins counted per row and then laid
    // along the other axis (equal sizes make the shapes agree), are another kernel's input.
    for (size_t i : ops) {
      if (primOf(prims_[i]) != ops::Prim::BroadcastTo)
        continue;
      mlir::Value v = prims_[i]->getOperand(0);
      auto src = v.getDefiningOp<PrimOp>();
      if (!src || !inUnion.count(index_.at(src)) || !afterReduction.count(index_.at(src)))
        continue;
      // The reductions upstream of v in the group, and whether a transpose lies between
      // (a transposed reduction result no longer lines up with its rows).
      std::vector<PrimOp> reductions;
      bool permuted = false;
      std::vector<PrimOp> work = {src};
      std::set<size_t> seen;
      while (!work.empty()) {
        PrimOp def = work.back();
        work.pop_back();
        if (!seen.insert(index_.at(def)).second)
          continue;
        if (ops::primKind(primOf(def)) == ops::PrimKind::Reduce) {
          reductions.push_back(def);
          continue;
        }
        permuted |= primOf(def) == ops::Prim::Transpose;
        for (mlir::Value operand : def->getOperands())
          if (auto d = operand.getDefiningOp<PrimOp>();
              d && inUnion.count(index_.at(d)) && afterReduction.count(index_.at(d)))
            work.push_back(d);
      }
      if (permuted)
        return false;
      std::vector<int64_t> t = shapeWithSizes(mlir::cast<mlir::RankedTensorType>(v.getType()));
      std::vector<int64_t> out = shapeWithSizes(prims_[i].getType());
      for (PrimOp def : reductions) {
        auto in = mlir::cast<mlir::RankedTensorType>(def->getOperand(0).getType());
        std::vector<int64_t> axes = primAttrsOf(def).axes;
        if (axes.empty())
          continue; // a reduction to one value broadcasts anywhere
        std::vector<int64_t> s = shapeWithSizes(in);
        if (t.size() > s.size() || out.size() > s.size())
          return false;
        for (size_t k = 1; k <= t.size(); ++k) {
          int64_t axis = static_cast<int64_t>(s.size() - k), size = t[t.size() - k];
          bool reduced = llvm::is_contained(axes, axis);
          if (reduced ? size != 1 : size != s[axis] && size != 1)
            return false;
        }
        // ... and broadcast along the reduced axes only, never to other rows (a cumulative
        // sum's [4] laid along a new axis of [4, 4] where its rows are [1, ..., 4]).
        for (size_t k = 1; k <= out.size(); ++k) {
          int64_t axis = static_cast<int64_t>(s.size() - k);
          if (!llvm::is_contained(axes, axis) && out[out.size() - k] != s[axis] &&
              out[out.size() - k] != 1)
            return false;
        }
      }
    }
    // A kernel takes each buffer as an argument: the runtime calls kernels of at most
    // kMaxKernelBuffers (the CPU ABI, runtime/src/cpu/CpuBackend.cpp).
    llvm::DenseSet<mlir::Value> boundary;
    for (size_t i : ops) {
      for (mlir::Value v : prims_[i]->getOperands())
        if (auto def = v.getDefiningOp<PrimOp>();
            !def || !index_.count(def) || !inUnion.count(index_.at(def)))
          boundary.insert(v);
      for (mlir::Operation *user : prims_[i]->getUsers())
        if (auto p = mlir::dyn_cast<PrimOp>(user);
            !p || !index_.count(p) || !inUnion.count(index_.at(p))) {
          boundary.insert(prims_[i].getResult());
          break;
        }
    }
    if (boundary.size() > kMaxKernelBuffers)
      return false;
    // No cycle between groups: no other group may be both fed by the union and feed it. Paths
    // run through whole groups (a group may hold a producer of the union and a consumer of it
    // without either being on a path of primitives between the union's members). The merges
    // run in program order, so every primitive after the union's last one is still a group of
    // its own and reaches only later ones: the search stays before it.
    size_t last = *inUnion.rbegin();
    ++search_; // a group is seen in this search where visited_[root] == search_
    std::vector<size_t> work;
    // Queues the groups that read primitive `i`; false where one of them is the union.
    auto follow = [&](size_t i, bool fromUnion) {
      for (mlir::Operation *user : prims_[i]->getUsers())
        if (auto p = mlir::dyn_cast<PrimOp>(user); p && index_.count(p)) {
          size_t u = index_.at(p);
          if (u > last)
            continue;
          if (inUnion.count(u)) {
            if (!fromUnion)
              return false;
          } else if (visited_[find(u)] != search_) {
            visited_[find(u)] = search_;
            work.push_back(find(u));
          }
        }
      return true;
    };
    for (size_t i : ops)
      follow(i, true);
    while (!work.empty()) {
      size_t group = work.back();
      work.pop_back();
      for (size_t m : members(group))
        if (!follow(m, false))
          return false; // the union feeds this group, which feeds the union
    }
    return true;
  }

  void tryMerge(size_t producer, size_t consumer) {
    size_t a = find(producer), b = find(consumer);
    if (a == b || !legal(a, b))
      return;
    size_t root = std::min(a, b), other = std::max(a, b);
    parent_[other] = root;
    std::vector<size_t> merged;
    std::merge(members_[root].begin(), members_[root].end(), members_[other].begin(),
               members_[other].end(), std::back_inserter(merged));
    members_[root] = std::move(merged);
    members_[other].clear();
  }

  /// Every primitive result gets a name for the kernel text: the frontend's (var_N) where the
  /// decomposition kept it, else zero / one for constants, else <primitive>_<index>.
  void nameUnnamed() {
    std::vector<PrimOp> all = prims_; // the empty tensors too: outputs are found by name
    all.insert(all.end(), empties_.begin(), empties_.end());
    std::set<std::string> used;
    for (PrimOp p : all)
      if (auto n = p.getNameAttr())
        used.insert(n.str());
    mlir::Builder b(subgraph_.getContext());
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].getNameAttr())
        continue;
      std::string name = stringifyPrimitive(all[i].getPrim()).str() + "_" + std::to_string(i);
      if (all[i].getValue() && primOf(all[i]) == ops::Prim::FillConstant) {
        double v = all[i].getValue()->convertToDouble();
        std::string c = v == 0 ? "zero" : v == 1 ? "one" : "";
        if (!c.empty() && !used.count(c))
          name = c;
      }
      used.insert(name);
      all[i].setNameAttr(b.getStringAttr(name));
    }
  }

  /// CINN's name: each primitive's name and index, constants first.
  std::string name(const std::vector<size_t> &ops) {
    std::vector<size_t> ordered;
    for (size_t i : ops)
      if (prims_[i].getNumOperands() == 0)
        ordered.push_back(i);
    for (size_t i : ops)
      if (prims_[i].getNumOperands() != 0)
        ordered.push_back(i);
    std::string s;
    for (size_t i : ordered)
      s += (s.empty() ? "" : "_") + stringifyPrimitive(prims_[i].getPrim()).str() + "_" +
           std::to_string(i);
    return s;
  }

  void rebuild() {
    // Groups by root, then a topological order, ties broken by the first primitive.
    std::map<size_t, std::vector<size_t>> groups;
    for (size_t i = 0; i < prims_.size(); ++i)
      groups[find(i)].push_back(i);
    std::map<size_t, std::set<size_t>> deps;
    for (auto &[root, ops] : groups)
      for (size_t i : ops)
        for (mlir::Value operand : prims_[i].getOperands())
          if (auto def = operand.getDefiningOp<PrimOp>())
            if (find(index_.at(def)) != root)
              deps[root].insert(find(index_.at(def)));
    std::vector<size_t> order;
    std::set<size_t> done;
    while (order.size() < groups.size())
      for (auto &[root, ops] : groups) {
        if (done.count(root))
          continue;
        bool ready = std::all_of(deps[root].begin(), deps[root].end(),
                                 [&](size_t d) { return done.count(d) > 0; });
        if (ready) {
          order.push_back(root);
          done.insert(root);
          break;
        }
      }

    mlir::Block &block = subgraph_.getBody().front();
    mlir::Operation *terminator = block.getTerminator();
    mlir::OpBuilder b(terminator);
    mlir::IRMapping outer; // old primitive results -> new group results
    for (size_t root : order) {
      const std::vector<size_t> &ops = groups[root];
      std::set<mlir::Operation *> inGroup;
      for (size_t i : ops)
        inGroup.insert(prims_[i]);
      llvm::SmallVector<mlir::Value> inputs, outputs;
      for (size_t i : ops)
        for (mlir::Value operand : prims_[i].getOperands())
          if (!inGroup.count(operand.getDefiningOp()) &&
              std::find(inputs.begin(), inputs.end(), operand) == inputs.end())
            inputs.push_back(operand);
      for (size_t i : ops)
        for (mlir::Operation *user : prims_[i]->getUsers())
          if (!inGroup.count(user)) {
            outputs.push_back(prims_[i].getResult());
            break;
          }
      llvm::SmallVector<mlir::Value> mappedInputs;
      llvm::SmallVector<mlir::Type> resultTypes;
      for (mlir::Value v : inputs)
        mappedInputs.push_back(outer.lookupOrDefault(v));
      for (mlir::Value v : outputs)
        resultTypes.push_back(v.getType());
      bool reduction = false, matmul = false, conv = false;
      for (size_t i : ops) {
        matmul |= primOf(prims_[i]) == ops::Prim::Matmul;
        conv |= primOf(prims_[i]) == ops::Prim::Conv2d;
        reduction |= ops::primKind(primOf(prims_[i])) == ops::PrimKind::Reduce;
      }
      auto group =
          GroupOp::create(b, prims_[ops.front()].getLoc(), resultTypes, b.getStringAttr(name(ops)),
                          b.getStringAttr(conv        ? "conv"
                                          : matmul    ? "matmul"
                                          : reduction ? "reduction"
                                                      : "injective"),
                          mappedInputs);
      mlir::Block *body = b.createBlock(&group.getBody());
      mlir::IRMapping inner;
      for (mlir::Value v : inputs)
        inner.map(v, body->addArgument(v.getType(), v.getLoc()));
      mlir::OpBuilder ib = mlir::OpBuilder::atBlockEnd(body);
      for (bool constants : {true, false})
        for (size_t i : ops)
          if ((prims_[i].getNumOperands() == 0) == constants)
            ib.clone(*prims_[i], inner);
      llvm::SmallVector<mlir::Value> yielded;
      for (mlir::Value v : outputs)
        yielded.push_back(inner.lookup(v));
      YieldOp::create(ib, group.getLoc(), yielded);
      for (auto [old, now] : llvm::zip(outputs, group.getResults()))
        outer.map(old, now);
      b.setInsertionPoint(terminator);
    }
    for (mlir::OpOperand &operand : terminator->getOpOperands())
      operand.set(outer.lookupOrDefault(operand.get()));
    for (size_t i = prims_.size(); i-- > 0;)
      prims_[i]->erase();
  }

  SubgraphOp subgraph_;
  std::vector<PrimOp> prims_;
  std::vector<PrimOp> empties_; // tensors with no elements: left outside every group
  std::map<mlir::Operation *, size_t> index_;
  std::vector<size_t> parent_;
  std::vector<std::vector<size_t>> members_; // by root
  std::vector<uint64_t> visited_;            // by root: the cycle search that last saw it
  uint64_t search_ = 0;
};

struct SirFusePass : impl::SirFuseBase<SirFusePass> {
  void runOnOperation() override {
    if (mlir::failed(Fuser(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
} // namespace sotc::sir
