//===- Inference.h - Shape and dtype rules shared by the operator entries ----------------===//
//
// Broadcasting follows numpy; dtype promotion follows paddle 2.6+ (documented, with where torch
// differs, in docs/ops.md). Every failure is a CodedError naming the operator and the shapes.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_OPS_INFERENCE_H
#define SOTC_OPS_INFERENCE_H

#include "compiler/ops/Types.h"
#include "compiler/support/Diagnostics.h"

#include <string>
#include <vector>

namespace sotc::ops {

/// Two different dynamic sizes where one is needed (a broadcast of B rows against N rows, a
/// matmul contracting them): the frontend takes them as one size, with a relation guard.
class SizesMeet : public CodedError {
public:
  SizesMeet(int first, int second, const std::string &message)
      : CodedError(DiagCode::OpShapeMismatch, message), first(first), second(second) {}
  int first, second; // the symbols
};
/// A -1 that splits a dynamic size ([?, 6] viewed as (-1, 4): whole for even batches only):
/// the frontend takes the size as a multiple of `factor` (2*s0), with a guard, and infers
/// again; elsewhere the E2010 it is.
class SizeNotWhole : public CodedError {
public:
  SizeNotWhole(int symbol, int64_t factor, const std::string &message)
      : CodedError(DiagCode::OpBadAttribute, message), symbol(symbol), factor(factor) {}
  int symbol;
  int64_t factor;
};
/// SizesMeet for dims `a` and `b` where each is one symbol; where one is a product of sizes
/// (s0*s1 against s2), E2008: such a relation is not guarded.
[[noreturn]] void throwSizesMeet(int64_t a, int64_t b, const std::string &message);

/// numpy broadcasting of two shapes; E2008 when they do not broadcast.
std::vector<int64_t> broadcastShapes(const std::string &op, const std::vector<int64_t> &a,
                                     const std::vector<int64_t> &b);

/// The dtype of a binary operation between two tensors.
DType promoteTypes(DType a, DType b);
/// The dtype of a binary operation between a tensor and a Python scalar (bool/int/float).
DType promoteWithScalar(DType tensor, const Arg &scalar);
/// Floating dtype for operations that produce floats from integer inputs (exp, divide, mean).
DType floatingResult(DType dtype);

/// A possibly negative axis, checked against `rank`; E2010 when out of range. A 0-d tensor
/// takes 0 and -1 (as paddle and torch do), which stand for no dimension of it.
int64_t normalizeAxis(const std::string &op, int64_t axis, int64_t rank);
/// normalizeAxis for an operation that needs the dimension itself (a size, an index along
/// it): E2010 for a 0-d tensor too.
int64_t normalizeDim(const std::string &op, int64_t axis, int64_t rank);
/// Sorted, unique, normalized axes; an empty list means every axis. A 0-d tensor has none.
std::vector<int64_t> normalizeAxes(const std::string &op, const std::vector<int64_t> &axes,
                                   int64_t rank);
std::vector<int64_t> reducedShape(const std::vector<int64_t> &shape,
                                  const std::vector<int64_t> &axes, bool keepdim);
/// A reshape's result: -1 is inferred (once); with `zeroCopies` (paddle.reshape) 0 copies the
/// input dimension, else it is a dimension of size 0; E2008 when the element counts differ.
std::vector<int64_t> reshapeShape(const std::string &op, const std::vector<int64_t> &in,
                                  const std::vector<int64_t> &target, bool zeroCopies = false);
/// matmul with transpose flags, 1-D operands and batch broadcasting.
std::vector<int64_t> matmulShape(const std::string &op, std::vector<int64_t> x,
                                 std::vector<int64_t> y, bool transposeX, bool transposeY);

} // namespace sotc::ops

#endif // SOTC_OPS_INFERENCE_H
