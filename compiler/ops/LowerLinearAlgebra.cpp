//===- LowerLinearAlgebra.cpp - Lowerings: matmul, linear, einsum, attention ------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace sotc::ops::lowering {

namespace {
/// softmax(q k^T * scale + mask) v over [..., L, E] x [..., S, E] x [..., S, Ev]; a bool mask
/// keeps where true (-inf elsewhere), a float mask adds; is_causal keeps query i's keys 0..i.
LowerFn attentionOp(bool paddleLayout) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    bool dropout = L.args.scalar("dropout_p") != 0 &&
                   (!paddleLayout || L.args.boolValue("training"));
    if (dropout)
      badValue(L, "dropout_p must be 0 (sotc compiles inference)");
    int q = floatInput(L, "query"), k = floatInput(L, "key"), v = floatInput(L, "value");
    int64_t rank = b.meta(q).rank();
    if (rank < 2 || b.meta(k).rank() != rank || b.meta(v).rank() != rank)
      badValue(L, "query, key and value must have the same rank, at least 2");
    // paddle's layout is [batch, seq, heads, dim]: attention runs over [batch, heads, seq, dim].
    std::vector<int64_t> swap;
    if (paddleLayout) {
      if (rank != 4)
        badValue(L, "expects [batch, seq_len, num_heads, head_dim] tensors");
      swap = {0, 2, 1, 3};
      q = b.transpose(q, swap), k = b.transpose(k, swap), v = b.transpose(v, swap);
    }
    int64_t heads = rank >= 3 ? b.meta(q).shape[rank - 3] : 1;
    int64_t kvHeads = rank >= 3 ? b.meta(k).shape[rank - 3] : 1;
    if (heads != kvHeads || (rank >= 3 && b.meta(v).shape[rank - 3] != kvHeads)) {
      // Grouped-query attention: query head h reads key and value head h / (heads / kvHeads)
      // (repeat_interleave over the head dim); one key/value head broadcasts without it.
      if (!L.args.boolValue("enable_gqa") && kvHeads != 1)
        badValue(L, "query and key have different numbers of heads: pass enable_gqa=True");
      if (kvHeads == 0 || heads % kvHeads != 0 || b.meta(v).shape[rank - 3] != kvHeads)
        badValue(L, "enable_gqa: the query's heads must be a multiple of the key's and value's");
      auto repeatHeads = [&](int x) {
        std::vector<int64_t> shape = b.meta(x).shape, grouped = shape, wide = shape;
        grouped.insert(grouped.begin() + (rank - 2), 1);         // [..., Hk, 1, S, E]
        wide.insert(wide.begin() + (rank - 2), heads / kvHeads); // [..., Hk, r, S, E]
        shape[rank - 3] = heads;                                 // [..., Hq, S, E]
        return b.reshape(b.broadcastTo(b.reshape(x, grouped), wide), shape);
      };
      k = repeatHeads(k), v = repeatHeads(v);
    }
    int64_t e = b.meta(q).shape[rank - 1];
    double scale = L.args.isNone("scale") ? 1.0 / std::sqrt(static_cast<double>(e))
                                          : L.args.scalar("scale");
    int scores = b.binaryScalar(Prim::Mul, b.matmul(q, k, false, true), scale);
    if (L.args.boolValue("is_causal")) { // query i sees keys 0..i (the top-left triangle)
      if (L.in("attn_mask") >= 0)
        badValue(L, "takes attn_mask or is_causal=True, not both");
      const std::vector<int64_t> &s = b.meta(scores).shape;
      int causal = triangle(b, s[rank - 2], s[rank - 1], 0, true);
      scores = b.select(causal, scores, b.fill(-INFINITY, {}, b.meta(scores).dtype));
    }
    if (int mask = L.in("attn_mask"); mask >= 0) {
      if (b.meta(mask).dtype == DType::Bool)
        scores = b.select(mask, scores, b.fill(-INFINITY, {}, b.meta(scores).dtype));
      else
        scores = b.binary(Prim::Add, scores, mask);
    }
    int out = b.matmul(softmax(L, scores, rank - 1, false), v, false, false);
    L.out(paddleLayout ? b.transpose(out, swap) : out);
  };
}
/// One operand of einsum: its value and the label of each dimension.
struct Labeled {
  int value;
  std::string labels;
};

/// Sums the dimensions whose labels `keep` does not have.
Labeled sumOut(PrimBuilder &b, Labeled x, const std::string &keep) {
  std::vector<int64_t> axes;
  std::string left;
  for (size_t i = 0; i < x.labels.size(); ++i)
    if (keep.find(x.labels[i]) == std::string::npos)
      axes.push_back(static_cast<int64_t>(i));
    else
      left += x.labels[i];
  return axes.empty() ? x : Labeled{b.reduce(Prim::ReduceSum, x.value, axes, false), left};
}

/// x's dimensions in the order `order` names them.
int permuted(PrimBuilder &b, const Labeled &x, const std::string &order) {
  std::vector<int64_t> perm;
  for (char c : order)
    perm.push_back(static_cast<int64_t>(x.labels.find(c)));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == static_cast<int64_t>(i);
  return identity ? x.value : b.transpose(x.value, perm);
}

