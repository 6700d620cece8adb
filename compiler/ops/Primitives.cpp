#include "compiler/ops/Primitives.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace sotc::ops {

namespace {
struct PrimInfo {
  Prim prim;
  const char *name;
  PrimKind kind;
};
constexpr PrimInfo kPrims[] = {
#define PRIM(name, text, kind) {Prim::name, text, PrimKind::kind},
#include "compiler/ops/Primitives.def"
#undef PRIM
};

} // namespace

const char *primName(Prim prim) { return kPrims[static_cast<int>(prim)].name; }
PrimKind primKind(Prim prim) { return kPrims[static_cast<int>(prim)].kind; }

bool isRuntimeStep(Prim prim) {
  return prim == Prim::IndexCopy || prim == Prim::Nonzero || prim == Prim::Nms ||
         prim == Prim::Argsort;
}

std::optional<Prim> primByName(const std::string &name) {
  for (const PrimInfo &p : kPrims)
    if (name == p.name)
      return p.prim;
  return std::nullopt;
}

const std::vector<Prim> &allPrims() {
  static const std::vector<Prim> all = [] {
    std::vector<Prim> v;
    for (const PrimInfo &p : kPrims)
      v.push_back(p.prim);
    return v;
  }();
  return all;
}

const TensorMeta &PrimGraph::meta(int value) const {
  if (value < static_cast<int>(inputs.size()))
    return inputs[value];
  return ops[value - inputs.size()].result;
}

std::string PrimGraph::str() const {
  std::ostringstream s;
  for (size_t i = 0; i < inputs.size(); ++i)
    s << "%" << i << " = input : " << formatMeta(inputs[i]) << "\n";
  int id = static_cast<int>(inputs.size());
  for (const PrimOp &op : ops) {
    s << "%" << id++ << " = " << primName(op.prim) << "(";
    for (size_t i = 0; i < op.operands.size(); ++i)
      s << (i ? ", " : "") << "%" << op.operands[i];
    s << ")";
    const PrimAttrs &a = op.attrs;
    switch (op.prim) {
    case Prim::FillConstant:
    case Prim::Nonzero:
    case Prim::Nms:
      s << " {value = " << a.value << "}";
      break;
    case Prim::BroadcastTo:
    case Prim::Reshape:
      s << " {shape = " << formatInts(a.shape) << "}";
      break;
    case Prim::Transpose:
      s << " {perm = " << formatInts(a.perm) << "}";
      break;
    case Prim::Slice:
      s << " {axes = " << formatInts(a.axes) << ", starts = " << formatInts(a.starts)
        << ", ends = " << formatInts(a.ends) << ", steps = " << formatInts(a.steps) << "}";
      break;
    case Prim::Concat:
    case Prim::IndexCopy:
      s << " {axis = " << a.axis << "}";
      break;
    case Prim::Window:
      s << " {kernel = " << formatInts(a.kernel) << ", strides = " << formatInts(a.strides)
        << ", dilations = " << formatInts(a.dilations) << ", pads = " << formatInts(a.pads)
        << ", value = " << a.value << "}";
      break;
    case Prim::Conv2d:
      s << " {strides = " << formatInts(a.strides) << ", dilations = " << formatInts(a.dilations)
        << ", pads = " << formatInts(a.pads);
      if (a.groups != 1)
        s << ", groups = " << a.groups;
      s << "}";
      break;
    case Prim::Argsort:
      s << " {axis = " << a.axis << ", descending = " << a.descending << "}";
      break;
    case Prim::Matmul:
      s << " {transpose_x = " << a.transposeX << ", transpose_y = " << a.transposeY << "}";
      break;
    default:
      if (primKind(op.prim) == PrimKind::Reduce)
        s << " {axes = " << formatInts(a.axes) << ", keepdim = " << a.keepdim << "}";
      break;
    }
    s << " : " << formatMeta(op.result) << "\n";
  }
  s << "return";
  for (size_t i = 0; i < outputs.size(); ++i)
    s << (i ? ", %" : " %") << outputs[i];
  s << "\n";
  return s.str();
}

