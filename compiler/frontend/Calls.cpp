//===- Calls.cpp - Calls, attributes, operators: Python semantics on Variables ----------===//
//
// Tensor operations go through the operator library (compiler/ops) and become statements;
// Python values fold; user functions are inlined by pushing a frame.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Executor.h"
#include "compiler/ops/OpTable.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace sotc::frontend {
namespace {
using K = Variable::Kind;
using Kwargs = std::vector<std::pair<std::string, VarPtr>>;

Tracker constTracker() { return Tracker{Tracker::Kind::Const, "", {}, {}, {}}; }

VarPtr makeConst(PyConst c, std::vector<VarPtr> from) {
  return Variable::constant_(std::move(c), computedFrom(std::move(from)));
}

VarPtr makeSequence(K kind, std::vector<VarPtr> items, std::vector<VarPtr> from) {
  VarPtr v = Variable::make(kind, computedFrom(std::move(from)));
  v->items = std::move(items);
  return v;
}

bool isInt(const VarPtr &v) {
  return v->isConstant() &&
         (v->constant.kind == PyConst::Kind::Int || v->constant.kind == PyConst::Kind::Bool);
}

/// Python arithmetic on two number constants; nullopt when the operator does not apply.
std::optional<PyConst> foldNumbers(const std::string &op, const PyConst &a, const PyConst &b,
                                   std::string &error) {
  bool ints = a.kind != PyConst::Kind::Float && b.kind != PyConst::Kind::Float;
  if (ints) {
    // Python ints are unbounded; sotc folds them in 64 bits and refuses anything wider
    // rather than wrap silently.
    int64_t i = a.kind == PyConst::Kind::Bool ? a.boolValue : a.intValue;
    int64_t j = b.kind == PyConst::Kind::Bool ? b.boolValue : b.intValue;
    int64_t r = 0;
    bool overflow = false;
    if (op == "add")
      overflow = __builtin_add_overflow(i, j, &r);
    else if (op == "sub")
      overflow = __builtin_sub_overflow(i, j, &r);
    else if (op == "mul")
      overflow = __builtin_mul_overflow(i, j, &r);
    else if (op == "pow" && j >= 0) {
      r = 1;
      for (int64_t k = 0; k < j && !overflow; ++k)
        overflow = __builtin_mul_overflow(r, i, &r);
    } else if (op == "lshift")
      overflow = j >= 63 || (j > 0 && (i > (INT64_MAX >> j) || i < (INT64_MIN >> j)));
    if (overflow) {
      error = "integer arithmetic beyond 64 bits is not supported";
      return std::nullopt;
    }
    if (op == "add" || op == "sub" || op == "mul" || (op == "pow" && j >= 0))
      return PyConst::ofInt(r);
  }
  if (a.kind == PyConst::Kind::BigInt || b.kind == PyConst::Kind::BigInt) {
    error = "integer arithmetic beyond 64 bits is not supported";
    return std::nullopt;
  }
  double x = a.number(), y = b.number();
  auto num = [&](double v) {
    return ints ? PyConst::ofInt(static_cast<int64_t>(v)) : PyConst::ofFloat(v);
  };
  int64_t i = static_cast<int64_t>(x), j = static_cast<int64_t>(y);
  if (op == "add")
    return num(x + y);
  if (op == "sub")
    return num(x - y);
  if (op == "mul")
    return num(x * y);
  if ((op == "truediv" || op == "floordiv" || op == "mod") && y == 0) {
    error = ints && op != "truediv" ? "ZeroDivisionError: integer division or modulo by zero"
                                    : "ZeroDivisionError: division by zero";
    return std::nullopt;
  }
  if (op == "truediv")
    return PyConst::ofFloat(x / y);
  if (op == "floordiv")
    return ints ? PyConst::ofInt(static_cast<int64_t>(std::floor(x / y)))
                : PyConst::ofFloat(std::floor(x / y));
  if (op == "mod")
    return num(x - std::floor(x / y) * y);
  if (op == "pow")
    return ints && y >= 0 ? PyConst::ofInt(static_cast<int64_t>(std::llround(std::pow(x, y))))
                          : PyConst::ofFloat(std::pow(x, y));
  if (!ints) {
    error = "TypeError: unsupported operand type(s) for " + op + ": 'float'";
    return std::nullopt;
  }
  if (op == "and")
    return a.kind == PyConst::Kind::Bool && b.kind == PyConst::Kind::Bool ? PyConst::ofBool(i & j)
                                                                          : PyConst::ofInt(i & j);
  if (op == "or")
    return a.kind == PyConst::Kind::Bool && b.kind == PyConst::Kind::Bool ? PyConst::ofBool(i | j)
                                                                          : PyConst::ofInt(i | j);
  if (op == "xor")
    return a.kind == PyConst::Kind::Bool && b.kind == PyConst::Kind::Bool ? PyConst::ofBool(i ^ j)
                                                                          : PyConst::ofInt(i ^ j);
  if (op == "lshift")
    return PyConst::ofInt(i << j);
  if (op == "rshift")
    return PyConst::ofInt(i >> j);
  return std::nullopt;
}

/// A Python value as an operator-library argument.
ops::Arg toArg(const VarPtr &v) {
  switch (v->kind) {
  case K::Tensor:
    return ops::Arg::ofTensor(v->meta);
  case K::Constant:
    switch (v->constant.kind) {
    case PyConst::Kind::None:
      return ops::Arg::none();
    case PyConst::Kind::Bool:
      return ops::Arg::ofBool(v->constant.boolValue);
    case PyConst::Kind::Int:
      return ops::Arg::ofInt(v->constant.intValue);
    case PyConst::Kind::Float:
      return ops::Arg::ofFloat(v->constant.floatValue);
    case PyConst::Kind::Str:
      return ops::Arg::ofString(v->constant.text);
    case PyConst::Kind::Ellipsis:
      return ops::Arg::ellipsis();
    default:
      return ops::Arg::ofString(v->constant.repr());
    }
  case K::Tuple:
  case K::List: {
    std::vector<ops::Arg> items;
    for (const VarPtr &i : v->items)
      items.push_back(toArg(i));
    return v->kind == K::Tuple ? ops::Arg::tuple(items) : ops::Arg::list(items);
  }
  case K::Slice:
    return ops::Arg::slice(toArg(v->items[0]), toArg(v->items[1]), toArg(v->items[2]));
  case K::External:
  case K::Module:
    return ops::Arg::ofString(v->name); // e.g. paddle.float32 for a DataType parameter
  default: {
    ops::Arg a = ops::Arg::ofString("<" + v->typeName() + ">");
    return a;
  }
  }
}

const std::map<std::string, double> kMathConstants = {{"math.pi", M_PI},
                                                      {"math.e", M_E},
                                                      {"math.tau", 2 * M_PI},
                                                      {"math.inf", INFINITY},
                                                      {"math.nan", NAN}};
} // namespace

