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

inline bool isInt(const VarPtr &v) {
  return v->isConstant() &&
         (v->constant.kind == PyConst::Kind::Int || v->constant.kind == PyConst::Kind::Bool);
}

/// One call being translated, and what a handler may do with it.
struct CallContext {
  Executor &ex;
  ExecState &state;
  StatementIR &sir;
  Frame &f;
  SourceLoc loc;
  std::string name; // the builtin's, method's or function's name
  VarPtr self;      // methods: the receiver
  std::vector<VarPtr> args;
  Kwargs kwargs;

  void push(VarPtr v) { state.frames.back().stack.push_back(std::move(v)); }
  [[noreturn]] void fail(DiagCode code, const std::string &message) const {
    ex.fail(code, message, f);
  }
  void consume(const VarPtr &v) { ex.consume(v, loc); }
  void consumeArgs() {
    for (const VarPtr &a : args)
      consume(a);
  }
  bool truthy(const VarPtr &v) { return ex.truthy(f, v); }
  std::vector<VarPtr> iterate(const VarPtr &v) { return ex.iterate(f, v); }
  VarPtr getAttr(VarPtr obj, const std::string &attr) { return ex.getAttr(f, sir, obj, attr); }
  VarPtr getItem(VarPtr obj, VarPtr key) { return ex.getItem(f, sir, obj, key); }
  VarPtr add(VarPtr a, VarPtr b) { return ex.binaryOp(f, sir, "add", false, a, b); }
  VarPtr compare(const std::string &op, VarPtr a, VarPtr b) { return ex.compare(f, sir, op, a, b); }
  VarPtr tensorCall(const std::string &kind, const std::string &callee, const std::string &opName,
                    std::vector<VarPtr> callArgs, Kwargs callKwargs) {
    return ex.tensorCall(f, sir, kind, callee, opName, std::move(callArgs), std::move(callKwargs));
  }
  const std::string &framework() const { return ex.framework_; }

  /// The call runs on the host between two graphs (--allow-host-callbacks), its result
  /// `result`; false when host callbacks are off.
  bool hostCallback(const std::string &callee, const std::vector<VarPtr> &callArgs,
                    const Kwargs &callKwargs, VarPtr result) {
    return ex.hostCallback(f, callee, callArgs, callKwargs, std::move(result));
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

using CallHandler = bool (*)(CallContext &);
using CallTable = std::map<std::string, CallHandler>;

const CallTable &builtinFunctions(); // CallsBuiltins.cpp
const CallTable &listMethods();      // CallsContainers.cpp
const CallTable &dictMethods();      // CallsContainers.cpp
const CallTable &strMethods();       // CallsContainers.cpp
const CallTable &tensorMethods();    // CallsTensor.cpp; the operator table serves the rest
/// Functions of modules: the operator table, then `math` on constants (CallsModules.cpp).
bool callModuleFunction(CallContext &c);

} // namespace sotc::frontend

#endif // SOTC_FRONTEND_CALLS_H
