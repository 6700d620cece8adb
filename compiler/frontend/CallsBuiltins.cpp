//===- CallsBuiltins.cpp - Python's builtin functions on Variables ------------------------===//
//
// Builtins fold on Python values, iterate containers item by item, and reach tensors only
// where Python would call a tensor operator (abs, sum); what needs tensor values on the host
// (print, min/max over tensors, int(x)) is a host callback or a coded error.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"

#include "compiler/ops/OpTable.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <set>

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
    if (a->meta.shape.empty())
      c.fail(DiagCode::FrontendPythonError, "TypeError: len() of a 0-d tensor");
    if (ops::isDynamicDim(a->meta.shape[0])) // as x.shape[0] is: len(keep) of kept boxes
      return c.push(makeDynamicSize(a->meta.shape[0], {a})), true;
    c.consume(a);
    c.push(makeConst(PyConst::ofInt(a->meta.shape[0]), {a}));
    return true;
  }
  if (a->kind == K::Iterator)
    c.fail(DiagCode::FrontendPythonError,
           "TypeError: object of type '" + a->typeName() + "' has no len()");
  if (a->kind == K::Object && !a->layer)
    if (VarPtr method = c.classMember(a, "__len__")) {
      c.push(c.callNow(method, {}));
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

/// super(cls, obj), and super() in a method: its class cell and its first argument.
bool super(CallContext &c) {
  if (c.args.size() == 2) {
    c.push(c.makeSuper(c.args[0], c.args[1]));
    return true;
  }
  if (!c.args.empty())
    return false;
  const Frame &f = c.f();
  const trace::CodeObject &code = c.ex.trace().code_objects(f.codeIndex);
  auto cellValue = [](const VarPtr &v) { return v && v->kind == K::Cell ? v->self : v; };
  const auto &free = code.freevars();
  auto it = std::find(free.begin(), free.end(), "__class__");
  if (it == free.end() || code.argcount() == 0 || f.localsplus.empty())
    c.fail(DiagCode::FrontendPythonError, "RuntimeError: super(): no arguments");
  VarPtr cls = cellValue(f.localsplus[f.localsplus.size() - free.size() + (it - free.begin())]);
  c.push(c.makeSuper(cls, cellValue(f.localsplus[0])));
  return true;
}

/// isinstance(value, collections.abc.X) for the abstract classes library helpers test (torch's
/// _ntuple: Iterable), decided by the value's kind.
bool abstractBase(const VarPtr &value, const std::string &abc) {
  bool text = value->isConstant() && (value->constant.kind == PyConst::Kind::Str ||
                                      value->constant.kind == PyConst::Kind::Bytes);
  bool sequence =
      value->kind == K::Tuple || value->kind == K::List || value->kind == K::Range || text;
  if (abc == "collections.abc.Sequence")
    return sequence;
  if (abc == "collections.abc.Mapping")
    return value->kind == K::Dict;
  if (abc == "collections.abc.Iterable" || abc == "collections.abc.Collection" ||
      abc == "collections.abc.Sized" || abc == "collections.abc.Container")
    return sequence || value->kind == K::Dict || value->isTensor() ||
           (abc == "collections.abc.Iterable" && value->kind == K::Iterator);
  return false;
}

bool isinstance(CallContext &c) {
  const VarPtr &value = c.args[0];
  std::vector<VarPtr> types =
      c.args[1]->kind == K::Tuple ? c.args[1]->items : std::vector<VarPtr>{c.args[1]};
  std::string t = value->typeName();
  // An object's classes: its class's MRO, by index and, for a library's, by public name.
  std::vector<uint32_t> mro;
  if (value->kind == K::Object)
    for (uint32_t i : c.ex.trace().classes(value->classIndex).mro())
      mro.push_back(i);
  auto inMro = [&](const VarPtr &ty) {
    return std::any_of(mro.begin(), mro.end(), [&](uint32_t i) {
      const trace::ClassDef &cls = c.ex.trace().classes(i);
      return ty->kind == K::Class ? static_cast<int>(i) == ty->classIndex
                                  : !cls.library_name().empty() && cls.library_name() == ty->name;
    });
  };
  bool r = false;
  for (const VarPtr &ty : types)
    r |= (ty->kind == K::Builtin &&
          (ty->name == t || (ty->name == "int" && t == "bool") || (ty->name == "object"))) ||
         (ty->kind == K::External && value->isTensor() &&
          (ty->name == "paddle.Tensor" || ty->name == "torch.Tensor")) ||
         (ty->kind == K::External && abstractBase(value, ty->name)) ||
         ((ty->kind == K::Class || ty->kind == K::External) && inMro(ty));
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

/// dict(), dict(mapping), dict(pairs), each with keyword items after.
bool dict(CallContext &c) {
  if (c.args.size() > 1)
    return false;
  VarPtr d = Variable::make(K::Dict, computedFrom(c.args));
  auto put = [&](VarPtr key, VarPtr value) {
    if (!key->isConstant())
      c.fail(DiagCode::FrontendUnsupportedConstruct, "dict keys must be Python constants");
    c.consume(key);
    for (size_t i = 0; i < d->keys.size(); ++i)
      if (d->keys[i]->constant == key->constant) {
        d->items[i] = value;
        return;
      }
    d->keys.push_back(key);
    d->items.push_back(value);
  };
  if (!c.args.empty() && c.args[0]->kind == K::Dict) {
    for (size_t i = 0; i < c.args[0]->keys.size(); ++i)
      put(c.args[0]->keys[i], c.args[0]->items[i]);
  } else if (!c.args.empty()) {
    for (const VarPtr &pair : c.iterate(c.args[0])) {
      std::vector<VarPtr> kv = c.iterate(pair);
      if (kv.size() != 2)
        c.fail(DiagCode::FrontendPythonError,
               "ValueError: dictionary update sequence element has length " +
                   std::to_string(kv.size()) + "; 2 is required");
      put(kv[0], kv[1]);
    }
  }
  for (auto &[k, v] : c.kwargs)
    put(makeConst(PyConst::ofStr(k), {}), v);
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

/// Whether `v` computes its items when pulled (a generator, or an adaptor over one).
bool lazy(const VarPtr &v) {
  return v->kind == K::Iterator && (v->generator || !v->name.empty());
}

/// enumerate/zip/map/filter over a lazy iterator: an adaptor that pulls its sources item by
/// item as it is pulled (Executor::nextItem), as CPython's do.
bool pushAdaptor(CallContext &c, std::vector<VarPtr> sources, VarPtr fn, int64_t start) {
  c.consumeArgs();
  VarPtr it = Variable::make(K::Iterator, computedFrom(c.args));
  it->name = c.name;
  it->items = std::move(sources);
  it->self = std::move(fn);
  it->start = start;
  c.push(it);
  return true;
}

/// iter(v) for an adaptor's source: an iterator itself, anything else its items.
VarPtr iteratorOf(CallContext &c, const VarPtr &v) {
  return v->kind == K::Iterator ? v : makeSequence(K::Iterator, c.iterate(v), {v});
}

/// A keyword argument's value, or null.
VarPtr keyword(const CallContext &c, const std::string &name) {
  for (const auto &[k, v] : c.kwargs)
    if (k == name)
      return v;
  return nullptr;
}

bool enumerate(CallContext &c) {
  VarPtr from = c.args.size() > 1 ? c.args[1] : keyword(c, "start");
  if (from && !isInt(from))
    c.fail(DiagCode::FrontendPythonError,
           "TypeError: enumerate()'s start must be an integer, not " + from->typeName());
  if (from)
    c.consume(from);
  int64_t start = from ? from->constant.intValue : 0;
  if (lazy(c.args[0]))
    return pushAdaptor(c, {c.args[0]}, nullptr, start);
  std::vector<VarPtr> src = c.iterate(c.args[0]), items;
  for (size_t i = 0; i < src.size(); ++i)
    items.push_back(makeSequence(
        K::Tuple, {makeConst(PyConst::ofInt(start + static_cast<int64_t>(i)), {c.args[0]}), src[i]},
        {c.args[0]}));
  return pushIterator(c, items);
}

bool zip(CallContext &c) {
  if (std::any_of(c.args.begin(), c.args.end(), lazy) && c.kwargs.empty()) {
    std::vector<VarPtr> sources;
    for (const VarPtr &a : c.args)
      sources.push_back(iteratorOf(c, a));
    return pushAdaptor(c, sources, nullptr, 0);
  }
  std::vector<std::vector<VarPtr>> srcs;
  size_t n = SIZE_MAX;
  for (const VarPtr &a : c.args) {
    srcs.push_back(c.iterate(a));
    n = std::min(n, srcs.back().size());
  }
  if (VarPtr strict = keyword(c, "strict"); strict && c.truthy(strict))
    for (size_t i = 0; i < srcs.size(); ++i)
      if (srcs[i].size() != n)
        c.fail(DiagCode::FrontendPythonError,
               "ValueError: zip() argument " + std::to_string(i + 1) + " is " +
                   (srcs[i].size() > n ? "longer" : "shorter") + " than the others");
  std::vector<VarPtr> items;
  for (size_t i = 0; i < (c.args.empty() ? 0 : n); ++i) {
    std::vector<VarPtr> t;
    for (auto &s : srcs)
      t.push_back(s[i]);
    items.push_back(makeSequence(K::Tuple, t, c.args));
  }
  return pushIterator(c, items);
}

bool iter(CallContext &c) {
  if (c.args.size() == 1 && c.args[0]->kind == K::Iterator) { // iter(it) is it
    c.push(c.args[0]);
    return true;
  }
  return pushIterator(c, c.iterate(c.args[0]));
}

bool reversed(CallContext &c) {
  std::vector<VarPtr> items = c.iterate(c.args[0]);
  std::reverse(items.begin(), items.end());
  return pushIterator(c, items);
}

/// Each item's sort key: key(item) when a key function is given (None: the item itself); a
/// number or a string the translation can compare.
std::vector<VarPtr> sortKeys(CallContext &c, const std::vector<VarPtr> &items, const VarPtr &key) {
  std::vector<VarPtr> keys;
  for (const VarPtr &v : items) {
    VarPtr k = key && !(key->isConstant() && key->constant.kind == PyConst::Kind::None)
                   ? c.callNow(key, {v})
                   : v;
    if (!k->isConstant() || !(k->constant.isNumber() || k->constant.kind == PyConst::Kind::Str))
      c.fail(DiagCode::FrontendUnsupportedConstruct,
             c.name + "() comparing values that are not constant numbers or strings");
    c.consume(k);
    keys.push_back(k);
  }
  return keys;
}

bool keyLess(const VarPtr &x, const VarPtr &y) {
  return x->constant.isNumber() ? x->constant.number() < y->constant.number()
                                : x->constant.text < y->constant.text;
}

/// sorted(iterable, key=None, reverse=False): stable either way, as Python's.
bool sorted(CallContext &c) {
  std::vector<VarPtr> items = c.iterate(c.args[0]);
  c.consume(c.args[0]);
  std::vector<VarPtr> keys = sortKeys(c, items, keyword(c, "key"));
  VarPtr reverseArg = keyword(c, "reverse");
  bool reverse = reverseArg && c.truthy(reverseArg);
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return reverse ? keyLess(keys[b], keys[a]) : keyLess(keys[a], keys[b]);
  });
  std::vector<VarPtr> out;
  for (size_t i : order)
    out.push_back(items[i]);
  c.push(makeSequence(K::List, out, c.args));
  return true;
}

/// min / max / sum / all / any.
bool aggregate(CallContext &c) {
  if (c.args.empty())
    return false;
  const std::string &b = c.name;
  bool overIterable = c.args.size() == 1 || b == "sum" || b == "all" || b == "any";
  if ((b == "all" || b == "any") && c.args.size() == 1 && lazy(c.args[0])) {
    // Pulled until an item decides, as CPython does: the items after it are never computed.
    bool found = false; // an item that is true (any) or false (all)
    while (std::optional<VarPtr> item = c.next(c.args[0])) {
      if ((*item)->isTensor())
        c.fail(DiagCode::FrontendHostInteraction,
               b + "() over tensors compares tensor values on the host");
      c.consume(*item);
      if ((found = c.truthy(*item) == (b == "any")))
        break;
    }
    c.push(makeConst(PyConst::ofBool(b == "any" ? found : !found), c.args));
    return true;
  }
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
    VarPtr start = c.args.size() > 1 ? c.args[1] : keyword(c, "start");
    VarPtr acc = start ? start : makeConst(PyConst::ofInt(0), {});
    for (const VarPtr &v : items)
      acc = c.add(acc, v);
    c.push(acc);
    return true;
  }
  if ((b == "min" || b == "max") && !keyword(c, "key") &&
      c.ex.countedExtreme(c.f(), c.sir, b, items))
    return true;
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
  VarPtr fallback = keyword(c, "default");
  if (items.empty() && fallback)
    return c.push(fallback), true;
  if (items.empty())
    c.fail(DiagCode::FrontendPythonError, "ValueError: " + b + "() arg is an empty sequence");
  if (VarPtr key = keyword(c, "key")) { // the first item whose key is least (or greatest)
    std::vector<VarPtr> keys = sortKeys(c, items, key);
    size_t best = 0;
    for (size_t i = 1; i < items.size(); ++i)
      if (b == "min" ? keyLess(keys[i], keys[best]) : keyLess(keys[best], keys[i]))
        best = i;
    c.push(items[best]);
    return true;
  }
  VarPtr best = items[0];
  for (const VarPtr &v : items)
    if (c.truthy(c.compare(b == "min" ? "<" : ">", v, best)))
      best = v;
  c.push(best);
  return true;
}

