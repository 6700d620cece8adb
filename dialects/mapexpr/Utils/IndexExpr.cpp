#include "dialects/mapexpr/Utils/IndexExpr.h"
#include "compiler/support/Format.h"

#include <algorithm>
#include <cctype>

namespace sotc::mapexpr {
namespace {

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
  // Size-1 dims contribute nothing; one remaining item is its own flat index.
  std::vector<Expr> keptItems;
  std::vector<int64_t> keptDims;
  for (size_t i = 0; i < items.size(); ++i)
    if (dims[i] != 1) {
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
  }
  return 0;
}

namespace {
class ExprParser {
public:
  explicit ExprParser(const std::string &t) : t_(t) {}
  Expr parse() {
    Expr e = expr();
    skip();
    if (pos_ != t_.size())
      fail("unexpected text");
    return e;
  }

private:
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
    return std::stoll(t_.substr(start, pos_ - start));
  }
  std::vector<int64_t> ints() {
    expect("[");
    std::vector<int64_t> v;
    if (!eat("]")) {
      do
        v.push_back(number());
      while (eat(","));
      expect("]");
    }
    return v;
  }
  Expr expr() {
    if (eat("IndexDot(")) {
      expect("[");
      std::vector<Expr> items;
      if (!eat("]")) {
        do
          items.push_back(expr());
        while (eat(","));
        expect("]");
      }
      expect(",");
      std::vector<int64_t> dims = ints();
      expect(")");
      if (dims.size() != items.size())
        fail("IndexDot needs one dim per item");
      return IndexExpr::dot(items, dims);
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
    if (eat("i"))
      return IndexExpr::iter(static_cast<int>(number()));
    return IndexExpr::constant(number());
  }

  const std::string &t_;
  size_t pos_ = 0;
};
} // namespace

Expected<Expr> parseIndexExpr(const std::string &text) {
  return catchCodedError([&] { return ExprParser(text).parse(); });
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
