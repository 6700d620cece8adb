//===- OpcodesNamesAndCalls.cpp - Opcode handlers: the stack, names, attributes, calls ===//
//
// The instructions that move values between the stack, the frame's slots and the namespaces,
// read attributes, and call functions (CALL hands the callee to Executor::call).
//
//===-----------------------------------------------------------------------------------===//
#include "compiler/frontend/OpcodeStep.h"

#include <algorithm>

namespace sotc::frontend {

namespace {
using K = Variable::Kind;

/// MAKE_FUNCTION's flag bits: closure cells, annotations, keyword defaults, defaults.
void applyFunctionAttribute(const VarPtr &fn, unsigned flag, const VarPtr &value) {
  switch (flag) {
  case 0x08:
    fn->closure = value->items;
    break;
  case 0x04: // annotations do not change what the function computes
    break;
  case 0x02:
    for (size_t i = 0; i < value->keys.size(); ++i)
      fn->kwdefaults.push_back({value->keys[i]->constant.str(), value->items[i]});
    break;
  case 0x01:
    fn->defaults = value->items;
    break;
  default:
    throw MalformedBytecode{"function attribute flag " + std::to_string(flag) + " does not exist"};
  }
}
} // namespace

// NOP, RESUME, PRECALL, EXTENDED_ARG, CACHE
std::optional<Break> OpcodeStep::nothing() { return std::nullopt; }

// POP_TOP
std::optional<Break> OpcodeStep::popTop() {
  pop(f);
  return std::nullopt;
}

// PUSH_NULL
std::optional<Break> OpcodeStep::pushNull() {
  f.stack.push_back(Variable::make(K::Null));
  return std::nullopt;
}

// COPY
std::optional<Break> OpcodeStep::copy() {
  f.stack.push_back(peek(f, arg));
  return std::nullopt;
}

// SWAP
std::optional<Break> OpcodeStep::swap() {
  std::swap(peek(f, 1), peek(f, arg));
  return std::nullopt;
}

// LOAD_CONST
std::optional<Break> OpcodeStep::loadConst() {
  f.stack.push_back(ex.fromTrace(co.consts(arg), Tracker{Tracker::Kind::Const, "", {}, {}, {}}));
  return std::nullopt;
}

// LOAD_FAST, LOAD_FAST_CHECK, LOAD_FAST_LOAD_FAST, LOAD_CLOSURE
std::optional<Break> OpcodeStep::loadFast() {
  for (unsigned local : ex.opcodes_->localIndices(info, arg))
    f.stack.push_back(loadLocal(local));
  return std::nullopt;
}

// LOAD_FAST_AND_CLEAR (3.12: saves a name an inlined comprehension reuses)
std::optional<Break> OpcodeStep::loadFastAndClear() {
  VarPtr v = slot(f, arg);
  f.stack.push_back(v ? v : Variable::make(K::Null));
  slot(f, arg) = nullptr;
  return std::nullopt;
}

// STORE_FAST, STORE_FAST_STORE_FAST (3.13: STACK[-1] to the first, STACK[-2] to the second)
std::optional<Break> OpcodeStep::storeFast() {
  for (unsigned local : ex.opcodes_->localIndices(info, arg)) {
    VarPtr v = pop(f);
    // A NULL from LOAD_FAST_AND_CLEAR restores an unbound name.
    slot(f, local) = v->kind == K::Null ? nullptr : v;
  }
  return std::nullopt;
}

// STORE_FAST_LOAD_FAST (3.13)
std::optional<Break> OpcodeStep::storeFastLoadFast() {
  std::vector<unsigned> locals = ex.opcodes_->localIndices(info, arg);
  slot(f, locals[0]) = pop(f);
  f.stack.push_back(loadLocal(locals[1]));
  return std::nullopt;
}

// DELETE_FAST
std::optional<Break> OpcodeStep::deleteFast() {
  slot(f, arg) = nullptr;
  return std::nullopt;
}

// MAKE_CELL
std::optional<Break> OpcodeStep::makeCell() {
  VarPtr cell = Variable::make(K::Cell);
  cell->self = slot(f, arg);
  slot(f, arg) = cell;
  return std::nullopt;
}

// COPY_FREE_VARS
std::optional<Break> OpcodeStep::copyFreeVars() {
  // The function's closure cells were placed by pushFrame already.
  return std::nullopt;
}

// LOAD_DEREF
std::optional<Break> OpcodeStep::loadDeref() {
  VarPtr cell = slot(f, arg);
  if (!cell || cell->kind != K::Cell || !cell->self)
    ex.fail(DiagCode::FrontendPythonError, "NameError: free variable referenced before assignment",
            f);
  f.stack.push_back(cell->self);
  return std::nullopt;
}

// STORE_DEREF
std::optional<Break> OpcodeStep::storeDeref() {
  VarPtr v = pop(f);
  if (!slot(f, arg) || slot(f, arg)->kind != K::Cell)
    throw MalformedBytecode{"STORE_DEREF into a slot that holds no cell"};
  slot(f, arg)->self = v;
  return std::nullopt;
}

// LOAD_GLOBAL
std::optional<Break> OpcodeStep::loadGlobal() {
  const std::string &name = co.names(ex.opcodes_->nameIndex(info, arg));
  GlobalSlot *written = ex.slotOf(state, f.namespaceIndex, name);
  if (written && !written->value)
    ex.fail(DiagCode::FrontendNameError, "name '" + name + "' is not defined (deleted above)", f);
  VarPtr value = written ? written->value : ex.global(f.namespaceIndex, name, f);
  pushForCall(value, ex.opcodes_->pushesNull(info, arg));
  return std::nullopt;
}

// LOAD_ATTR
std::optional<Break> OpcodeStep::loadAttr() {
  // With the method flag (3.12 on), a bound method and a NULL: what LOAD_METHOD pushed.
  VarPtr obj = pop(f);
  const std::string &name = co.names(ex.opcodes_->nameIndex(info, arg));
  bool property = false;
  VarPtr getter = obj->kind == K::Object &&
                          std::none_of(obj->keys.begin(), obj->keys.end(),
                                       [&](const VarPtr &k) { return k->constant.text == name; })
                      ? ex.classMember(obj, name, loc, &property)
                      : nullptr;
  if (property) { // the getter runs as a call: the frames may grow, and `f` move with them
    f.pc = next;
    pushForCall(ex.callNow(state, sir, getter, {}, {}), ex.opcodes_->pushesNull(info, arg));
    return Break{};
  }
  pushForCall(ex.getAttr(f, sir, obj, name), ex.opcodes_->pushesNull(info, arg));
  return std::nullopt;
}

// LOAD_SUPER_ATTR (3.12 on: super().name, from the global super, cls, self)
std::optional<Break> OpcodeStep::loadSuperAttr() {
  VarPtr self = pop(f), cls = pop(f);
  pop(f); // the builtin super
  VarPtr value =
      ex.superAttr(f, ex.makeSuper(f, cls, self), co.names(ex.opcodes_->nameIndex(info, arg)));
  pushForCall(value, arg & 1);
  return std::nullopt;
}

// LOAD_METHOD
std::optional<Break> OpcodeStep::loadMethod() {
  VarPtr obj = pop(f);
  VarPtr method = ex.getAttr(f, sir, obj, co.names(arg));
  f.stack.push_back(Variable::make(K::Null));
  f.stack.push_back(method);
  return std::nullopt;
}

// KW_NAMES
std::optional<Break> OpcodeStep::keywordNames() {
  f.kwNames = ex.fromTrace(co.consts(arg), Tracker{Tracker::Kind::Const, "", {}, {}, {}});
  return std::nullopt;
}

// CALL, CALL_KW (3.13: the keywords' names on the stack, not in KW_NAMES)
std::optional<Break> OpcodeStep::callWithArguments() {
  if (op == Opcode::CALL_KW)
    f.kwNames = pop(f);
  std::vector<VarPtr> args = popN(f, arg);
  VarPtr upper = pop(f);
  VarPtr lower = pop(f);
  if (f.kwNames && f.kwNames->items.size() > args.size())
    throw MalformedBytecode{"KW_NAMES names more keywords than the call has arguments"};
  // [NULL, callable] (3.11, 3.12) or [callable, NULL] (3.13); [method, self] in both.
  VarPtr callable = lower->kind == K::Null ? upper : lower;
  if (lower->kind != K::Null && upper->kind != K::Null)
    args.insert(args.begin(), upper);
  std::vector<std::pair<std::string, VarPtr>> kwargs;
  if (f.kwNames) {
    size_t n = f.kwNames->items.size();
    for (size_t i = 0; i < n; ++i)
      kwargs.push_back({f.kwNames->items[i]->constant.text, args[args.size() - n + i]});
    args.resize(args.size() - n);
    f.kwNames = nullptr;
  }
  f.pc = next;
  ex.call(state, sir, callable, std::move(args), std::move(kwargs));
  return ex.takePendingBreak();
}

// CALL_FUNCTION_EX
std::optional<Break> OpcodeStep::callFunctionEx() {
  VarPtr kw = (arg & 1) ? pop(f) : nullptr;
  VarPtr posArgs = pop(f);
  // [NULL, callable] (3.11, 3.12; the NULL may be absent in 3.11) or [callable, NULL] (3.13).
  VarPtr callable = pop(f);
  if (callable->kind == K::Null)
    callable = pop(f);
  else if (!f.stack.empty() && f.stack.back()->kind == K::Null)
    pop(f);
  std::vector<VarPtr> args = ex.iterate(f, sir, posArgs);
  std::vector<std::pair<std::string, VarPtr>> kwargs;
  if (kw)
    for (size_t i = 0; i < kw->keys.size(); ++i)
      kwargs.push_back({kw->keys[i]->constant.str(), kw->items[i]});
  f.pc = next;
  ex.call(state, sir, callable, std::move(args), std::move(kwargs));
  return ex.takePendingBreak();
}

// MAKE_FUNCTION
std::optional<Break> OpcodeStep::makeFunction() {
  VarPtr codeVar = pop(f);
  if (codeVar->codeIndex < 0)
    throw MalformedBytecode{"MAKE_FUNCTION without a code object"};
  VarPtr fn = Variable::make(K::Function, Tracker{Tracker::Kind::Const, "", {}, {}, {}});
  fn->codeIndex = codeVar->codeIndex;
  fn->namespaceIndex = f.namespaceIndex;
  fn->name = ex.trace_.code_objects(codeVar->codeIndex).qualname();
  for (unsigned flag : {0x08u, 0x04u, 0x02u, 0x01u}) // 3.11, 3.12: popped in this order
    if (arg & flag)
      applyFunctionAttribute(fn, flag, pop(f));
  f.stack.push_back(fn);
  return std::nullopt;
}

// SET_FUNCTION_ATTRIBUTE (3.13: MAKE_FUNCTION's flags, one at a time)
std::optional<Break> OpcodeStep::setFunctionAttribute() {
  VarPtr fn = pop(f), value = pop(f);
  if (fn->kind != K::Function)
    throw MalformedBytecode{"SET_FUNCTION_ATTRIBUTE on a " + fn->typeName()};
  applyFunctionAttribute(fn, arg, value);
  f.stack.push_back(fn);
  return std::nullopt;
}

// IMPORT_NAME ([level, fromlist] -> [the module])
std::optional<Break> OpcodeStep::importName() {
  // An import names a module as a global would (library code imports torch in its
  // functions); what the program calls from it resolves by name, from the code the tracer
  // recorded of it. The module is assumed to import at run time as it did when traced.
  VarPtr fromlist = pop(f), level = pop(f);
  if (!level->isConstant() || level->constant.kind != PyConst::Kind::Int ||
      level->constant.intValue < 0)
    throw MalformedBytecode{"IMPORT_NAME with a level that is not a natural number"};
  std::string name = co.names(arg);
  if (int64_t up = level->constant.intValue; up > 0) { // from .ops import f: the package's
    std::string base = ex.trace_.namespaces(f.namespaceIndex).package();
    for (int64_t i = 1; i < up && !base.empty(); ++i)
      base = base.substr(0, base.rfind('.') == std::string::npos ? 0 : base.rfind('.'));
    if (base.empty())
      ex.fail(DiagCode::FrontendPythonError,
              "ImportError: attempted relative import beyond the top-level package", f);
    name = name.empty() ? base : base + "." + name;
  }
  bool from = !(fromlist->isConstant() && fromlist->constant.kind == PyConst::Kind::None);
  VarPtr module = Variable::make(K::Module, Tracker{Tracker::Kind::Const, "", {}, {}, {}});
  module->name = from ? name : name.substr(0, name.find('.')); // `import a.b` binds a
  f.stack.push_back(module);
  return std::nullopt;
}

// IMPORT_FROM ([module] -> [module, module.name])
std::optional<Break> OpcodeStep::importFrom() {
  f.stack.push_back(ex.getAttr(f, sir, f.stack.back(), co.names(arg)));
  return std::nullopt;
}

// STORE_GLOBAL, DELETE_GLOBAL (side effects, applied by the host after the call)
std::optional<Break> OpcodeStep::storeGlobal() {
  const std::string &name = co.names(arg);
  VarPtr value = op == Opcode::STORE_GLOBAL ? pop(f) : nullptr;
  if (!value && !ex.slotOf(state, f.namespaceIndex, name))
    ex.global(f.namespaceIndex, name, f); // NameError when it does not exist
  if (GlobalSlot *slot = ex.slotOf(state, f.namespaceIndex, name)) {
    if (!value && !slot->value)
      ex.fail(DiagCode::FrontendNameError, "name '" + name + "' is not defined", f);
    slot->value = value;
    slot->written = true;
  } else {
    state.globals.push_back({f.namespaceIndex, name, value, true});
  }
  return std::nullopt;
}

// STORE_ATTR
std::optional<Break> OpcodeStep::storeAttr() {
  // An object the function made may change; one passed in only until it returns (sideEffects
  // checks that the attribute holds what it did).
  VarPtr obj = pop(f), value = pop(f);
  if (obj->kind != K::Object)
    ex.fail(DiagCode::FrontendUnsupportedConstruct,
            "attribute assignment on a " + obj->typeName() + " is not supported", f);
  const std::string &name = co.names(arg);
  auto it = std::find_if(obj->keys.begin(), obj->keys.end(),
                         [&](const VarPtr &k) { return k->constant.text == name; });
  if (!obj->madeHere &&
      std::none_of(state.assignedAttributes.begin(), state.assignedAttributes.end(),
                   [&](const auto &a) { return a.object == obj && a.name == name; }))
    state.assignedAttributes.push_back(
        {obj, name, it != obj->keys.end() ? obj->items[it - obj->keys.begin()] : nullptr, loc});
  if (it != obj->keys.end()) {
    obj->items[it - obj->keys.begin()] = value;
  } else {
    obj->keys.push_back(constant(PyConst::ofStr(name)));
    obj->items.push_back(value);
  }
  return std::nullopt;
}

// DELETE_ATTR
std::optional<Break> OpcodeStep::deleteAttr() {
  ex.fail(DiagCode::FrontendUnsupportedConstruct,
          "attribute assignment (" + ins.opname() + ") is a side effect sotc cannot compile", f);
  return std::nullopt;
}

} // namespace sotc::frontend
