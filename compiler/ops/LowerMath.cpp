//===- LowerMath.cpp - Lowerings: the rest of the elementwise math family -----------------===//
//
// Functions with one primitive each (tan, asinh, expm1, atan2, ...), and those written out
// as several: special functions (lgamma, digamma, erfinv, i0: series and approximations
// evaluated in float64, then rounded to the input's precision), float classification
// (isnan, signbit), NaN-aware and stable forms (fmax, logaddexp, xlogy, nan_to_num).
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"

#include <cfloat>
#include <cmath>
#include <limits>

namespace sotc::ops::lowering {

namespace {

constexpr double kPi = 3.14159265358979323846;

int isInf(PrimBuilder &b, int x) {
  return b.binary(Prim::Equal, b.unary(Prim::Abs, x), scalarLike(b, INFINITY, x));
}

/// a*x + c, the Horner step.
int fma(PrimBuilder &b, int a, int x, double c) {
  return b.binaryScalar(Prim::Add, b.binary(Prim::Mul, a, x), c);
}

/// Runs `body` on `x` in float64 and rounds its result to x's floating dtype.
int inFloat64(PrimBuilder &b, int x, int (*body)(PrimBuilder &, int)) {
  DType out = floatingResult(b.meta(x).dtype);
  return b.cast(body(b, b.cast(x, DType::Float64)), out);
}

/// lgamma by Lanczos' approximation (g = 7, 9 terms; relative error ~1e-15) for x >= 0.5,
/// and the reflection lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x) below.
int lgamma64(PrimBuilder &b, int x) {
  static const double p[] = {0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
                             771.32342877765313,   -176.61502916214059,   12.507343278686905,
                             -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  int reflect = b.binary(Prim::Less, x, scalarLike(b, 0.5, x));
  int one = scalarLike(b, 1, x);
  int y = b.select(reflect, b.binary(Prim::Sub, one, x), x);
  int z = b.binaryScalar(Prim::Sub, y, 1);
  int a = scalarLike(b, p[0], x);
  for (int i = 1; i < 9; ++i)
    a = b.binary(Prim::Add, a,
                 b.binary(Prim::Div, scalarLike(b, p[i], x), b.binaryScalar(Prim::Add, z, i)));
  int t = b.binaryScalar(Prim::Add, z, 7.5);
  int lg = b.binaryScalar(
      Prim::Add,
      b.binary(Prim::Add,
               b.binary(Prim::Sub, b.binary(Prim::Mul, b.binaryScalar(Prim::Add, z, 0.5),
                                            b.unary(Prim::Log, t)),
                        t),
               b.unary(Prim::Log, a)),
      0.5 * std::log(2 * kPi));
  int sinPiX = b.unary(Prim::Abs, b.unary(Prim::Sin, b.binaryScalar(Prim::Mul, x, kPi)));
  int reflected =
      b.binary(Prim::Sub, b.unary(Prim::Log, b.binary(Prim::Div, scalarLike(b, kPi, x), sinPiX)),
               lg);
  return b.select(reflect, reflected, lg);
}

/// digamma: the reflection psi(x) = psi(1 - x) - pi / tan(pi x) below 0.5, the recurrence to
/// shift the argument past 6, and the asymptotic series there (error ~1e-11).
int digamma64(PrimBuilder &b, int x) {
  int reflect = b.binary(Prim::Less, x, scalarLike(b, 0.5, x));
  int y = b.select(reflect, b.binary(Prim::Sub, scalarLike(b, 1, x), x), x);
  int shift = scalarLike(b, 0, x);
  for (int k = 0; k < 6; ++k)
    shift = b.binary(Prim::Add, shift,
                     b.binary(Prim::Div, scalarLike(b, 1, x), b.binaryScalar(Prim::Add, y, k)));
  int z = b.binaryScalar(Prim::Add, y, 6);
  int inv = b.binary(Prim::Div, scalarLike(b, 1, x), z);
  int inv2 = b.binary(Prim::Mul, inv, inv);
  // 1/(12z^2) - 1/(120z^4) + 1/(252z^6) - 1/(240z^8) + 1/(132z^10), by Horner in 1/z^2.
  int s = scalarLike(b, 1.0 / 132, x);
  for (double c : {-1.0 / 240, 1.0 / 252, -1.0 / 120, 1.0 / 12})
    s = fma(b, s, inv2, c);
  s = b.binary(Prim::Mul, s, inv2);
  int psi = b.binary(Prim::Sub,
                     b.binary(Prim::Sub, b.unary(Prim::Log, z), b.binaryScalar(Prim::Mul, inv, 0.5)),
                     s);
  psi = b.binary(Prim::Sub, psi, shift);
  int piX = b.binaryScalar(Prim::Mul, x, kPi);
  int reflected =
      b.binary(Prim::Sub, psi, b.binary(Prim::Div, scalarLike(b, kPi, x), b.unary(Prim::Tan, piX)));
  return b.select(reflect, reflected, psi);
}

/// erfinv: Giles' single-precision approximation refined by two Newton steps on erf (both
/// in float64); +-1 give +-inf, |x| > 1 NaN.
int erfinv64(PrimBuilder &b, int x) {
  int one = scalarLike(b, 1, x);
  int w = b.unary(Prim::Neg, b.unary(Prim::Log, b.binary(Prim::Mul, b.binary(Prim::Sub, one, x),
                                                          b.binary(Prim::Add, one, x))));
  int central = b.binaryScalar(Prim::Sub, w, 2.5);
  int p1 = scalarLike(b, 2.81022636e-08, x);
  for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                   -0.00125372503, -0.00417768164, 0.246640727, 1.50140941})
    p1 = fma(b, p1, central, c);
  int tail = b.binaryScalar(Prim::Sub, b.unary(Prim::Sqrt, w), 3);
  int p2 = scalarLike(b, -0.000200214257, x);
  for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                   0.00943887047, 1.00167406, 2.83297682})
    p2 = fma(b, p2, tail, c);
  int y = b.binary(Prim::Mul, b.select(b.binary(Prim::Less, w, scalarLike(b, 5, x)), p1, p2), x);
  for (int step = 0; step < 2; ++step) {
    int slope = b.binaryScalar(
        Prim::Mul, b.unary(Prim::Exp, b.unary(Prim::Neg, b.binary(Prim::Mul, y, y))),
        2 / std::sqrt(kPi));
    y = b.binary(Prim::Sub, y,
                 b.binary(Prim::Div, b.binary(Prim::Sub, b.unary(Prim::Erf, y), x), slope));
  }
  int edge = b.binary(Prim::Equal, b.unary(Prim::Abs, x), one);
  return b.select(edge, b.binary(Prim::Copysign, scalarLike(b, INFINITY, x), x), y);
}

