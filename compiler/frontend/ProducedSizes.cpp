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

/// torch.<dtype> as a `dtype=` argument.
VarPtr torchDType(ops::DType dtype) {
  VarPtr v = Variable::make(K::External, constTracker());
  v->name = std::string("torch.") + ops::dtypeName(dtype);
  return v;
}

/// The size end of rows a mask selected.
Executor::SizeEnd selectedBy(const Variable *mask) {
  Executor::SizeEnd end;
  if (mask)
    end.key = mask;
  return end;
}

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
                           const std::function<VarPtr(const std::vector<VarPtr> &, int)> &result,
                           const SizeEnd &end) {
  // A mask selects as many rows each time: boxes[keep] and scores[keep] are rows of one size
  // (its second count binds it again, to the same value).
  auto known = end.key ? countedSizes_.find(*end.key) : countedSizes_.end();
  int k = end.symbol >= 0                ? end.symbol
          : known != countedSizes_.end() ? known->second
                                         : [&] {
                                             try {
                                               return derivedSizes_.produce();
                                             } catch (const CodedError &e) {
                                               if (int dead = deadCountedSize(bounded); dead >= 0)
                                                 return dead;
                                               fail(e.code(), e.what(), f);
                                             }
                                           }();
  if (end.symbol < 0 && known == countedSizes_.end()) { // what an earlier count of s_k settled
    producedBounds_.erase(k);
    for (auto it = countedSizes_.begin(); it != countedSizes_.end();)
      it = it->second == k ? countedSizes_.erase(it) : std::next(it);
    if (static_cast<size_t>(k) < symbols_.size())
      symbols_[k].name = what + " (" + locOf(f).str() + ")";
  }
  if (end.key)
    countedSizes_[*end.key] = k;
  int64_t bound = end.bound ? *end.bound : bounded.front()->meta.shape[0];
  if (bound >= 0) // static: decisions it settles
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
  br.bound = bound;
  br.bounded = bounded;
  br.produced = produced;
  br.result = result(produced, k);
  br.reason = "the rows of " + what + " (size s" + std::to_string(k) + ")";
  br.loc = locOf(f);
  pendingBreak_ = br;
}

int Executor::deadCountedSize(const std::vector<VarPtr> &bounded) const {
  // The sizes the program can still read: of every tensor and size it holds (and of those
  // this end passes on), and the bases they derive from.
  std::set<int> live;
  std::set<const Variable *> seen;
  auto note = [&](int64_t dim) {
    for (int k : ops::dynamicSizes({dim})) {
      live.insert(k);
      live.insert(derivedSizes_.of(k).base);
    }
  };
  std::function<void(const VarPtr &)> visit = [&](const VarPtr &v) {
    if (!v || !seen.insert(v.get()).second)
      return;
    if (v->isTensor())
      for (int64_t d : v->meta.shape)
        note(d);
    if (isDynamicSize(v))
      note(v->sizeDim);
    forEachChild(*v, [&](const VarPtr &c) { visit(c); });
  };
  if (running_)
    walkState(*running_, visit);
  for (const VarPtr &b : bounded)
    visit(b);
  for (int k : derivedSizes_.producedSizes())
    if (!live.count(k))
      return k;
  return -1;
}

std::optional<int64_t> Executor::boundOf(int64_t size) const {
  if (!ops::isDynamicDim(size))
    return size;
  ops::SizeProduct p = ops::productOf(size);
  int64_t g = p.factor;
  p.factor = 1;
  int64_t d = ops::productDim(p);
  auto b = ops::isSymbolDim(d) ? producedBounds_.find(ops::symbolOf(d)) : producedBounds_.end();
  return b == producedBounds_.end() ? std::nullopt : std::optional<int64_t>(g * b->second);
}

bool Executor::isCountedSize(const VarPtr &v) const {
  if (!isDynamicSize(v))
    return false;
  std::vector<int> sizes = ops::dynamicSizes({v->sizeDim});
  return std::any_of(sizes.begin(), sizes.end(), [&](int k) { return derivedSizes_.produced(k); });
}

