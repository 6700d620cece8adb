//===- LowerLosses.cpp - Lowerings: losses and distances, each framework's conventions ----===//
//
// Losses as inference computes them (evaluation metrics, distillation targets, scoring). A
// class index picks its log-probability by comparing the label with the class positions
// (iota) and summing over the class axis: no gather, so the whole loss fuses into the
// softmax's kernel, and a label that names no class (ignore_index) picks nothing.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <cmath>

namespace sotc::ops::lowering {

namespace {

enum class Reduction { None, Mean, Sum };

Reduction reductionOf(Lowering &L, const std::string &mode, bool batchMean = false) {
  if (mode == "none")
    return Reduction::None;
  if (mode == "mean")
    return Reduction::Mean;
  if (mode == "sum")
    return Reduction::Sum;
  badValue(L, "reduction must be 'none', 'mean'" + std::string(batchMean ? ", 'batchmean'" : "") +
                  " or 'sum', not '" + mode + "'");
}

/// torch's reduction, or the one its deprecated size_average/reduce arguments name
/// (torch's _Reduction.legacy_get_string: either defaults to True).
std::string torchReductionName(Lowering &L) {
  bool legacy = L.args.signature().find("size_average") &&
                (!L.args.isNone("size_average") || !L.args.isNone("reduce"));
  if (!legacy)
    return L.args.get("reduction").stringValue;
  bool average = L.args.isNone("size_average") || L.args.boolValue("size_average");
  bool reduce = L.args.isNone("reduce") || L.args.boolValue("reduce");
  return !reduce ? "none" : average ? "mean" : "sum";
}

/// The loss reduced: each element, their sum, or their mean.
int reduceLoss(Lowering &L, int loss, Reduction how) {
  std::vector<int64_t> all;
  for (int64_t a = 0; a < L.b.meta(loss).rank(); ++a)
    all.push_back(a);
  if (how == Reduction::None)
    return loss;
  return how == Reduction::Sum ? reduceTo(L, Prim::ReduceSum, loss, all, false)
                               : mean(L, loss, all, false);
}

/// The call's reduction (torch's, with its deprecated spellings, or paddle's) applied.
int reducedBy(Lowering &L, int loss, bool torch) {
  return reduceLoss(
      L, loss, reductionOf(L, torch ? torchReductionName(L) : L.args.get("reduction").stringValue));
}

/// x / (d + (d == 0)): the frameworks' guard against an all-ignored batch.
int divideGuarded(PrimBuilder &b, int x, int d) {
  int zero = b.binary(Prim::Equal, d, scalarLike(b, 0, d));
  return b.binary(Prim::Div, x, b.select(zero, scalarLike(b, 1, d), d));
}

/// `w` [C] shaped to broadcast along `axis` of a rank-`rank` tensor.
int alongAxis(PrimBuilder &b, int w, int64_t axis, int64_t rank, DType dtype) {
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[axis] = b.meta(w).numElements();
  return b.reshape(b.cast(w, dtype), shape);
}

/// What a class label picks from log-probabilities `logp`: the negated log-probability of its
/// class times the class weight (`loss`), and that weight (`weight`; 1 without weights), both
/// zero where the label is ignore_index. `label` has logp's shape with the class axis of size
/// 1 (kept in the results).
struct Picked {
  int loss, weight;
};

Picked pickClass(Lowering &L, int logp, int64_t classAxis, int label, int weights,
                 int64_t ignoreIndex) {
  PrimBuilder &b = L.b;
  DType dtype = b.meta(logp).dtype;
  int64_t rank = b.meta(logp).rank(), classes = b.meta(logp).shape[classAxis];
  if (!isIntegral(b.meta(label).dtype))
    badValue(L,
             "class labels must be integers, not " + std::string(dtypeName(b.meta(label).dtype)));
  if (weights >= 0 && b.meta(weights).numElements() != classes)
    badValue(L, "weight has " + std::to_string(b.meta(weights).numElements()) + " elements for " +
                    std::to_string(classes) + " classes");
  label = b.cast(label, DType::Int64);
  int match = b.binary(Prim::Equal, label, positions(b, classes, classAxis, rank));
  int valid =
      b.cast(b.binaryScalar(Prim::NotEqual, label, static_cast<double>(ignoreIndex)), dtype);
  int zero = scalarLike(b, 0, logp);
  int picked = b.reduce(Prim::ReduceSum, b.select(match, logp, zero), {classAxis}, true);
  int weight = valid;
  if (weights >= 0)
    weight = b.binary(Prim::Mul, valid,
                      b.reduce(Prim::ReduceSum,
                               b.select(match, alongAxis(b, weights, classAxis, rank, dtype), zero),
                               {classAxis}, true));
  return {b.binary(Prim::Mul, b.unary(Prim::Neg, picked), weight), weight};
}

/// torch's class axis: 1, or 0 for an unbatched [C] input.
int64_t torchClassAxis(Lowering &L, int x) {
  int64_t rank = L.b.meta(x).rank();
  if (rank == 0)
    badValue(L, "expects an input with a class dimension, not a 0-d tensor");
  return rank == 1 ? 0 : 1;
}

/// A label with the input's shape but the class axis: kept as a size-1 axis.
int labelWithClassAxis(Lowering &L, int x, int64_t classAxis, int label) {
  std::vector<int64_t> want = L.b.meta(x).shape;
  want.erase(want.begin() + classAxis);
  if (L.b.meta(label).shape != want)
    badValue(L, "the target of shape " + formatShape(L.b.meta(label).shape) +
                    " does not fit an input of shape " + formatShape(L.b.meta(x).shape) +
                    " (expected " + formatShape(want) + ")");
  want.insert(want.begin() + classAxis, 1);
  return L.b.reshape(label, want);
}

/// torch's nll_loss over log-probabilities `logp` (cross_entropy adds the label smoothing
/// term `smoothing` > 0): mean divides by the picked weights' sum.
int torchNll(Lowering &L, int logp, int target, double smoothing) {
  PrimBuilder &b = L.b;
  int64_t classAxis = torchClassAxis(L, logp);
  Picked p = pickClass(L, logp, classAxis, labelWithClassAxis(L, logp, classAxis, target),
                       L.in("weight"), L.args.intValue("ignore_index"));
  std::vector<int64_t> resultShape = b.meta(target).shape;
  int loss = b.reshape(p.loss, resultShape), weight = b.reshape(p.weight, resultShape);
  int smooth = -1;
  if (smoothing > 0) { // -sum_c w_c logp_c per position, zero where ignored
    int64_t rank = b.meta(logp).rank();
    int terms = L.in("weight") >= 0
                    ? b.binary(Prim::Mul, logp,
                               alongAxis(b, L.in("weight"), classAxis, rank, b.meta(logp).dtype))
                    : logp;
    int valid = b.binaryScalar(Prim::NotEqual, target,
                               static_cast<double>(L.args.intValue("ignore_index")));
    smooth =
        b.select(valid, b.unary(Prim::Neg, b.reduce(Prim::ReduceSum, terms, {classAxis}, false)),
                 scalarLike(b, 0, logp));
  }
  double classes = static_cast<double>(b.meta(logp).shape[classAxis]);
  auto blend = [&](int nll, int smoothTerm) {
    return smooth < 0 ? nll
                      : b.binary(Prim::Add, b.binaryScalar(Prim::Mul, nll, 1 - smoothing),
                                 b.binaryScalar(Prim::Mul, smoothTerm, smoothing / classes));
  };
  Reduction how = reductionOf(L, torchReductionName(L));
  if (how == Reduction::None)
    return blend(loss, smooth);
  int total = blend(reduceLoss(L, loss, Reduction::Sum),
                    smooth < 0 ? -1 : reduceLoss(L, smooth, Reduction::Sum));
  return how == Reduction::Sum ? total
                               : b.binary(Prim::Div, total, reduceLoss(L, weight, Reduction::Sum));
}

void torchNllLoss(Lowering &L) { L.out(torchNll(L, floatInput(L, "input"), L.in("target"), 0)); }

/// torch's cross_entropy: log_softmax over the class axis, then nll_loss for class labels, or
/// -sum(weight * target * logp) for class probabilities (mean: per position).
void torchCrossEntropy(Lowering &L) {
  PrimBuilder &b = L.b;
  int x = floatInput(L, "input"), target = L.in("target");
  int64_t classAxis = torchClassAxis(L, x);
  int logp = softmax(L, x, classAxis, true);
  double smoothing = L.args.scalar("label_smoothing");
  if (smoothing < 0 || smoothing > 1)
    badValue(L, "label_smoothing must be in [0, 1]");
  if (!isFloating(b.meta(target).dtype))
    return L.out(torchNll(L, logp, target, smoothing));
  if (b.meta(target).shape != b.meta(x).shape)
    badValue(L, "class probabilities must have the input's shape " + formatShape(b.meta(x).shape) +
                    ", not " + formatShape(b.meta(target).shape));
  int64_t rank = b.meta(x).rank(), classes = b.meta(x).shape[classAxis];
  int probs = b.cast(target, b.meta(logp).dtype);
  if (smoothing > 0)
    probs = b.binaryScalar(Prim::Add, b.binaryScalar(Prim::Mul, probs, 1 - smoothing),
                           smoothing / static_cast<double>(classes));
  int terms = b.binary(Prim::Mul, logp, probs);
  if (L.in("weight") >= 0)
    terms = b.binary(Prim::Mul, terms,
                     alongAxis(b, L.in("weight"), classAxis, rank, b.meta(logp).dtype));
  int loss = b.unary(Prim::Neg, b.reduce(Prim::ReduceSum, terms, {classAxis}, false));
  Reduction how = reductionOf(L, torchReductionName(L));
  if (how != Reduction::Mean)
    return L.out(reduceLoss(L, loss, how));
  L.out(reduceLoss(L, loss, Reduction::Mean)); // per position, whatever the weights
}

/// paddle's cross_entropy: the class axis is `axis` (last by default); labels are class
/// indices (the label's shape without the class axis, or with it of size 1) or, with
/// soft_label or label_smoothing, probabilities. Weighted losses are scaled per position by the
/// label's class weight; mean divides by the summed weights, or by the non-ignored count
/// when ignore_index >= 0, else by the positions. 'none' keeps a size-1 class axis unless the
/// label had none.
void paddleCrossEntropy(Lowering &L) {
  PrimBuilder &b = L.b;
  int x = floatInput(L, "input"), label = L.in("label"), weights = L.in("weight");
  int64_t rank = b.meta(x).rank();
  int64_t axis = normalizeDim(b.opName(), L.args.intValue("axis"), rank);
  int64_t classes = b.meta(x).shape[axis], ignore = L.args.intValue("ignore_index");
  DType dtype = b.meta(x).dtype;
  int logp = L.args.boolValue("use_softmax") ? softmax(L, x, axis, true) : b.unary(Prim::Log, x);
  double smoothing = L.args.scalar("label_smoothing");
  bool soft = L.args.boolValue("soft_label") || smoothing > 0;
  bool labelHasAxis = b.meta(label).rank() == rank;
  int loss, weight = -1;
  if (soft) {
    int probs;
    if (labelHasAxis && (L.args.boolValue("soft_label") || isFloating(b.meta(label).dtype))) {
      if (b.meta(label).shape != b.meta(x).shape)
        badValue(L, "soft labels must have the input's shape " + formatShape(b.meta(x).shape));
      probs = b.cast(label, dtype);
    } else { // class indices made one-hot for the smoothing
      if (labelHasAxis)
        label = b.reshape(label, reducedShape(b.meta(x).shape, {axis}, false));
      label = labelWithClassAxis(L, x, axis, label);
      probs = b.cast(
          b.binary(Prim::Equal, b.cast(label, DType::Int64), positions(b, classes, axis, rank)),
          dtype);
    }
    if (smoothing > 0)
      probs = b.binaryScalar(Prim::Add, b.binaryScalar(Prim::Mul, probs, 1 - smoothing),
                             smoothing / static_cast<double>(classes));
    if (ignore >= 0 && reductionOf(L, L.args.get("reduction").stringValue) == Reduction::Mean)
      badValue(L, "ignore_index applies to class labels, not soft labels (pass ignore_index=-100)");
    loss = b.unary(Prim::Neg,
                   b.reduce(Prim::ReduceSum, b.binary(Prim::Mul, probs, logp), {axis}, true));
    if (weights >= 0) {
      weight = b.reduce(Prim::ReduceSum,
                        b.binary(Prim::Mul, probs, alongAxis(b, weights, axis, rank, dtype)),
                        {axis}, true);
      loss = b.binary(Prim::Mul, loss, weight);
    }
  } else {
    if (labelHasAxis && b.meta(label).shape[axis] != 1)
      badValue(L, "class labels have the input's shape without the class axis, or with it of "
                  "size 1; not " +
                      formatShape(b.meta(label).shape));
    if (labelHasAxis)
      label = b.reshape(label, reducedShape(b.meta(x).shape, {axis}, false));
    Picked p = pickClass(L, logp, axis, labelWithClassAxis(L, x, axis, label), weights, ignore);
    loss = p.loss;
    weight = p.weight;
  }
  Reduction how = reductionOf(L, L.args.get("reduction").stringValue);
  if (how == Reduction::None)
    return L.out(soft || labelHasAxis
                     ? loss
                     : b.reshape(loss, reducedShape(b.meta(loss).shape, {axis}, false)));
  int total = reduceLoss(L, loss, Reduction::Sum);
  if (how == Reduction::Sum)
    return L.out(total);
  if (ignore >= 0 || weights >= 0) // the picked weights carry the ignore mask
    return L.out(divideGuarded(b, total, reduceLoss(L, weight, Reduction::Sum)));
  L.out(reduceLoss(L, loss, Reduction::Mean));
}

/// paddle's nll_loss: class axis 1, as torch's nll_loss (mean: by the picked weights).
void paddleNllLoss(Lowering &L) {
  PrimBuilder &b = L.b;
  int logp = floatInput(L, "input"), label = L.in("label");
  if (b.meta(logp).rank() < 2)
    badValue(L, "expects an input of shape [N, C, ...]");
  Picked p = pickClass(L, logp, 1, labelWithClassAxis(L, logp, 1, label), L.in("weight"),
                       L.args.intValue("ignore_index"));
  std::vector<int64_t> resultShape = b.meta(label).shape;
  Reduction how = reductionOf(L, L.args.get("reduction").stringValue);
  int loss = b.reshape(p.loss, resultShape);
  if (how != Reduction::Mean)
    return L.out(reduceLoss(L, loss, how));
  L.out(b.binary(Prim::Div, reduceLoss(L, loss, Reduction::Sum),
                 reduceLoss(L, p.weight, Reduction::Sum)));
}

/// An elementwise loss of (input, target) broadcast together; torch's optional `weight`
/// scales each element, its mean dividing by the weights' sum (`meanByWeights`) or by the
/// count (huber_loss).
using Pointwise = std::function<int(PrimBuilder &, int difference)>;

LowerFn pointwiseLoss(std::string xn, std::string yn, bool torch, Pointwise f,
                      bool meanByWeights = true) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    Operands o = promoteOperands(L, xn, yn);
    DType dtype = isFloating(o.dtype) ? o.dtype : DType::Float32;
    int loss = f(b, b.binary(Prim::Sub, b.cast(o.x, dtype), b.cast(o.y, dtype)));
    int w = torch && L.args.signature().find("weight") ? L.in("weight") : -1;
    if (w < 0)
      return L.out(reducedBy(L, loss, torch));
    Reduction how =
        reductionOf(L, torch ? torchReductionName(L) : L.args.get("reduction").stringValue);
    if (b.meta(w).shape != b.meta(L.in(xn)).shape)
      badValue(L, "weight must have the input's shape " + formatShape(b.meta(L.in(xn)).shape));
    w = b.cast(w, dtype);
    loss = b.binary(Prim::Mul, loss, w);
    if (how == Reduction::Mean && meanByWeights)
      return L.out(b.binary(Prim::Div, reduceLoss(L, loss, Reduction::Sum),
                            reduceLoss(L, w, Reduction::Sum)));
    L.out(reduceLoss(L, loss, how));
  };
}

