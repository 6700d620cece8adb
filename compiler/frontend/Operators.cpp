//===- Operators.cpp - Python operators, attributes, subscripts, truth and iteration ----===//
//
// Python values fold; tensor operands go through the operator library and become
// statements (Executor::tensorCall).
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"
#include "compiler/ops/LayerTable.h"
#include "compiler/ops/OpTable.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>

namespace sotc::frontend {
namespace {
using K = Variable::Kind;

/// An int argument of a call the frontend makes.
VarPtr intArg(int64_t v) { return makeConst(PyConst::ofInt(v), {}); }
/// A list of them (a permutation; -1 for a reshape to infer).
VarPtr intsArg(const std::vector<int64_t> &v) {
  std::vector<VarPtr> items;
  for (int64_t i : v)
    items.push_back(intArg(i));
  return makeSequence(K::List, items, {});
}
/// A shape as a reshape takes it: each dynamic dimension as the size it is (ops::sizeOfDim).
VarPtr shapeArg(const std::vector<int64_t> &dims) {
  std::vector<int64_t> sizes(dims);
  for (int64_t &d : sizes)
    d = ops::isDynamicDim(d) ? ops::sizeOfDim(d) : d;
  return intsArg(sizes);
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

// math's constants, and the same numbers as torch, paddle and numpy name them (-torch.inf).
const std::map<std::string, double> kMathConstants = {
    {"math.pi", M_PI},     {"math.e", M_E},       {"math.tau", 2 * M_PI},
    {"math.inf", INFINITY}, {"math.nan", NAN},    {"torch.pi", M_PI},
    {"torch.e", M_E},      {"torch.inf", INFINITY}, {"torch.nan", NAN},
    {"paddle.pi", M_PI},   {"paddle.e", M_E},     {"paddle.inf", INFINITY},
    {"paddle.nan", NAN},   {"numpy.pi", M_PI},    {"numpy.e", M_E},
    {"numpy.inf", INFINITY}, {"numpy.nan", NAN}};
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
  case K::Opaque:
    if (v->itemRead)
      fail(DiagCode::FrontendHostInteraction,
           "the " + v->name + " decides a branch of the graph (if, and, or, not), but "
           "here its value is needed ahead of time",
           f);
    return true;
  default:
    return true;
  }
}

std::vector<VarPtr> Executor::iterate(Frame &f, StatementIR &sir, const VarPtr &v) {
  // What a loop may take: its iterations that emit statements are counted as they run
  // (countIteration); the items themselves as many as a loop of Python alone may run.
  const int most = kPythonLoopFactor * options_.maxLoopIterations;
  auto unrollLimit = [&](size_t n, const char *what) {
    if (n > static_cast<size_t>(most))
      fail(DiagCode::FrontendLoopLimit,
           std::string(what) + " of more than " + std::to_string(most) +
               " items cannot be unrolled",
           f);
  };
  switch (v->kind) {
  case K::Tuple:
  case K::List:
    return v->items;
  case K::Iterator: { // what is left of it, which it no longer holds
    std::vector<VarPtr> out;
    while (std::optional<VarPtr> item = nextItem(*running_, sir, v)) {
      out.push_back(*item);
      unrollLimit(out.size(), "a generator");
    }
    return out;
  }
  case K::Dict:
    return v->keys;
  case K::Object:
    if (isRecord(v))
      return recordItems(v)->keys;
    if (v->layer && isLayerDict(v)) { // ModuleDict, LayerDict: their names
      std::vector<VarPtr> names;
      for (const std::string &child : v->children)
        names.push_back(makeConst(PyConst::ofStr(child), {v}));
      return names;
    }
    if (v->layer) // ModuleList, LayerList, Sequential
      return sublayers(f, v);
    // An object of a class with __iter__, or with __getitem__ (CPython's sequence protocol:
    // items 0, 1, ... until IndexError; transformers' per-layer config views).
    if (VarPtr iter = classMember(v, "__iter__", locOf(f)))
      return iterate(f, sir, callNow(*running_, sir, iter, {}, {}));
    if (VarPtr getitem = classMember(v, "__getitem__", locOf(f))) {
      std::vector<VarPtr> out;
      for (int64_t i = 0;; ++i) {
        unrollLimit(static_cast<size_t>(i), "an object");
        try {
          out.push_back(callNow(*running_, sir, getitem, {makeConst(PyConst::ofInt(i), {v})}, {}));
        } catch (const PythonException &e) {
          if (e.exception->exceptionType != "IndexError")
            throw;
          return out;
        }
      }
    }
    break;
  case K::Range: {
    std::vector<VarPtr> out;
    for (int64_t i = v->start; v->step > 0 ? i < v->stop : i > v->stop; i += v->step) {
      out.push_back(makeConst(PyConst::ofInt(i), {v}));
      if (out.size() > static_cast<size_t>(most))
        fail(DiagCode::FrontendLoopLimit,
             "a range longer than " + std::to_string(most) + " cannot be unrolled", f);
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
  case K::Tensor: { // x[0], x[1], ...: unrolled over the static first dimension
    if (v->meta.rank() == 0)
      fail(DiagCode::FrontendPythonError, "TypeError: iteration over a 0-d tensor", f);
    int64_t n = v->meta.shape[0];
    if (ops::isDynamicDim(n))
      fail(DiagCode::FrontendHostInteraction,
           "iterating over a tensor whose first dimension is dynamic needs its size on the host",
           f);
    if (n > options_.maxLoopIterations)
      fail(DiagCode::FrontendLoopLimit,
           "a tensor of " + std::to_string(n) + " rows cannot be unrolled (the limit is " +
               std::to_string(options_.maxLoopIterations) + ")",
           f);
    consume(v, locOf(f));
    std::vector<VarPtr> out;
    for (int64_t i = 0; i < n; ++i)
      out.push_back(getItem(f, sir, v, makeConst(PyConst::ofInt(i), {})));
    return out;
  }
  default:
    break;
  }
  fail(DiagCode::FrontendUnsupportedConstruct, "cannot iterate over a " + v->typeName(), f);
}

VarPtr Executor::unaryOp(Frame &f, StatementIR &sir, const std::string &dunder, VarPtr a) {
  if (anyUnsupported(a))
    return unsupportedResult();
  if (a->isTensor())
    return tensorCall(f, sir, "operator", dunder, dunder, {a}, {});
  if (!a->isConstant() || !a->constant.isNumber())
    fail(DiagCode::FrontendPythonError,
         "TypeError: bad operand type for unary operator: '" + a->typeName() + "'", f);
  const PyConst &c = a->constant;
  PyConst r = c;
  if (dunder == "__neg__")
    r = c.kind == PyConst::Kind::Float ? PyConst::ofFloat(-c.floatValue)
                                       : PyConst::ofInt(-static_cast<int64_t>(c.number()));
  else if (dunder == "__pos__")
    r = c.kind == PyConst::Kind::Bool ? PyConst::ofInt(c.boolValue) : c;
  else if (c.kind != PyConst::Kind::Float)
    r = PyConst::ofInt(~static_cast<int64_t>(c.number()));
  else
    fail(DiagCode::FrontendPythonError, "TypeError: bad operand type for unary ~: 'float'", f);
  return Variable::constant_(r, computedFrom({a}));
}

VarPtr Executor::percentFormat(Frame &f, const VarPtr &format, const VarPtr &values) {
  const std::string &fmt = format->constant.text;
  bool mapping = values->kind == K::Dict;
  std::vector<VarPtr> args = values->kind == K::Tuple && values->name.empty()
                                 ? values->items
                                 : std::vector<VarPtr>{values};
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i == fmt.size())
      fail(DiagCode::FrontendPythonError, "ValueError: incomplete format", f);
    if (fmt[i] == '%') {
      out += '%';
      continue;
    }
    VarPtr value;
    if (fmt[i] == '(') { // %(name)s
      size_t close = fmt.find(')', i);
      if (!mapping || close == std::string::npos)
        fail(DiagCode::FrontendPythonError, "TypeError: format requires a mapping", f);
      std::string key = fmt.substr(i + 1, close - i - 1);
      for (size_t k = 0; k < values->keys.size() && !value; ++k)
        if (values->keys[k]->isConstant() && values->keys[k]->constant.text == key)
          value = values->items[k];
      if (!value)
        fail(DiagCode::FrontendPythonError, "KeyError: '" + key + "'", f);
      i = close + 1;
    }
    size_t specStart = i;
    while (i < fmt.size() && std::strchr("-+ #0", fmt[i]))
      ++i;
    std::string flags = fmt.substr(specStart, i - specStart);
    size_t widthStart = i;
    while (i < fmt.size() && (std::isdigit(static_cast<unsigned char>(fmt[i])) || fmt[i] == '.'))
      ++i;
    std::string widthPrecision = fmt.substr(widthStart, i - widthStart);
    if (i == fmt.size())
      fail(DiagCode::FrontendPythonError, "ValueError: incomplete format", f);
    char type = fmt[i];
    if (!value) {
      if (mapping || next >= args.size())
        fail(DiagCode::FrontendPythonError, "TypeError: not enough arguments for format string", f);
      value = args[next++];
    }
    std::string width = widthPrecision.substr(0, widthPrecision.find('.'));
    std::string precision = widthPrecision.size() > width.size()
                                ? widthPrecision.substr(width.size() + 1)
                                : std::string();
    bool left = flags.find('-') != std::string::npos;
    std::string text;
    if (type == 's' || type == 'r' || type == 'a') {
      text = formatValue(f, value, type == 's' ? 1 : type == 'r' ? 2 : 3, nullptr)->constant.text;
      if (!precision.empty())
        text = text.substr(0, std::stoul(precision));
    } else if (std::strchr("diuxXoeEfFgG", type)) {
      // The numeric part of %-formatting is the f-string spec language's (formatValue).
      std::string spec;
      for (char flag : std::string("+ "))
        if (flags.find(flag) != std::string::npos) {
          spec += flag;
          break;
        }
      if (flags.find('#') != std::string::npos)
        spec += '#';
      if (!left && flags.find('0') != std::string::npos && !width.empty())
        spec += '0' + width;
      if (!precision.empty())
        spec += '.' + precision;
      spec += type == 'i' || type == 'u' ? 'd' : type;
      if (std::strchr("di", spec.back()) && value->isConstant() &&
          value->constant.kind == PyConst::Kind::Float) // %d truncates a float, as Python
        value =
            makeConst(PyConst::ofInt(static_cast<int64_t>(value->constant.floatValue)), {value});
      text = formatValue(f, value, 0, makeConst(PyConst::ofStr(spec), {}))->constant.text;
    } else {
      fail(DiagCode::FrontendUnsupportedConstruct,
           std::string("%-format conversion '%") + type + "' is not supported", f);
    }
    size_t pad = width.empty() ? 0 : std::stoul(width);
    if (text.size() < pad)
      text = left ? text + std::string(pad - text.size(), ' ')
                  : std::string(pad - text.size(), ' ') + text;
    out += text;
  }
  if (!mapping && next < args.size())
    fail(DiagCode::FrontendPythonError,
         "TypeError: not all arguments converted during string formatting", f);
  return makeConst(PyConst::ofStr(out), {format, values});
}

VarPtr Executor::offsetSize(const VarPtr &v, int64_t k, std::vector<VarPtr> from) {
  if (!isSymbolSize(v))
    return nullptr; // B * T - 1: a tensor of the call's value
  int64_t dim;
  try {
    dim = derivedSizes_.offsetDim(v->sizeDim, k);
  } catch (const CodedError &) { // past the sizes sotc compiles: a tensor too
    return nullptr;
  }
  noteDerivedSizes({}, {});
  return makeDynamicSize(dim, std::move(from));
}

VarPtr Executor::sizeTensor(Frame &f, StatementIR &sir, const VarPtr &size) {
  // T - 1 as T's tensor less 1: arange(T - 1) would need T >= 2.
  if (isSymbolSize(size))
    if (ops::SizeOffset d = derivedSizes_.of(ops::symbolOf(size->sizeDim)); d.base != d.symbol)
      return binaryOp(f, sir, "add", false,
                      sizeTensor(f, sir, makeDynamicSize(ops::dynamicDim(d.base), {size})),
                      makeConst(PyConst::ofInt(d.offset), {size}));
  std::string arange = framework_ + ".arange", ones = framework_ + ".ones_like",
              sum = framework_ + ".sum";
  VarPtr positions = tensorCall(f, sir, "api", arange, arange, {size}, {});
  VarPtr each = tensorCall(f, sir, "api", ones, ones, {positions}, {});
  VarPtr value = tensorCall(f, sir, "api", sum, sum, {each}, {});
  value->ofDynamicSize = true;
  return value;
}

VarPtr Executor::binaryOp(Frame &f, StatementIR &sir, const std::string &op, bool inplace, VarPtr a,
                          VarPtr b) {
  if (anyUnsupported(a, b))
    return unsupportedResult();
  SourceLoc loc = locOf(f);
  if (a->isClockReading() || b->isClockReading()) {
    // A compiled program runs no Python between its clock reads: the time between two is
    // none (an NMS's time limit, a timing log), and a reading itself is never a value.
    if (op != "sub" || !a->isClockReading() || !b->isClockReading())
      fail(DiagCode::FrontendHostInteraction,
           "a " + (a->isClockReading() ? a : b)->name +
               " is subtracted from another reading (the time between them, which no Python "
               "code takes in a compiled program) and not otherwise computed with",
           f);
    consume(a, loc);
    consume(b, loc);
    return makeConst(
        a->constant.kind == PyConst::Kind::Int ? PyConst::ofInt(0) : PyConst::ofFloat(0), {a, b});
  }
  // The dynamic size through arithmetic that keeps it (T + 0: transformers' past length).
  auto is = [](const VarPtr &v, int64_t n) { return isInt(v) && v->constant.intValue == n; };
  if (isDynamicSize(a) && ((is(b, 0) && (op == "add" || op == "sub")) ||
                           (is(b, 1) && (op == "mul" || op == "floordiv"))))
    return a;
  if (isDynamicSize(b) && ((is(a, 0) && op == "add") || (is(a, 1) && op == "mul")))
    return b;
  // A size plus or minus a number is a size derived from it (T - 1: x[:, :T - 1]).
  if ((op == "add" || op == "sub") && isDynamicSize(a) && isInt(b))
    if (VarPtr d =
            offsetSize(a, op == "add" ? b->constant.intValue : -b->constant.intValue, {a, b}))
      return d;
  if (op == "add" && isDynamicSize(b) && isInt(a))
    if (VarPtr d = offsetSize(b, a->constant.intValue, {a, b}))
      return d;
  // Products stay sizes (B * T, B * 2: x.view(B * T, C)), as long as a dimension holds them.
  if (op == "mul" && (isDynamicSize(a) || isDynamicSize(b))) {
    auto product = [](const VarPtr &v) -> std::optional<ops::SizeProduct> {
      if (isDynamicSize(v))
        return ops::productOf(v->sizeDim);
      if (isInt(v) && v->constant.intValue > 0)
        return ops::SizeProduct{v->constant.intValue, {}};
      return std::nullopt;
    };
    std::optional<ops::SizeProduct> x = product(a), y = product(b);
    try {
      if (x && y)
        return makeDynamicSize(ops::productDim(*x * *y), {a, b});
    } catch (const CodedError &) { // beyond a dimension: a tensor, as below
    }
  }
  // ... and a whole quotient of one ((B * T) // T, (B * 4) // 2; T // T is 1).
  if (op == "floordiv" && isDynamicSize(a) &&
      (isDynamicSize(b) || (isInt(b) && b->constant.intValue > 0))) {
    ops::SizeProduct divisor =
        isDynamicSize(b) ? ops::productOf(b->sizeDim) : ops::SizeProduct{b->constant.intValue, {}};
    if (std::optional<ops::SizeProduct> q = ops::quotient(ops::productOf(a->sizeDim), divisor))
      return q->dynamic() ? makeDynamicSize(ops::productDim(*q), {a, b})
                          : makeConst(PyConst::ofInt(q->factor), {a, b});
    // T // 2 of a T not known to be even: the call's value, a tensor, which a shape taking it
    // makes a size by taking T as a multiple of 2 (refuseComputedSizes).
    ops::SizeProduct size = ops::productOf(a->sizeDim);
    int64_t times = size.factor;
    size.factor = 1;
    int64_t dim = ops::productDim(size);
    if (isInt(b) && ops::isSymbolDim(dim) &&
        derivedSizes_.of(ops::symbolOf(dim)).base == ops::symbolOf(dim)) {
      VarPtr r = binaryOp(f, sir, op, false, sizeTensor(f, sir, a), b);
      r->quotientOfDim = dim;
      r->quotientBy = b->constant.intValue / std::gcd(times, b->constant.intValue);
      return r;
    }
  }
  // Any other arithmetic of it with a tensor or a number computes on the call's size, a 0-d
  // tensor (x.sum(0) / B, T ** -0.5, B - 1): a tensor, not a Python int, from then on.
  auto number = [](const VarPtr &v) {
    return v->isTensor() || (v->isConstant() && v->constant.isNumber());
  };
  if (isDynamicSize(a) && (number(b) || isDynamicSize(b)))
    return binaryOp(f, sir, op, false, sizeTensor(f, sir, a), b);
  if (isDynamicSize(b) && number(a))
    return binaryOp(f, sir, op, false, a, sizeTensor(f, sir, b));
  if (a->isTensor() || b->isTensor()) {
    VarPtr r;
    if (a->isTensor()) {
      // x @= y without an in-place operator is x = x @ y, as Python falls back.
      std::string dunder = "__i" + op + "__";
      if (!inplace || !ops::OpTable::get().lookup(dunder))
        dunder = "__" + op + "__";
      r = tensorCall(f, sir, "operator", dunder, dunder, {a, b}, {});
    } else {
      std::string dunder = "__r" + op + "__"; // 1 - x -> x.__rsub__(1)
      r = tensorCall(f, sir, "operator", dunder, dunder, {b, a}, {});
    }
    // Arithmetic on a size computed from the dynamic one is one too (B * 2 - 1).
    auto sized = [](const VarPtr &v) { return !v->isTensor() || v->ofDynamicSize; };
    r->ofDynamicSize = r->isTensor() && r->meta.rank() == 0 &&
                       (a->ofDynamicSize || b->ofDynamicSize) && sized(a) && sized(b);
    return r;
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
    if (x.kind == PyConst::Kind::Str && op == "mod")
      return percentFormat(f, a, b);
    if (x.kind == PyConst::Kind::Str && y.kind == PyConst::Kind::Str && op == "add")
      return makeConst(PyConst::ofStr(x.text + y.text), {a, b});
    if (x.kind == PyConst::Kind::Str && y.kind == PyConst::Kind::Int && op == "mul") {
      std::string s;
      for (int64_t i = 0; i < y.intValue; ++i)
        s += x.text;
      return makeConst(PyConst::ofStr(s), {a, b});
    }
  }
  if (a->isConstant() && a->constant.kind == PyConst::Kind::Str && op == "mod") {
    consume(a, loc);
    return percentFormat(f, a, b);
  }
  if (a->kind == K::Dict && b->kind == K::Dict && op == "or") { // a | b: b's items win
    VarPtr d = inplace ? a : Variable::make(K::Dict, computedFrom({a, b}));
    if (!inplace) {
      d->keys = a->keys;
      d->items = a->items;
    }
    for (size_t i = 0; i < b->keys.size(); ++i) {
      auto same = std::find_if(d->keys.begin(), d->keys.end(), [&](const VarPtr &k) {
        return k->isConstant() && b->keys[i]->isConstant() && k->constant == b->keys[i]->constant;
      });
      if (same != d->keys.end()) {
        d->items[same - d->keys.begin()] = b->items[i];
      } else {
        d->keys.push_back(b->keys[i]);
        d->items.push_back(b->items[i]);
      }
    }
    return d;
  }
  if (isSet(a) && isSet(b) && (op == "or" || op == "and" || op == "sub" || op == "xor")) {
    VarPtr r = setAlgebra(op, a, {b->items});
    if (inplace && a->name == "set") { // s |= t changes s
      a->items = r->items;
      return a;
    }
    return r;
  }
  if (a->isSequence() && b->isSequence() && a->kind == b->kind && op == "add" && !isSet(a)) {
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
  for (const VarPtr &v : {a, b}) {
    refuseHostValue(v, f);
    failOnDynamicSize(v, f);
  }
  fail(DiagCode::FrontendPythonError,
       "TypeError: unsupported operand type(s) for " + op + ": '" + a->typeName() + "' and '" +
           b->typeName() + "'",
       f);
}

void Executor::refuseHostValue(const VarPtr &v, const Frame &f) {
  if (v->isHostValue())
    fail(DiagCode::FrontendHostInteraction,
         "computing with the " + v->name + " needs it on the host: " +
             (v->itemRead ? "a number read from a tensor can be compared and decide a branch ahead of "
                            "time, not be computed with (pass --allow-host-callbacks to read it "
                            "between graphs)"
                          : "a host callback's result can be returned, not computed with ahead of "
                            "time"),
         f);
}

namespace {
/// `x op y` for `<`, `<=`, `>`, `>=`, `==`, `!=`.
bool holds(const std::string &op, int64_t x, int64_t y) {
  return op == "<"    ? x < y
         : op == "<=" ? x <= y
         : op == ">"  ? x > y
         : op == ">=" ? x >= y
         : op == "==" ? x == y
                      : x != y;
}

/// The comparison with its operands swapped: `a < b` is `b > a`.
const std::string &mirrored(const std::string &op) {
  static const std::map<std::string, std::string> table = {
      {"<", ">"}, {"<=", ">="}, {"==", "=="}, {"!=", "!="}, {">", "<"}, {">=", "<="}};
  return table.at(op);
}
} // namespace

VarPtr Executor::compareBatchSize(Frame &f, const std::string &op, VarPtr a, VarPtr b) {
  // Dims of one dynamic size are one size (the runtime checks that the inputs agree).
  if (isDynamicSize(a) && isDynamicSize(b) && a->sizeDim == b->sizeDim)
    return makeConst(PyConst::ofBool(op == "==" || op == "<=" || op == ">="), {a, b});
  // A multiple of one size with a number (T as 2*s1 where the program splits it) compares as
  // the size: 2*s1 > 9 is s1 > 4, 2*s1 == 9 never holds.
  if (!isDynamicSize(b) && b->isConstant() && b->constant.kind == PyConst::Kind::Int &&
      isDynamicSize(a) && !isSymbolSize(a)) {
    ops::SizeProduct p = ops::productOf(a->sizeDim);
    int64_t g = p.factor, k = b->constant.intValue;
    p.factor = 1;
    if (ops::isSymbolDim(ops::productDim(p))) {
      int64_t floor = k >= 0 ? k / g : -((-k + g - 1) / g), ceil = floor + (floor * g != k);
      if ((op == "==" || op == "!=") && floor * g != k)
        return makeConst(PyConst::ofBool(op == "!="), {a, b});
      return compareBatchSize(
          f, op, makeDynamicSize(ops::productDim(p), {a}),
          makeConst(PyConst::ofInt(op == "<" || op == ">=" ? ceil : floor), {b}));
    }
  }
  if (!isDynamicSize(a) && isDynamicSize(b) && a->isConstant() &&
      a->constant.kind == PyConst::Kind::Int && !isSymbolSize(b)) {
    return compareBatchSize(f, mirrored(op), b, a); // k < 2*s1  ->  2*s1 > k
  }
  // Guards read one size: a product of them is not decided on.
  for (const VarPtr &v : {a, b})
    if (isDynamicSize(v) && !isSymbolSize(v))
      fail(DiagCode::FrontendHostInteraction,
           "comparing a product of dynamic sizes (" + ops::productOf(v->sizeDim).text() +
               ") is not compiled yet",
           f);
  // Sizes of one base differ by a number (T - 1 < T); a size derived from another is not
  // related to any other size.
  if (isDynamicSize(a) && isDynamicSize(b)) {
    if (std::optional<int64_t> d = derivedSizes_.difference(a->sizeDim, b->sizeDim))
      return makeConst(PyConst::ofBool(holds(op, *d, 0)), {a, b});
    for (const VarPtr &v : {a, b})
      if (int k = ops::symbolOf(v->sizeDim); derivedSizes_.of(k).base != k)
        fail(DiagCode::FrontendHostInteraction,
             "comparing " + symbols_[k].name +
                 " (a size derived from another) with another "
                 "dynamic size is not compiled yet",
             f);
  }
  // Two sizes the inputs named apart: equal or not is decided as equal (one size, guarded);
  // an order between them is not compiled.
  if (isDynamicSize(a) && isDynamicSize(b)) {
    const std::string &x = symbols_[ops::symbolOf(a->sizeDim)].name,
                      &y = symbols_[ops::symbolOf(b->sizeDim)].name;
    if (op == "<" || op == ">")
      fail(DiagCode::FrontendHostInteraction,
           "ordering two dynamic sizes (" + x + " " + op + " " + y + ") is not compiled yet", f);
    throw SizesMet({x, y, locOf(f)}, "comparing two dynamic sizes (" + x + " " + op + " " + y +
                                         ") (" + locOf(f).str() + ")");
  }
  if (!isDynamicSize(a)) // k < B  ->  B > k
    return compareBatchSize(f, mirrored(op), b, a);
  if (!b->isConstant() || b->constant.kind != PyConst::Kind::Int)
    fail(DiagCode::FrontendHostInteraction,
         "comparing a dynamic dimension's size (the batch's) with a " + b->typeName() +
             " is not compiled yet",
         f);
  // T - 1 against k is T against k + 1.
  ops::SizeOffset derived = derivedSizes_.of(ops::symbolOf(a->sizeDim));
  int64_t k = b->constant.intValue - derived.offset;
  int symbol = derived.base;
  int64_t inputMax = symbols_[symbol].inputMax;
  // A comparison every size from 1 to the bound an input gave (?<=N) decides alike.
  if (inputMax > 0) {
    bool settled = (op == "==" || op == "!=") ? (k < 1 || k > inputMax)
                                              : holds(op, 1, k) == holds(op, inputMax, k);
    if (settled)
      return makeConst(PyConst::ofBool(holds(op, 1, k)), {a, b});
  }
  // The outcome that keeps every size but a few, guarded: B == k and B < k are false
  // (B != k, B >= k), B != k and B > k true. Sizes below 1 never run.
  bool holds = op == "!=" || op == ">" || op == ">=";
  bool equality = op == "==" || op == "!=";
  int64_t kept = equality || op == "<" || op == ">=" ? k : k + 1;
  bool restricts = equality ? k >= 1 : op == "<" || op == ">=" ? k > 1 : k >= 1;
  if (restricts)
    guardBatch(equality ? "!=" : ">=", kept, locOf(f), symbol);
  return makeConst(PyConst::ofBool(holds), {a, b});
}

VarPtr Executor::compareItems(Frame &f, StatementIR &sir, const std::string &op, VarPtr a,
                              VarPtr b) {
  // As Python compares the numbers: exactly, so integers in int64 and floats in float64 (a
  // float32 tensor compared in float32 would round the other side).
  for (const VarPtr &v : {a, b})
    if (!v->itemRead && !(v->isConstant() && v->constant.isNumber()))
      refuseHostValue(a->itemRead ? a : b, f);
  auto floating = [](const VarPtr &v) {
    return v->itemRead ? ops::isFloating(v->self->meta.dtype)
                       : v->constant.kind == PyConst::Kind::Float;
  };
  VarPtr dtype = Variable::make(K::External, constTracker());
  dtype->name = framework_ + "." + (floating(a) || floating(b) ? "float64" : "int64");
  auto operand = [&](const VarPtr &v) {
    bool torch = framework_ == "torch";
    return v->itemRead ? tensorCall(f, sir, "method", torch ? "to" : "astype",
                                    torch ? "torch.Tensor.to" : "Tensor.astype", {v->self, dtype}, {})
                       : v;
  };
  static const std::map<std::string, std::string> dunders = {{"<", "__lt__"},  {"<=", "__le__"},
                                                             {"==", "__eq__"}, {"!=", "__ne__"},
                                                             {">", "__gt__"},  {">=", "__ge__"}};
  if (!dunders.count(op))
    refuseHostValue(a->itemRead ? a : b, f);
  VarPtr x = operand(a), y = operand(b);
  if (!x->isTensor()) // 3 < n.item()  ->  n > 3
    return compareItems(f, sir, mirrored(op), b, a);
  return itemRead(tensorCall(f, sir, "operator", dunders.at(op), dunders.at(op), {x, y}, {}));
}

VarPtr Executor::compare(Frame &f, StatementIR &sir, const std::string &op, VarPtr a, VarPtr b) {
  static const std::map<std::string, std::string> dunders = {{"<", "__lt__"},  {"<=", "__le__"},
                                                             {"==", "__eq__"}, {"!=", "__ne__"},
                                                             {">", "__gt__"},  {">=", "__ge__"}};
  SourceLoc loc = locOf(f);
  if (op != "in" && (a->itemRead || b->itemRead))
    return compareItems(f, sir, op, a, b);
  if (op != "in" && (a->isTensor() || b->isTensor())) {
    if (!a->isTensor()) // 0 < x  ->  x > 0
      return compare(f, sir, mirrored(op), b, a);
    return tensorCall(f, sir, "operator", dunders.at(op), dunders.at(op), {a, b}, {});
  }
  if (op == "in") {
    if (b->isTensor() || a->isTensor())
      fail(DiagCode::FrontendHostInteraction, "'in' on a tensor needs its values on the host", f);
    consume(a, loc);
    std::vector<VarPtr> items = b->kind == K::Dict ? b->keys : iterate(f, sir, b);
    consume(b, loc);
    bool found = false;
    for (const VarPtr &i : items)
      found |= (i.get() == a.get()) ||
               (i->isConstant() && a->isConstant() && i->constant == a->constant);
    if (b->isConstant() && b->constant.kind == PyConst::Kind::Str && a->isConstant())
      found = b->constant.text.find(a->constant.text) != std::string::npos;
    return makeConst(PyConst::ofBool(found), {a, b});
  }
  // A size a segment counted (nonzero's rows) is known once that segment ran: compared as a
  // tensor, so a decision on it is a branch whose sides are both compiled.
  if (isCountedSize(a) || isCountedSize(b)) {
    if (!isDynamicSize(a)) // k < n  ->  n > k
      return compare(f, sir, mirrored(op), b, a);
    // g*n against a number, where n counts at most B rows: settled when every value from 0
    // to g*B decides alike (torchvision's `boxes.numel() > 4000` of 40 boxes).
    ops::SizeProduct p = ops::productOf(a->sizeDim);
    int64_t g = p.factor;
    p.factor = 1;
    int64_t n = ops::isSymbolDim(ops::productDim(p)) ? ops::symbolOf(ops::productDim(p)) : -1;
    auto bound = n >= 0 ? producedBounds_.find(static_cast<int>(n)) : producedBounds_.end();
    if (bound != producedBounds_.end() && isInt(b)) {
      int64_t k = b->constant.intValue, most = g * bound->second;
      bool never = k < 0 || k > most || k % g != 0;
      if ((op == "==" || op == "!=") && never)
        return makeConst(PyConst::ofBool(op == "!="), {a, b});
      if (op != "==" && op != "!=" && holds(op, 0, k) == holds(op, most, k))
        return makeConst(PyConst::ofBool(holds(op, 0, k)), {a, b});
    }
    auto value = [&](const VarPtr &v) { return isDynamicSize(v) ? sizeTensor(f, sir, v) : v; };
    return compare(f, sir, op, value(a), value(b));
  }
  if (isDynamicSize(a) || isDynamicSize(b))
    return compareBatchSize(f, op, a, b);
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
    return makeConst(PyConst::ofBool(holds(op, order, 0)), {a, b});
  }
  if (isSet(a) && isSet(b))
    return makeConst(PyConst::ofBool(setCompare(op, a, b)), {a, b});
  if (op == "==" || op == "!=") {
    bool eq = a.get() == b.get();
    if (a->isSequence() && b->isSequence() && a->kind == b->kind &&
        a->items.size() == b->items.size()) {
      eq = true;
      for (size_t i = 0; i < a->items.size(); ++i)
        eq = eq && truthy(f, compare(f, sir, "==", a->items[i], b->items[i]));
    }
    if ((a->kind == K::External || a->kind == K::Module) && a->kind == b->kind)
      eq = a->name == b->name;
    return makeConst(PyConst::ofBool(op == "==" ? eq : !eq), {a, b});
  }
  if (a->kind == b->kind && (a->kind == K::Tuple || a->kind == K::List)) {
    // Python orders sequences by their first items that differ, else by their lengths
    // (`sys.version_info >= (3, 10)`).
    size_t n = std::min(a->items.size(), b->items.size());
    for (size_t i = 0; i < n; ++i)
      if (!truthy(f, compare(f, sir, "==", a->items[i], b->items[i])))
        return compare(f, sir, op, a->items[i], b->items[i]);
    return makeConst(PyConst::ofBool(holds(op, static_cast<int64_t>(a->items.size()),
                                           static_cast<int64_t>(b->items.size()))),
                     {a, b});
  }
  fail(DiagCode::FrontendPythonError,
       "TypeError: '" + op + "' not supported between '" + a->typeName() + "' and '" +
           b->typeName() + "'",
       f);
}

VarPtr Executor::classMember(const VarPtr &receiver, const std::string &name, const SourceLoc &loc,
                             bool *isProperty, int after) {
  using Member = trace::ClassMember;
  consume(receiver, loc); // what its class has depends on which class it is
  const auto &mro = trace_.classes(receiver->classIndex).mro();
  auto from = std::find(mro.begin(), mro.end(), static_cast<uint32_t>(after));
  for (auto it = from == mro.end() ? mro.begin() : from + 1; it != mro.end(); ++it) {
    for (const Member &m : trace_.classes(*it).members()) {
      uint32_t c = *it;
      if (m.name() != name)
        continue;
      if (isProperty)
        *isProperty = m.kind() == Member::PROPERTY;
      VarPtr value = fromTrace(m.value(), constTracker());
      // A function read through an instance is a method of it; a classmethod of its class.
      VarPtr self;
      if (m.kind() == Member::CLASS) {
        self = Variable::make(K::Class, constTracker());
        self->classIndex = static_cast<int>(c);
        self->name = trace_.classes(c).qualname();
      } else if ((m.kind() == Member::PLAIN || m.kind() == Member::PROPERTY) &&
                 (receiver->kind == K::Object || receiver->kind == K::Dict)) {
        self = receiver;
      }
      if (self && value->kind == K::Function) {
        VarPtr bound = Variable::make(K::Function, value->tracker);
        *bound = *value;
        bound->self = self;
        return bound;
      }
      return value;
    }
    const auto &unrecorded = trace_.classes(*it).unrecorded_members();
    if (std::find(unrecorded.begin(), unrecorded.end(), name) != unrecorded.end())
      throw CodedError(DiagCode::FrontendUnsupportedConstruct,
                       trace_.classes(*it).qualname() + "." + name +
                           " was not recorded: no traced code names it, and sotc does not read "
                           "a library's members by names computed at run time (" +
                           loc.str() + ")");
  }
  return nullptr;
}

VarPtr Executor::leafForward(const VarPtr &layer, int leafClass) {
  VarPtr m = Variable::make(K::Method, layer ? computedFrom({layer}) : constTracker());
  m->self = layer;
  m->name = "forward";
  m->classIndex = leafClass;
  return m;
}

int Executor::leafClassOf(int classIndex) const {
  for (uint32_t c : trace_.classes(classIndex).mro())
    if (ops::lookupLayer(trace_.classes(c).library_name()))
      return static_cast<int>(c);
  return -1;
}

VarPtr Executor::makeSuper(Frame &f, const VarPtr &cls, const VarPtr &obj) {
  if (cls->kind != K::Class || obj->classIndex < 0 ||
      (obj->kind != K::Object && obj->kind != K::Dict))
    fail(DiagCode::FrontendUnsupportedConstruct,
         "super() of a " + obj->typeName() + " (only of an object of a traced class)", f);
  VarPtr super = Variable::make(K::Opaque, computedFrom({obj}));
  super->name = "super";
  super->self = obj;
  super->classIndex = cls->classIndex;
  return super;
}

VarPtr Executor::plainGetAttr(Frame &f, StatementIR &sir, const VarPtr &obj,
                              const std::string &name) {
  plainLookup_ = obj.get();
  struct Reset {
    const Variable *&flag;
    ~Reset() { flag = nullptr; }
  } reset{plainLookup_};
  return getAttr(f, sir, obj, name);
}

VarPtr Executor::callFromOperation(StatementIR &sir, const VarPtr &callable,
                                   std::vector<VarPtr> args) {
  size_t depth = running_->frames.size();
  try {
    return callNow(*running_, sir, callable, std::move(args), {});
  } catch (...) {
    while (running_->frames.size() > depth)
      running_->frames.pop_back();
    throw;
  }
}

VarPtr Executor::superAttr(Frame &f, const VarPtr &super, const std::string &name) {
  const VarPtr &obj = super->self;
  const auto &mro = trace_.classes(obj->classIndex).mro();
  auto start = std::find(mro.begin(), mro.end(), static_cast<uint32_t>(super->classIndex));
  if (start == mro.end())
    fail(DiagCode::FrontendPythonError, "TypeError: super(type, obj): obj is not an instance "
                                        "of type",
         f);
  for (auto c = start + 1; c != mro.end(); ++c) {
    const trace::ClassDef &cls = trace_.classes(*c);
    if (std::any_of(cls.members().begin(), cls.members().end(),
                    [&](const trace::ClassMember &m) { return m.name() == name; }))
      return classMember(obj, name, locOf(f), nullptr, super->classIndex);
    if (name == "forward" && ops::lookupLayer(cls.library_name()))
      return leafForward(obj, static_cast<int>(*c));
  }
  if (name == "__init__" && obj->layer && obj->madeHere) { // the framework's bookkeeping
    VarPtr m = Variable::make(K::Builtin, computedFrom({obj}));
    m->name = "Layer.__init__";
    return m;
  }
  if (name == "__getattribute__") { // past the classes that override it: object's
    VarPtr m = Variable::make(K::Builtin, computedFrom({obj}));
    m->name = "object.__getattribute__";
    m->self = obj;
    return m;
  }
  if (obj->kind == K::Dict) { // past the subclass's own classes: dict's method
    VarPtr m = Variable::make(K::Method, computedFrom({obj}));
    m->self = obj;
    m->name = name;
    return m;
  }
  fail(DiagCode::FrontendAttributeError, "'super' object has no attribute '" + name + "'", f);
}

VarPtr Executor::getAttr(Frame &f, StatementIR &sir, VarPtr obj, const std::string &name) {
  if (anyUnsupported(obj))
    return unsupportedResult();
  SourceLoc loc = locOf(f);
  Tracker attr;
  attr.kind = Tracker::Kind::GetAttr;
  attr.parent = obj;
  attr.name = name;
  if (name == "__class__" && obj->kind != K::Module && obj->kind != K::Class) {
    consume(obj, loc); // its type depends on which value it is
    if (obj->kind == K::Object || (obj->kind == K::Dict && obj->classIndex >= 0)) {
      VarPtr cls = Variable::make(K::Class, computedFrom({obj}));
      cls->classIndex = obj->classIndex;
      cls->name = trace_.classes(obj->classIndex).qualname();
      return cls;
    }
    VarPtr type = Variable::make(obj->isTensor() ? K::External : K::Builtin, computedFrom({obj}));
    // An exception object's class is its type (its own name reads "ValueError('rank')").
    type->name = obj->isTensor()                  ? framework_ + ".Tensor"
                 : !obj->exceptionType.empty() ? obj->exceptionType
                                                : obj->typeName();
    return type;
  }
  if (obj->kind == K::Opaque && obj->name == "super" && obj->self)
    return superAttr(f, obj, name);
  // A logger's messages are the Python program's, not the compiled function's: its methods
  // (transformers' warning_once too) do nothing when the artifact runs.
  static const std::set<std::string> loggerMethods = {
      "debug",    "info", "warning",      "warn",      "error",         "exception",
      "critical", "log",  "warning_once", "info_once", "warning_advice"};
  if (obj->kind == K::Opaque && obj->typeName() == "logging.Logger" && loggerMethods.count(name)) {
    VarPtr method = Variable::make(K::External, computedFrom({obj}));
    method->name = "logging.Logger." + name;
    return method;
  }
  if (VarPtr v = autogradAttr(obj, name))
    return v;
  switch (obj->kind) {
  case K::Module:
    // An installed package's module: what the trace recorded of it (pkg.function).
    for (int ns = 0; ns < trace_.namespaces_size(); ++ns)
      if (trace_.namespaces(ns).library() && trace_.namespaces(ns).module() == obj->name)
        for (const trace::NamedValue &g : trace_.namespaces(ns).globals())
          if (g.name() == name)
            return global(ns, name, f);
    [[fallthrough]];
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
    // A complex tensor's pairs: Python sees it without their dimension (ComplexTensors.cpp).
    std::vector<int64_t> shape = obj->meta.shape;
    if (obj->complexPair) {
      shape.pop_back();
      if (name == "dtype") {
        VarPtr v = Variable::make(K::External, computedFrom({obj}));
        v->name = obj->meta.dtype == ops::DType::Float64 ? "torch.complex128" : "torch.complex64";
        return v;
      }
      if (name == "real" || name == "imag")
        return tensorCall(f, sir, "api", "torch." + name, "torch." + name, {obj}, {});
    }
    if (name == "shape") {
      // A dynamic dimension's size is known at run time only: a value that may be carried
      // (x.shape[-1] and unpacking read the others) but not computed with (kDynamicSize).
      std::vector<VarPtr> dims;
      for (int64_t d : shape) {
        if (!ops::isDynamicDim(d)) {
          dims.push_back(makeConst(PyConst::ofInt(d), {obj}));
          continue;
        }
        dims.push_back(makeDynamicSize(d, {obj}));
      }
      return makeSequence(framework_ == "torch" ? K::Tuple : K::List, dims, {obj});
    }
    if (name == "ndim")
      return makeConst(PyConst::ofInt(static_cast<int64_t>(shape.size())), {obj});
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
    // torch's attributes that are not methods: a bound method in their place would be true
    // in an `if` (x.is_cuda, x.requires_grad). x.data is x (the same storage, no gradient).
    if (framework_ == "torch") {
      if (name == "data")
        return obj;
      if (name == "requires_grad")
        return makeConst(PyConst::ofBool(!obj->stopGradient), {obj});
      if (name == "is_leaf")
        return makeConst(PyConst::ofBool(true), {obj});
      if (name == "grad")
        return makeConst(PyConst::none(), {obj});
      if (name == "is_cuda" || name == "is_sparse" || name == "is_quantized" ||
          name == "is_meta" || name == "is_nested")
        return makeConst(PyConst::ofBool(false), {obj}); // as the traced CPU tensors
    }
    // Where a tensor lives is where the artifact runs: creation calls take it and ignore it.
    if ((name == "device" && framework_ == "torch") || (name == "place" && framework_ == "paddle")) {
      VarPtr v = Variable::make(K::External, computedFrom({obj}));
      v->name = name;
      return v;
    }
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
  case K::Dict: {
    if (obj->attributes) // a dict subclass's instance attributes, then its class's members
      for (size_t i = 0; i < obj->attributes->keys.size(); ++i)
        if (obj->attributes->keys[i]->constant.text == name)
          return obj->attributes->items[i];
    if (obj->classIndex >= 0)
      if (VarPtr member = classMember(obj, name, loc))
        return member;
    // Only dict's own methods: any other name is an AttributeError, not a method of that name
    // (a FrozenDict's config.center_input_sample read as a bound method was true).
    static const std::set<std::string> dictMethods = {
        "get", "items", "keys", "values", "pop", "popitem", "update", "setdefault", "copy",
        "clear", "fromkeys", "__getitem__", "__contains__", "__len__", "__iter__", "move_to_end"};
    if (!dictMethods.count(name))
      break;
    VarPtr m = Variable::make(K::Method, computedFrom({obj}));
    m->self = obj;
    m->name = name;
    return m;
  }
  case K::Constant:
  case K::List:
  case K::Tuple: {
    // None has no attributes a program reads (hasattr(cache, "is_sliding") with no cache).
    if (obj->isConstant() && obj->constant.kind == PyConst::Kind::None)
      break;
    // A named tuple's field (torch.max(x, 1).values).
    auto field = std::find(obj->fields.begin(), obj->fields.end(), name);
    if (field != obj->fields.end())
      return obj->items[field - obj->fields.begin()];
    // The type's own methods only: another name is an AttributeError (hasattr says False),
    // never a bound method that is true in an `if`.
    static const std::set<std::string> listMethods = {
        "append", "extend", "insert", "remove", "pop", "clear", "index", "count", "sort",
        "reverse", "copy", "__getitem__", "__len__", "__contains__", "__iter__"};
    static const std::set<std::string> strMethods = {
        "capitalize", "casefold",  "center",       "count",      "encode",     "endswith",
        "expandtabs", "find",      "format",       "format_map", "index",      "isalnum",
        "isalpha",    "isascii",   "isdecimal",    "isdigit",    "isidentifier", "islower",
        "isnumeric",  "isprintable", "isspace",    "istitle",    "isupper",    "join",
        "ljust",      "lower",     "lstrip",       "partition",  "removeprefix", "removesuffix",
        "replace",    "rfind",     "rindex",       "rjust",      "rpartition", "rsplit",
        "rstrip",     "split",     "splitlines",   "startswith", "strip",      "swapcase",
        "title",      "translate", "upper",        "zfill",      "__len__",    "__contains__",
        "__getitem__", "__iter__", "__format__"};
    static const std::set<std::string> numberMethods = {
        "bit_length", "to_bytes",  "conjugate", "is_integer", "as_integer_ratio", "hex",
        "__index__",  "__float__", "__int__",   "__bool__",   "__format__"};
    static const std::set<std::string> tupleMethods = {"index", "count", "__getitem__",
                                                       "__len__", "__contains__", "__iter__"};
    static const std::set<std::string> setMethods = {
        "add",          "clear",        "copy",      "difference", "difference_update", "discard",
        "intersection", "intersection_update",       "isdisjoint", "issubset",          "issuperset",
        "remove",       "symmetric_difference",    "symmetric_difference_update",
        "union",        "update",       "__len__",   "__contains__", "__iter__"};
    bool text = obj->isConstant() && obj->constant.kind == PyConst::Kind::Str;
    const std::set<std::string> &methods = isSet(obj)             ? setMethods
                                           : obj->kind == K::Tuple ? tupleMethods
                                           : obj->kind == K::List ? listMethods
                                           : text                 ? strMethods
                                                                  : numberMethods;
    if (!methods.count(name))
      break;
    VarPtr m = Variable::make(K::Method, computedFrom({obj}));
    m->self = obj;
    m->name = name;
    return m;
  }
  case K::Method:
    if ((name == "__func__" || name == "__self__") && obj->self && obj->classIndex >= 0) {
      if (name == "__self__") // a layer-table leaf's bound forward (leafForward)
        return obj->self;
      return leafForward(nullptr, obj->classIndex);
    }
    break;
  case K::Function:
    if ((name == "__func__" || name == "__self__") && obj->self) { // a bound method's parts
      if (name == "__self__")
        return obj->self;
      VarPtr function = Variable::make(K::Function, computedFrom({obj}));
      *function = *obj;
      function->tracker = computedFrom({obj});
      function->self = nullptr;
      return function;
    }
    if (name == "__name__")
      return makeConst(PyConst::ofStr(trace_.code_objects(obj->codeIndex).name()), {obj});
    if (name == "__qualname__")
      return makeConst(PyConst::ofStr(obj->name), {obj});
    if (name == "__module__" && obj->namespaceIndex >= 0)
      return makeConst(PyConst::ofStr(trace_.namespaces(obj->namespaceIndex).module()), {obj});
    if (name == "__code__") { // what decorators read of the signature (co_varnames)
      const trace::CodeObject &code = trace_.code_objects(obj->codeIndex);
      auto num = [&](int64_t v) { return makeConst(PyConst::ofInt(v), {obj}); };
      auto str = [&](const std::string &v) { return makeConst(PyConst::ofStr(v), {obj}); };
      std::vector<VarPtr> varnames;
      for (const std::string &v : code.varnames())
        varnames.push_back(str(v));
      VarPtr c = makeSequence(K::Tuple,
                              {str(code.name()), str(code.qualname()), str(code.filename()),
                               num(code.firstlineno()), num(code.argcount()),
                               num(code.posonlyargcount()), num(code.kwonlyargcount()),
                               num(code.flags()), makeSequence(K::Tuple, varnames, {obj})},
                              {obj});
      c->name = "code";
      c->fields = {"co_name",           "co_qualname", "co_filename",
                   "co_firstlineno",    "co_argcount", "co_posonlyargcount",
                   "co_kwonlyargcount", "co_flags",    "co_varnames"};
      return c;
    }
    break;
  case K::Object:
    // A class that overrides __getattribute__ (transformers' configs map names through their
    // attribute_map) sees every read of its objects' attributes.
    if (plainLookup_ == obj.get()) {
      plainLookup_ = nullptr;
    } else if (!obj->layer && !isRecord(obj) && running_) {
      VarPtr hook = classMember(obj, "__getattribute__", loc);
      if (hook && hook->kind == K::Function)
        return callFromOperation(sir, hook, {makeConst(PyConst::ofStr(name), {})});
    }
    if (name == "__dict__" && !obj->layer) { // its attributes, as they are now
      VarPtr dict = Variable::make(K::Dict, computedFrom({obj}));
      dict->keys = obj->keys;
      dict->items = obj->items;
      return dict;
    }
    for (size_t i = 0; i < obj->keys.size(); ++i)
      if (obj->keys[i]->constant.text == name) {
        const VarPtr &value = obj->items[i];
        if (value->kind == K::Opaque && (value->name.find("Tensor") != std::string::npos ||
                                         value->name.find("ndarray") != std::string::npos))
          fail(DiagCode::FrontendUnsupportedConstruct,
               "a tensor held in an object's attribute (." + name +
                   ") is not an input yet: pass it as an argument",
               f);
        return value;
      }
    [[fallthrough]];
  case K::Class: {
    // (an object's __module__ is its class's: torchvision's _log_api_usage_once(self))
    if ((obj->kind == K::Class && (name == "__name__" || name == "__qualname__" ||
                                   name == "__module__" || name == "__mro__")) ||
        (obj->kind == K::Object && obj->classIndex >= 0 && name == "__module__")) {
      const trace::ClassDef &cls = trace_.classes(obj->classIndex);
      const std::string &qualname = cls.qualname();
      if (name == "__mro__") { // the recorded classes, then `object`
        std::vector<VarPtr> mro;
        for (uint32_t c : cls.mro()) {
          VarPtr base = Variable::make(K::Class, computedFrom({obj}));
          base->classIndex = static_cast<int>(c);
          base->name = trace_.classes(c).qualname();
          mro.push_back(base);
        }
        VarPtr object = Variable::make(K::Builtin, constTracker());
        object->name = "object";
        mro.push_back(object);
        return makeSequence(K::Tuple, mro, {obj});
      }
      std::string text = name == "__module__"   ? cls.module()
                         : name == "__qualname__" ? qualname
                                                  : qualname.substr(qualname.rfind('.') + 1);
      return makeConst(PyConst::ofStr(text), {obj});
    }
    bool property = false;
    VarPtr member = classMember(obj, name, locOf(f), &property);
    if (property && obj->kind == K::Object && running_) // the getter, run now
      return callFromOperation(sir, member, {});
    if (property)
      fail(DiagCode::FrontendUnsupportedConstruct,
           "the property ." + name + " read here is not supported", f);
    if (member)
      return member;
    // A layer-table leaf's forward: bound to the layer, or, read from the class, unbound
    // (nn.LayerNorm.forward(self, x)); either runs the leaf's table entry.
    if (name == "forward" && (obj->kind == K::Class || obj->layer))
      if (int leaf = leafClassOf(obj->classIndex); leaf >= 0)
        return leafForward(obj->kind == K::Class ? nullptr : obj, leaf);
    if (VarPtr method = isRecord(obj) ? recordMethod(obj, name) : nullptr)
      return method;
    // ModuleDict.items() and the like, and any layer's children() and named_children()
    // (timm's stages iterate `self.children()`): a dict of the layer's names and sublayers
    // answers, as its values() and items().
    bool dictMethod = name == "items" || name == "keys" || name == "values";
    bool childMethod = name == "children" || name == "named_children";
    if (obj->kind == K::Object && obj->layer && ((dictMethod && isLayerDict(obj)) || childMethod)) {
      VarPtr dict = Variable::make(K::Dict, computedFrom({obj}));
      for (const std::string &child : obj->children)
        dict->keys.push_back(makeConst(PyConst::ofStr(child), {obj}));
      dict->items = childLayers(obj);
      VarPtr m = Variable::make(K::Method, computedFrom({dict}));
      m->self = dict;
      m->name = name == "children" ? "values" : name == "named_children" ? "items" : name;
      return m;
    }
    static const std::set<std::string> walks = {"modules", "named_modules", "parameters",
                                                "named_parameters", "buffers", "named_buffers"};
    if (obj->kind == K::Object && obj->layer && walks.count(name)) {
      // A generator in torch (next(self.parameters()) reads the first): iter() of the walk.
      VarPtr dict = layerWalk(obj, name);
      std::vector<VarPtr> items = dict->items;
      if (name.rfind("named_", 0) == 0)
        for (size_t i = 0; i < items.size(); ++i)
          items[i] = makeSequence(K::Tuple, {dict->keys[i], dict->items[i]}, {obj});
      VarPtr iter = Variable::make(K::Builtin, constTracker());
      iter->name = "iter";
      return makePartial(iter, {makeSequence(K::List, items, {obj})}, {}, computedFrom({obj}));
    }
    break;
  }
  case K::Builtin:
    if (name == "__name__" || name == "__qualname__")
      return makeConst(PyConst::ofStr(obj->name), {obj});
    if (obj->name == "object" && name == "__getattribute__") { // object.__getattribute__(o, n)
      VarPtr v = Variable::make(K::Builtin, constTracker());
      v->name = "object.__getattribute__";
      return v;
    }
    if (obj->name == "dict" && name == "fromkeys") { // a builtin of its own (CallsBuiltins.cpp)
      VarPtr v = Variable::make(K::Builtin, constTracker());
      v->name = "dict.fromkeys";
      return v;
    }
    break;
  default:
    break;
  }
  fail(DiagCode::FrontendAttributeError,
       "cannot read attribute '" + name + "' of a " + obj->typeName(), f);
}

std::array<int64_t, 3> Executor::sliceBounds(Frame &f, const VarPtr &key, int64_t n) {
  auto given = [&](int i) {
    const VarPtr &p = key->items[i];
    return !(p->isConstant() && p->constant.kind == PyConst::Kind::None);
  };
  auto part = [&](int i, int64_t dflt) {
    const VarPtr &p = key->items[i];
    if (!given(i))
      return dflt;
    if (!isInt(p))
      fail(DiagCode::FrontendPythonError,
           "TypeError: slice indices must be integers or None, not " + p->typeName(), f);
    return p->constant.intValue;
  };
  int64_t step = part(2, 1);
  if (step == 0)
    fail(DiagCode::FrontendPythonError, "ValueError: slice step cannot be zero", f);
  // CPython's slice.indices: a negative step runs from the end down to before the start
  // (its stop may be -1, before element 0).
  int64_t low = step < 0 ? -1 : 0, high = step < 0 ? n - 1 : n;
  auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i < 0 ? i + n : i, low), high); };
  return {given(0) ? clamp(part(0, 0)) : step < 0 ? n - 1 : 0,
          given(1) ? clamp(part(1, 0)) : step < 0 ? -1 : n, step};
}

