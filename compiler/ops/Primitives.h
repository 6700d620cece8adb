//===- Primitives.h - The primitive set decompositions target ----------------------------===//
//
// Every operator entry is either a primitive or decomposes into these. Primitives are strict:
// elementwise operands already share one shape and dtype (decompositions insert broadcast_to
// and cast explicitly), so fusion can read every index mapping off the graph.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_OPS_PRIMITIVES_H
#define SOTC_OPS_PRIMITIVES_H

#include "compiler/ops/Types.h"

#include <optional>
#include <string>
#include <vector>

namespace sotc::ops {

enum class Prim {
#define PRIM(name, text, kind) name,
#include "compiler/ops/Primitives.def"
#undef PRIM
};

enum class PrimKind { Source, Unary, Binary, Compare, Select, Layout, Reduce, Matmul, Conv };

const char *primName(Prim prim);
/// The primitive called `name` ("reduce_sum"), or nullopt.
std::optional<Prim> primByName(const std::string &name);
PrimKind primKind(Prim prim);
/// Every primitive, in declaration order.
const std::vector<Prim> &allPrims();
/// Whether `prim` is a step the runtime runs on its own (index_copy, nonzero, nms, argsort):
/// never fused, never part of a kernel.
bool isRuntimeStep(Prim prim);

/// Attributes of one primitive application; each primitive reads only its own fields.
struct PrimAttrs {
  double value = 0;                            // fill_constant; nonzero's fill; nms's IoU
  std::vector<int64_t> shape;                  // fill_constant, iota, broadcast_to, reshape
  std::vector<int64_t> perm;                   // transpose
  std::vector<int64_t> axes;                   // reduce_*, slice
  std::vector<int64_t> starts, ends;           // slice (normalized, non-negative)
  std::vector<int64_t> steps;                  // slice (positive)
  int64_t axis = 0;                            // concat, index_copy, argsort
  std::vector<int64_t> kernel, strides, dilations, pads; // window, conv2d: (h, w) each;
                                                         // pads before (conv2d: no kernel)
  int64_t groups = 1;                                    // conv2d
  bool keepdim = false;                        // reduce_*
  bool descending = false;                     // argsort
  bool transposeX = false, transposeY = false; // matmul
  DType dtype = DType::Float32;                // fill_constant, iota, cast
};

struct PrimOp {
  Prim prim;
  std::vector<int> operands; // value ids
  PrimAttrs attrs;
  TensorMeta result;
};

/// A decomposition: value ids 0..inputs-1 are the inputs, then one per op, in order.
struct PrimGraph {
  std::vector<TensorMeta> inputs;
  std::vector<PrimOp> ops;
  std::vector<int> outputs;

  const TensorMeta &meta(int value) const;
  /// One op per line: "%3 = max(%0, %2) : float32[4, 8]".
  std::string str() const;
};

/// Builds PrimGraphs, checking each primitive's operands and inferring its result. The
/// helpers that take `Operand`s broadcast and cast them to a common shape and dtype first.
class PrimBuilder {
public:
  /// `sizes`: the program's derived sizes, which slices and concatenations along a dynamic
  /// dimension make (none: such a call is E2010).
  explicit PrimBuilder(std::string op, DerivedSizes *sizes = nullptr)
      : op_(std::move(op)), sizes_(sizes) {}

  /// The operator being lowered, as messages name it ("softmax").
  const std::string &opName() const { return op_; }
  /// `dim` + `offset` as a dimension (DerivedSizes::offsetDim).
  int64_t offsetDim(int64_t dim, int64_t offset);
  /// `a` - `b` where that is a number (DerivedSizes::difference).
  std::optional<int64_t> sizeDifference(int64_t a, int64_t b) const;
  int input(const TensorMeta &meta);
  void output(int value) { graph_.outputs.push_back(value); }
  const TensorMeta &meta(int value) const { return graph_.meta(value); }
  /// The finished graph, without ops no output depends on (constants folded away).
  PrimGraph take();

