//===- SizeProduct.cpp - A size as a number times powers of the dynamic sizes -------------===//
#include "contract/SizeProduct.h"

#include <algorithm>
#include <numeric>

namespace sotc::contract {

bool SizeProduct::dynamic() const {
  return std::any_of(powers.begin(), powers.end(), [](int p) { return p != 0; });
}

int SizeProduct::degree() const { return std::accumulate(powers.begin(), powers.end(), 0); }

SizeProduct SizeProduct::operator*(const SizeProduct &o) const {
  SizeProduct p{factor * o.factor, powers};
  for (int k = 0; k < kMaxSizeSymbols; ++k)
    p.powers[k] += o.powers[k];
  return p;
}

std::string SizeProduct::text() const {
  std::string out = factor != 1 || !dynamic() ? std::to_string(factor) : "";
  for (int k = 0; k < kMaxSizeSymbols; ++k)
    if (powers[k])
      out += (out.empty() ? "s" : "*s") + std::to_string(k) +
             (powers[k] > 1 ? "^" + std::to_string(powers[k]) : "");
  return out;
}

namespace {
bool isDigit(char c) { return c >= '0' && c <= '9'; }
} // namespace

std::optional<SizeProduct> SizeProduct::parse(std::string_view text) {
  SizeProduct p;
  size_t at = 0;
  bool first = true;
  while (true) {
    size_t star = std::min(text.find('*', at), text.size());
    std::string_view term = text.substr(at, star - at);
    if (term.empty())
      return std::nullopt;
    if (term[0] != 's') { // the factor: first, decimal, positive, no overflow
      if (!first || term.size() > 18 || !std::all_of(term.begin(), term.end(), isDigit))
        return std::nullopt;
      p.factor = 0;
      for (char c : term)
        p.factor = p.factor * 10 + (c - '0');
      if (p.factor < 1)
        return std::nullopt;
    } else { // s<k> or s<k>^<p>
      bool power = term.size() == 4 && term[2] == '^';
      if ((term.size() != 2 && !power) || !isDigit(term[1]) || term[1] - '0' >= kMaxSizeSymbols)
        return std::nullopt;
      int k = term[1] - '0';
      int n = power ? term[3] - '0' : 1;
      if (p.powers[k] || n < 1 || n > kMaxSizePower)
        return std::nullopt;
      p.powers[k] = n;
    }
    first = false;
    if (star == text.size())
      return p;
    at = star + 1;
  }
}

std::optional<int64_t> SizeProduct::valueAt(const SizeValues &sizes, int64_t limit) const {
  int64_t out = factor;
  if (out < 0 || out > limit)
    return std::nullopt;
  for (int k = 0; k < kMaxSizeSymbols; ++k)
    for (int i = 0; i < powers[k]; ++i)
      if (__builtin_mul_overflow(out, sizes[k], &out) || out < 0 || out > limit)
        return std::nullopt;
  return out;
}

std::optional<SizeProduct> quotient(const SizeProduct &a, const SizeProduct &b) {
  if (b.factor <= 0 || a.factor % b.factor)
    return std::nullopt;
  SizeProduct q{a.factor / b.factor, {}};
  for (int k = 0; k < kMaxSizeSymbols; ++k) {
    q.powers[k] = a.powers[k] - b.powers[k];
    if (q.powers[k] < 0)
      return std::nullopt;
  }
  return q;
}

} // namespace sotc::contract
