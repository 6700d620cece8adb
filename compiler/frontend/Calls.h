//===- Calls.h - Call handlers, one name -> handler table per receiver family ------------===//
//
// Executor::call (Calls.cpp) looks the callee up by its kind: builtins (CallsBuiltins.cpp),
// methods of lists, dicts and strings (CallsContainers.cpp), of tensors (CallsTensor.cpp),
// and functions of modules (CallsModules.cpp: the operator table and `math`). A handler gets
// the call as a CallContext and returns false when these arguments are not its case; the
// family then reports the call as unsupported. Internal to the frontend.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_FRONTEND_CALLS_H
#define SOTC_FRONTEND_CALLS_H

#include "compiler/frontend/Executor.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sotc::frontend {

using Kwargs = std::vector<std::pair<std::string, VarPtr>>;

/// The tracker of a value written in the program (a literal, a keyword's name).
inline Tracker constTracker() { return Tracker{Tracker::Kind::Const, "", {}, {}, {}}; }

inline VarPtr makeConst(PyConst c, std::vector<VarPtr> from) {
  return Variable::constant_(std::move(c), computedFrom(std::move(from)));
}

inline VarPtr makeSequence(Variable::Kind kind, std::vector<VarPtr> items,
                           std::vector<VarPtr> from) {
  VarPtr v = Variable::make(kind, computedFrom(std::move(from)));
  v->items = std::move(items);
  return v;
}

inline VarPtr none() { return makeConst(PyConst::none(), {}); }
/// An argument left out (null) or passed as None.
inline bool isNone(const VarPtr &v) {
  return !v || (v->isConstant() && v->constant.kind == PyConst::Kind::None);
}
inline VarPtr intConst(int64_t v) { return makeConst(PyConst::ofInt(v), {}); }
/// A list of int constants (a shape, a permutation, paddings).
inline VarPtr intList(const std::vector<int64_t> &values) {
  std::vector<VarPtr> items;
  for (int64_t v : values)
    items.push_back(intConst(v));
  return makeSequence(Variable::Kind::List, items, {});
}
/// functools.partial(func, *args, **keywords): calling it calls func (Executor::call).
VarPtr makePartial(VarPtr func, std::vector<VarPtr> args, Kwargs keywords, Tracker tracker);

inline bool isInt(const VarPtr &v) {
  return v->isConstant() &&
         (v->constant.kind == PyConst::Kind::Int || v->constant.kind == PyConst::Kind::Bool);
}

/// One call being translated, and what a handler may do with it.
struct CallContext {
  Executor &ex;
  ExecState &state;
  StatementIR &sir;
  SourceLoc loc;
  std::string name; // the builtin's, method's or function's name
  VarPtr self;      // methods: the receiver
  std::vector<VarPtr> args;
  Kwargs kwargs;

  /// The calling frame (callNow may grow the frame stack, so it is looked up each time).
  Frame &f() const { return state.frames.back(); }
  void push(VarPtr v) { state.frames.back().stack.push_back(std::move(v)); }
  /// Calls `callable` to completion and returns its result: a user function runs its frames
  /// here (for map, filter, sorted's key, ...).
  VarPtr callNow(VarPtr callable, std::vector<VarPtr> callArgs, Kwargs callKwargs = {}) {
    return ex.callNow(state, sir, std::move(callable), std::move(callArgs), std::move(callKwargs));
  }
  [[noreturn]] void fail(DiagCode code, const std::string &message) const {
    ex.fail(code, message, f());
  }
  void consume(const VarPtr &v) { ex.consume(v, loc); }
  void consumeArgs() {
    for (const VarPtr &a : args)
      consume(a);
  }
  bool truthy(const VarPtr &v) { return ex.truthy(f(), v); }
  std::vector<VarPtr> iterate(const VarPtr &v) { return ex.iterate(f(), sir, v); }
  /// The next item of an iterator (a generator runs to its next yield), or nothing.
  std::optional<VarPtr> next(const VarPtr &it) { return ex.nextItem(state, sir, it); }
  VarPtr getAttr(VarPtr obj, const std::string &attr) { return ex.getAttr(f(), sir, obj, attr); }
  VarPtr plainGetAttr(VarPtr obj, const std::string &attr) {
    return ex.plainGetAttr(f(), sir, obj, attr);
  }
  /// A member of the object's traced class (a method bound to it), or null.
  VarPtr classMember(VarPtr obj, const std::string &name) { return ex.classMember(obj, name, loc); }
  VarPtr getItem(VarPtr obj, VarPtr key) { return ex.getItem(f(), sir, obj, key); }
  /// a <op> b by the operator's dunder name without underscores ("add", "pow", ...).
  VarPtr binary(const std::string &op, VarPtr a, VarPtr b, bool inplace = false) {
    return ex.binaryOp(f(), sir, op, inplace, a, b);
  }
  VarPtr unary(const std::string &dunder, VarPtr a) { return ex.unaryOp(f(), sir, dunder, a); }
  /// What an f-string makes of `value` with `conversion` (0, !s, !r, !a) and `spec`.
  VarPtr format(VarPtr value, unsigned conversion, const std::string &spec) {
    return ex.formatValue(f(), value, conversion,
                          spec.empty() ? nullptr : makeConst(PyConst::ofStr(spec), {}));
  }
  void setItem(VarPtr obj, VarPtr key, VarPtr value) { ex.setItem(state, sir, obj, key, value); }
  void deleteItem(VarPtr obj, VarPtr key) { ex.deleteItem(f(), obj, key); }
  VarPtr fillInPlace(VarPtr x, VarPtr value) { return ex.fillInPlace(state, sir, x, value); }
  VarPtr resizeInPlace(VarPtr x, VarPtr resized) { return ex.resizeInPlace(state, x, resized); }
  VarPtr makeSuper(VarPtr cls, VarPtr obj) { return ex.makeSuper(f(), cls, obj); }
  VarPtr identical(VarPtr a, VarPtr b, bool negate) { return ex.identical(f(), a, b, negate); }
  VarPtr add(VarPtr a, VarPtr b) { return binary("add", a, b); }
  VarPtr compare(const std::string &op, VarPtr a, VarPtr b) {
    return ex.compare(f(), sir, op, a, b);
  }
  VarPtr tensorCall(const std::string &kind, const std::string &callee, const std::string &opName,
                    std::vector<VarPtr> callArgs, Kwargs callKwargs) {
    return ex.tensorCall(f(), sir, kind, callee, opName, std::move(callArgs),
                         std::move(callKwargs));
  }
  const std::string &framework() const { return ex.framework_; }