/// Huber: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).
int huber(PrimBuilder &b, int d, double delta) {
  int a = b.unary(Prim::Abs, d);
  int quadratic = b.binaryScalar(Prim::Mul, b.binary(Prim::Mul, d, d), 0.5);
  int linear = b.binaryScalar(Prim::Mul, b.binaryScalar(Prim::Sub, a, 0.5 * delta), delta);
  return b.select(b.binaryScalar(Prim::Less, a, delta), quadratic, linear);
}

/// Binary cross entropy of probabilities: -(y log p + (1 - y) log(1 - p)), each log at least
/// -100 (torch's clamp, which paddle's kernel shares), times weight.
LowerFn binaryCrossEntropy(std::string xn, std::string yn, bool torch) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int p = floatInput(L, xn), y = b.cast(L.in(yn), b.meta(p).dtype);
    auto clampedLog = [&](int v) { return b.binaryScalar(Prim::Max, b.unary(Prim::Log, v), -100); };
    int one = scalarLike(b, 1, p);
    int loss = b.unary(Prim::Neg, b.binary(Prim::Add, b.binary(Prim::Mul, y, clampedLog(p)),
                                           b.binary(Prim::Mul, b.binary(Prim::Sub, one, y),
                                                    clampedLog(b.binary(Prim::Sub, one, p)))));
    if (L.in("weight") >= 0)
      loss = b.binary(Prim::Mul, loss, b.cast(L.in("weight"), b.meta(p).dtype));
    L.out(reducedBy(L, loss, torch));
  };
}

