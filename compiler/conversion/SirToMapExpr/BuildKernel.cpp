//===- BuildKernel.cpp - A fusion group as a MapExpr kernel -------------------------------===//
//
// 1. Name every tensor (Python names where the frontend had them) and split the group's
//    primitives into stages: a stage ends before a primitive that reads a reduction of
//    the same stage; a reduction runs in the stage of the rows it reads. Constants join
//    the stage of their first reader.
// 2. Per stage: the anchor is the largest tensor; its index is (i0, ..., iN). Propagate
//    indices through the primitives (dot/undot for reshapes, permutations, broadcasts to 0,
//    affine maps for slices) until every tensor has one; a tensor of the anchor's shape that
//    the anchor does not reach starts from (i0, ..., iN) too. A tensor that two readers need at
//    different indices (x[i] against x[j]: a sort's pairwise comparisons) is recomputed for
//    the second reader (an input is passed twice) and the kernel built again.
// 3. Anchor dims a reduction reduces are R(size), the others I(size); the GPU policies turn
//    them into a schedule mesh and loops.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/conversion/SirToMapExpr/BuildKernel.h"

#include "compiler/ops/Primitives.h"
#include "compiler/support/MlirDiagnostics.h"
#include "dialects/mapexpr/IR/MapExprDialect.h"
#include "mlir/IR/IRMapping.h"

#include <functional>
#include <map>
#include <numeric>
#include <set>

namespace sotc::mapexpr {
namespace {

using ops::Prim;
using ops::PrimKind;

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<int64_t> ints(std::optional<llvm::ArrayRef<int64_t>> a) {
  return a ? std::vector<int64_t>(a->begin(), a->end()) : std::vector<int64_t>();
}

Prim primOf(sir::PrimOp op) { return sir::toOpsPrim(op.getPrim()); }

class Builder {
public:
  Builder(sir::GroupOp group, std::vector<mlir::Value> *values) : group_(group), values_(values) {
    kernel_.name = group.getName().str();
    kernel_.standIns = sched::standInsOf(group);
  }

  mlir::FailureOr<Kernel> run() {
    mlir::Block &body = group_.getBody().front();
    for (mlir::BlockArgument arg : body.getArguments())
      kernel_.inputs.push_back(id(arg));
    for (mlir::Value v : body.getTerminator()->getOperands())
      kernel_.outputs.push_back(id(v));
    std::vector<sir::PrimOp> prims;
    for (mlir::Operation &op : body.without_terminator()) {
      auto p = mlir::cast<sir::PrimOp>(op);
      // A kernel (and a GEMM step) iterates over at least one element.
      auto type = mlir::cast<mlir::RankedTensorType>(p.getResult().getType());
      if (llvm::is_contained(type.getShape(), 0))
        return emitCodedError(p.getLoc(), DiagCode::KernelUnsupported)
               << "a tensor with no elements (" << type << ") is not supported yet";
      prims.push_back(p);
    }
    if (mlir::failed(checkBatchRows(prims)))
      return mlir::failure();
    if (group_.getKind() == "matmul")
      return matmul(prims.front());
    if (prims.size() == 1 && primOf(prims.front()) == Prim::Concat)
      return concat(prims.front());
    for (const std::vector<sir::PrimOp> &stage : stages(prims))
      if (mlir::failed(anchored(stage)) && mlir::failed(anchoredApart(stage)))
        return mlir::failure();
    return kernel_;
  }

private:
  /// A group with a dynamic size writes it as its stand-in (sotc-choose-stand-ins): no static
  /// size of its tensors may be a multiple of one, or the two could not be told apart.
  mlir::LogicalResult checkBatchRows(const std::vector<sir::PrimOp> &prims) {
    std::vector<mlir::RankedTensorType> types;
    for (sir::PrimOp p : prims)
      for (mlir::Type t : llvm::concat<const mlir::Type>(p->getOperandTypes(), p->getResultTypes()))
        types.push_back(mlir::cast<mlir::RankedTensorType>(t));
    if (llvm::all_of(types, [](mlir::RankedTensorType t) { return t.hasStaticShape(); }))
      return mlir::success();
    for (mlir::RankedTensorType t : types)
      for (int64_t d : t.getShape())
        if (!mlir::ShapedType::isDynamic(d) && kernel_.standIns.holdsBatch(d))
          return emitCodedError(group_.getLoc(), DiagCode::KernelUnsupported)
                 << "a kernel with a dynamic batch cannot hold a static size of " << d
                 << " (a multiple of " << d / kernel_.standIns.staticFactor(d)
                 << ", which stands for a dynamic size)";
    return mlir::success();
  }

  int id(mlir::Value v) {
    auto it = ids_.find(v.getAsOpaquePointer());
    if (it != ids_.end())
      return it->second;
    int i = static_cast<int>(kernel_.tensors.size());
    // The model's shape: each dynamic size as its stand-in.
    kernel_.tensors.push_back(
        {tensorName(v),
         modelShapeOf(mlir::cast<mlir::RankedTensorType>(v.getType()), kernel_.standIns)});
    tensorValues_.push_back(v);
    ids_[v.getAsOpaquePointer()] = i;
    if (values_)
      values_->push_back(v);
    return i;
  }

