//===- CallsModules.cpp - Functions of modules: operator table, `operator`, `math` ---------===//
#include "compiler/frontend/Calls.h"

#include "compiler/ops/OpTable.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace sotc::frontend {
namespace {

double arg(const CallContext &c, size_t i) { return c.args[i]->constant.number(); }

/// A libm result as CPython's math module gives it: where libm signals a domain error
/// (sqrt(-1), log(0), sin(inf), fmod(x, 0)) math raises ValueError, where the result overflows
/// OverflowError, as the program's handlers may catch; numpy returns the nan or inf.
template <typename Compute> double libm(CallContext &c, Compute &&compute) {
  std::feclearexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
  double v = compute();
  if (c.name.rfind("math.", 0) != 0)
    return v;
  if (std::fetestexcept(FE_INVALID | FE_DIVBYZERO))
    c.fail(DiagCode::FrontendPythonError, "ValueError: math domain error");
  if (std::fetestexcept(FE_OVERFLOW))
    c.fail(DiagCode::FrontendPythonError, "OverflowError: math range error");
  return v;
}

/// A math function of one float argument.
template <double (*F)(double)> bool unaryMath(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  c.push(makeConst(PyConst::ofFloat(libm(c, [&] { return F(arg(c, 0)); })), c.args));
  return true;
}

/// floor / ceil / trunc: an int result, which infinity and nan have not.
template <double (*F)(double)> bool roundingMath(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  double v = F(arg(c, 0));
  if (std::isnan(v))
    c.fail(DiagCode::FrontendPythonError, "ValueError: cannot convert float NaN to integer");
  if (!std::isfinite(v) || std::fabs(v) >= 0x1p63)
    c.fail(DiagCode::FrontendPythonError,
           std::isfinite(v) ? "OverflowError: the integer does not fit 64 bits"
                            : "OverflowError: cannot convert float infinity to integer");
  c.push(makeConst(PyConst::ofInt(static_cast<int64_t>(v)), c.args));
  return true;
}

/// A math function of two float arguments (pow, atan2, hypot, copysign, fmod).
template <double (*F)(double, double)> bool binaryMath(CallContext &c) {
  if (c.args.size() != 2)
    return false;
  c.push(makeConst(PyConst::ofFloat(libm(c, [&] { return F(arg(c, 0), arg(c, 1)); })), c.args));
  return true;
}

constexpr double (*kPow)(double, double) = std::pow;

/// math.log(x[, base]): LTX-Video's rotary frequencies take logarithms to their theta.
bool mathLog(CallContext &c) {
  if (c.args.size() != 1 && c.args.size() != 2)
    return false;
  double v = libm(c, [&] { return std::log(arg(c, 0)); });
  double base = c.args.size() == 2 ? libm(c, [&] { return std::log(arg(c, 1)); }) : 1;
  if (base == 0)
    c.fail(DiagCode::FrontendPythonError, "ZeroDivisionError: float division by zero");
  c.push(makeConst(PyConst::ofFloat(v / base), c.args));
  return true;
}

/// isfinite / isinf / isnan: a bool.
template <bool (*F)(double)> bool mathPredicate(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  c.push(makeConst(PyConst::ofBool(F(arg(c, 0))), c.args));
  return true;
}

/// gcd / lcm of ints (Python's: non-negative, lcm of 0 is 0).
template <bool Lcm> bool mathIntPair(CallContext &c) {
  if (c.args.size() != 2)
    return false;
  for (const auto &v : c.args)
    if (v->constant.kind != PyConst::Kind::Int)
      return false;
  int64_t a = std::llabs(c.args[0]->constant.intValue);
  int64_t b = std::llabs(c.args[1]->constant.intValue);
  int64_t g = std::gcd(a, b);
  c.push(makeConst(PyConst::ofInt(Lcm ? (g == 0 ? 0 : a / g * b) : g), c.args));
  return true;
}

/// numpy.power: an int of two ints (a non-negative exponent), a float otherwise.
bool numpyPow(CallContext &c) {
  if (c.args.size() != 2)
    return false;
  const PyConst &base = c.args[0]->constant, &exponent = c.args[1]->constant;
  if (base.kind == PyConst::Kind::Int && exponent.kind == PyConst::Kind::Int &&
      exponent.intValue >= 0) {
    int64_t out = 1;
    for (int64_t i = 0; i < exponent.intValue; ++i)
      out *= base.intValue;
    c.push(makeConst(PyConst::ofInt(out), c.args));
    return true;
  }
  return binaryMath<kPow>(c);
}

/// math.prod(iterable, *, start=1): the items multiplied as `*` multiplies them (sizes of
/// dynamic dimensions included), from the left.
bool mathProd(CallContext &c) {
  VarPtr start = argument(c, "start", 1);
  if (c.args.size() != 1 || c.kwargs.size() > (start ? 1u : 0u))
    return false;
  VarPtr acc = start ? start : makeConst(PyConst::ofInt(1), {});
  for (const VarPtr &item : c.iterate(c.args[0])) {
    c.consume(item);
    acc = c.binary("mul", acc, item);
  }
  c.push(acc);
  return true;
}

// The <cmath> functions are overloaded; these pick the double one for the templates.
constexpr double (*kSqrt)(double) = std::sqrt;
constexpr double (*kExp)(double) = std::exp;
constexpr double (*kLog)(double) = std::log;
constexpr double (*kSin)(double) = std::sin;
constexpr double (*kCos)(double) = std::cos;
constexpr double (*kTanh)(double) = std::tanh;
constexpr double (*kFabs)(double) = std::fabs;
constexpr double (*kLog2)(double) = std::log2;
constexpr double (*kLog10)(double) = std::log10;
constexpr double (*kErf)(double) = std::erf;
constexpr double (*kFloor)(double) = std::floor;
constexpr double (*kCeil)(double) = std::ceil;
constexpr double (*kTrunc)(double) = std::trunc;
constexpr double (*kTan)(double) = std::tan;
constexpr double (*kAsin)(double) = std::asin;
constexpr double (*kAcos)(double) = std::acos;
constexpr double (*kAtan)(double) = std::atan;
constexpr double (*kSinh)(double) = std::sinh;
constexpr double (*kCosh)(double) = std::cosh;
constexpr double (*kLog1p)(double) = std::log1p;
constexpr double (*kExpm1)(double) = std::expm1;
constexpr double (*kErfc)(double) = std::erfc;
constexpr double (*kAtan2)(double, double) = std::atan2;
constexpr double (*kHypot)(double, double) = std::hypot;
constexpr double (*kCopysign)(double, double) = std::copysign;
constexpr double (*kFmod)(double, double) = std::fmod;
double radians(double v) { return v * M_PI / 180; }
double degrees(double v) { return v * 180 / M_PI; }
bool isFinite(double v) { return std::isfinite(v); }
bool isInf(double v) { return std::isinf(v); }
bool isNan(double v) { return std::isnan(v); }

/// `math` on number constants folds at compile time.
const CallTable &mathFunctions() {
  static const CallTable table = {
      {"math.sqrt", unaryMath<kSqrt>},
      {"math.exp", unaryMath<kExp>},
      {"math.log", mathLog},
      {"math.sin", unaryMath<kSin>},
      {"math.cos", unaryMath<kCos>},
      {"math.tanh", unaryMath<kTanh>},
      {"math.fabs", unaryMath<kFabs>},
      {"math.log2", unaryMath<kLog2>},
      {"math.log10", unaryMath<kLog10>},
      {"math.erf", unaryMath<kErf>},
      {"math.floor", roundingMath<kFloor>},
      {"math.ceil", roundingMath<kCeil>},
      {"math.trunc", roundingMath<kTrunc>},
      {"math.pow", binaryMath<kPow>},
      {"math.tan", unaryMath<kTan>},
      {"math.asin", unaryMath<kAsin>},
      {"math.acos", unaryMath<kAcos>},
      {"math.atan", unaryMath<kAtan>},
      {"math.sinh", unaryMath<kSinh>},
      {"math.cosh", unaryMath<kCosh>},
      {"math.log1p", unaryMath<kLog1p>},
      {"math.expm1", unaryMath<kExpm1>},
      {"math.erfc", unaryMath<kErfc>},
      {"math.radians", unaryMath<radians>},
      {"math.degrees", unaryMath<degrees>},
      {"math.atan2", binaryMath<kAtan2>},
      {"math.hypot", binaryMath<kHypot>},
      {"math.copysign", binaryMath<kCopysign>},
      {"math.fmod", binaryMath<kFmod>},
      {"math.isfinite", mathPredicate<isFinite>},
      {"math.isinf", mathPredicate<isInf>},
      {"math.isnan", mathPredicate<isNan>},
      {"math.gcd", mathIntPair<false>},
      {"math.lcm", mathIntPair<true>},
  };
  return table;
}

/// `operator`'s functions are the bytecode's operators: each runs what the instruction runs.
bool operatorFunction(CallContext &c, const std::string &op) {
  static const std::map<std::string, std::string> binary = {
      {"add", "add"},           {"sub", "sub"},   {"mul", "mul"}, {"truediv", "truediv"},
      {"floordiv", "floordiv"}, {"mod", "mod"},   {"pow", "pow"}, {"matmul", "matmul"},
      {"and_", "and"},          {"or_", "or"},    {"xor", "xor"}, {"lshift", "lshift"},
      {"rshift", "rshift"},     {"concat", "add"}};
  static const std::map<std::string, std::string> compare = {
      {"lt", "<"}, {"le", "<="}, {"eq", "=="}, {"ne", "!="}, {"gt", ">"}, {"ge", ">="}};
  static const std::map<std::string, std::string> unary = {
      {"neg", "__neg__"}, {"pos", "__pos__"}, {"invert", "__invert__"}, {"inv", "__invert__"}};
  const std::vector<VarPtr> &a = c.args;
  if (!c.kwargs.empty())
    return false;
  if (a.size() == 2 && binary.count(op)) {
    c.push(c.binary(binary.at(op), a[0], a[1]));
  } else if (a.size() == 2 && op.size() > 1 && op[0] == 'i' && binary.count(op.substr(1))) {
    c.push(c.binary(binary.at(op.substr(1)), a[0], a[1], /*inplace=*/true)); // iadd, ...
  } else if (a.size() == 2 && compare.count(op)) {
    c.push(c.compare(compare.at(op), a[0], a[1]));
  } else if (a.size() == 1 && unary.count(op)) {
    c.push(c.unary(unary.at(op), a[0]));
  } else if (a.size() == 1 && (op == "truth" || op == "not_") && Executor::branchCondition(a[0])) {
    return c.truthBranch(a[0], op == "not_");
  } else if (a.size() == 1 && (op == "truth" || op == "not_")) {
    bool value = c.truthy(a[0]);
    c.push(makeConst(PyConst::ofBool(op == "truth" ? value : !value), a));
  } else if (a.size() == 2 && (op == "is_" || op == "is_not")) {
    c.push(c.identical(a[0], a[1], op == "is_not"));
  } else if (a.size() == 2 && op == "contains") {
    c.push(c.compare("in", a[1], a[0]));
  } else if (a.size() == 2 && op == "getitem") {
    c.push(c.getItem(a[0], a[1]));
  } else if (a.size() == 3 && op == "setitem") {
    c.setItem(a[0], a[1], a[2]);
    c.push(none());
  } else if (a.size() == 2 && op == "delitem") {
    c.deleteItem(a[0], a[1]);
    c.push(none());
  } else {
    return false;
  }
  return true;
}

} // namespace