/// The next representable value of x's dtype after x toward y (C's nextafter), computed in
/// float64 where every step is exact: the spacing at |x| in [2^(e-1), 2^e) is 2^(e - digits)
/// (never below the smallest subnormal), halved below a power of two going toward zero.
int nextAfter(PrimBuilder &b, int x, int y) {
  DType d = b.meta(x).dtype;
  struct Format {
    int digits, minExponent;
    double maxFinite;
  };
  Format f = d == DType::Float64    ? Format{53, -1074, DBL_MAX}
             : d == DType::Float16  ? Format{11, -24, 65504.0}
             : d == DType::BFloat16 ? Format{8, -133, 0x1.fep127}
                                    : Format{24, -149, FLT_MAX};
  int x64 = b.cast(x, DType::Float64), y64 = b.cast(y, DType::Float64);
  int ax = b.unary(Prim::Abs, x64);
  // e with 2^(e-1) <= |x| < 2^e: log2 rounds near powers of two, so one step either way.
  int e = b.binaryScalar(Prim::Add, b.unary(Prim::Floor, b.unary(Prim::Log2, ax)), 1);
  auto pow2 = [&](int exponent, double offset) {
    return b.unary(Prim::Exp2, b.binaryScalar(Prim::Add, exponent, offset));
  };
  e = b.select(b.binary(Prim::Greater, pow2(e, -1), ax), b.binaryScalar(Prim::Sub, e, 1), e);
  e = b.select(b.binary(Prim::LessEqual, pow2(e, 0), ax), b.binaryScalar(Prim::Add, e, 1), e);
  int tiny = scalarLike(b, std::ldexp(1.0, f.minExponent), x64);
  int up = b.binary(Prim::Max, pow2(e, -f.digits), tiny);
  int down = b.select(b.binary(Prim::Equal, pow2(e, -1), ax),
                      b.binary(Prim::Max, pow2(e, -1 - f.digits), tiny), up);
  int zero = scalarLike(b, 0, x64);
  int toward = b.binary(Prim::Equal, b.binary(Prim::Greater, x64, zero),
                        b.binary(Prim::Less, y64, x64), DType::Bool);
  int r =
      b.binary(Prim::Copysign,
               b.select(toward, b.binary(Prim::Sub, ax, down), b.binary(Prim::Add, ax, up)), x64);
  r = b.select(b.binary(Prim::Equal, x64, zero), b.binary(Prim::Copysign, tiny, y64), r);
  r = b.select(isInf(b, x64), b.binary(Prim::Copysign, scalarLike(b, f.maxFinite, x64), x64), r);
  r = b.select(b.binary(Prim::Equal, x64, y64), y64, r);
  r = b.select(b.binary(Prim::LogicalOr, isNan(b, x64), isNan(b, y64), DType::Bool),
               b.binary(Prim::Add, x64, y64), r);
  return b.cast(r, d);
}