/// From logits x: (1 - y) x + (1 + (pos_weight - 1) y) (log1p(exp(-|x|)) + max(-x, 0)),
/// stable for any x; times weight.
LowerFn binaryCrossEntropyWithLogits(std::string xn, std::string yn, bool torch) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = floatInput(L, xn), y = b.cast(L.in(yn), b.meta(x).dtype);
    int one = scalarLike(b, 1, x);
    int softplusNeg = b.binary(
        Prim::Add,
        b.unary(Prim::Log1p, b.unary(Prim::Exp, b.unary(Prim::Neg, b.unary(Prim::Abs, x)))),
        b.binaryScalar(Prim::Max, b.unary(Prim::Neg, x), 0));
    int scale = one;
    if (L.in("pos_weight") >= 0)
      scale = b.binary(
          Prim::Add, one,
          b.binary(Prim::Mul,
                   b.binaryScalar(Prim::Sub, b.cast(L.in("pos_weight"), b.meta(x).dtype), 1), y));
    int loss = b.binary(Prim::Add, b.binary(Prim::Mul, b.binary(Prim::Sub, one, y), x),
                        b.binary(Prim::Mul, scale, softplusNeg));
    if (L.in("weight") >= 0)
      loss = b.binary(Prim::Mul, loss, b.cast(L.in("weight"), b.meta(x).dtype));
    L.out(reducedBy(L, loss, torch));
  };
}

