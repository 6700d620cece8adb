#include "dialects/mapexpr/Utils/IndexExpr.h"
#include "compiler/support/Format.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <type_traits>

namespace sotc::mapexpr {
namespace {
/// Iteration spaces have a handful of dimensions; a larger id is a malformed expression.
constexpr int64_t kMaxIterators = 1 << 20;

std::shared_ptr<IndexExpr> make() { return std::make_shared<IndexExpr>(); }
} // namespace

Expr IndexExpr::iter(int id) {
  auto e = make();
  e->kind_ = Kind::Iter;
  e->id_ = id;
  return e;
}

Expr IndexExpr::constant(int64_t value) {
  auto e = make();
  e->kind_ = Kind::Const;
  e->value_ = value;
  return e;
}

Expr IndexExpr::affine(Expr inner, int64_t mul, int64_t add) {
  if (inner->kind_ == Kind::Const)
    return constant(inner->value_ * mul + add);
  if (mul == 1 && add == 0)
    return inner;
  if (inner->kind_ == Kind::Affine) // (e * a + b) * m + c
    return affine(inner->items_[0], inner->mul_ * mul, inner->value_ * mul + add);
  auto e = make();
  e->kind_ = Kind::Affine;
  e->items_ = {std::move(inner)};
  e->mul_ = mul;
  e->value_ = add;
  return e;
}

Expr IndexExpr::dot(std::vector<Expr> items, std::vector<int64_t> dims) {
  // Size-1 dims contribute nothing; one remaining item is its own flat index. An item that is
  // itself the dot of a run of dims filling its dim is that run (what undot's merges make),
  // so that splitting the merged dims again finds the items.
  // A run of items that are the components of one UnDot over the run's dims is that UnDot's
  // flat index (what undot's group-wise splits make), so that merging them again finds it.
  std::vector<Expr> runs;
  std::vector<int64_t> runDims;
  for (size_t i = 0; i < items.size();) {
    if (dims[i] == 1) {
      ++i;
      continue;
    }
    const IndexExpr &item = *items[i];
    size_t n = item.kind_ == Kind::UnDot && item.k_ == 0 ? item.dims_.size() : 0;
    bool run = n > 1 && i + n <= items.size();
    for (size_t m = 0; run && m < n; ++m)
      run = items[i + m]->kind_ == Kind::UnDot && items[i + m]->k_ == m &&
            items[i + m]->dims_ == item.dims_ && dims[i + m] == item.dims_[m] &&
            items[i + m]->items_[0]->str() == item.items_[0]->str();
    if (!run) {
      runs.push_back(items[i]);
      runDims.push_back(dims[i++]);
      continue;
    }
    int64_t size = 1;
    for (int64_t d : item.dims_)
      size *= d;
    runs.push_back(item.items_[0]);
    runDims.push_back(size);
    i += n;
  }
  items = std::move(runs);
  dims = std::move(runDims);
  std::vector<Expr> keptItems;
  std::vector<int64_t> keptDims;
  for (size_t i = 0; i < items.size(); ++i) {
    if (dims[i] == 1)
      continue;
    const IndexExpr &item = *items[i];
    int64_t run = 1;
    for (int64_t d : item.dims_)
      run *= d;
    if (item.kind_ == Kind::Dot && run == dims[i]) {
      keptItems.insert(keptItems.end(), item.items_.begin(), item.items_.end());
      keptDims.insert(keptDims.end(), item.dims_.begin(), item.dims_.end());
      continue;
    }
    keptItems.push_back(items[i]);
    keptDims.push_back(dims[i]);
  }
  if (keptItems.empty())
    return constant(0);
  if (keptItems.size() == 1)
    return keptItems[0];
  // Dot(UnDot(e, d, 0..n-1), d) == e
  const IndexExpr &first = *keptItems[0];
  if (first.kind_ == Kind::UnDot && first.dims_ == keptDims) {
    bool whole = true;
    for (size_t i = 0; i < keptItems.size(); ++i)
      whole = whole && keptItems[i]->kind_ == Kind::UnDot && keptItems[i]->k_ == i &&
              keptItems[i]->dims_ == keptDims &&
              keptItems[i]->items_[0]->str() == first.items_[0]->str();
    if (whole)
      return first.items_[0];
  }
  auto e = make();
  e->kind_ = Kind::Dot;
  e->items_ = std::move(keptItems);
  e->dims_ = std::move(keptDims);
  return e;
}

Expr IndexExpr::undot(Expr flat, std::vector<int64_t> dims, size_t k) {
  if (dims[k] == 1)
    return constant(0);
  // Only the dims other than 1 matter: drop them, remembering k's position.
  std::vector<int64_t> kept;
  size_t keptK = 0;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != 1) {
      if (i == k)
        keptK = kept.size();
      kept.push_back(dims[i]);
    }
  if (kept.size() == 1)
    return flat;
  if (flat->kind_ == Kind::Dot && flat->dims_ == kept)
    return flat->items_[keptK]; // UnDot(Dot(items, d), d)[k] == items[k]
  if (flat->kind_ == Kind::Dot) {
    // A reshape that merges or splits whole runs of consecutive dims ([8, 3, 7, 7] -> [8, 147],
    // [256, 1000] -> [4, 64, 1000]): the dims fall into groups of equal size on both sides,
    // and component k is the dot of its group's items (no division: items lie in their dims),
    // split again where the group has several dims of `kept` -- divisions of that group's
    // items only (the rows of a [256, 1000] read as [4, 64, 1000]: i / 64, i % 64, j).
    const std::vector<int64_t> &from = flat->dims_;
    for (size_t i = 0, j = 0; i < from.size() && j < kept.size();) {
      size_t i0 = i, j0 = j;
      int64_t a = from[i++], b = kept[j++];
      while (a != b && (a < b ? i < from.size() : j < kept.size()))
        a < b ? a *= from[i++] : b *= kept[j++];
      if (a != b)
        break;
      if (keptK < j0 || keptK >= j)
        continue;
      bool whole = i0 == 0 && i == from.size() && j0 == 0 && j == kept.size();
      if (whole && j - j0 > 1)
        break; // one group: no finer split than the division below
      Expr group = dot({flat->items_.begin() + static_cast<long>(i0),
                        flat->items_.begin() + static_cast<long>(i)},
                       {from.begin() + static_cast<long>(i0), from.begin() + static_cast<long>(i)});
      return j - j0 == 1 ? group
                         : undot(group,
                                 {kept.begin() + static_cast<long>(j0),
                                  kept.begin() + static_cast<long>(j)},
                                 keptK - j0);
    }
  }
  if (flat->kind_ == Kind::Const) {
    int64_t v = flat->value_;
    for (size_t i = kept.size(); i-- > keptK + 1;)
      v /= kept[i];
    return constant(v % kept[keptK]);
  }
  auto e = make();
  e->kind_ = Kind::UnDot;
  e->items_ = {std::move(flat)};
  e->dims_ = std::move(kept);
  e->k_ = keptK;
  return e;
}

