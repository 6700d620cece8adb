//===- TensorUpdate.cpp - x[key] = value as a functional update ---------------------------===//
//
// Tensors are values in the statement IR, so an item assignment makes a new tensor: the
// assigned region is the value (cast to x's dtype, broadcast to the region), the rest comes
// from x by slices put back together with concat, one axis at a time (a strided axis one
// element at a time); a boolean mask is a `where`. The executor then puts the new tensor everywhere
// the old one was (aliases see the write, as in the framework), and a written argument is a side
// effect for the caller.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"

#include "compiler/ops/Types.h"

namespace sotc::frontend {
namespace {
using K = Variable::Kind;
} // namespace

VarPtr Executor::tensorSetItem(Frame &f, StatementIR &sir, const VarPtr &x, const VarPtr &key,
                               const VarPtr &value) {
  const bool torch = framework_ == "torch";
  auto api = [&](const std::string &paddleName, const std::string &torchName,
                 std::vector<VarPtr> args) {
    const std::string &name = torch ? torchName : paddleName;
    return tensorCall(f, sir, "api", name, name, std::move(args), {});
  };
  const std::vector<int64_t> &shape = x->meta.shape;
  bool dynamic = std::any_of(shape.begin(), shape.end(), ops::isDynamicDim);
  bool rows = key->isTensor() && torch && ops::isIntegral(key->meta.dtype) && !shape.empty();
  auto dtypeVar = [&] {
    VarPtr v = Variable::make(K::External, constTracker());
    v->name = framework_ + "." + ops::dtypeName(x->meta.dtype);
    return v;
  };
  // The value as a tensor of x's dtype, broadcast to `target`.
  auto valueAs = [&](const std::vector<int64_t> &target) {
    VarPtr v = value;
    if (!v->isTensor()) {
      if (!v->isConstant() || !v->constant.isNumber())
        fail(DiagCode::FrontendUnsupportedConstruct,
             "assigning a " + v->typeName() + " into a tensor (a number or a tensor is)", f);
      consume(v, locOf(f));
      if (dynamic && target == shape) // x's own shape (a mask's value, a whole write)
        return tensorCall(f, sir, "api", torch ? "torch.full_like" : "paddle.full_like",
                          torch ? "torch.full_like" : "paddle.full_like", {x, v}, {});
      // (at dynamic sizes one element, which index_put broadcasts to the rows it writes)
      return tensorCall(
          f, sir, "api", torch ? "torch.full" : "paddle.full", torch ? "torch.full" : "paddle.full",
          {intList(dynamic ? std::vector<int64_t>{} : target), v}, {{"dtype", dtypeVar()}});
    }
    if (v->meta.dtype != x->meta.dtype)
      v = api("paddle.cast", "torch.Tensor.to", {v, dtypeVar()});
    if (v->meta.shape != target && !dynamic) // (a mask's `where` broadcasts it)
      v = api("paddle.broadcast_to", "torch.broadcast_to", {v, intList(target)});
    return v;
  };

  // x[:] = v, x[...] = v (an in-place operator's write: out.add_(bias)): all of x, at any size.
  auto everything = [](const VarPtr &k) {
    if (k->isConstant() && k->constant.kind == PyConst::Kind::Ellipsis)
      return true;
    return k->kind == K::Slice &&
           std::all_of(k->items.begin(), k->items.end(), [](const VarPtr &i) {
             return i->isConstant() && i->constant.kind == PyConst::Kind::None;
           });
  };
  // x becomes a tensor of its own, never the value assigned (x[...] = y is not y).
  auto own = [&](const VarPtr &result) {
    if (result != value)
      return result;
    PyConst all;
    all.kind = PyConst::Kind::Ellipsis;
    return tensorCall(f, sir, "operator", "__getitem__", "__getitem__",
                      {result, makeConst(all, {})}, {});
  };
  if (dynamic && everything(key)) {
    VarPtr v = valueAs(shape); // a number as full_like(x, v); a tensor in x's dtype
    VarPtr result =
        v->meta.shape == shape ? own(v) : api("paddle.expand_as", "torch.Tensor.expand_as", {v, x});
    result->viewOf = nullptr; // a tensor of its own, however it was made
    return result;
  }
  auto refuseDynamic = [&] {
    fail(DiagCode::FrontendUnsupportedConstruct,
         "assigning into a tensor with dynamic dimensions is supported through a boolean mask of "
         "its shape, a tensor of row positions, or integers and slices of its static dimensions "
         "that take the dynamic ones whole",
         f);
  };
  if (rows) {
    // x[idx] = v: the rows idx names (the last write of a repeated one wins, as on the CPU)
    std::vector<int64_t> target = key->meta.shape;
    target.insert(target.end(), shape.begin() + 1, shape.end());
    VarPtr indices = Variable::make(K::List, constTracker());
    indices->items = {key};
    return api("", "torch.index_put", {x, indices, valueAs(target)});
  }
  if (key->isTensor()) { // x[mask] = v
    if (key->meta.dtype != ops::DType::Bool || key->meta.shape != shape)
      fail(DiagCode::FrontendUnsupportedConstruct,
           "assigning through a tensor index: only a boolean mask of x's shape is supported", f);
    return api("paddle.where", "torch.where", {key, valueAs(shape), x});
  }

  // One (start, stop, is an integer) per dimension, from ints, step-1 slices and `...`.
  std::vector<VarPtr> items =
      key->kind == K::Tuple && key->name.empty() ? key->items : std::vector<VarPtr>{key};
  size_t explicitDims = 0;
  for (const VarPtr &item : items)
    explicitDims += !(item->isConstant() && item->constant.kind == PyConst::Kind::Ellipsis);
  if (explicitDims > shape.size())
    fail(DiagCode::FrontendPythonError, "IndexError: too many indices for the tensor", f);
  struct Range {
    int64_t start, stop, step; // the elements start, start + step, ... below stop
    bool integer;
    int64_t count() const { return stop > start ? (stop - start + step - 1) / step : 0; }
  };
  std::vector<Range> ranges;
  for (const VarPtr &item : items) {
    int64_t n = shape.empty() ? 0 : shape[ranges.size() < shape.size() ? ranges.size() : 0];
    if (item->isConstant() && item->constant.kind == PyConst::Kind::Ellipsis) {
      for (size_t k = 0; k < shape.size() - explicitDims; ++k) // the dimensions `...` spans
        ranges.push_back({0, shape[ranges.size()], 1, false});
      continue;
    }
    consume(item, locOf(f));
    if (ops::isDynamicDim(n)) { // a dynamic dimension is taken whole (`:`), its range its size
      if (!everything(item))
        refuseDynamic();
      ranges.push_back({0, n, 1, false});
      continue;
    }
    if (isInt(item)) {
      int64_t i =
          item->constant.intValue < 0 ? item->constant.intValue + n : item->constant.intValue;
      if (i < 0 || i >= n)
        fail(DiagCode::FrontendPythonError, "IndexError: index out of range for the tensor", f);
      ranges.push_back({i, i + 1, 1, true});
    } else if (item->kind == K::Slice) {
      auto [start, stop, step] = sliceBounds(f, item, n);
      if (step < 0)
        fail(DiagCode::FrontendUnsupportedConstruct,
             "assigning into a tensor through a slice with a negative step is not supported", f);
      ranges.push_back({start, std::max(start, stop), step, false});
    } else {
      fail(DiagCode::FrontendUnsupportedConstruct,
           "assigning into a tensor through " + item->repr() +
               ": integers, slices, `...` and boolean masks are supported",
           f);
    }
  }
  while (ranges.size() < shape.size())
    ranges.push_back({0, shape[ranges.size()], 1, false});

  std::vector<int64_t> region, valueShape;
  for (const Range &r : ranges) {
    int64_t count = ops::isDynamicDim(r.stop) ? r.stop : r.count();
    region.push_back(count);
    if (!r.integer)
      valueShape.push_back(count);
  }
  if (std::find(region.begin(), region.end(), 0) != region.end())
    return x; // nothing assigned
  VarPtr v;
  if (!dynamic) {
    v = valueAs(valueShape);
    if (valueShape != region)
      v = api("paddle.reshape", "torch.reshape", {v, intList(region)});
  } else {
    // Sizes known at run time: the value takes the shape of x's region (x[key]) by
    // expand_as, and the dimensions integers index come back one at a time by unsqueeze.
    VarPtr part = getItem(f, sir, x, key);
    if (!value->isTensor() && value->isConstant() && value->constant.isNumber()) {
      consume(value, locOf(f));
      v = tensorCall(f, sir, "api", torch ? "torch.full_like" : "paddle.full_like",
                     torch ? "torch.full_like" : "paddle.full_like", {part, value}, {});
    } else {
      v = valueAs(valueShape);
    }
    if (v->meta.shape != part->meta.shape)
      v = api("paddle.expand_as", "torch.Tensor.expand_as", {v, part});
    for (size_t d = 0; d < ranges.size(); ++d)
      if (ranges[d].integer)
        v = api("paddle.unsqueeze", "torch.unsqueeze",
                {v, makeConst(PyConst::ofInt(static_cast<int64_t>(d)), {})});
  }

  // Dimension by dimension: the parts of `cur` outside the region and the updated region,
  // concatenated; `val` is the value for `cur`'s part of the region. A strided dimension
  // takes one slab per element, the value's where the region has one.
  auto partial = [&](size_t d) { // whether the region leaves part of dimensions d.. to x
    for (size_t k = d; k < ranges.size(); ++k)
      if (ranges[k].start != 0 || ranges[k].stop != shape[k] || ranges[k].step != 1)
        return true;
    return false;
  };
  auto slab = [&](const VarPtr &t, size_t d, int64_t a, int64_t b) {
    std::vector<VarPtr> index(d, makeSequence(K::Slice, {none(), none(), none()}, {}));
    index.push_back(makeSequence(
        K::Slice, {makeConst(PyConst::ofInt(a), {}), makeConst(PyConst::ofInt(b), {}), none()},
        {}));
    return tensorCall(f, sir, "operator", "__getitem__", "__getitem__",
                      {t, makeSequence(K::Tuple, index, {})}, {});
  };
  std::function<VarPtr(VarPtr, VarPtr, size_t)> update = [&](VarPtr cur, VarPtr val,
                                                             size_t d) -> VarPtr {
    if (!partial(d))
      return val;
    const Range &r = ranges[d];
    int64_t n = cur->meta.shape[d];
    if (r.start == 0 && r.stop == n && r.step == 1)
      return update(cur, val, d + 1);
    auto inner = [&](int64_t a, int64_t b, const VarPtr &part) {
      return partial(d + 1) ? update(slab(cur, d, a, b), part, d + 1) : part;
    };
    std::vector<VarPtr> parts;
    if (r.step == 1) {
      if (r.start > 0)
        parts.push_back(slab(cur, d, 0, r.start));
      parts.push_back(inner(r.start, r.stop, val));
      if (r.stop < n)
        parts.push_back(slab(cur, d, r.stop, n));
    } else {
      int64_t kept = 0; // the start of the run of x's elements not yet taken
      for (int64_t i = r.start, j = 0; i < r.stop; i += r.step, ++j) {
        if (kept < i)
          parts.push_back(slab(cur, d, kept, i));
        parts.push_back(inner(i, i + 1, slab(val, d, j, j + 1)));
        kept = i + 1;
      }
      if (kept < n)
        parts.push_back(slab(cur, d, kept, n));
    }
    std::string concat = torch ? "torch.cat" : "paddle.concat";
    return tensorCall(
        f, sir, "api", concat, concat,
        {makeSequence(K::List, parts, {}), makeConst(PyConst::ofInt(static_cast<int64_t>(d)), {})},
        {});
  };
  VarPtr result = own(update(x, v, 0));
  result->viewOf = nullptr;
  return result;
}

VarPtr Executor::fillInPlace(ExecState &state, StatementIR &sir, const VarPtr &x,
                             const VarPtr &value) {
  Frame &f = state.frames.back();
  VarPtr all = Variable::make(K::Slice, constTracker());
  all->items = {Variable::constant_(PyConst::none()), Variable::constant_(PyConst::none()),
                Variable::constant_(PyConst::none())};
  bool throughIndex = x->viewOf && x->viewKey && !x->viewOf->viewOf;
  if ((x->viewOf && !throughIndex) || viewed(state, throughIndex ? x->viewOf : x, x))
    fail(DiagCode::FrontendUnsupportedConstruct,
         "filling a tensor in place that another view shares memory with is not supported "
         "(only x.fill_(v) or x[...].fill_(v) with no other views of x)",
         f);
  if (!throughIndex) {
    // x[:] = value; a 0-d tensor (a step counter, transformers' cumulative_length) has no
    // dimension to slice: x[...] = value.
    PyConst ellipsis;
    ellipsis.kind = PyConst::Kind::Ellipsis;
    VarPtr key = x->meta.rank() == 0 ? makeConst(ellipsis, {}) : all;
    VarPtr filled = tensorSetItem(f, sir, x, key, value);
    replaceEverywhere(state, x, filled);
    return filled;
  }
  VarPtr base = x->viewOf, key = x->viewKey;
  VarPtr written = tensorSetItem(f, sir, base, key, value);
  replaceEverywhere(state, base, written);
  VarPtr view = getItem(f, sir, written, key);
  replaceEverywhere(state, x, view);
  return view;
}

VarPtr Executor::resizeInPlace(ExecState &state, const VarPtr &x, const VarPtr &resized) {
  if (x->viewOf || viewed(state, x))
    fail(DiagCode::FrontendUnsupportedConstruct,
         "resizing a tensor in place that shares memory with a view is not supported",
         state.frames.back());
  replaceEverywhere(state, x, resized);
  return resized;
}

} // namespace sotc::frontend
