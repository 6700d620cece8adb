//===- CallsContainers.cpp - Methods of lists, tuples, dicts and strings -----------------===//
//
// Containers are Python values the executor tracks item by item, so their methods mutate
// or read those items at translation time; string methods fold on constants.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"

#include <algorithm>
#include <cctype>

namespace sotc::frontend {
namespace {
using K = Variable::Kind;

/// A Python index into a sequence of `n` items (negative from the end).
int64_t pyIndex(const VarPtr &index, int64_t n) {
  int64_t i = index->constant.intValue;
  return i < 0 ? i + n : i;
}

//===-- list ------------------------------------------------------------------------------===//

bool listAppend(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  c.self->items.push_back(c.args[0]);
  c.push(none());
  return true;
}

bool listExtend(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  if (c.args[0]->kind == K::Iterator) { // item by item: a generator may read the list grow
    while (std::optional<VarPtr> item = c.next(c.args[0]))
      c.self->items.push_back(*item);
  } else {
    std::vector<VarPtr> items = c.iterate(c.args[0]);
    c.self->items.insert(c.self->items.end(), items.begin(), items.end());
  }
  c.push(none());
  return true;
}

bool listInsert(CallContext &c) {
  if (c.args.size() != 2 || !isInt(c.args[0]))
    return false;
  c.consume(c.args[0]);
  int64_t n = c.self->items.size();
  int64_t i = std::min(std::max<int64_t>(pyIndex(c.args[0], n), 0), n);
  c.self->items.insert(c.self->items.begin() + i, c.args[1]);
  c.push(none());
  return true;
}

bool listPop(CallContext &c) {
  std::vector<VarPtr> &items = c.self->items;
  if (items.empty())
    c.fail(DiagCode::FrontendPythonError, "IndexError: pop from empty list");
  int64_t n = items.size(), i = n - 1;
  if (!c.args.empty()) {
    c.consume(c.args[0]);
    i = pyIndex(c.args[0], n);
  }
  if (i < 0 || i >= n)
    c.fail(DiagCode::FrontendPythonError, "IndexError: pop index out of range");
  VarPtr v = items[i];
  items.erase(items.begin() + i);
  c.push(v);
  return true;
}

bool listClear(CallContext &c) {
  c.self->items.clear();
  c.push(none());
  return true;
}

bool listCopy(CallContext &c) {
  c.push(makeSequence(K::List, c.self->items, {c.self}));
  return true;
}

bool listReverse(CallContext &c) {
  std::reverse(c.self->items.begin(), c.self->items.end());
  c.push(none());
  return true;
}

/// `item == x` as list.index, count and remove decide it: identity first, as CPython; a
/// tensor compared with anything else would need its value on the host.
bool sameItem(CallContext &c, const VarPtr &item, const VarPtr &x) {
  if (item.get() == x.get())
    return true;
  if (item->isTensor() || x->isTensor())
    c.fail(DiagCode::FrontendHostInteraction,
           "comparing a tensor with another value needs tensor values on the host");
  return c.truthy(c.compare("==", item, x));
}

bool listRemove(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  std::vector<VarPtr> &items = c.self->items;
  for (size_t i = 0; i < items.size(); ++i)
    if (sameItem(c, items[i], c.args[0])) {
      items.erase(items.begin() + static_cast<std::ptrdiff_t>(i));
      c.push(none());
      return true;
    }
  c.fail(DiagCode::FrontendPythonError, "ValueError: list.remove(x): x not in list");
}

/// list.sort(key=None, reverse=False): stable, as Python's; keys computed once per item.
bool listSort(CallContext &c) {
  if (!c.args.empty())
    return false;
  VarPtr key, reverse;
  for (auto &[name, value] : c.kwargs) {
    if (name == "key")
      key = value;
    else if (name == "reverse")
      reverse = value;
    else
      return false;
  }
  std::vector<VarPtr> &items = c.self->items;
  std::vector<std::pair<VarPtr, VarPtr>> keyed; // (key, item)
  for (const VarPtr &item : items)
    keyed.push_back({key && !(key->isConstant() && key->constant.kind == PyConst::Kind::None)
                         ? c.callNow(key, {item})
                         : item,
                     item});
  bool descending = reverse && c.truthy(reverse);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto &a, const auto &b) {
    return c.compare("<", descending ? b.first : a.first, descending ? a.first : b.first)
        ->constant.truthy();
  });
  for (size_t i = 0; i < items.size(); ++i)
    items[i] = keyed[i].second;
  c.push(none());
  return true;
}

