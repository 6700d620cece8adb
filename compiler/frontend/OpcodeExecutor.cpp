//===- OpcodeExecutor.cpp - One handler per opcode, for CPython 3.11 to 3.13 ------------===//
//
// One switch over the version-independent Opcode enum. Where versions encode the same
// operation differently (argument bit fields, CALL's NULL, FOR_ITER's exit), the handler asks
// the trace's OpcodeTable (Opcodes.h) instead of testing the version itself.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Executor.h"

#include <algorithm>
#include <regex>

namespace sotc::frontend {
namespace {
using K = Variable::Kind;

// BINARY_OP's argument (opcode._nb_ops): the operator and its dunder name.
struct NbOp {
  const char *symbol;
  const char *dunder;
};
constexpr NbOp kNbOps[] = {
    {"+", "add"}, {"&", "and"},     {"//", "floordiv"}, {"<<", "lshift"}, {"@", "matmul"},
    {"*", "mul"}, {"%", "mod"},     {"|", "or"},        {"**", "pow"},    {">>", "rshift"},
    {"-", "sub"}, {"/", "truediv"}, {"^", "xor"},
};
constexpr const char *kCompareOps[] = {"<", "<=", "==", "!=", ">", ">="};

/// Thrown by the stack helpers on bytecode no CPython compiler emits (a crafted trace);
/// step() turns it into a coded error with the location.
struct MalformedBytecode {
  std::string what;
};

void need(const Frame &f, size_t n) {
  if (f.stack.size() < n)
    throw MalformedBytecode{"the value stack holds " + std::to_string(f.stack.size()) +
                            " values, the instruction needs " + std::to_string(n)};
}

VarPtr pop(Frame &f) {
  need(f, 1);
  VarPtr v = f.stack.back();
  f.stack.pop_back();
  return v;
}

std::vector<VarPtr> popN(Frame &f, size_t n) {
  need(f, n);
  std::vector<VarPtr> out(f.stack.end() - n, f.stack.end());
  f.stack.resize(f.stack.size() - n);
  return out;
}

/// The stack slot `depth` from the top (1 = top).
VarPtr &peek(Frame &f, size_t depth) {
  need(f, depth);
  return f.stack[f.stack.size() - depth];
}

VarPtr &slot(Frame &f, size_t index) {
  if (index >= f.localsplus.size())
    throw MalformedBytecode{"local slot " + std::to_string(index) + " does not exist"};
  return f.localsplus[index];
}

/// MAKE_FUNCTION's flag bits: closure cells, annotations, keyword defaults, defaults.
void setFunctionAttribute(const VarPtr &fn, unsigned flag, const VarPtr &value) {
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

VarPtr sequence(K kind, std::vector<VarPtr> items) {
  std::vector<VarPtr> inputs = items;
  VarPtr v = Variable::make(kind, computedFrom(std::move(inputs)));
  v->items = std::move(items);
  return v;
}
} // namespace

VarPtr Executor::branchCondition(const VarPtr &v) {
  if (v->itemRead && v->self->meta.dtype == ops::DType::Bool)
    return v->self;
  return v->isTensor() ? v : nullptr;
}

VarPtr Executor::itemRead(const VarPtr &tensor) {
  VarPtr v = Variable::make(K::Opaque, computedFrom({tensor}));
  v->name = "host value of " + tensor->tensorName + ".item()";
  v->self = tensor;
  v->itemRead = true;
  return v;
}

Break Executor::truthBranch(Frame &f, const VarPtr &value, bool negate, size_t next) {
  const VarPtr tensor = branchCondition(value);
  if (tensor->meta.numElements() != 1)
    fail(DiagCode::FrontendPythonError,
         "ValueError: the truth value of a tensor with " +
             (tensor->meta.numElements() == ops::kDynamic
                  ? std::string("a dynamic number of")
                  : std::to_string(tensor->meta.numElements())) +
             " elements is ambiguous",
         f);
  Break b;
  b.kind = Break::Kind::Branch;
  b.condition = tensor;
  b.targetIfTrue = b.targetIfFalse = next;
  b.pushOnTrue = Variable::constant_(PyConst::ofBool(!negate), computedFrom({tensor}));
  b.pushOnFalse = Variable::constant_(PyConst::ofBool(negate), computedFrom({tensor}));
  if (value->itemRead)
    b.decided = value;
  b.reason = value->itemRead ? "a bool read by Tensor.item()" : "truth value of a tensor";
  b.loc = locOf(f);
  return b;
}

Break Executor::takePendingBreak() {
  Break b = pendingBreak_.value_or(Break{});
  pendingBreak_.reset();
  return b;
}

void Executor::countIteration(Frame &f, const StatementIR &sir) {
  // Iterations that emitted statements are limited (the graph grows with each); those that
  // emitted none (Python alone) only by a multiple of it, which still ends a loop that never does.
  Frame::LoopCount &count = f.loopCounts[f.pc];
  if (sir.statements.size() != count.statements)
    ++count.emitting;
  count.statements = sir.statements.size();
  if (count.emitting > options_.maxLoopIterations ||
      ++count.total > kPythonLoopFactor * options_.maxLoopIterations)
    fail(DiagCode::FrontendLoopLimit,
         "a loop ran more than " +
             std::to_string(count.emitting > options_.maxLoopIterations
                                ? options_.maxLoopIterations
                                : kPythonLoopFactor * options_.maxLoopIterations) +
             " iterations while unrolling",
         f);
}

Break Executor::step(ExecState &state, StatementIR &sir) {
  try {
    return stepUnchecked(state, sir);
  } catch (const MalformedBytecode &e) {
    fail(DiagCode::FrontendUnsupportedOpcode, "malformed bytecode: " + e.what, state.frames.back());
  } catch (const PythonException &e) {
    if (!unwindToHandler(state, e))
      throw;
    return {};
  }
}

bool Executor::unwindToHandler(ExecState &state, const PythonException &e) {
  while (state.frames.size() > handlerFloor_) {
    Frame &f = state.frames.back();
    const trace::CodeObject &co = code(f);
    uint32_t offset = co.instructions(f.current).offset();
    for (const trace::ExceptionEntry &entry : co.exception_entries()) {
      if (offset < entry.start() || offset > entry.end()) // dis gives `end` inclusive
        continue;
      auto target = offsetIndex_[f.codeIndex].find(entry.target());
      if (entry.depth() > f.stack.size() || target == offsetIndex_[f.codeIndex].end())
        fail(DiagCode::FrontendUnsupportedOpcode,
             "malformed bytecode: an exception handler outside the code or the stack", f);
      f.stack.resize(entry.depth());
      if (entry.lasti())
        f.stack.push_back(Variable::constant_(PyConst::ofInt(offset)));
      f.stack.push_back(e.exception);
      f.pc = target->second;
      return true;
    }
    state.frames.pop_back();
  }
  return false;
}

Break Executor::stepUnchecked(ExecState &state, StatementIR &sir) {
  Frame &f = state.frames.back();
  const trace::CodeObject &co = code(f);
  if (f.pc >= static_cast<size_t>(co.instructions_size()))
    fail(DiagCode::FrontendUnsupportedConstruct, "execution ran past the end of the code", f);
  const trace::Instruction &ins = co.instructions(f.pc);
  f.current = f.pc;
  const OpcodeInfo *info = opcodes_->lookup(ins.opcode());
  if (!info || ins.opname() != info->name)
    fail(DiagCode::FrontendUnsupportedOpcode,
         "opcode " + std::to_string(ins.opcode()) + " ('" + ins.opname() +
             "') is not an opcode of CPython " + std::to_string(opcodes_->major()) + "." +
             std::to_string(opcodes_->minor()),
         f);
  Opcode op = info->op;
  unsigned arg = ins.arg();
  size_t next = f.pc + 1;
  auto jumpIndex = [&] { return offsetIndex_[f.codeIndex].at(ins.jump_target()); };
  auto constant = [&](PyConst c) {
    return Variable::constant_(std::move(c), Tracker{Tracker::Kind::Const, "", {}, {}, {}});
  };
  SourceLoc loc = locOf(f);
  auto loadLocal = [&](unsigned index) {
    VarPtr v = slot(f, index);
    if (!v)
      fail(DiagCode::FrontendPythonError,
           "UnboundLocalError: local variable '" +
               (index < static_cast<unsigned>(co.varnames_size()) ? co.varnames(index) : "?") +
               "' referenced before assignment",
           f);
    return v;
  };
  // Where an unconditional jump at `index` leads, so that a branch's sides start where the
  // code continues: 3.12 closes a `while` with POP_JUMP_IF_FALSE over a JUMP_BACKWARD where
  // 3.11 has one POP_JUMP_BACKWARD_IF_TRUE, and both must give the same segments.
  auto pastJumps = [&](size_t index) {
    for (int hops = 0; hops < 8 && index < static_cast<size_t>(co.instructions_size()); ++hops) {
      const trace::Instruction &jump = co.instructions(index);
      const OpcodeInfo *target = opcodes_->lookup(jump.opcode());
      if (!target || !jump.has_jump_target() ||
          (target->op != Opcode::JUMP_FORWARD && target->op != Opcode::JUMP_BACKWARD &&
           target->op != Opcode::JUMP_BACKWARD_NO_INTERRUPT))
        break;
      index = offsetIndex_[f.codeIndex].at(jump.jump_target());
    }
    return index;
  };
  // A value CALL will call, with the NULL that says it has no self where the version puts it.
  // Onto the current frame: a property's getter run in between may have moved `f`.
  auto pushForCall = [&](VarPtr value, bool withNull) {
    std::vector<VarPtr> &stack = state.frames.back().stack;
    if (withNull && opcodes_->nullBelowCallable())
      stack.push_back(Variable::make(K::Null));
    stack.push_back(std::move(value));
    if (withNull && !opcodes_->nullBelowCallable())
      stack.push_back(Variable::make(K::Null));
  };

  switch (op) {
  case Opcode::NOP:
  case Opcode::RESUME:
  case Opcode::PRECALL: // 3.11
  case Opcode::EXTENDED_ARG:
  case Opcode::CACHE: {
    break;
  }
  case Opcode::POP_TOP: {
    pop(f);
    break;
  }
  case Opcode::PUSH_NULL: {
    f.stack.push_back(Variable::make(K::Null));
    break;
  }
  case Opcode::COPY: {
    f.stack.push_back(peek(f, arg));
    break;
  }
  case Opcode::SWAP: {
    std::swap(peek(f, 1), peek(f, arg));
    break;
  }
  case Opcode::LOAD_CONST: {
    f.stack.push_back(fromTrace(co.consts(arg), Tracker{Tracker::Kind::Const, "", {}, {}, {}}));
    break;
  }
  case Opcode::LOAD_FAST:
  case Opcode::LOAD_FAST_CHECK:     // 3.12
  case Opcode::LOAD_FAST_LOAD_FAST: // 3.13: two locals in one argument
  case Opcode::LOAD_CLOSURE: {
    for (unsigned local : opcodes_->localIndices(*info, arg))
      f.stack.push_back(loadLocal(local));
    break;
  }
  case Opcode::LOAD_FAST_AND_CLEAR: { // 3.12: saves a name an inlined comprehension reuses
    VarPtr v = slot(f, arg);
    f.stack.push_back(v ? v : Variable::make(K::Null));
    slot(f, arg) = nullptr;
    break;
  }
  case Opcode::STORE_FAST:
  case Opcode::STORE_FAST_STORE_FAST: { // 3.13: STACK[-1] to the first, STACK[-2] to the second
    for (unsigned local : opcodes_->localIndices(*info, arg)) {
      VarPtr v = pop(f);
      // A NULL from LOAD_FAST_AND_CLEAR restores an unbound name.
      slot(f, local) = v->kind == K::Null ? nullptr : v;
    }
    break;
  }
  case Opcode::STORE_FAST_LOAD_FAST: { // 3.13
    std::vector<unsigned> locals = opcodes_->localIndices(*info, arg);
    slot(f, locals[0]) = pop(f);
    f.stack.push_back(loadLocal(locals[1]));
    break;
  }
  case Opcode::DELETE_FAST: {
    slot(f, arg) = nullptr;
    break;
  }
  case Opcode::MAKE_CELL: {
    VarPtr cell = Variable::make(K::Cell);
    cell->self = slot(f, arg);
    slot(f, arg) = cell;
    break;
  }
  case Opcode::COPY_FREE_VARS: {
    // The function's closure cells were placed by pushFrame already.
    break;
  }
  case Opcode::LOAD_DEREF: {
    VarPtr cell = slot(f, arg);
    if (!cell || cell->kind != K::Cell || !cell->self)
      fail(DiagCode::FrontendPythonError, "NameError: free variable referenced before assignment",
           f);
    f.stack.push_back(cell->self);
    break;
  }
  case Opcode::STORE_DEREF: {
    VarPtr v = pop(f);
    if (!slot(f, arg) || slot(f, arg)->kind != K::Cell)
      throw MalformedBytecode{"STORE_DEREF into a slot that holds no cell"};
    slot(f, arg)->self = v;
    break;
  }
  case Opcode::LOAD_GLOBAL: {
    const std::string &name = co.names(opcodes_->nameIndex(*info, arg));
    GlobalSlot *written = slotOf(state, f.namespaceIndex, name);
    if (written && !written->value)
      fail(DiagCode::FrontendNameError, "name '" + name + "' is not defined (deleted above)", f);
    VarPtr value = written ? written->value : global(f.namespaceIndex, name, f);
    pushForCall(value, opcodes_->pushesNull(*info, arg));
    break;
  }
  case Opcode::LOAD_ATTR: {
    // With the method flag (3.12 on), a bound method and a NULL: what LOAD_METHOD pushed.
    VarPtr obj = pop(f);
    const std::string &name = co.names(opcodes_->nameIndex(*info, arg));
    bool property = false;
    VarPtr getter = obj->kind == K::Object &&
                            std::none_of(obj->keys.begin(), obj->keys.end(),
                                         [&](const VarPtr &k) { return k->constant.text == name; })
                        ? classMember(obj, name, loc, &property)
                        : nullptr;
    if (property) { // the getter runs as a call: the frames may grow, and `f` move with them
      f.pc = next;
      pushForCall(callNow(state, sir, getter, {}, {}), opcodes_->pushesNull(*info, arg));
      return {};
    }
    pushForCall(getAttr(f, sir, obj, name), opcodes_->pushesNull(*info, arg));
    break;
  }
  case Opcode::LOAD_SUPER_ATTR: { // 3.12 on: super().name, from the global super, cls, self
    VarPtr self = pop(f), cls = pop(f);
    pop(f); // the builtin super
    VarPtr value = superAttr(f, makeSuper(f, cls, self), co.names(opcodes_->nameIndex(*info, arg)));
    pushForCall(value, arg & 1);
    break;
  }
  case Opcode::LOAD_METHOD: {
    VarPtr obj = pop(f);
    VarPtr method = getAttr(f, sir, obj, co.names(arg));
    f.stack.push_back(Variable::make(K::Null));
    f.stack.push_back(method);
    break;
  }
  case Opcode::KW_NAMES: {
    f.kwNames = fromTrace(co.consts(arg), Tracker{Tracker::Kind::Const, "", {}, {}, {}});
    break;
  }
  case Opcode::CALL:
  case Opcode::CALL_KW: { // 3.13: the keywords' names on the stack, not in KW_NAMES
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
    call(state, sir, callable, std::move(args), std::move(kwargs));
    return takePendingBreak();
    break;
  }
  case Opcode::CALL_FUNCTION_EX: {
    VarPtr kw = (arg & 1) ? pop(f) : nullptr;
    VarPtr posArgs = pop(f);
    // [NULL, callable] (3.11, 3.12; the NULL may be absent in 3.11) or [callable, NULL] (3.13).
    VarPtr callable = pop(f);
    if (callable->kind == K::Null)
      callable = pop(f);
    else if (!f.stack.empty() && f.stack.back()->kind == K::Null)
      pop(f);
    std::vector<VarPtr> args = iterate(f, sir, posArgs);
    std::vector<std::pair<std::string, VarPtr>> kwargs;
    if (kw)
      for (size_t i = 0; i < kw->keys.size(); ++i)
        kwargs.push_back({kw->keys[i]->constant.str(), kw->items[i]});
    f.pc = next;
    call(state, sir, callable, std::move(args), std::move(kwargs));
    return takePendingBreak();
    break;
  }
  case Opcode::MAKE_FUNCTION: {
    VarPtr codeVar = pop(f);
    if (codeVar->codeIndex < 0)
      throw MalformedBytecode{"MAKE_FUNCTION without a code object"};
    VarPtr fn = Variable::make(K::Function, Tracker{Tracker::Kind::Const, "", {}, {}, {}});
    fn->codeIndex = codeVar->codeIndex;
    fn->namespaceIndex = f.namespaceIndex;
    fn->name = trace_.code_objects(codeVar->codeIndex).qualname();
    for (unsigned flag : {0x08u, 0x04u, 0x02u, 0x01u}) // 3.11, 3.12: popped in this order
      if (arg & flag)
        setFunctionAttribute(fn, flag, pop(f));
    f.stack.push_back(fn);
    break;
  }
  case Opcode::SET_FUNCTION_ATTRIBUTE: { // 3.13: MAKE_FUNCTION's flags, one at a time
    VarPtr fn = pop(f), value = pop(f);
    if (fn->kind != K::Function)
      throw MalformedBytecode{"SET_FUNCTION_ATTRIBUTE on a " + fn->typeName()};
    setFunctionAttribute(fn, arg, value);
    f.stack.push_back(fn);
    break;
  }
  case Opcode::BINARY_OP: {
    VarPtr b = pop(f), a = pop(f);
    if (arg >= 2 * std::size(kNbOps))
      throw MalformedBytecode{"BINARY_OP argument " + std::to_string(arg) + " names no operator"};
    bool inplace = arg >= 13;
    f.stack.push_back(binaryOp(f, sir, kNbOps[inplace ? arg - 13 : arg].dunder, inplace, a, b));
    break;
  }
  case Opcode::UNARY_NEGATIVE:
  case Opcode::UNARY_POSITIVE: // 3.11; 3.12 on: CALL_INTRINSIC_1 INTRINSIC_UNARY_POSITIVE
  case Opcode::UNARY_INVERT: {
    f.stack.push_back(unaryOp(f, sir,
                              op == Opcode::UNARY_NEGATIVE   ? "__neg__"
                              : op == Opcode::UNARY_POSITIVE ? "__pos__"
                                                             : "__invert__",
                              pop(f)));
    break;
  }
  case Opcode::CALL_INTRINSIC_1: { // 3.12
    // CPython's Include/internal/pycore_intrinsics.h numbers.
    constexpr unsigned kStopIterationError = 3, kUnaryPositive = 5, kListToTuple = 6;
    VarPtr v = pop(f);
    if (arg == kStopIterationError) // a generator's handler: StopIteration may not leave it
      f.stack.push_back(v->exceptionType == "StopIteration"
                            ? makeException("RuntimeError", -1, "RuntimeError",
                                            {constant(PyConst::ofStr(
                                                "generator raised StopIteration"))})
                            : v);
    else if (arg == kUnaryPositive)
      f.stack.push_back(unaryOp(f, sir, "__pos__", v));
    else if (arg == kListToTuple)
      f.stack.push_back(sequence(K::Tuple, v->items));
    else
      fail(DiagCode::FrontendUnsupportedOpcode,
           "CALL_INTRINSIC_1 " + std::to_string(arg) + " (" + ins.argrepr() + ") is not supported",
           f);
    break;
  }
  case Opcode::UNARY_NOT: {
    VarPtr a = pop(f);
    if (branchCondition(a))
      return truthBranch(f, a, /*negate=*/true, next);
    bool value = truthy(f, a);
    f.stack.push_back(Variable::constant_(PyConst::ofBool(!value), computedFrom({a})));
    break;
  }
  case Opcode::TO_BOOL: { // 3.13: before every conditional jump on a value that may not be bool
    // A tensor (or an x.item() bool) stays itself: the jump that reads it is where the graph
    // branches.
    VarPtr a = pop(f);
    f.stack.push_back(branchCondition(a) ? a
                                         : Variable::constant_(PyConst::ofBool(truthy(f, a)),
                                                               computedFrom({a})));
    break;
  }
  case Opcode::COMPARE_OP: {
    VarPtr b = pop(f), a = pop(f);
    unsigned index = opcodes_->compareIndex(arg);
    if (index >= std::size(kCompareOps))
      throw MalformedBytecode{"COMPARE_OP argument " + std::to_string(arg) +
                              " names no comparison"};
    f.stack.push_back(compare(f, sir, kCompareOps[index], a, b));
    break;
  }
  case Opcode::IS_OP: {
    VarPtr b = pop(f), a = pop(f);
    f.stack.push_back(identical(f, a, b, arg != 0));
    break;
  }
  case Opcode::CONTAINS_OP: {
    VarPtr container = pop(f), item = pop(f);
    // An object whose class defines __contains__ (a Mapping's: a lookup that may fail).
    if (VarPtr method = container->kind == K::Object && !isRecord(container)
                            ? classMember(container, "__contains__", locOf(f))
                            : nullptr) {
      f.pc = next;
      VarPtr found = callNow(state, sir, method, {item}, {});
      Frame &caller = state.frames.back(); // `f` moved if the call grew the frame stack
      if (!found->isConstant())
        fail(DiagCode::FrontendUnsupportedConstruct,
             "'in' on a " + container->typeName() + " that does not answer with a bool", caller);
      caller.stack.push_back(
          constant(PyConst::ofBool(found->constant.truthy() != static_cast<bool>(arg))));
      return {};
    }
    if (isRecord(container))
      container = recordItems(container);
    VarPtr r = compare(f, sir, "in", item, container);
    if (arg)
      r = Variable::constant_(PyConst::ofBool(!r->constant.boolValue), computedFrom({r}));
    f.stack.push_back(r);
    break;
  }
  case Opcode::BINARY_SUBSCR: {
    VarPtr key = pop(f), obj = pop(f);
    // An object whose class defines __getitem__ (a library's registry), or a dict subclass
    // that does (transformers' ACT2FN makes the activation it names): a call of it.
    bool ownItems = (obj->kind == K::Object && !isRecord(obj)) ||
                    (obj->kind == K::Dict && obj->classIndex >= 0);
    if (VarPtr method = ownItems ? classMember(obj, "__getitem__", locOf(f)) : nullptr) {
      f.pc = next;
      call(state, sir, method, {key}, {});
      return takePendingBreak();
    }
    f.stack.push_back(getItem(f, sir, obj, key));
    break;
  }
  case Opcode::BINARY_SLICE: { // 3.12: obj[start:end]
    VarPtr end = pop(f), start = pop(f), obj = pop(f);
    f.stack.push_back(
        getItem(f, sir, obj, sequence(K::Slice, {start, end, constant(PyConst::none())})));
    break;
  }
  case Opcode::STORE_SUBSCR:
  case Opcode::STORE_SLICE: { // 3.12: obj[start:end] = value
    VarPtr key;
    if (op == Opcode::STORE_SLICE) {
      VarPtr end = pop(f), start = pop(f);
      key = sequence(K::Slice, {start, end, constant(PyConst::none())});
    } else {
      key = pop(f);
    }
    VarPtr obj = pop(f), value = pop(f);
    setItem(state, sir, obj, key, value);
    break;
  }
  case Opcode::DELETE_SUBSCR: {
    VarPtr key = pop(f), obj = pop(f);
    deleteItem(f, obj, key);
    break;
  }
  case Opcode::BUILD_TUPLE:
  case Opcode::BUILD_LIST: {
    f.stack.push_back(sequence(op == Opcode::BUILD_TUPLE ? K::Tuple : K::List, popN(f, arg)));
    break;
  }
  case Opcode::BUILD_MAP: {
    std::vector<VarPtr> kv = popN(f, 2 * arg);
    VarPtr d = Variable::make(K::Dict, computedFrom(kv));
    for (unsigned i = 0; i < arg; ++i) {
      d->keys.push_back(kv[2 * i]);
      d->items.push_back(kv[2 * i + 1]);
    }
    f.stack.push_back(d);
    break;
  }
  case Opcode::BUILD_CONST_KEY_MAP: {
    VarPtr keys = pop(f);
    std::vector<VarPtr> values = popN(f, arg);
    VarPtr d = Variable::make(K::Dict, computedFrom(values));
    d->keys = keys->items;
    d->items = values;
    f.stack.push_back(d);
    break;
  }
  case Opcode::BUILD_STRING: {
    std::vector<VarPtr> parts = popN(f, arg);
    std::string s;
    for (const VarPtr &p : parts)
      s += p->constant.text;
    f.stack.push_back(Variable::constant_(PyConst::ofStr(s), computedFrom(parts)));
    break;
  }
  case Opcode::BUILD_SLICE: {
    std::vector<VarPtr> parts = popN(f, arg);
    if (parts.size() == 2)
      parts.push_back(constant(PyConst::none()));
    f.stack.push_back(sequence(K::Slice, parts));
    break;
  }
  case Opcode::BUILD_SET: {
    // Sets keep their items in first-seen order without duplicates (constants compare).
    VarPtr set = sequence(K::Tuple, {});
    set->name = "set";
    for (VarPtr &item : popN(f, arg))
      if (std::none_of(set->items.begin(), set->items.end(), [&](const VarPtr &x) {
            return x.get() == item.get() ||
                   (x->isConstant() && item->isConstant() && x->constant == item->constant);
          }))
        set->items.push_back(item);
    f.stack.push_back(set);
    break;
  }
  case Opcode::SET_ADD:
  case Opcode::SET_UPDATE: {
    VarPtr v = pop(f);
    VarPtr &set = peek(f, arg);
    for (const VarPtr &item : op == Opcode::SET_ADD ? std::vector<VarPtr>{v} : iterate(f, sir, v))
      if (std::none_of(set->items.begin(), set->items.end(), [&](const VarPtr &x) {
            return x.get() == item.get() ||
                   (x->isConstant() && item->isConstant() && x->constant == item->constant);
          }))
        set->items.push_back(item);
    break;
  }
  case Opcode::LIST_APPEND: {
    VarPtr v = pop(f);
    peek(f, arg)->items.push_back(v);
    break;
  }
  case Opcode::LIST_EXTEND: {
    VarPtr v = pop(f);
    std::vector<VarPtr> items = iterate(f, sir, v);
    VarPtr &list = peek(f, arg);
    list->items.insert(list->items.end(), items.begin(), items.end());
    break;
  }
  case Opcode::LIST_TO_TUPLE: {
    VarPtr list = pop(f);
    f.stack.push_back(sequence(K::Tuple, list->items));
    break;
  }
  case Opcode::DICT_UPDATE:
  case Opcode::DICT_MERGE: {
    VarPtr src = pop(f);
    if (isRecord(src)) // **outputs of a ModelOutput: its fields set to something
      src = recordItems(src);
    else if (VarPtr keys = src->kind == K::Object ? classMember(src, "keys", locOf(f)) : nullptr) {
      // A Mapping of the program's: CPython reads keys(), then each item by __getitem__.
      VarPtr getitem = classMember(src, "__getitem__", locOf(f));
      if (!getitem)
        fail(DiagCode::FrontendPythonError,
             "TypeError: '" + src->typeName() + "' object is not subscriptable", f);
      VarPtr mapping = Variable::make(K::Dict, computedFrom({src}));
      for (const VarPtr &key : iterate(f, sir, callNow(state, sir, keys, {}, {}))) {
        mapping->keys.push_back(key);
        mapping->items.push_back(callNow(state, sir, getitem, {key}, {}));
      }
      src = mapping;
    }
    VarPtr &dst = peek(f, arg);
    if (src->kind != K::Dict)
      fail(DiagCode::FrontendUnsupportedConstruct, "** on a " + src->typeName(), f);
    for (size_t i = 0; i < src->keys.size(); ++i) {
      size_t j = 0;
      while (j < dst->keys.size() && !(dst->keys[j]->constant == src->keys[i]->constant))
        ++j;
      if (j < dst->keys.size() && op == Opcode::DICT_MERGE)
        fail(DiagCode::FrontendPythonError,
             "TypeError: got multiple values for keyword argument " + src->keys[i]->repr(), f);
      if (j < dst->keys.size())
        dst->items[j] = src->items[i];
      else {
        dst->keys.push_back(src->keys[i]);
        dst->items.push_back(src->items[i]);
      }
    }
    break;
  }
  case Opcode::MAP_ADD: {
    VarPtr value = pop(f), key = pop(f);
    VarPtr &d = peek(f, arg);
    d->keys.push_back(key);
    d->items.push_back(value);
    break;
  }
  case Opcode::UNPACK_SEQUENCE: {
    VarPtr seq = pop(f);
    std::vector<VarPtr> items = iterate(f, sir, seq);
    if (items.size() != arg)
      fail(DiagCode::FrontendPythonError,
           "ValueError: expected " + std::to_string(arg) + " values to unpack, got " +
               std::to_string(items.size()),
           f);
    for (auto it = items.rbegin(); it != items.rend(); ++it)
      f.stack.push_back(*it);
    break;
  }
  case Opcode::UNPACK_EX: {
    VarPtr seq = pop(f);
    std::vector<VarPtr> items = iterate(f, sir, seq);
    size_t before = arg & 0xff, after = arg >> 8;
    if (items.size() < before + after)
      fail(DiagCode::FrontendPythonError, "ValueError: not enough values to unpack", f);
    std::vector<VarPtr> middle(items.begin() + before, items.end() - after);
    for (size_t i = 0; i < after; ++i)
      f.stack.push_back(items[items.size() - 1 - i]);
    f.stack.push_back(sequence(K::List, middle));
    for (size_t i = before; i-- > 0;)
      f.stack.push_back(items[i]);
    break;
  }
  case Opcode::FORMAT_VALUE: { // 3.11, 3.12: conversion and spec in one instruction
    VarPtr spec = (arg & 0x04) ? pop(f) : nullptr;
    VarPtr value = pop(f);
    f.stack.push_back(formatValue(f, value, arg & 0x03, spec));
    break;
  }
  case Opcode::CONVERT_VALUE: { // 3.13: !s, !r, !a
    f.stack.push_back(formatValue(f, pop(f), arg, nullptr));
    break;
  }
  case Opcode::FORMAT_SIMPLE: { // 3.13
    f.stack.push_back(formatValue(f, pop(f), 0, nullptr));
    break;
  }
  case Opcode::FORMAT_WITH_SPEC: { // 3.13
    VarPtr spec = pop(f), value = pop(f);
    f.stack.push_back(formatValue(f, value, 0, spec));
    break;
  }
  case Opcode::JUMP_FORWARD:
  case Opcode::JUMP_BACKWARD:
  case Opcode::JUMP_BACKWARD_NO_INTERRUPT: {
    next = jumpIndex();
    if (op != Opcode::JUMP_FORWARD)
      countIteration(f, sir);
    break;
  }
  case Opcode::POP_JUMP_IF_FALSE: // 3.12 on
  case Opcode::POP_JUMP_IF_TRUE:
  case Opcode::POP_JUMP_IF_NONE:
  case Opcode::POP_JUMP_IF_NOT_NONE:
  case Opcode::POP_JUMP_FORWARD_IF_FALSE: // 3.11
  case Opcode::POP_JUMP_FORWARD_IF_TRUE:
  case Opcode::POP_JUMP_FORWARD_IF_NONE:
  case Opcode::POP_JUMP_FORWARD_IF_NOT_NONE:
  case Opcode::POP_JUMP_BACKWARD_IF_FALSE:
  case Opcode::POP_JUMP_BACKWARD_IF_TRUE:
  case Opcode::POP_JUMP_BACKWARD_IF_NONE:
  case Opcode::POP_JUMP_BACKWARD_IF_NOT_NONE:
  case Opcode::JUMP_IF_FALSE_OR_POP:
  case Opcode::JUMP_IF_TRUE_OR_POP: {
    // The variants differ in their names only: which way, on what, popping or not.
    const std::string &name = ins.opname();
    bool orPop = name.rfind("JUMP_IF_", 0) == 0;
    VarPtr cond = orPop ? peek(f, 1) : pop(f);
    bool onNone = name.find("_NONE") != std::string::npos;
    bool jumpWhenTrue =
        name.find("IF_TRUE") != std::string::npos || name.find("IF_NOT_NONE") != std::string::npos;
    if (VarPtr tensor = branchCondition(cond); tensor && !onNone) {
      Break b;
      b.kind = Break::Kind::Branch;
      b.condition = tensor;
      if (cond->itemRead)
        b.decided = cond;
      b.targetIfTrue = pastJumps(jumpWhenTrue ? jumpIndex() : next);
      b.targetIfFalse = pastJumps(jumpWhenTrue ? next : jumpIndex());
      b.popOnTrue = orPop && !jumpWhenTrue;
      b.popOnFalse = orPop && jumpWhenTrue;
      b.reason = cond->itemRead ? "branch on a bool read by Tensor.item()" : "branch on a tensor value";
      b.loc = loc;
      return b;
    }
    bool value;
    if (onNone) {
      value = cond->isConstant() && cond->constant.kind == PyConst::Kind::None;
      if (name.find("NOT_NONE") != std::string::npos)
        value = !value;
      consume(cond, loc);
      if (value)
        next = jumpIndex();
    } else {
      value = truthy(f, cond);
      bool jump = value == jumpWhenTrue;
      if (jump)
        next = jumpIndex();
      else if (orPop)
        pop(f);
    }
    if (name.find("BACKWARD") != std::string::npos && next < f.pc)
      countIteration(f, sir);
    break;
  }
  case Opcode::GET_ITER: {
    VarPtr src = pop(f);
    if (src->kind == K::Iterator) { // iter(it) is it
      f.stack.push_back(src);
      break;
    }
    VarPtr it = Variable::make(K::Iterator, computedFrom({src}));
    it->items = iterate(f, sir, src);
    consume(src, loc); // the number of iterations depends on it
    f.stack.push_back(it);
    break;
  }
  case Opcode::FOR_ITER: {
    VarPtr it = peek(f, 1);
    if (it->kind != K::Iterator)
      throw MalformedBytecode{"FOR_ITER on a " + it->typeName()};
    if (std::optional<VarPtr> item = nextItem(state, sir, it)) {
      f.stack.push_back(*item);
      countIteration(f, sir);
    } else {
      pop(f);
      next = jumpIndex() + opcodes_->forIterExitSkip();
    }
    break;
  }
  case Opcode::END_FOR: {
    // 3.12 and 3.13 compile it after every loop, but an exhausted FOR_ITER jumps past it.
    throw MalformedBytecode{"END_FOR is reached only past an exhausted FOR_ITER"};
    break;
  }
  case Opcode::LOAD_ASSERTION_ERROR: { // a failed assert: RAISE_VARARGS raises the class
    VarPtr cls = Variable::make(K::Builtin, Tracker{Tracker::Kind::Const, "", {}, {}, {}});
    cls->name = "AssertionError";
    f.stack.push_back(cls);
    break;
  }
  case Opcode::RETURN_GENERATOR: {
    f.stack.push_back(constant(PyConst::none())); // the value "sent" into the new generator
    break;
  }
  case Opcode::YIELD_VALUE: {
    if (!f.generator)
      throw MalformedBytecode{"YIELD_VALUE outside a generator"};
    // nextItem suspends the frame here; resumed, it finds what next() sends: None.
    f.yielded = pop(f);
    f.stack.push_back(constant(PyConst::none()));
    break;
  }
  case Opcode::RETURN_VALUE:
  case Opcode::RETURN_CONST: { // 3.12
    VarPtr value = op == Opcode::RETURN_CONST
                       ? fromTrace(co.consts(arg), Tracker{Tracker::Kind::Const, "", {}, {}, {}})
                       : pop(f);
    bool generator = f.generator;
    if (state.frames.size() == 1 && !generator && holdsComplex(value))
      fail(DiagCode::FrontendUnsupportedConstruct,
           "returning a complex tensor: an artifact returns real tensors (return "
           "torch.view_as_real of it)",
           f);
    std::function<void(const VarPtr &)> noItemBool = [&](const VarPtr &v) {
      if (v->itemRead)
        fail(DiagCode::FrontendHostInteraction,
             "returning the " + v->name + " needs its value on the host (a number read from "
             "a tensor decides branches ahead of time; return the tensor instead)",
             f);
      for (const VarPtr &i : v->items)
        noItemBool(i);
    };
    if (state.frames.size() == 1 && !generator)
      noItemBool(value);
    state.frames.pop_back();
    if (generator) // the generator is exhausted: its resumer sees no item (StopIteration)
      return {};
    if (state.frames.empty())
      state.returnValue = value;
    else
      state.frames.back().stack.push_back(value);
    return {};
    break;
  }
  case Opcode::RAISE_VARARGS: { // [exception, cause]; arg 0 re-raises the handled one
    if (arg == 0) {
      if (!state.handling)
        fail(DiagCode::FrontendPythonError, "RuntimeError: No active exception to reraise", f);
      throw PythonException(state.handling);
    }
    need(f, arg);
    VarPtr exception = peek(f, arg);
    if (exception->kind == K::Builtin && isBuiltinException(exception->name)) // raise KeyError
      exception = makeException(exception->name, -1, exception->name, {});
    else if (exception->kind == K::Class && !builtinExceptionBase(exception->classIndex).empty())
      exception = makeException(builtinExceptionBase(exception->classIndex), exception->classIndex,
                                exception->name, {});
    if (exception->exceptionType.empty())
      fail(DiagCode::FrontendUnsupportedConstruct,
           "the program raises " + exception->repr() + " here, which is not an exception", f);
    exception->raisedAt = locOf(f);
    raise(exception, "the program raises " + exception->repr() + " here", f);
  }
  case Opcode::RERAISE: { // [..., exception]: on from a handler that did not match
    throw PythonException(pop(f));
  }
  case Opcode::PUSH_EXC_INFO: { // [exception] -> [the one handled before, exception]
    VarPtr exception = pop(f);
    f.stack.push_back(state.handling ? state.handling : constant(PyConst::none()));
    f.stack.push_back(exception);
    state.handling = exception;
    break;
  }
  case Opcode::POP_EXCEPT: { // [the one handled before] -> []
    VarPtr before = pop(f);
    state.handling = before->exceptionType.empty() ? nullptr : before;
    break;
  }
  case Opcode::CHECK_EXC_MATCH: { // [exception, class] -> [exception, isinstance(...)]
    VarPtr cls = pop(f);
    const VarPtr &exception = peek(f, 1);
    std::vector<VarPtr> classes = cls->kind == K::Tuple ? cls->items : std::vector<VarPtr>{cls};
    bool matches = false;
    for (const VarPtr &c : classes) {
      if (c->kind == K::Class && !builtinExceptionBase(c->classIndex).empty()) {
        // A class of the program's: the exception's class or one of its bases.
        if (exception->classIndex >= 0) {
          const auto &mro = trace_.classes(exception->classIndex).mro();
          matches |=
              std::find(mro.begin(), mro.end(), static_cast<uint32_t>(c->classIndex)) != mro.end();
        }
        continue;
      }
      if (c->kind != K::Builtin || !isBuiltinException(c->name))
        fail(DiagCode::FrontendUnsupportedConstruct,
             "'except " + c->repr() + "': not an exception class sotc knows", f);
      matches |= exceptionIsA(exception->exceptionType, c->name);
    }
    f.stack.push_back(constant(PyConst::ofBool(matches)));
    break;
  }
  case Opcode::IMPORT_NAME: { // [level, fromlist] -> [the module]
    // An import names a module as a global would (library code imports torch in its
    // functions); what the program calls from it resolves by name, from the code the tracer
    // recorded of it. The module is assumed to import at run time as it did when traced.
    VarPtr fromlist = pop(f), level = pop(f);
    if (!level->isConstant() || level->constant.kind != PyConst::Kind::Int ||
        level->constant.intValue < 0)
      throw MalformedBytecode{"IMPORT_NAME with a level that is not a natural number"};
    std::string name = co.names(arg);
    if (int64_t up = level->constant.intValue; up > 0) { // from .ops import f: the package's
      std::string base = trace_.namespaces(f.namespaceIndex).package();
      for (int64_t i = 1; i < up && !base.empty(); ++i)
        base = base.substr(0, base.rfind('.') == std::string::npos ? 0 : base.rfind('.'));
      if (base.empty())
        fail(DiagCode::FrontendPythonError,
             "ImportError: attempted relative import beyond the top-level package", f);
      name = name.empty() ? base : base + "." + name;
    }
    bool from = !(fromlist->isConstant() && fromlist->constant.kind == PyConst::Kind::None);
    VarPtr module = Variable::make(K::Module, Tracker{Tracker::Kind::Const, "", {}, {}, {}});
    module->name = from ? name : name.substr(0, name.find('.')); // `import a.b` binds a
    f.stack.push_back(module);
    break;
  }
  case Opcode::IMPORT_FROM: { // [module] -> [module, module.name]
    f.stack.push_back(getAttr(f, sir, f.stack.back(), co.names(arg)));
    break;
  }
  case Opcode::STORE_GLOBAL:
  case Opcode::DELETE_GLOBAL: { // side effects, applied by the host after the call
    const std::string &name = co.names(arg);
    VarPtr value = op == Opcode::STORE_GLOBAL ? pop(f) : nullptr;
    if (!value && !slotOf(state, f.namespaceIndex, name))
      global(f.namespaceIndex, name, f); // NameError when it does not exist
    if (GlobalSlot *slot = slotOf(state, f.namespaceIndex, name)) {
      if (!value && !slot->value)
        fail(DiagCode::FrontendNameError, "name '" + name + "' is not defined", f);
      slot->value = value;
      slot->written = true;
    } else {
      state.globals.push_back({f.namespaceIndex, name, value, true});
    }
    break;
  }
  case Opcode::STORE_ATTR: {
    // An object the function made may change; one passed in only until it returns (sideEffects
    // checks that the attribute holds what it did).
    VarPtr obj = pop(f), value = pop(f);
    if (obj->kind != K::Object)
      fail(DiagCode::FrontendUnsupportedConstruct,
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
    break;
  }
  case Opcode::DELETE_ATTR: {
    fail(DiagCode::FrontendUnsupportedConstruct,
         "attribute assignment (" + ins.opname() + ") is a side effect sotc cannot compile", f);
    break;
  }
  case Opcode::BEFORE_WITH: { // [manager] -> [its __exit__, what __enter__ returned]
    VarPtr manager = pop(f);
    if (manager->kind != K::Opaque || manager->name.rfind("context manager ", 0) != 0)
      fail(DiagCode::FrontendUnsupportedConstruct,
           "'with' on a " + manager->typeName() +
               " is not supported (torch.no_grad() and paddle.no_grad() are)",
           f);
    VarPtr exit = Variable::make(K::Builtin, computedFrom({manager}));
    exit->name = "context manager exit"; // called with (None, None, None): does nothing
    if (manager->items.size() == 3) {    // an autocast block: in force until its exit
      std::string dtype = manager->items[2]->constant.text;
      state.autocast.push_back({manager->items[0]->constant.text, manager->items[1]->constant.text,
                                dtype == "off" ? std::nullopt : ops::parseDType(dtype)});
      exit->name = "autocast exit";
    }
    f.stack.push_back(exit);
    // What `as` binds: nullcontext's enter_result, else None.
    f.stack.push_back(manager->items.size() == 1 ? manager->items[0] : constant(PyConst::none()));
    break;
  }
  case Opcode::GET_YIELD_FROM_ITER: {
    fail(DiagCode::FrontendUnsupportedConstruct, "`yield from` is not supported yet", f);
    break;
  }
  case Opcode::SETUP_ANNOTATIONS: {
    fail(DiagCode::FrontendUnsupportedConstruct, "annotations in the function body", f);
    break;
  }
  default: {
    fail(DiagCode::FrontendUnsupportedOpcode, "opcode " + ins.opname() + " is not supported", f);
  }
  }
  f.pc = next;
  return {};
}

/// f-string formatting: `conversion` is 0 (none), 1 (!s), 2 (!r) or 3 (!a); `spec` may be null.
VarPtr Executor::formatValue(Frame &f, const VarPtr &value, unsigned conversion,
                             const VarPtr &spec) {
  SourceLoc loc = locOf(f);
  if (value->isTensor() || value->isHostValue())
    fail(DiagCode::FrontendHostInteraction,
         "formatting " + (value->isTensor() ? "a tensor" : "the " + value->name) +
             " into a string needs its value on the host",
         f);
  consume(value, loc);
  std::string text = conversion == 2 || conversion == 3 ? value->repr() : value->str();
  if (spec && !spec->constant.text.empty()) {
    // Only the part of Python's format-spec language that C's printf means the same way:
    // sign, #, zero padding, width and precision up to two digits, and one numeric type.
    // Anything else (fill and align, grouping, %, nested fields) is refused, and nothing
    // from the trace reaches printf unchecked.
    const std::string &fmt = spec->constant.text;
    static const std::regex kSpec("([ +-]?)(#?)(0?)([0-9]{0,2})(\\.[0-9]{1,2})?([dxXofFeEgG])");
    std::smatch m;
    char type = fmt.back();
    bool integer = std::string("dxXo").find(type) != std::string::npos;
    if (!std::regex_match(fmt, m, kSpec) || !value->isConstant() ||
        (integer && value->constant.kind != PyConst::Kind::Int) ||
        (!integer && !value->constant.isNumber()) || (integer && m[5].matched))
      fail(DiagCode::FrontendUnsupportedConstruct, "format spec '" + fmt + "' is not supported", f);
    char buf[160];
    std::string cfmt = "%" + fmt.substr(0, fmt.size() - 1);
    if (integer)
      std::snprintf(buf, sizeof buf, (cfmt + "ll" + type).c_str(),
                    static_cast<long long>(value->constant.intValue));
    else
      std::snprintf(buf, sizeof buf, (cfmt + type).c_str(), value->constant.number());
    text = buf;
  }
  return Variable::constant_(PyConst::ofStr(text), computedFrom({value}));
}

Break Executor::run(ExecState &state, StatementIR &sir) {
  running_ = &state;
  while (!state.frames.empty()) {
    Break b = step(state, sir);
    if (b.kind != Break::Kind::None)
      return b;
  }
  return {};
}

} // namespace sotc::frontend