int PrimBuilder::input(const TensorMeta &meta) {
  // Value ids number the inputs first: an input after an op would take that op's id.
  if (!graph_.ops.empty())
    throw std::logic_error("PrimBuilder: inputs must be declared before the first primitive");
  graph_.inputs.push_back(meta);
  return static_cast<int>(graph_.inputs.size()) - 1;
}

int PrimBuilder::add(Prim prim, std::vector<int> operands, PrimAttrs attrs, TensorMeta result) {
  graph_.ops.push_back({prim, std::move(operands), std::move(attrs), std::move(result)});
  return static_cast<int>(graph_.inputs.size() + graph_.ops.size()) - 1;
}

int PrimBuilder::fill(double value, std::vector<int64_t> shape, DType dtype) {
  PrimAttrs a;
  a.value = value;
  a.shape = shape;
  a.dtype = dtype;
  return add(Prim::FillConstant, {}, a, {std::move(shape), dtype});
}

int PrimBuilder::iota(int64_t n, DType dtype) {
  PrimAttrs a;
  a.shape = {n};
  a.dtype = dtype;
  return add(Prim::Iota, {}, a, {{n}, dtype});
}

const PrimOp *PrimBuilder::producer(int value) const {
  int index = value - static_cast<int>(graph_.inputs.size());
  return index >= 0 ? &graph_.ops[index] : nullptr;
}

PrimGraph PrimBuilder::take() {
  // Keep the ops the outputs reach; renumber their operands.
  size_t nin = graph_.inputs.size();
  std::vector<bool> live(graph_.ops.size(), false);
  std::vector<int> work(graph_.outputs.begin(), graph_.outputs.end());
  while (!work.empty()) {
    int v = work.back();
    work.pop_back();
    if (v < static_cast<int>(nin) || live[v - nin])
      continue;
    live[v - nin] = true;
    for (int o : graph_.ops[v - nin].operands)
      work.push_back(o);
  }
  std::vector<int> renumber(nin + graph_.ops.size());
  for (size_t i = 0; i < nin; ++i)
    renumber[i] = static_cast<int>(i);
  PrimGraph out;
  out.inputs = graph_.inputs;
  for (size_t i = 0; i < graph_.ops.size(); ++i) {
    if (!live[i])
      continue;
    PrimOp op = graph_.ops[i];
    for (int &o : op.operands)
      o = renumber[o];
    renumber[nin + i] = static_cast<int>(nin + out.ops.size());
    out.ops.push_back(std::move(op));
  }
  for (int v : graph_.outputs)
    out.outputs.push_back(renumber[v]);
  graph_ = PrimGraph();
  return out;
}

int PrimBuilder::cast(int x, DType dtype) {
  if (meta(x).dtype == dtype)
    return x;
  if (const PrimOp *p = producer(x); p && p->prim == Prim::FillConstant) {
    // A constant is cast at compile time: fill with the converted value instead.
    double v = p->attrs.value;
    v = dtype == DType::Bool ? (v != 0) : isIntegral(dtype) ? std::trunc(v) : v;
    return fill(v, meta(x).shape, dtype);
  }
  PrimAttrs a;
  a.dtype = dtype;
  return add(Prim::Cast, {x}, a, {meta(x).shape, dtype});
}

int PrimBuilder::unary(Prim prim, int x) { return add(prim, {x}, {}, meta(x)); }

int PrimBuilder::broadcastTo(int x, const std::vector<int64_t> &shape) {
  if (meta(x).shape == shape)
    return x;
  if (broadcastShapes(op_, meta(x).shape, shape) != shape)
    throw CodedError(DiagCode::OpShapeMismatch, op_ + "(): cannot broadcast " +
                                                    formatShape(meta(x).shape) + " to " +
                                                    formatShape(shape));
  if (const PrimOp *p = producer(x); p && p->prim == Prim::FillConstant)
    return fill(p->attrs.value, shape, meta(x).dtype); // a broadcast constant is a bigger fill
  PrimAttrs a;
  a.shape = shape;
  return add(Prim::BroadcastTo, {x}, a, {shape, meta(x).dtype});
}

int PrimBuilder::convert(int x, const std::vector<int64_t> &shape, DType dtype) {
  return broadcastTo(cast(x, dtype), shape);
}