//===-- list and tuple --------------------------------------------------------------------===//

/// count(x) / index(x[, start[, stop]]): equality as `==` decides it.
bool sequenceSearch(CallContext &c) {
  if (c.args.empty() || c.args.size() > (c.name == "count" ? 1u : 3u))
    return false;
  const std::vector<VarPtr> &items = c.self->items;
  int64_t n = static_cast<int64_t>(items.size());
  auto bound = [&](size_t i, int64_t dflt) {
    if (c.args.size() <= i)
      return dflt;
    c.consume(c.args[i]);
    return std::clamp<int64_t>(pyIndex(c.args[i], n), 0, n);
  };
  int64_t start = bound(1, 0), stop = bound(2, n), count = 0;
  for (int64_t i = start; i < stop; ++i)
    if (sameItem(c, items[i], c.args[0])) {
      if (c.name == "index") {
        c.push(makeConst(PyConst::ofInt(i), {c.self, c.args[0]}));
        return true;
      }
      ++count;
    }
  if (c.name == "index")
    c.fail(DiagCode::FrontendPythonError,
           "ValueError: " + c.args[0]->repr() + " is not in " + c.self->typeName());
  c.push(makeConst(PyConst::ofInt(count), {c.self, c.args[0]}));
  return true;
}

//===-- dict ------------------------------------------------------------------------------===//

/// The position of a constant key, or -1.
int dictFind(const VarPtr &dict, const VarPtr &key) {
  for (size_t i = 0; i < dict->keys.size(); ++i)
    if (dict->keys[i]->isConstant() && key->isConstant() &&
        dict->keys[i]->constant == key->constant)
      return static_cast<int>(i);
  return -1;
}

void dictSet(const VarPtr &dict, const VarPtr &key, const VarPtr &value) {
  int i = dictFind(dict, key);
  if (i >= 0) {
    dict->items[i] = value;
    return;
  }
  dict->keys.push_back(key);
  dict->items.push_back(value);
}

/// get / pop / setdefault share the lookup with a default.
bool dictLookup(CallContext &c) {
  if (c.args.empty())
    return false;
  const VarPtr &dict = c.self;
  c.consume(c.args[0]);
  int i = dictFind(dict, c.args[0]);
  if (i < 0) // the keys decided
    c.consume(dict);
  VarPtr dflt = c.args.size() > 1 ? c.args[1] : none();
  if (i < 0 && c.name == "pop" && c.args.size() == 1)
    c.fail(DiagCode::FrontendPythonError, "KeyError: the set has no such item");
  if (i < 0 && c.name == "setdefault") {
    dict->keys.push_back(c.args[0]);
    dict->items.push_back(dflt);
  }
  VarPtr v = i >= 0 ? dict->items[i] : dflt;
  if (i >= 0 && c.name == "pop") {
    dict->keys.erase(dict->keys.begin() + i);
    dict->items.erase(dict->items.begin() + i);
  }
  c.push(v);
  return true;
}

bool dictKeys(CallContext &c) {
  c.push(makeSequence(K::List, c.self->keys, {c.self}));
  return true;
}

bool dictValues(CallContext &c) {
  c.push(makeSequence(K::List, c.self->items, {c.self}));
  return true;
}

bool dictItems(CallContext &c) {
  std::vector<VarPtr> pairs;
  for (size_t i = 0; i < c.self->keys.size(); ++i)
    pairs.push_back(makeSequence(K::Tuple, {c.self->keys[i], c.self->items[i]}, {c.self}));
  c.push(makeSequence(K::List, pairs, {c.self}));
  return true;
}

bool dictUpdate(CallContext &c) {
  if (c.args.size() != 1 || c.args[0]->kind != K::Dict)
    return false;
  for (size_t j = 0; j < c.args[0]->keys.size(); ++j)
    dictSet(c.self, c.args[0]->keys[j], c.args[0]->items[j]);
  for (auto &[k, v] : c.kwargs)
    dictSet(c.self, makeConst(PyConst::ofStr(k), {}), v);
  c.push(none());
  return true;
}

