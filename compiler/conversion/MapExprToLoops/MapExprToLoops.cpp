//===- MapExprToLoops.cpp - Scheduled mapexpr.kernel ops to loop nests on memrefs --------===//
//
// 1. Read the kernel as the model (tensors, statements, indices, schedules) and decide where
//    each tensor lives (tensorStorage): inputs and outputs are the function's memrefs,
//    shared tensors a per-block memref.alloca, scratch a memref.alloc, registers SSA values.
// 2. Open the grid: one scf.forall over the blocks that every statement shares.
// 3. Per AnchoredMapStmt, open its loops inside the block, rebuild the anchor coordinates of
//    a loop point by replaying the mesh steps backwards, skip padding points, and emit each
//    OpStmt on scalars. A reduction's accumulators are loop-carried values of the reduced
//    loop, initialized before it and stored after it.
// 4. Replace the kernel by the function (same symbol, so launches still name it).
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/conversion/MapExprToLoops/Passes.h"

#include "compiler/support/MlirDiagnostics.h"
#include "dialects/mapexpr/IR/MapExprDialect.h"

#include "mlir/IR/Builders.h"

#include <array>
#include <functional>
#include <map>
#include <set>

namespace sotc {

#define GEN_PASS_DEF_CONVERTMAPEXPRTOLOOPS
#include "compiler/conversion/MapExprToLoops/Passes.h.inc"

using namespace mapexpr;

namespace {

/// `reduce_sum_acc` -> `reduce_sum`
std::string reductionOf(const std::string &op) { return op.substr(0, op.rfind('_')); }

/// Scalar arithmetic for OpStmts, on the element types sotc's tensors use: floats, signless
/// integers and i1 for bool.
class Scalars {
public:
  Scalars(mlir::OpBuilder &b, mlir::Location loc) : b_(b), loc_(loc) {}

  mlir::Value constant(mlir::Type t, double v) {
    if (auto f = mlir::dyn_cast<mlir::FloatType>(t))
      return mlir::arith::ConstantOp::create(b_, loc_, b_.getFloatAttr(f, v));
    return mlir::arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(t, static_cast<int64_t>(v)));
  }

  mlir::Value cast(mlir::Value x, mlir::Type to) {
    mlir::Type from = x.getType();
    if (from == to)
      return x;
    bool fromF = mlir::isa<mlir::FloatType>(from), toF = mlir::isa<mlir::FloatType>(to);
    if (to.isInteger(1)) // bool(x): nonzero
      return fromF ? mlir::arith::CmpFOp::create(b_, loc_, mlir::arith::CmpFPredicate::UNE, x,
                                                 constant(from, 0))
                         .getResult()
                   : mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::ne, x,
                                                 constant(from, 0))
                         .getResult();
    if (fromF && toF)
      return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
                 ? mlir::arith::ExtFOp::create(b_, loc_, to, x).getResult()
                 : mlir::arith::TruncFOp::create(b_, loc_, to, x).getResult();
    if (fromF)
      return mlir::arith::FPToSIOp::create(b_, loc_, to, x);
    if (toF) // bool converts as unsigned (true is 1, not -1)
      return from.isInteger(1) ? mlir::arith::UIToFPOp::create(b_, loc_, to, x).getResult()
                               : mlir::arith::SIToFPOp::create(b_, loc_, to, x).getResult();
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return from.isInteger(1) ? mlir::arith::ExtUIOp::create(b_, loc_, to, x).getResult()
                               : mlir::arith::ExtSIOp::create(b_, loc_, to, x).getResult();
    return mlir::arith::TruncIOp::create(b_, loc_, to, x);
  }

  /// The primitive `op` on `args`, giving a value of type `out`; null when it is not one.
  mlir::Value apply(const std::string &op, llvm::ArrayRef<mlir::Value> args, mlir::Type out) {
    if (op == "cast")
      return cast(args[0], out);
    if (op == "broadcast_to" || op == "reshape" || op == "transpose" || op == "slice")
      return args[0]; // the index expressions did the moving
    if (op == "select")
      return mlir::arith::SelectOp::create(b_, loc_, args[0], args[1], args[2]);
    if (args.size() == 1)
      return unary(op, args[0]);
    if (args.size() == 2)
      return binary(op, args[0], args[1]);
    return {};
  }

  /// The identity a reduction starts from.
  mlir::Value identity(const std::string &reduction, mlir::Type t) {
    if (reduction == "reduce_prod")
      return constant(t, 1);
    if (reduction == "reduce_max" || reduction == "reduce_min") {
      bool max = reduction == "reduce_max";
      if (auto f = mlir::dyn_cast<mlir::FloatType>(t))
        return mlir::arith::ConstantOp::create(
            b_, loc_, b_.getFloatAttr(f, llvm::APFloat::getInf(f.getFloatSemantics(), max)));
      unsigned w = t.getIntOrFloatBitWidth();
      llvm::APInt v = w == 1 ? llvm::APInt(1, max ? 0 : 1)
                      : max  ? llvm::APInt::getSignedMinValue(w)
                             : llvm::APInt::getSignedMaxValue(w);
      return mlir::arith::ConstantOp::create(b_, loc_, b_.getIntegerAttr(t, v));
    }
    return constant(t, 0); // reduce_sum, matmul
  }

  /// acc (+) the statement's contribution at this point.
  /// Float sums and products may reassociate (fastmath<reassoc>): a reduction's order is
  /// not the program's to observe, and it lets the CPU vectorize the row loop. `fuse`: a
  /// float sum of products (a convolution's taps, a matmul's) is one fused multiply-add per
  /// point, for an accumulator of its own (a lane's; a row loop's reduction would no longer
  /// vectorize as one).
  mlir::Value accumulate(const std::string &reduction, mlir::Value acc,
                         llvm::ArrayRef<mlir::Value> args, bool fuse = false) {
    mlir::Value x = cast(args[0], acc.getType());
    if (fuse && isFloat(acc) && (reduction == "matmul" || reduction == "reduce_sum")) {
      if (reduction == "matmul")
        return mlir::math::FmaOp::create(b_, loc_, x, cast(args[1], acc.getType()), acc);
      if (auto product = x.getDefiningOp<mlir::arith::MulFOp>())
        return mlir::math::FmaOp::create(b_, loc_, product.getLhs(), product.getRhs(), acc);
    }
    if (reduction == "matmul")
      x = binary("multiply", x, cast(args[1], acc.getType()));
    if (!isFloat(acc) ||
        (reduction != "reduce_sum" && reduction != "reduce_prod" && reduction != "matmul"))
      return binary(reduction == "reduce_max"    ? "max"
                    : reduction == "reduce_min"  ? "min"
                    : reduction == "reduce_prod" ? "multiply"
                                                 : "add",
                    acc, x);
    auto reassoc =
        mlir::arith::FastMathFlagsAttr::get(b_.getContext(), mlir::arith::FastMathFlags::reassoc);
    if (reduction == "reduce_prod")
      return mlir::arith::MulFOp::create(b_, loc_, acc, x, reassoc);
    return mlir::arith::AddFOp::create(b_, loc_, acc, x, reassoc);
  }

private:
  bool isFloat(mlir::Value v) { return mlir::isa<mlir::FloatType>(v.getType()); }