/// int(text) / float(text) as Python reads them: surrounding whitespace, underscores between
/// digits, and for float inf, infinity and nan in any case; ValueError otherwise.
PyConst numberFromString(CallContext &c, const std::string &type, const std::string &text) {
  auto refuse = [&] {
    c.fail(DiagCode::FrontendPythonError,
           type == "int" ? "ValueError: invalid literal for int() with base 10: '" + text + "'"
                         : "ValueError: could not convert string to float: '" + text + "'");
  };
  const char *space = " \t\n\r\f\v";
  size_t begin = text.find_first_not_of(space);
  std::string s = begin == std::string::npos
                      ? ""
                      : text.substr(begin, text.find_last_not_of(space) - begin + 1);
  std::string n;
  auto digit = [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; };
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != '_')
      n += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    else if (i == 0 || i + 1 == s.size() || !digit(s[i - 1]) || !digit(s[i + 1]))
      refuse();
  std::string bare = !n.empty() && (n[0] == '+' || n[0] == '-') ? n.substr(1) : n;
  if (type == "float" && (bare == "inf" || bare == "infinity" || bare == "nan"))
    return PyConst::ofFloat(bare == "nan" ? NAN : n[0] == '-' ? -INFINITY : INFINITY);
  bool numeral = !bare.empty() && std::all_of(bare.begin(), bare.end(), [&](char ch) {
    return digit(ch) || (type == "float" && (ch == '.' || ch == 'e' || ch == '+' || ch == '-'));
  });
  size_t used = 0;
  try {
    if (numeral && type == "int") {
      int64_t v = std::stoll(n, &used, 10);
      if (used == n.size())
        return PyConst::ofInt(v);
    } else if (numeral) {
      double v = std::stod(n, &used);
      if (used == n.size())
        return PyConst::ofFloat(v);
    }
  } catch (const std::exception &) { // out of range
  }
  refuse();
  return PyConst::none();
}