/// KL divergence of log-probabilities x from target y: xlogy(y, y) - y x (0 where y is 0;
/// log_target: exp(y) (y - x)); batchmean divides the sum by the batch size.
LowerFn klDiv(std::string xn, std::string yn, bool torch) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = floatInput(L, xn), y = b.cast(L.in(yn), b.meta(x).dtype);
    int loss;
    if (L.args.boolValue("log_target")) {
      loss = b.binary(Prim::Mul, b.unary(Prim::Exp, y), b.binary(Prim::Sub, y, x));
    } else {
      int zero = scalarLike(b, 0, x);
      int ylogy = b.select(b.binary(Prim::Equal, y, zero), zero,
                           b.binary(Prim::Mul, y, b.unary(Prim::Log, y)));
      loss = b.binary(Prim::Sub, ylogy, b.binary(Prim::Mul, y, x));
    }
    std::string mode = torch ? torchReductionName(L) : L.args.get("reduction").stringValue;
    if (mode == "batchmean") {
      if (b.meta(x).rank() == 0)
        return L.out(reduceLoss(L, loss, Reduction::Sum));
      return L.out(b.binaryScalar(Prim::Div, reduceLoss(L, loss, Reduction::Sum),
                                  static_cast<double>(b.meta(x).shape[0])));
    }
    L.out(reduceLoss(L, loss, reductionOf(L, mode, true)));
  };
}