  mlir::Value unary(const std::string &op, mlir::Value x) {
    mlir::Type t = x.getType();
    if (isFloat(x)) {
      if (op == "exp")
        return mlir::math::ExpOp::create(b_, loc_, x);
      if (op == "log")
        return mlir::math::LogOp::create(b_, loc_, x);
      if (op == "log1p")
        return mlir::math::Log1pOp::create(b_, loc_, x);
      if (op == "sin")
        return mlir::math::SinOp::create(b_, loc_, x);
      if (op == "cos")
        return mlir::math::CosOp::create(b_, loc_, x);
      if (op == "tanh")
        return mlir::math::TanhOp::create(b_, loc_, x);
      if (op == "sqrt")
        return mlir::math::SqrtOp::create(b_, loc_, x);
      if (op == "rsqrt")
        return mlir::math::RsqrtOp::create(b_, loc_, x);
      if (op == "erf")
        return mlir::math::ErfOp::create(b_, loc_, x);
      if (op == "abs")
        return mlir::math::AbsFOp::create(b_, loc_, x);
      if (op == "neg")
        return mlir::arith::NegFOp::create(b_, loc_, x);
      if (op == "floor")
        return mlir::math::FloorOp::create(b_, loc_, x);
      if (op == "ceil")
        return mlir::math::CeilOp::create(b_, loc_, x);
      if (op == "round") // halves to even, as numpy and torch
        return mlir::math::RoundEvenOp::create(b_, loc_, x);
      if (op == "trunc") { // floor or ceil by the sign: convert-gpu-to-nvvm leaves math.trunc
        mlir::Value zero = mlir::arith::ConstantOp::create(b_, loc_, b_.getZeroAttr(x.getType()));
        mlir::Value negative =
            mlir::arith::CmpFOp::create(b_, loc_, mlir::arith::CmpFPredicate::OLT, x, zero);
        return mlir::arith::SelectOp::create(b_, loc_, negative,
                                             mlir::math::CeilOp::create(b_, loc_, x),
                                             mlir::math::FloorOp::create(b_, loc_, x));
      }
      if (op == "tan")
        return mlir::math::TanOp::create(b_, loc_, x);
      if (op == "asin")
        return mlir::math::AsinOp::create(b_, loc_, x);
      if (op == "acos")
        return mlir::math::AcosOp::create(b_, loc_, x);
      if (op == "atan")
        return mlir::math::AtanOp::create(b_, loc_, x);
      if (op == "sinh")
        return mlir::math::SinhOp::create(b_, loc_, x);
      if (op == "cosh")
        return mlir::math::CoshOp::create(b_, loc_, x);
      if (op == "asinh")
        return mlir::math::AsinhOp::create(b_, loc_, x);
      if (op == "acosh")
        return mlir::math::AcoshOp::create(b_, loc_, x);
      if (op == "atanh")
        return mlir::math::AtanhOp::create(b_, loc_, x);
      if (op == "expm1")
        return mlir::math::ExpM1Op::create(b_, loc_, x);
      if (op == "exp2")
        return mlir::math::Exp2Op::create(b_, loc_, x);
      if (op == "log2")
        return mlir::math::Log2Op::create(b_, loc_, x);
      if (op == "log10")
        return mlir::math::Log10Op::create(b_, loc_, x);
      if (op == "erfc")
        return mlir::math::ErfcOp::create(b_, loc_, x);
    } else {
      if (op == "abs") // max(x, -x): arith, which both targets lower (math.absi has no NVVM path)
        return mlir::arith::MaxSIOp::create(
            b_, loc_, x, mlir::arith::SubIOp::create(b_, loc_, constant(t, 0), x));
      if (op == "neg")
        return mlir::arith::SubIOp::create(b_, loc_, constant(t, 0), x);
      if (op == "floor" || op == "ceil" || op == "round" || op == "trunc")
        return x;
      if (op == "logical_not" || op == "bitwise_not") // xor with all ones (true for i1)
        return mlir::arith::XOrIOp::create(b_, loc_, x, constant(t, -1));
    }
    if (op == "sign") { // (x > 0) - (x < 0)
      mlir::Value pos = cast(compare("greater_than", x, constant(t, 0)), t);
      mlir::Value neg = cast(compare("less_than", x, constant(t, 0)), t);
      return binary("subtract", pos, neg);
    }
    return {};
  }

  mlir::Value compare(const std::string &op, mlir::Value a, mlir::Value c) {
    using FP = mlir::arith::CmpFPredicate;
    using IP = mlir::arith::CmpIPredicate;
    static const std::map<std::string, std::pair<FP, IP>> preds = {
        {"less_than", {FP::OLT, IP::slt}},    {"less_equal", {FP::OLE, IP::sle}},
        {"equal", {FP::OEQ, IP::eq}},         {"not_equal", {FP::UNE, IP::ne}},
        {"greater_than", {FP::OGT, IP::sgt}}, {"greater_equal", {FP::OGE, IP::sge}}};
    auto it = preds.find(op);
    if (it == preds.end())
      return {};
    if (isFloat(a))
      return mlir::arith::CmpFOp::create(b_, loc_, it->second.first, a, c);
    return mlir::arith::CmpIOp::create(b_, loc_, it->second.second, a, c);
  }

  /// An integer quotient or remainder that never traps: a zero divisor gives 0 (numpy's
  /// result; torch raises), and a divisor of -1 (whose INT_MIN quotient overflows a hardware
  /// division) gives -a and 0 by arithmetic.
  mlir::Value integerDivision(mlir::Value a, mlir::Value c, bool remainder,
                              const std::function<mlir::Value(mlir::Value, mlir::Value)> &divide) {
    mlir::Type t = a.getType();
    mlir::Value zero = constant(t, 0), one = constant(t, 1);
    mlir::Value byZero = compare("equal", c, zero);
    mlir::Value byMinusOne = t.isInteger(1) ? mlir::Value() : compare("equal", c, constant(t, -1));
    mlir::Value special =
        byMinusOne ? mlir::arith::OrIOp::create(b_, loc_, byZero, byMinusOne).getResult() : byZero;
    mlir::Value r = divide(a, mlir::arith::SelectOp::create(b_, loc_, special, one, c));
    if (byMinusOne)
      r = mlir::arith::SelectOp::create(b_, loc_, byMinusOne,
                                        remainder ? zero : binary("subtract", zero, a), r);
    return mlir::arith::SelectOp::create(b_, loc_, byZero, zero, r);
  }

  mlir::Value binary(const std::string &op, mlir::Value a, mlir::Value c) {
    if (mlir::Value cmp = compare(op, a, c))
      return cmp;
    if (isFloat(a)) {
      if (op == "add")
        return mlir::arith::AddFOp::create(b_, loc_, a, c);
      if (op == "subtract")
        return mlir::arith::SubFOp::create(b_, loc_, a, c);
      if (op == "multiply")
        return mlir::arith::MulFOp::create(b_, loc_, a, c);
      if (op == "divide")
        return mlir::arith::DivFOp::create(b_, loc_, a, c);
      if (op == "floor_divide")
        return mlir::math::FloorOp::create(b_, loc_, mlir::arith::DivFOp::create(b_, loc_, a, c));
      if (op == "remainder") // Python's: a - floor(a / c) * c, the sign of the divisor
        return binary("subtract", a, binary("multiply", binary("floor_divide", a, c), c));
      if (op == "pow")
        return mlir::math::PowFOp::create(b_, loc_, a, c);
      if (op == "max")
        return mlir::arith::MaximumFOp::create(b_, loc_, a, c);
      if (op == "min")
        return mlir::arith::MinimumFOp::create(b_, loc_, a, c);
      if (op == "atan2")
        return mlir::math::Atan2Op::create(b_, loc_, a, c);
      if (op == "copysign")
        return mlir::math::CopySignOp::create(b_, loc_, a, c);
      if (op == "fmod") // C's fmod: the sign of the dividend
        return mlir::arith::RemFOp::create(b_, loc_, a, c);
      return {};
    }
    if (op == "add")
      return mlir::arith::AddIOp::create(b_, loc_, a, c);
    if (op == "subtract")
      return mlir::arith::SubIOp::create(b_, loc_, a, c);
    if (op == "multiply")
      return mlir::arith::MulIOp::create(b_, loc_, a, c);
    if (op == "divide" || op == "floor_divide")
      return integerDivision(a, c, /*remainder=*/false, [&](mlir::Value x, mlir::Value d) {
        return mlir::arith::FloorDivSIOp::create(b_, loc_, x, d).getResult();
      });
    if (op == "fmod") // C's %: truncating, the sign of the dividend
      return integerDivision(a, c, /*remainder=*/true, [&](mlir::Value x, mlir::Value d) {
        return mlir::arith::RemSIOp::create(b_, loc_, x, d).getResult();
      });
    if (op == "remainder") // a - floordiv(a, c) * c
      return integerDivision(a, c, /*remainder=*/true, [&](mlir::Value x, mlir::Value d) {
        mlir::Value q = mlir::arith::FloorDivSIOp::create(b_, loc_, x, d);
        return binary("subtract", x, binary("multiply", q, d));
      });
    if (op == "pow")
      return mlir::math::IPowIOp::create(b_, loc_, a, c);
    if (op == "max")
      return a.getType().isInteger(1) ? mlir::arith::OrIOp::create(b_, loc_, a, c).getResult()
                                      : mlir::arith::MaxSIOp::create(b_, loc_, a, c).getResult();
    if (op == "min")
      return a.getType().isInteger(1) ? mlir::arith::AndIOp::create(b_, loc_, a, c).getResult()
                                      : mlir::arith::MinSIOp::create(b_, loc_, a, c).getResult();
    if (op == "logical_and" || op == "bitwise_and")
      return mlir::arith::AndIOp::create(b_, loc_, a, c);
    if (op == "logical_or" || op == "bitwise_or")
      return mlir::arith::OrIOp::create(b_, loc_, a, c);
    if (op == "logical_xor" || op == "bitwise_xor")
      return mlir::arith::XOrIOp::create(b_, loc_, a, c);
    return {};
  }

  mlir::OpBuilder &b_;
  mlir::Location loc_;
};

/// Index arithmetic on `index` values.
struct Indices {
  mlir::OpBuilder &b;
  mlir::Location loc;
  /// A kernel over dynamic sizes: the call's value of each size it takes (its arguments),
  /// which a size holding that size's stand-in (sched::kSizeStandIns) stands for; null for
  /// the sizes it does not take.
  std::array<mlir::Value, sched::kSizeSymbols> sizes{};