bool Executor::truthy(Frame &f, const VarPtr &v) {
  consume(v, locOf(f));
  switch (v->kind) {
  case K::Constant:
    return v->constant.truthy();
  case K::Tuple:
  case K::List:
  case K::Dict:
    return !v->items.empty();
  case K::Range:
    return v->stop > v->start;
  case K::Tensor:
    fail(DiagCode::FrontendHostInteraction,
         "the truth value of a tensor needs its value on the host", f);
  default:
    return true;
  }
}

std::vector<VarPtr> Executor::iterate(Frame &f, const VarPtr &v) {
  switch (v->kind) {
  case K::Tuple:
  case K::List:
  case K::Iterator:
    return std::vector<VarPtr>(v->items.begin() + (v->kind == K::Iterator ? v->position : 0),
                               v->items.end());
  case K::Dict:
    return v->keys;
  case K::Range: {
    std::vector<VarPtr> out;
    for (int64_t i = v->start; v->step > 0 ? i < v->stop : i > v->stop; i += v->step) {
      out.push_back(makeConst(PyConst::ofInt(i), {v}));
      if (out.size() > static_cast<size_t>(options_.maxLoopIterations))
        fail(DiagCode::FrontendLoopLimit,
             "a range longer than " + std::to_string(options_.maxLoopIterations) +
                 " cannot be unrolled",
             f);
    }
    return out;
  }
  case K::Constant:
    if (v->constant.kind == PyConst::Kind::Str) {
      std::vector<VarPtr> out;
      for (char c : v->constant.text)
        out.push_back(makeConst(PyConst::ofStr(std::string(1, c)), {v}));
      return out;
    }
    break;
  default:
    break;
  }
  fail(DiagCode::FrontendUnsupportedConstruct, "cannot iterate over a " + v->typeName(), f);
}

VarPtr Executor::tensorCall(Frame &f, StatementIR &sir, const std::string &kind,
                            const std::string &callee, const std::string &opName,
                            std::vector<VarPtr> args, Kwargs kwargs) {
  SourceLoc loc = locOf(f);
  ops::CallArgs callArgs;
  for (const VarPtr &a : args)
    callArgs.positional.push_back(toArg(a));
  for (const auto &[k, v] : kwargs)
    callArgs.keywords.push_back({k, toArg(v)});
  ops::LoweredCall lowered = [&] {
    try {
      return ops::OpTable::get().lower(opName, callArgs);
    } catch (const CodedError &e) {
      throw CodedError(e.code(), std::string(e.what()) + " (" + loc.str() + ")");
    }
  }();
  // Every Python value the call reads decides its result: guard it.
  std::vector<VarPtr> inputs;
  std::function<void(const VarPtr &)> consumeAll = [&](const VarPtr &v) {
    inputs.push_back(v);
    if (v->isTensor() || v->isConstant())
      consume(v, loc);
    for (const VarPtr &i : v->items)
      consumeAll(i);
  };
  for (const VarPtr &a : args)
    consumeAll(a);
  for (const auto &kv : kwargs)
    consumeAll(kv.second);
  Statement stmt;
  stmt.kind = kind;
  stmt.callee = callee;
  stmt.opName = lowered.entry->name;
  stmt.args = args;
  stmt.kwargs = kwargs;
  stmt.loc = loc;
  for (const ops::TensorMeta &meta : lowered.outputs())
    stmt.outputs.push_back(newTensor(meta, computedFrom(inputs)));
  // An output that is an input unchanged (dropout in inference, x[...] with full slices)
  // still gets its own name: statements always define new values.
  stmt.listResult =
      lowered.entry->signatures[lowered.signatureIndex].returnType == ops::ParamType::TensorList;
  sir.statements.push_back(stmt);
  if (stmt.listResult)
    return makeSequence(K::List, stmt.outputs, inputs);
  return stmt.outputs.front();
}

VarPtr Executor::binaryOp(Frame &f, StatementIR &sir, const std::string &op, bool inplace, VarPtr a,
                          VarPtr b) {
  SourceLoc loc = locOf(f);
  if (a->isTensor() || b->isTensor()) {
    if (a->isTensor()) {
      std::string dunder = "__" + std::string(inplace ? "i" : "") + op + "__";
      return tensorCall(f, sir, "operator", dunder, dunder, {a, b}, {});
    }
    std::string dunder = "__r" + op + "__"; // 1 - x -> x.__rsub__(1)
    return tensorCall(f, sir, "operator", dunder, dunder, {b, a}, {});
  }
  if (a->isConstant() && b->isConstant()) {
    const PyConst &x = a->constant, &y = b->constant;
    consume(a, loc);
    consume(b, loc);
    if (x.isNumber() && y.isNumber()) {
      std::string error;
      if (std::optional<PyConst> r = foldNumbers(op, x, y, error))
        return makeConst(*r, {a, b});
      fail(error.rfind("integer arithmetic", 0) == 0 ? DiagCode::FrontendUnsupportedConstruct
                                                     : DiagCode::FrontendPythonError,
           error.empty() ? "TypeError: unsupported operand" : error, f);
    }
    if (x.kind == PyConst::Kind::Str && y.kind == PyConst::Kind::Str && op == "add")
      return makeConst(PyConst::ofStr(x.text + y.text), {a, b});
    if (x.kind == PyConst::Kind::Str && y.kind == PyConst::Kind::Int && op == "mul") {
      std::string s;
      for (int64_t i = 0; i < y.intValue; ++i)
        s += x.text;
      return makeConst(PyConst::ofStr(s), {a, b});
    }
  }
  if (a->isSequence() && b->isSequence() && a->kind == b->kind && op == "add") {
    std::vector<VarPtr> items = a->items;
    items.insert(items.end(), b->items.begin(), b->items.end());
    if (inplace && a->kind == K::List) {
      a->items = items;
      return a;
    }
    return makeSequence(a->kind, items, {a, b});
  }
  if (a->isSequence() && isInt(b) && op == "mul") {
    consume(b, loc);
    std::vector<VarPtr> items;
    for (int64_t i = 0; i < b->constant.intValue; ++i)
      items.insert(items.end(), a->items.begin(), a->items.end());
    return makeSequence(a->kind, items, {a, b});
  }
  fail(DiagCode::FrontendPythonError,
       "TypeError: unsupported operand type(s) for " + op + ": '" + a->typeName() + "' and '" +
           b->typeName() + "'",
       f);
}

