//===- Cases.h - Numeric cases of the operator table's decompositions --------------------===//
//
// A case calls one or several entries with random tensors and literal arguments and compares
// the lowered graph's results with a reference formula written with Reference.h's helpers.
// DecompositionTest.cpp runs every case and checks that every entry has one.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_OPS_UNITTESTS_CASES_H
#define SOTC_OPS_UNITTESTS_CASES_H

#include "compiler/ops/Types.h"
#include "compiler/ops/unittests/Reference.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace sotc::ops::cases {

using ref::Buffer;
using Refs = std::vector<Buffer>;
using RefFn = std::function<Refs(const Refs &)>;

/// One call form shared by several entries (e.g. paddle.exp, Tensor.exp, torch.exp).
struct Case {
  std::vector<std::string> names;
  std::vector<TensorMeta> tensors; // random inputs, referenced as T(i) in `positional`
  std::vector<Arg> positional;
  std::vector<std::pair<std::string, Arg>> keywords;
  RefFn reference;
  double lo = -2, hi = 2;
};

inline const TensorMeta kX{{3, 4}, DType::Float32};
inline const TensorMeta kRow{{4}, DType::Float32};
inline const TensorMeta kI{{3, 4}, DType::Int32};
inline const TensorMeta kB{{3, 4}, DType::Bool};

/// Placeholder for the i-th random tensor of a case.
inline Arg T(int i) {
  Arg a = Arg::ofTensor({});
  a.intValue = i; // the slot; replaced by the tensor's metadata when the case runs
  return a;
}

inline RefFn elementwise(std::function<double(double)> f, DType out = DType::Float32) {
  return [=](const Refs &in) { return Refs{ref::withDType(ref::map(in[0], f), out)}; };
}

/// Every case (DecompositionTest.cpp).
std::vector<Case> all();
/// The framework functionals: activations, padding, resampling, one-hot, losses and
/// distances (FunctionalCases.cpp).
void addFunctionalCases(std::vector<Case> &c);

} // namespace sotc::ops::cases

#endif // SOTC_OPS_UNITTESTS_CASES_H