Expr IndexExpr::sum(Expr a, Expr b) {
  if (a->kind_ == Kind::Const)
    return affine(std::move(b), 1, a->value_);
  if (b->kind_ == Kind::Const)
    return affine(std::move(a), 1, b->value_);
  auto e = make();
  e->kind_ = Kind::Sum;
  e->items_ = {std::move(a), std::move(b)};
  return e;
}

std::string IndexExpr::str() const {
  switch (kind_) {
  case Kind::Iter:
    return "i" + std::to_string(id_);
  case Kind::Const:
    return std::to_string(value_);
  case Kind::Affine: {
    std::string s = "(" + items_[0]->str();
    if (mul_ != 1)
      s += " * " + std::to_string(mul_);
    if (value_ > 0)
      s += " + " + std::to_string(value_);
    else if (value_ < 0)
      s += " - " + std::to_string(-value_);
    return s + ")";
  }
  case Kind::Dot: {
    std::string s = "IndexDot([";
    for (size_t i = 0; i < items_.size(); ++i)
      s += (i ? ", " : "") + items_[i]->str();
    return s + "], " + formatInts(dims_) + ")";
  }
  case Kind::UnDot:
    return "ListGetItem(IndexUnDot(" + items_[0]->str() + ", " + formatInts(dims_) + "), " +
           std::to_string(k_) + ")";
  case Kind::Sum:
    return "IndexSum(" + items_[0]->str() + ", " + items_[1]->str() + ")";
  }
  return "?";
}

