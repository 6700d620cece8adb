//===- CallsCreation.cpp - Tensors made from Python values inside the function ---------===//
//
// paddle.to_tensor / torch.tensor of constants, linspace, eye, and torch's zeros and ones
// with sizes as separate arguments (arange is an operator: the iota primitive). The values
// are known when the function is translated, so each becomes operator-table calls the rest
// of the pipeline already compiles: one paddle.full / torch.full per distinct element run, a
// concat and a reshape. Small constants only: a large one belongs in an input.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"

#include "compiler/ops/Types.h"

#include <cmath>

namespace sotc::frontend {
namespace {
using K = Variable::Kind;

/// Elements a constant made in the function may have (each is a statement or part of one).
constexpr size_t kMaxConstantElements = 256;

/// The framework's name for a dtype ("paddle.float32"), as a DataType argument spells it.
VarPtr dtypeVar(const CallContext &c, ops::DType dtype) {
  VarPtr v = Variable::make(K::External, constTracker());
  v->name = c.framework() + "." + ops::dtypeName(dtype);
  return v;
}

/// The dtype a `dtype=` argument names: paddle.float32, torch.int64, or "float32".
ops::DType dtypeOf(CallContext &c, const VarPtr &v) {
  std::string name = v->isConstant() ? v->constant.text : v->name;
  name = name.substr(name.rfind('.') + 1);
  std::optional<ops::DType> d = ops::parseDType(name);
  if (!d)
    c.fail(DiagCode::FrontendPythonError, "TypeError: unknown dtype " + v->repr());
  c.consume(v);
  return *d;
}

class ConstantTensor {
public:
  explicit ConstantTensor(CallContext &c) : c_(c) {}

  /// Reads nested lists and tuples of numbers: the shape and the flat values.
  void read(const VarPtr &v, size_t depth = 0) {
    if (v->kind == K::List || v->kind == K::Tuple) {
      if (depth == shape_.size())
        shape_.push_back(static_cast<int64_t>(v->items.size()));
      else if (shape_[depth] != static_cast<int64_t>(v->items.size()) || leafDepth_ == depth)
        c_.fail(DiagCode::FrontendPythonError,
                "ValueError: the nested lists have different lengths (not a tensor)");
      for (const VarPtr &item : v->items)
        read(item, depth + 1);
      return;
    }
    if (v->isTensor())
      c_.fail(DiagCode::FrontendUnsupportedConstruct,
              "a tensor made from a list holding tensors (use stack or concat)");
    if (!v->isConstant() || !v->constant.isNumber())
      c_.fail(DiagCode::FrontendPythonError, "TypeError: a tensor cannot hold a " + v->typeName());
    if (leafDepth_ == SIZE_MAX)
      leafDepth_ = depth;
    else if (leafDepth_ != depth)
      c_.fail(DiagCode::FrontendPythonError,
              "ValueError: the nested lists have different depths (not a tensor)");
    c_.consume(v);
    const PyConst &k = v->constant;
    kind_ = std::max(kind_, k.kind == PyConst::Kind::Bool  ? 0
                            : k.kind == PyConst::Kind::Int ? 1
                                                           : 2);
    values_.push_back(k.number());
    from_.push_back(v);
  }

  void setShape(std::vector<int64_t> shape) { shape_ = std::move(shape); }
  void push(double value) { values_.push_back(value); }

  /// The dtype the framework gives these values when none is asked for.
  ops::DType defaultDType() const {
    if (values_.empty()) // torch.tensor([]) and paddle.to_tensor([]) are float32
      return ops::DType::Float32;
    return kind_ == 0 ? ops::DType::Bool : kind_ == 1 ? ops::DType::Int64 : ops::DType::Float32;
  }