bool Executor::countedExtreme(Frame &f, StatementIR &sir, const std::string &builtin,
                              const std::vector<VarPtr> &items) {
  if (std::none_of(items.begin(), items.end(), [&](const VarPtr &v) { return isCountedSize(v); }))
    return false;
  bool least = builtin == "min";
  // The items that can be the result: a number no size's bound passes for min (a size's
  // bound no number reaches for max) is never picked.
  std::vector<VarPtr> sizes;
  std::optional<int64_t> number; // the least (greatest) of the numbers
  for (const VarPtr &v : items) {
    consume(v, locOf(f));
    if (isDynamicSize(v))
      sizes.push_back(v);
    else if (isInt(v))
      number = number ? (least ? std::min(*number, v->constant.intValue)
                               : std::max(*number, v->constant.intValue))
                      : v->constant.intValue;
    else
      fail(DiagCode::FrontendPythonError,
           "TypeError: " + builtin + "() of a size and a " + v->typeName(), f);
  }
  // Each size's static bound (a counted size's, or a static dimension's): nullopt where one
  // has none.
  std::optional<int64_t> most = 0;
  for (const VarPtr &v : sizes) {
    std::optional<int64_t> b = boundOf(v->sizeDim);
    most = b && most ? std::optional<int64_t>(std::max(*most, *b)) : std::nullopt;
  }
  if (number && ((least && most && *number >= *most) || (!least && *number <= 0)))
    number = std::nullopt;
  if (!number && sizes.size() == 1) { // min(1000, n) of at most 300 rows is n
    f.stack.push_back(sizes.front());
    return true;
  }
  std::optional<int64_t> bound = least ? number : std::nullopt;
  if (!bound && most)
    bound = least ? most : (number ? std::max(*number, *most) : most);
  if (!bound)
    fail(DiagCode::FrontendHostInteraction,
         builtin + "() of sizes a kernel counted needs a bound: a number, or a static bound of "
                   "each (not supported yet otherwise)",
         f);
  std::string pick = least ? "torch.minimum" : "torch.maximum";
  VarPtr value;
  for (const VarPtr &v : sizes) {
    VarPtr t = sizeTensor(f, sir, v);
    value = value ? apiCall(f, sir, pick, {value, t}) : t;
  }
  if (number)
    value = apiCall(f, sir, "torch.clamp", {value}, {{least ? "max" : "min", intConst(*number)}});
  SizeEnd end;
  end.bound = bound;
  produceSize(
      f, builtin + "()", value, {},
      [&](const std::vector<VarPtr> &, int k) {
        return makeDynamicSize(ops::dynamicDim(k), {value});
      },
      end);
  return true;
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
  static const std::set<std::string> kOps = {
      "torch.nonzero",        "torch.argwhere",       "torch.masked_select",
      "paddle.nonzero",       "paddle.masked_select", "torch.ops.torchvision.nms",
      "torch.topk",           "paddle.topk",          "torch.cat",
      "torch.concat",         "torch.concatenate",    "paddle.concat",
      "paddle.vision.ops.nms"};
  static const std::set<std::string> kUnique = {
      "torch.unique", "paddle.unique", "torch.unique_consecutive", "paddle.unique_consecutive"};
  if (kUnique.count(op))
    return countedUnique(f, sir, op, args, kwargs), true;
  if (!kOps.count(op) && !oneArgWhere)
    return false;
  auto call = [&](const std::string &callee, std::vector<VarPtr> callArgs, Kwargs callKwargs = {}) {
    return apiCall(f, sir, callee, std::move(callArgs), std::move(callKwargs));
  };
  std::string what = op.substr(op.rfind('.') + 1) + "()";
  if (op == "torch.topk" || op == "paddle.topk")
    return countedTopk(f, sir, args, kwargs);
  if (op == "torch.cat" || op == "torch.concat" || op == "torch.concatenate" ||
      op == "paddle.concat")
    return countedConcat(f, sir, args, kwargs);
  bool paddleNms = op == "paddle.vision.ops.nms";
  if (paddleNms) { // torchvision's nms; without scores, boxes in order
    VarPtr boxes = argument(args, kwargs, 0, "boxes"),
           iou = argument(args, kwargs, 1, "iou_threshold"),
           scores = argument(args, kwargs, 2, "scores");
    if (!isNone(argument(args, kwargs, 3, "category_idxs")) ||
        !isNone(argument(args, kwargs, 5, "top_k")))
      fail(DiagCode::FrontendUnsupportedCall,
           "paddle.vision.ops.nms() with category_idxs or top_k is not supported yet (with "
           "scores or without it is)",
           f);
    if (!boxes || !boxes->isTensor() || boxes->meta.rank() != 2)
      fail(DiagCode::FrontendPythonError, "TypeError: nms() takes boxes [N, 4]", f);
    if (isNone(scores)) { // the first box first: descending positions as its scores
      int64_t n = boxes->meta.shape[0];
      scores = call(
          "torch.neg",
          {call("torch.arange", {ops::isDynamicDim(n) ? makeDynamicSize(n, {boxes}) : intConst(n)},
                {{"dtype", torchDType(boxes->meta.dtype)}})});
    }
    op = "torch.ops.torchvision.nms";
    args = {boxes, scores, isNone(iou) ? makeConst(PyConst::ofFloat(0.3), {}) : iou};
  }
  if (op == "torch.ops.torchvision.nms") { // the kept boxes' indices, then -1: those >= 0 count
    VarPtr keep = call(op, args, paddleNms ? Kwargs() : kwargs);
    VarPtr count = call("torch.count_nonzero", {call("torch.ge", {keep, intConst(0)})});
    produceSize(
        f, what, count, {keep}, [](const std::vector<VarPtr> &p, int) { return p[0]; }, SizeEnd());
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
        f, what, selected.count, {selected.rows},
        [](const std::vector<VarPtr> &p, int) { return p[0]; },
        selectedBy(mask->meta.shape == x->meta.shape ? mask.get() : nullptr));
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
  // As many rows as x[x != 0] has: where(keep)[0] and scores[keep] are of one size.
  SizeEnd end = selectedBy(x.get());
  if (!tuple) {
    produceSize(
        f, what, nz.count, {nz.positions}, [](const std::vector<VarPtr> &p, int) { return p[0]; },
        end);
    return true;
  }
  // One tensor of coordinates [k] per dimension (in both frameworks).
  std::vector<VarPtr> columns;
  for (int64_t d = 0; d < rank; ++d)
    columns.push_back(call("torch.select", {nz.positions, intConst(1), intConst(d)}));
  produceSize(
      f, what, nz.count, columns,
      [](const std::vector<VarPtr> &p, int) { return makeSequence(K::Tuple, p, {}); }, end);
  return true;
}