VarPtr Executor::compare(Frame &f, StatementIR &sir, const std::string &op, VarPtr a, VarPtr b) {
  static const std::map<std::string, std::string> dunders = {{"<", "__lt__"},  {"<=", "__le__"},
                                                             {"==", "__eq__"}, {"!=", "__ne__"},
                                                             {">", "__gt__"},  {">=", "__ge__"}};
  static const std::map<std::string, std::string> mirrored = {
      {"<", ">"}, {"<=", ">="}, {"==", "=="}, {"!=", "!="}, {">", "<"}, {">=", "<="}};
  SourceLoc loc = locOf(f);
  if (op != "in" && (a->isTensor() || b->isTensor())) {
    if (!a->isTensor()) // 0 < x  ->  x > 0
      return compare(f, sir, mirrored.at(op), b, a);
    return tensorCall(f, sir, "operator", dunders.at(op), dunders.at(op), {a, b}, {});
  }
  if (op == "in") {
    if (b->isTensor() || a->isTensor())
      fail(DiagCode::FrontendHostInteraction, "'in' on a tensor needs its values on the host", f);
    consume(a, loc);
    std::vector<VarPtr> items = b->kind == K::Dict ? b->keys : iterate(f, b);
    consume(b, loc);
    bool found = false;
    for (const VarPtr &i : items)
      found |= (i.get() == a.get()) ||
               (i->isConstant() && a->isConstant() && i->constant == a->constant);
    if (b->isConstant() && b->constant.kind == PyConst::Kind::Str && a->isConstant())
      found = b->constant.text.find(a->constant.text) != std::string::npos;
    return makeConst(PyConst::ofBool(found), {a, b});
  }
  consume(a, loc);
  consume(b, loc);
  if (a->isConstant() && b->isConstant()) {
    const PyConst &x = a->constant, &y = b->constant;
    if (op == "==" || op == "!=") {
      bool eq = x == y;
      return makeConst(PyConst::ofBool(op == "==" ? eq : !eq), {a, b});
    }
    int order;
    if (x.isNumber() && y.isNumber())
      order = x.number() < y.number() ? -1 : x.number() > y.number() ? 1 : 0;
    else if (x.kind == PyConst::Kind::Str && y.kind == PyConst::Kind::Str)
      order = x.text.compare(y.text);
    else
      fail(DiagCode::FrontendPythonError,
           "TypeError: '" + op + "' not supported between '" + x.typeName() + "' and '" +
               y.typeName() + "'",
           f);
    bool r = op == "<" ? order < 0 : op == "<=" ? order <= 0 : op == ">" ? order > 0 : order >= 0;
    return makeConst(PyConst::ofBool(r), {a, b});
  }
  if (op == "==" || op == "!=") {
    bool eq = a.get() == b.get();
    if (a->isSequence() && b->isSequence() && a->kind == b->kind &&
        a->items.size() == b->items.size()) {
      eq = true;
      for (size_t i = 0; i < a->items.size(); ++i)
        eq = eq && compare(f, sir, "==", a->items[i], b->items[i])->constant.boolValue;
    }
    if ((a->kind == K::External || a->kind == K::Module) && a->kind == b->kind)
      eq = a->name == b->name;
    return makeConst(PyConst::ofBool(op == "==" ? eq : !eq), {a, b});
  }
  fail(DiagCode::FrontendPythonError,
       "TypeError: '" + op + "' not supported between '" + a->typeName() + "' and '" +
           b->typeName() + "'",
       f);
}

VarPtr Executor::getAttr(Frame &f, StatementIR &sir, VarPtr obj, const std::string &name) {
  SourceLoc loc = locOf(f);
  Tracker attr;
  attr.kind = Tracker::Kind::GetAttr;
  attr.parent = obj;
  attr.name = name;
  switch (obj->kind) {
  case K::Module:
  case K::External: {
    std::string full = obj->name + "." + name;
    auto c = kMathConstants.find(full);
    if (c != kMathConstants.end())
      return Variable::constant_(PyConst::ofFloat(c->second), constTracker());
    VarPtr v = Variable::make(K::External, constTracker());
    v->name = full;
    return v;
  }
  case K::Tensor: {
    // Tensor attributes are constants covered by the tensor's guard.
    consume(obj, loc);
    if (name == "shape") {
      std::vector<VarPtr> dims;
      for (int64_t d : obj->meta.shape) {
        if (d == ops::kDynamic)
          fail(DiagCode::FrontendHostInteraction,
               "a dynamic dimension's size is only known at run time", f);
        dims.push_back(makeConst(PyConst::ofInt(d), {obj}));
      }
      return makeSequence(framework_ == "torch" ? K::Tuple : K::List, dims, {obj});
    }
    if (name == "ndim")
      return makeConst(PyConst::ofInt(obj->meta.rank()), {obj});
    if (name == "size" && framework_ == "paddle") {
      int64_t n = obj->meta.numElements();
      if (n == ops::kDynamic)
        fail(DiagCode::FrontendHostInteraction,
             "the size of a tensor with dynamic dimensions is only known at run time", f);
      return makeConst(PyConst::ofInt(n), {obj});
    }
    if (name == "dtype") {
      VarPtr v = Variable::make(K::External, computedFrom({obj}));
      v->name = framework_ + "." + ops::dtypeName(obj->meta.dtype);
      return v;
    }
    if (name == "stop_gradient")
      return makeConst(PyConst::ofBool(obj->stopGradient), {obj});
    if (name == "T") {
      std::vector<VarPtr> perm;
      for (int64_t i = obj->meta.rank(); i-- > 0;)
        perm.push_back(makeConst(PyConst::ofInt(i), {}));
      return tensorCall(f, sir, "method", "T", "Tensor.transpose",
                        {obj, makeSequence(K::List, perm, {})}, {});
    }
    VarPtr m = Variable::make(K::Method, computedFrom({obj}));
    m->self = obj;
    m->name = name;
    return m;
  }
  case K::Constant:
  case K::List:
  case K::Dict:
  case K::Tuple: {
    VarPtr m = Variable::make(K::Method, computedFrom({obj}));
    m->self = obj;
    m->name = name;
    return m;
  }
  case K::Function:
    if (name == "__name__")
      return makeConst(PyConst::ofStr(trace_.code_objects(obj->codeIndex).name()), {obj});
    break;
  default:
    break;
  }
  fail(DiagCode::FrontendAttributeError,
       "cannot read attribute '" + name + "' of a " + obj->typeName(), f);
}