int64_t IndexExpr::eval(const std::vector<int64_t> &iters) const {
  switch (kind_) {
  case Kind::Iter:
    return iters.at(id_);
  case Kind::Const:
    return value_;
  case Kind::Affine:
    return items_[0]->eval(iters) * mul_ + value_;
  case Kind::Dot: {
    int64_t flat = 0;
    for (size_t i = 0; i < items_.size(); ++i)
      flat = flat * dims_[i] + items_[i]->eval(iters);
    return flat;
  }
  case Kind::UnDot: {
    int64_t v = items_[0]->eval(iters);
    for (size_t i = dims_.size(); i-- > k_ + 1;)
      v /= dims_[i];
    return v % dims_[k_];
  }
  case Kind::Sum:
    return items_[0]->eval(iters) + items_[1]->eval(iters);
  }
  return 0;
}

namespace {
class ExprParser {
public:
  explicit ExprParser(const std::string &t) : t_(t) {}
  Expr parse() {
    Expr e = expr();
    end();
    return e;
  }
  std::vector<Expr> parseList() {
    std::vector<Expr> items = list([&] { return expr(); });
    end();
    return items;
  }

private:
  void end() {
    skip();
    if (pos_ != t_.size())
      fail("unexpected text");
  }
  [[noreturn]] void fail(const std::string &what) {
    throw CodedError(DiagCode::IndexExprInvalid, "index expression '" + t_ + "', column " +
                                                     std::to_string(pos_ + 1) + ": " + what);
  }
  void skip() {
    while (pos_ < t_.size() && t_[pos_] == ' ')
      ++pos_;
  }
  bool eat(const std::string &s) {
    skip();
    if (t_.compare(pos_, s.size(), s) == 0) {
      pos_ += s.size();
      return true;
    }
    return false;
  }
  void expect(const std::string &s) {
    if (!eat(s))
      fail("expected '" + s + "'");
  }
  int64_t number() {
    skip();
    size_t start = pos_;
    if (pos_ < t_.size() && t_[pos_] == '-')
      ++pos_;
    while (pos_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[pos_])))
      ++pos_;
    if (start == pos_ || (pos_ == start + 1 && t_[start] == '-'))
      fail("expected a number");
    errno = 0;
    long long value = std::strtoll(t_.c_str() + start, nullptr, 10);
    if (errno == ERANGE)
      fail("number out of range");
    return value;
  }
  /// "[item, item, ...]"
  template <typename ParseItem>
  std::vector<std::invoke_result_t<ParseItem>> list(ParseItem item) {
    expect("[");
    std::vector<std::invoke_result_t<ParseItem>> items;
    if (!eat("]")) {
      do
        items.push_back(item());
      while (eat(","));
      expect("]");
    }
    return items;
  }
  std::vector<int64_t> ints() {
    return list([&] {
      int64_t d = number();
      if (d <= 0)
        fail("dims must be positive");
      return d;
    });
  }
  Expr expr() {
    if (eat("IndexDot(")) {
      std::vector<Expr> items = list([&] { return expr(); });
      expect(",");
      std::vector<int64_t> dims = ints();
      expect(")");
      if (dims.size() != items.size())
        fail("IndexDot needs one dim per item");
      return IndexExpr::dot(items, dims);
    }
    if (eat("IndexSum(")) {
      Expr a = expr();
      expect(",");
      Expr b = expr();
      expect(")");
      return IndexExpr::sum(a, b);
    }
    if (eat("ListGetItem(")) {
      expect("IndexUnDot(");
      Expr inner = expr();
      expect(",");
      std::vector<int64_t> dims = ints();
      expect(")");
      expect(",");
      int64_t k = number();
      expect(")");
      if (k < 0 || k >= static_cast<int64_t>(dims.size()))
        fail("item " + std::to_string(k) + " of " + std::to_string(dims.size()) + " dims");
      return IndexExpr::undot(inner, dims, static_cast<size_t>(k));
    }
    if (eat("(")) {
      Expr inner = expr();
      int64_t mul = 1, add = 0;
      if (eat("*"))
        mul = number();
      if (eat("+"))
        add = number();
      else if (eat("-"))
        add = -number();
      expect(")");
      return IndexExpr::affine(inner, mul, add);
    }
    if (eat("i")) {
      int64_t id = number();
      if (id < 0 || id >= kMaxIterators)
        fail("iterator i" + std::to_string(id) + " out of range");
      return IndexExpr::iter(static_cast<int>(id));
    }
    return IndexExpr::constant(number());
  }

  const std::string &t_;
  size_t pos_ = 0;
};
} // namespace

