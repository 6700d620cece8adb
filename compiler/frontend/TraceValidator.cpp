//===- TraceValidator.cpp - Structural checks on a parsed trace --------------------------===//
//
// Checks run in order: format version, CPython version, then every index the compiler will
// follow (functions, code objects, namespaces), then each code object's instructions against
// the opcode table of the trace's CPython version.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Opcodes.h"
#include "compiler/frontend/TraceReader.h"
#include "compiler/support/Diagnostics.h"

#include <set>
#include <vector>

namespace sotc::frontend {
namespace {

using trace::Value;

/// The items of a tuple, list, set or frozenset value.
const google::protobuf::RepeatedPtrField<Value> &sequenceItems(const Value &v) {
  switch (v.kind_case()) {
  case Value::kTupleValue:
    return v.tuple_value().items();
  case Value::kListValue:
    return v.list_value().items();
  case Value::kSetValue:
    return v.set_value().items();
  default:
    return v.frozenset_value().items();
  }
}

/// CPython's own compiler stops far earlier (its recursion limit); this only bounds recursion.
constexpr size_t kMaxCodeNesting = 200;

class Validator {
public:
  Validator(const trace::Trace &trace, const std::string &name) : trace_(trace), name_(name) {}

  void run() {
    checkVersions();
    const std::string &framework = trace_.framework();
    if (!framework.empty() && framework != "torch" && framework != "paddle")
      fail(DiagCode::TraceFramework,
           "unknown framework '" + framework + "' (the trace's methods are torch's or paddle's)");
    if (trace_.code_objects().empty())
      fail(DiagCode::TraceBadReference, "the trace has no code objects");
    if (trace_.entry_function() >= static_cast<uint32_t>(trace_.functions_size()))
      fail(DiagCode::TraceBadReference,
           "entry function " + std::to_string(trace_.entry_function()) + " does not exist (" +
               std::to_string(trace_.functions_size()) + " functions)");
    for (int i = 0; i < trace_.functions_size(); ++i)
      checkFunction(trace_.functions(i), i);
    for (const trace::Namespace &ns : trace_.namespaces())
      for (const trace::NamedValue &global : ns.globals())
        checkValue(global.value(),
                   "global '" + global.name() + "' of module '" + ns.module() + "'");
    checkInputs();
    if (trace_.has_model()) {
      if (trace_.model().kind_case() != Value::kObjectValue || !trace_.model().object_value().layer())
        fail(DiagCode::TraceBadInput, "the trace's model is not a layer");
      checkValue(trace_.model(), "the model");
    }
    for (int i = 0; i < trace_.classes_size(); ++i) {
      const trace::ClassDef &c = trace_.classes(i);
      std::string where = "class " + std::to_string(i) + " '" + c.qualname() + "'";
      if (c.mro().empty() || c.mro(0) != static_cast<uint32_t>(i))
        fail(DiagCode::TraceBadReference, where + ": its MRO must start with itself");
      for (uint32_t base : c.mro())
        checkIndex(base, trace_.classes_size(), "class", where + " MRO");
      for (const trace::ClassMember &m : c.members())
        checkValue(m.value(), where + " member '" + m.name() + "'");
      if (c.has_layer_constructor()) {
        if (c.layer_constructor().kind_case() != Value::kFunction)
          fail(DiagCode::TraceBadInput, where + ": its layer constructor is not a function");
        checkValue(c.layer_constructor(), where + " layer constructor");
      }
    }
    for (const trace::CodeObject &code : trace_.code_objects())
      checkCode(code);
    checkNesting();
  }

private:
  [[noreturn]] void fail(DiagCode code, const std::string &message) const {
    throw CodedError(code, name_ + ": " + message);
  }

  void checkVersions() {
    if (trace_.format_version() != kTraceFormatVersion)
      fail(DiagCode::TraceFormatVersion,
           "trace format version " + std::to_string(trace_.format_version()) +
               " is not supported (this sotc reads version " + std::to_string(kTraceFormatVersion) +
               "; re-trace with the matching tracer)");
    const trace::PythonVersion &py = trace_.python();
    table_ = OpcodeTable::forVersion(py.major(), py.minor());
    if (py.implementation() != "cpython" || !table_)
      fail(DiagCode::TracePythonVersion,
           "traces from " +
               (py.implementation().empty() ? "an unnamed Python" : py.implementation()) + " " +
               std::to_string(py.major()) + "." + std::to_string(py.minor()) +
               " are not supported (supported: CPython " + OpcodeTable::supportedVersions() + ")");
  }