/// An autocast manager's settings, as its items: framework, device, dtype ("off": disabled).
/// torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None) (and torch.amp's;
/// torch.cuda.amp's and torch.cpu.amp's without the device), paddle.amp.auto_cast(enable=True,
/// custom_white_list=None, custom_black_list=None, level='O1', dtype='float16', use_promote=True).
std::vector<VarPtr> autocastSettings(CallContext &c) {
  bool paddle = c.name == "paddle.amp.auto_cast";
  std::vector<std::string> names =
      paddle ? std::vector<std::string>{"enable", "custom_white_list", "custom_black_list", "level",
                                        "dtype",  "use_promote"}
      : c.name == "torch.cuda.amp.autocast" || c.name == "torch.cpu.amp.autocast"
          ? std::vector<std::string>{"enabled", "dtype", "cache_enabled"}
          : std::vector<std::string>{"device_type", "dtype", "enabled", "cache_enabled"};
  std::map<std::string, VarPtr> given;
  if (c.args.size() > names.size())
    c.fail(DiagCode::FrontendPythonError, "TypeError: " + c.name + "() takes at most " +
                                              std::to_string(names.size()) + " arguments");
  for (size_t i = 0; i < c.args.size(); ++i)
    given[names[i]] = c.args[i];
  for (const auto &[k, v] : c.kwargs) {
    if (std::find(names.begin(), names.end(), k) == names.end())
      c.fail(DiagCode::FrontendPythonError,
             "TypeError: " + c.name + "() got an unexpected keyword argument '" + k + "'");
    given[k] = v;
  }
  c.consumeArgs();
  auto text = [&](const std::string &key) -> std::optional<std::string> {
    auto it = given.find(key);
    if (it == given.end() ||
        (it->second->isConstant() && it->second->constant.kind == PyConst::Kind::None))
      return std::nullopt;
    const VarPtr &v = it->second;
    if (v->isConstant() && v->constant.kind == PyConst::Kind::Str)
      return v->constant.text;
    if (v->kind == Variable::Kind::External || v->kind == Variable::Kind::Module)
      return v->name;
    c.fail(DiagCode::FrontendUnsupportedConstruct,
           c.name + "(): " + key + " must be a constant, not " + v->typeName());
  };
  auto flag = [&](const std::string &key) {
    auto it = given.find(key);
    return it == given.end() || c.truthy(it->second);
  };
  std::string device = paddle                                ? "gpu"
                       : c.name == "torch.cuda.amp.autocast" ? "cuda"
                       : c.name == "torch.cpu.amp.autocast"  ? "cpu"
                                                             : text("device_type").value_or("");
  bool enabled = flag(paddle ? "enable" : "enabled");
  // torch.autocast(..., torch.float32) is autocast off: torch disables it (with a warning) for
  // a dtype it does not cast to (Mochi's rotary frequencies).
  if (!paddle && text("dtype") && ops::parseDType(*text("dtype")) == ops::DType::Float32)
    enabled = false;
  // A block that turns autocast off is off on any device (timm's
  // `torch.autocast(device_type=x.device.type, enabled=False)`).
  if (!paddle && !enabled && device != "cuda" && device != "cpu")
    device = "cpu";
  if (!paddle && device != "cuda" && device != "cpu")
    c.fail(DiagCode::FrontendUnsupportedConstruct,
           c.name + "(): device_type '" + device + "' (sotc knows autocast for 'cuda' and 'cpu')");
  if (paddle) {
    for (const char *custom : {"custom_white_list", "custom_black_list"})
      if (text(custom) || (given.count(custom) && !given[custom]->isConstant()))
        c.fail(DiagCode::FrontendUnsupportedConstruct,
               c.name + "(): " + custom + " is not supported yet (paddle's O1 lists apply)");
    if (text("level").value_or("O1") != "O1")
      c.fail(DiagCode::FrontendUnsupportedConstruct,
             c.name + "(): level '" + *text("level") + "' is not supported yet (O1 is)");
  }
  std::string dtype = text("dtype").value_or(paddle             ? "float16"
                                             : device == "cuda" ? "float16"
                                                                : "bfloat16");
  if (!enabled) // off: what it would cast to does not matter
    dtype = device == "cuda" ? "float16" : "bfloat16";
  std::optional<ops::DType> half = ops::parseDType(dtype);
  if (!half || (*half != ops::DType::Float16 && *half != ops::DType::BFloat16))
    c.fail(DiagCode::FrontendUnsupportedConstruct,
           c.name + "(): dtype " + dtype + " (autocast runs in float16 or bfloat16)");
  return {makeConst(PyConst::ofStr(paddle ? "paddle" : "torch"), {}),
          makeConst(PyConst::ofStr(device), {}),
          makeConst(PyConst::ofStr(enabled ? ops::dtypeName(*half) : "off"), {})};
}