  bool dynamic() const {
    return llvm::any_of(sizes, [](mlir::Value v) { return static_cast<bool>(v); });
  }
  mlir::Value c(int64_t v) { return mlir::arith::ConstantIndexOp::create(b, loc, v); }
  /// A size of the model: one that holds powers of the dynamic sizes computed from the
  /// call's (64*s0*s1^2: 64 * s0 * s1 * s1).
  mlir::Value size(int64_t k) {
    if (!dynamic() || !sched::holdsBatch(k))
      return c(k);
    mlir::Value v;
    std::vector<int> powers = sched::sizePowers(k);
    for (size_t symbol = 0; symbol < powers.size(); ++symbol)
      for (int p = 0; p < powers[symbol]; ++p)
        v = v ? mlir::arith::MulIOp::create(b, loc, v, sizes[symbol]).getResult() : sizes[symbol];
    int64_t factor = sched::staticFactor(k);
    return factor == 1 ? v : mlir::arith::MulIOp::create(b, loc, v, c(factor)).getResult();
  }
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddIOp::create(b, loc, x, y);
  }
  mlir::Value mul(mlir::Value x, int64_t k) {
    return k == 1 ? x : mlir::arith::MulIOp::create(b, loc, x, size(k)).getResult();
  }
  mlir::Value div(mlir::Value x, int64_t k) {
    return k == 1 ? x : mlir::arith::DivUIOp::create(b, loc, x, size(k)).getResult();
  }
  mlir::Value rem(mlir::Value x, int64_t k) {
    return mlir::arith::RemUIOp::create(b, loc, x, size(k));
  }

  /// Row-major flat index of `coords` over `dims`.
  mlir::Value flat(llvm::ArrayRef<mlir::Value> coords, llvm::ArrayRef<int64_t> dims) {
    mlir::Value f = c(0);
    for (size_t d = 0; d < coords.size(); ++d)
      f = add(mul(f, dims[d]), coords[d]);
    return f;
  }

  /// Component `k` of flat index `f` over `dims`. A first dim that holds the batch is the
  /// quotient alone: f is in range (which spares a division by the call's rows).
  mlir::Value unflat(mlir::Value f, llvm::ArrayRef<int64_t> dims, size_t k) {
    int64_t inner = 1;
    for (size_t d = k + 1; d < dims.size(); ++d)
      inner *= dims[d];
    if (dynamic() && k == 0 && sched::holdsBatch(dims[0]))
      return div(f, inner);
    return rem(div(f, inner), dims[k]);
  }

  /// Coordinates over `after` as coordinates over `before` (same elements). Where each dim of
  /// `after` is a run of consecutive dims of `before` (a merge), each coordinate splits on its
  /// own: divisions by the run's inner sizes only, and a run of one dim is the coordinate.
  std::vector<mlir::Value> unmerge(llvm::ArrayRef<mlir::Value> coords,
                                   llvm::ArrayRef<int64_t> after, llvm::ArrayRef<int64_t> before) {
    std::vector<mlir::Value> out;
    for (size_t i = 0, j = 0; j < after.size(); ++j) {
      size_t first = i;
      int64_t size = 1;
      while (i < before.size() && (size < after[j] || (i > first && before[i] == 1)))
        size *= before[i++];
      if (i == first + 1 && size > after[j]) { // a split: after[j..] make up before[first]
        size_t last = j;
        for (int64_t parts = after[j]; parts < size && last + 1 < after.size();)
          parts *= after[++last];
        int64_t parts = 1;
        for (size_t k = j; k <= last; ++k)
          parts *= after[k];
        if (parts == size) {
          out.push_back(flat(coords.slice(j, last - j + 1), after.slice(j, last - j + 1)));
          j = last;
          continue;
        }
      }
      if (size != after[j]) { // not a merge: through the flat index
        mlir::Value f = flat(coords, after);
        out.clear();
        for (size_t k = 0; k < before.size(); ++k)
          out.push_back(before.size() == 1 ? f : unflat(f, before, k));
        return out;
      }
      for (size_t k = first; k < i; ++k)
        out.push_back(i - first == 1 ? coords[j] : unflat(coords[j], before.slice(first, i - first), k - first));
    }
    while (out.size() < before.size()) // trailing dims of size 1
      out.push_back(c(0));
    return out;
  }

  /// The value of an index expression at the given anchor coordinates.
  mlir::Value expr(const Expr &e, llvm::ArrayRef<mlir::Value> iters) {
    switch (e->kind()) {
    case IndexExpr::Kind::Iter:
      return iters[e->id()];
    // Offsets may be sizes too (where a concatenation's part after a part of T starts).
    case IndexExpr::Kind::Const:
      return e->value() >= 0 ? size(e->value())
                             : mlir::arith::SubIOp::create(b, loc, c(0), size(-e->value()));
    case IndexExpr::Kind::Affine: {
      mlir::Value v = mul(expr(e->items()[0], iters), e->mul());
      return e->value() >= 0 ? add(v, size(e->value()))
                             : mlir::arith::SubIOp::create(b, loc, v, size(-e->value()));
    }
    case IndexExpr::Kind::Dot: {
      llvm::SmallVector<mlir::Value> items;
      for (const Expr &item : e->items())
        items.push_back(expr(item, iters));
      return flat(items, e->dims());
    }
    case IndexExpr::Kind::UnDot:
      return unflat(expr(e->items()[0], iters), e->dims(), e->item());
    case IndexExpr::Kind::Sum:
      return add(expr(e->items()[0], iters), expr(e->items()[1], iters));
    }
    return c(0);
  }

  /// The anchor coordinates of a point of the mesh's loop space: the mesh steps replayed
  /// backwards. `inBounds` is null when no step pads, else true where the point is real.
  std::vector<mlir::Value> anchor(const sched::ScheduleMesh &mesh,
                                  llvm::ArrayRef<mlir::Value> loopCoords, mlir::Value &inBounds) {
    std::vector<mlir::Value> coords(loopCoords.begin(), loopCoords.end());
    const auto &steps = mesh.steps();
    for (auto step = steps.rbegin(); step != steps.rend(); ++step) {
      switch (step->kind) {
      case sched::ScheduleMesh::Step::Kind::Reshape: {
        if (step->before == step->after)
          break;
        coords = unmerge(coords, step->after, step->before);
        break;
      }
      case sched::ScheduleMesh::Step::Kind::Transpose: {
        std::vector<mlir::Value> before(coords.size());
        for (size_t d = 0; d < coords.size(); ++d)
          before[step->perm[d]] = coords[d];
        coords = before;
        break;
      }
      case sched::ScheduleMesh::Step::Kind::Padding:
        for (size_t d = 0; d < coords.size(); ++d)
          if (step->before[d] < step->after[d]) {
            mlir::Value ok = mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::ult,
                                                         coords[d], size(step->before[d]));
            inBounds =
                inBounds ? mlir::arith::AndIOp::create(b, loc, inBounds, ok).getResult() : ok;
          }
        break;
      }
    }
    return coords;
  }
};

/// One kernel's lowering.
class KernelLowering {
public:
  /// `kernels`: where GPU kernels go (null for the CPU); `testingBreak`: the pass option.
  KernelLowering(KernelOp op, mlir::gpu::GPUModuleOp kernels, llvm::StringRef testingBreak)
      : op_(op), gpuModule_(kernels), b_(op), idx_{b_, op.getLoc()},
        testingBreak_(testingBreak) {}