int PrimBuilder::binary(Prim prim, int x, int y, DType dtype) {
  std::vector<int64_t> shape = broadcastShapes(op_, meta(x).shape, meta(y).shape);
  int a = convert(x, shape, dtype), b = convert(y, shape, dtype);
  PrimKind kind = primKind(prim);
  bool logical = prim == Prim::LogicalAnd || prim == Prim::LogicalOr || prim == Prim::LogicalXor;
  DType result = kind == PrimKind::Compare || logical ? DType::Bool : dtype;
  return add(prim, {a, b}, {}, {shape, result});
}

int PrimBuilder::binary(Prim prim, int x, int y) {
  return binary(prim, x, y, promoteTypes(meta(x).dtype, meta(y).dtype));
}

int PrimBuilder::binaryScalar(Prim prim, int x, double scalar) {
  return binary(prim, x, fill(scalar, {}, meta(x).dtype));
}

int PrimBuilder::select(int cond, int x, int y) {
  std::vector<int64_t> shape =
      broadcastShapes(op_, broadcastShapes(op_, meta(cond).shape, meta(x).shape), meta(y).shape);
  DType dtype = promoteTypes(meta(x).dtype, meta(y).dtype);
  int c = convert(cond, shape, DType::Bool);
  int a = convert(x, shape, dtype), b = convert(y, shape, dtype);
  return add(Prim::Select, {c, a, b}, {}, {shape, dtype});
}

int PrimBuilder::reshape(int x, const std::vector<int64_t> &shape) {
  std::vector<int64_t> out = reshapeShape(op_, meta(x).shape, shape);
  if (out == meta(x).shape)
    return x;
  PrimAttrs a;
  a.shape = out;
  return add(Prim::Reshape, {x}, a, {out, meta(x).dtype});
}

int PrimBuilder::transpose(int x, const std::vector<int64_t> &perm) {
  const std::vector<int64_t> &in = meta(x).shape;
  std::vector<int64_t> seen(in.size(), 0), out;
  if (perm.size() != in.size())
    throw CodedError(DiagCode::OpBadAttribute, op_ + "(): permutation " + formatInts(perm) +
                                                   " does not fit a " + std::to_string(in.size()) +
                                                   "-D tensor");
  std::vector<int64_t> normalized;
  for (int64_t p : perm) {
    int64_t axis = normalizeAxis(op_, p, static_cast<int64_t>(in.size()));
    if (seen[axis]++)
      throw CodedError(DiagCode::OpBadAttribute,
                       op_ + "(): " + formatInts(perm) + " is not a permutation");
    normalized.push_back(axis);
    out.push_back(in[axis]);
  }
  bool identity = true;
  for (size_t i = 0; i < normalized.size(); ++i)
    identity = identity && normalized[i] == static_cast<int64_t>(i);
  if (identity)
    return x;
  PrimAttrs a;
  a.perm = normalized;
  return add(Prim::Transpose, {x}, a, {out, meta(x).dtype});
}

int64_t PrimBuilder::offsetDim(int64_t dim, int64_t offset) {
  if (offset == 0 || !isDynamicDim(dim))
    return dim + offset;
  if (!sizes_)
    throw CodedError(DiagCode::OpBadAttribute,
                     op_ + "(): a dimension of a dynamic size plus a number needs the program's "
                           "derived sizes");
  return sizes_->offsetDim(dim, offset);
}

std::optional<int64_t> PrimBuilder::sizeDifference(int64_t a, int64_t b) const {
  return sizes_ ? sizes_->difference(a, b) : DerivedSizes().difference(a, b);
}