/// `with torch.no_grad():` and the like: compiled programs never record gradients, so these
/// managers change nothing. Autocast blocks change the dtypes operators run in (Autocast.cpp).
bool contextManager(CallContext &c) {
  static const std::set<std::string> inert = {
      "torch.no_grad",  "torch.inference_mode", "torch.enable_grad",      "torch.set_grad_enabled",
      "paddle.no_grad", "paddle.enable_grad",   "paddle.set_grad_enabled"};
  static const std::set<std::string> autocast = {"torch.autocast", "torch.amp.autocast",
                                                 "torch.cuda.amp.autocast",
                                                 "torch.cpu.amp.autocast", "paddle.amp.auto_cast"};
  bool isAutocast = autocast.count(c.name) > 0;
  // contextlib.nullcontext(enter_result=None): a block that only binds `as` to enter_result
  // (transformers' maybe_autocast where autocast is off).
  bool isNull = c.name == "contextlib.nullcontext" && c.args.size() + c.kwargs.size() <= 1;
  if (!inert.count(c.name) && !isAutocast && !isNull)
    return false;
  std::vector<VarPtr> settings;
  if (isAutocast)
    settings = autocastSettings(c);
  else if (isNull)
    settings = {argument(c, "enter_result", 0) ? argument(c, "enter_result", 0) : none()};
  else
    c.consumeArgs();
  VarPtr manager = Variable::make(Variable::Kind::Opaque, computedFrom(c.args));
  manager->name = "context manager " + c.name + "()";
  manager->items = std::move(settings);
  c.push(manager);
  return true;
}

