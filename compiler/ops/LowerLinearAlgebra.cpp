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
    if (rank >= 3 && b.meta(q).shape[rank - 3] != b.meta(k).shape[rank - 3])
      badValue(L, "query and key have different numbers of heads (grouped-query attention is "
                  "not supported yet)");
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

/// einsum of one or two operands without ellipses or repeated labels: labels in the output
/// and both operands are batch dimensions, in both but not the output contracted, in one
/// operand and the output its rows or columns; one batched GEMM [B, M, K] x [B, K, N].
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
    badValue(L, "ellipses ('...') are not supported yet");
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
} // namespace

void registerLinearAlgebra(OpTable &t) {
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