bool Executor::countedConcat(Frame &f, StatementIR &sir, const std::vector<VarPtr> &args,
                             const Kwargs &kwargs) {
  bool torch = framework_ == "torch";
  VarPtr list = argument(args, kwargs, 0, torch ? "tensors" : "x");
  if (!list || !list->isSequence() || list->items.empty())
    return false;
  const std::vector<VarPtr> &parts = list->items;
  for (const VarPtr &p : parts)
    if (!p->isTensor() || p->meta.rank() == 0 || p->meta.dtype != parts[0]->meta.dtype)
      return false;
  VarPtr dimArg = argument(args, kwargs, 1, torch ? "dim" : "axis");
  int64_t dim = dimArg && isInt(dimArg) ? dimArg->constant.intValue : 0;
  if (dim < 0)
    dim += parts[0]->meta.rank();
  // Rows of two sizes, one counted: their sum is no product of sizes.
  std::vector<int64_t> rows;
  std::set<int64_t> dynamic;
  bool counted = false;
  for (const VarPtr &p : parts) {
    rows.push_back(p->meta.shape[0]);
    if (ops::isDynamicDim(rows.back())) {
      dynamic.insert(rows.back());
      counted |= isCountedSize(makeDynamicSize(rows.back(), {}));
    }
  }
  if (dim != 0 || dynamic.size() < 2 || !counted)
    return false;
  for (const VarPtr &p : parts)
    consume(p, locOf(f));
  int64_t total = 0;
  for (int64_t r : rows) {
    std::optional<int64_t> b = boundOf(r);
    if (!b)
      fail(DiagCode::FrontendHostInteraction,
           "concatenating rows a kernel counted needs a static bound of each part's rows "
           "(not supported yet otherwise)",
           f);
    total += *b;
  }
  std::vector<int64_t> shape = parts[0]->meta.shape;
  shape[0] = total;
  VarPtr int64 = torchDType(ops::DType::Int64);
  VarPtr out = apiCall(f, sir, "torch.full", {intList(shape), intConst(0)},
                       {{"dtype", torchDType(parts[0]->meta.dtype)}});
  VarPtr count = apiCall(f, sir, "torch.full", {intList({}), intConst(0)}, {{"dtype", int64}});
  for (size_t i = 0; i < parts.size(); ++i) {
    VarPtr n =
        ops::isDynamicDim(rows[i]) ? makeDynamicSize(rows[i], {parts[i]}) : intConst(rows[i]);
    VarPtr at = apiCall(f, sir, "torch.add",
                        {apiCall(f, sir, "torch.arange", {n}, {{"dtype", int64}}), count});
    out = apiCall(f, sir, "torch.index_copy", {out, intConst(0), at, parts[i]});
    count = apiCall(f, sir, "torch.add",
                    {count, ops::isDynamicDim(rows[i]) ? sizeTensor(f, sir, n) : n});
  }
  SizeEnd end;
  end.key = rows;
  produceSize(
      f, "cat()", count, {out}, [](const std::vector<VarPtr> &p, int) { return p[0]; }, end);
  return true;
}

