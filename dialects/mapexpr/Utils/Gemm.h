//===- Gemm.h - A matmul as calls of a row-major GEMM library -----------------------------===//
//
// A matmul group that a GEMM library can run (OpenBLAS's cblas_?gemm on the CPU) is not a
// kernel but a plan step. This is the step's shape as the library sees it, row-major:
//
//   for every batch index b:  C[b] = op(A[b]) (m x k) * op(B[b]) (k x n)  (+ bias rows)
//
// with leading dimensions and, per batch dimension, element strides into A, B and C (0 where
// an operand broadcasts). 1-D operands are a 1 x k row or a k x 1 column; batch dimensions of
// size 1 are dropped, and a batch that only A has is folded into m when A is not transposed
// (one large GEMM instead of many small ones).
//
// A dynamic size (sotc-sir-check-batch-dims) may be any dimension of A or B (negative in the
// shapes: ops::dynamicDim names which): the plan is made for each size at its stand-in
// (sched::SizeStandIns), and each count (m, n, k, a leading dimension, a batch size or
// stride) that holds powers of them is those powers times a static number (sizePowers,
// staticFactor), which the manifest writes as `64*s0` and the runtime computes per call.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_MAPEXPR_GEMM_H
#define SOTC_MAPEXPR_GEMM_H

#include "dialects/sched/Utils/Mesh.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sotc::mapexpr {

struct GemmPlan {
  int64_t m = 0, n = 0, k = 0;
  bool transposeA = false, transposeB = false;
  int64_t lda = 0, ldb = 0, ldc = 0;
  /// The matmul's result shape (C's, before size-1 batch dimensions are dropped).
  std::vector<int64_t> shape;
  /// The batch loop: sizes, and per operand the element stride of each batch dimension.
  std::vector<int64_t> batch, strideA, strideB, strideC;
  /// The stand-ins the counts hold where they hold dynamic sizes.
  sched::SizeStandIns standIns;
};

/// The plan of `a @ b` (matmul's transpose flags and broadcasting); nullopt with `why` set
/// when the shapes do not form a matmul.
std::optional<GemmPlan> planGemm(const std::vector<int64_t> &a, const std::vector<int64_t> &b,
                                 bool transposeA, bool transposeB, const sched::SizeStandIns &sizes,
                                 std::string *why = nullptr);

} // namespace sotc::mapexpr

#endif // SOTC_MAPEXPR_GEMM_H
