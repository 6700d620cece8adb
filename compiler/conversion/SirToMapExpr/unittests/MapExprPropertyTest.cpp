// Property test of the index machinery: random chains of broadcasts, reshapes, transposes,
// slices, elementwise primitives and reductions are fused and turned into MapExpr kernels;
// enumerating each schedule's iteration space and evaluating every tensor's index must
// (1) stay in bounds, (2) agree with what each primitive means, and (3) touch exactly the
// elements a direct evaluation touches, writing anchor-sized outputs once each.
#include "compiler/conversion/SirToMapExpr/BuildKernel.h"
#include "dialects/sir/IR/SirDialect.h"
#include "dialects/sir/Transforms/Passes.h"
#include "dialects/sir/Transforms/PrimGraphs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch.hpp>

#include <numeric>
#include <random>
#include <set>

using namespace sotc;
using Shape = std::vector<int64_t>;

namespace {

int64_t numel(const Shape &s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<int64_t>());
}

int64_t flat(const Shape &index, const Shape &shape) {
  int64_t f = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    f = f * shape[i] + index[i];
  return f;
}

/// Builds a random subgraph of primitives.
class RandomProgram {
public:
  RandomProgram(mlir::MLIRContext &ctx, std::mt19937 &rng) : ctx_(ctx), rng_(rng), b_(&ctx) {}

  mlir::OwningOpRef<mlir::ModuleOp> build() {
    module_ = mlir::ModuleOp::create(b_.getUnknownLoc());
    Shape shape = randomShape(1, 3);
    mlir::OpBuilder ob(&ctx_);
    ob.setInsertionPointToEnd(module_->getBody());
    auto sg = sir::SubgraphOp::create(ob, ob.getUnknownLoc(), "SIR_0", ob.getFunctionType({}, {}),
                                      nullptr, nullptr, nullptr);
    block_ = ob.createBlock(&sg.getBody());
    mlir::Value x = block_->addArgument(type(shape), ob.getUnknownLoc());
    builder_ = &ob;
    plan_.clear();
    for (int i = 0, n = 1 + static_cast<int>(rng_() % 5); i < n; ++i)
      plan_.push_back(static_cast<int>(rng_() % 6));
    mlir::Value out = chain(x, shape);
    sir::OutputOp::create(ob, ob.getUnknownLoc(), mlir::ValueRange{out});
    // Broadcast sources became extra arguments on the way.
    sg.setFunctionTypeAttr(
        mlir::TypeAttr::get(ob.getFunctionType(block_->getArgumentTypes(), {out.getType()})));
    return std::move(module_);
  }

private:
  mlir::RankedTensorType type(const Shape &s) {
    return mlir::RankedTensorType::get(s, b_.getF32Type());
  }

  Shape randomShape(int minRank, int maxRank) {
    Shape s(minRank + rng_() % (maxRank - minRank + 1));
    for (int64_t &d : s)
      d = 1 + rng_() % 5;
    return s;
  }

  mlir::Value prim(const std::string &name, mlir::ValueRange operands, const Shape &result,
                   const std::function<void(sir::PrimOp)> &attrs = {}) {
    auto op = sir::createPrim(*builder_, builder_->getUnknownLoc(), type(result),
                              sir::toOpsPrim(*sir::symbolizePrimitive(name)), operands);
    if (attrs)
      attrs(op);
    return op.getResult();
  }