/// abs / int / float / bool / str / repr / round of one value.
bool convert(CallContext &c) {
  if (c.args.empty())
    return false;
  const std::string &b = c.name;
  VarPtr a = c.args[0];
  if (a->itemRead && b == "bool")
    return c.truthBranch(a, false);
  if (a->isTensor()) {
    if (b == "abs") {
      c.push(c.tensorCall("operator", "__abs__", "__abs__", {a}, {}));
      return true;
    }
    if (b == "bool")
      return c.truthBranch(a, false);
    c.hostError(b + "() of a tensor");
  }
  c.consume(a);
  if (b == "bool") {
    c.push(makeConst(PyConst::ofBool(c.truthy(a)), {a}));
    return true;
  }
  if (a->kind == K::Class && (b == "str" || b == "repr")) { // <class 'module.qualname'>
    std::string module = c.getAttr(a, "__module__")->constant.text;
    c.push(makeConst(PyConst::ofStr("<class '" + module + "." + a->name + "'>"), {a}));
    return true;
  }
  if (b == "str" || b == "repr") {
    c.push(makeConst(PyConst::ofStr(b == "str" ? a->str() : a->repr()),
                     {a}));
    return true;
  }
  if (!a->isConstant())
    c.fail(DiagCode::FrontendPythonError,
           "TypeError: " + b + "() argument must be a number, not " + a->typeName());
  const PyConst &k = a->constant;
  if ((b == "int" || b == "float") && k.kind == PyConst::Kind::Str) {
    c.push(makeConst(numberFromString(c, b, k.text), {a}));
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
  if (std::optional<VarPtr> item = c.next(c.args[0])) {
    c.push(*item);
    return true;
  }
  if (c.args.size() > 1) {
    c.push(c.args[1]);
    return true;
  }
  c.fail(DiagCode::FrontendPythonError, "StopIteration");
}

bool slice(CallContext &c) {
  if (c.args.empty() || c.args.size() > 3)
    return false;
  std::vector<VarPtr> args = c.args;
  if (args.size() == 1) // slice(stop)
    args.insert(args.begin(), none());
  while (args.size() < 3)
    args.push_back(none());
  c.push(makeSequence(K::Slice, args, args));
  return true;
}

/// chr / ord on constants.
bool chrOrd(CallContext &c) {
  if (c.args.size() == 1 && c.args[0]->isTensor())
    c.hostError(c.name + "() of a tensor");
  if (c.args.size() != 1 || !c.args[0]->isConstant())
    return false;
  const VarPtr &a = c.args[0];
  c.consume(a);
  if (c.name == "chr") {
    if (!isInt(a))
      c.fail(DiagCode::FrontendPythonError,
             "TypeError: 'chr() argument must be an integer, not " + a->typeName());
    int64_t code = a->constant.intValue;
    if (code < 0 || code > 0x10ffff)
      c.fail(DiagCode::FrontendPythonError, "ValueError: chr() arg not in range(0x110000)");
    // UTF-8, as Python's str holds it.
    std::string s;
    if (code < 0x80) {
      s += static_cast<char>(code);
    } else if (code < 0x800) {
      s += static_cast<char>(0xc0 | (code >> 6));
      s += static_cast<char>(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      s += static_cast<char>(0xe0 | (code >> 12));
      s += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (code & 0x3f));
    } else {
      s += static_cast<char>(0xf0 | (code >> 18));
      s += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
      s += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
      s += static_cast<char>(0x80 | (code & 0x3f));
    }
    c.push(makeConst(PyConst::ofStr(s), {a}));
    return true;
  }
  if (a->constant.kind != PyConst::Kind::Str)
    c.fail(DiagCode::FrontendPythonError,
           "TypeError: ord() expected string of length 1, but " + a->typeName() + " found");
  const std::string &t = a->constant.text;
  auto byte = [&](size_t i) { return static_cast<unsigned char>(t[i]); };
  size_t length = t.empty() ? 0 : byte(0) < 0x80 ? 1 : byte(0) < 0xe0 ? 2 : byte(0) < 0xf0 ? 3 : 4;
  if (t.empty() || t.size() != length)
    c.fail(DiagCode::FrontendPythonError, "TypeError: ord() expected a character");
  int64_t code = length == 1 ? byte(0) : byte(0) & (0x3f >> (length - 1));
  for (size_t i = 1; i < length; ++i)
    code = (code << 6) | (byte(i) & 0x3f);
  c.push(makeConst(PyConst::ofInt(code), {a}));
  return true;
}

/// pow(base, exp[, mod]): `**` (tensors included), and the modular form on ints.
bool pow(CallContext &c) {
  if (c.args.size() == 2) {
    c.push(c.binary("pow", c.args[0], c.args[1]));
    return true;
  }
  if (c.args.size() != 3 || !std::all_of(c.args.begin(), c.args.end(), isInt))
    return false;
  c.consumeArgs();
  int64_t base = c.args[0]->constant.intValue, exp = c.args[1]->constant.intValue,
          mod = c.args[2]->constant.intValue;
  if (mod == 0)
    c.fail(DiagCode::FrontendPythonError, "ValueError: pow() 3rd argument cannot be 0");
  if (exp < 0)
    c.fail(DiagCode::FrontendUnsupportedConstruct, "pow() with a negative exponent and a modulus");
  // Python's modulus takes the sign of the divisor.
  auto pyMod = [](__int128 a, int64_t m) {
    __int128 r = a % m;
    return static_cast<int64_t>(r != 0 && ((r < 0) != (m < 0)) ? r + m : r);
  };
  int64_t result = pyMod(1, mod), b = pyMod(base, mod);
  for (; exp > 0; exp >>= 1, b = pyMod(static_cast<__int128>(b) * b, mod))
    if (exp & 1)
      result = pyMod(static_cast<__int128>(result) * b, mod);
  c.push(makeConst(PyConst::ofInt(result), c.args));
  return true;
}

/// divmod(a, b): (a // b, a % b), tensors included.
bool divmod(CallContext &c) {
  if (c.args.size() != 2)
    return false;
  VarPtr q = c.binary("floordiv", c.args[0], c.args[1]);
  VarPtr r = c.binary("mod", c.args[0], c.args[1]);
  c.push(makeSequence(K::Tuple, {q, r}, c.args));
  return true;
}

/// hasattr(obj, name): what getattr finds; objects the trace only names are not known.
/// obj.name's value, or null when obj has no such attribute (hasattr, getattr's default).
VarPtr lookupAttribute(CallContext &c, const VarPtr &obj, const std::string &name) {
  if (obj->isTensor()) { // getAttr makes a method of any name; these exist
    static const std::set<std::string> attributes = {
        "shape", "ndim", "size", "dtype", "stop_gradient", "T", "place", "device", "name"};
    std::string prefix = c.framework() == "torch" ? "torch.Tensor." : "Tensor.";
    if (!attributes.count(name) && !tensorMethods().count(name) &&
        !ops::OpTable::get().lookup(prefix + name))
      return nullptr;
  }
  try {
    return c.getAttr(obj, name);
  } catch (const CodedError &e) {
    if (e.code() != DiagCode::FrontendAttributeError)
      throw;
    return nullptr;
  }
}

/// hasattr(obj, name); objects the trace only names are not known.
bool hasattr(CallContext &c) {
  if (c.args.size() != 2 || !c.args[1]->isConstant() ||
      c.args[1]->constant.kind != PyConst::Kind::Str || c.args[0]->kind == K::Opaque)
    return false;
  c.consume(c.args[1]);
  bool found = lookupAttribute(c, c.args[0], c.args[1]->constant.text) != nullptr;
  c.push(makeConst(PyConst::ofBool(found), c.args));
  return true;
}

/// object.__getattribute__(obj, name), or bound through super(): the lookup that a class's
/// own __getattribute__ hands on to.
bool objectGetattribute(CallContext &c) {
  std::vector<VarPtr> args = c.args;
  if (c.self)
    args.insert(args.begin(), c.self);
  if (args.size() != 2 || !args[1]->isConstant() || args[1]->constant.kind != PyConst::Kind::Str)
    return false;
  c.consume(args[1]);
  c.push(c.plainGetAttr(args[0], args[1]->constant.text));
  return true;
}

/// super().__init__(...) of a layer the traced code constructs: the framework's bookkeeping
/// (parameter and sublayer tables) that sotc keeps itself.
bool layerInit(CallContext &c) {
  c.push(none());
  return true;
}

/// getattr(obj, name[, default]).
bool getattr(CallContext &c) {
  if (c.args.size() < 2 || c.args.size() > 3 || !c.args[1]->isConstant() ||
      (c.args.size() == 3 && c.args[0]->kind == K::Opaque))
    return false;
  c.consume(c.args[1]);
  if (c.args.size() == 2) {
    c.push(c.getAttr(c.args[0], c.args[1]->constant.text));
    return true;
  }
  VarPtr value = lookupAttribute(c, c.args[0], c.args[1]->constant.text);
  c.push(value ? value : c.args[2]);
  return true;
}

bool id(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  c.push(makeConst(PyConst::ofInt(c.ex.objectId(c.args[0])), c.args));
  return true;
}

/// type(x): its class, as x.__class__ reads it. type(name, bases, dict) makes a class, which
/// an ahead-of-time translation has no definition of.
bool type(CallContext &c) {
  if (c.args.size() == 3)
    c.fail(DiagCode::FrontendUnsupportedConstruct,
           "type(name, bases, dict) makes a class at run time, which is not supported");
  if (c.args.size() != 1 || !c.kwargs.empty())
    return false;
  c.push(c.getAttr(c.args[0], "__class__"));
  return true;
}

bool callable(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  K kind = c.args[0]->kind;
  c.push(makeConst(PyConst::ofBool(kind == K::Function || kind == K::Builtin ||
                                   kind == K::External || kind == K::Method),
                   c.args));
  return true;
}

/// The __exit__ of an inert context manager (BEFORE_WITH): nothing to undo.
bool contextExit(CallContext &c) {
  c.push(none());
  return true;
}

/// The __exit__ of an autocast block: the dtypes of the block around it apply again.
bool autocastExit(CallContext &c) {
  if (!c.state.autocast.empty())
    c.state.autocast.pop_back();
  c.push(none());
  return true;
}

/// dict.fromkeys(keys[, value]): every key maps to the same value.
bool fromkeys(CallContext &c) {
  if (c.args.empty() || c.args.size() > 2)
    return false;
  VarPtr d = Variable::make(K::Dict, computedFrom(c.args));
  VarPtr value = c.args.size() > 1 ? c.args[1] : none();
  for (const VarPtr &key : c.iterate(c.args[0])) {
    if (!key->isConstant())
      c.fail(DiagCode::FrontendUnsupportedConstruct, "dict keys must be Python constants");
    c.consume(key);
    if (std::none_of(d->keys.begin(), d->keys.end(),
                     [&](const VarPtr &k) { return k->constant == key->constant; })) {
      d->keys.push_back(key);
      d->items.push_back(value);
    }
  }
  c.push(d);
  return true;
}

/// map(fn, *iterables) and filter(fn, iterable), run eagerly into an iterator.
bool mapFilter(CallContext &c) {
  if (c.args.size() < 2 || (c.name == "filter" && c.args.size() != 2))
    return false;
  VarPtr fn = c.args[0];
  if (std::any_of(c.args.begin() + 1, c.args.end(), lazy)) {
    std::vector<VarPtr> lazySources;
    for (size_t i = 1; i < c.args.size(); ++i)
      lazySources.push_back(iteratorOf(c, c.args[i]));
    return pushAdaptor(c, lazySources, fn, 0);
  }
  std::vector<std::vector<VarPtr>> sources;
  size_t n = SIZE_MAX;
  for (size_t i = 1; i < c.args.size(); ++i) {
    sources.push_back(c.iterate(c.args[i]));
    n = std::min(n, sources.back().size());
  }
  std::vector<VarPtr> items;
  for (size_t i = 0; i < n; ++i) {
    std::vector<VarPtr> callArgs;
    for (const std::vector<VarPtr> &src : sources)
      callArgs.push_back(src[i]);
    if (c.name == "map") {
      items.push_back(c.callNow(fn, callArgs));
    } else {
      bool none = fn->isConstant() && fn->constant.kind == PyConst::Kind::None;
      if (c.truthy(none ? callArgs[0] : c.callNow(fn, callArgs)))
        items.push_back(callArgs[0]);
    }
  }
  return pushIterator(c, items);
}

} // namespace

