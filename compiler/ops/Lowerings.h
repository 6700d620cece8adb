//===- Lowerings.h - Building blocks of the operator table's lowerings -------------------===//
//
// Internal to compiler/ops. The declarative half of each entry (names, signatures, docs) is
// OpEntries.def; the lowering half is bound by name in the Lower*.cpp files, one per group,
// from these building blocks.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_OPS_LOWERINGS_H
#define SOTC_OPS_LOWERINGS_H

#include "compiler/ops/OpTable.h"

#include <string>
#include <vector>

namespace sotc::ops::lowering {

[[noreturn]] void badValue(const Lowering &L, const std::string &message);

/// Tensor-or-scalar operands `xn`, `yn` as value ids of one promoted dtype.
struct Operands {
  int x, y;
  DType dtype;
};

Operands promoteOperands(Lowering &L, const std::string &xn, const std::string &yn);

/// Binary elementwise; `floatResult` for true division (ints divide to float32).
LowerFn binaryOp(Prim prim, std::string xn, std::string yn, bool floatResult = false);

/// and/or/xor: logical on bool tensors, bitwise on integers.
LowerFn bitwiseOrLogical(Prim bitwise, Prim logical, std::string xn, std::string yn);

/// Transcendental unary ops compute in floating point: integer inputs become float32.
LowerFn unaryFloat(Prim prim, std::string xn);

LowerFn unarySame(Prim prim, std::string xn);

int floatInput(Lowering &L, const std::string &xn);

int sigmoid(PrimBuilder &b, int x);

/// A shape parameter (IntList): each size the frontend passed as a dynamic one (x.shape[1],
/// T - 1) its dimension; E2010 for a negative size.
std::vector<int64_t> shapeOf(Lowering &L, const std::string &name);

/// Axes from an optional IntList parameter (None: all axes).
std::vector<int64_t> axesOf(Lowering &L, const std::string &axisName, int x);

/// x (a reduction of `x0` over `axes`) divided by the number of elements over them less
/// `less`: a number, or over a dynamic dimension a 0-d tensor of the call's count.
int divideByCount(Lowering &L, int x, int x0, const std::vector<int64_t> &axes, double less = 0);

int reduceTo(Lowering &L, Prim prim, int x, const std::vector<int64_t> &axes, bool keepdim);

LowerFn reduceOp(Prim prim, std::string xn, std::string axis, std::string keepdim,
                 std::string dtype = "");

int mean(Lowering &L, int x, const std::vector<int64_t> &axes, bool keepdim);

LowerFn meanOp(std::string xn, std::string axis, std::string keepdim);

/// log(sum(exp(x - max))) + max, kept stable by subtracting the row maximum.
LowerFn logsumexpOp(std::string xn, std::string axis, std::string keepdim);

/// softmax (log_softmax) of float `x` over `axis`, stabilized by the row maximum.
int softmax(Lowering &L, int x, int64_t axis, bool log);
/// A bool [rows, cols] mask, true where col - row <= diagonal (`lower`: tril's, a causal
/// mask's) or col - row >= diagonal (triu's), from iota rows and columns.
int triangle(PrimBuilder &b, int64_t rows, int64_t cols, int64_t diagonal, bool lower);

/// softmax / log_softmax over one axis.
LowerFn softmaxOp(std::string xn, std::string axisName, std::string dtype, bool log);

/// The trailing axes a normalization covers, checked against normalized_shape.
std::vector<int64_t> trailingAxes(Lowering &L, int x, const std::vector<int64_t> &normalized);

int affine(Lowering &L, int y, const std::string &weight, const std::string &bias);

/// (x - mean) * rsqrt(var + eps) * weight + bias over the trailing normalized_shape.
LowerFn layerNormOp(std::string xn, std::string shape, std::string weight, std::string bias,
                    std::string eps);

/// x * rsqrt(mean(x^2) + eps) * weight (+ bias) over the given trailing axes.
int rmsNorm(Lowering &L, int x, const std::vector<int64_t> &axes, double eps);

int gelu(PrimBuilder &b, int x, bool tanhForm);

int clip(Lowering &L, int x, const std::string &lo, const std::string &hi);

DType dtypeOr(Lowering &L, const std::string &name, DType fallback);

/// paddle.full: float32 unless a dtype is given; torch.full infers it from the value.
LowerFn fullOp(std::string shape, std::string value, std::string dtype, bool torchInference);

LowerFn fullLikeOp(std::string xn, double value, std::string valueName, std::string dtype);

std::vector<int64_t> unsqueezed(Lowering &L, std::vector<int64_t> shape,
                                const std::vector<int64_t> &axes);

std::vector<int64_t> squeezed(Lowering &L, const std::vector<int64_t> &shape,
                              const std::string &axisName);

std::vector<int64_t> flattened(Lowering &L, const std::vector<int64_t> &shape, int64_t start,
                               int64_t stop);

/// paddle.expand / broadcast_to: -1 keeps the input's size.
LowerFn expandOp(std::string xn, std::string shapeName);

/// Splits `x` along `axis` into pieces of the given sizes (one -1 is inferred).
void splitSizes(Lowering &L, int x, std::vector<int64_t> sizes, int64_t axis);

/// x[index]: ints, slices (positive steps), None, one Ellipsis and one list of ints.
void getitem(Lowering &L, int x, const Arg &index);

/// A 0-d constant of `like`'s dtype.
int scalarLike(PrimBuilder &b, double value, int like);

/// x != x: true where x is NaN.
int isNan(PrimBuilder &b, int x);

/// The permutation that undoes `perm`.
std::vector<int64_t> inversePerm(const std::vector<int64_t> &perm);
/// The permutation that moves `axis` last, the others in order.
std::vector<int64_t> axisLast(int64_t axis, int64_t rank);

/// Along a dimension of the dynamic size s0, which no window or slice may take a size from
/// (sotc-sir-check-batch-dims): x with `axis` moved last, against each position i of it.
/// `values` [..., s0 (i), s0 (j)] is x[..., j]; `i` and `j` are the positions [s0, s0] (int64)
/// to mask it with; a reduction over j (the last axis) and pairsResult give x's layout back.
/// Work of s0^2 per row: scans, shifts and picks from the end without a size of s0 - 1.
struct PositionPairs {
  int values, i, j;
  std::vector<int64_t> perm, square;
};
PositionPairs positionPairs(PrimBuilder &b, int x, int64_t axis);
int pairsResult(PrimBuilder &b, int reducedOverJ, const PositionPairs &p);
/// x[..., -k, ...] along `axis` of the dynamic size s0 (k >= 1; the frontend guards s0 >= k):
/// the element whose position is the last one's minus k - 1, picked by a mask and a
/// reduction over the axis (kept as 1 with `keepdim`).
int fromEnd(PrimBuilder &b, int x, int64_t axis, int64_t k, bool keepdim);

/// 0, 1, ..., n-1 along `axis` of a tensor of rank `rank` (size 1 elsewhere), as int64.
int positions(PrimBuilder &b, int64_t n, int64_t axis, int64_t rank);

/// x with `axis` moved to the front (the others in order), where a gather picks along it; and
/// back again. Both are x itself for axis 0.
int axisToFront(PrimBuilder &b, int x, int64_t axis);
int axisFromFront(PrimBuilder &b, int y, int64_t axis);

/// x with axes d0 and d1 exchanged.
int swapAxes(PrimBuilder &b, int x, int64_t d0, int64_t d1);

/// x's elements at `index` along `axis` and at the index's own coordinates elsewhere
/// (torch.gather, take_along_dim): an index of x's rank, no larger than x off the axis,
/// negative entries counted from the end.
int takeAlong(PrimBuilder &b, int x, int index, int64_t axis);

/// The slices of x along `axis` at the 1-d int64 `index` (index_select): rows gathered with
/// the axis moved to the front and back.
int gatherAlong(PrimBuilder &b, int x, int64_t axis, int index);

/// The inclusive scan of x along `axis` by a reduction (cumsum: ReduceSum, pad 0): each
/// position reduces the window of the elements up to it (padValue before the first).
int scan(PrimBuilder &b, Prim reduction, int x, int64_t axis, double padValue);

/// |x - y| <= atol + rtol * |y|, or equal (infinities), or both NaN with equal_nan: the
/// call's rtol, atol and equal_nan (LowerMath.cpp; isclose and allclose).
int isClose(Lowering &L, const std::string &xn, const std::string &yn);

/// The vector p-norm of x over `axes`: max |x| (inf), min |x| (-inf), the count of nonzeros
/// (0), or (sum |x|^p)^(1/p) (LowerReductions.cpp).
int pNorm(Lowering &L, int x, double p, const std::vector<int64_t> &axes, bool keepdim);

/// Binds `paddle.name` and, with `method`, its `Tensor.name` form (same signatures).
void paddleLower(OpTable &t, const std::string &name, LowerFn lower, bool method = true);

/// Binds `torch.name` and, with `method`, its `torch.Tensor.name` form.
void torchLower(OpTable &t, const std::string &name, LowerFn lower, bool method = true);

/// Elementwise math, comparisons, logic, casts.
void registerElementwise(OpTable &t);
/// The rest of the elementwise family: inverse and hyperbolic trigonometry, special
/// functions, float classification, NaN-aware and stable binaries (LowerMath.cpp).
void registerMath(OpTable &t);
/// Full, zeros, ones and their *_like forms.
void registerCreation(OpTable &t);
/// Sum, mean, max, min, prod, logsumexp.
void registerReductions(OpTable &t);
/// Reshape, transpose, squeeze, expand, concat, split, x[...].
void registerShapes(OpTable &t);
/// Flips, stacking, tiling, diagonals, gathers and scatters by index tensors (LowerIndexing.cpp).
void registerIndexing(OpTable &t);
/// Sort, argsort, topk, kthvalue, median, quantile, mode by ranks (LowerSorting.cpp).
void registerSorting(OpTable &t);
/// Matmul and linear.
void registerLinearAlgebra(OpTable &t);
/// Activations, softmax, normalizations, dropout.
void registerActivations(OpTable &t);
/// Losses and distances: cross entropy, nll, regression losses, KL, cosine (LowerLosses.cpp).
void registerLosses(OpTable &t);
/// Adaptive pooling of one axis into `out` bins (avg or max): bin i covers
/// [floor(i n / out), ceil((i + 1) n / out)), both frameworks' bins (LowerConvolution.cpp).
int adaptivePoolAxis(PrimBuilder &b, int x, int64_t axis, int64_t out, bool max);

/// Padding modes, interpolation, pixel shuffles (LowerResampling.cpp).
void registerResampling(OpTable &t);
void registerRegions(OpTable &t);
/// conv2d, pooling, batch norm (LowerConvolution.cpp).
void registerConvolution(OpTable &t);
/// Python operators (__add__, __lt__, __neg__, ...).
void registerOperators(OpTable &t);

} // namespace sotc::ops::lowering

#endif // SOTC_OPS_LOWERINGS_H
