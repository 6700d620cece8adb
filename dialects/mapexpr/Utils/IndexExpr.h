//===- IndexExpr.h - Index expressions over a kernel's anchor iterators ------------------===//
//
// Every tensor of a kernel is indexed by one expression per dimension, built from the anchor
// iterators i0..iN: CINN's dot / undot / broadcast equations, with broadcasts already
// simplified to 0 and slices as affine maps. Expressions are immutable, simplified when
// built, printed in CINN's syntax, and evaluated by the property test.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_MAPEXPR_INDEXEXPR_H
#define SOTC_MAPEXPR_INDEXEXPR_H

#include "compiler/support/Expected.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sotc::mapexpr {

class IndexExpr;
using Expr = std::shared_ptr<const IndexExpr>;

class IndexExpr {
public:
  enum class Kind { Iter, Const, Affine, Dot, UnDot, Sum };

  static Expr iter(int id);
  static Expr constant(int64_t value);
  /// e * mul + add
  static Expr affine(Expr e, int64_t mul, int64_t add);
  /// The flat row-major index of `items` over `dims`.
  static Expr dot(std::vector<Expr> items, std::vector<int64_t> dims);
  /// Component `k` of flat index `e` over `dims`.
  static Expr undot(Expr e, std::vector<int64_t> dims, size_t k);
  /// a + b: a window's position plus its tap (the result may fall outside the tensor, which
  /// the `window` primitive's loads check).
  static Expr sum(Expr a, Expr b);

  Kind kind() const { return kind_; }
  int id() const { return id_; }
  int64_t value() const { return value_; }                   // Const: the value; Affine: the addend
  int64_t mul() const { return mul_; }                       // Affine
  const std::vector<int64_t> &dims() const { return dims_; } // Dot, UnDot
  size_t item() const { return k_; }                         // UnDot: which component
  /// "i0", "0", "(i1 * 2 + 1)", "IndexDot([i0, i1], [4, 8])",
  /// "ListGetItem(IndexUnDot(i0, [4, 8]), 1)", "IndexSum((i4 * 2), (i2 - 1))"
  std::string str() const;
  /// The value for the given iterator values.
  int64_t eval(const std::vector<int64_t> &iters) const;
  const std::vector<Expr> &items() const { return items_; }

private:
  Kind kind_ = Kind::Const;
  int id_ = 0;
  int64_t value_ = 0, mul_ = 1;
  std::vector<Expr> items_;
  std::vector<int64_t> dims_;
  size_t k_ = 0;
};

/// Reads back what str() prints; an error (E4003) names the position.
Expected<Expr> parseIndexExpr(const std::string &text);
/// "[e0, e1, ...]": one expression per tensor dimension.
Expected<std::vector<Expr>> parseIndexList(const std::string &text);
/// "[e0, e1, ...]"
std::string indexListStr(const std::vector<Expr> &index);

/// A flat, self-contained encoding of an index (one expression per dimension), for storage
/// in IR attributes: [count, expr...] with each expr in prefix form. decodeIndex returns
/// nullopt on a malformed code.
std::vector<int64_t> encodeIndex(const std::vector<Expr> &index);
std::optional<std::vector<Expr>> decodeIndex(const std::vector<int64_t> &code);
/// The largest iterator id the expression uses, or -1.
int maxIterator(const Expr &e);
/// The smallest and largest values of `e` with each iterator i in [0, sizes[i]) (a bound:
/// components of an undot count as their whole range).
std::pair<int64_t, int64_t> valueRange(const Expr &e, const std::vector<int64_t> &sizes);
/// The c with e = c * i<id> + terms without i<id>, or nullopt when e is not linear in i<id>
/// (i<id> inside an UnDot).
std::optional<int64_t> linearCoefficient(const Expr &e, int id);

/// "IndexDot([e0, e1], [d0, d1])" of a whole tensor index (rank 1 prints the expression).
std::string flatIndexStr(const std::vector<Expr> &index, const std::vector<int64_t> &shape);

} // namespace sotc::mapexpr

#endif // SOTC_MAPEXPR_INDEXEXPR_H
