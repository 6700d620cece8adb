#include "compiler/ops/OpTable.h"

#include "compiler/support/Diagnostics.h"

#include <cstdio>
#include <cstdlib>

namespace sotc::ops {

const char *callKindName(CallKind kind) {
  switch (kind) {
  case CallKind::Api:
    return "api";
  case CallKind::Method:
    return "method";
  case CallKind::Operator:
    return "operator";
  }
  return "?";
}

std::string OpEntry::shortName() const {
  size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

std::vector<TensorMeta> LoweredCall::outputs() const {
  std::vector<TensorMeta> out;
  for (int v : graph.outputs)
    out.push_back(graph.meta(v));
  return out;
}

Lowering::Lowering(PrimBuilder &builder, const BoundArgs &bound) : b(builder), args(bound) {
  for (const Param &p : bound.signature().params) {
    const Arg &a = bound.get(p.name);
    if (a.isTensor()) {
      ids_[p.name] = {b.input(a.tensor)};
      inputArgs_.push_back(a);
    } else if (p.type == ParamType::TensorList && a.isSequence()) {
      for (const Arg &item : a.items) {
        ids_[p.name].push_back(b.input(item.tensor));
        inputArgs_.push_back(item);
      }
    }
  }
}

int Lowering::in(const std::string &name) const {
  auto it = ids_.find(name);
  return it == ids_.end() || it->second.empty() ? -1 : it->second.front();
}

std::vector<int> Lowering::inList(const std::string &name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? std::vector<int>() : it->second;
}

const OpTable &OpTable::get() {
  static const OpTable *table = [] {
    auto *t = new OpTable();
    try {
      for (const OpEntryRow &row : opEntryRows())
        t->add(row.name, row.kind, {row.signatures.begin(), row.signatures.end()},
               row.decomposition);
      for (const OpAliasRow &row : opAliasRows())
        t->alias(row.entry, row.alias);
      registerLowerings(*t);
      for (const auto &entry : t->entries_)
        if (!entry->lower)
          throw SchemaError("entry '" + entry->name + "' has no lowering");
    } catch (const SchemaError &e) {
      // A broken table is a build defect, not a user error: stop before anything uses it.
      std::fprintf(stderr, "sotc: internal error: operator table: %s\n", e.what());
      std::abort();
    }
    return t;
  }();
  return *table;
}

OpEntry &OpTable::add(const std::string &name, CallKind kind,
                      const std::vector<std::string> &signatures, std::string decomposition) {
  auto entry = std::make_unique<OpEntry>();
  entry->name = name;
  entry->kind = kind;
  entry->decomposition = std::move(decomposition);
  for (const std::string &text : signatures) {
    try {
      entry->signatures.push_back(parseSignature(text));
    } catch (const SchemaError &e) {
      throw SchemaError("entry '" + name + "', signature '" + text + "': " + e.what());
    }
  }
  if (entry->signatures.empty())
    throw SchemaError("entry '" + name + "' has no signature");
  if (!byName_.emplace(name, entry.get()).second)
    throw SchemaError("entry '" + name + "' is registered twice");
  entries_.push_back(std::move(entry));
  return *entries_.back();
}

void OpTable::alias(const std::string &entryName, const std::string &name) {
  auto entry = byName_.find(entryName);
  if (entry == byName_.end() || entry->second->name != entryName)
    throw SchemaError("alias '" + name + "' names no entry '" + entryName + "'");
  if (!byName_.emplace(name, entry->second).second)
    throw SchemaError("alias '" + name + "' of '" + entryName + "' is already taken");
  entry->second->aliases.push_back(name);
}

void OpTable::bind(const std::string &entryName, LowerFn lower) {
  auto entry = byName_.find(entryName);
  if (entry == byName_.end() || entry->second->name != entryName)
    throw SchemaError("a lowering is bound to '" + entryName + "', which OpEntries.def lacks");
  if (entry->second->lower)
    throw SchemaError("entry '" + entryName + "' has two lowerings");
  entry->second->lower = std::move(lower);
}

const std::vector<OpEntryRow> &opEntryRows() {
  static const std::vector<OpEntryRow> rows = {
#define OP(name, kind, decomposition, ...) {name, CallKind::kind, decomposition, {__VA_ARGS__}},
#define ALIAS(entry, alias)
#include "compiler/ops/OpEntries.def"
#undef OP
#undef ALIAS
  };
  return rows;
}

const std::vector<OpAliasRow> &opAliasRows() {
  static const std::vector<OpAliasRow> rows = {
#define OP(name, kind, decomposition, ...)
#define ALIAS(entry, alias) {entry, alias},
#include "compiler/ops/OpEntries.def"
#undef OP
#undef ALIAS
  };
  return rows;
}

const std::vector<OpRefusalRow> &opRefusalRows() {
  static const std::vector<OpRefusalRow> rows = {
#define REFUSED(name, reason) {name, reason},
#include "compiler/ops/Refusals.def"
#undef REFUSED
  };
  return rows;
}

std::string refusalSuffix(const std::string &name) {
  for (const OpRefusalRow &row : opRefusalRows())
    if (name == row.name)
      return std::string(": ") + row.reason;
  return "";
}

const OpEntry *OpTable::lookup(const std::string &name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}

LoweredCall OpTable::lower(const std::string &name, const CallArgs &args,
                           DerivedSizes *sizes) const {
  const OpEntry *entry = lookup(name);
  if (!entry)
    throw CodedError(DiagCode::OpUnknown,
                     name + " is not a supported operator (`sotc ops` lists them)");
  BoundArgs bound = resolveCall(entry->shortName(), entry->signatures, args);
  PrimBuilder builder(entry->shortName(), sizes);
  Lowering lowering(builder, bound);
  entry->lower(lowering);
  return {entry, bound.signatureIndex(), builder.take(), lowering.inputArgs()};
}

} // namespace sotc::ops
