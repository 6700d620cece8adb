//===- Schema.h - OneFlow-style operator signatures --------------------------------------===//
//
//   Tensor (Tensor x, Tensor y, *, Scalar alpha=1)
//   Tensor (Tensor x, IntList[1]? axis=None, Bool keepdim=False)
//   TensorList (Tensor x, IntList num_or_sections, Int axis=0)
//   (Tensor values, Tensor indices) (Tensor input, Int dim, Bool keepdim=False)
//
// Types: Tensor, TensorList, Scalar (bool/int/float), Int, Float (int or float), Bool,
// IntList (a list/tuple of ints; IntList[1] also takes a single int), FloatList (of numbers;
// FloatList[1] takes a single one: scale factors), DataType, String,
// Index (what `x[...]` accepts).
// `?` makes a parameter optional (it accepts None); `*` starts the keyword-only parameters;
// `Tensor... tensors` (the last positional) takes the remaining positional arguments as a
// list (torch.broadcast_tensors(a, b, c)), or one list of tensors given as it is.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_OPS_SCHEMA_H
#define SOTC_OPS_SCHEMA_H

#include "compiler/ops/Types.h"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sotc::ops {

enum class ParamType {
  Tensor,
  TensorList,
  Scalar,
  Int,
  Float,
  Bool,
  IntList,
  FloatList, // floats (ints accepted); FloatList[1] also takes a single number
  DataType,
  String,
  Index, // a subscript: int, slice, None, Ellipsis, or a tuple of those
};

const char *paramTypeName(ParamType type);

struct Param {
  std::string name;
  ParamType type = ParamType::Tensor;
  bool optional = false;      // `?`: None is accepted
  bool acceptsSingle = false; // IntList[1] / FloatList[1]: a single value is a one-element list
  bool keywordOnly = false;   // after `*`
  bool variadic = false;      // `Tensor... xs`: a TensorList of the remaining positionals
  std::optional<Arg> defaultValue;

  bool required() const { return !defaultValue.has_value(); }
};

struct Signature {
  ParamType returnType = ParamType::Tensor; // Tensor or TensorList
  /// A tuple's field names (returnType TensorList): "(Tensor values, Tensor indices) (...)",
  /// torch's named tuples (torch.return_types.max), a plain tuple where paddle returns one.
  std::vector<std::string> returnNames;
  std::vector<Param> params;

  /// The canonical text: "Tensor (Tensor x, Tensor y, *, Scalar alpha=1)".
  std::string str() const;
  const Param *find(const std::string &name) const;
};

/// A malformed signature; the message names the position and the problem.
class SchemaError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

Signature parseSignature(const std::string &text);

/// Whether `arg` is acceptable for a parameter of this type (None aside).
bool argMatches(const Param &param, const Arg &arg);

} // namespace sotc::ops

#endif // SOTC_OPS_SCHEMA_H