/// os.environ.get(name, default) and os.getenv(name, default): the value the variable had when
/// tracing (Trace.environment), or the default where it was not set.
bool environmentVariable(CallContext &c) {
  if ((c.name != "os.environ.get" && c.name != "os.getenv") || c.args.empty() ||
      c.args.size() > 2 || !c.kwargs.empty())
    return false;
  const VarPtr &name = c.args[0];
  if (!name->isConstant() || name->constant.kind != PyConst::Kind::Str)
    c.fail(DiagCode::FrontendUnsupportedConstruct,
           c.name + "() of a name that is not a string constant");
  c.consumeArgs();
  const auto &withheld = c.ex.trace().withheld_environment();
  if (std::find(withheld.begin(), withheld.end(), name->constant.text) != withheld.end())
    c.fail(DiagCode::FrontendUnsupportedConstruct,
           "reading the environment variable " + name->constant.text +
               ", which names a credential: its value is kept out of the trace (pass what the "
               "code needs from it as an input)");
  const auto &environment = c.ex.trace().environment();
  auto it = environment.find(name->constant.text);
  c.push(it != environment.end() ? makeConst(PyConst::ofStr(it->second), {})
         : c.args.size() > 1     ? c.args[1]
                                 : none());
  return true;
}

/// time.time(), time.perf_counter() and the other clocks: a reading whose only use is the
/// time to another reading (binaryOp), none in a compiled program.
bool clockReading(CallContext &c) {
  static const std::set<std::string> clocks = {
      "time.time",        "time.time_ns",       "time.perf_counter", "time.perf_counter_ns",
      "time.monotonic",   "time.monotonic_ns",  "time.process_time", "time.process_time_ns",
      "time.thread_time", "time.thread_time_ns"};
  if (!clocks.count(c.name) || !c.args.empty() || !c.kwargs.empty())
    return false;
  VarPtr v = Variable::make(Variable::Kind::Opaque, computedFrom({}));
  v->name = "clock reading of " + c.name + "()";
  bool ns = c.name.size() > 3 && c.name.compare(c.name.size() - 3, 3, "_ns") == 0;
  v->constant = ns ? PyConst::ofInt(0) : PyConst::ofFloat(0);
  c.push(v);
  return true;
}

