//===- ProducedSizes.cpp - Calls whose result has as many rows as a kernel counts ----------===//
//
// nonzero, argwhere, masked_select, x[mask] and where(cond) return one row per nonzero of
// their input, torchvision's nms one per box it keeps: a size known only once a kernel has
// counted them. The segment ends there (a size end): it computes the result at its bound
// (every element selected; the rows past the count are zeros, or -1) and the count, which the
// runtime reads back and binds as a new size s_k; the next segment goes on with the result's
// first s_k rows (docs/dynamic-shapes.md#sizes-a-kernel-counts).
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"
#include "compiler/ops/Inference.h"

#include <algorithm>

namespace sotc::frontend {
namespace {
using K = Variable::Kind;

/// The value of keyword `name` (or positional `position`), or null.
VarPtr argument(const std::vector<VarPtr> &args, const Kwargs &kwargs, size_t position,
                const std::string &name) {
  for (const auto &[k, v] : kwargs)
    if (k == name)
      return v;
  return position < args.size() ? args[position] : nullptr;
}
} // namespace

void Executor::produceSize(Frame &f, const std::string &what, const VarPtr &count,
                           const std::vector<VarPtr> &bounded,
                           const std::function<VarPtr(const std::vector<VarPtr> &)> &result,
                           const Variable *mask) {
  // A mask selects as many rows each time: boxes[keep] and scores[keep] are rows of one size
  // (its second count binds it again, to the same value).
  auto known = mask ? maskSizes_.find(mask) : maskSizes_.end();
  int k = known != maskSizes_.end() ? known->second : [&] {
    try {
      return derivedSizes_.produce();
    } catch (const CodedError &e) {
      fail(e.code(), e.what(), f);
    }
  }();
  if (mask)
    maskSizes_[mask] = k;
  if (int64_t bound = bounded.front()->meta.shape[0]; bound >= 0) // static: decisions it settles
    producedBounds_[k] = std::min(bound, producedBounds_.count(k) ? producedBounds_[k] : bound);
  // Numbered after every size so far, which symbols_ names in order.
  while (symbols_.size() < static_cast<size_t>(k))
    symbols_.push_back({"s" + std::to_string(symbols_.size()), 0});
  if (symbols_.size() == static_cast<size_t>(k))
    symbols_.push_back({what + " (" + locOf(f).str() + ")", 0});
  std::vector<VarPtr> produced;
  for (const VarPtr &b : bounded) {
    ops::TensorMeta meta = b->meta;
    meta.shape[0] = ops::dynamicDim(k);
    produced.push_back(newTensor(meta, computedFrom({b, count})));
  }
  Break br;
  br.kind = Break::Kind::Size;
  br.symbol = k;
  br.count = count;
  br.bounded = bounded;
  br.produced = produced;
  br.result = result(produced);
  br.reason = "the rows of " + what + " (size s" + std::to_string(k) + ")";
  br.loc = locOf(f);
  pendingBreak_ = br;
}

namespace {
/// t's element count as nonzero_static's size: a number, or the dynamic size it is
/// (ops::sizeOfDim: a count of rows another segment counted, or of a batch).
VarPtr elementsOf(const VarPtr &t) {
  int64_t n = t->meta.numElements();
  return intConst(
      n != ops::kDynamic ? n : ops::sizeOfDim(ops::productDim(ops::productOf(t->meta.shape))));
}

/// What every data-dependent call computes first: x's nonzeros' coordinates at their bound
/// (x's element count; zeros past the count) and how many there are.
struct Nonzeros {
  VarPtr positions; // int64 [n, rank]
  VarPtr count;     // int64 0-d
};
} // namespace

VarPtr Executor::apiCall(Frame &f, StatementIR &sir, const std::string &callee,
                         std::vector<VarPtr> args, Kwargs kwargs) {
  return tensorCall(f, sir, "api", callee, callee, std::move(args), std::move(kwargs));
}

Executor::SelectedRows Executor::selectRows(Frame &f, StatementIR &sir, const VarPtr &mask,
                                            const VarPtr &rows) {
  VarPtr positions = apiCall(f, sir, "torch.nonzero_static", {mask},
                             {{"size", elementsOf(mask)}, {"fill_value", intConst(0)}});
  VarPtr index = apiCall(f, sir, "torch.reshape", {positions, intList({-1})});
  return {apiCall(f, sir, "torch.index_select", {rows, intConst(0), index}),
          apiCall(f, sir, "torch.count_nonzero", {mask})};
}

bool Executor::producedSizeCall(Frame &f, StatementIR &sir, const std::string &name, VarPtr self,
                                std::vector<VarPtr> args, const Kwargs &kwargs) {
  bool torch = framework_ == "torch";
  std::string op = name;
  // torch.Tensor.nonzero(x), paddle's Tensor.nonzero(x): the method, unbound.
  for (const char *unbound : {"torch.Tensor.", "Tensor.", "paddle.Tensor."})
    if (!self && op.rfind(unbound, 0) == 0)
      op = op.substr(std::string(unbound).size());
  if (self || op.find('.') == std::string::npos) { // a method: the function, the tensor first
    op = (torch ? "torch." : "paddle.") + op;
    if (self)
      args.insert(args.begin(), self);
  }
  bool oneArgWhere = (op == "torch.where" || op == "paddle.where") &&
                     ((args.size() == 1 && kwargs.empty()) ||
                      (args.empty() && kwargs.size() == 1 && kwargs[0].first == "condition"));
  static const std::set<std::string> kOps = {"torch.nonzero",        "torch.argwhere",
                                             "torch.masked_select",  "paddle.nonzero",
                                             "paddle.masked_select", "torch.ops.torchvision.nms"};
  if (!kOps.count(op) && !oneArgWhere)
    return false;
  auto call = [&](const std::string &callee, std::vector<VarPtr> callArgs, Kwargs callKwargs = {}) {
    return apiCall(f, sir, callee, std::move(callArgs), std::move(callKwargs));
  };
  std::string what = op.substr(op.rfind('.') + 1) + "()";
  if (op == "torch.ops.torchvision.nms") { // the kept boxes' indices, then -1: those >= 0 count
    VarPtr keep = call(op, args, kwargs);
    VarPtr count = call("torch.count_nonzero", {call("torch.ge", {keep, intConst(0)})});
    produceSize(f, what, count, {keep}, [](const std::vector<VarPtr> &p) { return p[0]; });
    return true;
  }
  VarPtr x = argument(args, kwargs, 0, oneArgWhere ? "condition" : torch ? "input" : "x");
  if (!x || !x->isTensor())
    return false;
  auto nonzeros = [&](const VarPtr &t) {
    return Nonzeros{
        call("torch.nonzero_static", {t}, {{"size", elementsOf(t)}, {"fill_value", intConst(0)}}),
        call("torch.count_nonzero", {t})};
  };
  if (op == "torch.masked_select" || op == "paddle.masked_select") {
    VarPtr mask = argument(args, kwargs, 1, "mask");
    if (!mask || !mask->isTensor() || mask->meta.dtype != ops::DType::Bool)
      fail(DiagCode::FrontendPythonError, "TypeError: " + op + "() takes a bool mask", f);
    // Both broadcast to one shape (torch does; paddle's are one shape already), then flat.
    VarPtr shape = intList(ops::broadcastShapes(op, x->meta.shape, mask->meta.shape));
    auto flat = [&](const VarPtr &t) {
      return call("torch.reshape", {call("torch.broadcast_to", {t, shape}), intList({-1})});
    };
    SelectedRows selected = selectRows(f, sir, flat(mask), flat(x));
    produceSize(
        f, what, selected.count, {selected.rows}, [](const std::vector<VarPtr> &p) { return p[0]; },
        mask->meta.shape == x->meta.shape ? mask.get() : nullptr);
    return true;
  }
  VarPtr asTuple = oneArgWhere
                       ? makeConst(PyConst::ofBool(true), {})
                       : argument(torch ? std::vector<VarPtr>{} : args, kwargs, 1, "as_tuple");
  bool tuple = asTuple && truthy(f, asTuple);
  if (tuple && x->meta.rank() == 0) // one tensor of positions, as of a 1-d tensor of one
    x = call("torch.reshape", {x, intList({1})});
  int64_t rank = x->meta.rank();
  Nonzeros nz = nonzeros(x);
  if (!tuple) {
    produceSize(f, what, nz.count, {nz.positions},
                [](const std::vector<VarPtr> &p) { return p[0]; });
    return true;
  }
  // One tensor of coordinates [k] per dimension (in both frameworks).
  std::vector<VarPtr> columns;
  for (int64_t d = 0; d < rank; ++d)
    columns.push_back(call("torch.select", {nz.positions, intConst(1), intConst(d)}));
  produceSize(f, what, nz.count, columns,
              [](const std::vector<VarPtr> &p) { return makeSequence(K::Tuple, p, {}); });
  return true;
}

bool Executor::selectByMask(Frame &f, StatementIR &sir, const VarPtr &x, const VarPtr &key) {
  if (!x->isTensor() || !key->isTensor() || key->meta.dtype != ops::DType::Bool)
    return false;
  const std::vector<int64_t> &shape = x->meta.shape, &masked = key->meta.shape;
  if (masked.empty() || masked.size() > shape.size() ||
      !std::equal(masked.begin(), masked.end(), shape.begin()))
    fail(DiagCode::FrontendPythonError,
         "IndexError: the mask " + key->tensorName +
             " does not have the shape of the indexed tensor's leading dimensions",
         f);
  std::vector<int64_t> rows = {-1};
  rows.insert(rows.end(), shape.begin() + static_cast<long>(masked.size()), shape.end());
  SelectedRows selected = selectRows(f, sir, apiCall(f, sir, "torch.reshape", {key, intList({-1})}),
                                     apiCall(f, sir, "torch.reshape", {x, intList(rows)}));
  produceSize(
      f, "x[mask]", selected.count, {selected.rows},
      [](const std::vector<VarPtr> &p) { return p[0]; }, key.get());
  return true;
}

} // namespace sotc::frontend