bool dictPopitem(CallContext &c) {
  if (!c.args.empty())
    return false;
  if (c.self->keys.empty())
    c.fail(DiagCode::FrontendPythonError, "KeyError: 'popitem(): dictionary is empty'");
  VarPtr pair = makeSequence(K::Tuple, {c.self->keys.back(), c.self->items.back()}, {c.self});
  c.self->keys.pop_back();
  c.self->items.pop_back();
  c.push(pair);
  return true;
}

bool dictClear(CallContext &c) {
  c.self->keys.clear();
  c.self->items.clear();
  c.push(none());
  return true;
}

bool dictCopy(CallContext &c) {
  VarPtr d = Variable::make(K::Dict, computedFrom({c.self}));
  d->keys = c.self->keys;
  d->items = c.self->items;
  c.push(d);
  return true;
}

//===-- str -------------------------------------------------------------------------------===//

bool strJoin(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  c.consume(c.self);
  const std::string &sep = c.self->constant.text;
  std::string out;
  std::vector<VarPtr> items = c.iterate(c.args[0]);
  for (size_t i = 0; i < items.size(); ++i) {
    c.consume(items[i]);
    out += (i ? sep : "") + items[i]->constant.text;
  }
  c.push(makeConst(PyConst::ofStr(out), {c.self, c.args[0]}));
  return true;
}

bool strCase(CallContext &c) {
  if (!c.args.empty())
    return false;
  c.consume(c.self);
  std::string out = c.self->constant.text;
  for (char &ch : out)
    ch = c.name == "upper" ? std::toupper(ch) : std::tolower(ch);
  c.push(makeConst(PyConst::ofStr(out), {c.self}));
  return true;
}

/// startswith / endswith(prefix or tuple of them[, start[, end]]).
bool strAffix(CallContext &c) {
  if (c.args.empty() || c.args.size() > 3)
    return false;
  c.consumeArgs();
  c.consume(c.self);
  const std::string &whole = c.self->constant.text;
  int64_t n = static_cast<int64_t>(whole.size());
  auto bound = [&](size_t i, int64_t dflt) {
    if (c.args.size() <= i ||
        (c.args[i]->isConstant() && c.args[i]->constant.kind == PyConst::Kind::None))
      return dflt;
    if (!isInt(c.args[i]))
      c.fail(DiagCode::FrontendPythonError, "TypeError: slice indices must be integers or None");
    return std::clamp<int64_t>(pyIndex(c.args[i], n), 0, n);
  };
  int64_t start = bound(1, 0), end = bound(2, n);
  std::string s = start <= end ? whole.substr(start, end - start) : "";
  std::vector<VarPtr> affixes =
      c.args[0]->kind == K::Tuple ? c.args[0]->items : std::vector<VarPtr>{c.args[0]};
  bool r = start <= end && std::any_of(affixes.begin(), affixes.end(), [&](const VarPtr &a) {
             if (!a->isConstant() || a->constant.kind != PyConst::Kind::Str)
               c.fail(DiagCode::FrontendPythonError,
                      "TypeError: " + c.name + " first arg must be str or a tuple of str");
             const std::string &p = a->constant.text;
             return p.size() <= s.size() &&
                    (c.name == "startswith" ? s.compare(0, p.size(), p) == 0
                                            : s.compare(s.size() - p.size(), p.size(), p) == 0);
           });
  c.push(makeConst(PyConst::ofBool(r), {c.self, c.args[0]}));
  return true;
}

