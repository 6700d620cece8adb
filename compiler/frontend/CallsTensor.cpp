//===- CallsTensor.cpp - Tensor methods that are not operators ----------------------------===//
//
// Methods that read tensor values on the host, or answer from metadata alone; every other
// tensor method is an entry of the operator table (Executor::call).
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"

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

} // namespace

const CallTable &tensorMethods() {
  static const CallTable table = {
      {"numpy", hostRead},    {"item", hostRead}, {"tolist", hostRead}, {"cpu", hostRead},
      {"__bool__", hostRead}, {"dim", dim},       {"size", size},
  };
  return table;
}

} // namespace sotc::frontend
