//===- CallsTensor.cpp - Tensor methods that are not operators ----------------------------===//
//
// Methods that read tensor values on the host, answer from metadata alone, or become other
// operators (chunk); every other tensor method is an entry of the operator table.
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

/// x.chunk(chunks, axis): torch's split sizes (ceil(n / chunks), the last smaller), which are
/// paddle's when n divides.
bool chunk(CallContext &c) {
  VarPtr chunks = c.args.empty() ? nullptr : c.args[0];
  VarPtr axis = c.args.size() > 1 ? c.args[1] : nullptr;
  for (const auto &[k, v] : c.kwargs)
    (k == "chunks" ? chunks : axis) = v;
  if (!chunks || !isInt(chunks) || (axis && !isInt(axis)) || chunks->constant.intValue <= 0)
    return false;
  c.consume(chunks);
  int64_t rank = c.self->meta.rank(), d = axis ? axis->constant.intValue : 0;
  if (axis)
    c.consume(axis);
  if (d < 0)
    d += rank;
  if (d < 0 || d >= rank || c.self->meta.shape[d] == ops::kDynamic)
    return false;
  int64_t n = c.self->meta.shape[d], k = chunks->constant.intValue;
  int64_t step = (n + k - 1) / k;
  std::vector<VarPtr> sizes;
  for (int64_t start = 0; start < n; start += step)
    sizes.push_back(makeConst(PyConst::ofInt(std::min(step, n - start)), {}));
  std::string split = c.framework() == "torch" ? "torch.split" : "paddle.split";
  VarPtr parts = c.tensorCall(
      "api", split, split,
      {c.self, makeSequence(Variable::Kind::List, sizes, {}), makeConst(PyConst::ofInt(d), {})},
      {});
  c.push(c.framework() == "torch" ? makeSequence(Variable::Kind::Tuple, parts->items, {parts})
                                  : parts);
  return true;
}

/// torch's x.reshape(2, -1), x.permute(2, 0, 1): the sizes as separate arguments are the
/// operator's one list (x.reshape((2, -1))). Rewrites the call; the operator table runs it.
bool sizesAsArguments(CallContext &c) {
  if (c.framework() == "torch" && (c.args.size() > 1 || (c.args.size() == 1 && isInt(c.args[0]))) &&
      std::all_of(c.args.begin(), c.args.end(), isInt))
    c.args = {makeSequence(Variable::Kind::Tuple, c.args, {})};
  return false;
}

/// Questions with a fixed answer ahead of time: a tensor is a tensor, and inference keeps no
/// gradient to clear.
bool isTensor(CallContext &c) {
  c.push(makeConst(PyConst::ofBool(true), {c.self}));
  return true;
}

bool clearGradient(CallContext &c) {
  c.push(none());
  return true;
}

} // namespace

const CallTable &tensorMethods() {
  static const CallTable table = {
      {"numpy", hostRead},     {"item", hostRead},
      {"tolist", hostRead},    {"cpu", hostRead},
      {"__bool__", hostRead},  {"dim", dim},
      {"size", size},          {"chunk", chunk},
      {"is_tensor", isTensor}, {"clear_gradient", clearGradient},
      {"reshape", sizesAsArguments}, {"view", sizesAsArguments},
      {"permute", sizesAsArguments},
  };
  return table;
}

} // namespace sotc::frontend