  /// Applies the planned steps to `cur` (of `shape`).
  mlir::Value chain(mlir::Value cur, Shape shape) {
    for (int step : plan_) {
      switch (step) {
      case 0: // elementwise
        cur = prim("exp", cur, shape);
        break;
      case 1: { // + a broadcast source, a new argument
        Shape src = shape;
        size_t drop = rng_() % (src.size() + 1);
        src.erase(src.begin(), src.begin() + std::min(drop, src.size() - 1));
        for (int64_t &d : src)
          if (rng_() % 2)
            d = 1;
        mlir::Value y = block_->addArgument(type(src), builder_->getUnknownLoc());
        mlir::Value by = src == shape ? y : prim("broadcast_to", y, shape, [&](sir::PrimOp p) {
          p.setShapeAttr(b_.getDenseI64ArrayAttr(shape));
        });
        cur = prim("add", {cur, by}, shape);
        break;
      }
      case 2: { // reshape to a random factorization
        Shape to;
        int64_t n = numel(shape);
        int rank = 1 + rng_() % 3;
        for (int r = 1; r < rank; ++r) {
          std::vector<int64_t> divisors;
          for (int64_t d = 1; d <= n; ++d)
            if (n % d == 0)
              divisors.push_back(d);
          int64_t d = divisors[rng_() % divisors.size()];
          to.push_back(d);
          n /= d;
        }
        to.push_back(n);
        if (to != shape)
          cur = prim("reshape", cur, to,
                     [&](sir::PrimOp p) { p.setShapeAttr(b_.getDenseI64ArrayAttr(to)); });
        shape = to;
        break;
      }
      case 3: { // transpose
        Shape perm(shape.size());
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng_);
        Shape to;
        for (int64_t q : perm)
          to.push_back(shape[q]);
        cur = prim("transpose", cur, to,
                   [&](sir::PrimOp p) { p.setPermAttr(b_.getDenseI64ArrayAttr(perm)); });
        shape = to;
        break;
      }
      case 4: { // a keepdim reduction, broadcast back and combined with its input
        Shape axes;
        for (size_t d = 0; d < shape.size(); ++d)
          if (rng_() % 2)
            axes.push_back(static_cast<int64_t>(d));
        if (axes.empty())
          axes.push_back(static_cast<int64_t>(shape.size() - 1));
        Shape reduced = shape;
        for (int64_t a : axes)
          reduced[a] = 1;
        mlir::Value r = prim("reduce_sum", cur, reduced, [&](sir::PrimOp p) {
          p.setAxesAttr(b_.getDenseI64ArrayAttr(axes));
          p.setKeepdimAttr(b_.getBoolAttr(true));
        });
        mlir::Value br = reduced == shape ? r : prim("broadcast_to", r, shape, [&](sir::PrimOp p) {
          p.setShapeAttr(b_.getDenseI64ArrayAttr(shape));
        });
        cur = prim("multiply", {cur, br}, shape);
        break;
      }
      case 5: { // a strided slice of one axis
        size_t axis = rng_() % shape.size();
        int64_t size = shape[axis];
        int64_t start = rng_() % size, step = 1 + rng_() % 2;
        int64_t stop = start + 1 + rng_() % (size - start);
        Shape to = shape;
        to[axis] = (stop - start + step - 1) / step;
        cur = prim("slice", cur, to, [&](sir::PrimOp p) {
          p.setAxesAttr(b_.getDenseI64ArrayAttr({static_cast<int64_t>(axis)}));
          p.setStartsAttr(b_.getDenseI64ArrayAttr({start}));
          p.setEndsAttr(b_.getDenseI64ArrayAttr({stop}));
          p.setStepsAttr(b_.getDenseI64ArrayAttr({step}));
        });
        shape = to;
        break;
      }
      }
    }
    return cur;
  }

  mlir::MLIRContext &ctx_;
  std::mt19937 &rng_;
  mlir::Builder b_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mlir::OpBuilder *builder_ = nullptr;
  std::vector<int> plan_;
  mlir::Block *block_ = nullptr;
};

/// The input element a primitive reads for output element `out`; `got` is the element the
/// index expressions chose (returned for reductions, whose reduced coordinates are free).
Shape wanted(const mapexpr::OpStmt &s, const Shape &out, const Shape &os, const Shape &is,
             const Shape &got) {
  if (s.prim == ops::Prim::BroadcastTo) {
    Shape want;
    size_t off = os.size() - is.size();
    for (size_t j = 0; j < is.size(); ++j)
      want.push_back(is[j] == 1 && os[j + off] != 1 ? 0 : out[j + off]);
    return want;
  }
  if (s.prim == ops::Prim::Reshape) {
    int64_t f = flat(out, os);
    Shape want(is.size(), 0);
    for (size_t j = is.size(); j-- > 0;) {
      want[j] = f % is[j];
      f /= is[j];
    }
    return want;
  }
  if (s.prim == ops::Prim::Transpose) {
    const Shape &perm = s.attrs.perm;
    Shape want(perm.size());
    for (size_t i = 0; i < perm.size(); ++i)
      want[perm[i]] = out[i];
    return want;
  }
  if (s.prim == ops::Prim::Slice) {
    Shape want = out;
    const Shape &axes = s.attrs.axes, &starts = s.attrs.starts, &steps = s.attrs.steps;
    for (size_t k = 0; k < axes.size(); ++k)
      want[axes[k]] = starts[k] + out[axes[k]] * steps[k];
    return want;
  }
  if (s.isAcc()) {
    // The output is the input with the reduced axes at 0 (keepdim): any reduced
    // coordinate is right as long as the rest match.
    Shape projected = got;
    for (int64_t ax : s.attrs.axes)
      projected[ax] = 0;
    return projected == out ? got : Shape{-1};
  }
  return out; // elementwise
}