/// How many items sliceBounds' (start, stop, step) selects.
static int64_t sliceLength(const std::array<int64_t, 3> &bounds) {
  auto [start, stop, step] = bounds;
  return step > 0 ? std::max<int64_t>(0, (stop - start + step - 1) / step)
                  : std::max<int64_t>(0, (start - stop - step - 1) / -step);
}

void Executor::setItem(ExecState &state, StatementIR &sir, const VarPtr &obj, const VarPtr &key,
                       const VarPtr &value) {
  Frame &f = state.frames.back();
  SourceLoc loc = locOf(f);
  if (obj->kind == K::List && key->isConstant() && key->constant.kind == PyConst::Kind::Int) {
    int64_t i = key->constant.intValue, n = static_cast<int64_t>(obj->items.size());
    if (i < 0)
      i += n;
    if (i < 0 || i >= n)
      fail(DiagCode::FrontendPythonError, "IndexError: list assignment index out of range", f);
    consume(key, loc);
    obj->items[i] = value;
  } else if (obj->kind == K::List && key->kind == K::Slice) {
    consume(key, loc);
    std::array<int64_t, 3> bounds = sliceBounds(f, key, static_cast<int64_t>(obj->items.size()));
    auto [start, stop, step] = bounds;
    std::vector<VarPtr> values = iterate(f, sir, value);
    if (step == 1) {
      obj->items.erase(obj->items.begin() + start, obj->items.begin() + std::max(start, stop));
      obj->items.insert(obj->items.begin() + start, values.begin(), values.end());
    } else {
      size_t count = static_cast<size_t>(sliceLength(bounds));
      if (values.size() != count)
        fail(DiagCode::FrontendPythonError,
             "ValueError: attempt to assign sequence of size " + std::to_string(values.size()) +
                 " to extended slice of size " + std::to_string(count),
             f);
      for (size_t k = 0; k < count; ++k)
        obj->items[start + k * step] = values[k];
    }
  } else if (obj->kind == K::Dict && key->isConstant()) {
    consume(key, loc);
    size_t i = 0;
    while (i < obj->keys.size() &&
           !(obj->keys[i]->isConstant() && obj->keys[i]->constant == key->constant))
      ++i;
    if (i == obj->keys.size()) {
      obj->keys.push_back(key);
      obj->items.push_back(value);
    } else {
      obj->items[i] = value;
    }
  } else if (isRecord(obj) && key->isConstant() && key->constant.kind == PyConst::Kind::Str) {
    consume(key, loc); // record["name"] = v sets the field
    auto field = std::find_if(obj->keys.begin(), obj->keys.end(), [&](const VarPtr &k) {
      return k->constant.text == key->constant.text;
    });
    if (field == obj->keys.end())
      fail(DiagCode::FrontendUnsupportedConstruct,
           "setting '" + key->constant.text + "', not a field of " + obj->typeName(), f);
    obj->items[field - obj->keys.begin()] = value;
  } else if (obj->isTensor()) {
    if (viewed(state, obj))
      fail(DiagCode::FrontendUnsupportedConstruct,
           "assigning into a tensor a view of it still refers to (t = x[...]; x[...] = v "
           "changes t in the framework): not supported",
           f);
    // A view made by base[k] (t = base[0]; t[..., i] = v) writes base too: base takes the
    // updated view at k, and the view is read from it again.
    bool throughIndex = obj->viewOf && obj->viewKey && !obj->viewOf->viewOf &&
                        !viewed(state, obj->viewOf, obj);
    if (obj->viewOf && !throughIndex)
      fail(DiagCode::FrontendUnsupportedConstruct,
           "assigning into a view of another tensor that is itself a view, or that other views "
           "share (x[i][j] = v, or t = x[...]; t[...] = v with more views of x) would write "
           "them too: assign through one index of the original",
           f);
    VarPtr updated = tensorSetItem(f, sir, obj, key, value);
    if (!throughIndex)
      return replaceEverywhere(state, obj, updated);
    VarPtr base = obj->viewOf, viewKey = obj->viewKey;
    VarPtr written = tensorSetItem(f, sir, base, viewKey, updated);
    replaceEverywhere(state, base, written);
    replaceEverywhere(state, obj, getItem(f, sir, written, viewKey));
  } else {
    fail(DiagCode::FrontendUnsupportedConstruct,
         "item assignment on a " + obj->typeName() + " is not supported", f);
  }
}

