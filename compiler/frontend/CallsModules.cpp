//===- CallsModules.cpp - Functions of modules: the operator table, math on constants ----===//
#include "compiler/frontend/Calls.h"

#include "compiler/ops/OpTable.h"

#include <algorithm>
#include <cmath>

namespace sotc::frontend {
namespace {

double arg(const CallContext &c, size_t i) { return c.args[i]->constant.number(); }

/// A math function of one float argument.
template <double (*F)(double)> bool unaryMath(CallContext &c) {
  if (c.args.size() != 1)
    return false;
  c.push(makeConst(PyConst::ofFloat(F(arg(c, 0))), c.args));
  return true;
}

/// floor / ceil: an int result.
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

/// `math` on number constants folds at compile time.
const CallTable &mathFunctions() {
  static const CallTable table = {
      {"math.sqrt", unaryMath<kSqrt>},
      {"math.exp", unaryMath<kExp>},
      {"math.log", unaryMath<kLog>},
      {"math.sin", unaryMath<kSin>},
      {"math.cos", unaryMath<kCos>},
      {"math.tanh", unaryMath<kTanh>},
      {"math.fabs", unaryMath<kFabs>},
      {"math.log2", unaryMath<kLog2>},
      {"math.log10", unaryMath<kLog10>},
      {"math.erf", unaryMath<kErf>},
      {"math.floor", roundingMath<kFloor>},
      {"math.ceil", roundingMath<kCeil>},
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