/// Broadcast x1, x2 as float; the axis normalized for the broadcast rank.
std::pair<int, int> floatPair(Lowering &L, const std::string &xn, const std::string &yn) {
  Operands o = promoteOperands(L, xn, yn);
  DType d = isFloating(o.dtype) ? o.dtype : DType::Float32;
  int x = L.b.cast(o.x, d), y = L.b.cast(o.y, d);
  std::vector<int64_t> shape = broadcastShapes(L.b.opName(), L.b.meta(x).shape, L.b.meta(y).shape);
  return {L.b.broadcastTo(x, shape), L.b.broadcastTo(y, shape)};
}

/// torch: sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps)), dim).
void torchCosineSimilarity(Lowering &L) {
  PrimBuilder &b = L.b;
  auto [x, y] = floatPair(L, "x1", "x2");
  int64_t axis = normalizeDim(b.opName(), L.args.intValue("dim"), b.meta(x).rank());
  double eps = L.args.scalar("eps");
  auto unit = [&](int v) {
    int norm =
        b.unary(Prim::Sqrt, b.reduce(Prim::ReduceSum, b.binary(Prim::Mul, v, v), {axis}, true));
    return b.binary(Prim::Div, v, b.binaryScalar(Prim::Max, norm, eps));
  };
  L.out(b.reduce(Prim::ReduceSum, b.binary(Prim::Mul, unit(x), unit(y)), {axis}, false));
}

/// paddle: sum(x1 * x2) / sqrt(max(sum(x1^2) * sum(x2^2), eps^2)).
void paddleCosineSimilarity(Lowering &L) {
  PrimBuilder &b = L.b;
  auto [x, y] = floatPair(L, "x1", "x2");
  int64_t axis = normalizeDim(b.opName(), L.args.intValue("axis"), b.meta(x).rank());
  double eps = L.args.scalar("eps");
  auto sumOf = [&](int u, int v) {
    return b.reduce(Prim::ReduceSum, b.binary(Prim::Mul, u, v), {axis}, false);
  };
  int norms = b.binaryScalar(Prim::Max, b.binary(Prim::Mul, sumOf(x, x), sumOf(y, y)), eps * eps);
  L.out(b.binary(Prim::Div, sumOf(x, y), b.unary(Prim::Sqrt, norms)));
}

/// The p-norm of x - y + eps over the last axis (both frameworks).
LowerFn pairwiseDistance(std::string xn, std::string yn, std::string epsName) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    auto [x, y] = floatPair(L, xn, yn);
    int d = b.binaryScalar(Prim::Add, b.binary(Prim::Sub, x, y), L.args.scalar(epsName));
    int64_t rank = b.meta(d).rank();
    std::vector<int64_t> axes;
    if (rank > 0)
      axes.push_back(rank - 1);
    L.out(pNorm(L, d, L.args.scalar("p"), axes, L.args.boolValue("keepdim")));
  };
}

/// Tensors of one float dtype, broadcast to one shape (the inputs and the ±1 targets).
std::vector<int> floatsBroadcast(Lowering &L, const std::vector<std::string> &names) {
  PrimBuilder &b = L.b;
  std::vector<int> xs;
  std::vector<int64_t> shape;
  DType dtype = DType::Float32;
  for (const std::string &n : names) {
    xs.push_back(L.in(n));
    shape = broadcastShapes(b.opName(), shape, b.meta(xs.back()).shape);
    if (isFloating(b.meta(xs.back()).dtype) && b.meta(xs.back()).dtype != DType::Float32)
      dtype = b.meta(xs.back()).dtype;
  }
  for (int &x : xs)
    x = b.broadcastTo(b.cast(x, dtype), shape);
  return xs;
}

/// margin_ranking_loss: max(0, -y (x1 - x2) + margin).
LowerFn marginRanking(std::vector<std::string> names, bool torch) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    std::vector<int> v = floatsBroadcast(L, names);
    int d = b.binary(Prim::Mul, b.unary(Prim::Neg, v[2]), b.binary(Prim::Sub, v[0], v[1]));
    L.out(reducedBy(
        L, b.binaryScalar(Prim::Max, b.binaryScalar(Prim::Add, d, L.args.scalar("margin")), 0),
        torch));
  };
}

/// hinge_embedding_loss: x where y is not -1, plus max(0, margin - x) where y is not 1.
LowerFn hingeEmbedding(std::vector<std::string> names, bool torch) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    std::vector<int> v = floatsBroadcast(L, names);
    int x = v[0], y = v[1], zero = scalarLike(b, 0, x);
    int hinge = b.binaryScalar(
        Prim::Max, b.binary(Prim::Sub, scalarLike(b, L.args.scalar("margin"), x), x), 0);
    int loss = b.binary(Prim::Add, b.select(b.binaryScalar(Prim::NotEqual, y, 1), hinge, zero),
                        b.select(b.binaryScalar(Prim::NotEqual, y, -1), x, zero));
    L.out(reducedBy(L, loss, torch));
  };
}

/// soft_margin_loss: log(1 + exp(-y x)).
LowerFn softMargin(std::vector<std::string> names, bool torch) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    std::vector<int> v = floatsBroadcast(L, names);
    int e = b.unary(Prim::Exp, b.unary(Prim::Neg, b.binary(Prim::Mul, v[0], v[1])));
    L.out(reducedBy(L, b.unary(Prim::Log1p, e), torch));
  };
}

