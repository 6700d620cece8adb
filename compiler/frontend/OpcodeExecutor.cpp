//===- OpcodeExecutor.cpp - Stepping bytecode through the opcode handler table --------===//
//
// Each instruction runs the handler the table (OpcodeHandlers.def) gives its version-independent
// Opcode. Where versions encode the same operation differently (argument bit fields, CALL's
// NULL, FOR_ITER's exit), the handler asks the trace's OpcodeTable (Opcodes.h) instead of
// testing the version itself.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/OpcodeStep.h"

#include <algorithm>
#include <regex>

namespace sotc::frontend {
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

VarPtr &peek(Frame &f, size_t depth) {
  need(f, depth);
  return f.stack[f.stack.size() - depth];
}

VarPtr &slot(Frame &f, size_t index) {
  if (index >= f.localsplus.size())
    throw MalformedBytecode{"local slot " + std::to_string(index) + " does not exist"};
  return f.localsplus[index];
}

VarPtr sequence(Variable::Kind kind, std::vector<VarPtr> items) {
  std::vector<VarPtr> inputs = items;
  VarPtr v = Variable::make(kind, computedFrom(std::move(inputs)));
  v->items = std::move(items);
  return v;
}

namespace {
using K = Variable::Kind;
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
  OpcodeStep::Handler handler = OpcodeStep::handlerOf(info->op);
  if (!handler)
    fail(DiagCode::FrontendUnsupportedOpcode, "opcode " + ins.opname() + " is not supported", f);
  OpcodeStep step{*this, state, sir, f, co, ins, *info, info->op, ins.arg(), f.pc + 1, locOf(f)};
  if (std::optional<Break> b = (step.*handler)())
    return *b;
  f.pc = step.next;
  return {};
}

OpcodeStep::Handler OpcodeStep::handlerOf(Opcode op) {
  static const std::array<Handler, kOpcodeCount> table = [] {
    std::array<Handler, kOpcodeCount> t{};
#define OPCODE_HANDLER(opcode, handler)                                                            \
  t[static_cast<size_t>(Opcode::opcode)] = &OpcodeStep::handler;
#include "compiler/frontend/OpcodeHandlers.def"
#undef OPCODE_HANDLER
    return t;
  }();
  return table[static_cast<size_t>(op)];
}

size_t OpcodeStep::jumpIndex() const { return ex.offsetIndex_[f.codeIndex].at(ins.jump_target()); }

VarPtr OpcodeStep::constant(PyConst c) const {
  return Variable::constant_(std::move(c), Tracker{Tracker::Kind::Const, "", {}, {}, {}});
}

VarPtr OpcodeStep::loadLocal(unsigned index) {
  VarPtr v = slot(f, index);
  if (!v)
    ex.fail(DiagCode::FrontendPythonError,
            "UnboundLocalError: local variable '" +
                (index < static_cast<unsigned>(co.varnames_size()) ? co.varnames(index) : "?") +
                "' referenced before assignment",
            f);
  return v;
}

size_t OpcodeStep::pastJumps(size_t index) const {
  for (int hops = 0; hops < 8 && index < static_cast<size_t>(co.instructions_size()); ++hops) {
    const trace::Instruction &jump = co.instructions(index);
    const OpcodeInfo *target = ex.opcodes_->lookup(jump.opcode());
    if (!target || !jump.has_jump_target() ||
        (target->op != Opcode::JUMP_FORWARD && target->op != Opcode::JUMP_BACKWARD &&
         target->op != Opcode::JUMP_BACKWARD_NO_INTERRUPT))
      break;
    index = ex.offsetIndex_[f.codeIndex].at(jump.jump_target());
  }
  return index;
}

void OpcodeStep::pushForCall(VarPtr value, bool withNull) {
  std::vector<VarPtr> &stack = state.frames.back().stack;
  if (withNull && ex.opcodes_->nullBelowCallable())
    stack.push_back(Variable::make(Variable::Kind::Null));
  stack.push_back(std::move(value));
  if (withNull && !ex.opcodes_->nullBelowCallable())
    stack.push_back(Variable::make(Variable::Kind::Null));
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