  /// A stage no anchor indexes whole, as its parts that share no value (a logsumexp's row
  /// results beside the softmax of the same rows): each part a stage of its own, in the order
  /// the stage had them. Fails, keeping the stage's own error, unless every part is anchored.
  mlir::LogicalResult anchoredApart(const std::vector<sir::PrimOp> &stage) {
    std::map<mlir::Operation *, size_t> part; // each primitive's part, merged as values join
    std::vector<size_t> parent(stage.size());
    std::iota(parent.begin(), parent.end(), size_t{0});
    std::function<size_t(size_t)> root = [&](size_t i) {
      return parent[i] == i ? i : parent[i] = root(parent[i]);
    };
    for (size_t i = 0; i < stage.size(); ++i) {
      part[stage[i]] = i;
      for (mlir::Value v : stage[i]->getOperands())
        if (auto it = part.find(v.getDefiningOp()); it != part.end())
          parent[root(i)] = root(it->second);
    }
    std::map<size_t, std::vector<sir::PrimOp>> byRoot;
    std::vector<size_t> order;
    for (size_t i = 0; i < stage.size(); ++i) {
      size_t r = root(i);
      if (!byRoot.count(r))
        order.push_back(r);
      byRoot[r].push_back(stage[i]);
    }
    if (order.size() < 2)
      return mlir::failure();
    std::string error = error_;
    Conflict conflict = conflict_;
    size_t stmts = kernel_.stmts.size();
    indexingFailed_ = false;
    for (size_t r : order)
      if (mlir::failed(anchored(byRoot[r]))) {
        kernel_.stmts.resize(stmts);
        error_ = error;
        conflict_ = conflict;
        indexingFailed_ = true;
        return mlir::failure();
      }
    error_.clear();
    conflict_ = {};
    return mlir::success();
  }

  std::vector<std::vector<sir::PrimOp>> stages(const std::vector<sir::PrimOp> &prims) {
    // A stage ends before a primitive that reads a reduction of the same stage. A reduction
    // itself runs in the stage of the rows it reads, even where program order put other work
    // between (a loss's per-row sum beside its log-softmax, not after the loss's own sums).
    std::vector<std::vector<sir::PrimOp>> out(1);
    std::map<mlir::Operation *, size_t> stageOf;
    std::set<mlir::Operation *> reductions;
    for (sir::PrimOp p : prims) {
      if (ops::primKind(primOf(p)) == PrimKind::Source)
        continue;
      bool readsReduction = false;
      size_t operandStage = 0;
      for (mlir::Value v : p->getOperands()) {
        readsReduction |= v.getDefiningOp() && reductions.count(v.getDefiningOp());
        if (auto it = stageOf.find(v.getDefiningOp()); it != stageOf.end()) // after a reduction
          operandStage =
              std::max(operandStage,
                       it->second + (ops::primKind(primOf(mlir::cast<sir::PrimOp>(it->first))) ==
                                     PrimKind::Reduce));
      }
      if (readsReduction) {
        out.emplace_back();
        reductions.clear();
      }
      bool reduction = ops::primKind(primOf(p)) == PrimKind::Reduce;
      size_t stage = reduction && !readsReduction ? operandStage : out.size() - 1;
      out[stage].push_back(p);
      stageOf[p] = stage;
      if (reduction && stage == out.size() - 1)
        reductions.insert(p);
    }
    // An op only later stages read (a sort's positions, built before the ranks they are
    // compared with) moves to its first reader's stage, where the anchor can index it.
    bool moved = false;
    for (auto it = prims.rbegin(); it != prims.rend(); ++it) {
      sir::PrimOp p = *it;
      PrimKind kind = ops::primKind(primOf(p));
      if (kind == PrimKind::Source || kind == PrimKind::Reduce || !stageOf.count(p))
        continue;
      size_t first = out.size();
      bool yielded = false;
      for (mlir::Operation *user : p.getResult().getUsers()) {
        if (mlir::isa<sir::YieldOp>(user))
          yielded = true;
        else if (stageOf.count(user))
          first = std::min(first, stageOf[user]);
      }
      if (!yielded && first < out.size() && first > stageOf[p]) {
        stageOf[p] = first;
        moved = true;
      }
    }
    if (moved) {
      std::vector<std::vector<sir::PrimOp>> restaged(out.size());
      for (sir::PrimOp p : prims)
        if (stageOf.count(p))
          restaged[stageOf[p]].push_back(p);
      out = std::move(restaged);
    }
    // Constants go to the front of the stage of their first reader; one nothing here reads
    // is the kernel's output and goes to the last stage (alone, when it is the whole group).
    for (sir::PrimOp p : prims)
      if (ops::primKind(primOf(p)) == PrimKind::Source) {
        auto reader = std::find_if(out.begin(), out.end(), [&](const auto &stage) {
          return std::any_of(stage.begin(), stage.end(), [&](sir::PrimOp q) {
            return llvm::is_contained(q->getOperands(), p.getResult());
          });
        });
        if (reader != out.end())
          reader->insert(reader->begin(), p);
        else
          out.back().push_back(p);
      }
    return out;
  }

public:
  /// Why indexing failed: a tensor one op needs at another index than it has (the op reads
  /// it, or computes it), when that was the reason.
  struct Conflict {
    mlir::Value value;
    mlir::Operation *op = nullptr;
  };
  const Conflict &conflict() const { return conflict_; }
  bool indexingFailed() const { return indexingFailed_; }
  const std::string &error() const { return error_; }

private:
  /// Sets `t`'s index, or checks it against the one it has. Returns whether it changed.
  mlir::FailureOr<bool> assign(AnchoredMapStmt &a, int t, std::vector<Expr> index) {
    auto it = a.index.find(t);
    if (it == a.index.end()) {
      a.index[t] = std::move(index);
      return true;
    }
    std::string have = flatIndexStr(it->second, kernel_.tensors[t].shape);
    std::string got = flatIndexStr(index, kernel_.tensors[t].shape);
    if (have != got) {
      error_ = "conflicting indices for t_" + kernel_.tensors[t].name + ": " + have + " and " + got;
      conflict_ = {tensorValues_[t], current_};
      return mlir::failure();
    }
    return false;
  }

