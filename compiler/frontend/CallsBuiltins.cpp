//===- CallsBuiltins.cpp - Python's builtin functions on Variables ------------------------===//
//
// Builtins fold on Python values, iterate containers item by item, and reach tensors only
// where Python would call a tensor operator (abs, sum); what needs tensor values on the host
// (print, min/max over tensors, int(x)) is a host callback or a coded error.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace sotc::frontend {
namespace {
using K = Variable::Kind;

bool print(CallContext &c) {
  if (c.hostCallback("print", c.args, c.kwargs, none()))
    return true;
  c.hostError("print()");
}

bool len(CallContext &c) {
  VarPtr a = c.args[0];
  if (a->isTensor()) {
    c.consume(a);
    if (a->meta.shape.empty() || a->meta.shape[0] == ops::kDynamic)
      c.fail(DiagCode::FrontendHostInteraction, "len() of a tensor with a dynamic first dimension");
    c.push(makeConst(PyConst::ofInt(a->meta.shape[0]), {a}));
    return true;
  }
  size_t n = a->kind == K::Dict ? a->keys.size() : c.iterate(a).size();
  c.push(makeConst(PyConst::ofInt(static_cast<int64_t>(n)), {a}));
  return true;
}

bool range(CallContext &c) {
  c.consumeArgs();
  for (const VarPtr &a : c.args)
    if (!isInt(a))
      c.fail(DiagCode::FrontendPythonError,
             "TypeError: range() arguments must be integers, not " + a->typeName());
  const std::vector<VarPtr> &args = c.args;
  VarPtr r = Variable::make(K::Range, computedFrom(args));
  r->start = args.size() > 1 ? args[0]->constant.intValue : 0;
  r->stop = args.size() > 1 ? args[1]->constant.intValue : args[0]->constant.intValue;
  r->step = args.size() > 2 ? args[2]->constant.intValue : 1;
  if (r->step == 0)
    c.fail(DiagCode::FrontendPythonError, "ValueError: range() arg 3 must not be zero");
  c.push(r);
  return true;
}

bool isinstance(CallContext &c) {
  const VarPtr &value = c.args[0];
  std::vector<VarPtr> types =
      c.args[1]->kind == K::Tuple ? c.args[1]->items : std::vector<VarPtr>{c.args[1]};
  std::string t = value->typeName();
  bool r = false;
  for (const VarPtr &ty : types)
    r |= (ty->kind == K::Builtin &&
          (ty->name == t || (ty->name == "int" && t == "bool") || (ty->name == "object"))) ||
         (ty->kind == K::External && value->isTensor() &&
          (ty->name == "paddle.Tensor" || ty->name == "torch.Tensor"));
  c.consume(value);
  c.push(makeConst(PyConst::ofBool(r), {value}));
  return true;
}

/// set() / frozenset(): kept as a tuple of distinct constant items, named by its type.
bool set(CallContext &c) {
  if (c.args.size() > 1)
    return false;
  VarPtr set = makeSequence(K::Tuple, {}, c.args);
  set->name = c.name;
  for (const VarPtr &item : c.args.empty() ? std::vector<VarPtr>{} : c.iterate(c.args[0]))
    if (std::none_of(set->items.begin(), set->items.end(), [&](const VarPtr &x) {
          return x->isConstant() && item->isConstant() && x->constant == item->constant;
        }))
      set->items.push_back(item);
  c.push(set);
  return true;
}

bool sequence(CallContext &c) {
  if (c.args.size() > 1)
    return false;
  c.push(makeSequence(c.name == "tuple" ? K::Tuple : K::List,
                      c.args.empty() ? std::vector<VarPtr>{} : c.iterate(c.args[0]), c.args));
  return true;
}

bool dict(CallContext &c) {
  if (!c.args.empty())
    return false;
  VarPtr d = Variable::make(K::Dict, computedFrom({}));
  for (auto &[k, v] : c.kwargs) {
    d->keys.push_back(makeConst(PyConst::ofStr(k), {}));
    d->items.push_back(v);
  }
  c.push(d);
  return true;
}

/// An iterator over `items`, made from the call's arguments.
bool pushIterator(CallContext &c, std::vector<VarPtr> items) {
  c.consumeArgs();
  VarPtr it = Variable::make(K::Iterator, computedFrom(c.args));
  it->items = std::move(items);
  c.push(it);
  return true;
}

bool enumerate(CallContext &c) {
  int64_t start = c.args.size() > 1 ? c.args[1]->constant.intValue : 0;
  std::vector<VarPtr> src = c.iterate(c.args[0]), items;
  for (size_t i = 0; i < src.size(); ++i)
    items.push_back(makeSequence(
        K::Tuple, {makeConst(PyConst::ofInt(start + static_cast<int64_t>(i)), {c.args[0]}), src[i]},
        {c.args[0]}));
  return pushIterator(c, items);
}

bool zip(CallContext &c) {
  std::vector<std::vector<VarPtr>> srcs;
  size_t n = SIZE_MAX;
  for (const VarPtr &a : c.args) {
    srcs.push_back(c.iterate(a));
    n = std::min(n, srcs.back().size());
  }
  std::vector<VarPtr> items;
  for (size_t i = 0; i < (c.args.empty() ? 0 : n); ++i) {
    std::vector<VarPtr> t;
    for (auto &s : srcs)
      t.push_back(s[i]);
    items.push_back(makeSequence(K::Tuple, t, c.args));
  }
  return pushIterator(c, items);
}

bool iter(CallContext &c) { return pushIterator(c, c.iterate(c.args[0])); }

bool reversed(CallContext &c) {
  std::vector<VarPtr> items = c.iterate(c.args[0]);
  std::reverse(items.begin(), items.end());
  return pushIterator(c, items);
}

bool sorted(CallContext &c) {
  std::vector<VarPtr> items = c.iterate(c.args[0]);
  c.consumeArgs();
  for (const VarPtr &v : items)
    if (!v->isConstant() || !(v->constant.isNumber() || v->constant.kind == PyConst::Kind::Str))
      c.fail(DiagCode::FrontendUnsupportedConstruct, "sorted() of non-constant values");
  std::stable_sort(items.begin(), items.end(), [](const VarPtr &x, const VarPtr &y) {
    return x->constant.isNumber() ? x->constant.number() < y->constant.number()
                                  : x->constant.text < y->constant.text;
  });
  c.push(makeSequence(K::List, items, c.args));
  return true;
}

/// min / max / sum / all / any.
bool aggregate(CallContext &c) {
  if (c.args.empty())
    return false;
  const std::string &b = c.name;
  bool overIterable = c.args.size() == 1 || b == "sum" || b == "all" || b == "any";
  std::vector<VarPtr> items = overIterable ? c.iterate(c.args[0]) : c.args;
  bool tensors =
      std::any_of(items.begin(), items.end(), [](const VarPtr &v) { return v->isTensor(); });
  if (tensors && b != "sum")
    c.fail(DiagCode::FrontendHostInteraction,
           b + "() over tensors compares tensor values on the host");
  if (b == "sum") { // of tensors: a chain of additions
    if (!tensors)
      for (const VarPtr &v : items)
        c.consume(v);
    VarPtr acc = c.args.size() > 1 ? c.args[1] : makeConst(PyConst::ofInt(0), {});
    for (const VarPtr &v : items)
      acc = c.add(acc, v);
    c.push(acc);
    return true;
  }
  for (const VarPtr &v : items)
    c.consume(v);
  if (b == "all" || b == "any") {
    bool r = b == "all";
    for (const VarPtr &v : items) {
      bool t = c.truthy(v);
      r = b == "all" ? r && t : r || t;
    }
    c.push(makeConst(PyConst::ofBool(r), c.args));
    return true;
  }
  if (items.empty())
    c.fail(DiagCode::FrontendPythonError, "ValueError: " + b + "() arg is an empty sequence");
  VarPtr best = items[0];
  for (const VarPtr &v : items)
    if (c.compare(b == "min" ? "<" : ">", v, best)->constant.boolValue)
      best = v;
  c.push(best);
  return true;
}

/// abs / int / float / bool / str / repr / round of one value.
bool convert(CallContext &c) {
  if (c.args.empty())
    return false;
  const std::string &b = c.name;
  VarPtr a = c.args[0];
  if (a->isTensor()) {
    if (b == "abs") {
      c.push(c.tensorCall("operator", "__abs__", "__abs__", {a}, {}));
      return true;
    }
    c.hostError(b + "() of a tensor");
  }
  c.consume(a);
  if (b == "bool") {
    c.push(makeConst(PyConst::ofBool(c.truthy(a)), {a}));
    return true;
  }
  if (b == "str" || b == "repr") {
    c.push(makeConst(PyConst::ofStr(b == "str" && a->isConstant() ? a->constant.str() : a->repr()),
                     {a}));
    return true;
  }
  if (!a->isConstant())
    c.fail(DiagCode::FrontendPythonError,
           "TypeError: " + b + "() argument must be a number, not " + a->typeName());
  const PyConst &k = a->constant;
  if (b == "int" && k.kind == PyConst::Kind::Str) {
    c.push(makeConst(PyConst::ofInt(std::stoll(k.text)), {a}));
    return true;
  }
  if (!k.isNumber())
    c.fail(DiagCode::FrontendPythonError,
           "TypeError: " + b + "() argument must be a number, not " + k.typeName());
  if (b == "abs")
    c.push(makeConst(k.kind == PyConst::Kind::Float
                         ? PyConst::ofFloat(std::fabs(k.floatValue))
                         : PyConst::ofInt(std::llabs(static_cast<int64_t>(k.number()))),
                     {a}));
  else if (b == "int")
    c.push(makeConst(PyConst::ofInt(static_cast<int64_t>(std::trunc(k.number()))), {a}));
  else if (b == "float")
    c.push(makeConst(PyConst::ofFloat(k.number()), {a}));
  else if (c.args.size() == 1)
    c.push(makeConst(PyConst::ofInt(static_cast<int64_t>(std::nearbyint(k.number()))), {a}));
  else {
    c.consume(c.args[1]);
    double scale = std::pow(10.0, c.args[1]->constant.number());
    c.push(makeConst(PyConst::ofFloat(std::nearbyint(k.number() * scale) / scale), c.args));
  }
  return true;
}

bool next(CallContext &c) {
  if (c.args.empty() || c.args[0]->kind != K::Iterator)
    return false;
  VarPtr it = c.args[0];
  if (it->position < it->items.size()) {
    c.push(it->items[it->position++]);
    return true;
  }
  if (c.args.size() > 1) {
    c.push(c.args[1]);
    return true;
  }
  c.fail(DiagCode::FrontendPythonError, "StopIteration");
}

bool getattr(CallContext &c) {
  if (c.args.size() < 2 || !c.args[1]->isConstant())
    return false;
  c.push(c.getAttr(c.args[0], c.args[1]->constant.text));
  return true;
}

bool slice(CallContext &c) {
  std::vector<VarPtr> args = c.args;
  while (args.size() < 3)
    args.push_back(none());
  if (args.size() == 3 && args[1]->isConstant() && args[1]->constant.kind == PyConst::Kind::None &&
      !(args[0]->isConstant() && args[0]->constant.kind == PyConst::Kind::None))
    std::swap(args[0], args[1]); // slice(stop)
  c.push(makeSequence(K::Slice, args, args));
  return true;
}

} // namespace

const CallTable &builtinFunctions() {
  static const CallTable table = {
      {"print", print},           {"len", len},       {"range", range},
      {"isinstance", isinstance}, {"set", set},       {"frozenset", set},
      {"tuple", sequence},        {"list", sequence}, {"dict", dict},
      {"enumerate", enumerate},   {"zip", zip},       {"iter", iter},
      {"reversed", reversed},     {"sorted", sorted}, {"min", aggregate},
      {"max", aggregate},         {"sum", aggregate}, {"all", aggregate},
      {"any", aggregate},         {"abs", convert},   {"int", convert},
      {"float", convert},         {"bool", convert},  {"str", convert},
      {"repr", convert},          {"round", convert}, {"next", next},
      {"getattr", getattr},       {"slice", slice},
  };
  return table;
}

} // namespace sotc::frontend
