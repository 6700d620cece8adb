//===- Sizes.h - A call's dynamic sizes, and the powers of them a count holds -------------===//
//
// A trace may have dynamic sizes s0, s1, ... (the inputs' `?` and the sizes they name). A
// manifest writes a dimension of s_k as -1 - k in a shape (s0: -1), one that is a product of
// them as its text ("s0*s1"), and a count that holds
// them as their powers times a number ("64*s0*s1^2"); a run binds each size from the first
// input that has it and resolves the plan at those sizes (Artifact's atSizes).
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_SIZES_H
#define SOTC_RUNTIME_SIZES_H

#include "contract/SizeProduct.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

namespace sotc::runtime {

constexpr int kMaxSizes = contract::kMaxSizeSymbols;
/// The most sizes one CPU kernel takes (its C signature: runtime/src/cpu/CpuBackend.cpp).
constexpr size_t kMaxKernelSizes = 4;
/// A call's value of each dynamic size (0 for the sizes its entry does not have).
using Sizes = contract::SizeValues;
/// The power of each dynamic size a count holds ("64*s0*s1^2": 1, 2, 0, ...).
using Powers = decltype(contract::SizeProduct::powers);

inline bool anyPower(const Powers &p) {
  return std::any_of(p.begin(), p.end(), [](int v) { return v != 0; });
}
/// The size a manifest shape's dimension is (k for -1 - k), or -1 for a static one.
inline int sizeOfDim(int64_t d) { return d < 0 && d >= -kMaxSizes ? static_cast<int>(-1 - d) : -1; }
/// A shape's dimension that is a product of the sizes (the manifest's "s0*s1", "16*s0":
/// rows of a batch and a sequence merged) is kept as -kMaxSizes - 1 - i for the i-th product
/// its buffer lists; this gives i, or -1.
inline int productOfDim(int64_t d) {
  return d < -kMaxSizes ? static_cast<int>(-kMaxSizes - 1 - d) : -1;
}
/// How a mismatch table writes a dynamic size: `?` for s0 (the only one most artifacts have),
/// s1, s2, ... for the others.
inline std::string sizeName(int k) { return k == 0 ? "?" : "s" + std::to_string(k); }

} // namespace sotc::runtime

#endif // SOTC_RUNTIME_SIZES_H