/// einsum's '...' written out as letters the equation does not use, one per dimension it
/// stands for (right-aligned across operands, as numpy broadcasts them); an operand whose
/// '...' dimension has size 1 where another's does not is broadcast to it. Without '->' the
/// output starts with them.
void expandEllipses(Lowering &L, std::string &equation, std::vector<int> &operands) {
  PrimBuilder &b = L.b;
  size_t arrow = equation.find("->");
  std::string inputs = equation.substr(0, arrow);
  std::vector<std::string> labels;
  for (size_t start = 0;;) {
    size_t comma = inputs.find(',', start);
    labels.push_back(inputs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (labels.size() != operands.size())
    badValue(L, "'" + inputs + "' does not label " + std::to_string(operands.size()) +
                    " operands");
  std::vector<int64_t> counts(operands.size(), 0);
  int64_t most = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    size_t at = labels[i].find("...");
    if (at == std::string::npos)
      continue;
    if (labels[i].find("...", at + 3) != std::string::npos)
      badValue(L, "'" + labels[i] + "' has more than one '...'");
    counts[i] = b.meta(operands[i]).rank() - static_cast<int64_t>(labels[i].size() - 3);
    if (counts[i] < 0)
      badValue(L, "'" + labels[i] + "' labels more dimensions than the operand's " +
                      std::to_string(b.meta(operands[i]).rank()));
    most = std::max(most, counts[i]);
  }
  std::string fresh;
  for (char c = 'A'; c <= 'z' && static_cast<int64_t>(fresh.size()) < most; ++c)
    if (std::isalpha(static_cast<unsigned char>(c)) && equation.find(c) == std::string::npos)
      fresh += c;
  if (static_cast<int64_t>(fresh.size()) < most)
    badValue(L, "'...' stands for more dimensions than there are unused labels");
  // Each '...' dimension's size over the operands (1 broadcasts).
  std::vector<int64_t> sizes(most, 1);
  for (size_t i = 0; i < labels.size(); ++i) {
    size_t at = labels[i].find("...");
    if (at == std::string::npos)
      continue;
    const std::vector<int64_t> &shape = b.meta(operands[i]).shape;
    for (int64_t k = 0; k < counts[i]; ++k) {
      int64_t size = shape[at + k], &seen = sizes[most - counts[i] + k];
      if (size != 1 && seen != 1 && size != seen)
        badValue(L, "'...' dimensions of sizes " + std::to_string(seen) + " and " +
                        std::to_string(size) + " do not broadcast");
      if (size != 1)
        seen = size;
    }
  }
  std::string rebuilt;
  for (size_t i = 0; i < labels.size(); ++i) {
    size_t at = labels[i].find("...");
    if (at != std::string::npos) {
      std::vector<int64_t> shape = b.meta(operands[i]).shape;
      bool widen = false;
      for (int64_t k = 0; k < counts[i]; ++k) {
        int64_t &size = shape[at + k], want = sizes[most - counts[i] + k];
        widen |= size != want;
        size = want;
      }
      if (widen)
        operands[i] = b.broadcastTo(operands[i], shape);
      labels[i].replace(at, 3, fresh.substr(most - counts[i]));
    }
    rebuilt += (i ? "," : "") + labels[i];
  }
  if (arrow == std::string::npos) {
    if (most == 0)
      return (void)(equation = rebuilt);
    std::string output = fresh; // implicit: the '...' dimensions, then the labels seen once
    for (char c = 'A'; c <= 'z'; ++c)
      if (std::isalpha(static_cast<unsigned char>(c)) && fresh.find(c) == std::string::npos &&
          std::count(rebuilt.begin(), rebuilt.end(), c) == 1)
        output += c;
    equation = rebuilt + "->" + output;
    return;
  }
  std::string output = equation.substr(arrow + 2);
  if (size_t at = output.find("..."); at != std::string::npos)
    output.replace(at, 3, fresh);
  equation = rebuilt + "->" + output;
}

/// einsum of one or two operands without repeated labels: labels in the output and both
/// operands are batch dimensions, in both but not the output contracted, in one operand and
/// the output its rows or columns; one batched GEMM [B, M, K] x [B, K, N].
void einsum(Lowering &L) {
  PrimBuilder &b = L.b;
  std::string equation;
  for (char c : L.args.get("equation").stringValue)
    if (c != ' ')
      equation += c;
  std::vector<int> operands = L.inList("operands");
  if (operands.empty() || operands.size() > 2)
    badValue(L, "takes one or two operands here, not " + std::to_string(operands.size()));
  if (equation.find("...") != std::string::npos)
    expandEllipses(L, equation, operands);
  size_t arrow = equation.find("->");
  std::string inputs = equation.substr(0, arrow), output;
  std::vector<Labeled> xs;
  for (size_t start = 0, i = 0; i < operands.size(); ++i) {
    size_t comma = inputs.find(',', start);
    std::string labels = inputs.substr(start, comma == std::string::npos ? comma : comma - start);
    start = comma == std::string::npos ? inputs.size() : comma + 1;
    if (static_cast<int64_t>(labels.size()) != b.meta(operands[i]).rank())
      badValue(L, "'" + labels + "' labels " + std::to_string(labels.size()) +
                      " dimensions of an operand of rank " +
                      std::to_string(b.meta(operands[i]).rank()));
    for (char c : labels)
      if (!std::isalpha(static_cast<unsigned char>(c)) ||
          std::count(labels.begin(), labels.end(), c) > 1)
        badValue(L, "'" + labels + "': labels must be letters, each once per operand");
    xs.push_back({operands[i], labels});
  }
  if (std::count(inputs.begin(), inputs.end(), ',') + 1 != static_cast<long>(operands.size()))
    badValue(L, "'" + inputs + "' does not label " + std::to_string(operands.size()) +
                    " operands");
  std::string all = xs[0].labels + (xs.size() > 1 ? xs[1].labels : "");
  if (arrow != std::string::npos) {
    output = equation.substr(arrow + 2);
  } else { // implicit: the labels seen once, in alphabetical order
    for (char c = 'A'; c <= 'z'; ++c)
      if (std::count(all.begin(), all.end(), c) == 1)
        output += c;
  }
  for (char c : output)
    if (all.find(c) == std::string::npos || std::count(output.begin(), output.end(), c) > 1)
      badValue(L, "output label '" + std::string(1, c) + "' is repeated or labels no input");
  if (xs.size() == 1) {
    Labeled x = sumOut(b, xs[0], output);
    return L.out(permuted(b, x, output));
  }
  // A label only one operand has and the output does not is summed there first.
  Labeled x = sumOut(b, xs[0], output + xs[1].labels);
  Labeled y = sumOut(b, xs[1], output + x.labels);
  std::string batch, rows, cols, inner;
  for (char c : output)
    (x.labels.find(c) == std::string::npos   ? cols
     : y.labels.find(c) == std::string::npos ? rows
                                             : batch) += c;
  for (char c : x.labels)
    if (output.find(c) == std::string::npos)
      inner += c;
  auto size = [&](const Labeled &t, char c) {
    return b.meta(t.value).shape[t.labels.find(c)];
  };
  auto product = [&](const Labeled &t, const std::string &labels) {
    int64_t n = 1;
    for (char c : labels)
      n *= size(t, c);
    return n;
  };
  for (char c : batch + inner)
    if (size(x, c) != size(y, c))
      badValue(L, "label '" + std::string(1, c) + "' has sizes " + std::to_string(size(x, c)) +
                      " and " + std::to_string(size(y, c)));
  int64_t nb = product(x, batch), m = product(x, rows), k = product(x, inner),
          n = product(y, cols);
  int lhs = b.reshape(permuted(b, x, batch + rows + inner), {nb, m, k});
  int rhs = b.reshape(permuted(b, y, batch + inner + cols), {nb, k, n});
  std::vector<int64_t> shape;
  for (char c : batch + rows)
    shape.push_back(size(x, c));
  for (char c : cols)
    shape.push_back(size(y, c));
  Labeled product3{b.reshape(b.matmul(lhs, rhs, false, false), shape), batch + rows + cols};
  L.out(permuted(b, product3, output));
}
/// beta * input + alpha * product (beta 0: input ignored, NaNs in it too, as torch does).
int scaledSum(Lowering &L, int product) {
  double alpha = L.args.scalar("alpha"), beta = L.args.scalar("beta");
  PrimBuilder &b = L.b;
  if (alpha != 1)
    product = b.binaryScalar(Prim::Mul, product, alpha);
  if (beta == 0)
    return b.broadcastTo(product, b.meta(product).shape);
  int input = b.cast(L.in("input"), b.meta(product).dtype);
  if (beta != 1)
    input = b.binaryScalar(Prim::Mul, input, beta);
  return b.binary(Prim::Add, input, product);
}

/// The axes of x listed in `axes` (normalized) moved last (`last`) or first, the others
/// keeping their order.
std::vector<int64_t> movedPerm(const std::vector<int64_t> &axes, int64_t rank, bool last) {
  std::vector<int64_t> rest;
  for (int64_t a = 0; a < rank; ++a)
    if (std::find(axes.begin(), axes.end(), a) == axes.end())
      rest.push_back(a);
  std::vector<int64_t> perm = last ? rest : axes;
  perm.insert(perm.end(), (last ? axes : rest).begin(), (last ? axes : rest).end());
  return perm;
}

/// tensordot: x's `xa` axes contracted with y's `ya` axes, as one matmul of the free axes.
int tensordot(Lowering &L, int x, int y, std::vector<int64_t> xa, std::vector<int64_t> ya) {
  PrimBuilder &b = L.b;
  std::vector<int64_t> xs = b.meta(x).shape, ys = b.meta(y).shape;
  std::vector<int64_t> xaOrdered, yaOrdered; // paired in the order given
  for (int64_t a : xa)
    xaOrdered.push_back(normalizeDim(b.opName(), a, int64_t(xs.size())));
  for (int64_t a : ya)
    yaOrdered.push_back(normalizeDim(b.opName(), a, int64_t(ys.size())));
  if (xaOrdered.size() != yaOrdered.size())
    badValue(L, "both tensors need as many contracted dimensions");
  int64_t k = 1;
  for (size_t i = 0; i < xaOrdered.size(); ++i) {
    if (xs[xaOrdered[i]] != ys[yaOrdered[i]])
      throw CodedError(DiagCode::OpShapeMismatch,
                       b.opName() + "(): contracted sizes differ: " + formatShape(xs) + " and " +
                           formatShape(ys));
    k *= xs[xaOrdered[i]];
  }
  std::vector<int64_t> px = movedPerm(xaOrdered, int64_t(xs.size()), true),
                       py = movedPerm(yaOrdered, int64_t(ys.size()), false);
  std::vector<int64_t> out;
  int64_t m = 1, n = 1;
  for (size_t i = 0; i + xaOrdered.size() < px.size(); ++i) {
    out.push_back(xs[px[i]]);
    m *= xs[px[i]];
  }
  for (size_t i = yaOrdered.size(); i < py.size(); ++i) {
    out.push_back(ys[py[i]]);
    n *= ys[py[i]];
  }
  int x2 = b.reshape(b.transpose(x, px), {m, k});
  int y2 = b.reshape(b.transpose(y, py), {k, n});
  return b.reshape(b.matmul(x2, y2, false, false), out);
}

/// The covariance of the rows of x (variables) over its columns (observations).
int covariance(Lowering &L, int x, double correction) {
  PrimBuilder &b = L.b;
  if (b.meta(x).rank() == 1)
    x = b.reshape(x, {1, b.meta(x).shape[0]});
  if (b.meta(x).rank() != 2)
    badValue(L, "expects a 1-d or 2-d tensor");
  int64_t n = b.meta(x).shape[1];
  int centered = b.binary(Prim::Sub, x, mean(L, x, {1}, true));
  int c = b.matmul(centered, centered, false, true);
  return b.binaryScalar(Prim::Div, c, std::max(0.0, double(n) - correction));
}

/// bilinear: y[..., o] = sum_ij x1[..., i] weight[o, i, j] x2[..., j] + bias[o]: one GEMM
/// x1 [B, I] x weight as [I, O*J], then the products with x2 summed over j.
LowerFn bilinearOp(std::string x1n, std::string x2n) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x1 = floatInput(L, x1n), x2 = floatInput(L, x2n);
    int w = b.cast(L.in("weight"), b.meta(x1).dtype);
    std::vector<int64_t> s1 = b.meta(x1).shape, s2 = b.meta(x2).shape, ws = b.meta(w).shape;
    if (ws.size() != 3 || s1.empty() || s1.size() != s2.size() || s1.back() != ws[1] ||
        s2.back() != ws[2] || !std::equal(s1.begin(), s1.end() - 1, s2.begin()))
      badValue(L, "inputs " + formatShape(s1) + " and " + formatShape(s2) +
                      " do not fit a weight of shape " + formatShape(ws));
    int64_t batch = b.meta(x1).numElements() / s1.back(), o = ws[0], i = ws[1], j = ws[2];
    int wt = b.reshape(b.transpose(w, {1, 0, 2}), {i, o * j});
    int t1 = b.reshape(b.matmul(b.reshape(x1, {batch, i}), wt, false, false), {batch, o, j});
    int y = b.reduce(Prim::ReduceSum, b.binary(Prim::Mul, t1, b.reshape(x2, {batch, 1, j})), {2},
                     false);
    if (L.in("bias") >= 0)
      y = b.binary(Prim::Add, y, b.reshape(b.cast(L.in("bias"), b.meta(y).dtype), {1, o}));
    std::vector<int64_t> out(s1.begin(), s1.end() - 1);
    out.push_back(o);
    L.out(b.reshape(y, out));
  };
}