/// The modified Bessel function I0: its power series sum ((x/2)^k / k!)^2 up to |x| = 20,
/// the asymptotic series e^|x| / sqrt(2 pi |x|) (1 + 1/(8|x|) + 9/(128|x|^2) + ...) beyond.
int i064(PrimBuilder &b, int x) {
  int ax = b.unary(Prim::Abs, x);
  int small = b.binary(Prim::Min, ax, scalarLike(b, 20, x));
  int q = b.binaryScalar(Prim::Mul, b.binary(Prim::Mul, small, small), 0.25);
  int term = scalarLike(b, 1, x), sum = term;
  for (int k = 1; k <= 64; ++k) {
    term = b.binaryScalar(Prim::Mul, b.binary(Prim::Mul, term, q), 1.0 / (double(k) * k));
    sum = b.binary(Prim::Add, sum, term);
  }
  int big = b.binary(Prim::Max, ax, scalarLike(b, 20, x));
  int inv = b.binary(Prim::Div, scalarLike(b, 1, x), big);
  int series = scalarLike(b, 0, x);
  double c = 1;
  std::vector<double> coefficients{1};
  for (int k = 1; k <= 8; ++k) { // ((2k-1)!!)^2 / (k! 8^k)
    c *= (2.0 * k - 1) * (2.0 * k - 1) / (8.0 * k);
    coefficients.push_back(c);
  }
  for (size_t k = coefficients.size(); k-- > 0;)
    series = fma(b, series, inv, coefficients[k]);
  int asymptotic = b.binary(
      Prim::Mul, series,
      b.binary(Prim::Div, b.unary(Prim::Exp, big),
               b.unary(Prim::Sqrt, b.binaryScalar(Prim::Mul, big, 2 * kPi))));
  return b.select(b.binary(Prim::LessEqual, ax, scalarLike(b, 20, x)), sum, asymptotic);
}

LowerFn special(std::string xn, int (*f)(PrimBuilder &, int)) {
  return [=](Lowering &L) { L.out(inFloat64(L.b, L.in(xn), f)); };
}

/// A float result of a floating (or integer, computed in float32) input.
LowerFn floatMap(std::string xn, std::function<int(PrimBuilder &, int)> f) {
  return [=](Lowering &L) { L.out(f(L.b, floatInput(L, xn))); };
}

/// Tensor-or-scalar operands promoted to a floating dtype.
Operands floatOperands(Lowering &L, const std::string &xn, const std::string &yn) {
  Operands o = promoteOperands(L, xn, yn);
  DType d = floatingResult(o.dtype);
  return {L.b.cast(o.x, d), L.b.cast(o.y, d), d};
}

LowerFn floatPair(std::string xn, std::string yn, std::function<int(PrimBuilder &, int, int)> f) {
  return [=](Lowering &L) {
    Operands o = floatOperands(L, xn, yn);
    L.out(f(L.b, o.x, o.y));
  };
}