/// torch.is_tensor(x), paddle.is_tensor(x): whether x is a tensor (known at compile time).
bool isTensorQuery(CallContext &c) {
  if ((c.name != "torch.is_tensor" && c.name != "paddle.is_tensor") || c.args.size() != 1 ||
      !c.kwargs.empty())
    return false;
  c.push(makeConst(PyConst::ofBool(c.args[0]->isTensor()), {}));
  return true;
}

/// torch.is_autocast_enabled(device_type="cuda"): whether the innermost autocast block for that
/// device (Autocast.cpp) turns it on; for a tensor's own device (x.device.type: where the
/// artifact runs), the innermost block of either device.
bool autocastQuery(CallContext &c) {
  if (c.name != "torch.is_autocast_enabled" || c.args.size() + c.kwargs.size() > 1)
    return false;
  VarPtr device = argument(c, "device_type", 0);
  bool named = device && device->isConstant() && device->constant.kind == PyConst::Kind::Str;
  bool tensors = device && device->kind == Variable::Kind::External &&
                 device->name.rfind("device", 0) == 0;
  if (device && !named && !tensors)
    return false;
  std::string wanted = named ? device->constant.text : "cuda";
  bool enabled = false;
  for (auto it = c.state.autocast.rbegin(); it != c.state.autocast.rend(); ++it)
    if (it->framework == "torch" && (tensors || it->device == wanted)) {
      enabled = it->dtype.has_value();
      break;
    }
  c.push(makeConst(PyConst::ofBool(enabled), {}));
  return true;
}

/// What a framework says about how it runs a program: as eager code, never scripted,
/// traced, compiled or captured into a device graph (`if torch.jit.is_scripting():` takes the
/// eager path); `torch._assert` is an assert on what the compiler knows.
bool frameworkQuery(CallContext &c) {
  static const std::map<std::string, bool> answers = {
      {"torch.jit.is_scripting", false},
      {"torch.jit.is_tracing", false},
      {"torch.compiler.is_compiling", true},
      {"torch.compiler.is_dynamo_compiling", true},
      {"torch.compiler.is_exporting", false},
      {"torch._dynamo.is_compiling", true},
      {"torch.fx._symbolic_trace.is_fx_tracing", false},
      {"torch.cuda.is_current_stream_capturing", false},
      {"torch.distributed.is_available", false}, // an artifact runs in one process
      {"torch.distributed.is_initialized", false},
      {"torch.is_grad_enabled", false}, // an artifact computes no gradients
      // Whether the framework's nondeterministic kernels are refused: an artifact's never are
      // (torchvision's roi_align then takes its operator, not its Python fallback).
      {"torch.are_deterministic_algorithms_enabled", false},
      {"torch.is_deterministic_algorithms_warn_only_enabled", false},
      // Which accelerator libraries the framework was built with: none of theirs runs in an
      // artifact (its kernels are sotc's), so the portable code path is taken.
      {"torch.backends.mha.get_fastpath_enabled", false}, // torch's fused kernel path
      {"paddle.device.is_compiled_with_rocm", false},
      {"paddle.device.is_compiled_with_cuda", false},
      {"paddle.is_compiled_with_cuda", false},
      {"paddle.is_compiled_with_rocm", false},
      {"paddle.device.is_compiled_with_xpu", false},
      {"paddle.device.is_compiled_with_custom_device", false},
      {"torch.xpu.is_current_stream_capturing", false},
      {"torch._C._get_tracing_state", false},
      {"paddle.in_dynamic_mode", true},
      {"paddle.framework.in_dynamic_mode", true},
      {"paddle.base.in_dygraph_mode", true},
      {"paddle.framework.in_dygraph_mode", true},
      {"paddle.in_dygraph_mode", true},
      {"paddle.base.in_dynamic_or_pir_mode", true},
      {"paddle.framework.in_dynamic_or_pir_mode", true},
      {"paddle.base.framework.in_dynamic_or_pir_mode", true},
      {"paddle.in_dynamic_or_pir_mode", true}};
  if (auto it = answers.find(c.name); it != answers.end()) {
    if (!c.args.empty() || !c.kwargs.empty())
      c.fail(DiagCode::FrontendPythonError, "TypeError: " + c.name + "() takes no arguments");
    c.push(it->second ? makeConst(PyConst::ofBool(true), {})
                      : c.name == "torch._C._get_tracing_state" ? none()
                                                                  : makeConst(PyConst::ofBool(false), {}));
    return true;
  }
  if (c.name == "torch._C._log_api_usage_once" || // usage logging: nothing to compile
      c.name.rfind("logging.Logger.", 0) == 0) {  // nor a logger's messages (getAttr)
    c.push(none());
    return true;
  }
  if (c.name == "torch.device" && c.args.size() + c.kwargs.size() >= 1) {
    // Where tensors live is where the artifact runs (as x.device, Operators.cpp).
    VarPtr device = Variable::make(Variable::Kind::External, computedFrom(c.args));
    device->name = "device";
    c.push(device);
    return true;
  }
  if (c.name == "torch.jit.annotate" && c.args.size() == 2 && c.kwargs.empty()) {
    c.push(c.args[1]); // annotate(type, value) is value
    return true;
  }
  // torch._assert(cond, message) and torch._check(cond, message=None): on what the compiler
  // knows (sizes), decided now.
  bool check = c.name == "torch._check";
  VarPtr cond = argument(c, "cond", 0), message = argument(c, check ? "message" : "msg", 1);
  if ((c.name != "torch._assert" && !check) || !cond || c.args.size() + c.kwargs.size() > 2 ||
      (!check && c.args.size() != 2))
    return false;
  if (cond->isTensor())
    c.fail(DiagCode::FrontendUnsupportedCall,
           c.name + " on a tensor's value is not supported (it would need the value at run time)");
  if (!c.truthy(cond))
    c.fail(DiagCode::FrontendPythonError,
           std::string(check ? "RuntimeError: " : "AssertionError: ") +
               (message && message->isConstant() ? message->constant.text : std::string()) +
               " (" + c.name + " fails for these inputs)");
  c.push(none());
  return true;
}