void Executor::deleteItem(Frame &f, const VarPtr &obj, const VarPtr &key) {
  SourceLoc loc = locOf(f);
  consume(key, loc);
  if (obj->kind == K::Dict) {
    for (size_t i = 0; i < obj->keys.size(); ++i)
      if (obj->keys[i]->isConstant() && key->isConstant() &&
          obj->keys[i]->constant == key->constant) {
        obj->keys.erase(obj->keys.begin() + i);
        obj->items.erase(obj->items.begin() + i);
        return;
      }
    fail(DiagCode::FrontendPythonError, "KeyError: " + key->repr(), f);
  } else if (obj->kind == K::List && key->isConstant()) {
    int64_t i = key->constant.intValue, n = static_cast<int64_t>(obj->items.size());
    if (i < 0)
      i += n;
    if (i < 0 || i >= n)
      fail(DiagCode::FrontendPythonError, "IndexError: list assignment index out of range", f);
    obj->items.erase(obj->items.begin() + i);
  } else {
    fail(DiagCode::FrontendUnsupportedConstruct, "del on a " + obj->typeName() + " item", f);
  }
}

VarPtr Executor::identical(Frame &f, const VarPtr &a, const VarPtr &b, bool negate) {
  // One function or class may be several variables (read from its class, taken from a bound
  // method's __func__, type(x)): the same code, closure cells and defaults are the same
  // function; the same recorded class or builtin type is the same class. A bound method is
  // made anew at each read (`obj.f is obj.f` is False), so only unbound ones compare.
  auto sameObject = [&] {
    if (a->kind != b->kind || a->self || b->self)
      return false;
    if (a->kind == K::Function && a->functionIndex >= 0 && b->functionIndex >= 0)
      return a->functionIndex == b->functionIndex;
    if (a->kind == K::Function)
      return a->codeIndex == b->codeIndex && a->closure == b->closure &&
             a->defaults == b->defaults && a->kwdefaults == b->kwdefaults;
    if (a->kind == K::Class)
      return a->classIndex == b->classIndex;
    if (a->kind == K::Method) // a layer-table leaf's forward, read from its class
      return a->classIndex >= 0 && a->classIndex == b->classIndex && a->name == b->name;
    return a->kind == K::Builtin && a->name == b->name;
  };
  for (const VarPtr &v : {a, b})
    if (v->itemRead && a.get() != b.get())
      fail(DiagCode::FrontendHostInteraction,
           "'is' on the " + v->name + " needs its value on the host (it can decide a branch: "
           "if, and, or, not)",
           f);
  bool same = a.get() == b.get() ||
              (a->isConstant() && b->isConstant() && a->constant.kind == b->constant.kind &&
               (a->constant.kind == PyConst::Kind::None ||
                (a->constant.kind == PyConst::Kind::Bool && a->constant == b->constant))) ||
              sameObject();
  consume(a, locOf(f));
  consume(b, locOf(f));
  return Variable::constant_(PyConst::ofBool(negate ? !same : same), computedFrom({a, b}));
}

