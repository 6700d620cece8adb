//===- SizeProduct.h - A size as a number times powers of the dynamic sizes ---------------===//
//
// The artifact contract's one encoding of a size that holds dynamic sizes s0, s1, ... (the
// inputs' `?` and the sizes they name): a static factor times a power of each, "16*s0",
// "s0*s1^2", "8". The operator library infers shapes with it, the schedules print it, the
// manifest writes it as its text and the runtime reads that text back with the same parser.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_CONTRACT_SIZEPRODUCT_H
#define SOTC_CONTRACT_SIZEPRODUCT_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sotc::contract {

/// The dynamic sizes one trace may have.
constexpr int kMaxSizeSymbols = 8;
/// The highest power of one size the text form writes (one digit).
constexpr int kMaxSizePower = 9;
/// A value of each dynamic size (a call's, or the compiler's stand-ins).
using SizeValues = std::array<int64_t, kMaxSizeSymbols>;

struct SizeProduct {
  int64_t factor = 1;
  std::array<int, kMaxSizeSymbols> powers{};

  static SizeProduct constant(int64_t n) { return {n, {}}; }
  static SizeProduct symbol(int k) {
    SizeProduct p;
    p.powers[k] = 1;
    return p;
  }

  /// Whether it holds any dynamic size.
  bool dynamic() const;
  /// The sum of its powers (64*s0*s1^2: 3).
  int degree() const;
  SizeProduct operator*(const SizeProduct &o) const;
  bool operator==(const SizeProduct &o) const { return factor == o.factor && powers == o.powers; }
  bool operator!=(const SizeProduct &o) const { return !(*this == o); }

  /// "16*s0", "s0*s1^2", "8": the factor unless it is 1 and sizes follow, then each size
  /// with a power, s0 first.
  std::string text() const;
  /// The product text() writes: `[N*]s<k>[^p]` joined by '*', a number first or not at all,
  /// each size once, powers 1 to kMaxSizePower; or a number alone. The factor is positive,
  /// of at most 18 digits.
  static std::optional<SizeProduct> parse(std::string_view text);

  /// Its value at `sizes`; nullopt past `limit` (or where it would overflow).
  std::optional<int64_t> valueAt(const SizeValues &sizes, int64_t limit = INT64_MAX) const;
};

/// `a / b` where that is a product again (a whole factor, no negative power).
std::optional<SizeProduct> quotient(const SizeProduct &a, const SizeProduct &b);

} // namespace sotc::contract

#endif // SOTC_CONTRACT_SIZEPRODUCT_H