  /// One propagation step through `p`; returns whether anything changed.
  mlir::FailureOr<bool> propagate(AnchoredMapStmt &a, sir::PrimOp p) {
    current_ = p;
    int r = id(p.getResult());
    std::vector<int> in;
    for (mlir::Value v : p->getOperands())
      in.push_back(id(v));
    auto has = [&](int t) { return a.index.count(t) > 0; };
    bool changed = false;
    auto set = [&](int t, std::vector<Expr> index) -> mlir::LogicalResult {
      mlir::FailureOr<bool> c = assign(a, t, std::move(index));
      if (mlir::failed(c))
        return mlir::failure();
      changed |= *c;
      return mlir::success();
    };
    const std::vector<int64_t> &rs = kernel_.tensors[r].shape;
    Prim prim = primOf(p);
    switch (ops::primKind(prim)) {
    case PrimKind::Source:
      break;
    case PrimKind::Unary:
    case PrimKind::Binary:
    case PrimKind::Compare:
    case PrimKind::Select: { // same shapes: one index for all
      int known = has(r) ? r : -1;
      for (int t : in)
        if (known < 0 && has(t))
          known = t;
      if (known < 0)
        break;
      std::vector<Expr> index = a.index[known];
      for (int t : in)
        if (mlir::failed(set(t, index)))
          return mlir::failure();
      if (mlir::failed(set(r, index)))
        return mlir::failure();
      break;
    }
    case PrimKind::Reduce: { // operand -> result: reduced dims go (or become 0)
      if (!has(in[0]))
        break;
      std::vector<int64_t> axes = ints(p.getAxes());
      std::vector<Expr> out;
      for (size_t d = 0; d < a.index[in[0]].size(); ++d) {
        bool reduced = llvm::is_contained(axes, static_cast<int64_t>(d));
        if (!reduced)
          out.push_back(a.index[in[0]][d]);
        else if (*p.getKeepdim())
          out.push_back(IndexExpr::constant(0));
      }
      if (mlir::failed(set(r, out)))
        return mlir::failure();
      break;
    }
    case PrimKind::Matmul:
      error_ = "a matmul inside a fused group";
      return mlir::failure();
    case PrimKind::Conv: // a library step (sotc-convert-conv-to-step) or expanded before
      error_ = "a conv2d in a kernel";
      return mlir::failure();
    case PrimKind::Layout: {
      if (ops::isRuntimeStep(prim)) {
        error_ = std::string("a ") + ops::primName(prim) + " in a kernel";
        return mlir::failure();
      }
      const std::vector<int64_t> &xs = kernel_.tensors[in[0]].shape;
      if (prim == Prim::BroadcastTo && has(r)) {
        std::vector<Expr> x;
        size_t off = rs.size() - xs.size();
        for (size_t j = 0; j < xs.size(); ++j)
          x.push_back(xs[j] == 1 && rs[j + off] != 1 ? IndexExpr::constant(0)
                                                     : a.index[r][j + off]);
        if (mlir::failed(set(in[0], x)))
          return mlir::failure();
      } else if (prim == Prim::Reshape) {
        if (has(r)) {
          Expr flat = IndexExpr::dot(a.index[r], rs);
          std::vector<Expr> x;
          for (size_t k = 0; k < xs.size(); ++k)
            x.push_back(IndexExpr::undot(flat, xs, k));
          if (mlir::failed(set(in[0], x)))
            return mlir::failure();
        }
        if (has(in[0])) {
          Expr flat = IndexExpr::dot(a.index[in[0]], xs);
          std::vector<Expr> y;
          for (size_t k = 0; k < rs.size(); ++k)
            y.push_back(IndexExpr::undot(flat, rs, k));
          if (mlir::failed(set(r, y)))
            return mlir::failure();
        }
      } else if (prim == Prim::Transpose) {
        std::vector<int64_t> perm = ints(p.getPerm());
        if (has(r)) {
          std::vector<Expr> x(perm.size());
          for (size_t i = 0; i < perm.size(); ++i)
            x[perm[i]] = a.index[r][i];
          if (mlir::failed(set(in[0], x)))
            return mlir::failure();
        }
        if (has(in[0])) {
          std::vector<Expr> y;
          for (int64_t q : perm)
            y.push_back(a.index[in[0]][q]);
          if (mlir::failed(set(r, y)))
            return mlir::failure();
        }
      } else if (prim == Prim::Slice && has(r)) {
        std::vector<int64_t> axes = ints(p.getAxes()), starts = ints(p.getStarts()),
                             steps = ints(p.getSteps());
        std::vector<Expr> x = a.index[r];
        for (size_t k = 0; k < axes.size(); ++k)
          x[axes[k]] = IndexExpr::affine(a.index[r][axes[k]], steps[k], starts[k]);
        if (mlir::failed(set(in[0], x)))
          return mlir::failure();
      } else if (prim == Prim::Window && has(r)) {
        // x[n, c, p*sh + i*dh - pt, q*sw + j*dw - pl] for window element (n, c, i, j, p, q),
        // outside x where the window reaches the padding (the loops read `value` there).
        std::vector<int64_t> strides = ints(p.getStrides()), dilations = ints(p.getDilations()),
                             pads = ints(p.getPads());
        const std::vector<Expr> &w = a.index[r];
        std::vector<Expr> x = {w[0], w[1]};
        for (int k = 0; k < 2; ++k)
          x.push_back(IndexExpr::sum(IndexExpr::affine(w[4 + k], strides[k], 0),
                                     IndexExpr::affine(w[2 + k], dilations[k], -pads[k])));
        if (mlir::failed(set(in[0], x)))
          return mlir::failure();
      } else if (prim == Prim::Gather && has(r)) {
        // index[i...] at the leading dims; table[<the index's value>, d...], whose row the
        // loops read from the index (0 stands for it here).
        size_t k = kernel_.tensors[in[1]].shape.size();
        const std::vector<Expr> &g = a.index[r];
        std::vector<Expr> table = {IndexExpr::constant(0)};
        table.insert(table.end(), g.begin() + static_cast<long>(k), g.end());
        if (mlir::failed(
                set(in[1], std::vector<Expr>(g.begin(), g.begin() + static_cast<long>(k)))) ||
            mlir::failed(set(in[0], table)))
          return mlir::failure();
      } else if (prim == Prim::Concat) {
        error_ = "concat inside a fused MapExpr kernel is not supported yet";
        return mlir::failure();
      }
      break;
    }
    }
    return changed;
  }

