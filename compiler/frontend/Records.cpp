//===- Records.cpp - Dataclasses that are dicts: transformers' ModelOutput --------------===//
//
// A model's output in transformers (and the libraries that copied it) is a dataclass deriving
// from OrderedDict whose items are the fields set to something other than None, and which
// indexes like the tuple of their values. Its own methods go through dict internals the
// executor does not model, so the executor builds and reads such records itself: the fields
// are the object's attributes, the items a view of them.
//
//===--------------------------------------------------------------------------------------===//

#include "compiler/frontend/Calls.h"
#include "compiler/frontend/Executor.h"

namespace sotc::frontend {

using K = Variable::Kind;

bool Executor::isRecord(const VarPtr &v) const {
  return v->kind == K::Object && v->classIndex >= 0 &&
         trace_.classes(v->classIndex).record_fields_size() > 0;
}

VarPtr Executor::makeRecord(Frame &f, const VarPtr &cls, const std::vector<VarPtr> &args,
                            const Kwargs &kwargs) {
  const trace::ClassDef &def = trace_.classes(cls->classIndex);
  const auto &fields = def.record_fields();
  if (args.size() > static_cast<size_t>(fields.size()))
    fail(DiagCode::FrontendPythonError,
         "TypeError: " + def.qualname() + "() takes " + std::to_string(fields.size()) +
             " positional arguments but " + std::to_string(args.size()) + " were given",
         f);
  std::vector<VarPtr> values(fields.size());
  std::copy(args.begin(), args.end(), values.begin());
  for (const auto &[name, value] : kwargs) {
    auto field = std::find(fields.begin(), fields.end(), name);
    if (field == fields.end())
      fail(DiagCode::FrontendPythonError,
           "TypeError: " + def.qualname() + "() got an unexpected keyword argument '" + name + "'",
           f);
    VarPtr &slot = values[field - fields.begin()];
    if (slot)
      fail(DiagCode::FrontendPythonError,
           "TypeError: " + def.qualname() + "() got multiple values for argument '" + name + "'",
           f);
    slot = value;
  }
  std::vector<VarPtr> inputs(args);
  for (const auto &kv : kwargs)
    inputs.push_back(kv.second);
  VarPtr record = Variable::make(K::Object, computedFrom(inputs));
  record->classIndex = cls->classIndex;
  record->name = def.qualname();
  record->recordClass = def.module() + ":" + def.qualname();
  record->madeHere = true;
  for (int i = 0; i < fields.size(); ++i) {
    record->keys.push_back(makeConst(PyConst::ofStr(fields[i]), {}));
    record->items.push_back(values[i] ? values[i] : none());
  }
  // ModelOutput(mapping_or_pairs) spreads its first argument over the fields instead: a dict,
  // or a sequence whose first item is a (str, value) pair (any other sequence is the first
  // field's value, as the library's __post_init__ decides).
  bool othersUnset = std::all_of(record->items.begin() + 1, record->items.end(), [](auto &v) {
    return v->isConstant() && v->constant.kind == PyConst::Kind::None;
  });
  VarPtr first = record->items.front();
  auto isPair = [](const VarPtr &v) {
    return v->isSequence() && v->items.size() == 2 && v->items[0]->isConstant() &&
           v->items[0]->constant.kind == PyConst::Kind::Str;
  };
  std::vector<std::pair<VarPtr, VarPtr>> spread;
  if (othersUnset && first->kind == K::Dict) {
    for (size_t i = 0; i < first->keys.size(); ++i)
      spread.push_back({first->keys[i], first->items[i]});
  } else if (othersUnset && first->isSequence() && !first->items.empty() &&
             isPair(first->items.front())) {
    for (const VarPtr &item : first->items) {
      if (!isPair(item))
        fail(DiagCode::FrontendPythonError,
             "ValueError: Cannot set key/value for " + item->repr() +
                 ". It needs to be a tuple (key, value).",
             f);
      spread.push_back({item->items[0], item->items[1]});
    }
  } else if (othersUnset && first->kind == K::Iterator) {
    fail(DiagCode::FrontendUnsupportedConstruct,
         def.qualname() + " built from an iterator of its fields: pass them as keyword arguments",
         f);
  } else if (othersUnset && first->isSequence() && first->items.empty()) {
    record->items.front() = none();
  }
  if (othersUnset && (first->kind == K::Dict || !spread.empty()))
    record->items.front() = none();
  for (const auto &[key, value] : spread) {
    consume(key, locOf(f));
    auto field = std::find(fields.begin(), fields.end(), key->constant.text);
    if (!key->isConstant() || key->constant.kind != PyConst::Kind::Str || field == fields.end())
      fail(DiagCode::FrontendUnsupportedConstruct,
           def.qualname() + " given " + key->repr() + ", not one of its fields", f);
    record->items[field - fields.begin()] = value;
  }
  return record;
}

VarPtr Executor::recordItems(const VarPtr &record) {
  VarPtr dict = Variable::make(K::Dict, computedFrom({record}));
  for (size_t i = 0; i < record->keys.size(); ++i) {
    const VarPtr &value = record->items[i];
    if (value->isConstant() && value->constant.kind == PyConst::Kind::None)
      continue;
    dict->keys.push_back(record->keys[i]);
    dict->items.push_back(value);
  }
  return dict;
}

VarPtr Executor::recordGetItem(Frame &f, StatementIR &sir, const VarPtr &record,
                               const VarPtr &key) {
  VarPtr items = recordItems(record);
  if (key->isConstant() && key->constant.kind == PyConst::Kind::Str)
    return getItem(f, sir, items, key);
  return getItem(f, sir, makeSequence(K::Tuple, items->items, {record}), key);
}

VarPtr Executor::recordMethod(const VarPtr &record, const std::string &name) {
  static const std::set<std::string> viewMethods = {"keys", "values", "items", "get"};
  if (!viewMethods.count(name) && name != "to_tuple")
    return nullptr;
  VarPtr method = Variable::make(K::Method, computedFrom({record}));
  method->name = name;
  // The dict's own methods answer on the items; call() answers to_tuple() on the record.
  method->self = name == "to_tuple" ? record : recordItems(record);
  return method;
}

} // namespace sotc::frontend