/// The most rows a solve is unrolled over: each row is a few primitives of its own.
constexpr int64_t kMaxUnrolledRows = 256;

void requireUnrollable(Lowering &L, int64_t n) {
  if (n > kMaxUnrolledRows)
    badValue(L, "solves are unrolled row by row up to " + std::to_string(kMaxUnrolledRows) +
                    " rows, not " + std::to_string(n) + " (larger ones need LAPACK)");
}

/// a [..., n, n] and b [..., n, k] with their batch dimensions broadcast to one another.
std::pair<int, int> broadcastBatches(Lowering &L, int a, int b) {
  PrimBuilder &pb = L.b;
  std::vector<int64_t> as = pb.meta(a).shape, bs = pb.meta(b).shape;
  if (as.size() < 2 || bs.size() < 2 || as[as.size() - 1] != as[as.size() - 2] ||
      bs[bs.size() - 2] != as.back())
    badValue(L, "needs square matrices [..., n, n] and right-hand sides [..., n, k]; got " +
                    formatShape(as) + " and " + formatShape(bs));
  std::vector<int64_t> batch =
      broadcastShapes(pb.opName(), std::vector<int64_t>(as.begin(), as.end() - 2),
                      std::vector<int64_t>(bs.begin(), bs.end() - 2));
  auto with = [&](std::vector<int64_t> shape, int64_t r, int64_t c) {
    shape.push_back(r);
    shape.push_back(c);
    return shape;
  };
  return {pb.broadcastTo(a, with(batch, as.back(), as.back())),
          pb.broadcastTo(b, with(batch, bs[bs.size() - 2], bs.back()))};
}

