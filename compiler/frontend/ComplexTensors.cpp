//===- ComplexTensors.cpp - Complex tensors as pairs of real numbers ---------------------===//
//
// Rotary embeddings written with complex numbers (LLaMA 4's and DeepSeek-V2's, Qwen-Image's):
// torch.polar / view_as_complex make them, a product rotates, view_as_real reads them back.
// sotc computes no complex dtype: a complex tensor of shape S is a float tensor of shape
// S + [2] (real, imaginary: the layout view_as_complex reads) marked Variable::complexPair;
// Python sees its complex shape and dtype. The operations below map to the pairs; any other
// operation on a complex tensor is refused by name.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"

#include <algorithm>

namespace sotc::frontend {
namespace {
using K = Variable::Kind;

bool isComplex(const VarPtr &v) { return v && v->isTensor() && v->complexPair; }

/// A dimension of the complex tensor as a dimension of its pairs (negatives count from the
/// end, before the pair's own).
int64_t pairDim(int64_t d) { return d < 0 ? d - 1 : d; }

/// The names an operation goes by, without its namespace ("torch.Tensor.mul" -> "mul").
std::string baseName(const std::string &opName) {
  return opName.substr(opName.rfind('.') + 1);
}
} // namespace

bool makesComplex(const std::string &opName) {
  static const std::set<std::string> makers = {"torch.polar", "torch.view_as_complex",
                                               "torch.complex", "torch.stft", "torch.Tensor.stft"};
  return makers.count(opName) != 0;
}

VarPtr Executor::complexCall(Frame &f, StatementIR &sir, const std::string &opName,
                             std::vector<VarPtr> &args, Kwargs &kwargs) {
  bool creates = makesComplex(opName);
  auto anyComplex = [&]() {
    return std::any_of(args.begin(), args.end(), [&](const VarPtr &a) { return holdsComplex(a); }) ||
           std::any_of(kwargs.begin(), kwargs.end(),
                       [&](const auto &kv) { return holdsComplex(kv.second); });
  };
  if (loweringComplex_ || (!creates && !anyComplex()))
    return nullptr;
  loweringComplex_ = true;
  struct Reset {
    bool &flag;
    ~Reset() { flag = false; }
  } reset{loweringComplex_};

  std::string base = baseName(opName);
  auto fail_ = [&](const std::string &why) -> VarPtr { // never returns
    fail(DiagCode::FrontendUnsupportedCall,
         "complex tensors: " + opName + " " + why +
             " (sotc computes complex numbers as pairs: polar, view_as_complex/real, products, "
             "sums, shapes and indexing)",
         f);
  };
  auto call = [&](const std::string &name, std::vector<VarPtr> a, Kwargs k = {}) {
    return tensorCall(f, sir, "api", name, name, std::move(a), std::move(k));
  };
  auto pairOf = [&](VarPtr v) {
    v->complexPair = true;
    return v;
  };
  auto part = [&](const VarPtr &c, int64_t which) { // c.real, c.imag
    return call("torch.select", {c, intConst(-1), intConst(which)});
  };
  auto pack = [&](const VarPtr &re, const VarPtr &im) {
    return pairOf(call("torch.stack", {makeSequence(K::List, {re, im}, {}), intConst(-1)}));
  };
  auto real = [&](const VarPtr &v) { // a real operand, lined up with the pairs
    return v->isTensor() ? call("torch.unsqueeze", {v, intConst(-1)}) : v;
  };
  auto arg = [&](const std::string &name, size_t index) {
    return argument(args, kwargs, name, index);
  };
  auto dimArg = [&](const std::string &name, size_t index, int64_t otherwise) {
    VarPtr d = arg(name, index);
    if (d && !isInt(d))
      fail_("with a dimension that is not a number");
    return d ? d->constant.intValue : otherwise;
  };

  // Makers and readers of complex tensors.
  if (base == "stft" || base == "istft")
    return spectralTransform(f, sir, opName, args, kwargs);
  if (opName == "torch.polar") { // abs * (cos angle, sin angle)
    VarPtr abs = arg("abs", 0), angle = arg("angle", 1);
    if (!abs || !angle || !abs->isTensor() || !angle->isTensor())
      fail_("needs two tensors");
    return pack(call("torch.mul", {abs, call("torch.cos", {angle})}),
                call("torch.mul", {abs, call("torch.sin", {angle})}));
  }
  if (opName == "torch.complex") {
    VarPtr re = arg("real", 0), im = arg("imag", 1);
    if (!re || !im || !re->isTensor() || !im->isTensor())
      fail_("needs two tensors");
    return pack(re, im);
  }
  if (opName == "torch.view_as_complex") {
    VarPtr x = arg("input", 0);
    if (!x || !x->isTensor() || x->complexPair || x->meta.rank() == 0 || x->meta.shape.back() != 2)
      fail_("needs a real tensor whose last dimension is 2");
    return pairOf(call("torch.clone", {x}));
  }
  VarPtr self = args.empty() ? nullptr : args[0];
  if (opName == "torch.view_as_real") { // the pairs themselves, a tensor of their own
    if (!isComplex(self))
      fail_("needs a complex tensor");
    return call("torch.clone", {self});
  }
  if (base == "real" || base == "imag")
    return part(self, base == "imag");

  // Arithmetic.
  static const std::set<std::string> products = {"__mul__", "__rmul__", "mul", "multiply"};
  static const std::set<std::string> sums = {"__add__", "__radd__", "add", "__sub__",
                                             "__rsub__", "sub", "subtract"};
  if (products.count(base) && args.size() == 2 && kwargs.empty()) {
    VarPtr a = args[0], b = args[1];
    if (isComplex(a) && isComplex(b)) { // (p + qi)(r + si) = (pr - qs) + (ps + qr)i
      VarPtr p = part(a, 0), q = part(a, 1), r = part(b, 0), s = part(b, 1);
      return pack(call("torch.sub", {call("torch.mul", {p, r}), call("torch.mul", {q, s})}),
                  call("torch.add", {call("torch.mul", {p, s}), call("torch.mul", {q, r})}));
    }
    VarPtr c = isComplex(a) ? a : b, x = isComplex(a) ? b : a;
    if (!x->isTensor() && !(x->isConstant() && x->constant.isNumber()))
      fail_("with an operand that is not a number or a real tensor");
    return pairOf(call("torch.mul", {c, real(x)}));
  }
  if (sums.count(base) && args.size() == 2 && kwargs.empty()) {
    if (!isComplex(args[0]) || !isComplex(args[1]))
      fail_("of a complex and a real tensor");
    bool minus = base.find("sub") != std::string::npos;
    bool reversed = base.rfind("__r", 0) == 0;
    return pairOf(call(minus ? "torch.sub" : "torch.add",
                       {reversed ? args[1] : args[0], reversed ? args[0] : args[1]}));
  }
  if ((base == "__truediv__" || base == "div" || base == "divide") && args.size() == 2 &&
      kwargs.empty() && isComplex(args[0]) && !isComplex(args[1]))
    return pairOf(call("torch.div", {args[0], real(args[1])}));
  if ((base == "__neg__" || base == "neg") && args.size() == 1)
    return pairOf(call("torch.neg", {self}));
  if (base == "conj" && args.size() == 1)
    return pack(part(self, 0), call("torch.neg", {part(self, 1)}));
  if (base == "abs" && args.size() == 1) {
    VarPtr squares = call("torch.sum", {call("torch.mul", {self, self}), intConst(-1)});
    return call("torch.sqrt", {squares});
  }

  // Shapes and indexing: the pair stays the last dimension.
  if (!isComplex(self) && base != "cat" && base != "concat" && base != "stack")
    fail_("is not supported yet");
  int64_t rank = isComplex(self) ? self->meta.rank() - 1 : 0;
  auto sizes = [&](size_t from) { // reshape(c, [a, b]) / c.view(a, b) / c.expand(...)
    std::vector<VarPtr> dims;
    for (size_t i = from; i < args.size(); ++i) {
      if (args[i]->isSequence())
        dims.insert(dims.end(), args[i]->items.begin(), args[i]->items.end());
      else
        dims.push_back(args[i]);
    }
    dims.push_back(intConst(2));
    return makeSequence(K::List, dims, {});
  };
  if ((base == "reshape" || base == "view") && args.size() >= 2 && kwargs.empty())
    return pairOf(call("torch.reshape", {self, sizes(1)}));
  if ((base == "expand" || base == "broadcast_to") && args.size() >= 2 && kwargs.empty())
    return pairOf(call("torch.Tensor.expand", {self, sizes(1)}));
  if (base == "unsqueeze")
    return pairOf(call("torch.unsqueeze", {self, intConst(pairDim(dimArg("dim", 1, 0)))}));
  if (base == "squeeze" && arg("dim", 1))
    return pairOf(call("torch.squeeze", {self, intConst(pairDim(dimArg("dim", 1, 0)))}));
  if (base == "transpose" || base == "swapaxes")
    return pairOf(call("torch.transpose", {self, intConst(pairDim(dimArg("dim0", 1, 0))),
                                           intConst(pairDim(dimArg("dim1", 2, 0)))}));
  if (base == "permute") {
    std::vector<VarPtr> dims;
    for (const VarPtr &d : sizes(1)->items)
      if (!isInt(d))
        fail_("with dimensions that are not numbers");
    std::vector<VarPtr> given = sizes(1)->items;
    given.pop_back();
    for (const VarPtr &d : given)
      dims.push_back(intConst(d->constant.intValue < 0 ? d->constant.intValue + rank
                                                       : d->constant.intValue));
    dims.push_back(intConst(rank));
    return pairOf(call("torch.permute", {self, makeSequence(K::List, dims, {})}));
  }
  if (base == "flatten") {
    int64_t start = dimArg("start_dim", 1, 0), end = dimArg("end_dim", 2, -1);
    return pairOf(call("torch.flatten", {self, intConst(pairDim(start)), intConst(pairDim(end))}));
  }
  if (base == "__getitem__" && args.size() == 2) {
    // c[..., k]: the pairs' own dimension stays out of the key's reach.
    std::vector<VarPtr> key = args[1]->kind == K::Tuple ? args[1]->items
                                                        : std::vector<VarPtr>{args[1]};
    bool ellipsis = std::any_of(key.begin(), key.end(), [](const VarPtr &k) {
      return k->isConstant() && k->constant.kind == PyConst::Kind::Ellipsis;
    });
    if (ellipsis) {
      VarPtr all = Variable::make(K::Slice, constTracker());
      all->items = {none(), none(), none()};
      key.push_back(all);
    }
    return pairOf(tensorCall(f, sir, "method", "__getitem__", "__getitem__",
                             {self, makeSequence(K::Tuple, key, {})}, {}));
  }
  if (base == "cat" || base == "concat" || base == "stack") {
    VarPtr list = arg("tensors", 0);
    if (!list || !list->isSequence() || list->items.empty() ||
        !std::all_of(list->items.begin(), list->items.end(), isComplex))
      fail_("of complex and real tensors");
    int64_t dim = dimArg("dim", 1, 0);
    return pairOf(call(base == "stack" ? "torch.stack" : "torch.cat",
                       {list, intConst(pairDim(dim))}));
  }
  if (base == "pad") { // zeros around a complex tensor: the pairs' own dimension is not padded
    VarPtr pad = arg("pad", 1), mode = arg("mode", 2), value = arg("value", 3);
    bool zeros = (!mode || (mode->isConstant() && mode->constant.kind == PyConst::Kind::Str &&
                            mode->constant.text == "constant")) &&
                 (!value || (value->isConstant() && (value->constant.kind == PyConst::Kind::None ||
                                                     (value->constant.isNumber() &&
                                                      value->constant.number() == 0))));
    if (!zeros || !pad || !pad->isSequence())
      fail_("other than with zeros");
    std::vector<VarPtr> widths = {intConst(0), intConst(0)};
    widths.insert(widths.end(), pad->items.begin(), pad->items.end());
    return pairOf(call(opName, {self, makeSequence(K::List, widths, {})}));
  }
  if (base == "index_select" && arg("index", 2) && arg("index", 2)->isTensor())
    return pairOf(call("torch.index_select",
                       {self, intConst(pairDim(dimArg("dim", 1, 0))), arg("index", 2)}));
  if (base == "split" || base == "chunk" || base == "unbind") { // each piece a complex tensor
    std::string name = "torch." + base;
    std::vector<VarPtr> a = {self};
    if (base != "unbind")
      a.push_back(arg(base == "split" ? "split_size_or_sections" : "chunks", 1));
    int64_t dim = dimArg("dim", base == "unbind" ? 1 : 2, 0);
    if (base != "unbind" && !a.back())
      fail_("without sizes");
    a.push_back(intConst(pairDim(dim)));
    VarPtr pieces = call(name, a);
    for (const VarPtr &p : pieces->items)
      pairOf(p);
    return pieces;
  }
  static const std::set<std::string> same = {"contiguous", "clone", "detach"};
  if (same.count(base) || (base == "type_as" && args.size() == 2 && isComplex(args[1])))
    return self;
  if (base == "to") { // a device, or a complex dtype: the tensor itself
    for (size_t i = 1; i < args.size(); ++i)
      if (!(args[i]->kind == K::External && args[i]->name.find("complex") != std::string::npos) &&
          !(args[i]->kind == K::External && args[i]->name == "device"))
        fail_("to a real dtype (it drops the imaginary part)");
    for (const auto &[k, v] : kwargs)
      if (k == "dtype" && !(v->kind == K::External && v->name.find("complex") != std::string::npos))
        fail_("to a real dtype (it drops the imaginary part)");
    return self;
  }
  return fail_("is not supported yet");
}

bool Executor::holdsComplex(const VarPtr &v) const {
  return isComplex(v) ||
         std::any_of(v->items.begin(), v->items.end(), [&](const VarPtr &i) { return holdsComplex(i); });
}

} // namespace sotc::frontend