int PrimBuilder::slice(int x, const std::vector<int64_t> &axes, const std::vector<int64_t> &starts,
                       const std::vector<int64_t> &ends, const std::vector<int64_t> &steps,
                       bool withinS0) {
  std::vector<int64_t> shape = meta(x).shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t dim = shape[axes[i]];
    if (isDynamicDim(ends[i])) { // end - start: x[:n] of a static dim, x[:, 1:] of T
      if (steps[i] != 1 || starts[i] < 0)
        throw CodedError(DiagCode::OpBadAttribute,
                         op_ + "(): a slice to a dynamic size is compiled from a position with "
                               "step 1 only");
      shape[axes[i]] = offsetDim(ends[i], -starts[i]);
      continue;
    }
    if (isDynamicDim(dim) && !withinS0)
      continue;
    int64_t n = ends[i] > starts[i] ? (ends[i] - starts[i] + steps[i] - 1) / steps[i] : 0;
    shape[axes[i]] = n;
  }
  // A slice that keeps every element is its operand (x[:, :2] of a [1, 2] tensor): as a
  // primitive it would only hide its input's index from the fused kernel's later readers.
  bool identity = true;
  for (size_t i = 0; i < axes.size(); ++i)
    identity = identity && starts[i] == 0 && steps[i] == 1 && !isDynamicDim(ends[i]) &&
               !isDynamicDim(meta(x).shape[axes[i]]) && shape[axes[i]] == meta(x).shape[axes[i]];
  if (identity)
    return x;
  PrimAttrs a;
  a.axes = axes;
  a.starts = starts;
  a.ends = ends;
  a.steps = steps;
  return add(Prim::Slice, {x}, a, {shape, meta(x).dtype});
}

std::vector<int64_t> PrimBuilder::windowPositions(const TensorMeta &m,
                                                  const std::vector<int64_t> &kernel,
                                                  const std::vector<int64_t> &strides,
                                                  const std::vector<int64_t> &dilations,
                                                  const std::vector<int64_t> &pads) const {
  std::vector<int64_t> out;
  for (int i = 0; i < 2; ++i) {
    int64_t span = m.shape[2 + i] + pads[2 * i] + pads[2 * i + 1] - dilations[i] * (kernel[i] - 1);
    if (span < 1 && m.numElements() == 0) { // no windows of nothing (a scan of an empty axis)
      out.push_back(0);
      continue;
    }
    if (isDynamicDim(m.shape[2 + i]) || span < 1)
      throw CodedError(DiagCode::OpShapeMismatch,
                       op_ + "(): the window does not fit the input " + formatShape(m.shape));
    out.push_back((span - 1) / strides[i] + 1);
  }
  return out;
}

int PrimBuilder::window(int x, const std::vector<int64_t> &kernel,
                        const std::vector<int64_t> &strides, const std::vector<int64_t> &dilations,
                        const std::vector<int64_t> &pads, double padValue) {
  const TensorMeta &m = meta(x);
  if (m.rank() != 4)
    throw CodedError(DiagCode::OpShapeMismatch,
                     op_ + "(): 2-d windows need an NCHW tensor, got " + formatShape(m.shape));
  std::vector<int64_t> shape = {m.shape[0], m.shape[1], kernel[0], kernel[1]};
  for (int64_t size : windowPositions(m, kernel, strides, dilations, pads))
    shape.push_back(size);
  PrimAttrs a;
  a.kernel = kernel;
  a.strides = strides;
  a.dilations = dilations;
  a.pads = {pads[0], pads[2]};
  a.value = padValue;
  return add(Prim::Window, {x}, a, {shape, m.dtype});
}

int PrimBuilder::gather(int table, int index) {
  const TensorMeta &t = meta(table), &i = meta(index);
  if (t.rank() < 1 || !isIntegral(i.dtype))
    throw CodedError(DiagCode::OpDTypeMismatch,
                     op_ + "(): rows of a tensor are picked by an integer index, not " +
                         dtypeName(i.dtype));
  std::vector<int64_t> shape = i.shape;
  shape.insert(shape.end(), t.shape.begin() + 1, t.shape.end());
  return add(Prim::Gather, {table, index}, {}, {shape, t.dtype});
}

int PrimBuilder::indexCopy(int x, int64_t axis, int index, int source) {
  const TensorMeta &m = meta(x), &i = meta(index), &s = meta(source);
  if (i.rank() != 1 || i.dtype != DType::Int64 || axis < 0 || axis >= m.rank() ||
      s.rank() != m.rank() || s.dtype != m.dtype)
    throw CodedError(DiagCode::OpShapeMismatch, op_ + "(): slices of " + formatMeta(s) +
                                                    " at an index " + formatMeta(i) + " into " +
                                                    formatMeta(m));
  for (int64_t d = 0; d < m.rank(); ++d)
    if (s.shape[d] != (d == axis ? i.shape[0] : m.shape[d]))
      throw CodedError(DiagCode::OpShapeMismatch, op_ + "(): the source " + formatShape(s.shape) +
                                                      " must be " + formatShape(m.shape) +
                                                      " with the index's length at dim " +
                                                      std::to_string(axis));
  PrimAttrs a;
  a.axis = axis;
  return add(Prim::IndexCopy, {x, index, source}, a, m);
}