  void checkIndex(uint64_t index, int size, const std::string &what,
                  const std::string &where) const {
    if (index >= static_cast<uint64_t>(size))
      fail(DiagCode::TraceBadReference, where + ": " + what + " " + std::to_string(index) +
                                            " does not exist (the trace has " +
                                            std::to_string(size) + ")");
  }

  void checkFunction(const trace::Function &fn, int index) {
    std::string where = "function " + std::to_string(index) + " '" + fn.qualname() + "'";
    checkIndex(fn.code(), trace_.code_objects_size(), "code object", where);
    checkIndex(fn.namespace_(), trace_.namespaces_size(), "namespace", where);
    const trace::CodeObject &code = trace_.code_objects(fn.code());
    if (fn.closure_size() != code.freevars_size())
      fail(DiagCode::TraceBadFunction,
           where + ": " + std::to_string(fn.closure_size()) + " closure cells for " +
               std::to_string(code.freevars_size()) + " free variables");
    if (static_cast<uint32_t>(fn.defaults_size()) > code.argcount())
      fail(DiagCode::TraceBadFunction, where + ": " + std::to_string(fn.defaults_size()) +
                                           " defaults for " + std::to_string(code.argcount()) +
                                           " positional parameters");
    for (const Value &v : fn.defaults())
      checkValue(v, where + " default");
    for (const trace::NamedValue &v : fn.kwdefaults())
      checkValue(v.value(), where + " default of '" + v.name() + "'");
    for (const Value &v : fn.closure())
      checkValue(v, where + " closure cell");
  }

  /// References inside any value must resolve.
  void checkValue(const Value &v, const std::string &where) const {
    switch (v.kind_case()) {
    case Value::kCode:
      checkIndex(v.code(), trace_.code_objects_size(), "code object", where);
      break;
    case Value::kFunction:
      checkIndex(v.function(), trace_.functions_size(), "function", where);
      break;
    case Value::kTupleValue:
    case Value::kListValue:
    case Value::kSetValue:
    case Value::kFrozensetValue:
      for (const Value &item : sequenceItems(v))
        checkValue(item, where);
      break;
    case Value::kDictValue:
      if (v.dict_value().has_subclass())
        checkIndex(v.dict_value().subclass(), trace_.classes_size(), "class", where);
      for (const trace::DictItem &item : v.dict_value().items()) {
        checkValue(item.key(), where);
        checkValue(item.value(), where);
      }
      break;
    case Value::kTensor:
      checkTensor(v.tensor(), where);
      break;
    case Value::kObjectValue: {
      const trace::ObjectValue &o = v.object_value();
      checkIndex(o.class_index(), trace_.classes_size(), "class", where);
      std::set<std::string> names;
      for (const trace::NamedValue &a : o.attributes()) {
        names.insert(a.name());
        checkValue(a.value(), where + " attribute '" + a.name() + "'");
      }
      for (const std::string &child : o.children())
        if (!names.count(child))
          fail(DiagCode::TraceBadReference,
               where + ": sublayer '" + child + "' is not one of its attributes");
      break;
    }
    case Value::kWeight:
      if (v.weight().name().empty())
        fail(DiagCode::TraceBadInput, where + ": a weight without a name");
      checkTensor(v.weight().spec(), where + " weight '" + v.weight().name() + "'");
      for (const trace::Dim &d : v.weight().spec().dims())
        if (d.dynamic())
          fail(DiagCode::TraceBadInput,
               where + ": weight '" + v.weight().name() + "' has a dynamic dimension");
      break;
    case Value::kClassRef:
      checkIndex(v.class_ref(), trace_.classes_size(), "class", where);
      break;
    case Value::kPartial:
      checkValue(v.partial().func(), where + " partial's function");
      for (const Value &arg : v.partial().args())
        checkValue(arg, where + " partial's argument");
      for (const trace::NamedValue &kw : v.partial().keywords())
        checkValue(kw.value(), where + " partial's argument '" + kw.name() + "'");
      break;
    case Value::kConstantResult:
      checkValue(v.constant_result(), where + " constant result");
      break;
    case Value::kRangeValue:
      if (v.range_value().step() == 0)
        fail(DiagCode::TraceBadInput, where + ": a range with step 0");
      break;
    default:
      break;
    }
  }