/// itertools.repeat(x, times) with a known count: the tuple of its items (what `tuple(...)`
/// or a loop over it reads; torch's _ntuple helpers use it).
bool itertoolsRepeat(CallContext &c) {
  if (c.name != "itertools.repeat" || c.args.size() != 2 || !c.kwargs.empty() ||
      !c.args[1]->isConstant() || c.args[1]->constant.kind != PyConst::Kind::Int)
    return false;
  c.consume(c.args[1]);
  int64_t times = std::max<int64_t>(0, c.args[1]->constant.intValue);
  c.push(makeSequence(Variable::Kind::Tuple, std::vector<VarPtr>(times, c.args[0]), c.args));
  return true;
}

/// torch.finfo(dtype) / torch.iinfo(dtype) (and paddle's): the type's limits as constants, a
/// named tuple of the fields the frameworks' objects have (masks fill with finfo(dtype).min).
bool typeInfo(CallContext &c) {
  bool floating = c.name == "torch.finfo" || c.name == "paddle.finfo";
  if (!floating && c.name != "torch.iinfo" && c.name != "paddle.iinfo")
    return false;
  if (c.args.size() + c.kwargs.size() > 1 || (!c.kwargs.empty() && c.kwargs[0].first != "dtype") ||
      (!floating && c.args.empty() && c.kwargs.empty()))
    c.fail(DiagCode::FrontendPythonError, "TypeError: " + c.name + "() takes one dtype");
  VarPtr given = !c.args.empty() ? c.args[0] : !c.kwargs.empty() ? c.kwargs[0].second : nullptr;
  std::optional<ops::DType> dtype = ops::DType::Float32; // finfo(): the default dtype's
  if (given)
    dtype = ops::parseDType(given->isConstant() ? given->constant.text : given->name);
  using ops::DType;
  struct Limits {
    int64_t bits;
    double eps, max, tiny, resolution; // floating types
    int64_t imin, imax;                // integer types
  };
  static const std::map<DType, Limits> limits = {
      {DType::Float16, {16, 0x1p-10, 65504.0, 0x1p-14, 1e-3, 0, 0}},
      {DType::BFloat16, {16, 0x1p-7, 0x1.fep127, 0x1p-126, 1e-2, 0, 0}},
      {DType::Float32,
       {32, std::numeric_limits<float>::epsilon(), std::numeric_limits<float>::max(),
        std::numeric_limits<float>::min(), 1e-6, 0, 0}},
      {DType::Float64,
       {64, std::numeric_limits<double>::epsilon(), std::numeric_limits<double>::max(),
        std::numeric_limits<double>::min(), 1e-15, 0, 0}},
      {DType::Int8, {8, 0, 0, 0, 0, INT8_MIN, INT8_MAX}},
      {DType::UInt8, {8, 0, 0, 0, 0, 0, UINT8_MAX}},
      {DType::Int16, {16, 0, 0, 0, 0, INT16_MIN, INT16_MAX}},
      {DType::Int32, {32, 0, 0, 0, 0, INT32_MIN, INT32_MAX}},
      {DType::Int64, {64, 0, 0, 0, 0, INT64_MIN, INT64_MAX}}};
  auto it = dtype ? limits.find(*dtype) : limits.end();
  if (it == limits.end() || (floating != ops::isFloating(*dtype)))
    c.fail(DiagCode::FrontendPythonError,
           "TypeError: " + c.name + "() of " + (given ? given->repr() : std::string("?")) +
               ": not a " + (floating ? "floating" : "integer") + " dtype");
  c.consumeArgs();
  const Limits &l = it->second;
  auto f = [](double v) { return makeConst(PyConst::ofFloat(v), {}); };
  auto i = [](int64_t v) { return makeConst(PyConst::ofInt(v), {}); };
  VarPtr info =
      floating
          ? makeSequence(Variable::Kind::Tuple,
                         {i(l.bits), f(l.eps), f(l.max), f(-l.max), f(l.tiny), f(l.tiny),
                          f(l.resolution), makeConst(PyConst::ofStr(ops::dtypeName(*dtype)), {})},
                         {})
          : makeSequence(Variable::Kind::Tuple,
                         {i(l.bits), i(l.imax), i(l.imin),
                          makeConst(PyConst::ofStr(ops::dtypeName(*dtype)), {})},
                         {});
  info->fields = floating ? std::vector<std::string>{"bits",       "eps",  "max",
                                                     "min",        "tiny", "smallest_normal",
                                                     "resolution", "dtype"}
                          : std::vector<std::string>{"bits", "max", "min", "dtype"};
  c.push(info);
  return true;
}