  /// The call runs on the host between two graphs (--allow-host-callbacks), its result
  /// `result`; false when host callbacks are off.
  bool hostCallback(const std::string &callee, const std::vector<VarPtr> &callArgs,
                    const Kwargs &callKwargs, VarPtr result) {
    return ex.hostCallback(f(), callee, callArgs, callKwargs, std::move(result));
  }
  /// bool(x) of a tensor as a value: the segment ends in a branch on it, each side continuing
  /// after the call with the bool (negated for `not`). Nothing is pushed here.
  bool truthBranch(const VarPtr &tensor, bool negate) {
    ex.pendingBreak_ = ex.truthBranch(f(), tensor, negate, f().pc);
    return true;
  }
  /// The coded error for a call that needs tensor values on the host.
  [[noreturn]] void hostError(const std::string &what) const;
  /// A value only the host will know (x.item(), x.numpy()): it may be returned, not
  /// computed with.
  VarPtr hostValue(const std::string &what) const;
  /// --break-on=API: true when the call became a host boundary.
  bool breakOn(const std::string &callee, const std::string &opName,
               const std::vector<VarPtr> &callArgs);
};

/// A keyword argument, or the positional one at `index`, or null.
inline VarPtr argument(const std::vector<VarPtr> &args, const Kwargs &kwargs,
                       const std::string &name, size_t index) {
  for (const auto &[k, v] : kwargs)
    if (k == name)
      return v;
  return index < args.size() ? args[index] : nullptr;
}
inline VarPtr argument(const CallContext &c, const std::string &name, size_t index) {
  return argument(c.args, c.kwargs, name, index);
}

using CallHandler = bool (*)(CallContext &);
using CallTable = std::map<std::string, CallHandler>;

const CallTable &builtinFunctions(); // CallsBuiltins.cpp
const CallTable &listMethods();      // CallsContainers.cpp
const CallTable &tupleMethods();     // CallsContainers.cpp
const CallTable &dictMethods();      // CallsContainers.cpp
const CallTable &strMethods();       // CallsContainers.cpp
const CallTable &setMethods();       // CallsContainers.cpp
/// Sets are tuples named "set" or "frozenset" with distinct items: one object, or equal
/// constants, are one item (CPython's hash and == for what sotc keeps in sets; a tensor by
/// identity, as torch hashes it).
bool isSet(const VarPtr &v);
bool setHas(const VarPtr &set, const VarPtr &item);
/// a | b, a & b, a - b, a ^ b ("or", "and", "sub", "xor") of a set and the items of each of
/// `others` in turn: a new set of a's type.
VarPtr setAlgebra(const std::string &op, const VarPtr &a,
                  const std::vector<std::vector<VarPtr>> &others);
/// a <= b ("<=", "<", ">=", ">", "==", "!=") of two sets, by their items.
bool setCompare(const std::string &op, const VarPtr &a, const VarPtr &b);
const CallTable &tensorMethods();    // CallsTensor.cpp; the operator table serves the rest
/// torch.resize_as_(x, t) and x.resize_as_(t): the operator's result replaces x (CallsTensor.cpp).
bool resizeAsInPlace(CallContext &c);
/// Functions of modules: the operator table, `operator` (Python's operators as functions),
/// then `math` on constants (CallsModules.cpp).
bool callModuleFunction(CallContext &c);
/// Whether the operation makes a complex tensor from real ones (ComplexTensors.cpp).
bool makesComplex(const std::string &opName);
/// Tensors made from Python values: to_tensor, arange, eye, ... (CallsCreation.cpp).
bool callCreation(CallContext &c);

} // namespace sotc::frontend

#endif // SOTC_FRONTEND_CALLS_H