  /// Code-object constants are limited to the kinds CPython's marshal allows.
  void checkConstant(const Value &v, const std::string &where) const {
    switch (v.kind_case()) {
    case Value::kNone:
    case Value::kBoolValue:
    case Value::kIntValue:
    case Value::kBigIntValue:
    case Value::kFloatValue:
    case Value::kComplexValue:
    case Value::kStrValue:
    case Value::kBytesValue:
    case Value::kEllipsis:
    case Value::kCode:
      return;
    case Value::kTupleValue:
    case Value::kFrozensetValue:
      for (const Value &item : sequenceItems(v))
        checkConstant(item, where);
      return;
    case Value::KIND_NOT_SET:
      fail(DiagCode::TraceBadConstant, where + ": the constant has no value");
    default:
      fail(DiagCode::TraceBadConstant,
           where + ": a constant cannot be a " +
               Value::descriptor()->FindFieldByNumber(v.kind_case())->name());
    }
  }

  void checkTensor(const trace::TensorSpec &t, const std::string &where) const {
    if (t.dtype() == trace::DTYPE_UNSPECIFIED || !trace::DType_IsValid(t.dtype()))
      fail(DiagCode::TraceBadInput, where + ": tensor has no valid dtype");
    for (const trace::Dim &d : t.dims()) {
      if (!d.dynamic() && d.size() < 0)
        fail(DiagCode::TraceBadInput,
             where + ": static dimension of size " + std::to_string(d.size()));
      if (d.max() < 0 || (d.max() && !d.dynamic()))
        fail(DiagCode::TraceBadInput, where + ": a bound of " + std::to_string(d.max()) +
                                          " on a dimension that is not dynamic or below 0");
    }
  }

  void checkInputs() const {
    std::set<std::string> seen;
    for (const trace::Input &input : trace_.inputs()) {
      if (!seen.insert(input.name()).second)
        fail(DiagCode::TraceBadInput, "input '" + input.name() + "' appears twice");
      if (input.value().kind_case() == Value::KIND_NOT_SET)
        fail(DiagCode::TraceBadInput, "input '" + input.name() + "' has no value");
      checkValue(input.value(), "input '" + input.name() + "'");
    }
  }

  void checkCode(const trace::CodeObject &code) const {
    const std::string codeName = "code object " + describeCode(code);
    for (int i = 0; i < code.consts_size(); ++i) {
      std::string where = codeName + " constant " + std::to_string(i);
      checkConstant(code.consts(i), where);
      checkValue(code.consts(i), where);
    }

    std::set<uint32_t> offsets;
    uint32_t previous = 0;
    for (int i = 0; i < code.instructions_size(); ++i) {
      const trace::Instruction &ins = code.instructions(i);
      std::string where = codeName + " offset " + std::to_string(ins.offset());
      if (ins.offset() % 2 != 0 || (i > 0 && ins.offset() <= previous) ||
          (!code.code().empty() && uint64_t{ins.offset()} + 2 > code.code().size()))
        fail(DiagCode::TraceBadInstruction,
             where + ": offsets must be even, increasing and inside co_code (" +
                 std::to_string(code.code().size()) + " bytes)");
      previous = ins.offset();
      offsets.insert(ins.offset());
      checkInstruction(code, ins, where);
    }
    for (const trace::Instruction &ins : code.instructions())
      if (ins.has_jump_target() && !offsets.count(ins.jump_target()))
        fail(DiagCode::TraceBadJumpTarget, codeName + " offset " + std::to_string(ins.offset()) +
                                               ": " + ins.opname() + " jumps to " +
                                               std::to_string(ins.jump_target()) +
                                               ", which is not an instruction boundary");
    for (const trace::ExceptionEntry &e : code.exception_entries())
      if (e.start() >= e.end() || e.end() % 2 != 0 || !offsets.count(e.start()) ||
          !offsets.count(e.target()))
        fail(DiagCode::TraceBadJumpTarget,
             codeName + ": exception table entry " + std::to_string(e.start()) + " to " +
                 std::to_string(e.end()) + " -> " + std::to_string(e.target()) +
                 " does not lie on instruction boundaries");
  }