/// split(sep=None, maxsplit=-1): on runs of whitespace without a separator, as Python.
bool strSplit(CallContext &c) {
  if (c.args.size() > 2 || !c.kwargs.empty())
    return false;
  c.consumeArgs();
  c.consume(c.self);
  const std::string &s = c.self->constant.text;
  bool whitespace = c.args.empty() || c.args[0]->constant.kind == PyConst::Kind::None;
  int64_t maxsplit = c.args.size() > 1 ? c.args[1]->constant.intValue : -1;
  std::vector<std::string> parts;
  if (whitespace) {
    size_t i = 0;
    while (true) {
      while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
        ++i;
      if (i == s.size())
        break;
      if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
        size_t end = s.find_last_not_of(" \t\n\r\f\v");
        parts.push_back(s.substr(i, end + 1 - i));
        break;
      }
      size_t j = i;
      while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j])))
        ++j;
      parts.push_back(s.substr(i, j - i));
      i = j;
    }
  } else {
    const std::string &sep = c.args[0]->constant.text;
    if (sep.empty())
      c.fail(DiagCode::FrontendPythonError, "ValueError: empty separator");
    size_t i = 0;
    for (size_t j; (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) &&
                   (j = s.find(sep, i)) != std::string::npos;
         i = j + sep.size())
      parts.push_back(s.substr(i, j - i));
    parts.push_back(s.substr(i));
  }
  std::vector<VarPtr> items;
  for (const std::string &p : parts)
    items.push_back(makeConst(PyConst::ofStr(p), {c.self}));
  c.push(makeSequence(K::List, items, {c.self}));
  return true;
}

bool strReplace(CallContext &c) {
  if (c.args.size() < 2 || c.args.size() > 3)
    return false;
  c.consumeArgs();
  c.consume(c.self);
  std::string s = c.self->constant.text;
  const std::string &from = c.args[0]->constant.text, &to = c.args[1]->constant.text;
  int64_t count = c.args.size() > 2 ? c.args[2]->constant.intValue : -1;
  std::string out;
  size_t i = 0;
  for (int64_t done = 0; count < 0 || done < count; ++done) {
    size_t j = from.empty() ? (i <= s.size() ? i : std::string::npos) : s.find(from, i);
    if (j == std::string::npos)
      break;
    out += s.substr(i, j - i) + to;
    if (from.empty()) {
      if (j < s.size())
        out += s[j];
      i = j + 1;
    } else {
      i = j + from.size();
    }
  }
  if (i < s.size())
    out += s.substr(i);
  c.push(makeConst(PyConst::ofStr(out), {c.self, c.args[0], c.args[1]}));
  return true;
}

bool strStrip(CallContext &c) {
  if (c.args.size() > 1)
    return false;
  c.consumeArgs();
  c.consume(c.self);
  std::string chars = c.args.empty() || c.args[0]->constant.kind == PyConst::Kind::None
                          ? std::string(" \t\n\r\f\v")
                          : c.args[0]->constant.text;
  const std::string &s = c.self->constant.text;
  size_t begin = c.name == "rstrip" ? 0 : s.find_first_not_of(chars);
  if (begin == std::string::npos) {
    c.push(makeConst(PyConst::ofStr(""), {c.self}));
    return true;
  }
  size_t end = c.name == "lstrip" ? s.size() : s.find_last_not_of(chars) + 1;
  c.push(makeConst(PyConst::ofStr(s.substr(begin, end - begin)), {c.self}));
  return true;
}

/// str.format: "{}", "{0}", "{name}", with "!r"/"!s" and a format spec as f-strings allow.
bool strFormat(CallContext &c) {
  c.consume(c.self);
  const std::string &fmt = c.self->constant.text;
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char ch = fmt[i];
    if ((ch == '{' || ch == '}') && i + 1 < fmt.size() && fmt[i + 1] == ch) {
      out += ch;
      ++i;
      continue;
    }
    if (ch == '}')
      c.fail(DiagCode::FrontendPythonError, "ValueError: Single '}' encountered in format string");
    if (ch != '{') {
      out += ch;
      continue;
    }
    size_t close = fmt.find('}', i);
    if (close == std::string::npos)
      c.fail(DiagCode::FrontendPythonError, "ValueError: Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1), spec;
    unsigned conversion = 0;
    if (size_t colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field.resize(colon);
    }
    if (size_t bang = field.find('!'); bang != std::string::npos) {
      std::string kind = field.substr(bang + 1);
      conversion = kind == "s" ? 1 : kind == "r" ? 2 : kind == "a" ? 3 : 4;
      if (conversion == 4)
        c.fail(DiagCode::FrontendPythonError, "ValueError: Unknown conversion specifier " + kind);
      field.resize(bang);
    }
    VarPtr value;
    if (field.empty() || std::all_of(field.begin(), field.end(), ::isdigit)) {
      size_t index = field.empty() ? next++ : std::stoul(field);
      if (index >= c.args.size())
        c.fail(DiagCode::FrontendPythonError, "IndexError: Replacement index " +
                                                  std::to_string(index) +
                                                  " out of range for positional args tuple");
      value = c.args[index];
    } else {
      auto it = std::find_if(c.kwargs.begin(), c.kwargs.end(),
                             [&](const auto &kw) { return kw.first == field; });
      if (it == c.kwargs.end())
        c.fail(DiagCode::FrontendUnsupportedConstruct,
               "str.format field '" + field + "' (only names and positions are supported)");
      value = it->second;
    }
    out += c.format(value, conversion, spec)->constant.text;
    i = close;
  }
  std::vector<VarPtr> from = {c.self};
  from.insert(from.end(), c.args.begin(), c.args.end());
  c.push(makeConst(PyConst::ofStr(out), from));
  return true;
}