  mlir::LogicalResult run() {
    kernel_ = kernelFromIR(op_, &values_);
    for (const AnchoredMapStmt &a : kernel_.stmts)
      if (!a.schedule)
        return op_.emitOpError("is not scheduled: run sotc-mapexpr-schedule first");
    for (const AnchoredMapStmt &a : kernel_.stmts) {
      int sequential = 0;
      for (const sched::LoopDescriptor &l : a.schedule->loops) {
        bool threads = l.type == sched::LoopType::S1x;
        sequential += l.type == sched::LoopType::Temporal || l.type == sched::LoopType::Vectorize;
        if (threads && !gpuModule_)
          return emitCodedError(op_.getLoc(), DiagCode::CliNotImplemented)
                 << "kernel " << op_.getSymName() << " maps " << l.str()
                 << ": thread-level loops lower to the GPU (target=cuda); schedule for the CPU "
                    "(target=cpu)";
        if (!threads && l.type != sched::LoopType::S0x && l.type != sched::LoopType::Temporal &&
            l.type != sched::LoopType::Vectorize)
          return emitCodedError(op_.getLoc(), DiagCode::CliNotImplemented)
                 << "kernel " << op_.getSymName() << " maps " << l.str()
                 << ": multi-dimensional grids and blocks are not lowered yet";
      }
      if (sequential > 1 && !laneReduction(a))
        return emitCodedError(op_.getLoc(), DiagCode::CliNotImplemented)
               << "kernel " << op_.getSymName() << ": more than one sequential loop per "
               << "statement is not lowered yet";
      // A reduction keeps one accumulator per row: every loop inside the block must run over
      // reduced elements only, or rows would mix.
      bool reduces = std::any_of(a.stmts.begin(), a.stmts.end(), [](const OpStmt &op) {
        return llvm::StringRef(op.op).ends_with("_acc");
      });
      for (size_t i = 0; reduces && !laneReduction(a) && i < a.schedule->loops.size(); ++i)
        if (a.schedule->loops[i].type != sched::LoopType::S0x && a.schedule->loops[i].size > 1 &&
            !a.schedule->mesh.outputReduced(i))
          return emitCodedError(op_.getLoc(), DiagCode::KernelUnsupported)
                 << "kernel " << op_.getSymName() << ": a reduction whose block loops also "
                 << "run over rows (" << a.schedule->loops[i].str() << ") is not lowered yet";
    }
    for (mlir::Value v : values_) {
      mlir::Type t = mlir::cast<mlir::RankedTensorType>(v.getType()).getElementType();
      if (!mlir::isa<mlir::FloatType>(t) && !(t.isSignlessInteger()))
        return emitCodedError(op_.getLoc(), DiagCode::KernelUnsupported)
               << "kernel " << op_.getSymName() << ": element type " << t
               << " is not lowered yet (floats, signless integers and bool are)";
    }
    storage_ = tensorStorage(kernel_);
    for (const AnchoredMapStmt &a : kernel_.stmts)
      for (const OpStmt &op : a.stmts)
        if (laneReduction(a) && llvm::StringRef(op.op).ends_with("_init") &&
            storage_[op.outs[0]].kind != StorageKind::Output)
          return emitCodedError(op_.getLoc(), DiagCode::KernelUnsupported)
                 << "kernel " << op_.getSymName() << ": a lane reduction accumulates in its "
                 << "outputs, and " << kernel_.tensors[op.outs[0]].name << " is "
                 << storageKindName(storage_[op.outs[0]].kind);
    rows_ = kernelRows(kernel_);
    if (mlir::failed(checkBatch()))
      return mlir::failure();
    if (gpuModule_ && mlir::failed(placeInSharedMemory()))
      return mlir::failure();
    emitFunction();
    return failed_ ? mlir::failure() : mlir::success();
  }

private:
  mlir::Location loc() { return op_.getLoc(); }

  /// A kernel over the dynamic size s0 takes the call's s0 (takesRows_): its statements share
  /// one grid (which the runtime scales). A CPU kernel allocates its scratch at the call's
  /// size and never pads a dim that holds s0 (a GPU kernel has no scratch of s0: spilled). A GPU
  /// block may loop over a row that holds s0 in its threads: the row padded to a multiple of them
  /// and split [trips, threads] (the call's trips are tripCount's), and what it keeps of such a row
  /// is in dynamic shared memory.
  mlir::LogicalResult checkBatch() {
    std::set<int> taken;
    for (mlir::Value v : values_)
      for (int symbol : dynamicSizesOf(mlir::cast<mlir::RankedTensorType>(v.getType())))
        taken.insert(symbol);
    sizes_.assign(taken.begin(), taken.end());
    takesRows_ = !sizes_.empty();
    if (!takesRows_)
      return mlir::success();
    auto refuse = [&](const std::string &why) {
      return emitCodedError(op_.getLoc(), DiagCode::KernelUnsupported)
             << "kernel " << op_.getSymName() << " over a dynamic size: " << why;
    };
    if (sizes_.size() > kMaxKernelSizes) {
      std::string names;
      for (int symbol : sizes_)
        names += (names.empty() ? "s" : ", s") + std::to_string(symbol);
      return refuse("it would take " + std::to_string(sizes_.size()) + " dynamic sizes (" + names +
                    "), more than the " + std::to_string(kMaxKernelSizes) + " a kernel takes");
    }
    std::vector<int> sharedPowers; // of the rows of dynamic sizes a block keeps
    for (size_t t = 0; t < values_.size(); ++t) {
      if (gpuModule_ && storage_[t].kind == StorageKind::Scratch &&
          !mlir::cast<mlir::RankedTensorType>(values_[t].getType()).hasStaticShape())
        return refuse("a scratch buffer of the whole batch is not supported yet");
      std::vector<int> powers = sched::sizePowers(storage_[t].elementsPerBlock);
      if (gpuModule_ && storage_[t].kind == StorageKind::Shared && !powers.empty()) {
        if (!sharedPowers.empty() && powers != sharedPowers)
          return refuse("its blocks would keep rows of " +
                        sched::sizeText(storage_[t].elementsPerBlock, true) +
                        " and of other sizes in shared memory, which CUDA kernels do not do yet");
        sharedPowers = powers;
      }
    }
    for (const AnchoredMapStmt &a : kernel_.stmts) {
      const sched::ScheduleMesh &mesh = a.schedule->mesh;
      if (sched::padsBatch(mesh) && !(gpuModule_ && sched::paddedBatchRow(*a.schedule)))
        return refuse("its schedule (" + mesh.str() + ") pads the dynamic size");
      const std::vector<int64_t> &shape = mesh.outputShape();
      if (gpuModule_ &&
          (shape.empty() || std::any_of(shape.begin() + 1, shape.end(), sched::holdsBatch)))
        return refuse("its schedule (" + mesh.str() +
                      ") loops over the dynamic size outside its grid and a padded row of its "
                      "threads, which CUDA kernels do not do yet (the CPU's do)");
    }
    return mlir::success();
  }

  /// The sequential loop's trip count: `inner` (the call's where it holds s0), or for a
  /// padded GPU row the call's ceil(row / threads) (the proxy's count means nothing then).
  mlir::Value tripCount(const AnchoredMapStmt &a, int64_t inner) {
    std::optional<sched::PaddedRow> row =
        gpuModule_ && takesRows_ ? sched::paddedBatchRow(*a.schedule) : std::nullopt;
    if (!row)
      return idx_.size(inner);
    mlir::Value padded = idx_.add(idx_.size(row->size), idx_.c(row->threads - 1));
    return mlir::arith::DivUIOp::create(b_, loc(), padded, idx_.c(row->threads));
  }

  mlir::Type elementType(int t) {
    return mlir::cast<mlir::RankedTensorType>(values_[t].getType()).getElementType();
  }
  int64_t elementBytes(int t) {
    return std::max<int64_t>(elementType(t).getIntOrFloatBitWidth() / 8, 1);
  }
  /// A tensor whose batch is not its first dimension: its strides hold the batch, so the
  /// kernel addresses it by the flat index it computes from the call's rows.
  bool flatBuffer(int t) {
    return memrefType(t).getRank() != static_cast<int64_t>(kernel_.tensors[t].shape.size());
  }
  /// The buffer's type (bufferShape): a batch as sched::kBatchRows rows.
  mlir::MemRefType memrefType(int t) {
    auto type = mlir::cast<mlir::RankedTensorType>(values_[t].getType());
    return mlir::MemRefType::get(bufferShapeOf(type), type.getElementType());
  }
  /// The index of an element of tensor `t` in its buffer (Input, Output, Scratch).
  llvm::SmallVector<mlir::Value> bufferIndex(int t, llvm::ArrayRef<mlir::Value> index) {
    if (flatBuffer(t))
      return {idx_.flat(index, kernel_.tensors[t].shape)};
    return llvm::SmallVector<mlir::Value>(index.begin(), index.end());
  }

  /// A kernel that takes sizes other than s0 alone says which (kSizesAttr).
  void markSizes(mlir::Operation *func) {
    if (sizes_.empty() || sizes_ == std::vector<int>{0})
      return;
    std::string names;
    for (int symbol : sizes_)
      names += (names.empty() ? "s" : ",s") + std::to_string(symbol);
    func->setAttr(kSizesAttr, b_.getStringAttr(names));
  }