  /// Indexes every tensor of `stage` from `anchor`; false (with error_) if it cannot.
  bool indexFrom(AnchoredMapStmt &a, const std::vector<sir::PrimOp> &stage, int anchor) {
    a.index.clear();
    a.anchor = anchor;
    a.space = kernel_.tensors[anchor].shape;
    std::vector<Expr> iters;
    for (size_t d = 0; d < a.space.size(); ++d)
      iters.push_back(IndexExpr::iter(static_cast<int>(d)));
    a.index[anchor] = iters;
    for (bool seeded = true; seeded;) {
      for (bool changed = true; changed;) {
        changed = false;
        for (sir::PrimOp p : stage) {
          mlir::FailureOr<bool> c = propagate(a, p);
          if (mlir::failed(c))
            return false;
          changed |= *c;
        }
      }
      // A tensor of the anchor's whole shape that nothing indexed connects to the anchor
      // (two sums over the same rows of two tensors, two weights broadcast over one image)
      // is indexed by the iterators themselves, and propagation goes on from it.
      seeded = false;
      for (sir::PrimOp p : stage) {
        std::vector<mlir::Value> values(p->getOperands().begin(), p->getOperands().end());
        values.push_back(p.getResult());
        for (mlir::Value v : values)
          if (!seeded && !a.index.count(id(v)) && kernel_.tensors[id(v)].shape == a.space) {
            a.index[id(v)] = iters;
            seeded = true;
          }
      }
      // A single element (a loss divided by its count after an earlier stage's full sum,
      // in the stage of the next sum) is the same at every point: index 0 in each dim.
      for (sir::PrimOp p : stage) {
        std::vector<mlir::Value> values(p->getOperands().begin(), p->getOperands().end());
        values.push_back(p.getResult());
        for (mlir::Value v : values) {
          const std::vector<int64_t> &shape = kernel_.tensors[id(v)].shape;
          if (!seeded && !a.index.count(id(v)) &&
              llvm::all_of(shape, [](int64_t s) { return s == 1; })) {
            a.index[id(v)] = std::vector<Expr>(shape.size(), IndexExpr::constant(0));
            seeded = true;
          }
        }
      }
      // Last, a tensor of as many elements in another shape that nothing indexed connects to
      // the anchor (a mask broadcast to the heads' shape and handed on, beside the rows it
      // masks) is indexed by the anchor's points in row-major order: each of its elements at
      // one point, and propagation goes on from it (set() refuses an index that disagrees).
      // (Sizes are the model's: a dynamic one is its prime stand-in, as reshapes index it.)
      for (sir::PrimOp p : stage) {
        std::vector<mlir::Value> values(p->getOperands().begin(), p->getOperands().end());
        values.push_back(p.getResult());
        for (mlir::Value v : values) {
          const std::vector<int64_t> &shape = kernel_.tensors[id(v)].shape;
          if (seeded || a.index.count(id(v)) || numel(shape) != numel(a.space))
            continue;
          std::vector<Expr> index;
          for (size_t k = 0; k < shape.size(); ++k)
            index.push_back(IndexExpr::undot(IndexExpr::dot(iters, a.space), shape, k));
          a.index[id(v)] = index;
          seeded = true;
        }
      }
    }
    for (sir::PrimOp p : stage) {
      std::vector<mlir::Value> values(p->getOperands().begin(), p->getOperands().end());
      values.push_back(p.getResult());
      for (mlir::Value v : values)
        if (!a.index.count(id(v))) {
          error_ = "cannot index t_" + kernel_.tensors[id(v)].name + " from the anchor t_" +
                   kernel_.tensors[anchor].name;
          // A constant another stage reads (and indexes) too: this reader gets its own.
          auto source = mlir::dyn_cast_or_null<sir::PrimOp>(v.getDefiningOp());
          if (source && ops::primKind(primOf(source)) == PrimKind::Source && v != p.getResult())
            conflict_ = {v, p};
          return false;
        }
      // A reduction must run over anchor iterators themselves.
      if (ops::primKind(primOf(p)) == PrimKind::Reduce)
        for (int64_t axis : ints(p.getAxes())) {
          const Expr &e = a.index[id(p->getOperand(0))][axis];
          if (e->kind() != IndexExpr::Kind::Iter) {
            error_ = "a reduction over a remapped axis (" + e->str() + ") is not supported yet";
            return false;
          }
        }
    }
    return true;
  }

