#include "compiler/ops/Dispatch.h"

#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <optional>

namespace sotc::ops {

const Arg &BoundArgs::get(const std::string &name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    throw std::logic_error("operator library: no parameter '" + name + "' in " + signature_->str());
  return it->second;
}

std::vector<int64_t> BoundArgs::intList(const std::string &name) const {
  const Arg &arg = get(name);
  if (arg.kind == Arg::Kind::Int) // an Int parameter read as a one-element list
    return {arg.intValue};
  std::vector<int64_t> out;
  for (const Arg &item : arg.items)
    out.push_back(item.intValue);
  return out;
}

std::vector<double> BoundArgs::floatList(const std::string &name) const {
  std::vector<double> out;
  for (const Arg &item : get(name).items)
    out.push_back(item.scalar());
  return out;
}

namespace {

struct BindFailure {
  DiagCode code;
  std::string message; // without the "name(): " prefix
};

/// IntList[1] and FloatList[1] singles become lists; DataType strings become dtypes.
Arg normalize(const Param &p, Arg arg) {
  if ((p.type == ParamType::IntList && arg.kind == Arg::Kind::Int) ||
      (p.type == ParamType::FloatList &&
       (arg.kind == Arg::Kind::Int || arg.kind == Arg::Kind::Float)))
    return Arg::list({arg});
  if (p.type == ParamType::Float && arg.kind == Arg::Kind::Bool)
    return Arg::ofFloat(arg.boolValue ? 1.0 : 0.0);
  if (p.type == ParamType::DataType && arg.kind == Arg::Kind::String)
    return Arg::ofDType(*parseDType(arg.stringValue));
  return arg;
}

/// The type as a Python user reads it: "int or list of ints", "Tensor or None".
std::string describeType(const Param &p) {
  std::string s;
  switch (p.type) {
  case ParamType::Tensor:
    s = "Tensor";
    break;
  case ParamType::TensorList:
    s = "list of Tensors";
    break;
  case ParamType::Scalar:
    s = "Scalar (bool, int or float)";
    break;
  case ParamType::Int:
    s = "int";
    break;
  case ParamType::Float:
    s = "float";
    break;
  case ParamType::Bool:
    s = "bool";
    break;
  case ParamType::IntList:
    s = p.acceptsSingle ? "int or list of ints" : "list of ints";
    break;
  case ParamType::FloatList:
    s = p.acceptsSingle ? "float or list of floats" : "list of floats";
    break;
  case ParamType::DataType:
    s = "dtype";
    break;
  case ParamType::String:
    s = "str";
    break;
  case ParamType::Index:
    s = "int, slice, None, Ellipsis, a list of ints or a tuple of those";
    break;
  }
  return p.optional ? s + " or None" : s;
}

std::optional<BindFailure> bind(const Signature &sig, const CallArgs &argsIn, BoundArgs &out) {
  CallArgs gathered;
  const CallArgs *argsPtr = &argsIn;
  for (size_t i = 0; i < sig.params.size(); ++i)
    if (sig.params[i].variadic && argsIn.positional.size() > i) {
      // The remaining positionals as one list, unless they are one list already.
      gathered = argsIn;
      std::vector<Arg> rest(argsIn.positional.begin() + static_cast<long>(i),
                            argsIn.positional.end());
      gathered.positional.resize(i);
      gathered.positional.push_back(rest.size() == 1 && rest[0].isSequence() ? rest[0]
                                                                             : Arg::list(rest));
      argsPtr = &gathered;
    }
  const CallArgs &args = *argsPtr;
  size_t positionalParams = 0;
  for (const Param &p : sig.params)
    positionalParams += !p.keywordOnly;
  if (args.positional.size() > positionalParams)
    return BindFailure{DiagCode::OpTooManyPositional,
                       "takes " + std::to_string(positionalParams) + " positional argument" +
                           (positionalParams == 1 ? "" : "s") + " but " +
                           std::to_string(args.positional.size()) + " were given"};
  std::vector<std::optional<Arg>> given(sig.params.size());
  for (size_t i = 0; i < args.positional.size(); ++i)
    given[i] = args.positional[i];
  for (const auto &[name, value] : args.keywords) {
    size_t i = 0;
    while (i < sig.params.size() && sig.params[i].name != name)
      ++i;
    if (i == sig.params.size() && name == "axis") // torch takes numpy's `axis` for its `dim`
      for (i = 0; i < sig.params.size() && sig.params[i].name != "dim";)
        ++i;
    if (i == sig.params.size())
      return BindFailure{DiagCode::OpUnknownKeyword,
                         "got an unexpected keyword argument '" + name + "'"};
    if (given[i])
      return BindFailure{DiagCode::OpDuplicateArgument,
                         "got multiple values for argument '" + name + "'"};
    given[i] = value;
  }
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const Param &p = sig.params[i];
    if (!given[i]) {
      if (p.required())
        return BindFailure{DiagCode::OpMissingArgument,
                           "missing required argument '" + p.name + "'"};
      out.set(p.name, *p.defaultValue);
      continue;
    }
    const Arg &arg = *given[i];
    // A 0-d tensor where the framework reads its number (arange's bounds, a slice's start):
    // a value known only when the program runs, not a wrong type.
    auto zeroD = [](const Arg &a) { return a.isTensor() && a.tensor.shape.empty(); };
    auto slicedByValue = [&](const Arg &a) {
      return a.kind == Arg::Kind::Slice && std::any_of(a.items.begin(), a.items.end(), zeroD);
    };
    bool valueOfTensor = false;
    if (p.type == ParamType::Scalar || p.type == ParamType::Int || p.type == ParamType::Float)
      valueOfTensor = zeroD(arg);
    else if (p.type == ParamType::Index)
      valueOfTensor = arg.kind == Arg::Kind::Tuple
                          ? std::any_of(arg.items.begin(), arg.items.end(), slicedByValue)
                          : slicedByValue(arg);
    if (valueOfTensor)
      return BindFailure{DiagCode::FrontendHostInteraction,
                         "argument '" + p.name +
                             "' is a tensor's value (known only when the "
                             "program runs) where a number is taken: not compiled yet"};
    if (!(arg.isNone() && p.optional) && !argMatches(p, arg))
      return BindFailure{DiagCode::OpArgumentType, "argument '" + p.name + "' must be " +
                                                       describeType(p) + ", not " + arg.typeName()};
    out.set(p.name, normalize(p, arg));
  }
  return std::nullopt;
}

} // namespace

BoundArgs resolveCall(const std::string &name, const std::vector<Signature> &signatures,
                      const CallArgs &args) {
  std::optional<BindFailure> first;
  for (size_t i = 0; i < signatures.size(); ++i) {
    BoundArgs bound(signatures[i], i);
    std::optional<BindFailure> failure = bind(signatures[i], args, bound);
    if (!failure)
      return bound;
    if (!first)
      first = failure;
  }
  if (signatures.size() == 1)
    throw CodedError(first->code, name + "(): " + first->message);
  std::string message =
      name + "(): received an invalid combination of arguments. The valid signatures are:";
  for (size_t i = 0; i < signatures.size(); ++i)
    message += " *" + std::to_string(i) + ": " + signatures[i].str() + ";";
  message.pop_back();
  throw CodedError(DiagCode::OpNoMatchingSignature, message);
}

} // namespace sotc::ops