  void emitFunction() {
    if (gpuModule_)
      return emitGpuFunction();
    llvm::SmallVector<mlir::Type> args(sizes_.size(), b_.getIndexType()); // the call's sizes first
    for (int t : kernel_.outputs)
      args.push_back(memrefType(t));
    for (int t : kernel_.inputs)
      args.push_back(memrefType(t));
    b_.setInsertionPoint(op_);
    auto func =
        mlir::func::FuncOp::create(b_, loc(), op_.getSymName(), b_.getFunctionType(args, {}));
    mlir::Block *entry = func.addEntryBlock();
    b_.setInsertionPointToStart(entry);
    size_t arg = 0;
    for (int symbol : sizes_)
      idx_.sizes[symbol] = entry->getArgument(arg++);
    markSizes(func);
    for (int t : kernel_.outputs)
      buffers_[t] = entry->getArgument(arg++);
    for (int t : kernel_.inputs)
      buffers_[t] = entry->getArgument(arg++);
    // Arguments are named by the tensors they hold, for the reader of the IR.
    for (size_t t = 0; t < kernel_.tensors.size(); ++t)
      if (storage_[t].kind == StorageKind::Scratch)
        buffers_[t] = allocateScratch(static_cast<int>(t));
    // The grid: the blocks every statement shares (its S0x loop).
    const sched::Schedule &first = *kernel_.stmts.front().schedule;
    int64_t blocks = 1;
    for (const sched::LoopDescriptor &l : first.loops)
      if (l.type == sched::LoopType::S0x)
        blocks = l.size;
    if (takesRows_) // the launch's grid, in s0
      func->setAttr(kBatchGridAttr, b_.getStringAttr(sched::sizeText(blocks, true)));
    // What a block keeps of a row of s0 (a softmax over a sequence): one heap buffer of the
    // call's row, reused by the blocks of this call (the stack may not hold a long row).
    auto rowOfS0 = [&](size_t t) {
      return storage_[t].kind == StorageKind::Shared &&
             sched::holdsBatch(storage_[t].elementsPerBlock);
    };
    for (size_t t = 0; t < kernel_.tensors.size(); ++t)
      if (rowOfS0(t))
        buffers_[t] = mlir::memref::AllocOp::create(
            b_, loc(), mlir::MemRefType::get({mlir::ShapedType::kDynamic}, elementType(t)),
            mlir::ValueRange{idx_.size(storage_[t].elementsPerBlock)});
    auto grid = mlir::scf::ForallOp::create(
        b_, loc(), llvm::ArrayRef<mlir::OpFoldResult>{b_.getIndexAttr(blocks)}, mlir::ValueRange{},
        b_.getArrayAttr(
            {mlir::gpu::GPUBlockMappingAttr::get(b_.getContext(), mlir::gpu::MappingId::DimX)}));
    b_.setInsertionPointToStart(grid.getBody());
    mlir::Value block = grid.getInductionVar(0);
    for (size_t t = 0; t < kernel_.tensors.size(); ++t)
      if (storage_[t].kind == StorageKind::Shared)
        sharedRowDims_[t] = rows_ ? rowDims(kernel_, *rows_, static_cast<int>(t))
                                  : std::vector<bool>(kernel_.tensors[t].shape.size(), false);
    for (size_t t = 0; t < kernel_.tensors.size(); ++t)
      if (storage_[t].kind == StorageKind::Shared && !rowOfS0(t))
        buffers_[t] = mlir::memref::AllocaOp::create(
            b_, loc(), mlir::MemRefType::get({storage_[t].elementsPerBlock}, elementType(t)));
    for (size_t s = 0; s < kernel_.stmts.size(); ++s)
      emitStatement(s, block, nullptr);
    b_.setInsertionPointAfter(grid);
    for (size_t t = 0; t < kernel_.tensors.size(); ++t)
      if (storage_[t].kind == StorageKind::Scratch || rowOfS0(t))
        mlir::memref::DeallocOp::create(b_, loc(), buffers_[t]);
    mlir::func::ReturnOp::create(b_, loc());
  }

  /// A scratch tensor of the whole kernel (CPU): one heap buffer per call, of the call's size
  /// where a dim holds s0 (its buffer shape's, which the accesses address).
  mlir::Value allocateScratch(int t) {
    mlir::MemRefType type = memrefType(t);
    llvm::SmallVector<int64_t> shape(type.getShape());
    llvm::SmallVector<mlir::Value> sizes;
    for (int64_t &d : shape)
      if (sched::holdsBatch(d)) {
        sizes.push_back(idx_.size(d));
        d = mlir::ShapedType::kDynamic;
      }
    return mlir::memref::AllocOp::create(
        b_, loc(), mlir::MemRefType::get(shape, type.getElementType()), sizes);
  }

  /// GPU: what a block keeps between statements lives in its shared memory (48 KiB
  /// statically), counted in the tensors' own element sizes.
  mlir::LogicalResult placeInSharedMemory() {
    int64_t bytes = 0;
    for (size_t t = 0; t < storage_.size(); ++t)
      if ((storage_[t].kind == StorageKind::Shared || storage_[t].kind == StorageKind::Scratch) &&
          !sched::holdsBatch(storage_[t].elementsPerBlock)) // those are the call's (dynamic)
        bytes += storage_[t].elementsPerBlock * elementBytes(static_cast<int>(t));
    if (bytes > kSharedBytesPerBlock)
      return emitCodedError(op_.getLoc(), DiagCode::KernelUnsupported)
             << "kernel " << op_.getSymName() << " keeps " << bytes
             << " bytes per block between its statements, more than a block's shared memory ("
             << kSharedBytesPerBlock << "): run sotc-mapexpr-spill-rows first";
    for (Storage &st : storage_)
      if (st.kind == StorageKind::Scratch)
        st.kind = StorageKind::Shared;
    return mlir::success();
  }