Expected<Expr> parseIndexExpr(const std::string &text) {
  return catchCodedError([&] { return ExprParser(text).parse(); });
}

Expected<std::vector<Expr>> parseIndexList(const std::string &text) {
  return catchCodedError([&] { return ExprParser(text).parseList(); });
}

std::string indexListStr(const std::vector<Expr> &index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i)
    s += (i ? ", " : "") + index[i]->str();
  return s + "]";
}

namespace {
enum Code : int64_t { kIter, kConst, kAffine, kDot, kUnDot, kSum };

void encode(const Expr &e, std::vector<int64_t> &out) {
  switch (e->kind()) {
  case IndexExpr::Kind::Iter:
    out.insert(out.end(), {kIter, e->id()});
    return;
  case IndexExpr::Kind::Const:
    out.insert(out.end(), {kConst, e->value()});
    return;
  case IndexExpr::Kind::Affine:
    out.insert(out.end(), {kAffine, e->mul(), e->value()});
    encode(e->items()[0], out);
    return;
  case IndexExpr::Kind::Dot:
    out.insert(out.end(), {kDot, static_cast<int64_t>(e->dims().size())});
    out.insert(out.end(), e->dims().begin(), e->dims().end());
    for (const Expr &item : e->items())
      encode(item, out);
    return;
  case IndexExpr::Kind::UnDot:
    out.insert(out.end(), {kUnDot, static_cast<int64_t>(e->dims().size())});
    out.insert(out.end(), e->dims().begin(), e->dims().end());
    out.push_back(static_cast<int64_t>(e->item()));
    encode(e->items()[0], out);
    return;
  case IndexExpr::Kind::Sum:
    out.push_back(kSum);
    encode(e->items()[0], out);
    encode(e->items()[1], out);
    return;
  }
}

/// Reads one expression at `pos`; nullptr when the code is malformed.
Expr decode(const std::vector<int64_t> &code, size_t &pos) {
  auto next = [&](int64_t &v) {
    if (pos >= code.size())
      return false;
    v = code[pos++];
    return true;
  };
  auto dimsOf = [&](std::vector<int64_t> &dims) {
    int64_t n = 0;
    if (!next(n) || n < 1 || n > static_cast<int64_t>(code.size() - pos))
      return false;
    dims.assign(code.begin() + pos, code.begin() + pos + n);
    pos += n;
    return std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d > 0; });
  };
  int64_t kind = 0, a = 0, b = 0;
  if (!next(kind))
    return nullptr;
  switch (kind) {
  case kIter:
    return next(a) && a >= 0 && a < kMaxIterators ? IndexExpr::iter(static_cast<int>(a)) : nullptr;
  case kConst:
    return next(a) ? IndexExpr::constant(a) : nullptr;
  case kAffine: {
    if (!next(a) || !next(b))
      return nullptr;
    Expr inner = decode(code, pos);
    return inner ? IndexExpr::affine(inner, a, b) : nullptr;
  }
  case kDot: {
    std::vector<int64_t> dims;
    if (!dimsOf(dims))
      return nullptr;
    std::vector<Expr> items;
    for (size_t i = 0; i < dims.size(); ++i)
      if (Expr item = decode(code, pos))
        items.push_back(item);
      else
        return nullptr;
    return IndexExpr::dot(items, dims);
  }
  case kUnDot: {
    std::vector<int64_t> dims;
    if (!dimsOf(dims) || !next(a) || a < 0 || a >= static_cast<int64_t>(dims.size()))
      return nullptr;
    Expr inner = decode(code, pos);
    return inner ? IndexExpr::undot(inner, dims, static_cast<size_t>(a)) : nullptr;
  }
  case kSum: {
    Expr first = decode(code, pos);
    Expr second = first ? decode(code, pos) : nullptr;
    return second ? IndexExpr::sum(first, second) : nullptr;
  }
  default:
    return nullptr;
  }
}
} // namespace