  int fill(double value, std::vector<int64_t> shape, DType dtype);
  /// 0, 1, ..., n - 1 as `dtype` (positions: arange, triangular masks by broadcasting).
  int iota(int64_t n, DType dtype);
  int cast(int x, DType dtype);
  int unary(Prim prim, int x);
  /// Elementwise binary/compare on tensors: broadcast to a common shape, cast to `dtype`.
  int binary(Prim prim, int x, int y, DType dtype);
  int binary(Prim prim, int x, int y);
  /// x ⊕ scalar, the scalar materialized as fill_constant of x's dtype.
  int binaryScalar(Prim prim, int x, double scalar);
  int select(int cond, int x, int y);
  int broadcastTo(int x, const std::vector<int64_t> &shape);
  int reshape(int x, const std::vector<int64_t> &shape);
  int transpose(int x, const std::vector<int64_t> &perm);
  /// A dynamic end (a dynamic dim's code) takes `end - start` elements: x[:n] of a static dim
  /// its first n, x[:, 1:] of T positions T - 1 (a derived size), x[:, :T - 1] T - 1 (step 1).
  /// A dynamic dim with a static end keeps its size, unless `withinS0`: then static ends take
  /// that many (x[:, 0], x[:, :4]), which the caller has guarded the size to reach (the
  /// frontend's `>= end` guard).
  int slice(int x, const std::vector<int64_t> &axes, const std::vector<int64_t> &starts,
            const std::vector<int64_t> &ends, const std::vector<int64_t> &steps,
            bool withinS0 = false);
  int concat(const std::vector<int> &xs, int64_t axis);
  /// The length of parts of these lengths end to end: their sum, a size plus a number
  /// (derived), or a product times their count.
  int64_t concatDim(const std::vector<int64_t> &parts);
  /// The 2-d windows over the last two axes of x [N, C, H, W]: [N, C, KH, KW, OH, OW], element
  /// (n, c, i, j, p, q) = x[n, c, p*sh + i*dh - pt, q*sw + j*dw - pl], or `padValue` where
  /// that falls outside x. `pads` is (top, bottom, left, right).
  int window(int x, const std::vector<int64_t> &kernel, const std::vector<int64_t> &strides,
             const std::vector<int64_t> &dilations, const std::vector<int64_t> &pads,
             double padValue);
  /// Rows of `table` [V, D...] picked by the integer `index` [I...]: [I..., D...], element
  /// (i..., d...) = table[index[i...], d...] (an index outside [0, V) is clamped into it).
  int gather(int table, int index);
  /// `x` with its slices at `index` [M] (int64; negative from the end) along `axis` replaced
  /// by `source`'s M slices there: x's shape, source's x's with M at `axis`. A library step
  /// (the runtime copies the slices; in place where x is a state the program overwrites), so
  /// a one-token write into a KV cache costs the token's bytes, not the cache's.
  int indexCopy(int x, int64_t axis, int index, int source);
  /// The coordinates of x's first `size` nonzero elements in row-major order: int64 [size,
  /// rank], the rows past x's count of nonzeros `fill`. `size` may be a dynamic dimension (x's
  /// element count where x has a dynamic size). A library step (the runtime compacts
  /// them in one pass; torch.nonzero_static, and nonzero's rows at their bound).
  int nonzero(int x, int64_t size, double fill);
  /// Non-maximum suppression (torchvision's nms) of `boxes` [N, 4] (x1, y1, x2, y2) by
  /// `scores` [N]: int64 [N], the indices of the boxes kept in decreasing score order (a box is
  /// dropped where its IoU with a kept box of a higher score passes `iou`), then -1. A library
  /// step (the runtime runs the greedy loop).
  int nms(int boxes, int scores, double iou);
  /// The positions that sort `x` along `axis`: int64 of x's shape, stable (equal elements
  /// keep their order), NaN the largest (last ascending, first `descending`), as torch.sort
  /// and paddle.argsort order them. A library step (the runtime sorts each row: n log n
  /// comparisons where ranks take n^2).
  int argsort(int x, int64_t axis, bool descending);
  /// Over `axes` (none: every axis); over one element, a reshape.
  int reduce(Prim prim, int x, const std::vector<int64_t> &axes, bool keepdim);
  int matmul(int x, int y, bool transposeX, bool transposeY);
  /// The 2-d convolution of x [N, C, H, W] with `weight` [OC, C/groups, KH, KW] over the
  /// window `strides`, `dilations`, `pads` (top, bottom, left, right; zeros):
  /// [N, OC, OH, OW], each of the `groups` slices of the channels convolved with its own OC/groups
  /// filters. A library step on targets that have one; the others expand it into windows and a
  /// GEMM (expandConvolution).
  int conv2d(int x, int weight, const std::vector<int64_t> &strides,
             const std::vector<int64_t> &dilations, const std::vector<int64_t> &pads,
             int64_t groups = 1);

private:
  int add(Prim prim, std::vector<int> operands, PrimAttrs attrs, TensorMeta result);
  /// The output positions (OH, OW) of 2-d windows over the NCHW `m` (pads: top, bottom, left,
  /// right); E2008 where the window does not fit.
  std::vector<int64_t> windowPositions(const TensorMeta &m, const std::vector<int64_t> &kernel,
                                       const std::vector<int64_t> &strides,
                                       const std::vector<int64_t> &dilations,
                                       const std::vector<int64_t> &pads) const;
  /// The op that defines `value`, or nullptr for graph inputs.
  const PrimOp *producer(int value) const;
  int convert(int x, const std::vector<int64_t> &shape, DType dtype);

  std::string op_;
  DerivedSizes *sizes_;
  PrimGraph graph_;
};

namespace lowering {
/// The convolution of x [N, C, H, W] with weight [OC, C/groups, KH, KW] as windows and GEMMs
/// (im2col; a depthwise one as taps times filters, summed): what a conv2d primitive expands to
/// on targets without a convolution step, and every grouped convolution
/// (LowerConvolution.cpp). `pads` is (top, bottom, left, right).
int expandConvolution(PrimBuilder &b, int x, int weight, const std::vector<int64_t> &strides,
                      const std::vector<int64_t> &dilations, const std::vector<int64_t> &pads,
                      int64_t groups);
} // namespace lowering

} // namespace sotc::ops

#endif // SOTC_OPS_PRIMITIVES_H