//===-- set -------------------------------------------------------------------------------===//

/// The items of each argument (a set's own, an iterable's).
std::vector<std::vector<VarPtr>> itemsOf(CallContext &c) {
  std::vector<std::vector<VarPtr>> out;
  for (const VarPtr &a : c.args)
    out.push_back(c.iterate(a));
  return out;
}

/// set.union(*others), intersection, difference, symmetric_difference, and the operators'
/// in-place forms (*_update, update, add, discard, remove).
bool setAlgebraMethod(CallContext &c) {
  static const std::map<std::string, std::pair<std::string, bool>> ops = {
      {"union", {"or", false}},
      {"intersection", {"and", false}},
      {"difference", {"sub", false}},
      {"symmetric_difference", {"xor", false}},
      {"update", {"or", true}},
      {"intersection_update", {"and", true}},
      {"difference_update", {"sub", true}},
      {"symmetric_difference_update", {"xor", true}},
      {"add", {"or", true}},
      {"discard", {"sub", true}},
      {"remove", {"sub", true}}};
  auto [op, inPlace] = ops.at(c.name);
  if (!c.kwargs.empty() || (inPlace && c.self->name != "set"))
    return false;
  bool one = c.name == "add" || c.name == "discard" || c.name == "remove";
  if (one && c.args.size() != 1)
    return false;
  if (c.name == "symmetric_difference" && c.args.size() != 1)
    return false;
  if (c.name == "remove" && !setHas(c.self, c.args[0]))
    c.fail(DiagCode::FrontendPythonError, "KeyError: the set has no such item");
  VarPtr result = setAlgebra(op, c.self, one ? std::vector<std::vector<VarPtr>>{{c.args[0]}}
                                             : itemsOf(c));
  if (inPlace)
    c.self->items = result->items;
  c.push(inPlace ? none() : result);
  return true;
}

/// issubset, issuperset, isdisjoint of any iterable.
bool setRelation(CallContext &c) {
  if (c.args.size() != 1 || !c.kwargs.empty())
    return false;
  VarPtr other = makeSequence(K::Tuple, c.iterate(c.args[0]), {});
  other->name = "frozenset";
  other = setAlgebra("or", other, {});
  bool holds = c.name == "issubset"     ? setCompare("<=", c.self, other)
               : c.name == "issuperset" ? setCompare(">=", c.self, other)
                                        : setAlgebra("and", c.self, {other->items})->items.empty();
  c.push(makeConst(PyConst::ofBool(holds), {c.self, c.args[0]}));
  return true;
}

bool setCopy(CallContext &c) {
  if (!c.args.empty() || !c.kwargs.empty())
    return false;
  c.push(setAlgebra("or", c.self, {}));
  return true;
}

bool setClear(CallContext &c) {
  if (!c.args.empty() || c.self->name != "set")
    return false;
  c.self->items.clear();
  c.push(none());
  return true;
}

} // namespace

bool isSet(const VarPtr &v) {
  return v->kind == K::Tuple && (v->name == "set" || v->name == "frozenset");
}