/// multilabel_soft_margin_loss: -(y logsigmoid(x) + (1 - y) logsigmoid(-x)) * weight, the
/// mean over the classes (the last axis), then reduced over the samples.
LowerFn multilabelSoftMargin(std::vector<std::string> names, bool torch) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    std::vector<int> v = floatsBroadcast(L, names);
    int x = v[0], y = v[1];
    auto logSigmoid = [&](int z) { // min(z, 0) - log1p(exp(-|z|))
      return b.binary(
          Prim::Sub, b.binaryScalar(Prim::Min, z, 0),
          b.unary(Prim::Log1p, b.unary(Prim::Exp, b.unary(Prim::Neg, b.unary(Prim::Abs, z)))));
    };
    int loss =
        b.unary(Prim::Neg, b.binary(Prim::Add, b.binary(Prim::Mul, y, logSigmoid(x)),
                                    b.binary(Prim::Mul, b.binary(Prim::Sub, scalarLike(b, 1, y), y),
                                             logSigmoid(b.unary(Prim::Neg, x)))));
    if (L.in("weight") >= 0)
      loss = b.binary(Prim::Mul, loss, b.cast(L.in("weight"), b.meta(loss).dtype));
    int64_t rank = b.meta(loss).rank();
    if (rank == 0)
      badValue(L, "expects an input with a class dimension");
    L.out(reducedBy(L, mean(L, loss, {rank - 1}, false), torch));
  };
}

/// poisson_nll_loss: exp(x) - y x (log_input), else x - y log(x + eps); full adds Stirling's
/// y log y - y + log(2 pi y) / 2 where y > 1.
LowerFn poissonNll(std::vector<std::string> names, std::string epsName, bool torch) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    std::vector<int> v = floatsBroadcast(L, names);
    int x = v[0], y = v[1];
    int loss = L.args.boolValue("log_input")
                   ? b.binary(Prim::Sub, b.unary(Prim::Exp, x), b.binary(Prim::Mul, y, x))
                   : b.binary(Prim::Sub, x,
                              b.binary(Prim::Mul, y,
                                       b.unary(Prim::Log, b.binaryScalar(Prim::Add, x,
                                                                         L.args.scalar(epsName)))));
    if (L.args.boolValue("full")) {
      int logY = b.unary(Prim::Log, y);
      int stirling =
          b.binary(Prim::Add, b.binary(Prim::Sub, b.binary(Prim::Mul, y, logY), y),
                   b.binaryScalar(Prim::Mul,
                                  b.unary(Prim::Log, b.binaryScalar(Prim::Mul, y, 2 * M_PI)), 0.5));
      loss = b.binary(Prim::Add, loss,
                      b.select(b.binaryScalar(Prim::Greater, y, 1), stirling, scalarLike(b, 0, y)));
    }
    L.out(reducedBy(L, loss, torch));
  };
}

/// gaussian_nll_loss: (log(max(var, eps)) + (x - y)^2 / max(var, eps)) / 2 (+ log(2 pi) / 2
/// with full); a var without the last axis, or with it of size 1, is one per sample.
LowerFn gaussianNll(std::vector<std::string> names, std::string epsName, bool torch) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int var = L.args.get(names[2]).isTensor()
                  ? L.in(names[2])
                  : b.fill(L.args.scalar(names[2]), {}, DType::Float32); // torch's float var
    if (!L.args.get(names[2]).isTensor())
      var = b.broadcastTo(var, b.meta(L.in(names[0])).shape);
    std::vector<int64_t> xs = b.meta(L.in(names[0])).shape, vs = b.meta(var).shape;
    if (!xs.empty() && vs.size() + 1 == xs.size() && std::equal(vs.begin(), vs.end(), xs.begin()))
      vs.push_back(1);
    else if (vs != xs && !(vs.size() == xs.size() && !vs.empty() && vs.back() == 1 &&
                           std::equal(vs.begin(), vs.end() - 1, xs.begin())))
      badValue(L, "var of shape " + formatShape(b.meta(var).shape) +
                      " fits neither the input's shape " + formatShape(xs) +
                      " nor one value per sample");
    Operands o = promoteOperands(L, names[0], names[1]);
    DType dtype = isFloating(o.dtype) ? o.dtype : DType::Float32;
    int x = b.cast(o.x, dtype), y = b.cast(o.y, dtype);
    int v = b.binaryScalar(Prim::Max, b.reshape(b.cast(var, dtype), vs), L.args.scalar(epsName));
    int d = b.binary(Prim::Sub, x, y);
    int loss = b.binaryScalar(Prim::Mul,
                              b.binary(Prim::Add, b.unary(Prim::Log, v),
                                       b.binary(Prim::Div, b.binary(Prim::Mul, d, d), v)),
                              0.5);
    if (L.args.boolValue("full"))
      loss = b.binaryScalar(Prim::Add, loss, 0.5 * std::log(2 * M_PI));
    L.out(reducedBy(L, loss, torch));
  };
}

