//===- CallsContainers.cpp - Methods of lists, dicts and strings --------------------------===//
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
  std::vector<VarPtr> items = c.iterate(c.args[0]);
  c.self->items.insert(c.self->items.end(), items.begin(), items.end());
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
  VarPtr dflt = c.args.size() > 1 ? c.args[1] : none();
  if (i < 0 && c.name == "pop" && c.args.size() == 1)
    c.fail(DiagCode::FrontendPythonError, "KeyError: " + c.args[0]->repr());
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

bool strAffix(CallContext &c) {
  if (c.args.size() != 1 || !c.args[0]->isConstant())
    return false;
  c.consume(c.self);
  const std::string &s = c.self->constant.text, &p = c.args[0]->constant.text;
  bool r = p.size() <= s.size() &&
           (c.name == "startswith" ? s.compare(0, p.size(), p) == 0
                                   : s.compare(s.size() - p.size(), p.size(), p) == 0);
  c.push(makeConst(PyConst::ofBool(r), {c.self, c.args[0]}));
  return true;
}

} // namespace

const CallTable &listMethods() {
  static const CallTable table = {
      {"append", listAppend}, {"extend", listExtend}, {"insert", listInsert},   {"pop", listPop},
      {"clear", listClear},   {"copy", listCopy},     {"reverse", listReverse},
  };
  return table;
}

const CallTable &dictMethods() {
  static const CallTable table = {
      {"get", dictLookup},    {"pop", dictLookup},    {"setdefault", dictLookup},
      {"keys", dictKeys},     {"values", dictValues}, {"items", dictItems},
      {"update", dictUpdate}, {"clear", dictClear},   {"copy", dictCopy},
  };
  return table;
}

const CallTable &strMethods() {
  static const CallTable table = {
      {"join", strJoin},        {"upper", strCase},     {"lower", strCase},
      {"startswith", strAffix}, {"endswith", strAffix},
  };
  return table;
}

} // namespace sotc::frontend