VarPtr Executor::indexRows(Frame &f, StatementIR &sir, const VarPtr &x, const VarPtr &index) {
  // x[index]: the rows the integer tensor names, of shape index.shape + x.shape[1:]; an
  // index_select of the flattened index, reshaped.
  bool torch = framework_ == "torch";
  std::string reshape = torch ? "torch.reshape" : "paddle.reshape";
  VarPtr flat = index->meta.rank() == 1
                    ? index
                    : tensorCall(f, sir, "api", reshape, reshape, {index, intsArg({-1})}, {});
  VarPtr rows = torch ? tensorCall(f, sir, "api", "torch.index_select", "torch.index_select",
                                   {x, intArg(0), flat}, {})
                      : tensorCall(f, sir, "api", "paddle.index_select", "paddle.index_select",
                                   {x, flat, intArg(0)}, {});
  if (index->meta.rank() == 1)
    return rows;
  std::vector<int64_t> shape = index->meta.shape;
  shape.insert(shape.end(), x->meta.shape.begin() + 1, x->meta.shape.end());
  return tensorCall(f, sir, "api", reshape, reshape, {rows, shapeArg(shape)}, {});
}

VarPtr Executor::indexPoints(Frame &f, StatementIR &sir, const VarPtr &x,
                             const std::vector<VarPtr> &indices) {
  // x[i, j, ...] with integer tensors (or ints) for x's leading dimensions: they broadcast to
  // one shape S, and name elements of those dimensions by their linear index (each wrapped
  // as Python wraps a negative one), whose rows the flattened x gives: S + x.shape[k:].
  std::vector<int64_t> lead(x->meta.shape.begin(), x->meta.shape.begin() + indices.size());
  std::vector<int64_t> rest(x->meta.shape.begin() + indices.size(), x->meta.shape.end());
  if (VarPtr rows = indexBatchRows(f, sir, x, indices))
    return rows;
  if (std::any_of(lead.begin(), lead.end(), ops::isDynamicDim))
    fail(DiagCode::FrontendUnsupportedConstruct,
         "indexing a dynamic dimension with a tensor is not supported yet", f);
  VarPtr linear;
  int64_t stride = 1;
  for (size_t m = indices.size(); m-- > 0;) {
    consume(indices[m], locOf(f));
    VarPtr wrapped = indices[m]->isTensor()
                         ? tensorCall(f, sir, "api", framework_ + ".remainder",
                                      framework_ + ".remainder", {indices[m], intArg(lead[m])}, {})
                         : intArg((indices[m]->constant.intValue % lead[m] + lead[m]) % lead[m]);
    VarPtr term = stride == 1 ? wrapped : binaryOp(f, sir, "mul", false, wrapped, intArg(stride));
    linear = linear ? binaryOp(f, sir, "add", false, term, linear) : term;
    stride *= lead[m];
  }
  std::vector<int64_t> flatShape = {stride};
  flatShape.insert(flatShape.end(), rest.begin(), rest.end());
  std::string reshape = framework_ + ".reshape";
  VarPtr flat = tensorCall(f, sir, "api", reshape, reshape, {x, shapeArg(flatShape)}, {});
  return indexRows(f, sir, flat, linear);
}