  mlir::LogicalResult anchored(const std::vector<sir::PrimOp> &stage) {
    AnchoredMapStmt a;
    // Anchor candidates: tensors that cover the stage's iteration space, largest first,
    // then: a reduction's input (a reduction iterates over more than it writes, and in its
    // input's layout its rows are the ones the reduction's consumers index), computed
    // results, earliest first, then constants. The first from which every tensor can be
    // indexed wins (indices flow backwards through broadcasts and slices only).
    std::vector<int> candidates;
    auto add = [&](mlir::Value v) {
      int t = id(v);
      if (!llvm::is_contained(candidates, t))
        candidates.push_back(t);
    };
    for (sir::PrimOp p : stage)
      if (ops::primKind(primOf(p)) == PrimKind::Reduce)
        add(p->getOperand(0));
    for (sir::PrimOp p : stage)
      if (ops::primKind(primOf(p)) != PrimKind::Source)
        add(p.getResult());
    for (sir::PrimOp p : stage)
      if (ops::primKind(primOf(p)) == PrimKind::Source)
        add(p.getResult());
    std::stable_sort(candidates.begin(), candidates.end(), [&](int x, int y) {
      return numel(kernel_.tensors[x].shape) > numel(kernel_.tensors[y].shape);
    });
    // Over a dynamic size, an elementwise kernel puts its outputs first among the
    // largest: a loop over what it writes stores contiguous elements, where one over its
    // input scatters with strides that multiply by the call's s0 (a transposed key, q/k/v
    // split from a GEMM's output), which the compiler cannot fold.
    bool dynamic = llvm::any_of(kernel_.tensors, [&](const Tensor &t) {
      return llvm::any_of(t.shape, [&](int64_t d) { return kernel_.standIns.holdsBatch(d); });
    });
    // (Not in a kernel with a reduction: its later stages run on the reduction's rows.)
    bool reduces = false;
    group_.getBody().walk(
        [&](sir::PrimOp p) { reduces |= ops::primKind(primOf(p)) == PrimKind::Reduce; });
    if (dynamic && !reduces && !candidates.empty())
      std::stable_partition(candidates.begin(), candidates.end(), [&](int t) {
        return numel(kernel_.tensors[t].shape) == numel(kernel_.tensors[candidates[0]].shape) &&
               llvm::is_contained(kernel_.outputs, t);
      });
    // A stage after a reduction runs on its rows: among the largest candidates, one of the
    // reduction's iteration space first (a gated norm's gate, reshaped otherwise, would make
    // the stage iterate over other rows).
    auto reduction = std::find_if(kernel_.stmts.begin(), kernel_.stmts.end(), [](const auto &a) {
      return std::any_of(a.dims.begin(), a.dims.end(), [](const auto &d) { return d.reduced; });
    });
    if (reduction != kernel_.stmts.end() && !candidates.empty()) {
      int64_t largest = numel(kernel_.tensors[candidates[0]].shape);
      std::stable_partition(candidates.begin(), candidates.end(), [&](int t) {
        return numel(kernel_.tensors[t].shape) == largest &&
               kernel_.tensors[t].shape == reduction->space;
      });
    }
    // The anchor's points are the points computed: it covers the kernel outputs the stage
    // writes and what its reductions read, or some of them would never be written (values
    // only sliced further are computed at the points read).
    int64_t written = 0;
    for (sir::PrimOp p : stage) {
      bool reduce = ops::primKind(primOf(p)) == PrimKind::Reduce;
      if (reduce || llvm::is_contained(kernel_.outputs, id(p.getResult())))
        written = std::max(
            written, numel(kernel_.tensors[id(reduce ? p->getOperand(0) : p.getResult())].shape));
    }
    bool found = false;
    std::string firstError;
    Conflict firstConflict;
    for (int anchor : candidates) {
      if (numel(kernel_.tensors[anchor].shape) < written)
        break; // candidates are largest first
      conflict_ = {};
      if (indexFrom(a, stage, anchor)) {
        found = true;
        break;
      }
      // The first failure is the one recomputed or reported, unless a later anchor finds the
      // conflict at a group input read two ways: passing it twice always resolves it, where
      // recomputing a value computed from it may only move the conflict.
      bool inputConflict = mlir::isa_and_nonnull<mlir::BlockArgument>(conflict_.value);
      if (firstError.empty() ||
          (inputConflict && !mlir::isa_and_nonnull<mlir::BlockArgument>(firstConflict.value))) {
        firstError = error_;
        firstConflict = conflict_;
      }
    }
    if (!found) { // buildKernel() recomputes the conflicting tensor, or reports the error
      error_ = firstError;
      conflict_ = firstConflict;
      indexingFailed_ = true;
      return mlir::failure();
    }
    // Schedule dims: an anchor iterator a reduction runs over is reduced.
    for (int64_t size : a.space)
      a.dims.push_back(sched::ScheduleDim::injective(size));
    for (sir::PrimOp p : stage) {
      if (ops::primKind(primOf(p)) != PrimKind::Reduce)
        continue;
      const std::vector<Expr> &in = a.index[id(p->getOperand(0))];
      for (int64_t axis : ints(p.getAxes()))
        a.dims[in[axis]->id()].reduced = true; // indexFrom checked these are iterators
    }
    for (sir::PrimOp p : stage) {
      OpStmt s;
      s.prim = primOf(p);
      s.outs = {id(p.getResult())};
      for (mlir::Value v : p->getOperands())
        s.ins.push_back(id(v));
      s.attrs = {ints(p.getPerm()), ints(p.getAxes()), ints(p.getStarts()), ints(p.getSteps()),
                 p.getKeepdim().value_or(false)};
      if (p.getValue())
        s.value = p.getValue()->convertToDouble();
      if (ops::primKind(s.prim) == PrimKind::Reduce) {
        a.stmts.push_back({s.prim, OpStmt::Step::Init, s.outs});
        s.step = OpStmt::Step::Acc;
      }
      a.stmts.push_back(s);
    }
    kernel_.stmts.push_back(std::move(a));
    return mlir::success();
  }