int classify(Lowering &L, const std::string &xn, std::function<int(PrimBuilder &, int)> f,
             bool integers) {
  int x = L.in(xn);
  if (!isFloating(L.b.meta(x).dtype)) // no NaN or infinity among integers
    return L.b.fill(integers, L.b.meta(x).shape, DType::Bool);
  return f(L.b, x);
}

int logAddExp(PrimBuilder &b, int x, int y, bool base2) {
  int gap = b.unary(Prim::Neg, b.unary(Prim::Abs, b.binary(Prim::Sub, x, y)));
  int tail = base2 ? b.binaryScalar(Prim::Div, b.unary(Prim::Log1p, b.unary(Prim::Exp2, gap)),
                                    std::log(2.0))
                   : b.unary(Prim::Log1p, b.unary(Prim::Exp, gap));
  int sum = b.binary(Prim::Add, b.binary(Prim::Max, x, y), tail);
  // Equal arguments (infinities too, where the gap is NaN) add log(2) (or 1).
  return b.select(b.binary(Prim::Equal, x, y),
                  b.binaryScalar(Prim::Add, x, base2 ? 1.0 : std::log(2.0)), sum);
}

int nanAware(PrimBuilder &b, Prim prim, int x, int y) { // fmax, fmin: NaN only if both are
  return b.select(isNan(b, x), y, b.select(isNan(b, y), x, b.binary(prim, x, y)));
}

} // namespace

int isClose(Lowering &L, const std::string &xn, const std::string &yn) {
  Operands o = promoteOperands(L, xn, yn);
  DType d = floatingResult(o.dtype);
  PrimBuilder &b = L.b;
  int x = b.cast(o.x, d), y = b.cast(o.y, d);
  int tol = b.binaryScalar(Prim::Add,
                           b.binaryScalar(Prim::Mul, b.unary(Prim::Abs, y), L.args.scalar("rtol")),
                           L.args.scalar("atol"));
  int close = b.binary(Prim::LessEqual, b.unary(Prim::Abs, b.binary(Prim::Sub, x, y)), tol);
  close = b.binary(Prim::LogicalOr, close, b.binary(Prim::Equal, x, y), DType::Bool);
  if (L.args.boolValue("equal_nan"))
    close = b.binary(Prim::LogicalOr, close,
                     b.binary(Prim::LogicalAnd, isNan(b, x), isNan(b, y), DType::Bool), DType::Bool);
  return close;
}