/// cosine_embedding_loss: cos = sum(x1 x2) / sqrt((sum x1^2 + 1e-12) (sum x2^2 + 1e-12)) over
/// the last axis; 1 - cos where y is 1, max(0, cos - margin) where y is -1.
LowerFn cosineEmbedding(std::vector<std::string> names, bool torch) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    std::vector<int> v = floatsBroadcast(L, {names[0], names[1]});
    int64_t axis = b.meta(v[0]).rank() - 1;
    if (axis < 0)
      badValue(L, "expects inputs with a feature dimension");
    auto sumOf = [&](int p, int q) {
      return b.reduce(Prim::ReduceSum, b.binary(Prim::Mul, p, q), {axis}, false);
    };
    int norms = b.binary(Prim::Mul, b.binaryScalar(Prim::Add, sumOf(v[0], v[0]), 1e-12),
                         b.binaryScalar(Prim::Add, sumOf(v[1], v[1]), 1e-12));
    int cos = b.binary(Prim::Div, sumOf(v[0], v[1]), b.unary(Prim::Sqrt, norms));
    int y = b.cast(L.in(names[2]), b.meta(cos).dtype), zero = scalarLike(b, 0, cos);
    int loss = b.binary(
        Prim::Add,
        b.select(b.binaryScalar(Prim::Equal, y, 1), b.binary(Prim::Sub, scalarLike(b, 1, cos), cos),
                 zero),
        b.select(
            b.binaryScalar(Prim::Equal, y, -1),
            b.binaryScalar(Prim::Max, b.binaryScalar(Prim::Sub, cos, L.args.scalar("margin")), 0),
            zero));
    L.out(reducedBy(L, loss, torch));
  };
}

/// triplet_margin_loss: max(margin + d(a, p) - d(a, n), 0), d the p-norm of the difference
/// + eps over the last axis; swap takes min(d(a, n), d(p, n)).
LowerFn tripletMargin(std::vector<std::string> names, std::string epsName, bool torch) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    std::vector<int> v = floatsBroadcast(L, names);
    int64_t axis = b.meta(v[0]).rank() - 1;
    if (axis < 0)
      badValue(L, "expects inputs with a feature dimension");
    double p = L.args.scalar("p"), eps = L.args.scalar(epsName);
    auto distance = [&](int u, int w) {
      return pNorm(L, b.binaryScalar(Prim::Add, b.binary(Prim::Sub, u, w), eps), p, {axis}, false);
    };
    int positive = distance(v[0], v[1]), negative = distance(v[0], v[2]);
    if (L.args.boolValue("swap"))
      negative = b.binary(Prim::Min, negative, distance(v[1], v[2]));
    int loss = b.binaryScalar(
        Prim::Max,
        b.binary(Prim::Sub, b.binaryScalar(Prim::Add, positive, L.args.scalar("margin")), negative),
        0);
    L.out(reducedBy(L, loss, torch));
  };
}

/// multi_margin_loss: per sample, the classes' max(0, margin - x[y] + x[j])^p summed over
/// j != y (torch), or over every j less the j = y term margin^p (paddle's formula), times the
/// label's class weight, / C.
LowerFn multiMargin(std::string xn, std::string yn, bool torch) {
  return [=](Lowering &L) {
    PrimBuilder &b = L.b;
    int x = floatInput(L, xn), label = L.in(yn);
    bool unbatched = torch && b.meta(x).rank() == 1;
    if (unbatched)
      x = b.reshape(x, {1, b.meta(x).shape[0]});
    if (b.meta(x).rank() != 2)
      badValue(L, "expects an input of shape [N, C]");
    int64_t n = b.meta(x).shape[0], c = b.meta(x).shape[1];
    if (b.meta(label).numElements() != n || !isIntegral(b.meta(label).dtype))
      badValue(L, "expects " + std::to_string(n) + " integer labels, not " +
                      formatShape(b.meta(label).shape));
    int64_t p = L.args.intValue("p");
    if (p != 1 && p != 2)
      badValue(L, "p must be 1 or 2");
    double margin = L.args.scalar("margin");
    DType dtype = b.meta(x).dtype;
    int match = b.binary(Prim::Equal, b.cast(b.reshape(label, {n, 1}), DType::Int64),
                         positions(b, c, 1, 2));
    int zero = scalarLike(b, 0, x);
    auto picked = [&](int v) {
      return b.reduce(Prim::ReduceSum, b.select(match, v, zero), {1}, true);
    };
    int terms = b.binaryScalar(
        Prim::Max, b.binaryScalar(Prim::Add, b.binary(Prim::Sub, x, picked(x)), margin), 0);
    if (p == 2)
      terms = b.binary(Prim::Mul, terms, terms);
    if (torch)
      terms = b.select(match, zero, terms);
    int loss = b.binaryScalar(Prim::Div, b.reduce(Prim::ReduceSum, terms, {1}, true),
                              static_cast<double>(c));
    if (!torch)
      loss = b.binaryScalar(Prim::Sub, loss, std::pow(margin, static_cast<double>(p)) / c);
    if (L.in("weight") >= 0)
      loss =
          b.binary(Prim::Mul, loss,
                   picked(b.broadcastTo(b.reshape(b.cast(L.in("weight"), dtype), {1, c}), {n, c})));
    loss = b.reshape(loss, unbatched ? std::vector<int64_t>{} : std::vector<int64_t>{n});
    L.out(reducedBy(L, loss, torch));
  };
}

} // namespace

