//===- Calls.cpp - Calls: dispatch by callee, tensor statements, inlined user functions --===//
//
// Tensor operations go through the operator library (compiler/ops) and become statements;
// user functions are inlined by pushing a frame; everything else is looked up in the
// handler tables of Calls.h.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"

#include "compiler/ops/Inference.h"
#include "compiler/ops/LayerTable.h"
#include "compiler/ops/OpTable.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <set>

namespace sotc::frontend {
namespace {
using K = Variable::Kind;

/// A Python value as an operator-library argument.
ops::Arg toArg(const VarPtr &v) {
  switch (v->kind) {
  case K::Tensor:
    return ops::Arg::ofTensor(v->meta);
  case K::Constant:
    switch (v->constant.kind) {
    case PyConst::Kind::None:
      return ops::Arg::none();
    case PyConst::Kind::Bool:
      return ops::Arg::ofBool(v->constant.boolValue);
    case PyConst::Kind::Int:
      return ops::Arg::ofInt(v->constant.intValue);
    case PyConst::Kind::Float:
      return ops::Arg::ofFloat(v->constant.floatValue);
    case PyConst::Kind::Str:
      return ops::Arg::ofString(v->constant.text);
    case PyConst::Kind::Ellipsis:
      return ops::Arg::ellipsis();
    default:
      return ops::Arg::ofString(v->constant.repr());
    }
  case K::Tuple:
  case K::List: {
    std::vector<ops::Arg> items;
    for (const VarPtr &i : v->items)
      items.push_back(toArg(i));
    return v->kind == K::Tuple ? ops::Arg::tuple(items) : ops::Arg::list(items);
  }
  case K::Slice:
    return ops::Arg::slice(toArg(v->items[0]), toArg(v->items[1]), toArg(v->items[2]));
  case K::External:
  case K::Module:
    return ops::Arg::ofString(v->name); // e.g. paddle.float32 for a DataType parameter
  default: {
    ops::Arg a = ops::Arg::ofString("<" + v->typeName() + ">");
    return a;
  }
  }
}
} // namespace

namespace {
bool holdsDynamicSize(const VarPtr &v) {
  return isDynamicSize(v) || ((v->kind == K::Tuple || v->kind == K::List || v->kind == K::Slice) &&
                              std::any_of(v->items.begin(), v->items.end(), holdsDynamicSize));
}
} // namespace

void Executor::failOnDynamicSize(const VarPtr &v, Frame &f) {
  if (isDynamicSize(v))
    fail(DiagCode::FrontendHostInteraction,
         "computing with a dynamic dimension's size (the batch's) is not compiled yet: its "
         "value is known at run time only (a reshape keeps it as -1: x.view(-1, 128))",
         f);
}

namespace {
// The APIs that take sizes as their arguments: reshapes, expands, and what makes a tensor of
// a shape.
const std::set<std::string> kReshapes = {"paddle.reshape", "Tensor.reshape", "torch.reshape",
                                         "torch.Tensor.reshape", "torch.Tensor.view"};
const std::set<std::string> kExpands = {"paddle.expand", "Tensor.expand", "paddle.broadcast_to",
                                        "torch.broadcast_to", "torch.Tensor.expand"};
const std::set<std::string> kCreations = {
    "torch.arange", "paddle.arange", "torch.zeros", "torch.ones",   "torch.full",
    "torch.empty",  "torch.rand",    "torch.randn", "paddle.zeros", "paddle.ones",
    "paddle.full",  "paddle.empty",  "paddle.rand", "paddle.randn"};
} // namespace

void Executor::refuseComputedSizes(Frame &f, const std::string &opName,
                                   const std::vector<VarPtr> &args) {
  bool takesSizes = kReshapes.count(opName) || kExpands.count(opName) || kCreations.count(opName);
  VarPtr first;
  std::function<bool(const VarPtr &, bool)> computed = [&](const VarPtr &v, bool item) {
    if (v->isTensor() && v->ofDynamicSize && (item || takesSizes))
      first = first ? first : v;
    return (v->isTensor() && v->ofDynamicSize && (item || takesSizes)) ||
           ((v->kind == K::Tuple || v->kind == K::List || v->kind == K::Slice) &&
            std::any_of(v->items.begin(), v->items.end(),
                        [&](const VarPtr &i) { return computed(i, true); }));
  };
  if (std::none_of(args.begin(), args.end(), [&](const VarPtr &a) { return computed(a, false); }))
    return;
  // T // 2 as a size: T is taken as a multiple of 2 (translate() starts again, guarded).
  if (first->quotientBy > 1) {
    const std::string &name = symbols_[ops::symbolOf(first->quotientOfDim)].name;
    throw SizeSplits({name, first->quotientBy, locOf(f)},
                     opName + "() takes " + name + " // " + std::to_string(first->quotientBy) +
                         " as a size (" + locOf(f).str() + ")");
  }
  fail(DiagCode::FrontendHostInteraction,
       "a size computed from a dynamic dimension's size other than by products, sums with a "
       "number and whole quotients (T * T, T % 3) is a tensor known at run time: " +
           opName +
           " takes numbers, the dynamic sizes and those of them as sizes, slice bounds and "
           "shapes (a reshape infers a -1 from them: x.view(-1, C))",
       f);
}

void Executor::passBatchSizes(Frame &f, const std::string &opName, std::vector<VarPtr> &args,
                              const Kwargs &kwargs) {
  if (std::none_of(args.begin(), args.end(), holdsDynamicSize) &&
      std::none_of(kwargs.begin(), kwargs.end(),
                   [](const auto &kw) { return holdsDynamicSize(kw.second); }))
    return;
  auto refuse = [&] {
    fail(DiagCode::FrontendHostInteraction,
         "passing a dynamic dimension's size to " + opName +
             " is not compiled yet: only a reshape, an expand to it and arange(n) take it",
         f);
  };
  auto noDynamicKwargs = [&] {
    return std::none_of(kwargs.begin(), kwargs.end(),
                        [](const auto &kw) { return holdsDynamicSize(kw.second); });
  };
  // arange(n), arange(0, n): the indices along the dynamic dimension.
  if ((opName == "torch.arange" || opName == "paddle.arange") && noDynamicKwargs() &&
      !args.empty() && isDynamicSize(args.back()) &&
      (args.size() == 1 ||
       (args.size() == 2 && isInt(args[0]) && args[0]->constant.intValue == 0))) {
    args = {makeConst(PyConst::ofInt(ops::sizeOfDim(args.back()->sizeDim)), {args.back()})};
    return;
  }
  // full(shape, value), zeros(shape): a tensor of the sizes.
  static const std::set<std::string> fills = {"torch.full", "paddle.full", "paddle.zeros",
                                              "paddle.ones", "paddle.empty"};
  if (fills.count(opName) && !args.empty() && holdsDynamicSize(args[0]) && noDynamicKwargs() &&
      std::none_of(args.begin() + 1, args.end(), holdsDynamicSize) &&
      (args[0]->kind == K::Tuple || args[0]->kind == K::List)) {
    std::vector<VarPtr> dims = args[0]->items;
    for (VarPtr &d : dims)
      if (isDynamicSize(d))
        d = makeConst(PyConst::ofInt(ops::sizeOfDim(d->sizeDim)), {d});
    args[0] = makeSequence(args[0]->kind, dims, {args[0]});
    return;
  }
  if ((!kReshapes.count(opName) && !kExpands.count(opName)) || !kwargs.empty() || args.size() < 2 ||
      args[0]->kind != K::Tensor)
    refuse();
  // The target shape: one sequence, or the sizes themselves (x.view(B, -1)). Each size is
  // passed as the dimension it is (ops::sizeOfDim); the operator library infers a -1 as what
  // the others leave, a product of the sizes where it merges them (x.view(-1, C) of [B, T, C])
  // and an expand makes the size a dimension where the input has 1 or it.
  bool sequence = args.size() == 2 && (args[1]->kind == K::Tuple || args[1]->kind == K::List);
  std::vector<VarPtr> target =
      sequence ? args[1]->items : std::vector<VarPtr>(args.begin() + 1, args.end());
  for (VarPtr &t : target)
    if (isDynamicSize(t))
      t = makeConst(PyConst::ofInt(ops::sizeOfDim(t->sizeDim)), {t});
  if (sequence)
    args[1] = makeSequence(args[1]->kind, target, {args[1]});
  else
    std::copy(target.begin(), target.end(), args.begin() + 1);
}

void Executor::sizesAsTensors(Frame &f, StatementIR &sir, const std::string &opName,
                              std::vector<VarPtr> &args, Kwargs &kwargs) {
  const ops::OpEntry *entry = ops::OpTable::get().lookup(opName);
  if (!entry || kReshapes.count(opName) || kExpands.count(opName) || kCreations.count(opName) ||
      opName == "__getitem__" ||
      std::none_of(args.begin(), args.end(), [](const VarPtr &a) { return a->isTensor(); }))
    return;
  // Only where a signature takes a tensor (add's `other`), not where all take an int
  // (narrow's length: refused, by passBatchSizes).
  auto takesTensor = [&](size_t position, const std::string &keyword) {
    return std::any_of(entry->signatures.begin(), entry->signatures.end(),
                       [&](const ops::Signature &s) {
                         const ops::Param *p = keyword.empty()
                                                   ? (position < s.params.size() &&
                                                              !s.params[position].keywordOnly
                                                          ? &s.params[position]
                                                          : nullptr)
                                                   : s.find(keyword);
                         return p && p->type == ops::ParamType::Tensor && !p->variadic;
                       });
  };
  auto asTensor = [&](VarPtr &v, size_t position, const std::string &keyword) {
    if (isDynamicSize(v) && takesTensor(position, keyword))
      v = sizeTensor(f, sir, v); // as the operators take it (t / T)
  };
  for (size_t i = 0; i < args.size(); ++i)
    asTensor(args[i], i, "");
  for (auto &[name, value] : kwargs)
    asTensor(value, 0, name);
}

void Executor::guardBatch(const char *relation, int64_t k, const SourceLoc &loc, int symbol) {
  ops::SizeOffset derived = derivedSizes_.of(symbol); // T - 1 <= N is T <= N + 1
  symbol = derived.base;
  if (derivedSizes_.produced(symbol)) // a guard reads the inputs, before any kernel ran
    throw CodedError(DiagCode::FrontendHostInteraction,
                     "a decision on the size " + symbols_[symbol].name + " counts (`" + relation +
                         " " + std::to_string(k) + "`) is not supported yet (" + loc.str() + ")");
  k -= derived.offset;
  if (std::string(relation) == "<=")
    sizeMax_[symbol] = sizeMax_[symbol] ? std::min(sizeMax_[symbol], k) : k;
  std::string expected = std::string(relation) + " " + std::to_string(k);
  if (std::none_of(batchGuards_.begin(), batchGuards_.end(), [&](const SizeGuard &g) {
        return g.symbol == symbol && g.expected == expected;
      }))
    batchGuards_.push_back({symbol, expected, loc});
}

int Executor::symbolOf(const std::string &given) {
  std::string name = given; // a size an earlier attempt found equal to another is that one
  for (bool renamed = true; renamed;) {
    renamed = false;
    for (const SizeRelation &r : options_.sameSizes)
      if (r.merged == name) {
        name = r.kept;
        renamed = true;
      }
  }
  for (size_t k = 0; k < symbols_.size(); ++k)
    if (symbols_[k].name == name)
      return static_cast<int>(k);
  if (symbols_.size() == static_cast<size_t>(ops::kMaxSymbols))
    throw CodedError(DiagCode::FrontendHostInteraction, "the inputs name more than " +
                                                            std::to_string(ops::kMaxSymbols) +
                                                            " dynamic sizes");
  if (!derivedSizes_.sizes().empty()) // they are numbered after the inputs'
    throw CodedError(DiagCode::FrontendHostInteraction,
                     "the dynamic size " + name + " is named after sizes derived from others");
  int64_t factor = 1;
  for (const SizeMultiple &m : options_.sizeMultiples)
    if (m.name == name)
      factor *= m.factor;
  symbols_.push_back({name, 0, factor});
  derivedSizes_.setInputSizes(static_cast<int>(symbols_.size()));
  return static_cast<int>(symbols_.size()) - 1;
}

std::vector<int64_t> Executor::sizeMax() const {
  std::vector<int64_t> max(symbols_.size());
  for (size_t k = 0; k < max.size(); ++k) {
    ops::SizeOffset d = derivedSizes_.of(static_cast<int>(k));
    max[k] = sizeMax_[d.base] ? sizeMax_[d.base] + d.offset : 0;
  }
  return max;
}

void Executor::noteDerivedSizes(const ops::PrimGraph &graph, const SourceLoc &loc) {
  for (const ops::SizeOffset &d : derivedSizes_.sizes())
    if (d.symbol >= static_cast<int>(symbols_.size()))
      symbols_.push_back(
          {symbols_[d.base].name + (d.offset < 0 ? "" : "+") + std::to_string(d.offset), 0});
  for (const ops::PrimOp &op : graph.ops)
    for (int k : ops::dynamicSizes(op.result.shape)) {
      ops::SizeOffset d = derivedSizes_.of(k);
      if (d.offset < 0 && guardedSizes_.insert(k).second)
        guardBatch(">=", 1, loc, k);
    }
}

void Executor::indexWithDynamicSize(Frame &f, std::vector<VarPtr> &args) {
  if (args.size() != 2 || !args[0]->isTensor())
    return;
  bool tuple = args[1]->kind == K::Tuple;
  std::vector<VarPtr> items = tuple ? args[1]->items : std::vector<VarPtr>{args[1]};
  const std::vector<int64_t> &shape = args[0]->meta.shape;
  auto position = [](const VarPtr &v) { return isInt(v) && v->constant.intValue >= 0; };
  size_t consumed = 0, dim = 0;
  for (const VarPtr &k : items)
    consumed += k->kind == K::Slice || isInt(k);
  bool changed = false;
  for (VarPtr &k : items) {
    if (k->isConstant() && k->constant.kind == PyConst::Kind::Ellipsis)
      dim += shape.size() - std::min(consumed, shape.size());
    bool list = k->kind == K::List && k->items.size() == 1 && isInt(k->items[0]);
    if (k->kind != K::Slice && !isInt(k) && k->kind != K::List)
      continue;
    size_t at = dim++;
    if (at >= shape.size())
      return; // the operator library says what is wrong
    bool dynamic = ops::isDynamicDim(shape[at]);
    // Guards on the dimension's size; a product of sizes (B * T rows) reaches 1 already.
    auto guardDim = [&](const char *relation, int64_t k) {
      if (ops::isSymbolDim(shape[at]))
        guardBatch(relation, k, locOf(f), ops::symbolOf(shape[at]));
      else if (k > 1)
        fail(DiagCode::FrontendHostInteraction,
             "indexing a dimension of " + ops::productOf(shape[at]).text() +
                 " (a product of dynamic sizes) at static positions is not compiled yet",
             f);
    };
    if (dynamic && (isInt(k) || list)) {
      // x[:, -k] and x[:, [-k]] of a dimension of s0: s0 must reach k from its end.
      int64_t p = (list ? k->items[0] : k)->constant.intValue;
      if (p < -1)
        guardDim(">=", -p);
    }
    bool unitStep =
        k->kind == K::Slice &&
        (isNone(k->items[2]) || (isInt(k->items[2]) && k->items[2]->constant.intValue == 1));
    bool fromZero =
        k->kind == K::Slice &&
        (isNone(k->items[0]) || (isInt(k->items[0]) && k->items[0]->constant.intValue == 0));
    if (k->kind == K::Slice && isDynamicSize(k->items[1])) {
      // x[:n] of n = s0: a static dimension's first s0 elements (n <= its size guarded); of a
      // dimension of T, from a position, T - 1 of T up to it (x[:, 1:T], x[:, :T - 1]).
      int64_t end = k->items[1]->sizeDim;
      bool fromPosition = k->kind == K::Slice && (isNone(k->items[0]) || position(k->items[0]));
      if (!(dynamic ? fromPosition : fromZero) || !unitStep)
        fail(DiagCode::FrontendHostInteraction,
             "a slice up to a dynamic size is compiled from 0 (of a static dimension) or a "
             "position (of a dynamic one) with step 1 only",
             f);
      if (dynamic && !derivedSizes_.difference(end, shape[at]))
        fail(DiagCode::FrontendHostInteraction,
             "a slice of one dynamic size (" + ops::productOf(shape[at]).text() +
                 ") up to another (" + ops::productOf(end).text() +
                 ") is not compiled yet",
             f);
      if (!dynamic && !isSymbolSize(k->items[1]))
        fail(DiagCode::FrontendHostInteraction,
             "a slice of a static dimension up to a product of dynamic sizes is not compiled yet",
             f);
      if (!dynamic) {
        ops::SizeOffset d = derivedSizes_.of(ops::symbolOf(end)); // the bound of T gives T - 1's
        int64_t inputMax = symbols_[d.base].inputMax ? symbols_[d.base].inputMax + d.offset : 0;
        if (inputMax == 0 || inputMax > shape[at])
          guardBatch("<=", shape[at], locOf(f), ops::symbolOf(end));
      }
      k = makeSequence(
          K::Slice,
          {k->items[0], makeConst(PyConst::ofInt(ops::sizeOfDim(end)), {k->items[1]}), k->items[2]},
          {k});
      changed = true;
    } else if (dynamic &&
               (position(k) || (k->kind == K::Slice && unitStep && position(k->items[1]) &&
                                (isNone(k->items[0]) || position(k->items[0]))))) {
      // Static positions of a dimension of s0 (x[:, 0], x[:, :4]): s0 must reach them.
      int64_t end = isInt(k) ? k->constant.intValue + 1 : k->items[1]->constant.intValue;
      if (end > 1)
        guardDim(">=", end);
    }
  }
  if (changed)
    args[1] = tuple ? makeSequence(K::Tuple, items, {args[1]}) : items[0];
}

namespace {
/// A key of `x[key]` that changes no values: full slices, None and Ellipsis.
bool keepsValues(const VarPtr &key) {
  auto keeps = [](const VarPtr &k) {
    if (k->kind == K::Slice)
      return std::all_of(k->items.begin(), k->items.end(), [](const VarPtr &v) {
        return v->isConstant() && v->constant.kind == PyConst::Kind::None;
      });
    return k->isConstant() &&
           (k->constant.kind == PyConst::Kind::None || k->constant.kind == PyConst::Kind::Ellipsis);
  };
  return key->kind == K::Tuple ? std::all_of(key->items.begin(), key->items.end(), keeps)
                               : keeps(key);
}
} // namespace

void Executor::markBatchIota(const std::string &opName, const std::vector<VarPtr> &args,
                             const std::vector<VarPtr> &outputs) {
  if (outputs.size() != 1 || !outputs[0]->isTensor() || !ops::isIntegral(outputs[0]->meta.dtype))
    return;
  bool arange = (opName == "torch.arange" || opName == "paddle.arange") && args.size() == 1 &&
                isInt(args[0]) && ops::isSymbolSize(args[0]->constant.intValue);
  // What keeps the values and only adds or drops dims of one: the batch's coordinate still.
  static const std::set<std::string> keeping = {
      "torch.Tensor.view", "torch.Tensor.reshape", "torch.reshape",          "paddle.reshape",
      "Tensor.reshape",    "torch.unsqueeze",      "torch.Tensor.unsqueeze", "paddle.unsqueeze",
      "Tensor.unsqueeze",  "torch.Tensor.to",      "torch.Tensor.contiguous"};
  // ... and adds 0 (transformers' mask offsets: q_idx + q_offset).
  bool plusZero = (opName == "__add__" || opName == "__radd__" || opName == "__sub__") &&
                  args.size() == 2 && isInt(args[1]) && args[1]->constant.intValue == 0;
  bool kept = !args.empty() && args[0]->isTensor() && args[0]->batchIota &&
              (keeping.count(opName) || plusZero ||
               (opName == "__getitem__" && args.size() == 2 && keepsValues(args[1])));
  const std::vector<int64_t> &shape = outputs[0]->meta.shape;
  bool rowsOnly = std::count_if(shape.begin(), shape.end(), ops::isDynamicDim) == 1 &&
                  std::all_of(shape.begin(), shape.end(),
                              [](int64_t d) { return d == 1 || ops::isSymbolDim(d); });
  outputs[0]->batchIota = (arange || kept) && rowsOnly;
}

VarPtr Executor::tensorCall(Frame &f, StatementIR &sir, const std::string &kind,
                            const std::string &callee, const std::string &opName,
                            std::vector<VarPtr> args, Kwargs kwargs) {
  for (const VarPtr &a : args)
    if (a->itemRead)
      refuseHostValue(a, f);
  if (VarPtr complex = complexCall(f, sir, opName, args, kwargs))
    return complex;
  // torch's memory_format says how elements are laid out, never what they are; so does a
  // strided layout (torchvision's full_like(..., layout=torch.strided)), the only one there is.
  for (const auto &[k, v] : kwargs)
    if (k == "layout" && !(v->kind == K::External && v->name == "torch.strided"))
      fail(DiagCode::FrontendUnsupportedCall,
           opName + "(): layout " + v->repr() + " is not supported (tensors here are strided)", f);
  kwargs.erase(std::remove_if(kwargs.begin(), kwargs.end(),
                              [](const auto &kv) {
                                return kv.first == "memory_format" || kv.first == "layout";
                              }),
               kwargs.end());
  // torch takes Python's types as dtypes: int is int64, float float32, bool bool.
  for (auto &[k, v] : kwargs)
    if (k == "dtype" && v->kind == K::Builtin && framework_ == "torch" &&
        (v->name == "int" || v->name == "float" || v->name == "bool")) {
      VarPtr dtype = Variable::make(K::External, constTracker());
      dtype->name = v->name == "int" ? "torch.int64" : v->name == "float" ? "torch.float32"
                                                                           : "torch.bool";
      v = dtype;
    }
  refuseComputedSizes(f, opName, args);
  if (opName == "__getitem__")
    indexWithDynamicSize(f, args);
  sizesAsTensors(f, sir, opName, args, kwargs);
  passBatchSizes(f, opName, args, kwargs);
  applyAutocast(f, sir, opName, args, kwargs);
  SourceLoc loc = locOf(f);
  ops::CallArgs callArgs;
  for (const VarPtr &a : args)
    callArgs.positional.push_back(toArg(a));
  for (const auto &[k, v] : kwargs)
    callArgs.keywords.push_back({k, toArg(v)});
  ops::LoweredCall lowered = [&] {
    try {
      return ops::OpTable::get().lower(opName, callArgs, &derivedSizes_);
    } catch (const ops::SizeNotWhole &e) { // taken as a multiple where the inputs name it
      if (e.symbol < static_cast<int>(symbols_.size()) &&
          derivedSizes_.of(e.symbol).base == e.symbol)
        throw SizeSplits({symbols_[e.symbol].name, e.factor, loc},
                         std::string(e.what()) + " (" + loc.str() + ")");
      throw CodedError(e.code(), std::string(e.what()) + " (" + loc.str() + ")");
    } catch (const ops::SizesMeet &e) {
      // Sizes derived from others are not guarded equal to anything: T - 1 and T differ.
      for (int k : {e.first, e.second})
        if (derivedSizes_.of(k).base != k)
          throw CodedError(DiagCode::OpShapeMismatch,
                           std::string(e.what()) + " (" + symbols_[e.first].name + " and " +
                               symbols_[e.second].name + " are different sizes) (" + loc.str() +
                               ")");
      throw SizesMet({symbols_[e.first].name, symbols_[e.second].name, loc},
                     std::string(e.what()) + " (" + loc.str() + ")");
    } catch (const CodedError &e) {
      throw CodedError(e.code(), std::string(e.what()) + " (" + loc.str() + ")");
    }
  }();
  noteDerivedSizes(lowered.graph, loc);
  // Every Python value the call reads decides its result: guard it.
  std::vector<VarPtr> inputs;
  std::function<void(const VarPtr &)> consumeAll = [&](const VarPtr &v) {
    inputs.push_back(v);
    if (v->isTensor() || v->isConstant())
      consume(v, loc);
    for (const VarPtr &i : v->items)
      consumeAll(i);
  };
  for (const VarPtr &a : args)
    consumeAll(a);
  for (const auto &kv : kwargs)
    consumeAll(kv.second);
  // x.to(dtype), x.float(), ... where x already has that dtype return x itself in torch: the
  // same object, so writes through either reach both, and an attribute set to it is unchanged
  // (CTRL's self.pos_encoding = self.pos_encoding.to(dtype=...)).
  static const std::set<std::string> castsToSelf = {
      "torch.Tensor.to",    "torch.Tensor.type",   "torch.Tensor.type_as", "torch.Tensor.float",
      "torch.Tensor.double", "torch.Tensor.half",  "torch.Tensor.bfloat16", "torch.Tensor.int",
      "torch.Tensor.long",  "torch.Tensor.bool"};
  bool copied = std::any_of(kwargs.begin(), kwargs.end(), [](const auto &kv) {
    return kv.first == "copy" && !(kv.second->isConstant() && !kv.second->constant.truthy());
  });
  if (castsToSelf.count(lowered.entry->name) && !copied && !args.empty() &&
      args[0]->isTensor() && lowered.outputs().size() == 1 &&
      lowered.outputs()[0].dtype == args[0]->meta.dtype)
    return args[0];
  Statement stmt;
  stmt.kind = kind;
  stmt.callee = callee;
  stmt.opName = lowered.entry->name;
  // The statement keeps the arguments as they are now: a list the program appends to later
  // (DenseNet's features) must not change what an earlier call read.
  std::function<VarPtr(const VarPtr &)> frozen = [&](const VarPtr &v) {
    if (v->items.empty() || v->isTensor())
      return v;
    VarPtr copy = Variable::make(v->kind, v->tracker);
    *copy = *v;
    for (VarPtr &item : copy->items)
      item = frozen(item);
    return copy;
  };
  for (const VarPtr &a : args)
    stmt.args.push_back(frozen(a));
  for (const auto &[k, v] : kwargs)
    stmt.kwargs.push_back({k, frozen(v)});
  stmt.loc = loc;
  for (const ops::TensorMeta &meta : lowered.outputs())
    stmt.outputs.push_back(newTensor(meta, computedFrom(inputs)));
  markBatchIota(opName, args, stmt.outputs);
  // Indexing and reshaping give views in the frameworks: an assignment into one would write
  // its base, which a functional update cannot (TensorUpdate.cpp refuses it).
  static const std::set<std::string> views = {
      "__getitem__", "reshape",    "view",      "transpose", "permute",      "squeeze", "unsqueeze",
      "flatten",     "split",      "chunk",     "expand",    "broadcast_to", "unbind",  "narrow",
      "view_as",     "reshape_as", "expand_as", "diagonal",  "swapaxes",     "movedim", "t"};
  std::string base = lowered.entry->name.substr(lowered.entry->name.rfind('.') + 1);
  if (views.count(base) && !args.empty() && args[0]->isTensor())
    for (const VarPtr &out : stmt.outputs) {
      out->viewOf = args[0];
      if (base == "__getitem__" && stmt.args.size() > 1)
        out->viewKey = stmt.args[1];
    }
  // An output that is an input unchanged (dropout in inference, x[...] with full slices)
  // still gets its own name: statements always define new values.
  const ops::Signature &signature = lowered.entry->signatures[lowered.signatureIndex];
  stmt.listResult = signature.returnType == ops::ParamType::TensorList;
  sir.statements.push_back(stmt);
  if (!signature.returnNames.empty()) { // a tuple, named as the framework names its fields
    VarPtr tuple = makeSequence(K::Tuple, stmt.outputs, inputs);
    tuple->fields = signature.returnNames;
    return tuple;
  }
  if (stmt.listResult) // torch returns its tensor sequences as tuples, paddle as lists
    return makeSequence(lowered.entry->name.rfind("torch.", 0) == 0 ? K::Tuple : K::List,
                        stmt.outputs, inputs);
  return stmt.outputs.front();
}

void Executor::pushFrame(ExecState &state, const VarPtr &function, std::vector<VarPtr> args,
                         Kwargs kwargs) {
  const trace::CodeObject &co = trace_.code_objects(function->codeIndex);
  Frame f;
  f.codeIndex = function->codeIndex;
  f.namespaceIndex = function->namespaceIndex;
  const Frame *caller = state.frames.empty() ? nullptr : &state.frames.back();
  if (caller && state.frames.size() >= static_cast<size_t>(options_.maxInlineDepth)) {
    std::string chain; // the innermost callers, which show the cycle of a recursion
    for (size_t i = state.frames.size() - std::min<size_t>(state.frames.size(), 6);
         i < state.frames.size(); ++i)
      chain += trace_.code_objects(state.frames[i].codeIndex).qualname() + " -> ";
    fail(DiagCode::FrontendRecursionLimit,
         "inlining '" + co.qualname() + "' would exceed the depth limit of " +
             std::to_string(options_.maxInlineDepth) + " (calls: ... -> " + chain +
             co.qualname() + ")",
         *caller);
  }
  auto error = [&](const std::string &msg) {
    if (caller)
      fail(DiagCode::FrontendPythonError, "TypeError: " + co.qualname() + "() " + msg, *caller);
    throw CodedError(DiagCode::FrontendBadInputs,
                     "the trace's inputs do not fit " + co.qualname() + "(): " + msg);
  };
  size_t nlocalsplus = co.varnames_size();
  for (const std::string &c : co.cellvars())
    if (std::find(co.varnames().begin(), co.varnames().end(), c) == co.varnames().end())
      ++nlocalsplus;
  nlocalsplus += co.freevars_size();
  f.localsplus.assign(nlocalsplus, nullptr);
  if (co.argcount() + co.kwonlyargcount() + ((co.flags() & 0x04) ? 1 : 0) +
              ((co.flags() & 0x08) ? 1 : 0) >
          static_cast<uint32_t>(co.varnames_size()) ||
      function->closure.size() > nlocalsplus)
    error("has a code object whose argument counts exceed its variables");
  // Bind arguments with Python's rules.
  size_t argcount = co.argcount(), kwonly = co.kwonlyargcount();
  bool varargs = co.flags() & 0x04, varkw = co.flags() & 0x08;
  if (args.size() > argcount && !varargs)
    error("takes " + std::to_string(argcount) + " positional arguments but " +
          std::to_string(args.size()) + " were given");
  for (size_t i = 0; i < std::min(args.size(), argcount); ++i)
    f.localsplus[i] = args[i];
  size_t varargsSlot = argcount + kwonly, varkwSlot = varargsSlot + (varargs ? 1 : 0);
  if (varargs) {
    std::vector<VarPtr> rest;
    for (size_t i = argcount; i < args.size(); ++i)
      rest.push_back(args[i]);
    f.localsplus[varargsSlot] = makeSequence(K::Tuple, rest, rest);
  }
  VarPtr extra;
  if (varkw) {
    extra = Variable::make(K::Dict, computedFrom({}));
    f.localsplus[varkwSlot] = extra;
  }
  for (auto &[name, value] : kwargs) {
    size_t i = co.posonlyargcount();
    while (i < argcount + kwonly && co.varnames(i) != name)
      ++i;
    if (i < argcount + kwonly) {
      if (f.localsplus[i])
        error("got multiple values for argument '" + name + "'");
      f.localsplus[i] = value;
    } else if (extra) {
      extra->keys.push_back(Variable::constant_(PyConst::ofStr(name), constTracker()));
      extra->items.push_back(value);
    } else {
      error("got an unexpected keyword argument '" + name + "'");
    }
  }
  if (function->defaults.size() > argcount)
    error("has more defaults than parameters");
  size_t firstDefault = argcount - function->defaults.size();
  for (size_t i = 0; i < argcount; ++i)
    if (!f.localsplus[i]) {
      if (i < firstDefault)
        error("missing required argument '" + co.varnames(i) + "'");
      f.localsplus[i] = function->defaults[i - firstDefault];
    }
  for (size_t i = argcount; i < argcount + kwonly; ++i)
    if (!f.localsplus[i]) {
      for (auto &[name, value] : function->kwdefaults)
        if (name == co.varnames(i))
          f.localsplus[i] = value;
      if (!f.localsplus[i])
        error("missing required keyword-only argument '" + co.varnames(i) + "'");
    }
  // Closure cells occupy the last slots (COPY_FREE_VARS).
  for (size_t i = 0; i < function->closure.size(); ++i)
    f.localsplus[nlocalsplus - function->closure.size() + i] = function->closure[i];
  auto unsupported = [&](const std::string &msg) {
    if (caller)
      fail(DiagCode::FrontendUnsupportedConstruct, msg, *caller);
    throw CodedError(DiagCode::FrontendUnsupportedConstruct, msg);
  };
  if (co.flags() & (0x80 | 0x100 | 0x200))
    unsupported("coroutines are not supported");
  if (co.flags() & 0x20) { // CO_GENERATOR: the call makes a generator; its body runs as pulled
    if (!caller)
      unsupported("the traced function '" + co.qualname() + "' is a generator");
    f.generator = true;
    VarPtr gen = Variable::make(K::Iterator, computedFrom({function}));
    gen->generator = true;
    gen->suspended = std::make_shared<Frame>(std::move(f));
    state.frames.back().stack.push_back(gen);
    return;
  }
  state.frames.push_back(std::move(f));
}

bool Executor::hostCallback(Frame &f, const std::string &callee, const std::vector<VarPtr> &args,
                            const Kwargs &kwargs, VarPtr result) {
  if (!options_.allowHostCallbacks)
    return false;
  Break b;
  b.kind = Break::Kind::HostCallback;
  b.callee = callee;
  b.callbackArgs = args;
  for (const auto &kv : kwargs) {
    b.callbackArgs.push_back(kv.second);
    b.kwargNames.push_back(kv.first);
  }
  for (const VarPtr &a : b.callbackArgs)
    consume(a, locOf(f));
  b.result = std::move(result);
  b.reason = "host callback " + callee + "()";
  b.loc = locOf(f);
  pendingBreak_ = b;
  return true;
}

void CallContext::hostError(const std::string &what) const {
  fail(DiagCode::FrontendHostInteraction,
       what + " needs tensor values on the host; pass --allow-host-callbacks to run it as a host "
              "callback between graphs");
}

VarPtr CallContext::hostValue(const std::string &what) const {
  VarPtr v = Variable::make(K::Opaque, computedFrom(args));
  v->name = "host value of " + what;
  return v;
}

bool CallContext::breakOn(const std::string &callee, const std::string &opName,
                          const std::vector<VarPtr> &callArgs) {
  const std::vector<std::string> &apis = ex.options_.breakOn;
  if (std::find(apis.begin(), apis.end(), callee) == apis.end() &&
      std::find(apis.begin(), apis.end(), opName) == apis.end())
    return false;
  // The call runs on the host between two graphs. An operator's results are tensors whose
  // metadata the operator library infers; another function's is a host value (it may be
  // returned, not computed with).
  StatementIR scratch;
  VarPtr result = ops::OpTable::get().lookup(opName)
                      ? ex.tensorCall(f(), scratch, "api", callee, opName, callArgs, kwargs)
                      : hostValue(callee + "()");
  if (!hostCallback(callee, callArgs, kwargs, result))
    fail(DiagCode::FrontendUnsupportedCall,
         "--break-on=" + callee + " puts a host boundary here: pass --allow-host-callbacks too");
  return true;
}

namespace {
/// The handler `table` has for the call, run; false when it has none or declines.
bool dispatch(const CallTable &table, CallContext &c) {
  auto it = table.find(c.name);
  return it != table.end() && it->second(c);
}

/// Builtins with a fixed number of arguments check it first, as Python does.
void checkArity(CallContext &c) {
  static const std::map<std::string, std::pair<size_t, size_t>> arity = {
      {"range", {1, 3}}, {"enumerate", {1, 2}}, {"reversed", {1, 1}}, {"sorted", {1, 1}},
      {"iter", {1, 1}},  {"zip", {0, 64}},      {"len", {1, 1}},      {"isinstance", {2, 2}}};
  auto it = arity.find(c.name);
  if (it == arity.end())
    return;
  auto [lo, hi] = it->second;
  if (c.args.size() < lo || c.args.size() > hi)
    c.fail(DiagCode::FrontendPythonError,
           "TypeError: " + c.name + "() takes " + std::to_string(lo) +
               (lo == hi ? "" : " to " + std::to_string(hi)) + " arguments (" +
               std::to_string(c.args.size()) + " given)");
}
/// The keyword arguments each builtin takes here; any other would be ignored, so it is refused
/// (sorted(x, reverse=True) once sorted ascending).
void checkKeywords(CallContext &c) {
  static const std::map<std::string, std::set<std::string>> accepted = {
      {"enumerate", {"start"}}, {"sorted", {"key", "reverse"}}, {"min", {"key", "default"}},
      {"max", {"key", "default"}}, {"sum", {"start"}}, {"zip", {"strict"}},
      {"print", {"sep", "end", "file", "flush"}}};
  if (c.kwargs.empty() || c.name == "dict" || isBuiltinException(c.name))
    return;
  auto it = accepted.find(c.name);
  for (const auto &[k, v] : c.kwargs)
    if (it == accepted.end() || !it->second.count(k))
      c.fail(DiagCode::FrontendUnsupportedCall,
             "builtin " + c.name + "() with the keyword argument " + k + "= is not supported");
}
} // namespace

VarPtr Executor::callNow(ExecState &state, StatementIR &sir, VarPtr callable,
                         std::vector<VarPtr> args, Kwargs kwargs) {
  size_t depth = state.frames.size();
  HandlerFloor floor(handlerFloor_, depth);
  call(state, sir, std::move(callable), std::move(args), std::move(kwargs));
  runNested(state, sir, depth, "a function that a builtin calls (map, filter, sorted's key)");
  Frame &caller = state.frames.back();
  VarPtr result = caller.stack.back();
  caller.stack.pop_back();
  return result;
}

void Executor::runNested(ExecState &state, StatementIR &sir, size_t depth,
                         const std::string &what) {
  while (state.frames.size() > depth && !pendingBreak_) {
    Break b = step(state, sir);
    if (b.kind != Break::Kind::None)
      pendingBreak_ = b;
    if (state.frames.size() == depth + 1 && state.frames.back().yielded)
      return;
  }
  if (pendingBreak_)
    fail(DiagCode::FrontendUnsupportedConstruct,
         "a graph break (" + pendingBreak_->reason + ") inside " + what + " is not supported",
         state.frames[depth - 1]);
}

VarPtr makePartial(VarPtr func, std::vector<VarPtr> args, Kwargs keywords, Tracker tracker) {
  VarPtr p = Variable::make(K::Opaque, std::move(tracker));
  p->name = "functools.partial";
  p->self = std::move(func);
  p->items = std::move(args);
  p->kwdefaults = std::move(keywords);
  return p;
}

VarPtr Executor::refusal(const std::string &opName, const std::string &subject, const Frame &f) {
  std::string reason = ops::refusalSuffix(opName);
  std::string message =
      subject + " is not in the operator table" + reason + " (`sotc ops` lists what is)";
  // A refused operator is pure: unused, its call is dead code.
  return reason.empty() ? unsupportedCall(message, f) : refusedPureCall(message, f);
}

VarPtr Executor::recordedConstantCall(const VarPtr &function, const std::vector<VarPtr> &args,
                                      const Kwargs &kwargs) {
  if (function->self || function->functionIndex < 0)
    return nullptr;
  auto same = [&](const VarPtr &given, const trace::Value &recorded) {
    VarPtr r = fromTrace(recorded, constTracker());
    return given->isConstant() && r->isConstant() && given->constant == r->constant;
  };
  for (const trace::ConstantCall &c : trace_.functions(function->functionIndex).constant_calls()) {
    if (c.args_size() != static_cast<int>(args.size()) ||
        c.keywords_size() != static_cast<int>(kwargs.size()))
      continue;
    bool match = true;
    for (size_t i = 0; i < args.size() && match; ++i)
      match = same(args[i], c.args(static_cast<int>(i)));
    for (const auto &[name, value] : kwargs) {
      auto k = std::find_if(c.keywords().begin(), c.keywords().end(),
                            [&](const trace::NamedValue &n) { return n.name() == name; });
      match = match && k != c.keywords().end() && same(value, k->value());
    }
    if (match)
      return fromTrace(c.result(), constTracker());
  }
  return nullptr;
}

void Executor::call(ExecState &state, StatementIR &sir, VarPtr callable, std::vector<VarPtr> args,
                    Kwargs kwargs) {
  if (callable->kind == K::Opaque && callable->name == "functools.partial" && callable->self) {
    // partial(f, *a, **k)(*b, **j) is f(*a, *b, **{**k, **j}).
    args.insert(args.begin(), callable->items.begin(), callable->items.end());
    for (const auto &[name, value] : callable->kwdefaults)
      if (std::none_of(kwargs.begin(), kwargs.end(), [&](auto &kw) { return kw.first == name; }))
        kwargs.push_back({name, value});
    return call(state, sir, callable->self, std::move(args), std::move(kwargs));
  }
  Frame &f = state.frames.back();
  if (callable->kind == K::Builtin && callable->name == "constant result") {
    if (!args.empty() || !kwargs.empty())
      fail(DiagCode::FrontendPythonError, "TypeError: the function takes no arguments", f);
    f.stack.push_back(callable->self); // what it returned when traced (Value.constant_result)
    return;
  }
  // A call of, or on, an unsupported call's result: unsupported too, and already reported.
  bool unsupported = anyUnsupported(callable, callable->self);
  for (const VarPtr &a : args)
    unsupported |= usesUnsupported(a);
  for (const auto &kv : kwargs)
    unsupported |= usesUnsupported(kv.second);
  if (unsupported) {
    f.stack.push_back(unsupportedResult());
    return;
  }
  if (callAutograd(state, callable, args, kwargs))
    return;
  if (callable->kind == K::Function) {
    if (VarPtr result = recordedConstantCall(callable, args, kwargs)) {
      f.stack.push_back(result);
      return;
    }
    if (callable->self) // a method of an object (or a classmethod): self comes first
      args.insert(args.begin(), callable->self);
    pushFrame(state, callable, std::move(args), std::move(kwargs));
    return;
  }
  if (callable->kind == K::Object && callable->layer) {
    if (!callable->hooks.empty() || !callable->forwardHooks.empty())
      callHookedLayer(state, sir, callable, std::move(args), std::move(kwargs));
    else
      callLayer(state, sir, callable, std::move(args), std::move(kwargs));
    return;
  }
  if (callable->kind == K::Object) { // obj(...) is obj.__call__(...)
    VarPtr method = classMember(callable, "__call__", locOf(f));
    if (!method)
      fail(DiagCode::FrontendPythonError,
           "TypeError: '" + callable->typeName() + "' object is not callable", f);
    call(state, sir, method, std::move(args), std::move(kwargs));
    return;
  }
  if (callable->kind == K::Class) { // a new object, then its __init__
    if (trace_.classes(callable->classIndex).record_fields_size()) { // a ModelOutput
      f.stack.push_back(makeRecord(f, callable, args, kwargs));
      return;
    }
    // An exception class of the program's (class NotFound(KeyError)): an exception object.
    if (std::string base = builtinExceptionBase(callable->classIndex); !base.empty()) {
      if (classMember(callable, "__init__", locOf(f)) || !kwargs.empty())
        fail(DiagCode::FrontendUnsupportedConstruct,
             "an exception class with an __init__ of its own (" + callable->name +
                 ") is not supported",
             f);
      f.stack.push_back(makeException(base, callable->classIndex, callable->name, args));
      return;
    }
    if (trace_.classes(callable->classIndex).has_layer_constructor()) {
      VarPtr layer = constructLayer(state, callable, std::move(args), std::move(kwargs));
      state.frames.back().stack.push_back(layer);
      return;
    }
    VarPtr object = Variable::make(K::Object, computedFrom(args));
    object->classIndex = callable->classIndex;
    object->name = callable->name;
    object->madeHere = true;
    // A layer class the code constructs (transformers' ACT2FN["silu"] makes its activation
    // at every call): a layer, in training mode as the framework makes it; a weight its
    // __init__ would draw is refused where the layer holding it is constructed.
    if ((object->layer = isLayerClass(callable->classIndex))) {
      object->keys.push_back(Variable::constant_(PyConst::ofStr("training"), constTracker()));
      object->items.push_back(Variable::constant_(PyConst::ofBool(true), constTracker()));
    }
    if (VarPtr init = classMember(object, "__init__", locOf(f)))
      callNow(state, sir, init, std::move(args), std::move(kwargs));
    else if (!args.empty() || !kwargs.empty())
      fail(DiagCode::FrontendPythonError, "TypeError: " + callable->name + "() takes no arguments",
           f);
    state.frames.back().stack.push_back(object);
    return;
  }
  CallContext c{*this,
                state,
                sir,
                locOf(f),
                callable->name,
                callable->self,
                std::move(args),
                std::move(kwargs)};
  switch (callable->kind) {
  case K::External:
    // Complex numbers are pairs of reals (ComplexTensors.cpp), not operators of the table.
    if (makesComplex(c.name) || std::any_of(c.args.begin(), c.args.end(), [&](const VarPtr &a) {
          return holdsComplex(a);
        }))
      return c.push(tensorCall(c.f(), sir, "api", c.name, c.name, c.args, c.kwargs));
    if (producedSizeCall(f, sir, c.name, nullptr, c.args, c.kwargs) || callModuleFunction(c))
      return;
    if (VarPtr cls = constructibleLayerClass(c.name))
      return c.push(constructLayer(state, cls, std::move(c.args), std::move(c.kwargs)));
    if (c.breakOn(c.name, c.name, c.args))
      return;
    c.push(refusal(c.name, "cannot compile a call to " + c.name + ": it", c.f()));
    return;
  case K::Method: {
    if (!c.self && callable->classIndex >= 0 && !c.args.empty()) { // Leaf.forward(layer, x)
      c.self = c.args.front();
      c.args.erase(c.args.begin());
    }
    const VarPtr &self = c.self;
    if (self->isTensor() && (self->complexPair || makesComplex("torch.Tensor." + c.name))) {
      // its pairs, or x.stft(...) (ComplexTensors.cpp)
      c.args.insert(c.args.begin(), self);
      return c.push(tensorCall(c.f(), sir, "method", c.name, "torch.Tensor." + c.name, c.args,
                               c.kwargs));
    }
    if (self->isTensor()) {
      if (dispatch(tensorMethods(), c) || producedSizeCall(f, sir, c.name, self, c.args, c.kwargs))
        return;
      const ops::OpTable &table = ops::OpTable::get();
      // x.name(...) is the method's entry, else the framework's function of that name whose
      // every signature takes the tensor first (torch's `input`, paddle's `x`): x.relu() is
      // torch.relu(x), but x.where(c, y) is not torch.where(x, c, y).
      auto entryOf = [&](const std::string &name) {
        bool torch = framework_ == "torch";
        std::string method = (torch ? "torch.Tensor." : "Tensor.") + name;
        const ops::OpEntry *function = table.lookup((torch ? "torch." : "paddle.") + name);
        bool selfFirst = function && std::all_of(function->signatures.begin(),
                                                 function->signatures.end(), [&](const auto &s) {
                                                   return !s.params.empty() &&
                                                          s.params[0].name ==
                                                              (torch ? "input" : "x");
                                                 });
        return table.lookup(method) || !selfFirst ? method : function->name;
      };
      std::string opName = entryOf(c.name);
      std::string plain = c.name.substr(0, c.name.size() - 1);
      if (!table.lookup(opName) && c.name.size() > 1 && c.name.back() == '_' &&
          table.lookup(entryOf(plain))) {
        // x.add_(y): the functional x.add(y), written back into x (its dtype and shape).
        c.args.insert(c.args.begin(), self);
        VarPtr result = c.tensorCall("method", plain, entryOf(plain), std::move(c.args),
                                     std::move(c.kwargs));
        if (!result->isTensor())
          c.fail(DiagCode::FrontendUnsupportedCall,
                 "tensor method '" + c.name + "' updates in place what returns several tensors");
        // x.squeeze_(-1), x.t_(): x itself takes the new shape (its metadata, in torch).
        static const std::set<std::string> reshaping = {"squeeze", "unsqueeze", "transpose",
                                                        "t",       "swapaxes",  "swapdims"};
        if (reshaping.count(plain)) {
          c.push(c.resizeInPlace(self, result));
          return;
        }
        c.push(c.fillInPlace(self, result));
        return;
      }
      if (!table.lookup(opName))
        return c.push(refusal(opName, "tensor method '" + c.name + "'", c.f()));
      c.args.insert(c.args.begin(), self);
      if (!c.breakOn(c.name, opName, c.args))
        c.push(c.tensorCall("method", c.name, opName, std::move(c.args), std::move(c.kwargs)));
      return;
    }
    if (self->kind == K::Object && self->layer && callable->classIndex >= 0) { // super().forward
      callLayerEntry(state, sir, self,
                     ops::lookupLayer(trace_.classes(callable->classIndex).library_name()),
                     std::move(c.args), std::move(c.kwargs));
      return;
    }
    if (isRecord(self) && c.name == "to_tuple" && c.args.empty() && c.kwargs.empty())
      return c.push(makeSequence(K::Tuple, recordItems(self)->items, {self}));
    bool str = self->isConstant() && self->constant.kind == PyConst::Kind::Str;
    const CallTable *methods = self->kind == K::List ? &listMethods()
                               : isSet(self)         ? &setMethods()
                               : self->kind == K::Tuple ? &tupleMethods()
                                   : self->kind == K::Dict ? &dictMethods()
                                     : str                 ? &strMethods()
                                                           : nullptr;
    if (!methods || !dispatch(*methods, c))
      c.fail(DiagCode::FrontendUnsupportedCall,
             "method '" + c.name + "' of a " + self->typeName() + " is not supported");
    return;
  }
  case K::Builtin:
    checkArity(c);
    checkKeywords(c);
    if (isBuiltinException(c.name)) // ValueError("..."): an exception object `raise` raises
      return c.push(makeException(c.name, -1, c.name, c.args));
    if (!dispatch(builtinFunctions(), c))
      c.fail(DiagCode::FrontendUnsupportedCall,
             "builtin " + c.name + "() with these arguments is not supported");
    return;
  default:
    break;
  }
  if (callable->kind == K::Opaque && callable->name.rfind("bound method ", 0) == 0)
    fail(DiagCode::FrontendUnsupportedCall,
         "calling a " + callable->name +
             " passed in is not supported yet: pass the tensor and call the method inside",
         f);
  fail(DiagCode::FrontendUnsupportedCall,
       "cannot call a " + callable->typeName() +
           (callable->name.empty() ? "" : " (" + callable->name + ")"),
       f);
}

} // namespace sotc::frontend