bool Executor::countedTopk(Frame &f, StatementIR &sir, const std::vector<VarPtr> &args,
                           const Kwargs &kwargs) {
  bool torch = framework_ == "torch";
  VarPtr x = argument(args, kwargs, 0, torch ? "input" : "x"), k = argument(args, kwargs, 1, "k");
  if (!x || !x->isTensor() || !k || !isDynamicSize(k) || x->meta.rank() == 0)
    return false; // a number of rows: the operator's own lowering
  VarPtr dimArg = argument(args, kwargs, 2, torch ? "dim" : "axis");
  int64_t dim = dimArg && isInt(dimArg) ? dimArg->constant.intValue : -1;
  if (dim < 0)
    dim += x->meta.rank();
  if (dim != 0)
    fail(DiagCode::FrontendUnsupportedCall,
         "topk() of a size known at run time along dimension " + std::to_string(dim) +
             " is not supported yet (along the first it is)",
         f);
  VarPtr largest = argument(args, kwargs, 3, "largest");
  bool descending = !largest || truthy(f, largest);
  // The k first of x sorted (stably: ties in order) are the first rows of the sort.
  VarPtr sorted = apiCall(f, sir, "torch.sort", {x},
                          {{"dim", intConst(0)},
                           {"descending", makeConst(PyConst::ofBool(descending), {})},
                           {"stable", makeConst(PyConst::ofBool(true), {})}});
  auto named = [torch](std::vector<VarPtr> items) {
    VarPtr t = makeSequence(K::Tuple, std::move(items), {});
    if (torch)
      t->fields = {"values", "indices"};
    return t;
  };
  if (k->sizeDim == x->meta.shape[0]) // all of them
    return f.stack.push_back(named(sorted->items)), true;
  // Of a size counted before (min(1000, n)), that size again; of another, a size of its own.
  SizeEnd end;
  if (isSymbolSize(k) && derivedSizes_.produced(static_cast<int>(ops::symbolOf(k->sizeDim))) &&
      derivedSizes_.of(static_cast<int>(ops::symbolOf(k->sizeDim))).base ==
          ops::symbolOf(k->sizeDim))
    end.symbol = static_cast<int>(ops::symbolOf(k->sizeDim));
  produceSize(
      f, "topk()", sizeTensor(f, sir, k), sorted->items,
      [&](const std::vector<VarPtr> &p, int) { return named(p); }, end);
  return true;
}