  /// The GPU kernel: a gpu.func of the kernel's name in the module's gpu.module, taking its
  /// outputs, then its inputs (over a dynamic batch, the call's rows of it first); one block per
  /// S0x index, one thread per S1x index (the block size is known to the function); shared tensors
  /// are workgroup buffers; statements are separated by barriers, since a later one reads what
  /// other threads wrote.
  void emitGpuFunction() {
    mlir::MLIRContext *ctx = b_.getContext();
    llvm::SmallVector<mlir::Type> args(sizes_.size(), b_.getIndexType()); // the call's sizes first
    for (int t : kernel_.outputs)
      args.push_back(memrefType(t));
    for (int t : kernel_.inputs)
      args.push_back(memrefType(t));
    for (size_t t = 0; t < kernel_.tensors.size(); ++t)
      if (storage_[t].kind == StorageKind::Shared)
        sharedRowDims_[t] = rows_ ? rowDims(kernel_, *rows_, static_cast<int>(t))
                                  : std::vector<bool>(kernel_.tensors[t].shape.size(), false);
    llvm::SmallVector<mlir::Type> workgroup;
    std::vector<int> shared, sharedOfS0;
    auto space = mlir::gpu::AddressSpaceAttr::get(ctx, mlir::gpu::AddressSpace::Workgroup);
    for (size_t t = 0; t < kernel_.tensors.size(); ++t)
      if (storage_[t].kind == StorageKind::Shared &&
          sched::holdsBatch(storage_[t].elementsPerBlock))
        sharedOfS0.push_back(static_cast<int>(t));
      else if (storage_[t].kind == StorageKind::Shared) {
        workgroup.push_back(mlir::MemRefType::get({storage_[t].elementsPerBlock},
                                                  elementType(static_cast<int>(t)),
                                                  mlir::MemRefLayoutAttrInterface(), space));
        shared.push_back(static_cast<int>(t));
      }
    int64_t blocks = 1, threads = 1;
    for (const sched::LoopDescriptor &l : kernel_.stmts.front().schedule->loops) {
      if (l.type == sched::LoopType::S0x)
        blocks = l.size;
      if (l.type == sched::LoopType::S1x)
        threads = l.size;
    }
    b_.setInsertionPointToEnd(gpuModule_.getBody());
    auto func = mlir::gpu::GPUFuncOp::create(b_, loc(), op_.getSymName(),
                                             b_.getFunctionType(args, {}), workgroup);
    func->setAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName(), b_.getUnitAttr());
    // The launch contract (the manifest's ABI): buffers are 16-byte aligned and never
    // overlap, so NVPTX may merge a thread's consecutive accesses into 128-bit ones.
    for (unsigned i = sizes_.size(); i < args.size(); ++i) {
      func.setArgAttr(i, "llvm.noalias", b_.getUnitAttr());
      func.setArgAttr(i, "llvm.align", b_.getI64IntegerAttr(16));
    }
    func.setKnownBlockSize(llvm::ArrayRef<int32_t>{static_cast<int32_t>(threads), 1, 1});
    if (takesRows_) // the grid is the call's, in s0
      func->setAttr(kBatchGridAttr, b_.getStringAttr(sched::sizeText(blocks, true)));
    else
      func.setKnownGridSize(llvm::ArrayRef<int32_t>{static_cast<int32_t>(blocks), 1, 1});
    mlir::Block &entry = func.getBody().front();
    b_.setInsertionPointToStart(&entry);
    size_t arg = 0;
    for (int symbol : sizes_)
      idx_.sizes[symbol] = entry.getArgument(arg++);
    markSizes(func);
    for (int t : kernel_.outputs)
      buffers_[t] = entry.getArgument(arg++);
    for (int t : kernel_.inputs)
      buffers_[t] = entry.getArgument(arg++);
    for (size_t i = 0; i < shared.size(); ++i)
      buffers_[shared[i]] = func.getWorkgroupAttributions()[i];
    if (!sharedOfS0.empty())
      placeInDynamicSharedMemory(func, sharedOfS0);
    mlir::Value block = mlir::gpu::BlockIdOp::create(b_, loc(), mlir::gpu::Dimension::x);
    mlir::Value thread = mlir::gpu::ThreadIdOp::create(b_, loc(), mlir::gpu::Dimension::x);
    if (testingBreak_ == "index")
      thread = mlir::arith::AddIOp::create(b_, loc(), thread, idx_.c(1));
    for (size_t s = 0; s < kernel_.stmts.size(); ++s) {
      if (s > 0 && testingBreak_ != "barrier")
        mlir::gpu::BarrierOp::create(b_, loc());
      emitStatement(s, block, thread);
    }
    mlir::gpu::ReturnOp::create(b_, loc());
  }

  /// What a block keeps of rows of dynamic sizes (checkBatch: all of one monomial) is in the
  /// launch's dynamic shared memory, one buffer after the other, wider elements first (each then
  /// starts aligned to its own). The launch's bytes, in the sizes, are the function's attribute.
  void placeInDynamicSharedMemory(mlir::gpu::GPUFuncOp func, std::vector<int> tensors) {
    std::stable_sort(tensors.begin(), tensors.end(),
                     [&](int x, int y) { return elementBytes(x) > elementBytes(y); });
    auto space =
        mlir::gpu::AddressSpaceAttr::get(b_.getContext(), mlir::gpu::AddressSpace::Workgroup);
    mlir::Value base = mlir::gpu::DynamicSharedMemoryOp::create(
        b_, loc(),
        mlir::MemRefType::get({mlir::ShapedType::kDynamic}, b_.getI8Type(),
                              mlir::MemRefLayoutAttrInterface(), space));
    mlir::Value offset = idx_.c(0);
    int64_t bytes = 0; // at the proxy: every buffer holds the same power of s0
    for (int t : tensors) {
      mlir::Value count = idx_.size(storage_[t].elementsPerBlock);
      buffers_[t] = mlir::memref::ViewOp::create(
          b_, loc(),
          mlir::MemRefType::get({mlir::ShapedType::kDynamic}, elementType(t),
                                mlir::MemRefLayoutAttrInterface(), space),
          base, offset, mlir::ValueRange{count});
      offset =
          idx_.add(offset, mlir::arith::MulIOp::create(b_, loc(), count, idx_.c(elementBytes(t))));
      bytes += storage_[t].elementsPerBlock * elementBytes(t);
    }
    func->setAttr(kDynamicSharedAttr, b_.getStringAttr(sched::sizeText(bytes, true)));
  }

  /// The position of element `index` of a shared tensor inside its block's buffer: the flat
  /// index over the tensor dims that do not carry a row coordinate.
  mlir::Value sharedOffset(int t, const std::vector<mlir::Value> &index) {
    const std::vector<int64_t> &shape = kernel_.tensors[t].shape;
    const std::vector<bool> &rowDim = sharedRowDims_.at(t);
    llvm::SmallVector<mlir::Value> coords;
    llvm::SmallVector<int64_t> dims;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!rowDim[d]) {
        coords.push_back(index[d]);
        dims.push_back(shape[d]);
      }
    return idx_.flat(coords, dims);
  }

  mlir::Value load(int t, const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters) {
    std::vector<mlir::Value> index;
    for (const Expr &e : a.index.at(t))
      index.push_back(idx_.expr(e, iters));
    if (storage_[t].kind == StorageKind::Shared)
      return mlir::memref::LoadOp::create(b_, loc(), buffers_[t],
                                          mlir::ValueRange{sharedOffset(t, index)});
    return mlir::memref::LoadOp::create(b_, loc(), buffers_[t], bufferIndex(t, index));
  }

  void store(int t, const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters, mlir::Value v) {
    if (storage_[t].kind == StorageKind::Register)
      return;
    std::vector<mlir::Value> index;
    for (const Expr &e : a.index.at(t))
      index.push_back(idx_.expr(e, iters));
    if (storage_[t].kind == StorageKind::Shared)
      mlir::memref::StoreOp::create(b_, loc(), v, buffers_[t],
                                    mlir::ValueRange{sharedOffset(t, index)});
    else
      mlir::memref::StoreOp::create(b_, loc(), v, buffers_[t], bufferIndex(t, index));
  }

  /// Loop coordinates of statement `a` in mesh output order: the block for its S0x dim, the
  /// thread for S1x (GPU), the given inner value for the sequential one.
  std::vector<mlir::Value> loopCoords(const AnchoredMapStmt &a, mlir::Value block,
                                      mlir::Value thread, mlir::Value inner) {
    std::vector<mlir::Value> coords;
    for (const sched::LoopDescriptor &l : a.schedule->loops)
      coords.push_back(l.type == sched::LoopType::S0x   ? block
                       : l.type == sched::LoopType::S1x ? thread
                                                        : inner);
    return coords;
  }

  /// Whether statement `a`'s threads split its reduced dims, so that a reduction combines
  /// the threads' partial results.
  bool reducesAcrossThreads(const AnchoredMapStmt &a) {
    for (size_t i = 0; i < a.schedule->loops.size(); ++i)
      if (a.schedule->loops[i].type == sched::LoopType::S1x && a.schedule->mesh.outputReduced(i))
        return true;
    return false;
  }

  /// Statement `s` at `block` (and `thread` on the GPU): its sequential loop, then, for a
  /// reduction, the combination of the threads' partial results and the stores of the row's
  /// results.
  void emitStatement(size_t s, mlir::Value block, mlir::Value thread) {
    const AnchoredMapStmt &a = kernel_.stmts[s];
    if (laneReduction(a))
      return emitLaneReduction(a, block);
    if (injectiveLanes(a))
      return emitInjectiveLanes(a, block);
    int64_t inner = 1;
    for (const sched::LoopDescriptor &l : a.schedule->loops)
      if (l.type == sched::LoopType::Temporal || l.type == sched::LoopType::Vectorize)
        inner = l.size;
    // Reductions: one loop-carried accumulator per reduced tensor.
    std::vector<int> reduced;
    llvm::SmallVector<mlir::Value> inits;
    Scalars scalars(b_, loc());
    for (const OpStmt &op : a.stmts)
      if (llvm::StringRef(op.op).ends_with("_init")) {
        reduced.push_back(op.outs[0]);
        inits.push_back(scalars.identity(reductionOf(op.op), elementType(op.outs[0])));
      }
    auto loop =
        mlir::scf::ForOp::create(b_, loc(), idx_.c(0), tripCount(a, inner), idx_.c(1), inits);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(loop.getBody());
    llvm::SmallVector<mlir::Value> accs(loop.getRegionIterArgs().begin(),
                                        loop.getRegionIterArgs().end());
    mlir::Value inBounds;
    std::vector<mlir::Value> iters = idx_.anchor(
        a.schedule->mesh, loopCoords(a, block, thread, loop.getInductionVar()), inBounds);
    // Padding points do nothing: they read nothing and leave the accumulators as they are.
    mlir::scf::IfOp padding;
    if (inBounds) {
      padding = mlir::scf::IfOp::create(b_, loc(), mlir::ValueRange(accs).getTypes(), inBounds,
                                        /*withElseRegion=*/!accs.empty());
      if (!accs.empty()) {
        b_.setInsertionPointToStart(padding.elseBlock());
        mlir::scf::YieldOp::create(b_, loc(), accs);
      }
      b_.setInsertionPointToStart(padding.thenBlock());
    }
    emitPoint(a, iters, [&](int t) -> mlir::Value & {
      return accs[std::find(reduced.begin(), reduced.end(), t) - reduced.begin()];
    });
    if (failed_ || reduced.empty())
      return;
    if (padding) {
      mlir::scf::YieldOp::create(b_, loc(), accs);
      b_.setInsertionPointAfter(padding);
      accs.assign(padding.getResults().begin(), padding.getResults().end());
    }
    mlir::scf::YieldOp::create(b_, loc(), accs);
    // After the reduced loop: each row's results, stored where their readers find them.
    b_.setInsertionPointAfter(loop);
    llvm::SmallVector<mlir::Value> results(loop.getResults().begin(), loop.getResults().end());
    if (thread && reducesAcrossThreads(a)) {
      // Every thread of the block takes part (uniform), and every one gets the row's result.
      for (size_t r = 0; r < reduced.size() && testingBreak_ != "reduction"; ++r) {
        // Warp shuffles move 32-bit words: narrower values (any()'s bools) widen for it.
        mlir::Type t = results[r].getType();
        mlir::Value v = results[r];
        bool narrowInt = t.isInteger() && t.getIntOrFloatBitWidth() < 32;
        bool narrowFloat = mlir::isa<mlir::FloatType>(t) && t.getIntOrFloatBitWidth() < 32;
        if (narrowInt)
          v = t.isInteger(1) ? mlir::arith::ExtUIOp::create(b_, loc(), b_.getI32Type(), v).getResult()
                             : mlir::arith::ExtSIOp::create(b_, loc(), b_.getI32Type(), v).getResult();
        else if (narrowFloat)
          v = mlir::arith::ExtFOp::create(b_, loc(), b_.getF32Type(), v);
        v = mlir::gpu::AllReduceOp::create(
            b_, loc(), v,
            mlir::gpu::AllReduceOperationAttr::get(
                b_.getContext(), allReduceKind(reductionOf(reductionStatement(a, reduced[r])), t)),
            /*uniform=*/true);
        if (narrowInt)
          v = mlir::arith::TruncIOp::create(b_, loc(), t, v);
        else if (narrowFloat)
          v = mlir::arith::TruncFOp::create(b_, loc(), t, v);
        results[r] = v;
      }
      // One thread stores what all of them hold.
      mlir::Value first =
          mlir::arith::CmpIOp::create(b_, loc(), mlir::arith::CmpIPredicate::eq, thread, idx_.c(0));
      auto only = mlir::scf::IfOp::create(b_, loc(), first, /*withElseRegion=*/false);
      b_.setInsertionPointToStart(only.thenBlock());
    }
    mlir::Value unused;
    std::vector<mlir::Value> rowIters = idx_.anchor(
        a.schedule->mesh, loopCoords(a, block, thread ? idx_.c(0) : nullptr, idx_.c(0)), unused);
    for (size_t r = 0; r < reduced.size(); ++r)
      store(reduced[r], a, rowIters, results[r]);
  }

  /// The value of the point `iters` of `op` (not a reduction's), of its output's element
  /// type; `args`: what it reads, for the ops that do not read where and as they say. Null
  /// (and the kernel failed) for an op on a type the lowering does not take.
  mlir::Value compute(const OpStmt &op, const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters,
                      llvm::ArrayRef<mlir::Value> args) {
    Scalars scalars(b_, loc());
    int out = op.outs[0];
    mlir::Value v;
    if (op.op == "fill_constant")
      v = scalars.constant(elementType(out), *op.value);
    else if (op.op == "iota") // its value is its position
      v = mlir::arith::IndexCastOp::create(b_, loc(), b_.getI64Type(),
                                           idx_.expr(a.index.at(out)[0], iters));
    else if (op.op == "concat")
      v = concat(op, a, iters);
    else if (op.op == "window")
      v = window(op, a, iters);
    else if (op.op == "gather")
      v = gather(op, a, iters);
    else
      v = scalars.apply(op.op, args, elementType(out));
    if (!v) {
      failed_ = true;
      emitCodedError(op_.getLoc(), DiagCode::KernelUnsupported)
          << "kernel " << op_.getSymName() << ": " << op.op << " on "
          << (args.empty() ? elementType(out) : args[0].getType()) << " is not lowered yet";
      return nullptr;
    }
    return scalars.cast(v, elementType(out));
  }

  /// Whether statement `a` is a lane reduction (sched::cpuLaneReductionSchedule): a CPU row
  /// whose serial loop runs over the reduced dims (a static count) and whose vector loop
  /// inside it over the anchor's last dim, each lane a result of its own.
  bool laneReduction(const AnchoredMapStmt &a) const {
    const std::vector<sched::LoopDescriptor> &loops = a.schedule->loops;
    return !gpuModule_ && loops.size() == 3 && loops[0].type == sched::LoopType::S0x &&
           loops[1].type == sched::LoopType::Temporal &&
           loops[2].type == sched::LoopType::Vectorize && a.schedule->mesh.outputReduced(1) &&
           !a.schedule->mesh.outputReduced(2) && !sched::holdsBatch(loops[1].size) &&
           a.schedule->mesh.keepsLastDim();
  }

  /// Whether statement `a` is CPU elementwise work that reads windows with its vector loop
  /// over the anchor's last dim, unpadded: its lanes are peeled (lanesPeeled).
  bool injectiveLanes(const AnchoredMapStmt &a) const {
    const std::vector<sched::LoopDescriptor> &loops = a.schedule->loops;
    const auto &steps = a.schedule->mesh.steps();
    return !gpuModule_ && readsWindows(a) && loops.size() == 2 &&
           loops[0].type == sched::LoopType::S0x && loops[1].type == sched::LoopType::Vectorize &&
           !a.schedule->mesh.outputReduced(1) && a.schedule->mesh.keepsLastDim() &&
           std::none_of(steps.begin(), steps.end(), [](const sched::ScheduleMesh::Step &step) {
             return step.kind == sched::ScheduleMesh::Step::Kind::Padding;
           });
  }

  /// Statement `a` at one point `iters`: its ops in order, each value stored where its tensor
  /// lives; an `_acc` op combines into `acc(tensor)`, the accumulator its caller keeps (`fuse`:
  /// sums of products as fused multiply-adds, Scalars::accumulate).
  void emitPoint(const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters,
                 const std::function<mlir::Value &(int)> &acc, bool fuse = false) {
    Scalars scalars(b_, loc());
    std::map<int, mlir::Value> values;
    auto read = [&](int t) {
      auto it = values.find(t);
      return it != values.end() ? it->second : load(t, a, iters);
    };
    for (const OpStmt &op : a.stmts) {
      if (llvm::StringRef(op.op).ends_with("_init"))
        continue;
      llvm::SmallVector<mlir::Value> args;
      if (op.op != "window" && op.op != "gather") // read where and as the op says
        for (int t : op.ins)
          args.push_back(read(t));
      int out = op.outs[0];
      if (llvm::StringRef(op.op).ends_with("_acc")) {
        acc(out) = scalars.accumulate(reductionOf(op.op), acc(out), args, fuse);
        continue;
      }
      mlir::Value v = compute(op, a, iters, args);
      if (!v)
        return;
      values[out] = v;
      store(out, a, iters, v);
    }
  }

  /// A loop over lanes [begin, end), running `body` on each lane's index.
  void forLanes(mlir::Value begin, mlir::Value end, const std::function<void(mlir::Value)> &body) {
    auto loop = mlir::scf::ForOp::create(b_, loc(), begin, end, idx_.c(1));
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  }

  /// The `lanes` lanes of statement `a` (its anchor's last dim), peeled: the lanes whose
  /// windows stay inside their inputs at every point of `atZero` (lane-0 anchor coordinates)
  /// read them unchecked, contiguous vector loads; only those at the borders check, where a
  /// clamped index would make every load a gather.
  void lanesPeeled(const AnchoredMapStmt &a, llvm::ArrayRef<std::vector<mlir::Value>> atZero,
                   mlir::Value lanes, const std::function<void(mlir::Value)> &body) {
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

  /// Elementwise statement `a` at `block` (injectiveLanes): its lanes, peeled.
  void emitInjectiveLanes(const AnchoredMapStmt &a, mlir::Value block) {
    mlir::Value unused; // the mesh pads nothing
    auto at = [&](mlir::Value v) { return idx_.anchor(a.schedule->mesh, {block, v}, unused); };
    lanesPeeled(a, {at(idx_.c(0))}, idx_.size(a.schedule->loops[1].size), [&](mlir::Value v) {
      emitPoint(a, at(v), [&](int) -> mlir::Value & {
        llvm_unreachable("an elementwise statement accumulates nothing");
      });
    });
  }

  /// A lane reduction at `block`, each lane's results accumulated over the reduced points
  /// and stored once. A short reduction (a convolution's or a pooling's taps, up to
  /// kUnrolledReduction points) runs inside the lane loop, unrolled, its accumulators in
  /// registers: every tap's loads are contiguous in the lanes, which LLVM vectorizes. A long
  /// one runs around the lane loop, the results accumulated in the output buffers in place
  /// (scheduleKernel picks the schedule only where they are outputs).
  void emitLaneReduction(const AnchoredMapStmt &a, mlir::Value block) {
    constexpr int64_t kUnrolledReduction = 64;
    Scalars scalars(b_, loc());
    int64_t reduce = a.schedule->loops[1].size;
    mlir::Value lanes = idx_.size(a.schedule->loops[2].size), unused; // the mesh pads nothing
    auto at = [&](mlir::Value reduced, mlir::Value v) {
      return idx_.anchor(a.schedule->mesh, {block, reduced, v}, unused);
    };
    auto identity = [&](int t) {
      return scalars.identity(reductionOf(reductionStatement(a, t)), elementType(t));
    };
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
          std::string reduction = reductionOf(reductionStatement(a, t));
          if (reduction == "matmul") // its partial results add up
            reduction = "reduce_sum";
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
        if (llvm::StringRef(op.op).ends_with("_init"))
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

  /// Whether dim `d` of a window's input may be read outside it (its index expression `e`
  /// ranges beyond the dim over statement `a`'s space): such a read checks, the padding value
  /// outside. The batch and channels never leave.
  bool windowMayLeave(const AnchoredMapStmt &a, int x, size_t d, const Expr &e) {
    auto [lo, hi] = valueRange(e, a.space);
    return d >= 2 && (lo < 0 || hi >= kernel_.tensors[x].shape[d]);
  }

  /// The lanes [begin, end) of statement `a` (its anchor iterator `lane`, `lanes` of them)
  /// where no window of it reads outside its input at any of the points whose lane-0 anchor
  /// coordinates are `atZero`; nullopt when its windows do not move with the lane, or not
  /// linearly.
  std::optional<std::pair<mlir::Value, mlir::Value>>
  interiorLanes(const AnchoredMapStmt &a, int lane, llvm::ArrayRef<std::vector<mlir::Value>> atZero,
                mlir::Value lanes) {
    mlir::Value begin = idx_.c(0), end = lanes;
    bool moves = false;
    for (const std::vector<mlir::Value> &point : atZero)
      for (const OpStmt &op : a.stmts) {
        if (op.op != "window")
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

  /// The `_acc` statement of `a` that accumulates into tensor `t`.
  std::string reductionStatement(const AnchoredMapStmt &a, int t) {
    for (const OpStmt &op : a.stmts)
      if (llvm::StringRef(op.op).ends_with("_acc") && op.outs[0] == t)
        return op.op;
    return "reduce_sum_acc";
  }

  /// The block-wide combination of partial results of `reduction`.
  static mlir::gpu::AllReduceOperation allReduceKind(const std::string &reduction, mlir::Type t) {
    using K = mlir::gpu::AllReduceOperation;
    bool f = mlir::isa<mlir::FloatType>(t), bit = t.isInteger(1);
    if (reduction == "reduce_max")
      return f ? K::MAXIMUMF : bit ? K::OR : K::MAXSI;
    if (reduction == "reduce_min")
      return f ? K::MINIMUMF : bit ? K::AND : K::MINSI;
    if (reduction == "reduce_prod")
      return K::MUL;
    return K::ADD; // reduce_sum, matmul
  }

  /// concat: input k holds the elements whose index along the axis falls in its range; its
  /// index expression is already shifted by the offset, so the axis is the dimension where
  /// an input's index differs from the output's.
  mlir::Value concat(const OpStmt &op, const AnchoredMapStmt &a,
                     llvm::ArrayRef<mlir::Value> iters) {
    const std::vector<Expr> &out = a.index.at(op.outs[0]);
    size_t axis = 0;
    for (int in : op.ins)
      for (size_t d = 0; d < out.size(); ++d)
        if (a.index.at(in)[d]->str() != out[d]->str())
          axis = d;
    mlir::Value along = idx_.expr(a.index.at(op.outs[0])[axis], iters);
    mlir::Type t = elementType(op.outs[0]);
    // Nested ifs from the last input back: if along < end_k then input k else the rest.
    std::function<mlir::Value(size_t, int64_t)> pick = [&](size_t k, int64_t offset) {
      int t_in = op.ins[k];
      if (k + 1 == op.ins.size())
        return load(t_in, a, iters);
      int64_t end = offset + kernel_.tensors[t_in].shape[axis]; // static, or a product of sizes
      mlir::Value inside = mlir::arith::CmpIOp::create(b_, loc(), mlir::arith::CmpIPredicate::ult,
                                                       along, idx_.size(end));
      auto ifOp = mlir::scf::IfOp::create(b_, loc(), mlir::TypeRange{t}, inside,
                                          /*withElseRegion=*/true);
      mlir::OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(ifOp.thenBlock());
      mlir::scf::YieldOp::create(b_, loc(), load(t_in, a, iters));
      b_.setInsertionPointToStart(ifOp.elseBlock());
      mlir::scf::YieldOp::create(b_, loc(), pick(k + 1, end));
      return ifOp.getResult(0);
    };
    return pick(0, 0);
  }

  /// window: the input at the window's position plus its tap, or the pad value where that
  /// falls outside the input (the index expressions of the spatial dims leave it there).
  /// Branch-free, so that the loop vectorizes: the load reads at the index clamped into the
  /// input, and a select keeps it where the index was inside.
  mlir::Value window(const OpStmt &op, const AnchoredMapStmt &a,
                     llvm::ArrayRef<mlir::Value> iters) {
    int x = op.ins[0];
    const std::vector<Expr> &exprs = a.index.at(x);
    std::vector<mlir::Value> index;
    mlir::Value inside;
    for (size_t d = 0; d < exprs.size(); ++d) {
      mlir::Value i = idx_.expr(exprs[d], iters);
      // A spatial index that cannot leave the input (no padding on that side, or a lane of
      // the interior: interiorLanes) is read directly: contiguous taps stay vector loads.
      if (windowMayLeave(a, x, d, exprs[d]) &&
          !(uncheckedLane_ >= 0 && linearCoefficient(exprs[d], uncheckedLane_).value_or(0) > 0)) {
        mlir::Value size = idx_.c(kernel_.tensors[x].shape[d]);
        // A negative index is a huge unsigned one: one unsigned compare checks both ends.
        mlir::Value ok =
            mlir::arith::CmpIOp::create(b_, loc(), mlir::arith::CmpIPredicate::ult, i, size);
        inside = inside ? mlir::arith::AndIOp::create(b_, loc(), inside, ok).getResult() : ok;
        i = mlir::arith::MinSIOp::create(
            b_, loc(), mlir::arith::MaxSIOp::create(b_, loc(), i, idx_.c(0)),
            idx_.c(kernel_.tensors[x].shape[d] - 1));
      }
      index.push_back(i);
    }
    mlir::Value loaded = mlir::memref::LoadOp::create(b_, loc(), buffers_[x], index);
    if (!inside)
      return loaded;
    return mlir::arith::SelectOp::create(
        b_, loc(), inside, loaded, Scalars(b_, loc()).constant(elementType(op.outs[0]), *op.value));
  }

  /// gather: the table's row that the index tensor names (clamped into the table), at the
  /// index expressions of the other dims.
  mlir::Value gather(const OpStmt &op, const AnchoredMapStmt &a,
                     llvm::ArrayRef<mlir::Value> iters) {
    int table = op.ins[0];
    mlir::Value row = mlir::arith::IndexCastOp::create(b_, loc(), b_.getIndexType(),
                                                       load(op.ins[1], a, iters));
    row = mlir::arith::MinSIOp::create(b_, loc(),
                                       mlir::arith::MaxSIOp::create(b_, loc(), row, idx_.c(0)),
                                       idx_.c(kernel_.tensors[table].shape[0] - 1));
    std::vector<mlir::Value> index = {row};
    const std::vector<Expr> &exprs = a.index.at(table);
    for (size_t d = 1; d < exprs.size(); ++d)
      index.push_back(idx_.expr(exprs[d], iters));
    return mlir::memref::LoadOp::create(b_, loc(), buffers_[table], bufferIndex(table, index));
  }

  KernelOp op_;
  mlir::gpu::GPUModuleOp gpuModule_;
  mlir::OpBuilder b_;
  Indices idx_;
  Kernel kernel_;
  std::vector<mlir::Value> values_;
  std::vector<Storage> storage_;
  std::optional<KernelRows> rows_;
  bool takesRows_ = false; // a kernel over dynamic sizes
  std::vector<int> sizes_; // the symbols of those sizes, which it takes in this order
  std::map<int, mlir::Value> buffers_;
  std::map<int, std::vector<bool>> sharedRowDims_; // shared tensors: which dims are the row
  llvm::StringRef testingBreak_;
  bool failed_ = false;
  /// The anchor iterator of the lanes being emitted whose windows stay inside their inputs
  /// (interiorLanes), -1 outside such a loop.
  int uncheckedLane_ = -1;
};

struct ConvertMapExprToLoopsPass : impl::ConvertMapExprToLoopsBase<ConvertMapExprToLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    mlir::FailureOr<sched::Target> compiledFor = sched::passTarget(module, target, getArgument());
    if (mlir::failed(compiledFor))
      return signalPassFailure();
    if (!testingBreak.empty() && testingBreak != "barrier" && testingBreak != "index" &&
        testingBreak != "reduction") {
      module.emitError("sotc-convert-mapexpr-to-loops: testing-break is barrier, index or "
                       "reduction, not '")
          << testingBreak << "'";
      return signalPassFailure();
    }
    llvm::SmallVector<KernelOp> kernels;
    module.walk([&](KernelOp k) { kernels.push_back(k); });
    // GPU kernels go into one gpu.module, which becomes the fatbin (an empty one when every
    // step is a library call).
    mlir::gpu::GPUModuleOp gpuModule;
    if (*compiledFor == sched::Target::Cuda) {
      mlir::OpBuilder b = mlir::OpBuilder::atBlockEnd(module.getBody());
      gpuModule = mlir::gpu::GPUModuleOp::create(b, module.getLoc(), kGpuModuleName);
      module->setAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
    }
    for (KernelOp k : kernels) {
      if (mlir::failed(KernelLowering(k, gpuModule, testingBreak).run()))
        return signalPassFailure();
      k.erase();
    }
  }
};

} // namespace
} // namespace sotc
