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
  // ModelOutput(mapping_or_pairs) spreads its first argument over the fields instead.
  bool othersUnset = std::all_of(record->items.begin() + 1, record->items.end(), [](auto &v) {
    return v->isConstant() && v->constant.kind == PyConst::Kind::None;
  });
  const VarPtr &first = record->items.front();
  if (othersUnset && (first->kind == K::Dict || first->isSequence() || first->kind == K::Iterator))
    fail(DiagCode::FrontendUnsupportedConstruct,
         def.qualname() + " built from a " + first->typeName() +
             " of its fields: pass them as keyword arguments",
         f);
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
