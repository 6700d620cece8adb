//===- OpcodesControl.cpp - Opcode handlers: jumps, loops, returns, exceptions, `with` ===//
//
// The instructions that decide where execution goes on: jumps (a jump on a tensor is a
// branch of the segment graph), loops over iterators, returns and yields, raising and
// handling exceptions, and context managers.
//
//===-----------------------------------------------------------------------------------===//
#include "compiler/frontend/OpcodeStep.h"

#include <algorithm>

namespace sotc::frontend {

using K = Variable::Kind;

// JUMP_FORWARD, JUMP_BACKWARD, JUMP_BACKWARD_NO_INTERRUPT
std::optional<Break> OpcodeStep::jump() {
  next = jumpIndex();
  if (op != Opcode::JUMP_FORWARD)
    ex.countIteration(f, sir);
  return std::nullopt;
}

// POP_JUMP_IF_*, POP_JUMP_FORWARD_IF_*, POP_JUMP_BACKWARD_IF_* (3.11), JUMP_IF_*_OR_POP
std::optional<Break> OpcodeStep::conditionalJump() {
  // The variants differ in their names only: which way, on what, popping or not.
  const std::string &name = ins.opname();
  bool orPop = name.rfind("JUMP_IF_", 0) == 0;
  VarPtr cond = orPop ? peek(f, 1) : pop(f);
  bool onNone = name.find("_NONE") != std::string::npos;
  bool jumpWhenTrue =
      name.find("IF_TRUE") != std::string::npos || name.find("IF_NOT_NONE") != std::string::npos;
  if (VarPtr tensor = ex.branchCondition(cond); tensor && !onNone) {
    Break b;
    b.kind = Break::Kind::Branch;
    b.condition = tensor;
    if (cond->itemRead)
      b.decided = cond;
    b.targetIfTrue = pastJumps(jumpWhenTrue ? jumpIndex() : next);
    b.targetIfFalse = pastJumps(jumpWhenTrue ? next : jumpIndex());
    b.popOnTrue = orPop && !jumpWhenTrue;
    b.popOnFalse = orPop && jumpWhenTrue;
    b.reason =
        cond->itemRead ? "branch on a bool read by Tensor.item()" : "branch on a tensor value";
    b.loc = loc;
    return b;
  }
  bool value;
  if (onNone) {
    value = cond->isConstant() && cond->constant.kind == PyConst::Kind::None;
    if (name.find("NOT_NONE") != std::string::npos)
      value = !value;
    ex.consume(cond, loc);
    if (value)
      next = jumpIndex();
  } else {
    value = ex.truthy(f, cond);
    bool jump = value == jumpWhenTrue;
    if (jump)
      next = jumpIndex();
    else if (orPop)
      pop(f);
  }
  if (name.find("BACKWARD") != std::string::npos && next < f.pc)
    ex.countIteration(f, sir);
  return std::nullopt;
}

// GET_ITER
std::optional<Break> OpcodeStep::getIter() {
  VarPtr src = pop(f);
  if (src->kind == K::Iterator) { // iter(it) is it
    f.stack.push_back(src);
    return std::nullopt;
  }
  VarPtr it = Variable::make(K::Iterator, computedFrom({src}));
  it->items = ex.iterate(f, sir, src);
  ex.consume(src, loc); // the number of iterations depends on it
  f.stack.push_back(it);
  return std::nullopt;
}

// FOR_ITER
std::optional<Break> OpcodeStep::forIter() {
  VarPtr it = peek(f, 1);
  if (it->kind != K::Iterator)
    throw MalformedBytecode{"FOR_ITER on a " + it->typeName()};
  if (std::optional<VarPtr> item = ex.nextItem(state, sir, it)) {
    f.stack.push_back(*item);
    ex.countIteration(f, sir);
  } else {
    pop(f);
    next = jumpIndex() + ex.opcodes_->forIterExitSkip();
  }
  return std::nullopt;
}

// END_FOR
std::optional<Break> OpcodeStep::endFor() {
  // 3.12 and 3.13 compile it after every loop, but an exhausted FOR_ITER jumps past it.
  throw MalformedBytecode{"END_FOR is reached only past an exhausted FOR_ITER"};
  return std::nullopt;
}

// LOAD_ASSERTION_ERROR (a failed assert: RAISE_VARARGS raises the class)
std::optional<Break> OpcodeStep::loadAssertionError() {
  VarPtr cls = Variable::make(K::Builtin, Tracker{Tracker::Kind::Const, "", {}, {}, {}});
  cls->name = "AssertionError";
  f.stack.push_back(cls);
  return std::nullopt;
}

// RETURN_GENERATOR
std::optional<Break> OpcodeStep::returnGenerator() {
  f.stack.push_back(constant(PyConst::none())); // the value "sent" into the new generator
  return std::nullopt;
}

// YIELD_VALUE
std::optional<Break> OpcodeStep::yieldValue() {
  if (!f.generator)
    throw MalformedBytecode{"YIELD_VALUE outside a generator"};
  // nextItem suspends the frame here; resumed, it finds what next() sends: None.
  f.yielded = pop(f);
  f.stack.push_back(constant(PyConst::none()));
  return std::nullopt;
}

// RETURN_VALUE, RETURN_CONST (3.12)
std::optional<Break> OpcodeStep::returnValue() {
  VarPtr value = op == Opcode::RETURN_CONST
                     ? ex.fromTrace(co.consts(arg), Tracker{Tracker::Kind::Const, "", {}, {}, {}})
                     : pop(f);
  bool generator = f.generator;
  if (state.frames.size() == 1 && !generator && ex.holdsComplex(value))
    ex.fail(DiagCode::FrontendUnsupportedConstruct,
            "returning a complex tensor: an artifact returns real tensors (return "
            "torch.view_as_real of it)",
            f);
  std::function<void(const VarPtr &)> noItemBool = [&](const VarPtr &v) {
    if (v->itemRead)
      ex.fail(DiagCode::FrontendHostInteraction,
              "returning the " + v->name +
                  " needs its value on the host (a number read from "
                  "a tensor decides branches ahead of time; return the tensor instead)",
              f);
    for (const VarPtr &i : v->items)
      noItemBool(i);
  };
  if (state.frames.size() == 1 && !generator)
    noItemBool(value);
  state.frames.pop_back();
  if (generator) // the generator is exhausted: its resumer sees no item (StopIteration)
    return Break{};
  if (state.frames.empty())
    state.returnValue = value;
  else
    state.frames.back().stack.push_back(value);
  return Break{};
}

// RAISE_VARARGS ([exception, cause]; arg 0 re-raises the handled one)
std::optional<Break> OpcodeStep::raiseVarargs() {
  if (arg == 0) {
    if (!state.handling)
      ex.fail(DiagCode::FrontendPythonError, "RuntimeError: No active exception to reraise", f);
    throw PythonException(state.handling);
  }
  need(f, arg);
  VarPtr exception = peek(f, arg);
  if (exception->kind == K::Builtin && isBuiltinException(exception->name)) // raise KeyError
    exception = makeException(exception->name, -1, exception->name, {});
  else if (exception->kind == K::Class && !ex.builtinExceptionBase(exception->classIndex).empty())
    exception = makeException(ex.builtinExceptionBase(exception->classIndex), exception->classIndex,
                              exception->name, {});
  if (exception->exceptionType.empty())
    ex.fail(DiagCode::FrontendUnsupportedConstruct,
            "the program raises " + exception->repr() + " here, which is not an exception", f);
  exception->raisedAt = ex.locOf(f);
  ex.raise(exception, "the program raises " + exception->repr() + " here", f);
  return std::nullopt;
}

// RERAISE ([..., exception]: on from a handler that did not match)
std::optional<Break> OpcodeStep::reraise() {
  throw PythonException(pop(f));
  return std::nullopt;
}

// PUSH_EXC_INFO ([exception] -> [the one handled before, exception])
std::optional<Break> OpcodeStep::pushExcInfo() {
  VarPtr exception = pop(f);
  f.stack.push_back(state.handling ? state.handling : constant(PyConst::none()));
  f.stack.push_back(exception);
  state.handling = exception;
  return std::nullopt;
}

// POP_EXCEPT ([the one handled before] -> [])
std::optional<Break> OpcodeStep::popExcept() {
  VarPtr before = pop(f);
  state.handling = before->exceptionType.empty() ? nullptr : before;
  return std::nullopt;
}

// CHECK_EXC_MATCH ([exception, class] -> [exception, isinstance(...)])
std::optional<Break> OpcodeStep::checkExcMatch() {
  VarPtr cls = pop(f);
  const VarPtr &exception = peek(f, 1);
  std::vector<VarPtr> classes = cls->kind == K::Tuple ? cls->items : std::vector<VarPtr>{cls};
  bool matches = false;
  for (const VarPtr &c : classes) {
    if (c->kind == K::Class && !ex.builtinExceptionBase(c->classIndex).empty()) {
      // A class of the program's: the exception's class or one of its bases.
      if (exception->classIndex >= 0) {
        const auto &mro = ex.trace_.classes(exception->classIndex).mro();
        matches |=
            std::find(mro.begin(), mro.end(), static_cast<uint32_t>(c->classIndex)) != mro.end();
      }
      continue;
    }
    if (c->kind != K::Builtin || !isBuiltinException(c->name))
      ex.fail(DiagCode::FrontendUnsupportedConstruct,
              "'except " + c->repr() + "': not an exception class sotc knows", f);
    matches |= exceptionIsA(exception->exceptionType, c->name);
  }
  f.stack.push_back(constant(PyConst::ofBool(matches)));
  return std::nullopt;
}

// BEFORE_WITH ([manager] -> [its __exit__, what __enter__ returned])
std::optional<Break> OpcodeStep::beforeWith() {
  VarPtr manager = pop(f);
  if (manager->kind != K::Opaque || manager->name.rfind("context manager ", 0) != 0)
    ex.fail(DiagCode::FrontendUnsupportedConstruct,
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
  return std::nullopt;
}

// GET_YIELD_FROM_ITER
std::optional<Break> OpcodeStep::getYieldFromIter() {
  ex.fail(DiagCode::FrontendUnsupportedConstruct, "`yield from` is not supported yet", f);
  return std::nullopt;
}

// SETUP_ANNOTATIONS
std::optional<Break> OpcodeStep::setupAnnotations() {
  ex.fail(DiagCode::FrontendUnsupportedConstruct, "annotations in the function body", f);
  return std::nullopt;
}

} // namespace sotc::frontend