VarPtr Executor::indexBatchRows(Frame &f, StatementIR &sir, const VarPtr &x,
                                const std::vector<VarPtr> &indices) {
  // x[b, i, ...] where x's dynamic batch is indexed by its own coordinates (b an arange(B)
  // with dims of one, transformers' mask functions): each batch row reads only itself. With
  // the batch moved last, the other indices pick from every row at once; the batch then goes
  // where b has it in the broadcast result.
  auto ownCoordinates = [&](size_t k) { // an iota of x's dim k, dims of one elsewhere
    const VarPtr &i = indices[k];
    return ops::isDynamicDim(x->meta.shape[k]) && i->isTensor() && i->batchIota &&
           std::count(i->meta.shape.begin(), i->meta.shape.end(), x->meta.shape[k]) == 1;
  };
  // Every index the own coordinates of its dimension, at distinct places (arange(B)[:, None]
  // and arange(T)[None, :], transformers' packed_sequence_mask[batch_idx, q_idx]): x itself,
  // its dims moved to those places (a transpose and a reshape).
  size_t broadcast = 0;                          // the indices' broadcast rank
  std::vector<std::pair<size_t, size_t>> places; // (place in the broadcast shape, dim of x)
  for (size_t k = 0; k < indices.size() && ownCoordinates(k); ++k) {
    const std::vector<int64_t> &shape = indices[k]->meta.shape;
    broadcast = std::max(broadcast, shape.size());
    places.push_back(
        {shape.size() - (std::find(shape.begin(), shape.end(), x->meta.shape[k]) - shape.begin()),
         k});
  }
  if (places.size() == indices.size() && places.size() > 1) {
    for (auto &[place, k] : places) // counted from the right: as broadcasting aligns
      place = broadcast - place;
    std::sort(places.begin(), places.end());
    std::set<size_t> at;
    std::set<int64_t> sizes; // each a size of its own: reshape names them apart
    for (auto &[place, k] : places)
      at.insert(place), sizes.insert(x->meta.shape[k]);
    bool distinct = at.size() == places.size() && sizes.size() == places.size();
    if (distinct) {
      std::vector<int64_t> perm, shape(broadcast, 1);
      for (auto &[place, k] : places) {
        perm.push_back(static_cast<int64_t>(k));
        shape[place] = x->meta.shape[k];
      }
      for (size_t k = indices.size(); k < x->meta.shape.size(); ++k) {
        perm.push_back(static_cast<int64_t>(k));
        shape.push_back(x->meta.shape[k]);
      }
      std::string transpose = framework_ == "torch" ? "torch.permute" : "paddle.transpose",
                  reshape = framework_ + ".reshape";
      VarPtr moved = tensorCall(f, sir, "api", transpose, transpose, {x, intsArg(perm)}, {});
      return tensorCall(f, sir, "api", reshape, reshape, {moved, shapeArg(shape)}, {});
    }
  }
  size_t d = 0;
  while (d < indices.size() &&
         !(ops::isDynamicDim(x->meta.shape[d]) && indices[d]->isTensor() && indices[d]->batchIota))
    ++d;
  if (d == indices.size())
    return nullptr;
  int64_t batch = x->meta.shape[d]; // the dynamic size b indexes
  const std::vector<int64_t> &iotaShape = indices[d]->meta.shape;
  if (std::find(iotaShape.begin(), iotaShape.end(), batch) == iotaShape.end())
    return nullptr;
  const std::vector<int64_t> &iota = indices[d]->meta.shape;
  std::vector<VarPtr> others;
  size_t rank = iota.size();
  bool tensors = false;
  for (size_t m = 0; m < indices.size(); ++m)
    if (m != d) {
      if (indices[m]->isTensor() && indices[m]->meta.numElements() == ops::kDynamic)
        return nullptr;
      others.push_back(indices[m]);
      tensors |= indices[m]->isTensor();
      if (indices[m]->isTensor())
        rank = std::max(rank, indices[m]->meta.shape.size());
    }
  if (!others.empty() && !tensors) // x[b, 0]: not of this form
    return nullptr;
  std::string transpose = framework_ == "torch" ? "torch.permute" : "paddle.transpose";
  std::vector<int64_t> perm;
  for (size_t k = 0; k < x->meta.shape.size(); ++k)
    if (k != d)
      perm.push_back(static_cast<int64_t>(k));
  perm.push_back(static_cast<int64_t>(d));
  VarPtr moved = tensorCall(f, sir, "api", transpose, transpose, {x, intsArg(perm)}, {});
  VarPtr picked = others.empty() ? moved : indexPoints(f, sir, moved, others);
  // picked: the others' broadcast shape + x's dims after the indexed ones + [B]. The result:
  // the indices' broadcast shape, whose batch dim is b's (the others have 1 there), + the rest.
  std::vector<int64_t> shape = picked->meta.shape;
  size_t restRank = x->meta.shape.size() - indices.size();
  size_t broadcastRank = shape.size() - 1 - restRank;
  shape.pop_back();
  shape.insert(shape.begin(), rank - broadcastRank, 1);
  size_t p = rank - iota.size() + (std::find(iota.begin(), iota.end(), batch) - iota.begin());
  if (shape[p] != 1)
    return nullptr;
  shape[p] = batch;
  std::string reshape = framework_ + ".reshape";
  // [others..., rest..., B] -> [others with 1 at p..., rest..., B] -> batch moved to p.
  std::vector<int64_t> padded = shape;
  padded[p] = 1;
  padded.push_back(batch);
  VarPtr aligned = tensorCall(f, sir, "api", reshape, reshape, {picked, shapeArg(padded)}, {});
  std::vector<int64_t> toP;
  for (size_t k = 0; k < padded.size() - 1; ++k) {
    if (k == p)
      toP.push_back(static_cast<int64_t>(padded.size() - 1));
    toP.push_back(static_cast<int64_t>(k));
  }
  VarPtr placed = tensorCall(f, sir, "api", transpose, transpose, {aligned, intsArg(toP)}, {});
  return tensorCall(f, sir, "api", reshape, reshape, {placed, shapeArg(shape)}, {});
}

