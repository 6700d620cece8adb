//===- CallsModules.cpp - Functions of modules: the operator table, math on constants ----===//
#include "compiler/frontend/Calls.h"

#include "compiler/ops/OpTable.h"

#include <algorithm>
#include <cmath>

namespace sotc::frontend {
namespace {

double arg(const CallContext &c, size_t i) { return c.args[i]->constant.number(); }

template <double (*F)(double)> bool unaryMath(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  c.push(makeConst(PyConst::ofFloat(F(arg(c, 0))), c.args));
  return true;
}

template <double (*F)(double)> bool roundingMath(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  c.push(makeConst(PyConst::ofInt(static_cast<int64_t>(F(arg(c, 0)))), c.args));
  return true;
}

bool mathPow(CallContext &c) {
  if (c.args.size() != 2)
    return false;
  c.push(makeConst(PyConst::ofFloat(std::pow(arg(c, 0), arg(c, 1))), c.args));
  return true;
}

double sqrtFn(double x) { return std::sqrt(x); }
double expFn(double x) { return std::exp(x); }
double logFn(double x) { return std::log(x); }
double sinFn(double x) { return std::sin(x); }
double cosFn(double x) { return std::cos(x); }
double tanhFn(double x) { return std::tanh(x); }
double fabsFn(double x) { return std::fabs(x); }
double log2Fn(double x) { return std::log2(x); }
double log10Fn(double x) { return std::log10(x); }
double erfFn(double x) { return std::erf(x); }
double floorFn(double x) { return std::floor(x); }
double ceilFn(double x) { return std::ceil(x); }

/// `math` on number constants folds at compile time.
const CallTable &mathFunctions() {
  static const CallTable table = {
      {"math.sqrt", unaryMath<sqrtFn>},
      {"math.exp", unaryMath<expFn>},
      {"math.log", unaryMath<logFn>},
      {"math.sin", unaryMath<sinFn>},
      {"math.cos", unaryMath<cosFn>},
      {"math.tanh", unaryMath<tanhFn>},
      {"math.fabs", unaryMath<fabsFn>},
      {"math.log2", unaryMath<log2Fn>},
      {"math.log10", unaryMath<log10Fn>},
      {"math.erf", unaryMath<erfFn>},
      {"math.floor", roundingMath<floorFn>},
      {"math.ceil", roundingMath<ceilFn>},
      {"math.pow", mathPow},
  };
  return table;
}

} // namespace

bool callModuleFunction(CallContext &c) {
  if (ops::OpTable::get().lookup(c.name)) {
    if (!c.breakOn(c.name, c.name, c.args))
      c.push(c.tensorCall("api", c.name, c.name, std::move(c.args), std::move(c.kwargs)));
    return true;
  }
  bool constantNumbers = c.kwargs.empty() && !c.args.empty() &&
                         std::all_of(c.args.begin(), c.args.end(), [](const VarPtr &a) {
                           return a->isConstant() && a->constant.isNumber();
                         });
  if (c.name.rfind("math.", 0) != 0 || !constantNumbers)
    return false;
  c.consumeArgs();
  auto it = mathFunctions().find(c.name);
  return it != mathFunctions().end() && it->second(c);
}

} // namespace sotc::frontend