void registerLosses(OpTable &t) {
  t.bind("torch.nn.functional.multi_margin_loss", multiMargin("input", "target", true));
  t.bind("paddle.nn.functional.multi_margin_loss", multiMargin("input", "label", false));
  const std::string pf = "paddle.nn.functional.", tf = "torch.nn.functional.";
  t.bind(tf + "cross_entropy", torchCrossEntropy);
  t.bind(tf + "nll_loss", torchNllLoss);
  t.bind(pf + "cross_entropy", paddleCrossEntropy);
  t.bind(pf + "nll_loss", paddleNllLoss);
  Pointwise square = [](PrimBuilder &b, int d) { return b.binary(Prim::Mul, d, d); };
  Pointwise absolute = [](PrimBuilder &b, int d) { return b.unary(Prim::Abs, d); };
  t.bind(tf + "mse_loss", pointwiseLoss("input", "target", true, square));
  t.bind(tf + "l1_loss", pointwiseLoss("input", "target", true, absolute));
  t.bind(pf + "mse_loss", pointwiseLoss("input", "label", false, square));
  t.bind(pf + "l1_loss", pointwiseLoss("input", "label", false, absolute));
  // torch's smooth_l1 is huber / beta (l1 for beta 0); paddle's is huber, / delta unless is_huber.
  t.bind(tf + "smooth_l1_loss", [](Lowering &L) {
    double beta = L.args.scalar("beta");
    if (beta < 0)
      badValue(L, "beta must not be negative");
    pointwiseLoss("input", "target", true, [beta](PrimBuilder &b, int d) {
      return beta == 0 ? b.unary(Prim::Abs, d) : b.binaryScalar(Prim::Div, huber(b, d, beta), beta);
    })(L);
  });
  t.bind(tf + "huber_loss", [](Lowering &L) {
    double delta = L.args.scalar("delta");
    if (delta <= 0)
      badValue(L, "delta must be positive");
    pointwiseLoss(
        "input", "target", true, [delta](PrimBuilder &b, int d) { return huber(b, d, delta); },
        false)(L);
  });
  t.bind(pf + "smooth_l1_loss", [](Lowering &L) {
    double delta = L.args.scalar("delta");
    if (delta <= 0)
      badValue(L, "delta must be positive");
    bool isHuber = L.args.boolValue("is_huber");
    pointwiseLoss("input", "label", false, [=](PrimBuilder &b, int d) {
      int h = huber(b, d, delta);
      return isHuber ? h : b.binaryScalar(Prim::Div, h, delta);
    })(L);
  });
  t.bind(tf + "binary_cross_entropy", binaryCrossEntropy("input", "target", true));
  t.bind(pf + "binary_cross_entropy", binaryCrossEntropy("input", "label", false));
  t.bind(tf + "binary_cross_entropy_with_logits",
         binaryCrossEntropyWithLogits("input", "target", true));
  t.bind(pf + "binary_cross_entropy_with_logits",
         binaryCrossEntropyWithLogits("logit", "label", false));
  t.bind(tf + "kl_div", klDiv("input", "target", true));
  t.bind(pf + "kl_div", klDiv("input", "label", false));
  t.bind(tf + "cosine_similarity", torchCosineSimilarity);
  t.bind(pf + "cosine_similarity", paddleCosineSimilarity);
  t.bind(tf + "pairwise_distance", pairwiseDistance("x1", "x2", "eps"));
  t.bind(tf + "margin_ranking_loss", marginRanking({"input1", "input2", "target"}, true));
  t.bind(pf + "margin_ranking_loss", marginRanking({"input", "other", "label"}, false));
  t.bind(tf + "hinge_embedding_loss", hingeEmbedding({"input", "target"}, true));
  t.bind(pf + "hinge_embedding_loss", hingeEmbedding({"input", "label"}, false));
  t.bind(tf + "soft_margin_loss", softMargin({"input", "target"}, true));
  t.bind(pf + "soft_margin_loss", softMargin({"input", "label"}, false));
  t.bind(tf + "multilabel_soft_margin_loss", multilabelSoftMargin({"input", "target"}, true));
  t.bind(pf + "multi_label_soft_margin_loss", multilabelSoftMargin({"input", "label"}, false));
  t.bind(tf + "poisson_nll_loss", poissonNll({"input", "target"}, "eps", true));
  t.bind(pf + "poisson_nll_loss", poissonNll({"input", "label"}, "epsilon", false));
  t.bind(tf + "gaussian_nll_loss", gaussianNll({"input", "target", "var"}, "eps", true));
  t.bind(pf + "gaussian_nll_loss", gaussianNll({"input", "label", "variance"}, "epsilon", false));
  t.bind(tf + "cosine_embedding_loss", cosineEmbedding({"input1", "input2", "target"}, true));
  t.bind(pf + "cosine_embedding_loss", cosineEmbedding({"input1", "input2", "label"}, false));
  t.bind(tf + "triplet_margin_loss",
         tripletMargin({"anchor", "positive", "negative"}, "eps", true));
  t.bind(pf + "triplet_margin_loss",
         tripletMargin({"input", "positive", "negative"}, "epsilon", false));
  t.bind(pf + "pairwise_distance", pairwiseDistance("x", "y", "epsilon"));
}

} // namespace sotc::ops::lowering