int PrimBuilder::nonzero(int x, int64_t size, double fill) {
  const TensorMeta &m = meta(x);
  if (size < 0 && !isDynamicDim(size))
    throw CodedError(DiagCode::OpShapeMismatch, op_ + "(): the nonzeros of " + formatMeta(m) +
                                                    " at a size of " + std::to_string(size));
  PrimAttrs a;
  a.value = fill;
  return add(Prim::Nonzero, {x}, a, {{size, m.rank()}, DType::Int64});
}

int PrimBuilder::nms(int boxes, int scores, double iou) {
  const TensorMeta &b = meta(boxes), &s = meta(scores);
  if (b.rank() != 2 || b.shape[1] != 4 || s.rank() != 1 || s.shape[0] != b.shape[0] ||
      !isFloating(b.dtype) || s.dtype != b.dtype)
    throw CodedError(DiagCode::OpShapeMismatch, op_ + "(): boxes " + formatMeta(b) +
                                                    " and scores " + formatMeta(s) +
                                                    " (boxes [N, 4] and scores [N] of one "
                                                    "floating dtype)");
  PrimAttrs a;
  a.value = iou;
  return add(Prim::Nms, {boxes, scores}, a, {{b.shape[0]}, DType::Int64});
}

int PrimBuilder::argsort(int x, int64_t axis, bool descending) {
  const TensorMeta &m = meta(x);
  if (axis < 0 || axis >= m.rank() || m.dtype == DType::Complex64 || m.dtype == DType::Complex128)
    throw CodedError(DiagCode::OpShapeMismatch, op_ + "(): the order of " + formatMeta(m) +
                                                    " along dim " + std::to_string(axis));
  PrimAttrs a;
  a.axis = axis;
  a.descending = descending;
  return add(Prim::Argsort, {x}, a, {m.shape, DType::Int64});
}

int64_t PrimBuilder::concatDim(const std::vector<int64_t> &parts) {
  int64_t fixed = 0;
  std::vector<int64_t> dynamic;
  for (int64_t d : parts)
    if (isDynamicDim(d))
      dynamic.push_back(d);
    else
      fixed += d;
  if (dynamic.empty())
    return fixed;
  // One size and static parts: a size derived from it (a pad of T: T + 1); n of one product
  // alone: n times it (cat(x, x) of T: 2*T).
  try {
    if (dynamic.size() == 1)
      return offsetDim(dynamic[0], fixed);
    if (fixed == 0 &&
        std::count(dynamic.begin(), dynamic.end(), dynamic[0]) == static_cast<long>(dynamic.size()))
      return productDim(productOf(dynamic[0]) *
                        SizeProduct{static_cast<int64_t>(dynamic.size()), {}});
  } catch (const CodedError &) {
  }
  // Else the first size's label, which sotc-sir-check-batch-dims refuses.
  return dynamic[0];
}