  /// The statements that make the tensor.
  VarPtr emit(ops::DType dtype) {
    int64_t elements = 1; // the shape's: linspace and eye stop reading values past the limit
    for (int64_t d : shape_)
      elements *= d;
    if (elements > static_cast<int64_t>(kMaxConstantElements))
      c_.fail(DiagCode::FrontendUnsupportedConstruct,
              "a constant tensor of " + std::to_string(elements) +
                  " elements made inside the function (at most " +
                  std::to_string(kMaxConstantElements) + "): pass it as an input");
    std::string full = c_.framework() == "torch" ? "torch.full" : "paddle.full";
    auto fill = [&](std::vector<int64_t> shape, double value) {
      VarPtr shapeVar = intList(shape);
      VarPtr v = makeConst(dtype == ops::DType::Bool ? PyConst::ofBool(value != 0)
                           : ops::isFloating(dtype)  ? PyConst::ofFloat(value)
                                                     : PyConst::ofInt(static_cast<int64_t>(value)),
                           {});
      return c_.tensorCall("api", full, full, {shapeVar, v}, {{"dtype", dtypeVar(c_, dtype)}});
    };
    int64_t n = static_cast<int64_t>(values_.size());
    bool uniform =
        std::all_of(values_.begin(), values_.end(), [&](double x) { return x == values_.front(); });
    if (elements == 0 || (uniform && n > 0)) // torch.tensor([]): a [0] tensor
      return fill(shape_, n > 0 ? values_.front() : 0);
    // Runs of equal values, each one fill, concatenated and reshaped.
    std::vector<VarPtr> runs;
    for (int64_t i = 0; i < n;) {
      int64_t j = i;
      while (j < n && values_[j] == values_[i])
        ++j;
      runs.push_back(fill({j - i}, values_[i]));
      i = j;
    }
    std::string concat = c_.framework() == "torch" ? "torch.cat" : "paddle.concat";
    VarPtr flat = runs.size() == 1
                      ? runs[0]
                      : c_.tensorCall("api", concat, concat, {makeSequence(K::List, runs, {})}, {});
    if (shape_.size() == 1 && !runs.empty())
      return flat;
    std::string reshape = c_.framework() == "torch" ? "torch.reshape" : "paddle.reshape";
    VarPtr out = c_.tensorCall("api", reshape, reshape, {flat, intList(shape_)}, {});
    out->viewOf = nullptr; // of a constant nobody else holds: a tensor of its own
    return out;
  }