/// X with a X = b for a triangular a [..., n, n] (its other triangle is not read) and b
/// [..., n, k] of the same batch: substitution row by row from the first (lower) or the last
/// (upper), x_i = (b_i - sum_j a_ij x_j) / a_ii (no division with a unit diagonal).
int triangularSolve(Lowering &L, int a, int b, bool upper, bool unit) {
  PrimBuilder &pb = L.b;
  int64_t rank = pb.meta(a).rank(), n = pb.meta(a).shape.back();
  requireUnrollable(L, n);
  if (n == 0)
    return b;
  int64_t rowAxis = rank - 2, colAxis = rank - 1;
  std::vector<int> x(n, -1);
  for (int64_t step = 0; step < n; ++step) {
    int64_t i = upper ? n - 1 - step : step;
    int rhs = pb.slice(b, {rowAxis}, {i}, {i + 1}, {1});  // [..., 1, k]
    int64_t from = upper ? i + 1 : 0, to = upper ? n : i; // the rows solved so far
    if (to > from) {
      std::vector<int> solved(x.begin() + from, x.begin() + to);
      int known = solved.size() == 1 ? solved[0] : pb.concat(solved, rowAxis); // [..., m, k]
      std::vector<int64_t> column = pb.meta(known).shape;
      column.back() = 1;
      int coefficients = pb.reshape( // a_i,from:to as a column [..., m, 1]
          pb.slice(a, {rowAxis, colAxis}, {i, from}, {i + 1, to}, {1, 1}), column);
      rhs = pb.binary(
          Prim::Sub, rhs,
          pb.reduce(Prim::ReduceSum, pb.binary(Prim::Mul, coefficients, known), {rowAxis}, true));
    }
    x[i] = unit ? rhs
                : pb.binary(Prim::Div, rhs,
                            pb.slice(a, {rowAxis, colAxis}, {i, i}, {i + 1, i + 1}, {1, 1}));
  }
  return n == 1 ? x[0] : pb.concat(x, rowAxis);
}

/// x itself when it is a batch of matrices [..., r, c] (square ones with `square`).
int matrices(Lowering &L, int x, bool square) {
  const std::vector<int64_t> &s = L.b.meta(x).shape;
  if (s.size() < 2 || (square && s[s.size() - 1] != s[s.size() - 2]))
    badValue(L, std::string("needs ") + (square ? "square " : "") + "matrices [..., n, " +
                    (square ? "n" : "k") + "], not " + formatShape(s));
  return x;
}

/// a's last two dimensions swapped.
int transposed(PrimBuilder &b, int a) {
  int64_t rank = b.meta(a).rank();
  return swapAxes(b, a, rank - 1, rank - 2);
}

/// X with (l l^T) X = b, or (u^T u) X = b: two triangular solves.
int choleskySolve(Lowering &L, int factor, int b, bool upper) {
  auto [f, rhs] = broadcastBatches(L, factor, b);
  int lower = upper ? transposed(L.b, f) : f;
  int y = triangularSolve(L, lower, rhs, false, false);
  return triangularSolve(L, transposed(L.b, lower), y, true, false);
}

} // namespace

namespace {
/// diff along a dimension of the dynamic size n (transformers' packed-sequence check): only
/// once, with one element prepended, so that the result keeps n: x[i] - x[i - 1], the first
/// against the prepended one. x[i - 1] is picked by a mask over the pairs of positions (no
/// slice of n - 1 elements exists).
int diffWithPrepended(Lowering &L, int x, int64_t axis) {
  PrimBuilder &b = L.b;
  const TensorMeta m = b.meta(x);
  if (L.args.intValue("n") != 1 || L.args.isNone("prepend") || !L.args.isNone("append"))
    badValue(L, "along the dynamic dimension, diff is compiled once (n=1) with one element "
                "prepended and none appended only");
  int before = b.cast(L.in("prepend"), m.dtype);
  std::vector<int64_t> one = m.shape;
  one[axis] = 1;
  if (b.meta(before).rank() == 0)
    before = b.broadcastTo(before, one);
  if (b.meta(before).shape != one)
    badValue(L, "along the dynamic dimension, prepend must have one element there, not " +
                    formatShape(b.meta(before).shape));
  PositionPairs p = positionPairs(b, x, axis);
  bool logical = m.dtype == DType::Bool;
  int next = b.broadcastTo(b.binary(Prim::Equal, b.binaryScalar(Prim::Add, p.j, 1), p.i), p.square);
  int picked = b.select(next, p.values, b.fill(0, p.square, m.dtype));
  int shifted = pairsResult(b,
                            b.reduce(logical ? Prim::ReduceMax : Prim::ReduceSum, picked,
                                     {int64_t(p.square.size()) - 1}, false),
                            p);
  int first = b.binary(Prim::Equal, positions(b, m.shape[axis], axis, m.rank()),
                       b.fill(0, {}, DType::Int64));
  int previous = b.select(first, b.broadcastTo(before, m.shape), shifted);
  return logical ? b.binary(Prim::NotEqual, x, previous) : b.binary(Prim::Sub, x, previous);
}
} // namespace