/// Checks one kernel against the primitives' meaning.
void checkKernel(const mapexpr::Kernel &k) {
  INFO(k.str(/*indexDetail=*/true));
  // Kernel outputs, and tensors one stage writes and a later stage reads, are computed whole.
  std::set<int> mustBeComplete(k.outputs.begin(), k.outputs.end());
  std::map<int, size_t> producedIn;
  for (size_t si = 0; si < k.stmts.size(); ++si)
    for (const mapexpr::OpStmt &s : k.stmts[si].stmts)
      producedIn.emplace(s.outs[0], si);
  for (size_t si = 0; si < k.stmts.size(); ++si)
    for (const mapexpr::OpStmt &s : k.stmts[si].stmts)
      for (int t : s.ins)
        if (producedIn.count(t) && producedIn[t] < si)
          mustBeComplete.insert(t);
  // One launch: every statement runs on the first one's grid, and a block reads only what it
  // wrote itself in an earlier statement (a block never needs another block's result).
  auto spatial = [](const mapexpr::AnchoredMapStmt &a) {
    std::vector<std::pair<sched::LoopType, int64_t>> grid;
    for (const sched::LoopDescriptor &l : a.schedule->loops)
      if (l.spatial())
        grid.push_back({l.type, l.size});
    return grid;
  };
  std::map<int, std::map<int64_t, int64_t>> writerBlock; // tensor -> element -> block
  for (const mapexpr::AnchoredMapStmt &a : k.stmts) {
    CHECK(spatial(a) == spatial(k.stmts.front()));
    const sched::ScheduleMesh &mesh = a.schedule->mesh;
    size_t blockDim = 0; // the loop bound to blockIdx.x (CPU: the parallel loop)
    while (a.schedule->loops[blockDim].type != sched::LoopType::S0x)
      ++blockDim;
    std::map<int, std::map<int64_t, int>> writes;          // tensor -> element -> count
    std::map<std::pair<size_t, int64_t>, int> accumulated; // (stmt, input element) -> count
    Shape loop(mesh.outputRank(), 0);
    for (int64_t n = 0; n < mesh.outputNumElements(); ++n) {
      int64_t rest = n;
      for (size_t d = loop.size(); d-- > 0;) {
        loop[d] = rest % mesh.outputShape()[d];
        rest /= mesh.outputShape()[d];
      }
      std::optional<Shape> it = mesh.inputIndex(loop);
      if (!it)
        continue; // padding
      auto coords = [&](int t) {
        Shape c;
        for (const mapexpr::Expr &e : a.index.at(t))
          c.push_back(e->eval(*it));
        const Shape &shape = k.tensors[t].shape;
        for (size_t d = 0; d < c.size(); ++d)
          REQUIRE((c[d] >= 0 && c[d] < shape[d])); // in bounds
        return c;
      };
      for (size_t si = 0; si < a.stmts.size(); ++si) {
        const mapexpr::OpStmt &s = a.stmts[si];
        if (s.isInit())
          continue;
        Shape out = coords(s.outs[0]);
        const Shape &os = k.tensors[s.outs[0]].shape;
        if (!s.isAcc())
          ++writes[s.outs[0]][flat(out, os)];
        writerBlock[s.outs[0]][flat(out, os)] = loop[blockDim];
        for (int in : s.ins) {
          Shape got = coords(in);
          const Shape &is = k.tensors[in].shape;
          INFO(s.name() << " reads t_" << k.tensors[in].name);
          if (producedIn.count(in) && producedIn[in] < static_cast<size_t>(&a - &k.stmts[0]))
            CHECK(writerBlock[in].at(flat(got, is)) == loop[blockDim]);
          CHECK(got == wanted(s, out, os, is, got)); // the element the primitive means
          if (s.isAcc())
            ++accumulated[{si, flat(got, is)}];
        }
      }
    }
    for (const mapexpr::OpStmt &s : a.stmts) {
      int t = s.outs[0];
      INFO(s.name() << " writes t_" << k.tensors[t].name);
      if (mustBeComplete.count(t) && !s.isInit() && !s.isAcc())
        CHECK(static_cast<int64_t>(writes[t].size()) == numel(k.tensors[t].shape));
      if (numel(k.tensors[t].shape) == numel(a.space))
        for (const auto &[e, times] : writes[t])
          CHECK(times == 1); // anchor-sized outputs: each element once
    }
    // A reduction adds every input element exactly once.
    for (size_t si = 0; si < a.stmts.size(); ++si)
      if (a.stmts[si].isAcc()) {
        int in = a.stmts[si].ins[0];
        for (int64_t e = 0; e < numel(k.tensors[in].shape); ++e)
          CHECK(accumulated[{si, e}] == 1);
      }
  }
}

} // namespace

TEST_CASE("MapExpr index expressions agree with the primitives they index", "[mapexpr][property]") {
  mlir::MLIRContext ctx;
  ctx.loadDialect<sir::SirDialect>();
  ctx.printOpOnDiagnostic(true);
  std::mt19937 rng(20261129);
  int kernels = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    RandomProgram program(ctx, rng);
    mlir::OwningOpRef<mlir::ModuleOp> module = program.build();
    std::string ir;
    llvm::raw_string_ostream os(ir);
    module->print(os);
    INFO("trial " << trial << "\n" << ir);
    REQUIRE(mlir::succeeded(mlir::verify(*module)));
    mlir::PassManager pm(&ctx);
    pm.nest<sir::SubgraphOp>().addPass(sir::createSirFuse());
    REQUIRE(mlir::succeeded(pm.run(*module)));
    bool ok = true;
    module->walk([&](sir::GroupOp group) {
      mlir::FailureOr<mapexpr::Kernel> k = mapexpr::buildKernel(group);
      if (mlir::failed(k)) {
        ok = false;
        return;
      }
      ++kernels;
      INFO(k->str(/*indexDetail=*/true));
      REQUIRE(mapexpr::scheduleKernel(*k, trial % 4 == 3 ? mapexpr::Target::Cpu
                                                         : mapexpr::Target::Cuda));
      checkKernel(*k);
    });
    REQUIRE(ok);
  }
  CHECK(kernels >= 2000);
}