  /// A matmul: the output's space plus the contracted dimension, reduced.
  mlir::FailureOr<Kernel> matmul(sir::PrimOp p) {
    int x = id(p->getOperand(0)), y = id(p->getOperand(1)), out = id(p.getResult());
    const std::vector<int64_t> &xs = kernel_.tensors[x].shape, &ys = kernel_.tensors[y].shape,
                               &os = kernel_.tensors[out].shape;
    if (xs.size() < 2 || ys.size() < 2)
      return emitCodedError(group_.getLoc(), DiagCode::KernelUnsupported)
             << "matmul of 1-D operands in MapExpr is not supported yet";
    bool tx = p.getTransposeX().value_or(false), ty = p.getTransposeY().value_or(false);
    int64_t k = tx ? xs[xs.size() - 2] : xs.back();
    AnchoredMapStmt a;
    a.anchor = out;
    a.space = os;
    a.space.push_back(k);
    std::vector<Expr> it;
    for (size_t d = 0; d < a.space.size(); ++d)
      it.push_back(IndexExpr::iter(static_cast<int>(d)));
    size_t r = os.size();
    a.index[out] = std::vector<Expr>(it.begin(), it.begin() + r);
    auto operand = [&](const std::vector<int64_t> &s, Expr rowIt, Expr colIt) {
      std::vector<Expr> index;
      size_t batch = s.size() - 2, off = (r - 2) - batch;
      for (size_t d = 0; d < batch; ++d)
        index.push_back(s[d] == 1 && os[d + off] != 1 ? IndexExpr::constant(0) : it[d + off]);
      index.push_back(rowIt);
      index.push_back(colIt);
      return index;
    };
    Expr m = it[r - 2], n = it[r - 1], kk = it[r];
    a.index[x] = tx ? operand(xs, kk, m) : operand(xs, m, kk);
    a.index[y] = ty ? operand(ys, n, kk) : operand(ys, kk, n);
    for (int64_t size : os)
      a.dims.push_back(sched::ScheduleDim::injective(size));
    a.dims.push_back(sched::ScheduleDim::reducedDim(k));
    a.stmts.push_back({Prim::Matmul, OpStmt::Step::Init, {out}});
    a.stmts.push_back({Prim::Matmul, OpStmt::Step::Acc, {out}, {x, y}});
    kernel_.stmts.push_back(std::move(a));
    return kernel_;
  }