std::vector<int64_t> encodeIndex(const std::vector<Expr> &index) {
  std::vector<int64_t> out{static_cast<int64_t>(index.size())};
  for (const Expr &e : index)
    encode(e, out);
  return out;
}

std::optional<std::vector<Expr>> decodeIndex(const std::vector<int64_t> &code) {
  size_t pos = 0;
  if (code.empty() || code[0] < 0 || code[0] > static_cast<int64_t>(code.size()))
    return std::nullopt;
  std::vector<Expr> index;
  for (pos = 1; index.size() < static_cast<size_t>(code[0]);)
    if (Expr e = decode(code, pos))
      index.push_back(e);
    else
      return std::nullopt;
  if (pos != code.size())
    return std::nullopt;
  return index;
}

std::pair<int64_t, int64_t> valueRange(const Expr &e, const std::vector<int64_t> &sizes) {
  using K = IndexExpr::Kind;
  switch (e->kind()) {
  case K::Iter:
    return {0, sizes.at(static_cast<size_t>(e->id())) - 1};
  case K::Const:
    return {e->value(), e->value()};
  case K::Affine: {
    auto [lo, hi] = valueRange(e->items()[0], sizes);
    int64_t a = lo * e->mul() + e->value(), b = hi * e->mul() + e->value();
    return {std::min(a, b), std::max(a, b)};
  }
  case K::Dot: {
    int64_t lo = 0, hi = 0;
    for (size_t i = 0; i < e->items().size(); ++i) {
      auto [l, h] = valueRange(e->items()[i], sizes);
      lo = lo * e->dims()[i] + l, hi = hi * e->dims()[i] + h;
    }
    return {lo, hi};
  }
  case K::UnDot:
    return {0, e->dims()[e->item()] - 1};
  case K::Sum: {
    auto [a, b] = valueRange(e->items()[0], sizes);
    auto [c, d] = valueRange(e->items()[1], sizes);
    return {a + c, b + d};
  }
  }
  return {0, 0};
}

std::optional<int64_t> linearCoefficient(const Expr &e, int id) {
  using K = IndexExpr::Kind;
  switch (e->kind()) {
  case K::Iter:
    return e->id() == id ? 1 : 0;
  case K::Const:
    return 0;
  case K::Affine: {
    std::optional<int64_t> c = linearCoefficient(e->items()[0], id);
    return c ? std::optional<int64_t>(*c * e->mul()) : std::nullopt;
  }
  case K::Dot: { // sum of item * the product of the dims after it
    int64_t total = 0, stride = 1;
    for (size_t i = e->items().size(); i-- > 0;) {
      std::optional<int64_t> c = linearCoefficient(e->items()[i], id);
      if (!c)
        return std::nullopt;
      total += *c * stride;
      stride *= e->dims()[i];
    }
    return total;
  }
  case K::UnDot:
    return linearCoefficient(e->items()[0], id) == 0 ? std::optional<int64_t>(0) : std::nullopt;
  case K::Sum: {
    std::optional<int64_t> a = linearCoefficient(e->items()[0], id),
                           b = linearCoefficient(e->items()[1], id);
    return a && b ? std::optional<int64_t>(*a + *b) : std::nullopt;
  }
  }
  return std::nullopt;
}

int maxIterator(const Expr &e) {
  int m = e->kind() == IndexExpr::Kind::Iter ? e->id() : -1;
  for (const Expr &item : e->items())
    m = std::max(m, maxIterator(item));
  return m;
}

std::string flatIndexStr(const std::vector<Expr> &index, const std::vector<int64_t> &shape) {
  return IndexExpr::dot(index, shape)->str();
}

} // namespace sotc::mapexpr
