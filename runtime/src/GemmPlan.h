//===- GemmPlan.h - A manifest's GEMM step, as every backend reads it ---------------------===//
//
// Row-major, per batch index: C = act(alpha * op(A) * op(B) + beta * C), where C first holds
// the bias row in every row when the step has a bias (docs/manifest.md). The CPU backend runs
// it through oneDNN or CBLAS, the CUDA backend through cuBLASLt (no erf-GELU there).
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_GEMMPLAN_H
#define SOTC_RUNTIME_GEMMPLAN_H

#include "runtime/src/Sizes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sotc::runtime {

struct GemmPlan {
  enum class Type { F16, BF16, F32, F64 } type = Type::F32;
  /// BF16 with an F32 `type`: A and B are bfloat16, C and the bias float32 (the manifest's
  /// operand_dtype); otherwise A and B are of `type`.
  Type operands = Type::F32;
  bool bf16Operands() const { return type == Type::F32 && operands == Type::BF16; }
  enum class Activation { None, Relu, GeluTanh, GeluErf } activation = Activation::None;
  int64_t m = 0, n = 0, k = 0;
  bool transposeA = false, transposeB = false;
  int64_t lda = 0, ldb = 0, ldc = 0;
  double alpha = 1, beta = 0;
  bool bias = false; // a third input: n elements added to every row of C
  /// Batch sizes and, per operand, the element stride of each batch dimension (0: broadcast).
  std::vector<int64_t> batch, strideA, strideB, strideC;
  /// Over dynamic sizes: the powers of them each count holds (the manifest's "64*s0*s1"), in
  /// forEachCount's order, the counts themselves at every size 1; Artifact's atSizes computes
  /// them for the call's sizes. Empty when no count holds one.
  std::vector<Powers> powers;

  /// Calls `f` on m, n, k, lda, ldb, ldc, then the batch sizes and strides of A, B and C.
  template <class F> void forEachCount(F f) {
    for (int64_t *c : {&m, &n, &k, &lda, &ldb, &ldc})
      f(*c);
    for (std::vector<int64_t> *list : {&batch, &strideA, &strideB, &strideC})
      for (int64_t &c : *list)
        f(c);
  }

  /// The number of (m x n) products, all batch dimensions together.
  int64_t batchCount() const;
  /// The offsets (in elements) of A, B and C for the `index`-th product, last dim fastest.
  void offsets(int64_t index, int64_t &a, int64_t &b, int64_t &c) const;
};

/// Checks a step read from a manifest (dimensions, leading dimensions, strides); an empty
/// string when it holds together, else why not.
std::string validate(const GemmPlan &plan);

} // namespace sotc::runtime

#endif // SOTC_RUNTIME_GEMMPLAN_H