VarPtr Executor::getItem(Frame &f, StatementIR &sir, VarPtr obj, VarPtr key) {
  SourceLoc loc = locOf(f);
  if (obj->isTensor()) {
    if (key->isTensor() ||
        (key->isSequence() && std::any_of(key->items.begin(), key->items.end(),
                                          [](const VarPtr &v) { return v->isTensor(); })))
      fail(DiagCode::FrontendUnsupportedConstruct,
           "indexing a tensor with a tensor is not supported yet", f);
    return tensorCall(f, sir, "operator", "__getitem__", "__getitem__", {obj, key}, {});
  }
  consume(key, loc);
  if (obj->isSequence() || (obj->isConstant() && obj->constant.kind == PyConst::Kind::Str)) {
    std::vector<VarPtr> items = obj->isSequence() ? obj->items : iterate(f, obj);
    int64_t n = static_cast<int64_t>(items.size());
    if (key->kind == K::Slice) {
      auto part = [&](int i, int64_t dflt) {
        const VarPtr &p = key->items[i];
        return p->isConstant() && p->constant.kind == PyConst::Kind::None ? dflt
                                                                          : p->constant.intValue;
      };
      int64_t step = part(2, 1);
      if (step <= 0)
        fail(DiagCode::FrontendUnsupportedConstruct,
             "slices with a non-positive step on Python sequences", f);
      auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i < 0 ? i + n : i, 0), n); };
      int64_t start = clamp(part(0, 0)), stop = clamp(part(1, n));
      std::vector<VarPtr> out;
      for (int64_t i = start; i < stop; i += step)
        out.push_back(items[i]);
      if (obj->isConstant()) {
        std::string s;
        for (const VarPtr &c : out)
          s += c->constant.text;
        return makeConst(PyConst::ofStr(s), {obj, key});
      }
      return makeSequence(obj->kind, out, {obj, key});
    }
    if (!isInt(key))
      fail(DiagCode::FrontendPythonError,
           "TypeError: indices must be integers or slices, not " + key->typeName(), f);
    int64_t i = key->constant.intValue;
    if (i < 0)
      i += n;
    if (i < 0 || i >= n)
      fail(DiagCode::FrontendPythonError, "IndexError: " + obj->typeName() + " index out of range",
           f);
    return items[i];
  }
  if (obj->kind == K::Dict) {
    for (size_t i = 0; i < obj->keys.size(); ++i)
      if (obj->keys[i]->isConstant() && key->isConstant() &&
          obj->keys[i]->constant == key->constant)
        return obj->items[i];
    fail(DiagCode::FrontendPythonError, "KeyError: " + key->repr(), f);
  }
  fail(DiagCode::FrontendUnsupportedConstruct,
       "subscripting a " + obj->typeName() + " is not supported", f);
}

void Executor::pushFrame(ExecState &state, const VarPtr &function, std::vector<VarPtr> args,
                         Kwargs kwargs) {
  const trace::CodeObject &co = trace_.code_objects(function->codeIndex);
  Frame f;
  f.codeIndex = function->codeIndex;
  f.namespaceIndex = function->namespaceIndex;
  const Frame *caller = state.frames.empty() ? nullptr : &state.frames.back();
  if (caller && state.frames.size() >= static_cast<size_t>(options_.maxInlineDepth))
    fail(DiagCode::FrontendRecursionLimit,
         "inlining '" + co.qualname() + "' would exceed the depth limit of " +
             std::to_string(options_.maxInlineDepth),
         *caller);
  auto error = [&](const std::string &msg) {
    if (caller)
      fail(DiagCode::FrontendPythonError, "TypeError: " + co.qualname() + "() " + msg, *caller);
    throw CodedError(DiagCode::FrontendBadInputs,
                     "the trace's inputs do not fit " + co.qualname() + "(): " + msg);
  };
  size_t nlocalsplus = co.varnames_size();
  for (const std::string &c : co.cellvars())
    if (std::find(co.varnames().begin(), co.varnames().end(), c) == co.varnames().end())
      ++nlocalsplus;
  nlocalsplus += co.freevars_size();
  f.localsplus.assign(nlocalsplus, nullptr);
  if (co.argcount() + co.kwonlyargcount() + ((co.flags() & 0x04) ? 1 : 0) +
              ((co.flags() & 0x08) ? 1 : 0) >
          static_cast<uint32_t>(co.varnames_size()) ||
      function->closure.size() > nlocalsplus)
    error("has a code object whose argument counts exceed its variables");
  // Bind arguments with Python's rules.
  size_t argcount = co.argcount(), kwonly = co.kwonlyargcount();
  bool varargs = co.flags() & 0x04, varkw = co.flags() & 0x08;
  if (args.size() > argcount && !varargs)
    error("takes " + std::to_string(argcount) + " positional arguments but " +
          std::to_string(args.size()) + " were given");
  for (size_t i = 0; i < std::min(args.size(), argcount); ++i)
    f.localsplus[i] = args[i];
  size_t varargsSlot = argcount + kwonly, varkwSlot = varargsSlot + (varargs ? 1 : 0);
  if (varargs) {
    std::vector<VarPtr> rest;
    for (size_t i = argcount; i < args.size(); ++i)
      rest.push_back(args[i]);
    f.localsplus[varargsSlot] = makeSequence(K::Tuple, rest, rest);
  }
  VarPtr extra;
  if (varkw) {
    extra = Variable::make(K::Dict, computedFrom({}));
    f.localsplus[varkwSlot] = extra;
  }
  for (auto &[name, value] : kwargs) {
    size_t i = co.posonlyargcount();
    while (i < argcount + kwonly && co.varnames(i) != name)
      ++i;
    if (i < argcount + kwonly) {
      if (f.localsplus[i])
        error("got multiple values for argument '" + name + "'");
      f.localsplus[i] = value;
    } else if (extra) {
      extra->keys.push_back(Variable::constant_(PyConst::ofStr(name), constTracker()));
      extra->items.push_back(value);
    } else {
      error("got an unexpected keyword argument '" + name + "'");
    }
  }
  if (function->defaults.size() > argcount)
    error("has more defaults than parameters");
  size_t firstDefault = argcount - function->defaults.size();
  for (size_t i = 0; i < argcount; ++i)
    if (!f.localsplus[i]) {
      if (i < firstDefault)
        error("missing required argument '" + co.varnames(i) + "'");
      f.localsplus[i] = function->defaults[i - firstDefault];
    }
  for (size_t i = argcount; i < argcount + kwonly; ++i)
    if (!f.localsplus[i]) {
      for (auto &[name, value] : function->kwdefaults)
        if (name == co.varnames(i))
          f.localsplus[i] = value;
      if (!f.localsplus[i])
        error("missing required keyword-only argument '" + co.varnames(i) + "'");
    }
  // Closure cells occupy the last slots (COPY_FREE_VARS).
  for (size_t i = 0; i < function->closure.size(); ++i)
    f.localsplus[nlocalsplus - function->closure.size() + i] = function->closure[i];
  auto unsupported = [&](const std::string &msg) {
    if (caller)
      fail(DiagCode::FrontendUnsupportedConstruct, msg, *caller);
    throw CodedError(DiagCode::FrontendUnsupportedConstruct, msg);
  };
  if (co.flags() & 0x20) { // a generator: only generator expressions, run eagerly
    if (co.name() != "<genexpr>" || !caller)
      unsupported("calling generator function '" + co.qualname() + "' is not supported");
    f.genexpr = true;
    f.yields = Variable::make(K::List, computedFrom({}));
  }
  if (co.flags() & (0x80 | 0x100 | 0x200))
    unsupported("coroutines are not supported");
  state.frames.push_back(std::move(f));
}

