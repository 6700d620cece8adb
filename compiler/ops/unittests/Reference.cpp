#include "compiler/ops/unittests/Reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sotc::ops::ref {
namespace {

std::vector<int64_t> strides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Calls f(index) for every index of `shape` in row-major order.
void forEachIndex(const std::vector<int64_t> &shape,
                  const std::function<void(const std::vector<int64_t> &)> &f) {
  int64_t n = TensorMeta{shape, DType::Float32}.numElements();
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(idx);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

/// The element of x that broadcasting maps output index `idx` onto.
double broadcastAt(const Buffer &x, const std::vector<int64_t> &idx) {
  std::vector<int64_t> src(x.meta.shape.size());
  size_t offset = idx.size() - src.size();
  for (size_t d = 0; d < src.size(); ++d)
    src[d] = x.meta.shape[d] == 1 ? 0 : idx[d + offset];
  return x.at(src);
}

std::vector<int64_t> broadcastShape(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw std::runtime_error("reference: shapes do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

double unaryPrim(Prim p, double v) {
  switch (p) {
  case Prim::Exp:
    return std::exp(v);
  case Prim::Log:
    return std::log(v);
  case Prim::Log1p:
    return std::log1p(v);
  case Prim::Sin:
    return std::sin(v);
  case Prim::Cos:
    return std::cos(v);
  case Prim::Tanh:
    return std::tanh(v);
  case Prim::Sqrt:
    return std::sqrt(v);
  case Prim::Rsqrt:
    return 1 / std::sqrt(v);
  case Prim::Abs:
    return std::fabs(v);
  case Prim::Neg:
    return -v;
  case Prim::Sign:
    return (v > 0) - (v < 0);
  case Prim::Floor:
    return std::floor(v);
  case Prim::Ceil:
    return std::ceil(v);
  case Prim::Round:
    return roundHalfEven(v);
  case Prim::Erf:
    return std::erf(v);
  case Prim::Tan:
    return std::tan(v);
  case Prim::Asin:
    return std::asin(v);
  case Prim::Acos:
    return std::acos(v);
  case Prim::Atan:
    return std::atan(v);
  case Prim::Sinh:
    return std::sinh(v);
  case Prim::Cosh:
    return std::cosh(v);
  case Prim::Asinh:
    return std::asinh(v);
  case Prim::Acosh:
    return std::acosh(v);
  case Prim::Atanh:
    return std::atanh(v);
  case Prim::Expm1:
    return std::expm1(v);
  case Prim::Exp2:
    return std::exp2(v);
  case Prim::Log2:
    return std::log2(v);
  case Prim::Log10:
    return std::log10(v);
  case Prim::Erfc:
    return std::erfc(v);
  case Prim::Trunc:
    return std::trunc(v);
  case Prim::LogicalNot:
    return v == 0;
  case Prim::BitwiseNot:
    return static_cast<double>(~static_cast<int64_t>(v));
  default:
    throw std::runtime_error("reference: not a unary primitive");
  }
}

double binaryPrim(Prim p, double a, double b) {
  auto i = [](double v) { return static_cast<int64_t>(v); };
  switch (p) {
  case Prim::Add:
    return a + b;
  case Prim::Sub:
    return a - b;
  case Prim::Mul:
    return a * b;
  case Prim::Div:
    return a / b;
  case Prim::FloorDiv:
    return floorDiv(a, b);
  case Prim::Mod:
    return pyMod(a, b);
  case Prim::Pow:
    return std::pow(a, b);
  case Prim::Max:
    return std::max(a, b);
  case Prim::Min:
    return std::min(a, b);
  case Prim::Atan2:
    return std::atan2(a, b);
  case Prim::Copysign:
    return std::copysign(a, b);
  case Prim::Fmod:
    return std::fmod(a, b);
  case Prim::LogicalAnd:
    return (a != 0) && (b != 0);
  case Prim::LogicalOr:
    return (a != 0) || (b != 0);
  case Prim::LogicalXor:
    return (a != 0) != (b != 0);
  case Prim::BitwiseAnd:
    return static_cast<double>(i(a) & i(b));
  case Prim::BitwiseOr:
    return static_cast<double>(i(a) | i(b));
  case Prim::BitwiseXor:
    return static_cast<double>(i(a) ^ i(b));
  case Prim::Less:
    return a < b;
  case Prim::LessEqual:
    return a <= b;
  case Prim::Equal:
    return a == b;
  case Prim::NotEqual:
    return a != b;
  case Prim::Greater:
    return a > b;
  case Prim::GreaterEqual:
    return a >= b;
  default:
    throw std::runtime_error("reference: not a binary primitive");
  }
}

void require(bool ok, const PrimOp &op, const char *what) {
  if (!ok)
    throw std::runtime_error(std::string("reference: ") + primName(op.prim) + ": " + what);
}

} // namespace

double Buffer::at(const std::vector<int64_t> &index) const {
  std::vector<int64_t> s = strides(meta.shape);
  int64_t flat = 0;
  for (size_t d = 0; d < index.size(); ++d)
    flat += index[d] * s[d];
  return data[flat];
}

double floorDiv(double a, double b) { return std::floor(a / b); }
double pyMod(double a, double b) { return a - std::floor(a / b) * b; }
double roundHalfEven(double v) { return std::nearbyint(v); }

double castTo(double v, DType dtype) {
  if (dtype == DType::Bool)
    return v != 0;
  if (isIntegral(dtype))
    return std::trunc(v);
  if (dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16)
    return static_cast<double>(static_cast<float>(v));
  return v;
}

Buffer random(const TensorMeta &meta, std::mt19937 &rng, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Buffer b{meta, {}};
  for (int64_t i = 0, n = meta.numElements(); i < n; ++i) {
    double v = dist(rng);
    if (meta.dtype == DType::Bool)
      v = v > (lo + hi) / 2;
    else if (isIntegral(meta.dtype))
      v = std::round(v);
    b.data.push_back(castTo(v, meta.dtype));
  }
  return b;
}

Buffer map(const Buffer &x, const std::function<double(double)> &f) {
  Buffer out = x;
  for (double &v : out.data)
    v = f(v);
  return out;
}

Buffer zip(const Buffer &x, const Buffer &y, const std::function<double(double, double)> &f) {
  Buffer out{{broadcastShape(x.meta.shape, y.meta.shape), x.meta.dtype}, {}};
  forEachIndex(out.meta.shape, [&](const std::vector<int64_t> &idx) {
    out.data.push_back(f(broadcastAt(x, idx), broadcastAt(y, idx)));
  });
  return out;
}

Buffer scalar(double v, DType dtype) { return Buffer{{{}, dtype}, {v}}; }

Buffer reduce(const Buffer &x, const std::vector<int64_t> &axes, double init,
              const std::function<double(double, double)> &f) {
  std::vector<int64_t> shape = x.meta.shape;
  for (int64_t a : axes)
    shape[a] = 1;
  Buffer out{{shape, x.meta.dtype},
             std::vector<double>(TensorMeta{shape, x.meta.dtype}.numElements(), init)};
  std::vector<int64_t> s = strides(shape);
  forEachIndex(x.meta.shape, [&](const std::vector<int64_t> &idx) {
    int64_t flat = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      flat += (shape[d] == 1 ? 0 : idx[d]) * s[d];
    out.data[flat] = f(out.data[flat], x.at(idx));
  });
  return out;
}

Buffer reshape(const Buffer &x, std::vector<int64_t> shape) {
  Buffer out = x;
  out.meta.shape = std::move(shape);
  return out;
}

Buffer permute(const Buffer &x, const std::vector<int64_t> &perm) {
  std::vector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(x.meta.shape[p]);
  Buffer out{{shape, x.meta.dtype}, {}};
  forEachIndex(shape, [&](const std::vector<int64_t> &idx) {
    std::vector<int64_t> src(idx.size());
    for (size_t d = 0; d < idx.size(); ++d)
      src[perm[d]] = idx[d];
    out.data.push_back(x.at(src));
  });
  return out;
}

Buffer matmul2d(const Buffer &x, const Buffer &y) {
  int64_t m = x.meta.shape[0], k = x.meta.shape[1], n = y.meta.shape[1];
  Buffer out{{{m, n}, x.meta.dtype}, std::vector<double>(m * n, 0)};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        out.data[i * n + j] += x.data[i * k + p] * y.data[p * n + j];
  return out;
}

Buffer withDType(Buffer x, DType dtype) {
  x.meta.dtype = dtype;
  for (double &v : x.data)
    v = castTo(v, dtype);
  return x;
}

std::vector<Buffer> evaluate(const PrimGraph &graph, const std::vector<Buffer> &inputs) {
  std::vector<Buffer> values = inputs;
  for (const PrimOp &op : graph.ops) {
    auto operand = [&](size_t i) -> const Buffer & { return values[op.operands[i]]; };
    const PrimAttrs &a = op.attrs;
    Buffer out{op.result, {}};
    switch (primKind(op.prim)) {
    case PrimKind::Source:
      for (int64_t i = 0; i < op.result.numElements(); ++i)
        out.data.push_back(castTo(op.prim == Prim::Iota ? static_cast<double>(i) : a.value,
                                  op.result.dtype));
      break;
    case PrimKind::Unary:
      if (op.prim == Prim::Cast) {
        out = withDType(operand(0), a.dtype);
        break;
      }
      out.data = map(operand(0), [&](double v) { return unaryPrim(op.prim, v); }).data;
      break;
    case PrimKind::Binary:
    case PrimKind::Compare:
      // Primitives are strict: equal shapes and dtypes, no implicit broadcasting.
      require(operand(0).meta == operand(1).meta, op, "operands differ in shape or dtype");
      for (size_t i = 0; i < operand(0).data.size(); ++i) {
        double a = operand(0).data[i], b = operand(1).data[i];
        // Integer division by zero is 0 in compiled code (MapExprToLoops), never a trap.
        bool integerDivision = isIntegral(operand(0).meta.dtype) &&
                               (op.prim == Prim::Div || op.prim == Prim::FloorDiv ||
                                op.prim == Prim::Mod || op.prim == Prim::Fmod);
        out.data.push_back(integerDivision && b == 0 ? 0 : binaryPrim(op.prim, a, b));
      }
      break;
    case PrimKind::Select:
      require(operand(1).meta == operand(2).meta && operand(0).meta.shape == operand(1).meta.shape,
              op, "operands differ in shape");
      for (size_t i = 0; i < operand(0).data.size(); ++i)
        out.data.push_back(operand(0).data[i] != 0 ? operand(1).data[i] : operand(2).data[i]);
      break;
    case PrimKind::Reduce: {
      double init = op.prim == Prim::ReduceSum    ? 0
                    : op.prim == Prim::ReduceProd ? 1
                    : op.prim == Prim::ReduceMax  ? -INFINITY
                                                  : INFINITY;
      Buffer r = reduce(operand(0), a.axes, init, [&](double acc, double v) {
        switch (op.prim) {
        case Prim::ReduceSum:
          return acc + v;
        case Prim::ReduceProd:
          return acc * v;
        case Prim::ReduceMax:
          return std::max(acc, v);
        default:
          return std::min(acc, v);
        }
      });
      out.data = r.data;
      break;
    }
    case PrimKind::Layout:
      if (op.prim == Prim::BroadcastTo) {
        forEachIndex(a.shape, [&](const std::vector<int64_t> &idx) {
          out.data.push_back(broadcastAt(operand(0), idx));
        });
      } else if (op.prim == Prim::Reshape) {
        out.data = operand(0).data;
      } else if (op.prim == Prim::Transpose) {
        out.data = permute(operand(0), a.perm).data;
      } else if (op.prim == Prim::Slice) {
        forEachIndex(op.result.shape, [&](const std::vector<int64_t> &idx) {
          std::vector<int64_t> src = idx;
          for (size_t i = 0; i < a.axes.size(); ++i)
            src[a.axes[i]] = a.starts[i] + idx[a.axes[i]] * a.steps[i];
          out.data.push_back(operand(0).at(src));
        });
      } else if (op.prim == Prim::Gather) {
        const Buffer &table = operand(0), &index = operand(1);
        size_t rank = index.meta.shape.size();
        forEachIndex(op.result.shape, [&](const std::vector<int64_t> &idx) {
          std::vector<int64_t> at(idx.begin(), idx.begin() + rank), src = {0};
          int64_t row = static_cast<int64_t>(index.at(at));
          src[0] = std::clamp<int64_t>(row, 0, table.meta.shape[0] - 1);
          src.insert(src.end(), idx.begin() + rank, idx.end());
          out.data.push_back(table.at(src));
        });
      } else if (op.prim == Prim::IndexCopy) { // the last write of a position wins
        const Buffer &x = operand(0), &index = operand(1), &source = operand(2);
        out.data = x.data;
        int64_t n = x.meta.shape[a.axis];
        forEachIndex(source.meta.shape, [&](const std::vector<int64_t> &idx) {
          std::vector<int64_t> at = idx;
          int64_t i = static_cast<int64_t>(index.at({idx[a.axis]}));
          at[a.axis] = i < 0 ? i + n : i;
          int64_t flat = 0;
          for (size_t d = 0; d < at.size(); ++d)
            flat = flat * x.meta.shape[d] + at[d];
          out.data[flat] = source.at(idx);
        });
      } else if (op.prim == Prim::Nonzero) { // coordinates in row-major order, then fill
        const Buffer &x = operand(0);
        int64_t rows = op.result.shape[0];
        forEachIndex(x.meta.shape, [&](const std::vector<int64_t> &idx) {
          if (x.at(idx) != 0 && int64_t(out.data.size()) < rows * x.meta.rank())
            out.data.insert(out.data.end(), idx.begin(), idx.end());
        });
        out.data.resize(static_cast<size_t>(rows * x.meta.rank()), a.value);
      } else if (op.prim == Prim::Nms) { // torchvision's greedy loop, in doubles
        const Buffer &boxes = operand(0), &scores = operand(1);
        int64_t n = scores.meta.shape[0];
        std::vector<int64_t> order(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i)
          order[static_cast<size_t>(i)] = i;
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t x, int64_t y) { return scores.at({x}) > scores.at({y}); });
        auto area = [&](int64_t i) {
          return (boxes.at({i, 2}) - boxes.at({i, 0})) * (boxes.at({i, 3}) - boxes.at({i, 1}));
        };
        std::vector<bool> dropped(static_cast<size_t>(n));
        for (int64_t p = 0; p < n; ++p) {
          int64_t i = order[static_cast<size_t>(p)];
          if (dropped[static_cast<size_t>(i)])
            continue;
          out.data.push_back(double(i));
          for (int64_t q = p + 1; q < n; ++q) {
            int64_t j = order[static_cast<size_t>(q)];
            double w = std::max(0.0, std::min(boxes.at({i, 2}), boxes.at({j, 2})) -
                                         std::max(boxes.at({i, 0}), boxes.at({j, 0})));
            double h = std::max(0.0, std::min(boxes.at({i, 3}), boxes.at({j, 3})) -
                                         std::max(boxes.at({i, 1}), boxes.at({j, 1})));
            if (w * h / (area(i) + area(j) - w * h) > a.value)
              dropped[static_cast<size_t>(j)] = true;
          }
        }
        out.data.resize(static_cast<size_t>(n), -1);
      } else if (op.prim == Prim::Argsort) { // each row's positions by value, NaN largest
        const Buffer &x = operand(0);
        std::vector<int64_t> rows = x.meta.shape;
        int64_t n = rows[a.axis];
        rows[a.axis] = 1;
        out.data.resize(x.data.size());
        forEachIndex(rows, [&](std::vector<int64_t> idx) {
          auto value = [&](int64_t i) {
            idx[a.axis] = i;
            return x.at(idx);
          };
          auto key = [&](int64_t i) { // NaN above every number
            double v = value(i);
            return std::make_pair(std::isnan(v), std::isnan(v) ? 0.0 : v);
          };
          std::vector<int64_t> order(static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i)
            order[static_cast<size_t>(i)] = i;
          std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
            return a.descending ? key(j) < key(i) : key(i) < key(j);
          });
          for (int64_t i = 0; i < n; ++i) {
            idx[a.axis] = i;
            int64_t flat = 0;
            for (size_t d = 0; d < idx.size(); ++d)
              flat = flat * x.meta.shape[d] + idx[d];
            out.data[static_cast<size_t>(flat)] = double(order[static_cast<size_t>(i)]);
          }
        });
      } else if (op.prim == Prim::Window) {
        const Buffer &x = operand(0);
        forEachIndex(op.result.shape, [&](const std::vector<int64_t> &idx) {
          int64_t h = idx[4] * a.strides[0] + idx[2] * a.dilations[0] - a.pads[0];
          int64_t w = idx[5] * a.strides[1] + idx[3] * a.dilations[1] - a.pads[1];
          bool inside = h >= 0 && h < x.meta.shape[2] && w >= 0 && w < x.meta.shape[3];
          out.data.push_back(inside ? x.at({idx[0], idx[1], h, w}) : a.value);
        });
      } else { // concat
        forEachIndex(op.result.shape, [&](const std::vector<int64_t> &idx) {
          std::vector<int64_t> src = idx;
          for (size_t i = 0; i < op.operands.size(); ++i) {
            int64_t size = operand(i).meta.shape[a.axis];
            if (src[a.axis] < size) {
              out.data.push_back(operand(i).at(src));
              return;
            }
            src[a.axis] -= size;
          }
        });
      }
      break;
    case PrimKind::Matmul: {
      Buffer x = operand(0), y = operand(1);
      bool vecX = x.meta.rank() == 1, vecY = y.meta.rank() == 1;
      if (vecX)
        x = reshape(x, {1, x.meta.shape[0]});
      if (vecY)
        y = reshape(y, {y.meta.shape[0], 1});
      auto swapLast = [](const Buffer &b) {
        std::vector<int64_t> perm;
        for (int64_t i = 0; i < b.meta.rank(); ++i)
          perm.push_back(i);
        std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
        return permute(b, perm);
      };
      if (a.transposeX && !vecX)
        x = swapLast(x);
      if (a.transposeY && !vecY)
        y = swapLast(y);
      int64_t m = x.meta.shape[x.meta.rank() - 2], k = x.meta.shape.back();
      int64_t n = y.meta.shape.back();
      std::vector<int64_t> batch(op.result.shape.begin(),
                                 op.result.shape.end() - (vecX ? 0 : 1) - (vecY ? 0 : 1));
      forEachIndex(batch, [&](const std::vector<int64_t> &b) {
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (int64_t p = 0; p < k; ++p) {
              std::vector<int64_t> xi = b, yi = b;
              xi.push_back(i);
              xi.push_back(p);
              yi.push_back(p);
              yi.push_back(j);
              acc += broadcastAt(x, xi) * broadcastAt(y, yi);
            }
            out.data.push_back(acc);
          }
      });
      break;
    }
    case PrimKind::Conv: { // output channel o reads its group's input channels; zeros outside x
      const Buffer &x = operand(0), &w = operand(1);
      int64_t channels = w.meta.shape[1], kh = w.meta.shape[2], kw = w.meta.shape[3];
      int64_t perGroup = w.meta.shape[0] / a.groups;
      forEachIndex(op.result.shape, [&](const std::vector<int64_t> &idx) {
        double acc = 0;
        int64_t first = idx[1] / perGroup * channels;
        for (int64_t c = 0; c < channels; ++c)
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j) {
              int64_t h = idx[2] * a.strides[0] + i * a.dilations[0] - a.pads[0];
              int64_t v = idx[3] * a.strides[1] + j * a.dilations[1] - a.pads[1];
              if (h >= 0 && h < x.meta.shape[2] && v >= 0 && v < x.meta.shape[3])
                acc += x.at({idx[0], first + c, h, v}) * w.at({idx[1], c, i, j});
            }
        out.data.push_back(acc);
      });
      break;
    }
    }
    require(static_cast<int64_t>(out.data.size()) == op.result.numElements(), op,
            "result size disagrees with the inferred shape");
    if (op.prim != Prim::Cast)
      for (double &v : out.data)
        v = castTo(v, op.result.dtype);
    values.push_back(std::move(out));
  }
  std::vector<Buffer> outputs;
  for (int v : graph.outputs)
    outputs.push_back(values[v]);
  return outputs;
}

} // namespace sotc::ops::ref
