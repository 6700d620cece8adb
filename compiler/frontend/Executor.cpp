//===- Executor.cpp - Interpreter state: frames, values from the trace, snapshots --------===//
#include "compiler/frontend/Executor.h"

#include "compiler/frontend/Calls.h"

#include <algorithm>
#include <functional>

namespace sotc::frontend {

namespace {
/// The trace's dtype enum spells the operator library's dtype names in capitals.
ops::DType dtypeOf(trace::DType d) {
  std::string name = trace::DType_Name(d);
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  return ops::parseDType(name).value_or(ops::DType::Float32); // validated: never unspecified
}

/// Names of co_varnames, then cell variables that are not arguments, then co_freevars.
std::vector<std::string> localsplusNames(const trace::CodeObject &code) {
  std::vector<std::string> names(code.varnames().begin(), code.varnames().end());
  for (const std::string &c : code.cellvars())
    if (std::find(names.begin(), names.end(), c) == names.end())
      names.push_back(c);
  names.insert(names.end(), code.freevars().begin(), code.freevars().end());
  return names;
}

/// `name` is the package `root` or inside it ("torch.nn", not "torchvision").
bool inPackage(const std::string &name, const std::string &root) {
  return name.rfind(root, 0) == 0 && (name.size() == root.size() || name[root.size()] == '.');
}
} // namespace

size_t instructionAt(const trace::Trace &trace, int codeIndex, uint32_t offset) {
  const trace::CodeObject &code = trace.code_objects(codeIndex);
  for (int i = 0; i < code.instructions_size(); ++i)
    if (code.instructions(i).offset() == offset)
      return static_cast<size_t>(i);
  return static_cast<size_t>(code.instructions_size());
}

Executor::Executor(const trace::Trace &trace, const TranslateOptions &options)
    : trace_(trace),
      opcodes_(OpcodeTable::forVersion(trace.python().major(), trace.python().minor())),
      options_(options) {
  if (!opcodes_)
    throw CodedError(DiagCode::TracePythonVersion,
                     "traces from CPython " + std::to_string(trace.python().major()) + "." +
                         std::to_string(trace.python().minor()) + " are not supported (only " +
                         OpcodeTable::supportedVersions() + ")");
  framework_ = trace.framework(); // the tracer's choice (TraceValidator checks the name)
  if (framework_.empty()) {
    // No tensor inputs to decide: the framework the program imports (paddle unless only torch).
    bool paddle = false, torch = false;
    for (const trace::Namespace &ns : trace.namespaces())
      for (const trace::NamedValue &g : ns.globals()) {
        const std::string &name =
            g.value().has_module() ? g.value().module() : g.value().external();
        paddle |= inPackage(name, "paddle");
        torch |= inPackage(name, "torch");
      }
    for (const trace::ClassDef &c : trace.classes()) { // a model's layers
      paddle |= inPackage(c.library_name(), "paddle");
      torch |= inPackage(c.library_name(), "torch"); // not torchvision's alone
    }
    framework_ = torch && !paddle ? "torch" : "paddle";
  }
  offsetIndex_.resize(trace.code_objects_size());
  for (int c = 0; c < trace.code_objects_size(); ++c)
    for (int i = 0; i < trace.code_objects(c).instructions_size(); ++i)
      offsetIndex_[c][trace.code_objects(c).instructions(i).offset()] = i;
}

SourceLoc Executor::locOf(const Frame &f) const {
  const trace::CodeObject &c = code(f);
  if (c.instructions_size() == 0)
    return {c.filename(), static_cast<int>(c.firstlineno())};
  size_t pc = std::min<size_t>(f.pc, c.instructions_size() - 1);
  // The current instruction's line, or the nearest earlier one that has a line.
  for (size_t i = pc + 1; i-- > 0;)
    if (c.instructions(i).line())
      return {c.filename(), static_cast<int>(c.instructions(i).line())};
  return {c.filename(), static_cast<int>(c.firstlineno())};
}

namespace {
/// Whether two values are the same: branches clone containers, so equal ones are the same
/// variable or print the same.
bool sameValue(const VarPtr &x, const VarPtr &y) {
  return x.get() == y.get() || (x->kind == y->kind && !x->isTensor() && x->repr() == y->repr());
}

/// The builtin exception classes a program's handlers may name, each with its base.
const std::map<std::string, std::string> &exceptionBases() {
  static const std::map<std::string, std::string> bases = {
      {"BaseException", ""},
      {"Exception", "BaseException"},
      {"ArithmeticError", "Exception"},
      {"OverflowError", "ArithmeticError"},
      {"ZeroDivisionError", "ArithmeticError"},
      {"AssertionError", "Exception"},
      {"AttributeError", "Exception"},
      {"ImportError", "Exception"},
      {"ModuleNotFoundError", "ImportError"},
      {"LookupError", "Exception"},
      {"IndexError", "LookupError"},
      {"KeyError", "LookupError"},
      {"NameError", "Exception"},
      {"UnboundLocalError", "NameError"},
      {"RuntimeError", "Exception"},
      {"NotImplementedError", "RuntimeError"},
      {"StopIteration", "Exception"},
      {"TypeError", "Exception"},
      {"ValueError", "Exception"},
  };
  return bases;
}
} // namespace

bool isBuiltinException(const std::string &name) { return exceptionBases().count(name) != 0; }

bool exceptionIsA(const std::string &type, const std::string &base) {
  for (std::string t = type; !t.empty();) {
    if (t == base)
      return true;
    auto it = exceptionBases().find(t);
    t = it == exceptionBases().end() ? "" : it->second;
  }
  return false;
}

std::string Executor::builtinExceptionBase(int classIndex) const {
  for (uint32_t c : trace_.classes(classIndex).mro()) {
    const std::string &name = trace_.classes(c).library_name();
    if (name.rfind("builtins.", 0) == 0 && isBuiltinException(name.substr(9)))
      return name.substr(9);
  }
  return "";
}

VarPtr makeException(const std::string &type, int classIndex, const std::string &name,
                     std::vector<VarPtr> args) {
  VarPtr e = Variable::make(Variable::Kind::Opaque, computedFrom(args));
  e->name = name + "(" + (args.empty() ? "" : args[0]->repr()) + ")";
  e->exceptionType = type;
  e->classIndex = classIndex;
  e->items = std::move(args);
  return e;
}

VarPtr makeDynamicSize(int64_t dim, std::vector<VarPtr> from) {
  VarPtr size = Variable::make(Variable::Kind::Opaque, computedFrom(std::move(from)));
  size->name = std::string(kDynamicSize) + " a tensor";
  size->sizeDim = dim;
  return size;
}

void Executor::fail(DiagCode code, const std::string &message, const Frame &f) const {
  // Python's own errors ("KeyError: 'x'", a missing attribute) are exceptions the program's
  // handlers may catch; sotc's limits are not.
  std::string type = code == DiagCode::FrontendAttributeError ? "AttributeError"
                     : code == DiagCode::FrontendPythonError  ? message.substr(0, message.find(':'))
                                                              : "";
  if (!isBuiltinException(type))
    throw CodedError(code, message + " (" + locOf(f).str() + ")");
  raise(makeException(type, -1, type, {}), message, f);
}

void Executor::raise(const VarPtr &exception, const std::string &message, const Frame &f) const {
  exception->exceptionMessage = message + " (" + locOf(f).str() + ")";
  throw PythonException(exception);
}

VarPtr Executor::unsupportedCall(const std::string &message, const Frame &f) {
  unsupportedCalls_.emplace_back(DiagCode::FrontendUnsupportedCall,
                                 message + " (" + locOf(f).str() + ")");
  return unsupportedResult();
}

VarPtr Executor::unsupportedResult() {
  VarPtr v = Variable::make(Variable::Kind::Opaque);
  v->name = "unsupported call's result";
  v->unsupported = true;
  return v;
}

VarPtr Executor::refusedPureCall(const std::string &message, const Frame &f) {
  VarPtr v = unsupportedResult();
  v->refusal = message + " (" + locOf(f).str() + ")";
  return v;
}

bool Executor::usesUnsupported(const VarPtr &v) {
  if (!v || !v->unsupported)
    return false;
  if (!v->refusal.empty())
    unsupportedCalls_.emplace_back(DiagCode::FrontendUnsupportedCall, std::move(v->refusal));
  v->refusal.clear();
  return true;
}

bool Executor::anyUnsupported(const VarPtr &a, const VarPtr &b) {
  bool first = usesUnsupported(a);
  return usesUnsupported(b) || first;
}

void Executor::reportUnsupported() const {
  if (unsupportedCalls_.empty())
    return;
  CodedError all = unsupportedCalls_.front();
  for (size_t i = 1; i < unsupportedCalls_.size(); ++i)
    all.alsoReport(unsupportedCalls_[i]);
  throw all;
}

void Executor::consume(const VarPtr &v, const SourceLoc &loc) {
  usesUnsupported(v);
  if (v && consumedSet_.insert(v.get()).second)
    consumed_.push_back({v, loc});
}

VarPtr Executor::newTensor(const ops::TensorMeta &meta, Tracker tracker) {
  VarPtr t = Variable::make(Variable::Kind::Tensor, std::move(tracker));
  t->meta = meta;
  t->tensorName = "var_" + std::to_string(tensorCounter_++);
  return t;
}

VarPtr Executor::fromTrace(const trace::Value &value, Tracker tracker) {
  using K = Variable::Kind;
  // One variable per recorded object however many paths reach it; known before its items
  // are read, so that an object inside itself is itself.
  if (value.identity())
    if (auto it = identities_.find(value.identity()); it != identities_.end())
      return it->second;
  auto remember = [&](const VarPtr &v) {
    if (value.identity())
      identities_[value.identity()] = v;
  };
  auto sequence = [&](K kind, const trace::Sequence &seq) {
    VarPtr v = Variable::make(kind, tracker);
    remember(v);
    v->tracedLength = seq.items_size();
    for (int i = 0; i < seq.items_size(); ++i) {
      Tracker item;
      item.kind = Tracker::Kind::GetItem;
      item.parent = v;
      item.key = PyConst::ofInt(i);
      if (tracker.kind == Tracker::Kind::Const)
        item = tracker;
      v->items.push_back(fromTrace(seq.items(i), item));
    }
    return v;
  };
  PyConst c;
  switch (value.kind_case()) {
  case trace::Value::kNone:
    return Variable::constant_(PyConst::none(), tracker);
  case trace::Value::kBoolValue:
    return Variable::constant_(PyConst::ofBool(value.bool_value()), tracker);
  case trace::Value::kIntValue:
    return Variable::constant_(PyConst::ofInt(value.int_value()), tracker);
  case trace::Value::kBigIntValue:
    c.kind = PyConst::Kind::BigInt;
    c.text = value.big_int_value();
    return Variable::constant_(c, tracker);
  case trace::Value::kFloatValue:
    return Variable::constant_(PyConst::ofFloat(value.float_value()), tracker);
  case trace::Value::kComplexValue:
    c.kind = PyConst::Kind::Complex;
    c.floatValue = value.complex_value().real();
    c.imagValue = value.complex_value().imag();
    return Variable::constant_(c, tracker);
  case trace::Value::kStrValue:
    return Variable::constant_(PyConst::ofStr(value.str_value()), tracker);
  case trace::Value::kBytesValue:
    c.kind = PyConst::Kind::Bytes;
    c.text = value.bytes_value();
    return Variable::constant_(c, tracker);
  case trace::Value::kEllipsis:
    c.kind = PyConst::Kind::Ellipsis;
    return Variable::constant_(c, tracker);
  case trace::Value::kTupleValue:
    return sequence(K::Tuple, value.tuple_value());
  case trace::Value::kListValue:
    return sequence(K::List, value.list_value());
  case trace::Value::kFrozensetValue:
  case trace::Value::kSetValue: {
    VarPtr v =
        sequence(K::Tuple, value.kind_case() == trace::Value::kSetValue ? value.set_value()
                                                                        : value.frozenset_value());
    v->name = "frozenset";
    return v;
  }
  case trace::Value::kDictValue: {
    VarPtr v = Variable::make(K::Dict, tracker);
    remember(v);
    v->tracedLength = value.dict_value().items_size();
    if (value.dict_value().has_subclass())
      v->classIndex = static_cast<int>(value.dict_value().subclass());
    if (value.dict_value().attributes_size()) {
      v->attributes = Variable::make(K::Object, tracker);
      v->attributes->classIndex = v->classIndex;
      for (const trace::NamedValue &a : value.dict_value().attributes()) {
        Tracker t;
        t.kind = Tracker::Kind::GetAttr;
        t.parent = v;
        t.name = a.name();
        v->attributes->keys.push_back(makeConst(PyConst::ofStr(a.name()), {}));
        v->attributes->items.push_back(fromTrace(a.value(), t));
      }
    }
    for (const trace::DictItem &item : value.dict_value().items()) {
      VarPtr key = fromTrace(item.key(), tracker.kind == Tracker::Kind::Const
                                             ? tracker
                                             : Tracker{Tracker::Kind::Const, "", {}, {}, {}});
      Tracker t;
      t.kind = Tracker::Kind::GetItem;
      t.parent = v;
      if (key->isConstant())
        t.key = key->constant;
      v->keys.push_back(key);
      v->items.push_back(
          fromTrace(item.value(), tracker.kind == Tracker::Kind::Const ? tracker : t));
    }
    return v;
  }
  case trace::Value::kTensor: {
    ops::TensorMeta meta;
    meta.dtype = dtypeOf(value.tensor().dtype());
    for (const trace::Dim &d : value.tensor().dims()) {
      if (!d.dynamic()) {
        meta.shape.push_back(d.size());
        continue;
      }
      int k = symbolOf(d.symbol().empty() ? "?" : d.symbol());
      ops::SizeProduct dim{symbols_[k].factor, {}};
      dim.powers[k] = 1;
      meta.shape.push_back(ops::productDim(dim)); // s_k, or 2*s_k where T is split in halves
    }
    VarPtr t = newTensor(meta, tracker);
    t->stopGradient = value.tensor().stop_gradient();
    return t;
  }
  case trace::Value::kCode: {
    VarPtr v = Variable::make(K::Opaque, tracker);
    v->name = "code";
    v->codeIndex = static_cast<int>(value.code());
    return v;
  }
  case trace::Value::kFunction: {
    auto it = functions_.find(static_cast<int>(value.function()));
    if (it != functions_.end())
      return it->second;
    const trace::Function &fn = trace_.functions(value.function());
    VarPtr v = Variable::make(K::Function, tracker);
    functions_[static_cast<int>(value.function())] = v;
    v->functionIndex = static_cast<int>(value.function());
    v->codeIndex = static_cast<int>(fn.code());
    v->namespaceIndex = static_cast<int>(fn.namespace_());
    v->name = fn.qualname();
    Tracker constant{Tracker::Kind::Const, "", {}, {}, {}};
    for (const trace::Value &d : fn.defaults())
      v->defaults.push_back(fromTrace(d, constant));
    for (const trace::NamedValue &d : fn.kwdefaults())
      v->kwdefaults.push_back({d.name(), fromTrace(d.value(), constant)});
    const trace::CodeObject &code = trace_.code_objects(fn.code());
    for (int i = 0; i < fn.closure_size(); ++i) {
      Tracker cellTracker = tracker;
      if (tracker.kind == Tracker::Kind::Local) // the entry function's own closure
        cellTracker = Tracker{Tracker::Kind::Closure, code.freevars(i), {}, {}, {}};
      VarPtr cell = Variable::make(K::Cell);
      cell->self = fromTrace(fn.closure(i), cellTracker);
      v->closure.push_back(cell);
    }
    return v;
  }
  case trace::Value::kModule: {
    VarPtr v = Variable::make(K::Module, tracker);
    v->name = value.module();
    return v;
  }
  case trace::Value::kObjectValue: { // attributes read through it guard as obj.name
    VarPtr v = Variable::make(K::Object, tracker);
    remember(v);
    v->classIndex = static_cast<int>(value.object_value().class_index());
    v->name = trace_.classes(v->classIndex).qualname();
    v->layer = value.object_value().layer();
    v->children.assign(value.object_value().children().begin(),
                       value.object_value().children().end());
    v->hooks.assign(value.object_value().hooks().begin(), value.object_value().hooks().end());
    for (const trace::ForwardHook &h : value.object_value().forward_hooks())
      v->forwardHooks.push_back({h.after(), fromTrace(h.function(), constTracker()), h.with_kwargs()});
    for (const trace::NamedValue &a : value.object_value().attributes()) {
      Tracker t;
      t.kind = tracker.kind == Tracker::Kind::Const ? Tracker::Kind::Const : Tracker::Kind::GetAttr;
      t.parent = v;
      t.name = a.name();
      v->keys.push_back(Variable::constant_(PyConst::ofStr(a.name()),
                                            Tracker{Tracker::Kind::Const, "", {}, {}, {}}));
      v->items.push_back(fromTrace(a.value(), t));
    }
    return v;
  }
  case trace::Value::kWeight: { // one tensor per name, however many layers share it
    const trace::WeightRef &w = value.weight();
    auto it = weights_.find(w.name());
    if (it != weights_.end())
      return it->second;
    ops::TensorMeta meta;
    meta.dtype = dtypeOf(w.spec().dtype());
    for (const trace::Dim &d : w.spec().dims())
      meta.shape.push_back(d.size());
    VarPtr t = newTensor(meta, Tracker{Tracker::Kind::Weight, w.name(), {}, {}, {}});
    t->stopGradient = w.spec().stop_gradient();
    t->complexPair = w.complex_pairs();
    t->parameter = t->weight = w.name();
    if (w.buffer())
      buffers_.insert(w.name());
    weightOrder_.push_back(t);
    return weights_[w.name()] = t;
  }
  case trace::Value::kPartial: {
    std::vector<VarPtr> args;
    for (const trace::Value &a : value.partial().args())
      args.push_back(fromTrace(a, computedFrom({})));
    Kwargs keywords;
    for (const trace::NamedValue &kw : value.partial().keywords())
      keywords.push_back({kw.name(), fromTrace(kw.value(), computedFrom({}))});
    return makePartial(fromTrace(value.partial().func(), computedFrom({})), std::move(args),
                       std::move(keywords), tracker);
  }
  case trace::Value::kConstantResult: { // f() is the value computed when tracing
    VarPtr v = Variable::make(K::Builtin, tracker);
    v->name = "constant result";
    v->self = fromTrace(value.constant_result(), constTracker());
    return v;
  }
  case trace::Value::kRangeValue: {
    VarPtr v = Variable::make(K::Range, tracker);
    v->start = value.range_value().start();
    v->stop = value.range_value().stop();
    v->step = value.range_value().step();
    return v;
  }
  case trace::Value::kClassRef: {
    VarPtr v = Variable::make(K::Class, tracker);
    v->classIndex = static_cast<int>(value.class_ref());
    v->name = trace_.classes(v->classIndex).qualname();
    return v;
  }
  case trace::Value::kExternal: {
    VarPtr v = Variable::make(K::External, tracker);
    v->name = value.external();
    return v;
  }
  case trace::Value::kBuiltin: {
    VarPtr v = Variable::make(K::Builtin, tracker);
    v->name = value.builtin();
    return v;
  }
  default: {
    VarPtr v = Variable::make(K::Opaque, tracker);
    v->name = value.has_opaque() ? value.opaque().type_name() : "object";
    return v;
  }
  }
}

VarPtr Executor::global(int namespaceIndex, const std::string &name, Frame &f) {
  auto key = std::make_pair(namespaceIndex, name);
  auto it = globals_.find(key);
  if (it != globals_.end())
    return it->second;
  const trace::Namespace &ns = trace_.namespaces(namespaceIndex);
  for (const trace::NamedValue &g : ns.globals())
    if (g.name() == name) {
      // A library module's state is the library's, like its code: not guarded.
      Tracker t;
      t.kind = ns.library() && g.value().kind_case() != trace::Value::kTensor
                   ? Tracker::Kind::Const
                   : Tracker::Kind::Global;
      t.name = name;
      return globals_[key] = fromTrace(g.value(), t);
    }
  // Every name of Python's builtins module a program may call or pass; what a name does is
  // CallsBuiltins.cpp's (an unsupported one is E3004 there, not a NameError here).
  static const std::set<std::string> builtins = {
      "abs",         "aiter",      "all",          "anext",  "any",       "ascii",
      "bin",         "bool",       "bytearray",    "bytes",  "callable",  "chr",
      "classmethod", "complex",    "delattr",      "dict",   "dir",       "divmod",
      "enumerate",   "filter",     "float",        "format", "frozenset", "getattr",
      "globals",     "hasattr",    "hash",         "hex",    "id",        "int",
      "isinstance",  "issubclass", "iter",         "len",    "list",      "locals",
      "map",         "max",        "memoryview",   "min",    "next",      "object",
      "oct",         "open",       "ord",          "pow",    "print",     "property",
      "range",       "repr",       "reversed",     "round",  "set",       "setattr",
      "slice",       "sorted",     "staticmethod", "str",    "sum",       "super",
      "tuple",       "type",       "vars",         "zip"};
  if (builtins.count(name) || isBuiltinException(name)) { // and the exceptions (exceptionBases)
    VarPtr v =
        Variable::make(Variable::Kind::Builtin, Tracker{Tracker::Kind::Const, "", {}, {}, {}});
    v->name = name;
    return globals_[key] = v;
  }
  fail(DiagCode::FrontendNameError, "name '" + name + "' is not defined", f);
}

ExecState Executor::start() {
  const trace::Function &entry = trace_.functions(trace_.entry_function());
  ExecState state;
  Tracker local{Tracker::Kind::Local, "", {}, {}, {}};
  VarPtr fn = fromTrace(
      [&] {
        trace::Value v;
        v.set_function(trace_.entry_function());
        return v;
      }(),
      local);
  std::vector<VarPtr> args;
  std::vector<std::pair<std::string, VarPtr>> kwargs;
  const trace::CodeObject &code = trace_.code_objects(entry.code());
  for (const trace::Input &input : trace_.inputs()) {
    Tracker t;
    t.kind = Tracker::Kind::Local;
    t.name = input.name();
    VarPtr value = fromTrace(input.value(), t);
    // A dynamic dimension given a bound (f32[?<=4096, 128]): calls of more rows are refused,
    // and decisions on the size that the bound settles need no guard.
    if (input.value().has_tensor())
      for (const trace::Dim &d : input.value().tensor().dims()) {
        if (!d.dynamic() || d.max() <= 0)
          continue;
        int k = symbolOf(d.symbol().empty() ? "?" : d.symbol());
        int64_t &most = symbols_[k].inputMax, max = d.max() / symbols_[k].factor;
        if (most == 0 || max < most) {
          most = max;
          guardBatch("<=", max, {code.filename(), static_cast<int>(code.firstlineno())}, k);
        }
      }
    value->parameter = input.name();
    value->passedRepr = value->repr();
    parameters_.push_back(value);
    kwargs.push_back({input.name(), value});
    if (value->kind == Variable::Kind::List || value->kind == Variable::Kind::Dict ||
        value->isTensor()) { // what the program may change in place
      state.arguments.push_back({input.name(), value});
      argumentsAsPassed_[input.name()] = {value, value->items, value->keys};
    }
  }
  // Tensors in module globals are inputs too, read from the module when the program runs;
  // they follow the arguments, named by the global.
  for (int ns = 0; ns < trace_.namespaces_size(); ++ns)
    for (const trace::NamedValue &g : trace_.namespaces(ns).globals()) {
      Tracker t;
      t.kind = Tracker::Kind::Global;
      t.name = g.name();
      if (g.value().has_object_value() && g.value().object_value().layer()) {
        // A model in a global: its weights are inputs like the rest (read once, here).
        state.globals.push_back({ns, g.name(), fromTrace(g.value(), t), false});
        continue;
      }
      if (g.value().kind_case() != trace::Value::kTensor)
        continue;
      VarPtr value = fromTrace(g.value(), t);
      value->parameter = value->global = g.name();
      for (const VarPtr &p : parameters_)
        if (p->parameter == g.name())
          throw CodedError(DiagCode::FrontendBadInputs,
                           "the global tensor '" + g.name() +
                               "' has the name of another input: rename one of them");
      parameters_.push_back(value);
      state.globals.push_back({ns, g.name(), value, false});
    }
  // *args and **kwargs parameters arrive as a tuple and a dict: splat them back.
  int nargs = static_cast<int>(code.argcount() + code.kwonlyargcount());
  bool varargs = code.flags() & 0x04, varkw = code.flags() & 0x08;
  if (nargs + varargs + varkw > code.varnames_size() || code.posonlyargcount() > code.argcount())
    throw CodedError(DiagCode::FrontendBadInputs,
                     "the entry function's argument counts exceed its variables");
  std::vector<std::pair<std::string, VarPtr>> named;
  for (auto &[name, value] : kwargs) {
    if (varargs && name == code.varnames(nargs) && value->isSequence())
      for (VarPtr &item : value->items)
        args.push_back(item);
    else if (varkw && name == code.varnames(nargs + (varargs ? 1 : 0)) &&
             value->kind == Variable::Kind::Dict)
      for (size_t i = 0; i < value->keys.size(); ++i)
        named.push_back({value->keys[i]->constant.str(), value->items[i]});
    else
      named.push_back({name, value});
  }
  // Positional-only parameters must be passed positionally.
  std::vector<VarPtr> positional;
  for (uint32_t i = 0; i < code.posonlyargcount(); ++i)
    for (auto it = named.begin(); it != named.end(); ++it)
      if (it->first == code.varnames(i)) {
        positional.push_back(it->second);
        named.erase(it);
        break;
      }
  positional.insert(positional.end(), args.begin(), args.end());
  // A model's forward gets the layer tree as `self`: part of the artifact, so not guarded.
  if (trace_.has_model())
    positional.insert(positional.begin(),
                      fromTrace(trace_.model(), Tracker{Tracker::Kind::Const, "", {}, {}, {}}));
  // The weights follow the inputs, in the order the layers hold them (the state dict's).
  for (const VarPtr &w : weightOrder_) {
    for (const VarPtr &p : parameters_)
      if (p->parameter == w->weight)
        throw CodedError(DiagCode::FrontendBadInputs,
                         "the weight '" + w->weight +
                             "' has the name of an input of forward: rename one of them");
    parameters_.push_back(w);
    state.weights.push_back({w->weight, w});
  }
  pushFrame(state, fn, positional, named);
  return state;
}

int64_t Executor::objectId(const VarPtr &v) {
  // Like CPython's addresses, and exact as a double (below 2^53): numbers compare as doubles
  // in places (a dict keyed by id()), and ids from 2^60 up all rounded to one key.
  constexpr int64_t kFirstId = int64_t{0x7f} << 40;
  auto it = ids_.try_emplace(v.get(), v, kFirstId + static_cast<int64_t>(ids_.size())).first;
  return it->second.second;
}

ExecState Executor::clone(const ExecState &state) { return clone(state, nullptr, nullptr); }

ExecState Executor::clone(const ExecState &state, const VarPtr &decided, const VarPtr &value) {
  std::map<const Variable *, VarPtr> memo;
  if (decided)
    memo[decided.get()] = value;
  std::function<VarPtr(const VarPtr &)> copy = [&](const VarPtr &v) -> VarPtr {
    if (!v)
      return v;
    auto it = memo.find(v.get());
    if (it != memo.end())
      return it->second;
    using K = Variable::Kind;
    if (v->kind == K::Tensor || v->kind == K::Constant || v->kind == K::Module ||
        v->kind == K::External || v->kind == K::Builtin || v->kind == K::Null ||
        v->kind == K::Opaque)
      return v;
    VarPtr c = std::make_shared<Variable>(*v);
    VariableArena::record(c);
    memo[v.get()] = c;
    if (c->suspended) // each continuation resumes a generator of its own
      c->suspended = std::make_shared<Frame>(*c->suspended);
    forEachChild(*c, [&](VarPtr &child) { child = copy(child); });
    return c;
  };
  ExecState out = state;
  for (Frame &f : out.frames) {
    for (VarPtr &v : f.localsplus)
      v = copy(v);
    for (VarPtr &v : f.stack)
      v = copy(v);
    f.kwNames = copy(f.kwNames);
  }
  out.returnValue = copy(out.returnValue);
  for (GlobalSlot &g : out.globals)
    g.value = copy(g.value);
  for (auto &[name, value] : out.arguments)
    value = copy(value);
  for (auto &[name, value] : out.weights)
    value = copy(value);
  for (ExecState::AssignedAttribute &a : out.assignedAttributes)
    a.object = copy(a.object), a.before = copy(a.before);
  return out;
}

void Executor::replaceEverywhere(ExecState &state, const VarPtr &from, const VarPtr &to) {
  std::set<const Variable *> seen;
  std::function<void(VarPtr &)> visit = [&](VarPtr &v) {
    if (!v)
      return;
    if (v == from) {
      v = to;
      return;
    }
    if (seen.insert(v.get()).second)
      forEachChild(*v, visit);
  };
  for (GlobalSlot &g :
       state.globals) // a global tensor written in place: the module gets the new one
    g.written |= g.value == from;
  walkState(state, visit);
  for (auto &[name, value] : state.arguments)
    visit(value);
  for (auto &[name, value] : state.weights)
    visit(value);
}

bool Executor::viewed(const ExecState &state, const VarPtr &base, const VarPtr &except) {
  bool found = false;
  std::set<const Variable *> seen;
  std::function<void(const VarPtr &)> visit = [&](const VarPtr &v) {
    if (!v || found || !seen.insert(v.get()).second)
      return;
    found = v->viewOf == base && v != except;
    forEachChild(*v, visit);
  };
  walkState(state, visit);
  return found;
}

GlobalSlot *Executor::slotOf(ExecState &state, int namespaceIndex, const std::string &name) {
  for (GlobalSlot &g : state.globals)
    if (g.namespaceIndex == namespaceIndex && g.name == name)
      return &g;
  return nullptr;
}

std::vector<SideEffect> Executor::sideEffects(const ExecState &state) {
  for (const ExecState::AssignedAttribute &a : state.assignedAttributes) {
    auto it = std::find_if(a.object->keys.begin(), a.object->keys.end(),
                           [&](const VarPtr &k) { return k->constant.text == a.name; });
    VarPtr now =
        it != a.object->keys.end() ? a.object->items[it - a.object->keys.begin()] : nullptr;
    if (now != a.before && !(now && a.before && sameValue(now, a.before)))
      throw CodedError(DiagCode::FrontendUnsupportedConstruct,
                       "attribute assignment ." + a.name + " = " +
                           (now ? now->repr() : "(deleted)") + " on a " + a.object->typeName() +
                           " passed in, which keeps the new value when the function returns (a "
                           "side effect sotc does not apply yet; a cache the object fills on its "
                           "first call is filled by calling it once before tracing) (" +
                           a.loc.str() + ")");
  }
  std::vector<SideEffect> out;
  for (const auto &[name, value] : state.weights) {
    const VarPtr &loaded = weights_.at(name);
    if (value == loaded)
      continue;
    // Written in place (self.keys.index_copy_(...)): the runtime keeps the new value as the
    // weight's for the next call, so it must stay a tensor of the weight's dtype and shape.
    if (!value->isTensor() || value->meta.dtype != loaded->meta.dtype ||
        value->meta.shape != loaded->meta.shape)
      throw CodedError(DiagCode::FrontendUnsupportedConstruct,
                       "the weight '" + name + "' (" + ops::formatMeta(loaded->meta) +
                           ") is changed in place to " +
                           (value->isTensor() ? ops::formatMeta(value->meta) : value->repr()) +
                           ": state keeps its dtype and shape");
    out.push_back({SideEffect::Kind::State, name, value});
  }
  for (const GlobalSlot &g : state.globals)
    if (g.written)
      out.push_back(
          {g.value ? SideEffect::Kind::Global : SideEffect::Kind::DeleteGlobal, g.name, g.value});
  for (const auto &[name, value] : state.arguments) {
    const auto &[passed, items, keys] = argumentsAsPassed_.at(name);
    if (passed->isTensor()) {
      if (value != passed) // x[...] = v replaced the tensor: the caller's is written
        out.push_back({SideEffect::Kind::Argument, name, value});
      continue;
    }
    auto same = [](const std::vector<VarPtr> &a, const std::vector<VarPtr> &b) {
      return std::equal(a.begin(), a.end(), b.begin(), b.end(), sameValue);
    };
    if (same(value->items, items) && same(value->keys, keys))
      continue;
    // The new contents hold what was passed: guard it (type, length and every item).
    SourceLoc loc{trace_.code_objects(trace_.functions(trace_.entry_function()).code()).filename(),
                  0};
    consume(value, loc);
    for (const std::vector<VarPtr> *passed : {&items, &keys})
      for (const VarPtr &item : *passed)
        consume(item, loc);
    out.push_back({SideEffect::Kind::Argument, name, value});
  }
  return out;
}

std::vector<VarPtr> Executor::liveTensors(const ExecState &state) {
  std::vector<VarPtr> out;
  std::set<const Variable *> seen;
  walkState(state, [&](const VarPtr &v) { collectTensors(v, out, seen); });
  return out;
}

std::string Executor::signature(const ExecState &state) {
  std::string s;
  std::map<const Variable *, int> ids; // aliasing is part of the state
  std::function<void(const VarPtr &)> visit = [&](const VarPtr &v) {
    if (!v) {
      s += "_;";
      return;
    }
    auto it = ids.find(v.get());
    if (it != ids.end()) {
      s += "@" + std::to_string(it->second) + ";";
      return;
    }
    ids[v.get()] = static_cast<int>(ids.size());
    s += std::to_string(static_cast<int>(v->kind)) + ":";
    if (v->isTensor())
      s += ops::formatMeta(v->meta) + (v->stopGradient ? "s" : "g");
    else if (v->isConstant())
      s += v->constant.typeName() + "=" + v->constant.repr();
    else
      s += v->name + "#" + std::to_string(v->codeIndex) + "," + std::to_string(v->position) + "," +
           std::to_string(v->start) + "," + std::to_string(v->stop) + "," + std::to_string(v->step);
    s += "{";
    for (const VarPtr &i : v->items)
      visit(i);
    for (const VarPtr &k : v->keys)
      visit(k);
    if (v->kind == Variable::Kind::Cell || v->kind == Variable::Kind::Method ||
        v->kind == Variable::Kind::Function)
      visit(v->self);
    if (v->kind == Variable::Kind::Object || v->kind == Variable::Kind::Class)
      s += "C" + std::to_string(v->classIndex) + (v->madeHere ? "m" : "");
    for (const VarPtr &c : v->closure)
      visit(c);
    if (v->suspended) {
      s += "F" + std::to_string(v->suspended->codeIndex) + "@" +
           std::to_string(v->suspended->pc) + ";";
      for (const VarPtr &local : v->suspended->localsplus)
        visit(local);
      for (const VarPtr &item : v->suspended->stack)
        visit(item);
    }
    s += "}";
  };
  for (const Frame &f : state.frames)
    s += "F" + std::to_string(f.codeIndex) + "@" + std::to_string(f.pc) + ";";
  for (const GlobalSlot &g : state.globals)
    s += "G" + std::to_string(g.namespaceIndex) + "." + g.name + (g.written ? "!" : "") + ";";
  for (const Autocast &a : state.autocast)
    s += "A" + a.framework + "." + a.device + "." +
         (a.dtype ? ops::dtypeName(*a.dtype) : std::string("off")) + ";";
  if (state.handling)
    s += "X" + state.handling->exceptionType + ";";
  walkState(state, visit);
  return s;
}

} // namespace sotc::frontend