  /// A concat: the output's space; input k is read at (..., i_axis - offset_k, ...) where
  /// offset_k <= i_axis < offset_k + size_k.
  mlir::FailureOr<Kernel> concat(sir::PrimOp p) {
    AnchoredMapStmt a;
    int out = id(p.getResult());
    a.anchor = out;
    a.space = kernel_.tensors[out].shape;
    std::vector<Expr> it;
    for (size_t d = 0; d < a.space.size(); ++d) {
      it.push_back(IndexExpr::iter(static_cast<int>(d)));
      a.dims.push_back(sched::ScheduleDim::injective(a.space[d]));
    }
    a.index[out] = it;
    int64_t axis = *p.getAxis(), offset = 0;
    OpStmt s{Prim::Concat, OpStmt::Step::Compute, {out}};
    for (mlir::Value v : p->getOperands()) {
      int t = id(v);
      std::vector<Expr> index = it;
      index[axis] = IndexExpr::affine(it[axis], 1, -offset);
      if (a.index.count(t)) { // cat((x, x)): buildKernel() gives the second its own copy
        error_ = "concat of one tensor with itself";
        conflict_ = {v, p};
        indexingFailed_ = true;
        return mlir::failure();
      }
      a.index[t] = index;
      offset += kernel_.tensors[t].shape[axis];
      s.ins.push_back(t);
    }
    s.attrs.axis = axis;
    a.stmts.push_back(s);
    kernel_.stmts.push_back(std::move(a));
    return kernel_;
  }

  sir::GroupOp group_;
  Kernel kernel_;
  std::map<const void *, int> ids_;
  std::string error_; // why the last indexing attempt failed
  std::vector<mlir::Value> *values_;
  std::vector<mlir::Value> tensorValues_; // by tensor id
  sir::PrimOp current_;                   // the op being propagated through
  Conflict conflict_;
  bool indexingFailed_ = false;
};

/// Gives `op` its own copy of `value`, which it needs at another index than the group's
/// other readers (or at a second place: a concat of it with itself): a second group input for
/// a block argument, a clone of the computing primitive otherwise (not of a reduction or
/// matmul: those are not recomputed). When the
/// conflict is over op's own result, each of its readers but the first gets its own clone
/// of op. Returns whether the group changed.
bool recompute(sir::GroupOp group, mlir::Value value, mlir::Operation *op) {
  if (!op || !value)
    return false;
  mlir::Block &body = group.getBody().front();
  if (llvm::is_contained(op->getResults(), value)) {
    llvm::SmallVector<mlir::OpOperand *> uses;
    for (mlir::OpOperand &use : value.getUses())
      if (!mlir::isa<sir::YieldOp>(use.getOwner()))
        uses.push_back(&use);
    if (uses.size() < 2)
      return false;
    for (size_t i = 1; i < uses.size(); ++i) {
      mlir::OpBuilder b(uses[i]->getOwner());
      uses[i]->set(b.clone(*op)->getResult(0));
    }
    return true;
  }
  if (!llvm::is_contained(op->getOperands(), value))
    return false;
  mlir::Value copy;
  if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(value)) {
    group->insertOperands(group->getNumOperands(), group.getInputs()[arg.getArgNumber()]);
    copy = body.addArgument(arg.getType(), arg.getLoc());
  } else {
    auto producer = mlir::dyn_cast_or_null<sir::PrimOp>(value.getDefiningOp());
    if (!producer || ops::primKind(primOf(producer)) == PrimKind::Reduce ||
        ops::primKind(primOf(producer)) == PrimKind::Matmul)
      return false;
    // A copy of a layout primitive (a transpose) would read its input where the original
    // does, and propagation from that shared input would meet the copy's own index there
    // again: the chain of one-input primitives above it is copied too, so that the next
    // conflict is over what holds the data (m & m.transpose(-1, -2) of a cast mask: the
    // mask, read a second time).
    auto oneInput = [](sir::PrimOp p) {
      PrimKind kind = ops::primKind(primOf(p));
      return p->getNumOperands() == 1 && (kind == PrimKind::Layout || kind == PrimKind::Unary);
    };
    std::vector<sir::PrimOp> chain = {producer};
    while (ops::primKind(primOf(chain.back())) == PrimKind::Layout && oneInput(chain.back()))
      if (auto above = chain.back()->getOperand(0).getDefiningOp<sir::PrimOp>();
          above && oneInput(above))
        chain.push_back(above);
      else
        break;
    mlir::OpBuilder b(op);
    mlir::IRMapping copies;
    for (sir::PrimOp p : llvm::reverse(chain))
      b.clone(*p, copies);
    copy = copies.lookup(producer.getResult());
  }
  // An op that reads the value twice (a concat of it with itself) keeps the first.
  auto reads = llvm::make_filter_range(op->getOpOperands(),
                                       [&](mlir::OpOperand &o) { return o.get() == value; });
  bool several = std::distance(reads.begin(), reads.end()) > 1;
  for (mlir::OpOperand &o : llvm::drop_begin(reads, several ? 1 : 0))
    o.set(copy);
  // What the copy replaced may have no reader left (the transpose above): not computed.
  for (mlir::Operation *dead = value.getDefiningOp();
       dead && mlir::isa<sir::PrimOp>(dead) && dead->use_empty();) {
    mlir::Value in = dead->getNumOperands() == 1 ? dead->getOperand(0) : mlir::Value();
    dead->erase();
    dead = in ? in.getDefiningOp() : nullptr;
  }
  return true;
}

} // namespace

