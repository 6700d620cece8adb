//===- OpTable.h - The one table of every supported tensor callable ----------------------===//
//
// Each entry names a callable (a paddle or torch API, a tensor method, a Python operator),
// lists its signatures, and lowers a bound call to primitives. Shape/dtype inference is the
// lowering's result, so inference and decomposition cannot disagree. Adding an operator is
// one row of OpEntries.def (names, signatures, docs) and its lowering, bound by name in the
// Lower*.cpp file of its group.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_OPS_OPTABLE_H
#define SOTC_OPS_OPTABLE_H

#include "compiler/ops/Dispatch.h"
#include "compiler/ops/Primitives.h"
#include "compiler/support/Expected.h"

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sotc::ops {

enum class CallKind { Api, Method, Operator };
const char *callKindName(CallKind kind); // "api", "method", "operator"

/// What a lowering sees: the bound call, the builder, and the value ids of its tensor
/// arguments (added as graph inputs in parameter order before the lowering runs).
class Lowering {
public:
  Lowering(PrimBuilder &builder, const BoundArgs &args);

  PrimBuilder &b;
  const BoundArgs &args;
  /// The value id of tensor parameter `name`; -1 when it is None.
  int in(const std::string &name) const;
  std::vector<int> inList(const std::string &name) const;
  void out(int value) { b.output(value); }
  /// The argument behind each graph input, in input order.
  const std::vector<Arg> &inputArgs() const { return inputArgs_; }

private:
  std::map<std::string, std::vector<int>> ids_;
  std::vector<Arg> inputArgs_;
};

using LowerFn = std::function<void(Lowering &)>;

struct OpEntry {
  std::string name; // "paddle.add", "Tensor.sum", "__add__", "torch.add"
  CallKind kind = CallKind::Api;
  std::vector<std::string> aliases; // other names for the same entry
  std::vector<Signature> signatures;
  std::string decomposition; // one line for docs and `sotc ops`: "max(x, 0)"
  LowerFn lower;

  /// Short name used in messages: "add" for "paddle.add", "__add__" for operators.
  std::string shortName() const;
};

/// The result of asking the table about a call.
struct LoweredCall {
  const OpEntry *entry;
  size_t signatureIndex;
  PrimGraph graph;            // inputs: the call's tensors in parameter order; outputs: the results
  std::vector<Arg> inputArgs; // the argument each graph input came from (same order)

  std::vector<TensorMeta> outputs() const;
};

class OpTable {
public:
  /// The table, built (and its signatures parsed) on first use. A malformed signature is a
  /// fatal error naming the entry.
  static const OpTable &get();

  /// nullptr when `name` is neither an entry nor an alias.
  const OpEntry *lookup(const std::string &name) const;
  const std::vector<std::unique_ptr<OpEntry>> &entries() const { return entries_; }

  /// Resolves the call and lowers it: E2001 unknown name, E2002-E2007 dispatch, E2008-E2010
  /// inference. `sizes`: the program's derived sizes, which the call may add to.
  LoweredCall lower(const std::string &name, const CallArgs &args,
                    DerivedSizes *sizes = nullptr) const;
  /// lower() for IR code: the error is a value, not an exception.
  Expected<LoweredCall> tryLower(const std::string &name, const CallArgs &args,
                                 DerivedSizes *sizes = nullptr) const {
    return catchCodedError([&] { return lower(name, args, sizes); });
  }

  /// Registration: the rows of OpEntries.def, then the lowerings by entry name. Each throws
  /// SchemaError naming the entry.
  OpEntry &add(const std::string &name, CallKind kind, const std::vector<std::string> &signatures,
               std::string decomposition);
  void alias(const std::string &entry, const std::string &name);
  void bind(const std::string &entry, LowerFn lower);

private:
  OpTable() = default;
  std::vector<std::unique_ptr<OpEntry>> entries_;
  std::map<std::string, OpEntry *> byName_;
};

/// Binds every entry's lowering (Lowerings.cpp).
void registerLowerings(OpTable &table);

/// One row of OpEntries.def: what `sotc ops`, the docs and the build-time check read.
struct OpEntryRow {
  const char *name;
  CallKind kind;
  const char *decomposition;
  std::vector<const char *> signatures;
};
struct OpAliasRow {
  const char *entry, *alias;
};
/// Every OP(...) and ALIAS(...) of OpEntries.def, in file order.
const std::vector<OpEntryRow> &opEntryRows();
const std::vector<OpAliasRow> &opAliasRows();

/// A framework API refused by name (Refusals.def): data-dependent shapes, random numbers,
/// matrix factorizations, complex results.
struct OpRefusalRow {
  const char *name, *reason;
};
const std::vector<OpRefusalRow> &opRefusalRows();
/// ": <reason>" for a refused API (to follow "not in the operator table"), else "".
std::string refusalSuffix(const std::string &name);

/// `sotc ops`: one block per entry, sorted by kind then name, and a count.
void printOpTable(const OpTable &table, std::ostream &os);
/// `sotc ops NAME`: the entry's kind, aliases, signatures and decomposition.
void printOpEntry(const OpEntry &entry, std::ostream &os);

} // namespace sotc::ops

#endif // SOTC_OPS_OPTABLE_H