void Executor::countedUnique(Frame &f, StatementIR &sir, const std::string &op,
                             const std::vector<VarPtr> &args, const Kwargs &kwargs) {
  bool torch = framework_ == "torch", consecutive = op.find("consecutive") != std::string::npos;
  auto call = [&](const std::string &callee, std::vector<VarPtr> callArgs, Kwargs callKwargs = {}) {
    return apiCall(f, sir, callee, std::move(callArgs), std::move(callKwargs));
  };
  VarPtr x = argument(args, kwargs, 0, torch ? "input" : "x");
  if (!x || !x->isTensor())
    fail(DiagCode::FrontendPythonError, "TypeError: " + op + "() takes a tensor", f);
  // Where each option sits: torch.unique(input, sorted, return_inverse, return_counts, dim),
  // torch.unique_consecutive(input, return_inverse, return_counts, dim), paddle.unique(x,
  // return_index, return_inverse, return_counts, axis, dtype), paddle.unique_consecutive(x,
  // return_inverse, return_counts, axis, dtype).
  size_t at = consecutive ? 1 : 2;
  auto option = [&](size_t position, const char *name) {
    VarPtr v = argument(args, kwargs, position, name);
    return v && truthy(f, v);
  };
  bool withIndex = !torch && !consecutive && option(1, "return_index");
  bool inverse = option(at, "return_inverse"), counts = option(at + 1, "return_counts");
  VarPtr dim = argument(args, kwargs, at + 2, torch ? "dim" : "axis");
  if (!isNone(dim))
    fail(DiagCode::FrontendUnsupportedCall,
         op.substr(op.rfind('.') + 1) + "() along a dimension is not supported yet (of the " +
             "flattened tensor it is)",
         f);
  VarPtr dtype = torch ? nullptr : argument(args, kwargs, at + 3, "dtype");
  if (isNone(dtype))
    dtype = nullptr;
  // torch.unique's sorted=False order is unspecified: sotc's is sorted.
  VarPtr v = call("torch.reshape", {x, intList({-1})}), order;
  if (!consecutive) {
    VarPtr sorted = call("torch.sort", {v},
                         {{"dim", intConst(0)}, {"stable", makeConst(PyConst::ofBool(true), {})}});
    v = sorted->items[0], order = sorted->items[1];
  }
  // Element i starts a run where it differs from element i - 1 (NaN from everything).
  VarPtr zero = intConst(0), one = intConst(1);
  int64_t elements = v->meta.shape[0];
  VarPtr pos = call("torch.arange", {ops::isDynamicDim(elements) ? makeDynamicSize(elements, {v})
                                                                 : intConst(elements)});
  VarPtr n = call("torch.sum", {call("torch.ones_like", {pos})});
  VarPtr previous =
      call("torch.index_select",
           {v, zero, call("torch.clamp", {call("torch.sub", {pos, one})}, {{"min", zero}})});
  VarPtr first =
      call("torch.logical_or", {call("torch.ne", {v, previous}), call("torch.eq", {pos, zero})});
  // The runs' starts at their bound (then -1), and how many there are.
  VarPtr starts =
      call("torch.reshape", {call("torch.nonzero_static", {first},
                                  {{"size", elementsOf(first)}, {"fill_value", intConst(-1)}}),
                             intList({-1})});
  VarPtr count = call("torch.count_nonzero", {call("torch.ge", {starts, zero})});
  VarPtr at0 = call("torch.clamp", {starts}, {{"min", zero}});
  std::vector<VarPtr> rows = {call("torch.index_select", {v, zero, at0})};
  auto indices = [&](VarPtr t) { // paddle's dtype= of indices and counts
    return dtype ? call("paddle.cast", {t, dtype}) : t;
  };
  if (withIndex) // the stable sort's first position of a run is the value's first occurrence
    rows.push_back(indices(call("torch.index_select", {order, zero, at0})));
  if (counts) { // from one start to the next (the last run to n)
    VarPtr next =
        call("torch.index_select",
             {starts, zero,
              call("torch.minimum", {call("torch.add", {pos, one}), call("torch.sub", {n, one})})});
    VarPtr inside = call("torch.logical_and", {call("torch.lt", {call("torch.add", {pos, one}), n}),
                                               call("torch.ge", {next, zero})});
    rows.push_back(indices(call("torch.sub", {call("torch.where", {inside, next, n}), starts})));
  }
  VarPtr inverseOf;
  if (inverse) { // each element's run, put back where the sort took it from
    VarPtr run = call("torch.sub", {call("torch.cumsum", {first, zero}), one});
    if (order)
      run = call("torch.index_copy", {call("torch.zeros_like", {run}), zero, order, run});
    if (torch && x->meta.rank() != 1) // torch's has x's shape, paddle's is flat
      run = tensorCall(f, sir, "method", "torch.Tensor.reshape_as", "torch.Tensor.reshape_as",
                       {run, x}, {});
    inverseOf = indices(run);
  }
  produceSize(
      f, op.substr(op.rfind('.') + 1) + "()", count, rows,
      [&](const std::vector<VarPtr> &p, int) {
        std::vector<VarPtr> out = {p[0]};
        size_t next = 1;
        if (withIndex)
          out.push_back(p[next++]);
        if (inverse)
          out.push_back(inverseOf);
        if (counts)
          out.push_back(p[next]);
        return out.size() == 1 ? out[0] : makeSequence(K::Tuple, out, {});
      },
      selectedBy(first.get()));
}