VarPtr Executor::getItem(Frame &f, StatementIR &sir, VarPtr obj, VarPtr key) {
  if (anyUnsupported(obj, key))
    return unsupportedResult();
  SourceLoc loc = locOf(f);
  if (obj->isTensor()) {
    if (key->isTensor() && ops::isIntegral(key->meta.dtype) && obj->meta.rank() >= 1)
      return indexRows(f, sir, obj, key);
    // x[i, j]: integer tensors and ints for the leading dimensions, at least one a tensor.
    auto pointIndex = [](const VarPtr &k) {
      return (k->isTensor() && ops::isIntegral(k->meta.dtype)) || isInt(k);
    };
    if (key->kind == K::Tuple && !key->items.empty() && key->items.size() <= obj->meta.rank() &&
        std::all_of(key->items.begin(), key->items.end(), pointIndex) &&
        std::any_of(key->items.begin(), key->items.end(), [](auto &k) { return k->isTensor(); }))
      return indexPoints(f, sir, obj, key->items);
    // x[:, :, i, j, :]: full slices around one run of such indices (LeViT's attention biases
    // x[:, idx]): the run's dimensions moved first, indexed as above, and the indices' shape
    // put back where the run was, as numpy places it.
    auto fullSlice = [](const VarPtr &k) {
      return k->kind == K::Slice && std::all_of(k->items.begin(), k->items.end(), [](auto &p) {
               return p->isConstant() && p->constant.kind == PyConst::Kind::None;
             });
    };
    // Tensor indices among slices and `...`: `...` written out as full slices, and the
    // slices that are not full applied first (a slice keeps its dimension, so the tensor
    // indices still index the same ones): x[..., 1:, idx] is x[:, 1:, :][..., idx].
    bool advanced = key->kind == K::Tuple &&
                    std::any_of(key->items.begin(), key->items.end(), [](const VarPtr &k) {
                      return k->isTensor() && ops::isIntegral(k->meta.dtype);
                    });
    std::vector<VarPtr> items = key->kind == K::Tuple ? key->items : std::vector<VarPtr>{};
    if (advanced) {
      auto ellipsis = [](const VarPtr &k) {
        return k->isConstant() && k->constant.kind == PyConst::Kind::Ellipsis;
      };
      auto full = [&] {
        return makeSequence(K::Slice, {none(), none(), none()}, {});
      };
      if (std::count_if(items.begin(), items.end(), ellipsis) == 1 &&
          items.size() - 1 <= obj->meta.rank()) {
        auto at = std::find_if(items.begin(), items.end(), ellipsis);
        size_t spans = obj->meta.rank() - (items.size() - 1);
        at = items.erase(at);
        items.insert(at, spans, full());
      }
      bool sliced = items.size() <= obj->meta.rank() &&
                    std::any_of(items.begin(), items.end(), [&](const VarPtr &k) {
                      return k->kind == K::Slice && !fullSlice(k);
                    }) &&
                    std::all_of(items.begin(), items.end(), [&](const VarPtr &k) {
                      return k->kind == K::Slice || pointIndex(k);
                    });
      if (sliced) {
        std::vector<VarPtr> basic;
        for (VarPtr &k : items) {
          basic.push_back(k->kind == K::Slice ? k : full());
          if (k->kind == K::Slice)
            k = full();
        }
        obj = tensorCall(f, sir, "operator", "__getitem__", "__getitem__",
                         {obj, makeSequence(K::Tuple, basic, {})}, {});
      }
    }
    if (advanced && items.size() <= obj->meta.rank()) {
      size_t first = 0;
      while (first < items.size() && fullSlice(items[first]))
        ++first;
      size_t last = first;
      while (last < items.size() && pointIndex(items[last]))
        ++last;
      bool tensor = std::any_of(items.begin() + first, items.begin() + last,
                                [](auto &k) { return k->isTensor(); });
      bool restFull = std::all_of(items.begin() + last, items.end(), fullSlice);
      if (first == 0 && tensor && restFull) // x[i, j, :]: x[i, j]
        return indexPoints(f, sir, obj, {items.begin(), items.begin() + last});
      if (first > 0 && tensor && restFull) {
        size_t rank = obj->meta.rank(), run = last - first;
        std::vector<int64_t> toFront;
        for (size_t d = first; d < last; ++d)
          toFront.push_back(static_cast<int64_t>(d));
        for (size_t d = 0; d < rank; ++d)
          if (d < first || d >= last)
            toFront.push_back(static_cast<int64_t>(d));
        std::string transpose = framework_ == "torch" ? "torch.permute" : "paddle.transpose";
        VarPtr moved = tensorCall(f, sir, "api", transpose, transpose, {obj, intsArg(toFront)}, {});
        VarPtr picked = indexPoints(f, sir, moved, {items.begin() + first, items.begin() + last});
        size_t indexRank = picked->meta.rank() - (rank - run);
        std::vector<int64_t> back;
        for (size_t d = 0; d < first; ++d)
          back.push_back(static_cast<int64_t>(indexRank + d));
        for (size_t d = 0; d < indexRank; ++d)
          back.push_back(static_cast<int64_t>(d));
        for (size_t d = indexRank + first; d < picked->meta.rank(); ++d)
          back.push_back(static_cast<int64_t>(d));
        return tensorCall(f, sir, "api", transpose, transpose, {picked, intsArg(back)}, {});
      }
    }
    if (key->isTensor() ||
        (key->isSequence() && std::any_of(key->items.begin(), key->items.end(),
                                          [](const VarPtr &v) { return v->isTensor(); })))
      fail(DiagCode::FrontendUnsupportedConstruct,
           "indexing a tensor with a boolean tensor, or with tensors among other indices, is "
           "not supported yet",
           f);
    return tensorCall(f, sir, "operator", "__getitem__", "__getitem__", {obj, key}, {});
  }
  consume(key, loc);
  if (isRecord(obj))
    return recordGetItem(f, sir, obj, key);
  if (obj->kind == K::Object && obj->layer && isLayerDict(obj)) { // layers["name"]
    std::vector<VarPtr> layers = sublayers(f, obj);
    if (key->isConstant() && key->constant.kind == PyConst::Kind::Str)
      for (size_t i = 0; i < obj->children.size(); ++i)
        if (obj->children[i] == key->constant.text)
          return layers[i];
    fail(DiagCode::FrontendPythonError, "KeyError: " + key->repr(), f);
  }
  if (obj->kind == K::Object && obj->layer) // layers[i], layers[1:]: its sublayers
    obj = makeSequence(K::Tuple, sublayers(f, obj), {obj});
  if (obj->isSequence() || (obj->isConstant() && obj->constant.kind == PyConst::Kind::Str)) {
    std::vector<VarPtr> items = obj->isSequence() ? obj->items : iterate(f, sir, obj);
    int64_t n = static_cast<int64_t>(items.size());
    if (key->kind == K::Slice) {
      std::array<int64_t, 3> bounds = sliceBounds(f, key, n);
      std::vector<VarPtr> out;
      for (int64_t k = 0; k < sliceLength(bounds); ++k)
        out.push_back(items[bounds[0] + k * bounds[2]]);
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
    if (i < 0 || i >= n) {
      consume(obj, loc); // its length decided (a handler may catch the error)
      fail(DiagCode::FrontendPythonError, "IndexError: " + obj->typeName() + " index out of range",
           f);
    }
    return items[i];
  }
  if (obj->kind == K::Dict) {
    for (size_t i = 0; i < obj->keys.size(); ++i)
      if (obj->keys[i]->isConstant() && key->isConstant() &&
          obj->keys[i]->constant == key->constant)
        return obj->items[i];
    consume(obj, loc); // its keys decided (a handler may catch the error)
    fail(DiagCode::FrontendPythonError, "KeyError: " + key->repr(), f);
  }
  if (obj->kind == K::Range) { // arithmetic, not a list: ranges may be long
    int64_t span = obj->stop - obj->start;
    int64_t n = obj->step > 0 ? std::max<int64_t>(0, (span + obj->step - 1) / obj->step)
                              : std::max<int64_t>(0, (-span - obj->step - 1) / -obj->step);
    if (key->kind == K::Slice) {
      std::array<int64_t, 3> bounds = sliceBounds(f, key, n);
      VarPtr r = Variable::make(K::Range, computedFrom({obj, key}));
      r->start = obj->start + bounds[0] * obj->step;
      r->stop = obj->start + (bounds[0] + sliceLength(bounds) * bounds[2]) * obj->step;
      r->step = obj->step * bounds[2];
      return r;
    }
    if (!isInt(key))
      fail(DiagCode::FrontendPythonError,
           "TypeError: range indices must be integers or slices, not " + key->typeName(), f);
    int64_t i = key->constant.intValue < 0 ? key->constant.intValue + n : key->constant.intValue;
    if (i < 0 || i >= n)
      fail(DiagCode::FrontendPythonError, "IndexError: range object index out of range", f);
    return makeConst(PyConst::ofInt(obj->start + i * obj->step), {obj, key});
  }
  if (obj->kind == K::External && obj->name.rfind("typing.", 0) == 0) {
    // A type annotation (List[torch.Tensor] for torch.jit.annotate): a value that only names
    // the type, and is subscripted further (Dict[str, Optional[Tensor]]).
    VarPtr annotation = Variable::make(K::External, computedFrom({obj, key}));
    annotation->name = obj->name + "[" + key->repr() + "]";
    return annotation;
  }
  fail(DiagCode::FrontendUnsupportedConstruct,
       "subscripting a " + obj->typeName() + " is not supported", f);
}

} // namespace sotc::frontend