void registerMath(OpTable &t) {
  struct Unary {
    const char *name;
    Prim prim;
    bool paddle; // paddle has it under the same name
  };
  const Unary unaries[] = {
      {"tan", Prim::Tan, true},     {"asin", Prim::Asin, true},   {"acos", Prim::Acos, true},
      {"atan", Prim::Atan, true},   {"sinh", Prim::Sinh, true},   {"cosh", Prim::Cosh, true},
      {"asinh", Prim::Asinh, true}, {"acosh", Prim::Acosh, true}, {"atanh", Prim::Atanh, true},
      {"expm1", Prim::Expm1, true}, {"exp2", Prim::Exp2, false},  {"log2", Prim::Log2, true},
      {"log10", Prim::Log10, true}, {"erfc", Prim::Erfc, false},
  };
  for (const Unary &op : unaries) {
    torchLower(t, op.name, unaryFloat(op.prim, "input"));
    if (op.paddle)
      paddleLower(t, op.name, unaryFloat(op.prim, "x"));
  }
  paddleLower(t, "trunc", unarySame(Prim::Trunc, "input"));
  torchLower(t, "trunc", unarySame(Prim::Trunc, "input"));

  auto frac = [](std::string xn) {
    return [=](Lowering &L) {
      int x = L.in(xn);
      L.out(L.b.binary(Prim::Sub, x, L.b.unary(Prim::Trunc, x)));
    };
  };
  paddleLower(t, "frac", frac("x"));
  torchLower(t, "frac", frac("input"));
  auto sinc = [](PrimBuilder &b, int x) { // sin(pi x) / (pi x), 1 at 0
    int px = b.binaryScalar(Prim::Mul, x, kPi);
    return b.select(b.binary(Prim::Equal, x, scalarLike(b, 0, x)), scalarLike(b, 1, x),
                    b.binary(Prim::Div, b.unary(Prim::Sin, px), px));
  };
  paddleLower(t, "sinc", floatMap("x", sinc));
  torchLower(t, "sinc", floatMap("input", sinc));
  auto scaled = [](double k) {
    return [k](PrimBuilder &b, int x) { return b.binaryScalar(Prim::Mul, x, k); };
  };
  paddleLower(t, "deg2rad", floatMap("x", scaled(kPi / 180)));
  torchLower(t, "deg2rad", floatMap("input", scaled(kPi / 180)));
  paddleLower(t, "rad2deg", floatMap("x", scaled(180 / kPi)));
  torchLower(t, "rad2deg", floatMap("input", scaled(180 / kPi)));
  torchLower(t, "positive", [](Lowering &L) { L.out(L.in("input")); });

  for (const char *xn : {"x", "input"}) {
    std::string x = xn;
    auto bind = [&](const std::string &name, LowerFn f) {
      x == "x" ? paddleLower(t, name, f) : torchLower(t, name, f);
    };
    bind("isnan", [x](Lowering &L) { L.out(classify(L, x, isNan, false)); });
    bind("isinf", [x](Lowering &L) { L.out(classify(L, x, isInf, false)); });
    bind("isfinite", [x](Lowering &L) {
      L.out(classify(
          L, x,
          [](PrimBuilder &b, int v) {
            return b.unary(Prim::LogicalNot,
                           b.binary(Prim::LogicalOr, isNan(b, v), isInf(b, v), DType::Bool));
          },
          true));
    });
    for (bool positive : {true, false})
      bind(positive ? "isposinf" : "isneginf", [x, positive](Lowering &L) {
        L.out(classify(
            L, x,
            [positive](PrimBuilder &b, int v) {
              return b.binary(Prim::Equal, v, scalarLike(b, positive ? INFINITY : -INFINITY, v));
            },
            false));
      });
    bind("isreal", [x](Lowering &L) { // real dtypes only: every element is real
      L.out(L.b.fill(1, L.b.meta(L.in(x)).shape, DType::Bool));
    });
    bind("signbit", [x](Lowering &L) { // -0.0 and -NaN too: the sign bit, through copysign
      int v = L.in(x);
      if (!isFloating(L.b.meta(v).dtype)) {
        L.out(L.b.binary(Prim::Less, v, scalarLike(L.b, 0, v)));
        return;
      }
      int s = L.b.binary(Prim::Copysign, scalarLike(L.b, 1, v), v);
      L.out(L.b.binary(Prim::Less, s, scalarLike(L.b, 0, v)));
    });
    bind("nan_to_num", [x](Lowering &L) {
      int v = L.in(x);
      DType d = L.b.meta(v).dtype;
      if (!isFloating(d)) {
        L.out(v);
        return;
      }
      double top = d == DType::Float64   ? std::numeric_limits<double>::max()
                   : d == DType::Float16 ? 65504.0
                   : d == DType::BFloat16 ? 3.3895313892515355e38
                                          : double(std::numeric_limits<float>::max());
      auto bound = [&](const char *name, double fallback) {
        return L.args.isNone(name) ? fallback : L.args.scalar(name);
      };
      v = L.b.select(isNan(L.b, v), scalarLike(L.b, bound("nan", 0), v), v);
      v = L.b.select(L.b.binary(Prim::Equal, v, scalarLike(L.b, INFINITY, v)),
                     scalarLike(L.b, bound("posinf", top), v), v);
      v = L.b.select(L.b.binary(Prim::Equal, v, scalarLike(L.b, -INFINITY, v)),
                     scalarLike(L.b, bound("neginf", -top), v), v);
      L.out(v);
    });
    bind("logit", [x](Lowering &L) { // log(p / (1 - p)), p clamped to [eps, 1 - eps] if given
      int p = floatInput(L, x);
      if (!L.args.isNone("eps")) {
        double eps = L.args.scalar("eps");
        p = L.b.binary(Prim::Min, L.b.binary(Prim::Max, p, scalarLike(L.b, eps, p)),
                       scalarLike(L.b, 1 - eps, p));
      }
      L.out(L.b.unary(Prim::Log, L.b.binary(Prim::Div, p,
                                            L.b.binary(Prim::Sub, scalarLike(L.b, 1, p), p))));
    });
    bind("erfinv", special(x, erfinv64));
    bind("lgamma", special(x, lgamma64));
    bind("digamma", special(x, digamma64));
    bind("i0", special(x, i064));
  }

  auto angle = [](std::string xn) {
    return [=](Lowering &L) { // of a real number: 0, or pi below 0 (NaN stays NaN)
      int x = floatInput(L, xn);
      int v = L.b.select(L.b.binary(Prim::Less, x, scalarLike(L.b, 0, x)), scalarLike(L.b, kPi, x),
                         scalarLike(L.b, 0, x));
      L.out(L.b.select(isNan(L.b, x), x, v));
    };
  };
  torchLower(t, "angle", angle("input"));
  paddleLower(t, "angle", angle("x"));
  torchLower(t, "frexp", [](Lowering &L) { // x = mantissa * 2^exponent, |mantissa| in [0.5, 1)
    PrimBuilder &b = L.b;
    int x = floatInput(L, "input");
    DType d = b.meta(x).dtype;
    int x64 = b.cast(x, DType::Float64);
    int ax = b.unary(Prim::Abs, x64);
    int e = b.binaryScalar(Prim::Add, b.unary(Prim::Floor, b.unary(Prim::Log2, ax)), 1);
    int m = b.binary(Prim::Div, x64, b.unary(Prim::Exp2, e));
    // log2 rounds near powers of two: one step either way puts |m| in [0.5, 1).
    int low = b.binary(Prim::Less, b.unary(Prim::Abs, m), scalarLike(b, 0.5, m));
    m = b.select(low, b.binaryScalar(Prim::Mul, m, 2), m);
    e = b.select(low, b.binaryScalar(Prim::Sub, e, 1), e);
    int high = b.binary(Prim::GreaterEqual, b.unary(Prim::Abs, m), scalarLike(b, 1, m));
    m = b.select(high, b.binaryScalar(Prim::Mul, m, 0.5), m);
    e = b.select(high, b.binaryScalar(Prim::Add, e, 1), e);
    // 0, infinities and NaN: the mantissa is x, the exponent 0.
    int special = b.binary(Prim::LogicalOr, b.binary(Prim::Equal, x64, scalarLike(b, 0, x64)),
                           b.binary(Prim::LogicalOr, isInf(b, x64), isNan(b, x64), DType::Bool),
                           DType::Bool);
    L.out(b.cast(b.select(special, x64, m), d));
    L.out(b.cast(b.select(special, scalarLike(b, 0, e), e), DType::Int32));
  });

  struct Binary {
    const char *paddle; // nullptr: torch only
    const char *torch;
    std::function<int(PrimBuilder &, int, int)> f;
  };
  const Binary binaries[] = {
      {"atan2", "atan2", [](PrimBuilder &b, int x, int y) { return b.binary(Prim::Atan2, x, y); }},
      {"copysign", "copysign",
       [](PrimBuilder &b, int x, int y) { return b.binary(Prim::Copysign, x, y); }},
      {"hypot", "hypot",
       [](PrimBuilder &b, int x, int y) {
         return b.unary(Prim::Sqrt,
                        b.binary(Prim::Add, b.binary(Prim::Mul, x, x), b.binary(Prim::Mul, y, y)));
       }},
      {"logaddexp", "logaddexp",
       [](PrimBuilder &b, int x, int y) { return logAddExp(b, x, y, false); }},
      {nullptr, "logaddexp2",
       [](PrimBuilder &b, int x, int y) { return logAddExp(b, x, y, true); }},
      {nullptr, "xlogy",
       [](PrimBuilder &b, int x, int y) { // 0 where x is 0, NaN where y is
         int v = b.select(b.binary(Prim::Equal, x, scalarLike(b, 0, x)), scalarLike(b, 0, x),
                          b.binary(Prim::Mul, x, b.unary(Prim::Log, y)));
         return b.select(isNan(b, y), y, v);
       }},
      {"nextafter", "nextafter", nextAfter},
      {"ldexp", "ldexp",
       [](PrimBuilder &b, int x, int y) { return b.binary(Prim::Mul, x, b.unary(Prim::Exp2, y)); }},
  };
  for (const Binary &op : binaries) {
    torchLower(t, op.torch, floatPair("input", "other", op.f));
    if (op.paddle)
      paddleLower(t, op.paddle, floatPair("x", "y", op.f));
  }
  torchLower(t, "fmod", binaryOp(Prim::Fmod, "input", "other"));
  for (bool isMax : {true, false}) {
    auto f = [isMax](std::string xn, std::string yn) {
      return [=](Lowering &L) {
        Operands o = promoteOperands(L, xn, yn);
        Prim p = isMax ? Prim::Max : Prim::Min;
        L.out(isFloating(o.dtype) ? nanAware(L.b, p, o.x, o.y) : L.b.binary(p, o.x, o.y));
      };
    };
    torchLower(t, isMax ? "fmax" : "fmin", f("input", "other"));
    paddleLower(t, isMax ? "fmax" : "fmin", f("x", "y"));
  }
  torchLower(t, "float_power", [](Lowering &L) { // always in float64
    Operands o = promoteOperands(L, "input", "exponent");
    L.out(L.b.binary(Prim::Pow, L.b.cast(o.x, DType::Float64), L.b.cast(o.y, DType::Float64)));
  });
  torchLower(t, "rsub", [](Lowering &L) { // other - alpha * input
    Operands o = promoteOperands(L, "input", "other");
    int x = L.args.scalar("alpha") == 1 ? o.x : L.b.binaryScalar(Prim::Mul, o.x, L.args.scalar("alpha"));
    L.out(L.b.binary(Prim::Sub, o.y, x, o.dtype));
  }, false);
  auto heaviside = [](std::string xn, std::string vn) {
    return [=](Lowering &L) {
      Operands o = promoteOperands(L, xn, vn);
      int zero = L.b.fill(0, {}, o.dtype);
      int step = L.b.cast(L.b.binary(Prim::Greater, o.x, zero), o.dtype);
      L.out(L.b.select(L.b.binary(Prim::Equal, o.x, zero), o.y, step));
    };
  };
  torchLower(t, "heaviside", heaviside("input", "values"));
  paddleLower(t, "heaviside", heaviside("x", "y"));
  auto lerp = [](std::string xn, std::string en, std::string wn) {
    return [=](Lowering &L) { // torch's two-sided form: exact at both ends
      Operands o = floatOperands(L, xn, en);
      const Arg &w = L.args.get(wn);
      int weight = w.isTensor() ? L.b.cast(L.in(wn), o.dtype) : L.b.fill(w.scalar(), {}, o.dtype);
      int diff = L.b.binary(Prim::Sub, o.y, o.x);
      int low = L.b.binary(Prim::Add, o.x, L.b.binary(Prim::Mul, weight, diff));
      int high = L.b.binary(
          Prim::Sub, o.y,
          L.b.binary(Prim::Mul, diff, L.b.binary(Prim::Sub, L.b.fill(1, {}, o.dtype), weight)));
      L.out(L.b.select(L.b.binary(Prim::Less, weight, L.b.fill(0.5, {}, o.dtype)), low, high));
    };
  };
  torchLower(t, "lerp", lerp("input", "end", "weight"));
  paddleLower(t, "lerp", lerp("x", "y", "weight"));
  for (Prim p : {Prim::Mul, Prim::Div})
    torchLower(t, p == Prim::Mul ? "addcmul" : "addcdiv", [p](Lowering &L) {
      int a = L.in("tensor1"), c = L.in("tensor2");
      DType d = promoteTypes(L.b.meta(L.in("input")).dtype,
                             promoteTypes(L.b.meta(a).dtype, L.b.meta(c).dtype));
      if (p == Prim::Div)
        d = floatingResult(d);
      int term = L.b.binary(p, L.b.cast(a, d), L.b.cast(c, d), d);
      if (L.args.scalar("value") != 1)
        term = L.b.binaryScalar(Prim::Mul, term, L.args.scalar("value"));
      L.out(L.b.binary(Prim::Add, L.b.cast(L.in("input"), d), term, d));
    });
  auto isclose = [](std::string xn, std::string yn) {
    return [=](Lowering &L) { L.out(isClose(L, xn, yn)); };
  };
  torchLower(t, "isclose", isclose("input", "other"));
  paddleLower(t, "isclose", isclose("x", "y"));
}

} // namespace sotc::ops::lowering