const CallTable &builtinFunctions() {
  static const CallTable table = {
      {"print", print},
      {"len", len},
      {"range", range},
      {"isinstance", isinstance},
      {"super", super},
      {"set", set},
      {"frozenset", set},
      {"tuple", sequence},
      {"list", sequence},
      {"dict", dict},
      {"enumerate", enumerate},
      {"zip", zip},
      {"iter", iter},
      {"reversed", reversed},
      {"sorted", sorted},
      {"min", aggregate},
      {"max", aggregate},
      {"sum", aggregate},
      {"all", aggregate},
      {"any", aggregate},
      {"abs", convert},
      {"int", convert},
      {"float", convert},
      {"bool", convert},
      {"str", convert},
      {"repr", convert},
      {"round", convert},
      {"next", next},
      {"getattr", getattr},
      {"object.__getattribute__", objectGetattribute},
      {"Layer.__init__", layerInit},
      {"slice", slice},
      {"chr", chrOrd},
      {"ord", chrOrd},
      {"pow", pow},
      {"divmod", divmod},
      {"hasattr", hasattr},
      {"callable", callable},
      {"type", type},
      {"id", id},
      {"map", mapFilter},
      {"filter", mapFilter},
      {"dict.fromkeys", fromkeys},
      {"context manager exit", contextExit},
      {"autocast exit", autocastExit},
  };
  return table;
}

} // namespace sotc::frontend
