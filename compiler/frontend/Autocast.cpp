//===- Autocast.cpp - torch.autocast and paddle.amp.auto_cast blocks -----------------------===//
//
// Inside an autocast block the frameworks cast an operator's floating tensor arguments before
// it runs, by lists of operator names: GEMM-like operators run in the block's half type,
// precision-sensitive ones in float32, a few on their widest argument type; the rest run on
// what they are given. The lists are the frameworks' own (torch's autocast_mode.cpp, one per
// device; paddle's O1 white and black lists), by the operator's name without its module.
// The casts are ordinary cast statements, so `sotc dump --sir` shows them.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"

#include "compiler/ops/OpTable.h"

#include <functional>
#include <set>

namespace sotc::frontend {
namespace {

struct Lists {
  std::set<std::string> lower;  // run in the block's half type
  std::set<std::string> fp32;   // run in float32
  std::set<std::string> widest; // run in the widest floating type of their arguments
};

const std::set<std::string> kLosses = {"binary_cross_entropy",
                                       "binary_cross_entropy_with_logits",
                                       "cosine_embedding_loss",
                                       "cross_entropy",
                                       "ctc_loss",
                                       "hinge_embedding_loss",
                                       "huber_loss",
                                       "kl_div",
                                       "l1_loss",
                                       "margin_ranking_loss",
                                       "mse_loss",
                                       "multi_margin_loss",
                                       "multilabel_margin_loss",
                                       "nll_loss",
                                       "poisson_nll_loss",
                                       "smooth_l1_loss",
                                       "soft_margin_loss",
                                       "triplet_margin_loss"};

Lists with(std::set<std::string> fp32, Lists lists) {
  lists.fp32 = std::move(fp32);
  lists.fp32.insert(kLosses.begin(), kLosses.end());
  return lists;
}

const Lists &listsFor(const Autocast &a) {
  static const Lists torchCuda =
      with({"acos",       "asin",
            "cosh",       "sinh",
            "tan",        "erfinv",
            "exp",        "expm1",
            "log",        "log10",
            "log1p",      "log2",
            "pow",        "__pow__",
            "__rpow__",   "__rtruediv__",
            "reciprocal", "rsqrt",
            "softmax",    "log_softmax",
            "softmin",    "softplus",
            "sum",        "prod",
            "cumsum",     "cumprod",
            "layer_norm", "group_norm",
            "norm",       "normalize",
            "dist",       "cdist",
            "pdist",      "cosine_similarity",
            "renorm"},
           {{"matmul",
             "mm",
             "bmm",
             "mv",
             "addmm",
             "addbmm",
             "baddbmm",
             "addmv",
             "addr",
             "linear",
             "conv1d",
             "conv2d",
             "conv3d",
             "conv_transpose1d",
             "conv_transpose2d",
             "conv_transpose3d",
             "prelu",
             "__matmul__",
             "__rmatmul__",
             "chain_matmul",
             "multi_dot",
             "scaled_dot_product_attention"},
            {},
            {"addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sample", "index_put",
             "scatter_add", "tensordot", "cat", "concat", "stack"}});
  static const Lists torchCpu =
      with({"prod", "quantile", "nanquantile", "cdist", "trace", "cholesky", "cholesky_inverse",
            "cholesky_solve", "inverse", "lu_solve", "pinverse", "grid_sample", "avg_pool3d",
            "max_pool3d", "adaptive_avg_pool3d", "polar"},
           {{"matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "linear", "conv1d", "conv2d",
             "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu",
             "__matmul__", "__rmatmul__", "scaled_dot_product_attention"},
            {},
            {"cat", "concat", "stack", "index_copy"}});
  // paddle's O1: the white list in half, the black list in float32, everything else on its
  // inputs promoted to the widest type (use_promote).
  static const Lists paddleO1 = with(
      {"exp",
       "expm1",
       "square",
       "log",
       "log10",
       "log2",
       "log1p",
       "mean",
       "sum",
       "prod",
       "cumsum",
       "cumprod",
       "softmax",
       "log_softmax",
       "softmin",
       "softplus",
       "layer_norm",
       "group_norm",
       "pow",
       "reciprocal",
       "rsqrt",
       "tan",
       "acos",
       "asin",
       "sinh",
       "cosh",
       "atanh",
       "erfinv",
       "dist",
       "norm",
       "renorm",
       "cosine_similarity",
       "softmax_with_cross_entropy",
       "sigmoid_cross_entropy_with_logits"},
      {{"matmul", "mm", "bmm", "linear", "conv2d", "einsum", "__matmul__", "__rmatmul__"}, {}, {}});
  if (a.framework == "paddle")
    return paddleO1;
  return a.device == "cuda" ? torchCuda : torchCpu;
}

bool isFloatingTensor(const VarPtr &v) { return v->isTensor() && ops::isFloating(v->meta.dtype); }

/// Every floating tensor among the arguments (in lists too), by reference; a list whose
/// items `visit` replaces is replaced by a copy (the caller's list keeps its tensors).
void forEachFloatingTensor(std::vector<VarPtr> &args,
                           std::vector<std::pair<std::string, VarPtr>> &kwargs,
                           const std::function<void(VarPtr &)> &visit) {
  std::function<void(VarPtr &)> walk = [&](VarPtr &v) {
    if (isFloatingTensor(v)) {
      visit(v);
    } else if (v->kind == Variable::Kind::List || v->kind == Variable::Kind::Tuple) {
      std::vector<VarPtr> items = v->items;
      for (VarPtr &item : items)
        walk(item);
      if (items != v->items)
        v = makeSequence(v->kind, std::move(items), {v});
    }
  };
  for (VarPtr &a : args)
    walk(a);
  for (auto &kv : kwargs)
    walk(kv.second);
}

int rank(ops::DType t) { // float16 = bfloat16 < float32 < float64
  return t == ops::DType::Float64 ? 3 : t == ops::DType::Float32 ? 2 : 1;
}

} // namespace

void Executor::applyAutocast(Frame &f, StatementIR &sir, const std::string &opName,
                             std::vector<VarPtr> &args,
                             std::vector<std::pair<std::string, VarPtr>> &kwargs) {
  if (!running_ || running_->autocast.empty() || !running_->autocast.back().dtype)
    return;
  const Autocast &a = running_->autocast.back();
  const ops::OpEntry *entry = ops::OpTable::get().lookup(opName);
  std::string name = entry ? entry->name : opName;
  // An operator of the other framework runs as it would outside the block.
  bool shared = name.rfind("__", 0) == 0;
  bool torchOp = name.rfind("torch.", 0) == 0;
  if (!shared && torchOp != (a.framework == "torch"))
    return;
  std::string base = name.substr(name.rfind('.') + 1);
  const Lists &lists = listsFor(a);
  std::optional<ops::DType> to;
  if (lists.lower.count(base)) {
    to = *a.dtype;
  } else if (lists.fp32.count(base)) {
    to = ops::DType::Float32;
  } else if (lists.widest.count(base) || a.framework == "paddle") {
    forEachFloatingTensor(args, kwargs, [&](VarPtr &v) {
      if (!to || rank(v->meta.dtype) > rank(*to))
        to = v->meta.dtype;
    });
  }
  if (!to)
    return;
  // float64 is never narrowed (torch's is_eligible; paddle's lists are float32's).
  forEachFloatingTensor(args, kwargs, [&](VarPtr &v) {
    if (v->meta.dtype == *to || v->meta.dtype == ops::DType::Float64)
      return;
    VarPtr dtype = Variable::make(Variable::Kind::External, constTracker());
    dtype->name = a.framework + "." + ops::dtypeName(*to);
    v = a.framework == "torch"
            ? tensorCall(f, sir, "method", "to", "torch.Tensor.to", {v, dtype}, {})
            : tensorCall(f, sir, "api", "paddle.cast", "paddle.cast", {v, dtype}, {});
  });
}

} // namespace sotc::frontend
