//===- Dispatch.h - Overload resolution over signature schemas ---------------------------===//
//
// Binds a call's positional and keyword arguments to the first signature that accepts them,
// with Python's rules (positional then keyword, keyword-only after `*`, defaults), and
// reports a call that matches none the way OneFlow does. Errors are CodedErrors (E2xxx).
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_OPS_DISPATCH_H
#define SOTC_OPS_DISPATCH_H

#include "compiler/ops/Schema.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sotc::ops {

struct CallArgs {
  std::vector<Arg> positional;
  std::vector<std::pair<std::string, Arg>> keywords;
};

/// A call bound to one signature: every parameter has a value (defaults applied), IntList[1]
/// singles are lists, and DataType strings are dtypes.
class BoundArgs {
public:
  BoundArgs(const Signature &signature, size_t index) : signature_(&signature), index_(index) {}

  const Signature &signature() const { return *signature_; }
  size_t signatureIndex() const { return index_; }
  void set(const std::string &name, Arg value) { values_[name] = std::move(value); }

  const Arg &get(const std::string &name) const;
  bool isNone(const std::string &name) const { return get(name).isNone(); }
  const TensorMeta &tensor(const std::string &name) const { return get(name).tensor; }
  double scalar(const std::string &name) const { return get(name).scalar(); }
  int64_t intValue(const std::string &name) const { return get(name).intValue; }
  bool boolValue(const std::string &name) const { return get(name).boolValue; }
  std::vector<int64_t> intList(const std::string &name) const;
  std::vector<double> floatList(const std::string &name) const;

private:
  const Signature *signature_;
  size_t index_;
  std::map<std::string, Arg> values_;
};

/// Binds `args` to the first of `signatures` that accepts them. `name` is what messages call
/// the function ("pow"). Throws CodedError.
BoundArgs resolveCall(const std::string &name, const std::vector<Signature> &signatures,
                      const CallArgs &args);

} // namespace sotc::ops

#endif // SOTC_OPS_DISPATCH_H