int PrimBuilder::concat(const std::vector<int> &xs, int64_t axis) {
  if (xs.size() == 1)
    return xs[0];
  // A kernel takes each buffer as an argument, at most 64 (the CPU ABI): many pieces (a
  // chunked attention's 64 chunks) are concatenated in groups, then the groups.
  constexpr size_t kMostPieces = 32;
  if (xs.size() > kMostPieces) {
    std::vector<int> groups;
    for (size_t i = 0; i < xs.size(); i += kMostPieces)
      groups.push_back(concat(std::vector<int>(xs.begin() + static_cast<long>(i),
                                               xs.begin() + static_cast<long>(std::min(
                                                                i + kMostPieces, xs.size()))),
                              axis));
    return concat(groups, axis);
  }
  TensorMeta out = meta(xs[0]);
  DType dtype = out.dtype;
  for (size_t i = 1; i < xs.size(); ++i)
    dtype = promoteTypes(dtype, meta(xs[i]).dtype);
  std::vector<int> operands;
  std::vector<int64_t> parts;
  for (int x : xs) {
    const TensorMeta &m = meta(x);
    if (m.rank() != out.rank())
      throw CodedError(DiagCode::OpShapeMismatch, op_ + "(): cannot concatenate " +
                                                      formatShape(out.shape) + " and " +
                                                      formatShape(m.shape) + " (ranks differ)");
    for (int64_t d = 0; d < out.rank(); ++d)
      if (d != axis && m.shape[d] != out.shape[d] && isDynamicDim(m.shape[d]) &&
          isDynamicDim(out.shape[d]))
        throwSizesMeet(out.shape[d], m.shape[d],
                       op_ + "(): concatenating " + formatShape(out.shape) + " and " +
                           formatShape(m.shape) + " meets two dynamic sizes");
      else if (d != axis && m.shape[d] != out.shape[d] && !isDynamicDim(m.shape[d]) &&
               !isDynamicDim(out.shape[d]))
        throw CodedError(DiagCode::OpShapeMismatch,
                         op_ + "(): cannot concatenate " + formatShape(out.shape) + " and " +
                             formatShape(m.shape) + " along axis " + std::to_string(axis));
    parts.push_back(m.shape[axis]);
    operands.push_back(cast(x, dtype));
  }
  out.shape[axis] = concatDim(parts);
  out.dtype = dtype;
  PrimAttrs a;
  a.axis = axis;
  return add(Prim::Concat, operands, a, out);
}

int PrimBuilder::reduce(Prim prim, int x, const std::vector<int64_t> &axesIn, bool keepdim) {
  std::vector<int64_t> axes = axesIn; // none named: every axis
  if (axes.empty())
    for (int64_t d = 0; d < meta(x).rank(); ++d)
      axes.push_back(d);
  for (int64_t d : axes)
    if (d < 0 || d >= meta(x).rank())
      throw CodedError(DiagCode::OpBadAttribute, op_ + "(): reduces axis " + std::to_string(d) +
                                                     " of a " + std::to_string(meta(x).rank()) +
                                                     "-d tensor");
  std::vector<int64_t> shape = reducedShape(meta(x).shape, axes, keepdim);
  // Over one element (a 1x1 map's pooling) every reduction is that element: a reshape.
  int64_t reduced = 1;
  for (int64_t d : axes)
    reduced *= meta(x).shape[d];
  if (reduced == 1)
    return reshape(x, shape);
  PrimAttrs a;
  a.axes = axes;
  a.keepdim = keepdim;
  return add(prim, {x}, a, {std::move(shape), meta(x).dtype});
}

int PrimBuilder::matmul(int x, int y, bool transposeX, bool transposeY) {
  DType dtype = promoteTypes(meta(x).dtype, meta(y).dtype);
  std::vector<int64_t> shape =
      matmulShape(op_, meta(x).shape, meta(y).shape, transposeX, transposeY);
  PrimAttrs a;
  a.transposeX = transposeX;
  a.transposeY = transposeY;
  return add(Prim::Matmul, {cast(x, dtype), cast(y, dtype)}, a, {shape, dtype});
}

int PrimBuilder::conv2d(int x, int weight, const std::vector<int64_t> &strides,
                        const std::vector<int64_t> &dilations, const std::vector<int64_t> &pads,
                        int64_t groups) {
  const TensorMeta &m = meta(x), &w = meta(weight);
  if (m.rank() != 4 || w.rank() != 4 || groups < 1 || m.shape[1] != w.shape[1] * groups ||
      w.shape[0] % groups != 0 || m.dtype != w.dtype)
    throw CodedError(DiagCode::OpShapeMismatch, op_ + "(): a convolution of " + formatMeta(m) +
                                                    " by a weight " + formatMeta(w) + " in " +
                                                    std::to_string(groups) + " groups");
  std::vector<int64_t> shape = {m.shape[0], w.shape[0]};
  for (int64_t size : windowPositions(m, {w.shape[2], w.shape[3]}, strides, dilations, pads))
    shape.push_back(size);
  PrimAttrs a;
  a.strides = strides;
  a.dilations = dilations;
  a.pads = {pads[0], pads[2]};
  a.groups = groups;
  return add(Prim::Conv2d, {x, weight}, a, {shape, m.dtype});
}

} // namespace sotc::ops
