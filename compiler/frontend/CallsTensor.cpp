//===- CallsTensor.cpp - Tensor methods that are not operators ----------------------------===//
//
// Methods that read tensor values on the host or answer from metadata alone, and torch's
// sizes passed as separate arguments; every other tensor method is an entry of the operator
// table.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"

#include <algorithm>

namespace sotc::frontend {
namespace {

/// x.numpy(), x.item(), ...: a host callback between two graphs, or an error.
bool hostRead(CallContext &c) {
  if (c.hostCallback("Tensor." + c.name, {c.self}, {},
                     c.hostValue(c.self->tensorName + "." + c.name + "()")))
    return true;
  // A number read for a decision (LED's `is_global_attn = mask.any().item()` then `if
  // is_global_attn:`, `if steps.item() >= n:`): compared and branched on in the graph.
  if (c.name == "item" && c.args.empty() && c.kwargs.empty() &&
      c.self->meta.numElements() == 1) {
    c.push(Executor::itemRead(c.self));
    return true;
  }
  c.hostError("Tensor." + c.name + "()");
}

bool dim(CallContext &c) {
  if (!c.args.empty())
    return false;
  c.consume(c.self);
  c.push(makeConst(PyConst::ofInt(c.self->meta.rank()), {c.self}));
  return true;
}

/// torch's x.size([d]) is x.shape[[d]]; paddle's Tensor.size is the element count (an op).
bool size(CallContext &c) {
  if (c.framework() != "torch")
    return false;
  VarPtr shape = c.getAttr(c.self, "shape");
  c.push(c.args.empty() ? shape : c.getItem(shape, c.args[0]));
  return true;
}

/// torch's x.numel(): the element count, known ahead of time (paddle's is a tensor: an op).
bool numel(CallContext &c) {
  int64_t n = c.self->meta.numElements();
  if (c.framework() != "torch" || !c.args.empty())
    return false;
  if (n == ops::kDynamic) { // a size: the product of its dimensions
    if (c.self->complexPair)
      return false;
    c.consume(c.self);
    c.push(makeDynamicSize(ops::productDim(ops::productOf(c.self->meta.shape)), {c.self}));
    return true;
  }
  if (c.self->complexPair) // a complex tensor's elements are its pairs
    n /= 2;
  c.consume(c.self);
  c.push(makeConst(PyConst::ofInt(n), {c.self}));
  return true;
}

/// x.zero_(), x.fill_(value), torch's x.copy_(src) (src broadcast to x, in x's dtype): written
/// in place (through an indexing: qkv_bias[a:b].zero_(), table.data[:, 2:].copy_(y)).
bool fillInPlace(CallContext &c) {
  VarPtr value = c.name == "zero_" ? makeConst(PyConst::ofInt(0), {}) : nullptr;
  if (c.name == "fill_" && c.args.size() == 1 && c.kwargs.empty())
    value = c.args[0];
  bool blocking = c.kwargs.empty() || (c.kwargs.size() == 1 && c.kwargs[0].first == "non_blocking");
  if (c.name == "copy_" && c.framework() == "torch" && c.args.size() == 1 && blocking &&
      c.args[0]->isTensor())
    value = c.args[0];
  if (!value || (c.name == "zero_" && !c.args.empty()))
    return false;
  c.push(c.fillInPlace(c.self, value));
  return true;
}

/// torch's x.new_zeros(size), new_ones(size), new_full(size, value), new_empty(size) (zeros
/// here): a filled tensor of x's dtype (or the dtype= given); sizes numbers or dynamic ones.
bool newFilled(CallContext &c) {
  if (c.framework() != "torch" || c.args.empty())
    return false;
  std::vector<VarPtr> args = c.args;
  VarPtr value = makeConst(PyConst::ofFloat(c.name == "new_ones" ? 1 : 0), {});
  if (c.name == "new_full") {
    if (args.size() != 2)
      return false;
    value = args.back();
    args.pop_back();
  }
  std::vector<VarPtr> sizes = args;
  if (sizes.size() == 1 && sizes[0]->isSequence())
    sizes = sizes[0]->items;
  if (!std::all_of(sizes.begin(), sizes.end(),
                   [](const VarPtr &s) { return isInt(s) || isDynamicSize(s); }))
    return false;
  Kwargs kwargs = {{"dtype", c.getAttr(c.self, "dtype")}};
  for (const auto &[k, v] : c.kwargs) { // (an artifact keeps no gradients: requires_grad)
    if (k != "dtype" && k != "device" && k != "requires_grad" && k != "pin_memory")
      return false;
    if (k == "dtype")
      kwargs[0].second = v;
  }
  c.push(c.tensorCall("api", "torch.full", "torch.full",
                      {makeSequence(Variable::Kind::List, sizes, {}), value}, kwargs));
  return true;
}

/// torch's x.reshape(2, -1), x.permute(2, 0, 1): the sizes as separate arguments are the
/// operator's one list (x.reshape((2, -1))). Rewrites the call; the operator table runs it.
bool sizesAsArguments(CallContext &c) {
  // A dynamic batch's size is a size too (Executor::passBatchSizes).
  auto isSize = [](const VarPtr &v) { return isInt(v) || isDynamicSize(v); };
  if (c.framework() == "torch" &&
      (c.args.size() > 1 || (c.args.size() == 1 && isSize(c.args[0]))) &&
      std::all_of(c.args.begin(), c.args.end(), isSize))
    c.args = {makeSequence(Variable::Kind::Tuple, c.args, {})};
  return false;
}

/// Questions with a fixed answer ahead of time: a tensor is a tensor, and inference keeps no
/// gradient to clear.
bool isTensor(CallContext &c) {
  c.push(makeConst(PyConst::ofBool(true), {c.self}));
  return true;
}

/// x.is_floating_point(), x.is_complex(): the dtype's kind, known ahead of time (guarded);
/// x.is_contiguous(): every tensor sotc hands a program is.
bool dtypeQuery(CallContext &c) {
  if (!c.args.empty() || !c.kwargs.empty())
    return false;
  c.consume(c.self);
  ops::DType d = c.self->meta.dtype;
  bool answer = c.name == "is_contiguous" ||
                (c.name == "is_floating_point" ? ops::isFloating(d) : ops::isComplex(d));
  c.push(makeConst(PyConst::ofBool(answer), {c.self}));
  return true;
}

bool clearGradient(CallContext &c) {
  c.push(none());
  return true;
}

} // namespace

bool resizeAsInPlace(CallContext &c) {
  bool method = c.self != nullptr;
  std::vector<VarPtr> args = c.args;
  if (method)
    args.insert(args.begin(), c.self);
  if (c.framework() != "torch" || args.empty() || !args[0]->isTensor())
    return false;
  std::string op = method ? "torch.Tensor.resize_as_" : "torch.resize_as_";
  VarPtr resized =
      c.tensorCall(method ? "method" : "api", method ? "resize_as_" : op, op, args, c.kwargs);
  c.push(c.resizeInPlace(args[0], resized));
  return true;
}

const CallTable &tensorMethods() {
  static const CallTable table = {
      {"numpy", hostRead},
      {"item", hostRead},
      {"tolist", hostRead},
      {"cpu", hostRead},
      {"__bool__", hostRead},
      {"dim", dim},
      {"size", size},
      {"numel", numel},
      {"is_tensor", isTensor},
      {"is_floating_point", dtypeQuery},
      {"is_complex", dtypeQuery},
      {"is_contiguous", dtypeQuery},
      {"clear_gradient", clearGradient},
      {"reshape", sizesAsArguments},
      {"view", sizesAsArguments},
      {"permute", sizesAsArguments},
      {"expand", sizesAsArguments},
      {"broadcast_to", sizesAsArguments},
      {"repeat", sizesAsArguments},
      {"flip", sizesAsArguments},
      {"zero_", fillInPlace},
      {"fill_", fillInPlace},
      {"copy_", fillInPlace},
      {"new_zeros", newFilled},
      {"new_ones", newFilled},
      {"new_full", newFilled},
      {"new_empty", newFilled},
      {"resize_as_", resizeAsInPlace},
  };
  return table;
}

} // namespace sotc::frontend