bool Executor::hostCallback(Frame &f, const std::string &callee, const std::vector<VarPtr> &args,
                            const Kwargs &kwargs, VarPtr result) {
  if (!options_.allowHostCallbacks)
    return false;
  Break b;
  b.kind = Break::Kind::HostCallback;
  b.callee = callee;
  b.callbackArgs = args;
  for (const auto &kv : kwargs)
    b.callbackArgs.push_back(kv.second);
  for (const VarPtr &a : b.callbackArgs)
    consume(a, locOf(f));
  b.result = std::move(result);
  b.reason = "host callback " + callee + "()";
  b.loc = locOf(f);
  pendingBreak_ = b;
  return true;
}

void Executor::call(ExecState &state, StatementIR &sir, VarPtr callable, std::vector<VarPtr> args,
                    Kwargs kwargs) {
  Frame &f = state.frames.back();
  SourceLoc loc = locOf(f);
  auto push = [&](VarPtr v) { state.frames.back().stack.push_back(std::move(v)); };
  auto hostError = [&](const std::string &what) {
    fail(DiagCode::FrontendHostInteraction,
         what + " needs tensor values on the host; pass --allow-host-callbacks to run it as a host "
                "callback between graphs",
         f);
  };
  // A value only the host will know (x.item(), x.numpy()): it may be returned, not computed with.
  auto hostValue = [&](const std::string &what) {
    VarPtr v = Variable::make(K::Opaque, computedFrom(args));
    v->name = "host value of " + what;
    return v;
  };
  // --break-on=API: the call runs on the host between two graphs; its results are tensors
  // whose metadata the operator library infers.
  auto breakOn = [&](const std::string &name, const std::string &opName,
                     const std::vector<VarPtr> &callArgs) {
    if (std::find(options_.breakOn.begin(), options_.breakOn.end(), name) ==
            options_.breakOn.end() &&
        std::find(options_.breakOn.begin(), options_.breakOn.end(), opName) ==
            options_.breakOn.end())
      return false;
    StatementIR scratch;
    VarPtr result = tensorCall(f, scratch, "api", name, opName, callArgs, kwargs);
    if (!hostCallback(f, name, callArgs, kwargs, result))
      fail(DiagCode::FrontendUnsupportedCall,
           "--break-on=" + name + " puts a host boundary here: pass --allow-host-callbacks too", f);
    return true;
  };
  switch (callable->kind) {
  case K::Function:
    pushFrame(state, callable, std::move(args), std::move(kwargs));
    return;
  case K::External: {
    const std::string &name = callable->name;
    if (ops::OpTable::get().lookup(name)) {
      if (!breakOn(name, name, args))
        push(tensorCall(f, sir, "api", name, name, std::move(args), std::move(kwargs)));
      return;
    }
    if (name.rfind("math.", 0) == 0 && kwargs.empty() && !args.empty() &&
        std::all_of(args.begin(), args.end(),
                    [](const VarPtr &a) { return a->isConstant() && a->constant.isNumber(); })) {
      static const std::map<std::string, double (*)(double)> unary = {
          {"math.sqrt", std::sqrt}, {"math.exp", std::exp},   {"math.log", std::log},
          {"math.sin", std::sin},   {"math.cos", std::cos},   {"math.tanh", std::tanh},
          {"math.fabs", std::fabs}, {"math.log2", std::log2}, {"math.log10", std::log10},
          {"math.erf", std::erf}};
      for (const VarPtr &a : args)
        consume(a, loc);
      double x = args[0]->constant.number();
      if (auto it = unary.find(name); it != unary.end() && args.size() == 1) {
        push(makeConst(PyConst::ofFloat(it->second(x)), args));
        return;
      }
      if ((name == "math.floor" || name == "math.ceil") && args.size() == 1) {
        push(makeConst(PyConst::ofInt(static_cast<int64_t>(name == "math.floor" ? std::floor(x)
                                                                                : std::ceil(x))),
                       args));
        return;
      }
      if (name == "math.pow" && args.size() == 2) {
        push(makeConst(PyConst::ofFloat(std::pow(x, args[1]->constant.number())), args));
        return;
      }
    }
    fail(DiagCode::FrontendUnsupportedCall,
         "cannot compile a call to " + name +
             ": it is not in the operator table (`sotc ops` lists what is)",
         f);
  }
  case K::Method: {
    VarPtr self = callable->self;
    const std::string &m = callable->name;
    if (self->isTensor()) {
      if (m == "numpy" || m == "item" || m == "tolist" || m == "cpu" || m == "__bool__") {
        if (hostCallback(f, "Tensor." + m, {self}, {},
                         hostValue(self->tensorName + "." + m + "()")))
          return;
        hostError("Tensor." + m + "()");
      }
      if (m == "dim" && args.empty()) {
        consume(self, loc);
        push(makeConst(PyConst::ofInt(self->meta.rank()), {self}));
        return;
      }
      if (m == "size" && framework_ == "torch") {
        StatementIR &s = sir;
        VarPtr shape = getAttr(f, s, self, "shape");
        push(args.empty() ? shape : getItem(f, s, shape, args[0]));
        return;
      }
      std::string opName = (framework_ == "torch" ? "torch.Tensor." : "Tensor.") + m;
      if (!ops::OpTable::get().lookup(opName))
        fail(DiagCode::FrontendUnsupportedCall,
             "tensor method '" + m + "' is not in the operator table (`sotc ops` lists what is)",
             f);
      args.insert(args.begin(), self);
      if (!breakOn(m, opName, args))
        push(tensorCall(f, sir, "method", m, opName, std::move(args), std::move(kwargs)));
      return;
    }
    if (self->kind == K::List) {
      if (m == "append" && args.size() == 1) {
        self->items.push_back(args[0]);
        push(makeConst(PyConst::none(), {}));
        return;
      }
      if (m == "extend" && args.size() == 1) {
        auto items = iterate(f, args[0]);
        self->items.insert(self->items.end(), items.begin(), items.end());
        push(makeConst(PyConst::none(), {}));
        return;
      }
      if (m == "insert" && args.size() == 2 && isInt(args[0])) {
        consume(args[0], loc);
        int64_t n = self->items.size(),
                i = std::min(std::max<int64_t>(args[0]->constant.intValue < 0
                                                   ? args[0]->constant.intValue + n
                                                   : args[0]->constant.intValue,
                                               0),
                             n);
        self->items.insert(self->items.begin() + i, args[1]);
        push(makeConst(PyConst::none(), {}));
        return;
      }
      if (m == "pop") {
        if (self->items.empty())
          fail(DiagCode::FrontendPythonError, "IndexError: pop from empty list", f);
        int64_t n = self->items.size(), i = n - 1;
        if (!args.empty()) {
          consume(args[0], loc);
          i = args[0]->constant.intValue < 0 ? args[0]->constant.intValue + n
                                             : args[0]->constant.intValue;
        }
        if (i < 0 || i >= n)
          fail(DiagCode::FrontendPythonError, "IndexError: pop index out of range", f);
        VarPtr v = self->items[i];
        self->items.erase(self->items.begin() + i);
        push(v);
        return;
      }
      if (m == "clear") {
        self->items.clear();
        push(makeConst(PyConst::none(), {}));
        return;
      }
      if (m == "copy") {
        push(makeSequence(K::List, self->items, {self}));
        return;
      }
      if (m == "reverse") {
        std::reverse(self->items.begin(), self->items.end());
        push(makeConst(PyConst::none(), {}));
        return;
      }
    }
    if (self->kind == K::Dict) {
      auto find = [&](const VarPtr &key) -> int {
        for (size_t i = 0; i < self->keys.size(); ++i)
          if (self->keys[i]->isConstant() && key->isConstant() &&
              self->keys[i]->constant == key->constant)
            return static_cast<int>(i);
        return -1;
      };
      if ((m == "get" || m == "pop" || m == "setdefault") && !args.empty()) {
        consume(args[0], loc);
        int i = find(args[0]);
        VarPtr dflt = args.size() > 1 ? args[1] : makeConst(PyConst::none(), {});
        if (i < 0 && m == "pop" && args.size() == 1)
          fail(DiagCode::FrontendPythonError, "KeyError: " + args[0]->repr(), f);
        if (i < 0 && m == "setdefault") {
          self->keys.push_back(args[0]);
          self->items.push_back(dflt);
        }
        VarPtr v = i >= 0 ? self->items[i] : dflt;
        if (i >= 0 && m == "pop") {
          self->keys.erase(self->keys.begin() + i);
          self->items.erase(self->items.begin() + i);
        }
        push(v);
        return;
      }
      if (m == "keys") {
        push(makeSequence(K::List, self->keys, {self}));
        return;
      }
      if (m == "values") {
        push(makeSequence(K::List, self->items, {self}));
        return;
      }
      if (m == "items") {
        std::vector<VarPtr> pairs;
        for (size_t i = 0; i < self->keys.size(); ++i)
          pairs.push_back(makeSequence(K::Tuple, {self->keys[i], self->items[i]}, {self}));
        push(makeSequence(K::List, pairs, {self}));
        return;
      }
      if (m == "update" && args.size() == 1 && args[0]->kind == K::Dict) {
        for (size_t j = 0; j < args[0]->keys.size(); ++j) {
          int i = find(args[0]->keys[j]);
          if (i >= 0)
            self->items[i] = args[0]->items[j];
          else {
            self->keys.push_back(args[0]->keys[j]);
            self->items.push_back(args[0]->items[j]);
          }
        }
        for (auto &[k, v] : kwargs) {
          VarPtr key = makeConst(PyConst::ofStr(k), {});
          int i = find(key);
          if (i >= 0)
            self->items[i] = v;
          else {
            self->keys.push_back(key);
            self->items.push_back(v);
          }
        }
        push(makeConst(PyConst::none(), {}));
        return;
      }
      if (m == "clear") {
        self->keys.clear();
        self->items.clear();
        push(makeConst(PyConst::none(), {}));
        return;
      }
      if (m == "copy") {
        VarPtr d = Variable::make(K::Dict, computedFrom({self}));
        d->keys = self->keys;
        d->items = self->items;
        push(d);
        return;
      }
    }
    if (self->isConstant() && self->constant.kind == PyConst::Kind::Str) {
      consume(self, loc);
      const std::string &s = self->constant.text;
      if (m == "join" && args.size() == 1) {
        std::string out;
        auto items = iterate(f, args[0]);
        for (size_t i = 0; i < items.size(); ++i) {
          consume(items[i], loc);
          out += (i ? s : "") + items[i]->constant.text;
        }
        push(makeConst(PyConst::ofStr(out), {self, args[0]}));
        return;
      }
      if ((m == "upper" || m == "lower") && args.empty()) {
        std::string out = s;
        for (char &c : out)
          c = m == "upper" ? std::toupper(c) : std::tolower(c);
        push(makeConst(PyConst::ofStr(out), {self}));
        return;
      }
      if ((m == "startswith" || m == "endswith") && args.size() == 1 && args[0]->isConstant()) {
        const std::string &p = args[0]->constant.text;
        bool r = p.size() <= s.size() &&
                 (m == "startswith" ? s.compare(0, p.size(), p) == 0
                                    : s.compare(s.size() - p.size(), p.size(), p) == 0);
        push(makeConst(PyConst::ofBool(r), {self, args[0]}));
        return;
      }
    }
    fail(DiagCode::FrontendUnsupportedCall,
         "method '" + m + "' of a " + self->typeName() + " is not supported", f);
  }
  case K::Builtin: {
    const std::string &b = callable->name;
    static const std::map<std::string, std::pair<size_t, size_t>> arity = {
        {"range", {1, 3}}, {"enumerate", {1, 2}}, {"reversed", {1, 1}}, {"sorted", {1, 1}},
        {"iter", {1, 1}},  {"zip", {0, 64}},      {"len", {1, 1}},      {"isinstance", {2, 2}}};
    if (auto it = arity.find(b);
        it != arity.end() && (args.size() < it->second.first || args.size() > it->second.second))
      fail(DiagCode::FrontendPythonError,
           "TypeError: " + b + "() takes " + std::to_string(it->second.first) +
               (it->second.first == it->second.second
                    ? ""
                    : " to " + std::to_string(it->second.second)) +
               " arguments (" + std::to_string(args.size()) + " given)",
           f);
    auto constArgs = [&] {
      for (const VarPtr &a : args)
        consume(a, loc);
    };
    if (b == "print") {
      if (hostCallback(f, "print", args, kwargs, makeConst(PyConst::none(), {})))
        return;
      hostError("print()");
    }
    if (b == "len" && args.size() == 1) {
      VarPtr a = args[0];
      if (a->isTensor()) {
        consume(a, loc);
        if (a->meta.shape.empty() || a->meta.shape[0] == ops::kDynamic)
          fail(DiagCode::FrontendHostInteraction,
               "len() of a tensor with a dynamic first dimension", f);
        push(makeConst(PyConst::ofInt(a->meta.shape[0]), {a}));
        return;
      }
      size_t n = a->kind == K::Dict ? a->keys.size() : iterate(f, a).size();
      push(makeConst(PyConst::ofInt(static_cast<int64_t>(n)), {a}));
      return;
    }
    if (b == "range") {
      constArgs();
      for (const VarPtr &a : args)
        if (!isInt(a))
          fail(DiagCode::FrontendPythonError,
               "TypeError: range() arguments must be integers, not " + a->typeName(), f);
      VarPtr r = Variable::make(K::Range, computedFrom(args));
      r->start = args.size() > 1 ? args[0]->constant.intValue : 0;
      r->stop = args.size() > 1 ? args[1]->constant.intValue : args[0]->constant.intValue;
      r->step = args.size() > 2 ? args[2]->constant.intValue : 1;
      if (r->step == 0)
        fail(DiagCode::FrontendPythonError, "ValueError: range() arg 3 must not be zero", f);
      push(r);
      return;
    }
    if (b == "isinstance" && args.size() == 2) {
      std::vector<VarPtr> types =
          args[1]->kind == K::Tuple ? args[1]->items : std::vector<VarPtr>{args[1]};
      std::string t = args[0]->typeName();
      bool r = false;
      for (const VarPtr &ty : types)
        r |= (ty->kind == K::Builtin &&
              (ty->name == t || (ty->name == "int" && t == "bool") || (ty->name == "object"))) ||
             (ty->kind == K::External && args[0]->isTensor() &&
              (ty->name == "paddle.Tensor" || ty->name == "torch.Tensor"));
      consume(args[0], loc);
      push(makeConst(PyConst::ofBool(r), {args[0]}));
      return;
    }
    if ((b == "frozenset" || b == "set") && args.size() <= 1) {
      VarPtr set = makeSequence(K::Tuple, {}, args);
      set->name = b;
      for (const VarPtr &item : args.empty() ? std::vector<VarPtr>{} : iterate(f, args[0]))
        if (std::none_of(set->items.begin(), set->items.end(), [&](const VarPtr &x) {
              return x->isConstant() && item->isConstant() && x->constant == item->constant;
            }))
          set->items.push_back(item);
      push(set);
      return;
    }
    if ((b == "tuple" || b == "list") && args.size() <= 1) {
      push(makeSequence(b == "tuple" ? K::Tuple : K::List,
                        args.empty() ? std::vector<VarPtr>{} : iterate(f, args[0]), args));
      return;
    }
    if (b == "dict" && args.empty()) {
      VarPtr d = Variable::make(K::Dict, computedFrom({}));
      for (auto &[k, v] : kwargs) {
        d->keys.push_back(makeConst(PyConst::ofStr(k), {}));
        d->items.push_back(v);
      }
      push(d);
      return;
    }
    if (b == "enumerate" || b == "zip" || b == "reversed" || b == "sorted" || b == "iter") {
      std::vector<VarPtr> items;
      if (b == "enumerate") {
        int64_t start = args.size() > 1 ? args[1]->constant.intValue : 0;
        auto src = iterate(f, args[0]);
        for (size_t i = 0; i < src.size(); ++i)
          items.push_back(makeSequence(
              K::Tuple,
              {makeConst(PyConst::ofInt(start + static_cast<int64_t>(i)), {args[0]}), src[i]},
              {args[0]}));
      } else if (b == "zip") {
        std::vector<std::vector<VarPtr>> srcs;
        size_t n = SIZE_MAX;
        for (const VarPtr &a : args) {
          srcs.push_back(iterate(f, a));
          n = std::min(n, srcs.back().size());
        }
        for (size_t i = 0; i < (args.empty() ? 0 : n); ++i) {
          std::vector<VarPtr> t;
          for (auto &s : srcs)
            t.push_back(s[i]);
          items.push_back(makeSequence(K::Tuple, t, args));
        }
      } else {
        items = iterate(f, args[0]);
        if (b == "reversed")
          std::reverse(items.begin(), items.end());
        if (b == "sorted") {
          constArgs();
          for (const VarPtr &v : items)
            if (!v->isConstant() ||
                !(v->constant.isNumber() || v->constant.kind == PyConst::Kind::Str))
              fail(DiagCode::FrontendUnsupportedConstruct, "sorted() of non-constant values", f);
          std::stable_sort(items.begin(), items.end(), [](const VarPtr &x, const VarPtr &y) {
            return x->constant.isNumber() ? x->constant.number() < y->constant.number()
                                          : x->constant.text < y->constant.text;
          });
          push(makeSequence(K::List, items, args));
          return;
        }
      }
      for (const VarPtr &a : args)
        consume(a, loc);
      VarPtr it = Variable::make(K::Iterator, computedFrom(args));
      it->items = items;
      push(it);
      return;
    }
    if ((b == "min" || b == "max" || b == "sum" || b == "all" || b == "any") && !args.empty()) {
      bool overIterable = args.size() == 1 || b == "sum" || b == "all" || b == "any";
      std::vector<VarPtr> items = overIterable ? iterate(f, args[0]) : args;
      if (std::any_of(items.begin(), items.end(), [](const VarPtr &v) { return v->isTensor(); })) {
        if (b == "sum") { // sum of tensors: a chain of additions
          VarPtr acc = args.size() > 1 ? args[1] : makeConst(PyConst::ofInt(0), {});
          for (const VarPtr &v : items)
            acc = binaryOp(f, sir, "add", false, acc, v);
          push(acc);
          return;
        }
        fail(DiagCode::FrontendHostInteraction,
             b + "() over tensors compares tensor values on the host", f);
      }
      for (const VarPtr &v : items)
        consume(v, loc);
      if (b == "all" || b == "any") {
        bool r = b == "all";
        for (const VarPtr &v : items) {
          bool t = truthy(f, v);
          r = b == "all" ? r && t : r || t;
        }
        push(makeConst(PyConst::ofBool(r), args));
        return;
      }
      if (b == "sum") {
        VarPtr acc = args.size() > 1 ? args[1] : makeConst(PyConst::ofInt(0), {});
        for (const VarPtr &v : items)
          acc = binaryOp(f, sir, "add", false, acc, v);
        push(acc);
        return;
      }
      if (items.empty())
        fail(DiagCode::FrontendPythonError, "ValueError: " + b + "() arg is an empty sequence", f);
      VarPtr best = items[0];
      for (const VarPtr &v : items) {
        bool better = compare(f, sir, b == "min" ? "<" : ">", v, best)->constant.boolValue;
        if (better)
          best = v;
      }
      push(best);
      return;
    }
    if ((b == "abs" || b == "int" || b == "float" || b == "bool" || b == "str" || b == "repr" ||
         b == "round") &&
        args.size() >= 1) {
      VarPtr a = args[0];
      if (a->isTensor()) {
        if (b == "abs") {
          push(tensorCall(f, sir, "operator", "__abs__", "__abs__", {a}, {}));
          return;
        }
        hostError(b + "() of a tensor");
      }
      consume(a, loc);
      if (b == "bool") {
        push(makeConst(PyConst::ofBool(truthy(f, a)), {a}));
        return;
      }
      if (b == "str" || b == "repr") {
        push(makeConst(
            PyConst::ofStr(b == "str" && a->isConstant() ? a->constant.str() : a->repr()), {a}));
        return;
      }
      if (!a->isConstant())
        fail(DiagCode::FrontendPythonError,
             "TypeError: " + b + "() argument must be a number, not " + a->typeName(), f);
      const PyConst &c = a->constant;
      if (b == "int" && c.kind == PyConst::Kind::Str) {
        push(makeConst(PyConst::ofInt(std::stoll(c.text)), {a}));
        return;
      }
      if (!c.isNumber())
        fail(DiagCode::FrontendPythonError,
             "TypeError: " + b + "() argument must be a number, not " + c.typeName(), f);
      if (b == "abs")
        push(makeConst(c.kind == PyConst::Kind::Float
                           ? PyConst::ofFloat(std::fabs(c.floatValue))
                           : PyConst::ofInt(std::llabs(static_cast<int64_t>(c.number()))),
                       {a}));
      else if (b == "int")
        push(makeConst(PyConst::ofInt(static_cast<int64_t>(std::trunc(c.number()))), {a}));
      else if (b == "float")
        push(makeConst(PyConst::ofFloat(c.number()), {a}));
      else if (args.size() == 1)
        push(makeConst(PyConst::ofInt(static_cast<int64_t>(std::nearbyint(c.number()))), {a}));
      else {
        consume(args[1], loc);
        double scale = std::pow(10.0, args[1]->constant.number());
        push(makeConst(PyConst::ofFloat(std::nearbyint(c.number() * scale) / scale), args));
      }
      return;
    }
    if (b == "next" && args.size() >= 1 && args[0]->kind == K::Iterator) {
      VarPtr it = args[0];
      if (it->position < it->items.size()) {
        push(it->items[it->position++]);
        return;
      }
      if (args.size() > 1) {
        push(args[1]);
        return;
      }
      fail(DiagCode::FrontendPythonError, "StopIteration", f);
    }
    if (b == "getattr" && args.size() >= 2 && args[1]->isConstant()) {
      push(getAttr(f, sir, args[0], args[1]->constant.text));
      return;
    }
    if (b == "slice") {
      while (args.size() < 3)
        args.push_back(makeConst(PyConst::none(), {}));
      if (args.size() == 3 && args[1]->isConstant() &&
          args[1]->constant.kind == PyConst::Kind::None &&
          !(args[0]->isConstant() && args[0]->constant.kind == PyConst::Kind::None))
        std::swap(args[0], args[1]); // slice(stop)
      push(makeSequence(K::Slice, args, args));
      return;
    }
    fail(DiagCode::FrontendUnsupportedCall,
         "builtin " + b + "() with these arguments is not supported", f);
  }
  default:
    break;
  }
  fail(DiagCode::FrontendUnsupportedCall,
       "cannot call a " + callable->typeName() +
           (callable->name.empty() ? "" : " (" + callable->name + ")"),
       f);
}

} // namespace sotc::frontend