bool Executor::countedSubscript(Frame &f, StatementIR &sir, const VarPtr &x, const VarPtr &key) {
  if (x->isTensor() && key->kind == K::Slice)
    return firstRows(f, sir, x, key);
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
      [](const std::vector<VarPtr> &p, int) { return p[0]; }, selectedBy(key.get()));
  return true;
}

bool Executor::firstRows(Frame &f, StatementIR &sir, const VarPtr &x, const VarPtr &key) {
  if (x->meta.rank() == 0 || !ops::isDynamicDim(x->meta.shape[0]))
    return false;
  VarPtr rows = makeDynamicSize(x->meta.shape[0], {x});
  const VarPtr &start = key->items[0], &stop = key->items[1], &step = key->items[2];
  auto isNone = [](const VarPtr &v) {
    return v->isConstant() && v->constant.kind == PyConst::Kind::None;
  };
  auto is = [](const VarPtr &v, int64_t n) { return isInt(v) && v->constant.intValue == n; };
  // x[:n], x[:-n] and x[:k] of rows a kernel counted: their first min(n, rows) (rows - n, k)
  // rows, a size of its own. Other slices take their own lowering.
  if (!isCountedSize(rows) || !(isNone(start) || is(start, 0)) || !(isNone(step) || is(step, 1)) ||
      isNone(stop) || !(isInt(stop) || isDynamicSize(stop)))
    return false;
  consume(start, locOf(f));
  consume(step, locOf(f));
  if (isDynamicSize(stop) && stop->sizeDim == rows->sizeDim) // x[:len(x)]
    return f.stack.push_back(x), true;
  std::optional<int64_t> bound = boundOf(rows->sizeDim);
  VarPtr count = sizeTensor(f, sir, rows);
  SizeEnd end;
  if (isInt(stop)) {
    consume(stop, locOf(f));
    int64_t n = stop->constant.intValue;
    if (n >= 0 && bound && *bound <= n) // keep[:100] of at most 80 rows: all of them
      return f.stack.push_back(x), true;
    count = n >= 0 ? apiCall(f, sir, "torch.clamp", {count}, {{"max", intConst(n)}})
                   : apiCall(f, sir, "torch.clamp",
                             {apiCall(f, sir, "torch.add", {count, intConst(n)})},
                             {{"min", intConst(0)}});
    if (n >= 0)
      end.bound = bound ? std::min(*bound, n) : n;
  } else {
    count = apiCall(f, sir, "torch.minimum", {count, sizeTensor(f, sir, stop)});
  }
  produceSize(
      f, "a slice", count, {x}, [](const std::vector<VarPtr> &p, int) { return p[0]; }, end);
  return true;
}

} // namespace sotc::frontend