bool setHas(const VarPtr &set, const VarPtr &item) {
  return std::any_of(set->items.begin(), set->items.end(), [&](const VarPtr &x) {
    return x.get() == item.get() ||
           (x->isConstant() && item->isConstant() && x->constant == item->constant);
  });
}

VarPtr setAlgebra(const std::string &op, const VarPtr &a,
                  const std::vector<std::vector<VarPtr>> &others) {
  VarPtr out = makeSequence(K::Tuple, {}, {a});
  out->name = a->name;
  auto add = [&](const VarPtr &item) {
    if (!setHas(out, item))
      out->items.push_back(item);
  };
  for (const VarPtr &item : a->items)
    add(item);
  for (const std::vector<VarPtr> &items : others) {
    VarPtr other = makeSequence(K::Tuple, {}, {});
    for (const VarPtr &item : items)
      if (!setHas(other, item))
        other->items.push_back(item);
    std::vector<VarPtr> kept;
    for (const VarPtr &item : out->items)
      if (op == "or" || (op == "and") == setHas(other, item))
        kept.push_back(item);
    if (op == "or" || op == "xor")
      for (const VarPtr &item : other->items)
        if (!setHas(out, item))
          kept.push_back(item);
    out->items = std::move(kept);
  }
  return out;
}

bool setCompare(const std::string &op, const VarPtr &a, const VarPtr &b) {
  auto within = [](const VarPtr &x, const VarPtr &y) {
    return std::all_of(x->items.begin(), x->items.end(),
                       [&](const VarPtr &i) { return setHas(y, i); });
  };
  bool sub = within(a, b), super = within(b, a);
  return op == "<="   ? sub
         : op == "<"  ? sub && !super
         : op == ">=" ? super
         : op == ">"  ? super && !sub
         : op == "==" ? sub && super
                      : !(sub && super);
}

const CallTable &setMethods() {
  static const CallTable table = {
      {"union", setAlgebraMethod},
      {"intersection", setAlgebraMethod},
      {"difference", setAlgebraMethod},
      {"symmetric_difference", setAlgebraMethod},
      {"update", setAlgebraMethod},
      {"intersection_update", setAlgebraMethod},
      {"difference_update", setAlgebraMethod},
      {"symmetric_difference_update", setAlgebraMethod},
      {"add", setAlgebraMethod},
      {"discard", setAlgebraMethod},
      {"remove", setAlgebraMethod},
      {"issubset", setRelation},
      {"issuperset", setRelation},
      {"isdisjoint", setRelation},
      {"copy", setCopy},
      {"clear", setClear},
  };
  return table;
}

const CallTable &listMethods() {
  static const CallTable table = {
      {"append", listAppend},    {"extend", listExtend},    {"insert", listInsert},
      {"pop", listPop},          {"clear", listClear},      {"copy", listCopy},
      {"reverse", listReverse},  {"remove", listRemove},    {"sort", listSort},
      {"count", sequenceSearch}, {"index", sequenceSearch},
  };
  return table;
}

const CallTable &tupleMethods() {
  static const CallTable table = {{"count", sequenceSearch}, {"index", sequenceSearch}};
  return table;
}

/// dict.__getitem__(d, key), as a subclass's own __getitem__ reaches it through super().
bool dictGetItem(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  c.push(c.getItem(c.self, c.args[0]));
  return true;
}

const CallTable &dictMethods() {
  static const CallTable table = {
      {"__getitem__", dictGetItem},
      {"get", dictLookup},      {"pop", dictLookup},    {"setdefault", dictLookup},
      {"keys", dictKeys},       {"values", dictValues}, {"items", dictItems},
      {"update", dictUpdate},   {"clear", dictClear},   {"copy", dictCopy},
      {"popitem", dictPopitem},
  };
  return table;
}

const CallTable &strMethods() {
  static const CallTable table = {
      {"join", strJoin},        {"upper", strCase},     {"lower", strCase},
      {"startswith", strAffix}, {"endswith", strAffix}, {"split", strSplit},
      {"replace", strReplace},  {"strip", strStrip},    {"lstrip", strStrip},
      {"rstrip", strStrip},     {"format", strFormat},
  };
  return table;
}

} // namespace sotc::frontend