  const std::vector<VarPtr> &from() const { return from_; }

private:
  CallContext &c_;
  std::vector<int64_t> shape_;
  std::vector<double> values_;
  std::vector<VarPtr> from_;
  size_t leafDepth_ = SIZE_MAX;
  int kind_ = 0; // 0 bool, 1 int, 2 float: the widest element seen
};

/// paddle.to_tensor(data, dtype=None, place=None, stop_gradient=True), torch.tensor(data,
/// dtype=None, ...), torch.as_tensor.
bool toTensor(CallContext &c) {
  VarPtr data = argument(c, "data", 0);
  if (!data)
    return false;
  VarPtr dtype = argument(c, "dtype", 1);
  if (data->isTensor()) { // a copy; a cast when asked
    if (isNone(dtype)) {
      c.push(data);
      return true;
    }
    std::string cast = c.framework() == "torch" ? "torch.Tensor.to" : "paddle.cast";
    c.push(c.tensorCall("api", cast, cast, {data, dtypeVar(c, dtypeOf(c, dtype))}, {}));
    return true;
  }
  ConstantTensor t(c);
  t.read(data);
  c.push(t.emit(isNone(dtype) ? t.defaultDType() : dtypeOf(c, dtype)));
  return true;
}

/// linspace(start, stop, num) with constant bounds.
bool linspace(CallContext &c) {
  VarPtr start = argument(c, "start", 0),
         stop = argument(c, c.framework() == "torch" ? "end" : "stop", 1),
         num = argument(c, c.framework() == "torch" ? "steps" : "num", 2);
  if (!start || !stop || !num || !start->isConstant() || !stop->isConstant() || !isInt(num))
    return false;
  for (const VarPtr &v : {start, stop, num})
    c.consume(v);
  int64_t n = num->constant.intValue;
  ConstantTensor t(c);
  t.setShape({n});
  double a = start->constant.number(), b = stop->constant.number();
  for (int64_t i = 0; i < n && i <= static_cast<int64_t>(kMaxConstantElements); ++i)
    t.push(n == 1 ? a : a + (b - a) * static_cast<double>(i) / static_cast<double>(n - 1));
  VarPtr dtype = argument(c, "dtype", c.framework() == "torch" ? SIZE_MAX : 3);
  c.push(t.emit(isNone(dtype) ? ops::DType::Float32 : dtypeOf(c, dtype)));
  return true;
}

/// eye(n[, m]): ones on the diagonal.
bool eye(CallContext &c) {
  VarPtr rows = argument(c, c.framework() == "torch" ? "n" : "num_rows", 0);
  VarPtr cols = argument(c, c.framework() == "torch" ? "m" : "num_columns", 1);
  if (!rows || !isInt(rows) || (!isNone(cols) && !isInt(cols)))
    return false;
  c.consume(rows);
  int64_t n = rows->constant.intValue, m = isNone(cols) ? n : cols->constant.intValue;
  if (!isNone(cols))
    c.consume(cols);
  // arange(n)[:, None] == arange(m)[None, :]: computed, not a constant of n * m elements (a
  // chunked attention's eye(64)).
  bool torch = c.framework() == "torch";
  std::string fw = c.framework() + ".";
  auto line = [&](int64_t size, std::vector<int64_t> shape) {
    VarPtr iota = c.tensorCall("api", fw + "arange", fw + "arange",
                               {makeConst(PyConst::ofInt(size), {})}, {});
    std::vector<VarPtr> dims;
    for (int64_t d : shape)
      dims.push_back(makeConst(PyConst::ofInt(d), {}));
    return c.tensorCall("api", fw + "reshape", fw + "reshape",
                        {iota, makeSequence(K::List, dims, {})}, {});
  };
  std::string equal = torch ? "torch.eq" : "paddle.equal";
  VarPtr diagonal = c.tensorCall("api", equal, equal, {line(n, {n, 1}), line(m, {1, m})}, {});
  VarPtr dtype = argument(c, "dtype", 2);
  std::string cast = torch ? "torch.Tensor.to" : "paddle.cast";
  ops::DType type = isNone(dtype) ? ops::DType::Float32 : dtypeOf(c, dtype);
  c.push(type == ops::DType::Bool
             ? diagonal
             : c.tensorCall("api", cast, cast, {diagonal, dtypeVar(c, type)}, {}));
  return true;
}

/// torch.zeros(2, 3), torch.ones(2, 3) and torch.empty(2, 3) (sizes as arguments, or one
/// list; empty's memory is uninitialized in torch, zeros here).
bool torchFill(CallContext &c) {
  std::vector<VarPtr> sizes = c.args;
  if (sizes.size() == 1 && (sizes[0]->kind == K::List || sizes[0]->kind == K::Tuple))
    sizes = sizes[0]->items;
  std::vector<VarPtr> dims;
  for (const VarPtr &s : sizes) { // numbers and dynamic sizes (torch.ones(T, T))
    if (s->isTensor() && s->meta.shape.empty() && !s->ofDynamicSize)
      c.fail(DiagCode::FrontendHostInteraction,
             c.name + ": a size that is a tensor's value (known only when the program runs) "
                      "is not compiled yet");
    if (!isInt(s) && !isDynamicSize(s))
      return false;
    dims.push_back(s);
  }
  VarPtr dtype = argument(c, "dtype", SIZE_MAX);
  Kwargs kwargs;
  if (!isNone(dtype))
    kwargs.push_back({"dtype", dtype});
  double value = c.name == "torch.ones" ? 1 : 0;
  c.push(c.tensorCall("api", "torch.full", "torch.full",
                      {makeSequence(K::List, dims, {}), makeConst(PyConst::ofFloat(value), {})},
                      kwargs));
  return true;
}

} // namespace

bool callCreation(CallContext &c) {
  static const CallTable table = {
      {"paddle.to_tensor", toTensor},
      {"torch.tensor", toTensor},
      {"torch.as_tensor", toTensor},
      {"paddle.linspace", linspace},
      {"torch.linspace", linspace},
      {"paddle.eye", eye},
      {"torch.eye", eye},
      {"torch.zeros", torchFill},
      {"torch.ones", torchFill},
      {"torch.empty", torchFill},
  };
  auto it = table.find(c.name);
  return it != table.end() && it->second(c);
}

} // namespace sotc::frontend