/// inspect.signature(fn) of a traced function or bound method: its `parameters`, a dict of
/// each parameter's name to an object with its `name`, in the signature's order.
bool signature(CallContext &c) {
  if (c.name != "inspect.signature" || c.args.size() != 1 || !c.kwargs.empty() ||
      c.args[0]->kind != Variable::Kind::Function)
    return false;
  const VarPtr &fn = c.args[0];
  const trace::CodeObject &code = c.ex.trace().code_objects(fn->codeIndex);
  constexpr uint32_t kVarArgs = 0x4, kVarKeywords = 0x8; // CO_VARARGS, CO_VARKEYWORDS
  // co_varnames: positional, keyword-only, *args, **kwargs; a signature lists *args before
  // the keyword-only ones.
  int positional = static_cast<int>(code.argcount()),
      kwonly = static_cast<int>(code.kwonlyargcount());
  std::vector<int> order;
  for (int i = fn->self ? 1 : 0; i < positional; ++i) // a bound method's self is bound
    order.push_back(i);
  int next = positional + kwonly;
  if (code.flags() & kVarArgs)
    order.push_back(next++);
  for (int i = positional; i < positional + kwonly; ++i)
    order.push_back(i);
  if (code.flags() & kVarKeywords)
    order.push_back(next);
  VarPtr parameters = Variable::make(Variable::Kind::Dict, computedFrom({fn}));
  for (int i : order) {
    if (i >= code.varnames_size())
      return false;
    VarPtr name = makeConst(PyConst::ofStr(code.varnames(i)), {fn});
    VarPtr parameter = makeSequence(Variable::Kind::Tuple, {name}, {fn});
    parameter->name = "Parameter";
    parameter->fields = {"name"};
    parameters->keys.push_back(name);
    parameters->items.push_back(parameter);
  }
  VarPtr result = makeSequence(Variable::Kind::Tuple, {parameters}, {fn});
  result->name = "Signature";
  result->fields = {"parameters"};
  c.push(result);
  return true;
}

/// torch's associative_scan(combine_fn, xs, dim, reverse=False, combine_mode=...): the scan
/// unrolled over dim's length, carry = combine_fn(carry, x[i]) on slices that keep the dim
/// (associativity lets any order of combination stand for torch's tree).
bool associativeScan(CallContext &c) {
  if (c.name != "torch._higher_order_ops.associative_scan.associative_scan" &&
      c.name != "torch._higher_order_ops.associative_scan")
    return false;
  VarPtr combine = argument(c, "combine_fn", 0), xs = argument(c, "xs", 1),
         dimArg = argument(c, "dim", 2), reverse = argument(c, "reverse", 3);
  if (!combine || !xs || !dimArg || !isInt(dimArg) || (reverse && !reverse->isConstant()))
    return false;
  bool tree = xs->kind == Variable::Kind::Tuple || xs->kind == Variable::Kind::List;
  std::vector<VarPtr> leaves = tree ? xs->items : std::vector<VarPtr>{xs};
  if (leaves.empty() || !std::all_of(leaves.begin(), leaves.end(),
                                     [](const VarPtr &x) { return x->isTensor(); }))
    return false;
  c.consume(dimArg);
  int64_t rank = leaves[0]->meta.rank(), dim = dimArg->constant.intValue;
  dim = dim < 0 ? dim + rank : dim;
  int64_t n = rank > 0 && dim >= 0 && dim < rank ? leaves[0]->meta.shape[dim] : -1;
  if (n < 1 || ops::isDynamicDim(n))
    c.fail(DiagCode::FrontendUnsupportedCall,
           "associative_scan over a dimension that is not of a static length");
  auto constant = [](int64_t v) { return makeConst(PyConst::ofInt(v), {}); };
  auto slice = [&](int64_t i) { // each leaf's x[..., i:i+1, ...], as the combine reads it
    std::vector<VarPtr> parts;
    for (const VarPtr &x : leaves)
      parts.push_back(c.tensorCall("api", "torch.narrow", "torch.narrow",
                                   {x, constant(dim), constant(i), constant(1)}, {}));
    return tree ? makeSequence(xs->kind, parts, {}) : parts[0];
  };
  auto partsOf = [&](const VarPtr &v) { return tree ? c.iterate(v) : std::vector<VarPtr>{v}; };
  bool backwards = reverse && reverse->constant.truthy();
  std::vector<std::vector<VarPtr>> steps(leaves.size()); // per leaf, in index order
  VarPtr carry;
  for (int64_t k = 0; k < n; ++k) {
    int64_t i = backwards ? n - 1 - k : k;
    carry = carry ? c.callNow(combine, {carry, slice(i)}) : slice(i);
    std::vector<VarPtr> parts = partsOf(carry);
    if (parts.size() != leaves.size())
      c.fail(DiagCode::FrontendPythonError,
             "RuntimeError: associative_scan's combine_fn returned a different structure");
    for (size_t l = 0; l < parts.size(); ++l)
      steps[l].push_back(parts[l]);
  }
  std::vector<VarPtr> outs;
  for (std::vector<VarPtr> &s : steps) {
    if (backwards)
      std::reverse(s.begin(), s.end());
    outs.push_back(c.tensorCall("api", "torch.cat", "torch.cat",
                                {makeSequence(Variable::Kind::List, s, {}), constant(dim)}, {}));
  }
  c.push(tree ? makeSequence(xs->kind, outs, {}) : outs[0]);
  return true;
}

