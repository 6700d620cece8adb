//===- CpuLanes.cpp - A CPU statement's vector lanes -------------------------------------===//
//
// Elementwise statements and lane reductions whose vector loop runs over the anchor's
// last dim: lanes peeled where their windows stay inside their inputs.
//
//===-------------------------------------------------------------------------------------===//
#include "compiler/conversion/MapExprToLoops/KernelLowering.h"

#include "compiler/conversion/MapExprToLoops/Passes.h"
#include "compiler/conversion/MapExprToLoops/Scalars.h"
#include "compiler/support/MlirDiagnostics.h"

namespace sotc::mapexpr::loops {

bool KernelLowering::laneReduction(const AnchoredMapStmt &a) const {
  const std::vector<sched::LoopDescriptor> &loops = a.schedule->loops;
  return !gpuModule_ && loops.size() == 3 && loops[0].type == sched::LoopType::S0x &&
         loops[1].type == sched::LoopType::Temporal &&
         loops[2].type == sched::LoopType::Vectorize && a.schedule->mesh.outputReduced(1) &&
         !a.schedule->mesh.outputReduced(2) && !idx_.standIns.holdsBatch(loops[1].size) &&
         a.schedule->mesh.keepsLastDim();
}

bool KernelLowering::injectiveLanes(const AnchoredMapStmt &a) const {
  const std::vector<sched::LoopDescriptor> &loops = a.schedule->loops;
  const auto &steps = a.schedule->mesh.steps();
  return !gpuModule_ && readsWindows(a) && loops.size() == 2 &&
         loops[0].type == sched::LoopType::S0x && loops[1].type == sched::LoopType::Vectorize &&
         !a.schedule->mesh.outputReduced(1) && a.schedule->mesh.keepsLastDim() &&
         std::none_of(steps.begin(), steps.end(), [](const sched::ScheduleMesh::Step &step) {
           return step.kind == sched::ScheduleMesh::Step::Kind::Padding;
         });
}

void KernelLowering::forLanes(mlir::Value begin, mlir::Value end,
                              const std::function<void(mlir::Value)> &body) {
  auto loop = mlir::scf::ForOp::create(b_, loc(), begin, end, idx_.c(1));
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToStart(loop.getBody());
  body(loop.getInductionVar());
}

void KernelLowering::lanesPeeled(const AnchoredMapStmt &a,
                                 llvm::ArrayRef<std::vector<mlir::Value>> atZero, mlir::Value lanes,
                                 const std::function<void(mlir::Value)> &body) {
  int lane = static_cast<int>(a.dims.size()) - 1;
  std::optional<std::pair<mlir::Value, mlir::Value>> interior =
      interiorLanes(a, lane, atZero, lanes);
  if (!interior)
    return forLanes(idx_.c(0), lanes, body);
  forLanes(idx_.c(0), interior->first, body);
  uncheckedLane_ = lane;
  forLanes(interior->first, interior->second, body);
  uncheckedLane_ = -1;
  forLanes(interior->second, lanes, body);
}

void KernelLowering::emitInjectiveLanes(const AnchoredMapStmt &a, mlir::Value block) {
  mlir::Value unused; // the mesh pads nothing
  auto at = [&](mlir::Value v) { return idx_.anchor(a.schedule->mesh, {block, v}, unused); };
  lanesPeeled(a, {at(idx_.c(0))}, idx_.size(a.schedule->loops[1].size), [&](mlir::Value v) {
    emitPoint(a, at(v), [&](int) -> mlir::Value & {
      llvm_unreachable("an elementwise statement accumulates nothing");
    });
  });
}

void KernelLowering::emitLaneReduction(const AnchoredMapStmt &a, mlir::Value block) {
  constexpr int64_t kUnrolledReduction = 64;
  Scalars scalars(b_, loc());
  int64_t reduce = a.schedule->loops[1].size;
  mlir::Value lanes = idx_.size(a.schedule->loops[2].size), unused; // the mesh pads nothing
  auto at = [&](mlir::Value reduced, mlir::Value v) {
    return idx_.anchor(a.schedule->mesh, {block, reduced, v}, unused);
  };
  auto identity = [&](int t) { return scalars.identity(reductionInto(a, t), elementType(t)); };
  if (reduce <= kUnrolledReduction) {
    std::vector<std::vector<mlir::Value>> atZero;
    for (int64_t r = 0; r < reduce; ++r)
      atZero.push_back(at(idx_.c(r), idx_.c(0)));
    // Each lane keeps kChains partial results, the points dealt round-robin, combined at
    // the end: one chain of dependent multiply-adds per lane would wait on each one's
    // latency where a short row (a 14-wide map's) has too few vectors to hide it.
    constexpr int64_t kChains = 4;
    return lanesPeeled(a, atZero, lanes, [&](mlir::Value v) {
      std::map<int, std::vector<mlir::Value>> accs; // per tensor, its chains
      for (int64_t r = 0; r < reduce; ++r)
        emitPoint(
            a, at(idx_.c(r), v),
            [&](int t) -> mlir::Value & {
              std::vector<mlir::Value> &chains = accs[t];
              chains.resize(std::min(kChains, reduce));
              mlir::Value &acc = chains[r % kChains];
              if (!acc)
                acc = identity(t);
              return acc;
            },
            /*fuse=*/true);
      std::vector<mlir::Value> iters = at(idx_.c(0), v);
      for (auto &[t, chains] : accs) {
        ops::Prim reduction = reductionInto(a, t);
        if (reduction == ops::Prim::Matmul) // its partial results add up
          reduction = ops::Prim::ReduceSum;
        for (size_t step = 1; step < chains.size(); step *= 2) // a tree: (c0 + c1) + (c2 + c3)
          for (size_t c = 0; c + step < chains.size(); c += 2 * step)
            chains[c] = scalars.accumulate(reduction, chains[c], {chains[c + step]});
        store(t, a, iters, chains[0]);
      }
    });
  }
  forLanes(idx_.c(0), lanes, [&](mlir::Value v) {
    std::vector<mlir::Value> iters = at(idx_.c(0), v);
    for (const OpStmt &op : a.stmts)
      if (op.isInit())
        store(op.outs[0], a, iters, identity(op.outs[0]));
  });
  auto reduced = mlir::scf::ForOp::create(b_, loc(), idx_.c(0), idx_.c(reduce), idx_.c(1));
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToStart(reduced.getBody());
  mlir::Value r = reduced.getInductionVar();
  lanesPeeled(a, {at(r, idx_.c(0))}, lanes, [&](mlir::Value v) {
    std::vector<mlir::Value> iters = at(r, v);
    std::map<int, mlir::Value> accs; // loaded, accumulated, stored back
    emitPoint(
        a, iters,
        [&](int t) -> mlir::Value & {
          mlir::Value &acc = accs[t];
          if (!acc)
            acc = load(t, a, iters);
          return acc;
        },
        /*fuse=*/true);
    for (auto &[t, acc] : accs)
      store(t, a, iters, acc);
  });
}

bool KernelLowering::windowMayLeave(const AnchoredMapStmt &a, int x, size_t d, const Expr &e) {
  auto [lo, hi] = valueRange(e, a.space);
  return d >= 2 && (lo < 0 || hi >= kernel_.tensors[x].shape[d]);
}

std::optional<std::pair<mlir::Value, mlir::Value>>
KernelLowering::interiorLanes(const AnchoredMapStmt &a, int lane,
                              llvm::ArrayRef<std::vector<mlir::Value>> atZero, mlir::Value lanes) {
  mlir::Value begin = idx_.c(0), end = lanes;
  bool moves = false;
  for (const std::vector<mlir::Value> &point : atZero)
    for (const OpStmt &op : a.stmts) {
      if (op.prim != ops::Prim::Window)
        continue;
      const std::vector<Expr> &exprs = a.index.at(op.ins[0]);
      for (size_t d = 0; d < exprs.size(); ++d) {
        std::optional<int64_t> c = linearCoefficient(exprs[d], lane);
        if (!windowMayLeave(a, op.ins[0], d, exprs[d]) || c == 0)
          continue;
        if (!c || *c < 0)
          return std::nullopt;
        // 0 <= c * lane + first < size
        mlir::Value first = idx_.expr(exprs[d], point), step = idx_.c(*c);
        mlir::Value from = mlir::arith::CeilDivSIOp::create(
            b_, loc(), mlir::arith::SubIOp::create(b_, loc(), idx_.c(0), first), step);
        mlir::Value to =
            idx_.add(mlir::arith::FloorDivSIOp::create(
                         b_, loc(),
                         mlir::arith::SubIOp::create(
                             b_, loc(), idx_.c(kernel_.tensors[op.ins[0]].shape[d] - 1), first),
                         step),
                     idx_.c(1));
        begin = mlir::arith::MaxSIOp::create(b_, loc(), begin, from);
        end = mlir::arith::MinSIOp::create(b_, loc(), end, to);
        moves = true;
      }
    }
  if (!moves)
    return std::nullopt;
  begin = mlir::arith::MinSIOp::create(b_, loc(), begin, lanes);
  return std::make_pair(begin, mlir::arith::MaxSIOp::create(b_, loc(), begin, end).getResult());
}

} // namespace sotc::mapexpr::loops