void registerLinearAlgebra(OpTable &t) {
  torchLower(t, "triangular_solve", [](Lowering &L) { // (X, a) with a X = b
    auto [a, b] = broadcastBatches(L, floatInput(L, "A"), floatInput(L, "input"));
    if (L.b.meta(a).dtype != L.b.meta(b).dtype)
      badValue(L, "A and b need one dtype");
    bool upper = L.args.boolValue("upper"), transpose = L.args.boolValue("transpose");
    int lhs = transpose ? transposed(L.b, a) : a;
    L.out(triangularSolve(L, lhs, b, upper != transpose, L.args.boolValue("unitriangular")));
    L.out(a);
  });
  t.bind("torch.linalg.solve_triangular", [](Lowering &L) { // left: a X = b; else X a = b
    bool left = L.args.boolValue("left"), upper = L.args.boolValue("upper");
    int a = matrices(L, floatInput(L, "input"), true), b = matrices(L, floatInput(L, "B"), false);
    if (left) {
      auto [ab, bb] = broadcastBatches(L, a, b);
      L.out(triangularSolve(L, ab, bb, upper, L.args.boolValue("unitriangular")));
      return;
    }
    auto [at, bt] = broadcastBatches(L, transposed(L.b, a), transposed(L.b, b));
    L.out(transposed(L.b, triangularSolve(L, at, bt, !upper, L.args.boolValue("unitriangular"))));
  });
  torchLower(t, "cholesky_solve", [](Lowering &L) {
    L.out(choleskySolve(L, floatInput(L, "input2"), floatInput(L, "input"),
                        L.args.boolValue("upper")));
  });
  torchLower(t, "cholesky_inverse", [](Lowering &L) { // (l l^T)^-1: the solve of the identity
    int f = matrices(L, floatInput(L, "input"), true);
    int64_t n = L.b.meta(f).shape.back();
    int eye = L.b.cast(L.b.binary(Prim::Equal, L.b.reshape(L.b.iota(n, DType::Int64), {n, 1}),
                                  L.b.reshape(L.b.iota(n, DType::Int64), {1, n})),
                       L.b.meta(f).dtype);
    L.out(choleskySolve(L, f, eye, L.args.boolValue("upper")));
  });
  torchLower(t, "lu_solve", [](Lowering &L) { // a = P L U: X = U^-1 L^-1 P^T b
    PrimBuilder &b = L.b;
    auto [lu, rhs] = broadcastBatches(L, floatInput(L, "LU_data"), floatInput(L, "input"));
    int64_t n = b.meta(lu).shape.back(), rank = b.meta(lu).rank();
    requireUnrollable(L, n);
    std::vector<int64_t> pivotShape(b.meta(lu).shape.begin(), b.meta(lu).shape.end() - 1);
    int pivots = b.cast(L.in("LU_pivots"), DType::Int64);
    if (b.meta(pivots).rank() == 0 || b.meta(pivots).shape.back() != n)
      badValue(L, "LU_pivots needs one pivot per row");
    pivots = b.broadcastTo(pivots, pivotShape);
    // LAPACK's row interchanges, in order: row i and row pivots[i] - 1 (1-based) swap.
    int order = b.broadcastTo(b.iota(n, DType::Int64), pivotShape);
    int rows = b.broadcastTo(b.iota(n, DType::Int64), pivotShape);
    for (int64_t i = 0; i < n; ++i) {
      int j = b.binaryScalar(Prim::Sub, b.slice(pivots, {rank - 2}, {i}, {i + 1}, {1}), 1);
      int atI = b.slice(order, {rank - 2}, {i}, {i + 1}, {1});
      int atJ = takeAlong(b, order, j, rank - 2);
      int isI = b.binary(Prim::Equal, rows, b.fill(double(i), {}, DType::Int64));
      int isJ = b.binary(Prim::Equal, rows, b.broadcastTo(j, pivotShape));
      order = b.select(isI, b.broadcastTo(atJ, pivotShape),
                       b.select(isJ, b.broadcastTo(atI, pivotShape), order));
    }
    std::vector<int64_t> byRow = b.meta(order).shape; // [..., n, 1]: the rows of b picked
    byRow.push_back(1);
    std::vector<int64_t> picked = b.meta(rhs).shape;
    int permuted =
        n == 0 ? rhs : takeAlong(b, rhs, b.broadcastTo(b.reshape(order, byRow), picked), rank - 2);
    int y = triangularSolve(L, lu, permuted, false, true);
    L.out(triangularSolve(L, lu, y, true, false));
  });
  t.bind("torch.nn.functional.bilinear", bilinearOp("input1", "input2"));
  t.bind("paddle.nn.functional.bilinear", bilinearOp("x1", "x2"));
  torchLower(t, "dot", [](Lowering &L) {
    int x = L.in("input"), y = L.in("tensor");
    if (L.b.meta(x).rank() != 1 || L.b.meta(y).rank() != 1)
      badValue(L, "expects 1-d tensors");
    L.out(L.b.matmul(x, y, false, false));
  });
  torchLower(t, "vdot", [](Lowering &L) { // real tensors: no conjugate
    L.out(L.b.matmul(L.in("input"), L.in("other"), false, false));
  });
  paddleLower(t, "dot", [](Lowering &L) { // 2-d: row by row
    int x = L.in("x"), y = L.in("y");
    L.out(L.b.reduce(Prim::ReduceSum, L.b.binary(Prim::Mul, x, y), {L.b.meta(x).rank() - 1}, false));
  });
  auto outer = [](std::string xn, std::string yn) {
    return [=](Lowering &L) {
      int x = L.in(xn), y = L.in(yn);
      int64_t n = L.b.meta(x).numElements(), m = L.b.meta(y).numElements();
      L.out(L.b.binary(Prim::Mul, L.b.reshape(x, {n, 1}), L.b.reshape(y, {1, m})));
    };
  };
  torchLower(t, "outer", outer("input", "vec2"));
  paddleLower(t, "outer", outer("x", "y"));
  auto inner = [](std::string xn, std::string yn) {
    return [=](Lowering &L) { // the last dims contracted; a 0-d operand scales
      int x = L.in(xn), y = L.in(yn);
      if (L.b.meta(x).rank() == 0 || L.b.meta(y).rank() == 0) {
        L.out(L.b.binary(Prim::Mul, x, y));
        return;
      }
      L.out(tensordot(L, x, y, {-1}, {-1}));
    };
  };
  torchLower(t, "inner", inner("input", "other"));
  paddleLower(t, "inner", inner("x", "y"));
  torchLower(t, "mv", [](Lowering &L) { L.out(L.b.matmul(L.in("input"), L.in("vec"), false, false)); });
  paddleLower(t, "mv", [](Lowering &L) { L.out(L.b.matmul(L.in("x"), L.in("vec"), false, false)); });
  torchLower(t, "addmm", [](Lowering &L) {
    L.out(scaledSum(L, L.b.matmul(L.in("mat1"), L.in("mat2"), false, false)));
  });
  torchLower(t, "addmv", [](Lowering &L) {
    L.out(scaledSum(L, L.b.matmul(L.in("mat"), L.in("vec"), false, false)));
  });
  torchLower(t, "addr", [](Lowering &L) {
    int x = L.in("vec1"), y = L.in("vec2");
    L.out(scaledSum(L, L.b.binary(Prim::Mul, L.b.reshape(x, {L.b.meta(x).numElements(), 1}),
                                  L.b.reshape(y, {1, L.b.meta(y).numElements()}))));
  });
  torchLower(t, "baddbmm", [](Lowering &L) {
    L.out(scaledSum(L, L.b.matmul(L.in("batch1"), L.in("batch2"), false, false)));
  });
  torchLower(t, "addbmm", [](Lowering &L) {
    int p = L.b.matmul(L.in("batch1"), L.in("batch2"), false, false);
    L.out(scaledSum(L, L.b.reduce(Prim::ReduceSum, p, {0}, false)));
  });
  auto tensordotLower = [](std::string xn, std::string yn, std::string dimsName) {
    return [=](Lowering &L) {
      int x = L.in(xn), y = L.in(yn);
      const Arg &dims = L.args.get(dimsName);
      std::vector<int64_t> xa, ya;
      if (dims.kind == Arg::Kind::Int) { // the last n of x with the first n of y
        int64_t n = dims.intValue, rx = L.b.meta(x).rank();
        for (int64_t i = 0; i < n; ++i) {
          xa.push_back(rx - n + i);
          ya.push_back(i);
        }
      } else {
        if (dims.items.size() != 2)
          badValue(L, "dims must be an int or two lists of dimensions");
        auto ints = [&](const Arg &a) {
          std::vector<int64_t> v;
          if (a.kind == Arg::Kind::Int)
            v.push_back(a.intValue);
          for (const Arg &i : a.items)
            v.push_back(i.intValue);
          return v;
        };
        xa = ints(dims.items[0]);
        ya = ints(dims.items[1]);
      }
      L.out(tensordot(L, x, y, xa, ya));
    };
  };
  torchLower(t, "tensordot", tensordotLower("a", "b", "dims"), false);
  auto kron = [](std::string xn, std::string yn) {
    return [=](Lowering &L) { // [a0, 1, a1, 1, ...] * [1, b0, 1, b1, ...], merged pairwise
      PrimBuilder &b = L.b;
      std::vector<int64_t> xs = b.meta(L.in(xn)).shape, ys = b.meta(L.in(yn)).shape;
      size_t rank = std::max(xs.size(), ys.size());
      xs.insert(xs.begin(), rank - xs.size(), 1);
      ys.insert(ys.begin(), rank - ys.size(), 1);
      std::vector<int64_t> sx, sy, out;
      for (size_t i = 0; i < rank; ++i) {
        sx.insert(sx.end(), {xs[i], 1});
        sy.insert(sy.end(), {1, ys[i]});
        out.push_back(xs[i] * ys[i]);
      }
      L.out(b.reshape(b.binary(Prim::Mul, b.reshape(L.in(xn), sx), b.reshape(L.in(yn), sy)), out));
    };
  };
  torchLower(t, "kron", kron("input", "other"));
  paddleLower(t, "kron", kron("x", "y"));
  auto cross = [](std::string xn, std::string yn, std::string dimName, bool firstOfThree) {
    return [=](Lowering &L) {
      PrimBuilder &b = L.b;
      Operands o = promoteOperands(L, xn, yn);
      std::vector<int64_t> shape = b.meta(b.binary(Prim::Add, o.x, o.y)).shape;
      int x = b.broadcastTo(o.x, shape), y = b.broadcastTo(o.y, shape);
      int64_t rank = int64_t(shape.size()), axis = -1;
      if (!L.args.isNone(dimName))
        axis = normalizeDim(b.opName(), L.args.intValue(dimName), rank);
      else if (firstOfThree) // torch.cross without dim: the first dimension of size 3
        for (int64_t a = 0; a < rank && axis < 0; ++a)
          axis = shape[a] == 3 ? a : -1;
      else
        axis = rank - 1;
      if (axis < 0 || shape[axis] != 3)
        badValue(L, "needs a dimension of size 3, not shape " + formatShape(shape));
      auto part = [&](int v, int64_t i) { return b.slice(v, {axis}, {i}, {i + 1}, {1}); };
      auto term = [&](int64_t i, int64_t j) {
        return b.binary(Prim::Sub, b.binary(Prim::Mul, part(x, i), part(y, j)),
                        b.binary(Prim::Mul, part(x, j), part(y, i)));
      };
      L.out(b.concat({term(1, 2), term(2, 0), term(0, 1)}, axis));
    };
  };
  torchLower(t, "cross", cross("input", "other", "dim", true));
  t.bind("torch.linalg.cross", cross("input", "other", "dim", false));
  paddleLower(t, "cross", cross("x", "y", "axis", true));
  torchLower(t, "cdist", [](Lowering &L) { // (sum |x1_i - x2_j|^p)^(1/p) over the last dim
    PrimBuilder &b = L.b;
    int x = floatInput(L, "x1"), y = floatInput(L, "x2");
    int64_t rx = b.meta(x).rank(), ry = b.meta(y).rank();
    if (rx < 2 || ry < 2)
      badValue(L, "expects tensors of at least 2 dimensions");
    std::vector<int64_t> sx = b.meta(x).shape, sy = b.meta(y).shape;
    sx.insert(sx.end() - 1, 1); // [..., P, 1, M]
    sy.insert(sy.end() - 2, 1); // [..., 1, R, M]
    int d = b.binary(Prim::Sub, b.reshape(x, sx), b.reshape(y, sy));
    L.out(pNorm(L, d, L.args.scalar("p"), {b.meta(d).rank() - 1}, false));
  }, false);
  auto diff = [](std::string xn, std::string dimName) {
    return [=](Lowering &L) { // x[1:] - x[:-1] along dim, n times, after prepend/append
      PrimBuilder &b = L.b;
      int x = L.in(xn);
      int64_t axis = normalizeDim(b.opName(), L.args.intValue(dimName), b.meta(x).rank());
      if (isDynamicDim(b.meta(x).shape[axis]))
        return L.out(diffWithPrepended(L, x, axis));
      std::vector<int> parts;
      for (const char *side : {"prepend", "append"}) {
        if (std::string(side) == "append")
          parts.push_back(x);
        if (!L.args.isNone(side)) {
          int v = b.cast(L.in(side), b.meta(x).dtype);
          if (b.meta(v).rank() == 0) {
            std::vector<int64_t> s = b.meta(x).shape;
            s[axis] = 1;
            v = b.broadcastTo(v, s);
          }
          parts.push_back(v);
        }
      }
      if (parts.size() > 1)
        x = b.concat(parts, axis);
      int64_t n = L.args.intValue("n");
      if (n < 0)
        badValue(L, "n must not be negative");
      bool logical = b.meta(x).dtype == DType::Bool;
      for (int64_t i = 0; i < n && b.meta(x).shape[axis] > 0; ++i) {
        int64_t len = b.meta(x).shape[axis];
        int hi = b.slice(x, {axis}, {1}, {len}, {1}), lo = b.slice(x, {axis}, {0}, {len - 1}, {1});
        x = logical ? b.binary(Prim::NotEqual, hi, lo) : b.binary(Prim::Sub, hi, lo);
      }
      L.out(x);
    };
  };
  torchLower(t, "diff", diff("input", "dim"));
  paddleLower(t, "diff", diff("x", "axis"));
  torchLower(t, "cov", [](Lowering &L) {
    if (!L.args.isNone("fweights") || !L.args.isNone("aweights"))
      badValue(L, "fweights and aweights are not supported yet");
    int c = covariance(L, floatInput(L, "input"), L.args.scalar("correction"));
    L.out(L.b.meta(L.in("input")).rank() == 1 ? L.b.reshape(c, {}) : c);
  });
  torchLower(t, "corrcoef", [](Lowering &L) { // cov / sqrt(var_i var_j), clamped to [-1, 1]
    PrimBuilder &b = L.b;
    int c = covariance(L, floatInput(L, "input"), 1);
    int64_t n = b.meta(c).shape[0];
    int d = b.unary(Prim::Sqrt, b.gather(b.reshape(c, {n * n}), b.binaryScalar(Prim::Mul, b.iota(n, DType::Int64), double(n + 1))));
    int r = b.binary(Prim::Div, b.binary(Prim::Div, c, b.reshape(d, {n, 1})), b.reshape(d, {1, n}));
    r = b.binary(Prim::Max, b.binary(Prim::Min, r, b.fill(1, {}, b.meta(r).dtype)),
                 b.fill(-1, {}, b.meta(r).dtype));
    // One variable (1-d input, or one row): a 0-d coefficient, as torch gives.
    L.out(n == 1 ? b.reshape(r, {}) : r);
  });
  auto trapezoid = [](bool cumulative) {
    return [=](Lowering &L) { // sum of (y[i+1] + y[i]) / 2 * (x[i+1] - x[i]), or dx
      PrimBuilder &b = L.b;
      int y = floatInput(L, "y");
      if (b.meta(y).rank() == 0)
        badValue(L, "expects y with at least one dimension");
      int64_t axis = normalizeDim(b.opName(), L.args.intValue("dim"), b.meta(y).rank());
      int64_t n = b.meta(y).shape[axis];
      if (n < 1)
        badValue(L, "integrates over an empty dimension");
      auto pairs = [&](int v, Prim p) {
        return b.binary(p, b.slice(v, {axis}, {1}, {n}, {1}), b.slice(v, {axis}, {0}, {n - 1}, {1}));
      };
      int area = b.binaryScalar(Prim::Mul, pairs(y, Prim::Add), 0.5);
      if (L.args.signature().find("x") && !L.args.isNone("x")) {
        int x = b.cast(L.in("x"), b.meta(y).dtype);
        if (b.meta(x).rank() != 1 && b.meta(x).rank() != b.meta(y).rank())
          badValue(L, "x must be 1-d or have y's rank");
        if (b.meta(x).rank() == 1 && b.meta(x).shape[0] != n)
          badValue(L, "x has " + std::to_string(b.meta(x).shape[0]) + " samples, y " +
                          std::to_string(n));
        if (b.meta(x).rank() == 1 && b.meta(y).rank() > 1) {
          std::vector<int64_t> s(b.meta(y).rank(), 1);
          s[axis] = b.meta(x).shape[0];
          x = b.reshape(x, s);
        }
        int64_t xa = b.meta(x).rank() == b.meta(y).rank() ? axis : b.meta(x).rank() - 1;
        int64_t m = b.meta(x).shape[xa];
        int dx = b.binary(Prim::Sub, b.slice(x, {xa}, {1}, {m}, {1}), b.slice(x, {xa}, {0}, {m - 1}, {1}));
        area = b.binary(Prim::Mul, area, dx);
      } else {
        double dx = L.args.signature().find("dx") && !L.args.isNone("dx") ? L.args.scalar("dx") : 1;
        if (dx != 1)
          area = b.binaryScalar(Prim::Mul, area, dx);
      }
      if (!cumulative) {
        L.out(b.reduce(Prim::ReduceSum, area, {axis}, false));
        return;
      }
      // Prefix sums of the areas: a window reduction like cumsum's (LowerReductions.cpp).
      L.out(scan(b, Prim::ReduceSum, area, axis, 0));
    };
  };
  torchLower(
      t, "gradient",
      [](Lowering &L) { // numpy's: central differences, one-sided edges
        PrimBuilder &b = L.b;
        int f = floatInput(L, "input");
        int64_t rank = b.meta(f).rank();
        std::vector<int64_t> dims;
        if (L.args.isNone("dim"))
          for (int64_t d = 0; d < rank; ++d)
            dims.push_back(d);
        else
          for (int64_t d : L.args.intList("dim"))
            dims.push_back(normalizeDim(b.opName(), d, rank));
        int64_t order = L.args.intValue("edge_order");
        if (order != 1 && order != 2)
          badValue(L, "edge_order must be 1 or 2, not " + std::to_string(order));
        bool coordinates = L.args.signatureIndex() == 1; // the TensorList overload
        std::vector<int> coords = coordinates ? L.inList("spacing") : std::vector<int>();
        std::vector<double> steps = coordinates || L.args.isNone("spacing")
                                        ? std::vector<double>{1.0}
                                        : L.args.floatList("spacing");
        size_t given = coordinates ? coords.size() : steps.size(); // one for all, or one per dim
        if (given != 1 && given != dims.size())
          badValue(L, "spacing has " + std::to_string(given) + " entries for " +
                          std::to_string(dims.size()) + " dimensions");
        DType d = b.meta(f).dtype;
        for (size_t k = 0; k < dims.size(); ++k) {
          int64_t axis = dims[k], n = b.meta(f).shape[axis];
          if (n < order + 1)
            badValue(L, "dimension " + std::to_string(axis) + " has " + std::to_string(n) +
                            " samples; edge_order " + std::to_string(order) + " needs " +
                            std::to_string(order + 1));
          auto at = [&](int v, int64_t start, int64_t count) {
            int64_t a = b.meta(v).rank() == 1 ? 0 : axis;
            return b.slice(v, {a}, {start}, {start + count}, {1});
          };
          // Per-position spacings along the axis, shaped to broadcast over f's other dims.
          auto alongAxis = [&](int v) {
            std::vector<int64_t> shape(rank, 1);
            shape[axis] = b.meta(v).shape[0];
            return b.reshape(v, shape);
          };
          auto mul = [&](int x, int y) { return b.binary(Prim::Mul, x, y); };
          auto add = [&](int x, int y) { return b.binary(Prim::Add, x, y); };
          auto sub = [&](int x, int y) { return b.binary(Prim::Sub, x, y); };
          auto div = [&](int x, int y) { return b.binary(Prim::Div, x, y); };
          std::vector<int> pieces;
          if (!coordinates) {
            double h = steps[given == 1 ? 0 : k];
            auto over = [&](int v, double scale) {
              return b.binaryScalar(Prim::Div, v, scale * h);
            };
            auto combo = [&](std::vector<std::pair<double, int64_t>> terms) { // sum c * f[i]
              int acc = -1;
              for (auto [c, i] : terms) {
                int term = b.binaryScalar(Prim::Mul, at(f, i, 1), c);
                acc = acc < 0 ? term : add(acc, term);
              }
              return acc;
            };
            int first = order == 1 ? over(sub(at(f, 1, 1), at(f, 0, 1)), 1)
                                   : over(combo({{-1.5, 0}, {2, 1}, {-0.5, 2}}), 1);
            int last = order == 1 ? over(sub(at(f, n - 1, 1), at(f, n - 2, 1)), 1)
                                  : over(combo({{0.5, n - 3}, {-2, n - 2}, {1.5, n - 1}}), 1);
            pieces = {first};
            if (n > 2)
              pieces.push_back(over(sub(at(f, 2, n - 2), at(f, 0, n - 2)), 2));
            pieces.push_back(last);
          } else {
            int x = b.cast(coords[given == 1 ? 0 : k], d);
            if (b.meta(x).rank() != 1 || b.meta(x).shape[0] != n)
              badValue(L, "spacing coordinates must be 1-d with " + std::to_string(n) + " entries");
            int dx = sub(at(x, 1, n - 1), at(x, 0, n - 1)); // dx[i] = x[i+1] - x[i]
            auto h = [&](int64_t i, int64_t count) { return alongAxis(at(dx, i, count)); };
            if (order == 1) {
              pieces.push_back(div(sub(at(f, 1, 1), at(f, 0, 1)), h(0, 1)));
            } else { // second-order one-sided: weights from the first two spacings
              int h1 = h(0, 1), h2 = h(1, 1), s = add(h1, h2);
              int a = b.unary(Prim::Neg, div(add(add(h1, h1), h2), mul(h1, s)));
              int c = b.unary(Prim::Neg, div(h1, mul(h2, s)));
              pieces.push_back(add(add(mul(a, at(f, 0, 1)), mul(div(s, mul(h1, h2)), at(f, 1, 1))),
                                   mul(c, at(f, 2, 1))));
            }
            if (n > 2) { // (hl^2 f[i+1] - hr^2 f[i-1] + (hr^2 - hl^2) f[i]) / (hl hr (hl + hr))
              int hl = h(0, n - 2), hr = h(1, n - 2);
              int hl2 = mul(hl, hl), hr2 = mul(hr, hr);
              int num = add(sub(mul(hl2, at(f, 2, n - 2)), mul(hr2, at(f, 0, n - 2))),
                            mul(sub(hr2, hl2), at(f, 1, n - 2)));
              pieces.push_back(div(num, mul(mul(hl, hr), add(hl, hr))));
            }
            if (order == 1) {
              pieces.push_back(div(sub(at(f, n - 1, 1), at(f, n - 2, 1)), h(n - 2, 1)));
            } else {
              int h1 = h(n - 3, 1), h2 = h(n - 2, 1), s = add(h1, h2);
              int a = div(h2, mul(h1, s)), c = div(add(add(h2, h2), h1), mul(h2, s));
              int mid = b.unary(Prim::Neg, div(s, mul(h1, h2)));
              pieces.push_back(add(add(mul(a, at(f, n - 3, 1)), mul(mid, at(f, n - 2, 1))),
                                   mul(c, at(f, n - 1, 1))));
            }
          }
          L.out(b.concat(pieces, axis));
        }
      },
      false);
  torchLower(t, "trapezoid", trapezoid(false), false);
  torchLower(t, "trapz", trapezoid(false), false);
  torchLower(t, "cumulative_trapezoid", trapezoid(true), false);
  torchLower(t, "renorm", [](Lowering &L) { // slices along dim rescaled to norm <= maxnorm
    PrimBuilder &b = L.b;
    int x = floatInput(L, "input");
    int64_t rank = b.meta(x).rank(), axis = normalizeDim(b.opName(), L.args.intValue("dim"), rank);
    std::vector<int64_t> others;
    for (int64_t a = 0; a < rank; ++a)
      if (a != axis)
        others.push_back(a);
    double p = L.args.scalar("p"), maxnorm = L.args.scalar("maxnorm");
    int norm = pNorm(L, x, p, others, true);
    int scale = b.select(b.binary(Prim::Greater, norm, b.fill(maxnorm, {}, b.meta(x).dtype)),
                         b.binary(Prim::Div, b.fill(maxnorm, {}, b.meta(x).dtype),
                                  b.binaryScalar(Prim::Add, norm, 1e-7)),
                         b.fill(1, {}, b.meta(x).dtype));
    L.out(b.binary(Prim::Mul, x, scale));
  });

  t.bind("torch.einsum", einsum);
  t.bind("paddle.einsum", einsum);
  paddleLower(t, "matmul", [](Lowering &L) {
    L.out(L.b.matmul(L.in("x"), L.in("y"), L.args.boolValue("transpose_x"),
                     L.args.boolValue("transpose_y")));
  });
  torchLower(t, "matmul",
             [](Lowering &L) { L.out(L.b.matmul(L.in("input"), L.in("other"), false, false)); });
  // paddle's weight is [in, out]; torch's is [out, in].
  t.bind("paddle.nn.functional.linear", [](Lowering &L) {
    L.out(affine(L, L.b.matmul(L.in("x"), L.in("weight"), false, false), "", "bias"));
  });
  t.bind("torch.nn.functional.linear", [](Lowering &L) {
    L.out(affine(L, L.b.matmul(L.in("input"), L.in("weight"), false, true), "", "bias"));
  });
  t.bind("paddle.nn.functional.scaled_dot_product_attention", attentionOp(true));
  t.bind("torch.nn.functional.scaled_dot_product_attention", attentionOp(false));
}

} // namespace sotc::ops::lowering