mlir::FailureOr<Kernel> buildKernel(sir::GroupOp group, std::vector<mlir::Value> *values) {
  constexpr int kMaxRecomputations = 64;
  for (int attempt = 0;; ++attempt) {
    if (values)
      values->clear();
    Builder builder(group, values);
    mlir::FailureOr<Kernel> kernel = builder.run();
    if (mlir::succeeded(kernel) || !builder.indexingFailed())
      return kernel; // failures other than indexing were reported where they happened
    const auto &c = builder.conflict();
    if (attempt < kMaxRecomputations && recompute(group, c.value, c.op))
      continue;
    return emitCodedError(group.getLoc(), DiagCode::KernelUnsupported) << builder.error();
  }
}

std::string tensorName(mlir::Value v) {
  // An in-place step's result is the buffer it wrote.
  if (auto copy = v.getDefiningOp<IndexCopyOp>(); copy && copy.getInPlace())
    return tensorName(copy.getX());
  if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(v)) {
    mlir::Operation *owner = arg.getOwner()->getParentOp();
    if (auto g = mlir::dyn_cast<sir::GroupOp>(owner))
      return tensorName(g.getInputs()[arg.getArgNumber()]);
    if (auto sg = mlir::dyn_cast<sir::SubgraphOp>(owner))
      if (auto n = sg.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(), "sir.name"))
        return n.str();
    return "arg" + std::to_string(arg.getArgNumber());
  }
  mlir::Operation *def = v.getDefiningOp();
  if (auto g = mlir::dyn_cast<sir::GroupOp>(def))
    return tensorName(g.getBody().front().getTerminator()->getOperand(
        mlir::cast<mlir::OpResult>(v).getResultNumber()));
  if (auto p = mlir::dyn_cast<sir::PrimOp>(def); p && p.getNameAttr())
    return p.getNameAttr().str();
  // Ops with several named results (a launch of an earlier kernel) list them.
  mlir::ArrayAttr names;
  if (auto launch = mlir::dyn_cast<LaunchOp>(def))
    names = launch.getNamesAttr();
  else if (auto gemm = mlir::dyn_cast<GemmOp>(def))
    names = gemm.getNamesAttr();
  else if (auto conv = mlir::dyn_cast<ConvOp>(def))
    names = conv.getNamesAttr();
  else if (auto copy = mlir::dyn_cast<IndexCopyOp>(def))
    names = copy.getNamesAttr();
  else if (auto nonzero = mlir::dyn_cast<NonzeroOp>(def))
    names = nonzero.getNamesAttr();
  else if (auto nms = mlir::dyn_cast<NmsOp>(def))
    names = nms.getNamesAttr();
  else if (auto sort = mlir::dyn_cast<ArgsortOp>(def))
    names = sort.getNamesAttr();
  else if (auto call = mlir::dyn_cast<sir::CallOp>(def))
    names = call.getNamesAttr();
  if (names) {
    unsigned i = mlir::cast<mlir::OpResult>(v).getResultNumber();
    if (i < names.size())
      if (auto n = mlir::dyn_cast<mlir::StringAttr>(names[i]); n && !n.getValue().empty())
        return n.str();
  }
  return "tmp";
}

} // namespace sotc::mapexpr
