//===- PlanCheck.h - A manifest's plan checked against itself -------------------------------===//
//
// What readManifest asks of a plan before anything runs, so that a corrupt manifest is a coded
// error and never an access outside a buffer: every tensor's bytes are its shape times its
// dtype (overflow-checked, within kMaxBytes); arena buffers lie inside their arena and those
// live at the same time never share a byte; every step's operands are buffers of its plan of
// the dtypes and sizes its kind needs (a GEMM's m, n, k, leading dimensions and batch strides
// inside its operands), and no step writes an input; what a segment passes on has the
// receiving inputs' dtype and shape; segment 0's inputs are bound by the entry's parameters,
// the weights or their preparation, with the same dtype and shape.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_PLANCHECK_H
#define SOTC_RUNTIME_PLANCHECK_H

#include "runtime/src/Artifact.h"

#include <cstdint>
#include <vector>

namespace sotc::runtime {

/// The most bytes one buffer or arena may have (2^48: beyond any machine sotc runs on).
constexpr int64_t kMaxBytes = int64_t(1) << 48;

/// Bytes of a tensor of `dtype` and `shape`, or -1 when the dtype is unknown, a dimension is
/// negative, the rank is beyond SOTC_MAX_RANK or the size is beyond kMaxBytes.
int64_t tensorBytes(int dtype, const std::vector<int64_t> &shape);

/// E8001 naming the first thing in `artifact`'s plans that does not hold (see above).
void checkPlan(const Artifact &artifact);

/// E8001 where segment `segment` of `from`, a size end, passes a tensor that does not hold
/// the input of its next segment in `to`, the plan at the size it counted.
void checkCountedJump(const Artifact &from, size_t segment, const Artifact &to);

} // namespace sotc::runtime

#endif // SOTC_RUNTIME_PLANCHECK_H