bool callModuleFunction(CallContext &c) {
  // paddle's functions where its own code names them: paddle.tensor.transpose and
  // paddle.tensor.manipulation.transpose are paddle.transpose.
  if (c.name.rfind("paddle.tensor.", 0) == 0 && !ops::OpTable::get().lookup(c.name)) {
    std::string leaf = "paddle." + c.name.substr(c.name.rfind('.') + 1);
    if (ops::OpTable::get().lookup(leaf))
      c.name = leaf;
  }
  if (callCreation(c) || contextManager(c) || frameworkQuery(c) || autocastQuery(c) ||
      environmentVariable(c) || clockReading(c) || isTensorQuery(c) || itertoolsRepeat(c) ||
      typeInfo(c) || signature(c) || associativeScan(c))
    return true;
  if (c.name == "functools.partial" && !c.args.empty()) {
    std::vector<VarPtr> bound(c.args.begin() + 1, c.args.end());
    c.push(makePartial(c.args[0], bound, c.kwargs, computedFrom(c.args)));
    return true;
  }
  if (c.name == "torch.resize_as_" && resizeAsInPlace(c))
    return true;
  // OrderedDict(...) is a dict: a dict keeps its insertion order too (torchvision's
  // IntermediateLayerGetter, the segmentation models' outputs).
  if (c.name == "collections.OrderedDict")
    return builtinFunctions().at("dict")(c);
  // einsum(equation, a, b): the operands as separate arguments are the operator's one list.
  if ((c.name == "torch.einsum" || c.name == "paddle.einsum") && c.args.size() >= 2 &&
      c.args[1]->isTensor())
    c.args = {c.args[0], makeSequence(Variable::Kind::List,
                                      std::vector<VarPtr>(c.args.begin() + 1, c.args.end()), {})};
  if (ops::OpTable::get().lookup(c.name)) {
    if (c.breakOn(c.name, c.name, c.args))
      return true;
    VarPtr result = c.tensorCall("api", c.name, c.name, std::move(c.args), std::move(c.kwargs));
    if (c.name == "torch.histogramdd") { // (hist, bin_edges): the edges one tuple
      std::vector<VarPtr> edges(result->items.begin() + 1, result->items.end());
      result = makeSequence(Variable::Kind::Tuple,
                            {result->items[0], makeSequence(Variable::Kind::Tuple, edges, {})}, {});
      result->fields = {"hist", "bin_edges"};
    }
    c.push(result);
    return true;
  }
  for (const char *module : {"operator.", "_operator."})
    if (c.name.rfind(module, 0) == 0)
      return operatorFunction(c, c.name.substr(std::strlen(module)));
  if (c.name == "math.prod") // of an iterable, not of numbers
    return mathProd(c);
  bool constantNumbers = c.kwargs.empty() && !c.args.empty() &&
                         std::all_of(c.args.begin(), c.args.end(), [](const VarPtr &a) {
                           return a->isConstant() && a->constant.isNumber();
                         });
  if (!constantNumbers)
    return false;
  if (c.name.rfind("numpy.", 0) == 0) { // numpy's on numbers: floats, as math's
    static const CallTable numpy = {
        {"numpy.sqrt", unaryMath<kSqrt>},   {"numpy.exp", unaryMath<kExp>},
        {"numpy.log", unaryMath<kLog>},     {"numpy.sin", unaryMath<kSin>},
        {"numpy.cos", unaryMath<kCos>},     {"numpy.tanh", unaryMath<kTanh>},
        {"numpy.log2", unaryMath<kLog2>},   {"numpy.log10", unaryMath<kLog10>},
        {"numpy.floor", unaryMath<kFloor>}, {"numpy.ceil", unaryMath<kCeil>},
        {"numpy.power", numpyPow},
    };
    auto it = numpy.find(c.name);
    if (it == numpy.end())
      return false;
    c.consumeArgs();
    return it->second(c);
  }
  if (c.name.rfind("math.", 0) != 0)
    return false;
  c.consumeArgs();
  auto it = mathFunctions().find(c.name);
  return it != mathFunctions().end() && it->second(c);
}

} // namespace sotc::frontend
