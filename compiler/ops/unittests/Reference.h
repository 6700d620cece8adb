//===- Reference.h - A small numpy-like evaluator for checking decompositions ------------===//
//
// Two independent paths over the same data: evaluate() runs a PrimGraph primitive by
// primitive; the helpers below (map, zip, reduce, ...) are what the tests write each API's
// reference formula with. Values are doubles in row-major order; integer dtypes are exact.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_OPS_UNITTESTS_REFERENCE_H
#define SOTC_OPS_UNITTESTS_REFERENCE_H

#include "compiler/ops/Primitives.h"

#include <functional>
#include <random>
#include <vector>

namespace sotc::ops::ref {

struct Buffer {
  TensorMeta meta;
  std::vector<double> data;

  double at(const std::vector<int64_t> &index) const;
};

/// Random data: uniform in [lo, hi), rounded to integers for integer dtypes, 0/1 for bool.
Buffer random(const TensorMeta &meta, std::mt19937 &rng, double lo = -2, double hi = 2);

/// Runs the primitives of `graph` on `inputs`.
std::vector<Buffer> evaluate(const PrimGraph &graph, const std::vector<Buffer> &inputs);

// numpy-style helpers for reference formulas.
Buffer map(const Buffer &x, const std::function<double(double)> &f);
Buffer zip(const Buffer &x, const Buffer &y, const std::function<double(double, double)> &f);
Buffer scalar(double v, DType dtype = DType::Float32);
/// Reduces over `axes` (sorted), keeping them as size 1.
Buffer reduce(const Buffer &x, const std::vector<int64_t> &axes, double init,
              const std::function<double(double, double)> &f);
Buffer reshape(const Buffer &x, std::vector<int64_t> shape);
Buffer permute(const Buffer &x, const std::vector<int64_t> &perm);
Buffer matmul2d(const Buffer &x, const Buffer &y); // [m,k] x [k,n]
Buffer withDType(Buffer x, DType dtype);

/// Python's floor division and modulo, round-half-even, and dtype rounding.
double floorDiv(double a, double b);
double pyMod(double a, double b);
double roundHalfEven(double v);
double castTo(double v, DType dtype);

} // namespace sotc::ops::ref

#endif // SOTC_OPS_UNITTESTS_REFERENCE_H