  /// Code constants form a forest, as in CPython: no code object contains itself, and nesting
  /// stays shallow enough for the recursive stages that walk it.
  void checkNesting() const {
    enum class State { New, Open, Done };
    std::vector<State> state(trace_.code_objects_size(), State::New);
    // Iterative DFS: (code index, next const to look at).
    std::vector<std::pair<int, int>> stack;
    for (int root = 0; root < trace_.code_objects_size(); ++root) {
      if (state[root] != State::New)
        continue;
      stack.push_back({root, 0});
      state[root] = State::Open;
      while (!stack.empty()) {
        auto &[index, next] = stack.back();
        const trace::CodeObject &code = trace_.code_objects(index);
        if (next == code.consts_size()) {
          state[index] = State::Done;
          stack.pop_back();
          continue;
        }
        const Value &c = code.consts(next++);
        if (c.kind_case() != Value::kCode)
          continue;
        int child = static_cast<int>(c.code());
        if (state[child] == State::Open)
          fail(DiagCode::TraceBadReference,
               "code object " + describeCode(code) + " contains itself through its constants");
        if (state[child] == State::Done)
          continue;
        if (stack.size() >= kMaxCodeNesting)
          fail(DiagCode::TraceBadReference,
               "code objects nest deeper than " + std::to_string(kMaxCodeNesting) + " levels");
        state[child] = State::Open;
        stack.push_back({child, 0});
      }
    }
  }

  void checkInstruction(const trace::CodeObject &code, const trace::Instruction &ins,
                        const std::string &where) const {
    const OpcodeInfo *info = table_->lookup(ins.opcode());
    if (!info)
      fail(DiagCode::TraceUnknownOpcode,
           where + ": opcode " + std::to_string(ins.opcode()) + " ('" + ins.opname() +
               "') does not exist in CPython " + std::to_string(table_->major()) + "." +
               std::to_string(table_->minor()));
    if (ins.opname() != info->name)
      fail(DiagCode::TraceBadInstruction,
           where + ": opname '" + ins.opname() + "' does not match opcode " +
               std::to_string(ins.opcode()) + " (" + info->name + ")");
    if (ins.has_arg() != info->has(kHasArg))
      fail(DiagCode::TraceBadInstruction,
           where + ": " + info->name +
               (ins.has_arg() ? " takes no argument" : " needs an argument"));
    const std::string &raw = code.code();
    if (!raw.empty() && (static_cast<unsigned char>(raw[ins.offset()]) != ins.opcode() ||
                         static_cast<unsigned char>(raw[ins.offset() + 1]) != (ins.arg() & 0xff)))
      fail(DiagCode::TraceBadInstruction,
           where + ": " + info->name + " disagrees with the bytes of co_code");
    if (!ins.has_arg())
      return;

    unsigned arg = ins.arg();
    auto inRange = [&](uint64_t index, int size, const char *table) {
      if (index >= static_cast<uint64_t>(size))
        fail(DiagCode::TraceArgOutOfRange,
             where + ": " + info->name + " argument " + std::to_string(arg) + " indexes " + table +
                 " entry " + std::to_string(index) + ", but it has " + std::to_string(size));
    };
    if (info->has(kHasConst))
      inRange(arg, code.consts_size(), "co_consts");
    if (info->has(kHasName))
      inRange(table_->nameIndex(*info, arg), code.names_size(), "co_names");
    // 3.13's LOAD_FAST also reads cells (LOAD_CLOSURE became it), so locals are checked
    // against all of localsplus, as the cell and free variables are.
    int localsplus = code.varnames_size() + code.cellvars_size() + code.freevars_size();
    if (info->has(kHasLocal))
      for (unsigned local : table_->localIndices(*info, arg))
        inRange(local, localsplus, "the local variables");
    if (info->has(kHasFree))
      inRange(arg, localsplus, "the cell and free variables");
    if (info->has(kHasCompare))
      inRange(table_->compareIndex(arg), 6, "the comparison operators");
    if (info->isJump()) {
      std::optional<unsigned> target = table_->jumpTarget(*info, ins.offset(), arg);
      if (!ins.has_jump_target() || !target || *target != ins.jump_target())
        fail(DiagCode::TraceBadJumpTarget, where + ": " + info->name + " argument " +
                                               std::to_string(arg) +
                                               " does not agree with its recorded jump target " +
                                               std::to_string(ins.jump_target()));
    }
  }

  const trace::Trace &trace_;
  const std::string &name_;
  const OpcodeTable *table_ = nullptr;
};

} // namespace

void validateTrace(const trace::Trace &trace, const std::string &name) {
  Validator(trace, name).run();
}

} // namespace sotc::frontend
