#include "compiler/ops/Types.h"

#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace sotc::ops {

namespace {
struct DTypeNames {
  DType dtype;
  const char *name;
  const char *shortName;
};
constexpr DTypeNames kDTypes[] = {
    {DType::Bool, "bool", "bool"},          {DType::Int8, "int8", "i8"},
    {DType::UInt8, "uint8", "u8"},          {DType::Int16, "int16", "i16"},
    {DType::Int32, "int32", "i32"},         {DType::Int64, "int64", "i64"},
    {DType::Float16, "float16", "f16"},     {DType::BFloat16, "bfloat16", "bf16"},
    {DType::Float32, "float32", "f32"},     {DType::Float64, "float64", "f64"},
    {DType::Complex64, "complex64", "c64"}, {DType::Complex128, "complex128", "c128"},
};
} // namespace

const char *dtypeName(DType dtype) { return kDTypes[static_cast<int>(dtype)].name; }

std::optional<DType> parseDType(const std::string &name) {
  std::string text = name;
  for (const char *prefix : {"paddle.", "torch.", "numpy.", "np."})
    if (text.rfind(prefix, 0) == 0)
      text = text.substr(std::string(prefix).size());
  // Python-level spellings: `float` and `int` as numpy reads them, torch's aliases.
  if (text == "float" || text == "half" || text == "double" || text == "int" || text == "long")
    text = text == "float"    ? "float32"
           : text == "half"   ? "float16"
           : text == "double" ? "float64"
           : text == "int"    ? "int32"
                              : "int64";
  for (const DTypeNames &d : kDTypes)
    if (text == d.name || text == d.shortName)
      return d.dtype;
  return std::nullopt;
}

bool isFloating(DType d) {
  return d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32 || d == DType::Float64;
}
bool isComplex(DType d) { return d == DType::Complex64 || d == DType::Complex128; }
bool isIntegral(DType d) {
  return d == DType::Int8 || d == DType::UInt8 || d == DType::Int16 || d == DType::Int32 ||
         d == DType::Int64;
}

int64_t TensorMeta::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (isDynamicDim(d))
      return kDynamic;
    n *= d;
  }
  return n;
}

namespace {
// A product below the symbols' dimensions: its factor above 24 bits, 3 bits per power.
constexpr int kPowerBits = 3;
constexpr int kFactorShift = kPowerBits * kMaxSymbols;
constexpr int64_t kMaxFactor = int64_t{1} << 37;
constexpr int64_t kFirstProduct = -kMaxSymbols - 1;
} // namespace

SizeProduct productOf(int64_t dim) {
  SizeProduct p;
  if (!isDynamicDim(dim)) {
    p.factor = dim;
  } else if (isSymbolDim(dim)) {
    p.powers[symbolOf(dim)] = 1;
  } else {
    int64_t packed = kFirstProduct - dim;
    p.factor = packed >> kFactorShift;
    for (int k = 0; k < kMaxSymbols; ++k)
      p.powers[k] = static_cast<int>((packed >> (kPowerBits * k)) & ((1 << kPowerBits) - 1));
  }
  return p;
}

SizeProduct productOf(const std::vector<int64_t> &shape) {
  SizeProduct p;
  for (int64_t d : shape)
    p = p * productOf(d);
  return p;
}

int64_t productDim(const SizeProduct &p) {
  if (!p.dynamic())
    return p.factor;
  int symbols = 0, last = 0;
  for (int k = 0; k < kMaxSymbols; ++k)
    if (p.powers[k]) {
      ++symbols;
      last = k;
    }
  if (p.factor == 1 && symbols == 1 && p.powers[last] == 1)
    return dynamicDim(last);
  bool fits = p.factor > 0 && p.factor < kMaxFactor &&
              std::all_of(p.powers.begin(), p.powers.end(),
                          [](int power) { return power < (1 << kPowerBits); });
  if (!fits)
    throw CodedError(DiagCode::OpBadAttribute,
                     "a dimension of " + p.text() +
                         " is more than sotc computes (powers to 7, factors below 2^37)");
  int64_t packed = p.factor << kFactorShift;
  for (int k = 0; k < kMaxSymbols; ++k)
    packed |= static_cast<int64_t>(p.powers[k]) << (kPowerBits * k);
  return kFirstProduct - packed;
}

std::optional<SizeProduct> parseProduct(const std::string &text) {
  std::optional<SizeProduct> p = SizeProduct::parse(text);
  if (!p || p->factor >= kMaxFactor ||
      std::any_of(p->powers.begin(), p->powers.end(),
                  [](int power) { return power >= (1 << kPowerBits); }))
    return std::nullopt;
  return p;
}

std::string SizeOffset::text() const {
  return "s" + std::to_string(base) + (offset < 0 ? "" : "+") + std::to_string(offset);
}

int64_t DerivedSizes::offsetDim(int64_t dim, int64_t offset) {
  if (!isDynamicDim(dim))
    return dim + offset;
  if (!isSymbolDim(dim))
    throw CodedError(DiagCode::OpBadAttribute,
                     "a dimension of " + productOf(dim).text() +
                         (offset < 0 ? " - " : " + ") + std::to_string(std::abs(offset)) +
                         " (a product of dynamic sizes plus a number) is not supported yet");
  SizeOffset d = of(symbolOf(dim));
  d.offset += offset;
  if (d.offset == 0)
    return dynamicDim(d.base);
  for (const SizeOffset &s : sizes_)
    if (s.base == d.base && s.offset == d.offset)
      return dynamicDim(s.symbol);
  d.symbol = nextSymbol();
  if (d.symbol >= kMaxSymbols)
    throw CodedError(DiagCode::OpBadAttribute,
                     "the dimension " + d.text() + " would be more than the " +
                         std::to_string(kMaxSymbols) + " dynamic sizes sotc compiles");
  sizes_.push_back(d);
  return dynamicDim(d.symbol);
}

std::optional<int64_t> DerivedSizes::difference(int64_t a, int64_t b) const {
  if (!isDynamicDim(a) && !isDynamicDim(b))
    return a - b;
  if (a == b)
    return 0;
  if (!isSymbolDim(a) || !isSymbolDim(b))
    return std::nullopt;
  SizeOffset x = of(symbolOf(a)), y = of(symbolOf(b));
  if (x.base != y.base)
    return std::nullopt;
  return x.offset - y.offset;
}

int DerivedSizes::nextSymbol() const {
  int next = inputs_;
  for (const SizeOffset &s : sizes_)
    next = std::max(next, s.symbol + 1);
  for (int k : produced_)
    next = std::max(next, k + 1);
  return next;
}

int DerivedSizes::produce() {
  int k = nextSymbol();
  if (k >= kMaxSymbols)
    throw CodedError(DiagCode::OpBadAttribute,
                     "a size computed from tensor values would be more than the " +
                         std::to_string(kMaxSymbols) + " dynamic sizes sotc compiles");
  produced_.push_back(k);
  return k;
}

bool DerivedSizes::produced(int symbol) const {
  int base = of(symbol).base;
  return std::find(produced_.begin(), produced_.end(), base) != produced_.end();
}

SizeOffset DerivedSizes::of(int symbol) const {
  for (const SizeOffset &s : sizes_)
    if (s.symbol == symbol)
      return s;
  return {symbol, symbol, 0};
}

std::optional<SizeOffset> DerivedSizes::parse(const std::string &text) {
  // s<k>=s<b><+|-><n>
  auto symbol = [](const std::string &t) -> std::optional<int> {
    if (t.size() != 2 || t[0] != 's' || t[1] < '0' || t[1] >= '0' + kMaxSymbols)
      return std::nullopt;
    return t[1] - '0';
  };
  size_t eq = text.find('='), sign = text.find_first_of("+-", eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || sign == std::string::npos || sign + 1 >= text.size() ||
      text.size() - sign > 10 ||
      text.find_first_not_of("0123456789", sign + 1) != std::string::npos)
    return std::nullopt;
  std::optional<int> k = symbol(text.substr(0, eq)), b = symbol(text.substr(eq + 1, sign - eq - 1));
  int64_t n = std::stoll(text.substr(sign + 1));
  if (!k || !b || *k == *b || n == 0)
    return std::nullopt;
  return SizeOffset{*k, *b, text[sign] == '-' ? -n : n};
}

std::vector<SizeProduct> dynamicDimSizes(const std::vector<int64_t> &shape) {
  std::vector<SizeProduct> sizes;
  bool named = false;
  for (int64_t d : shape)
    if (isDynamicDim(d)) {
      sizes.push_back(productOf(d));
      named |= d != kDynamic;
    }
  return named ? sizes : std::vector<SizeProduct>{};
}

std::vector<int64_t> withSizes(std::vector<int64_t> shape, const std::vector<SizeProduct> &sizes) {
  size_t at = 0;
  for (int64_t &d : shape) {
    if (d >= 0)
      continue;
    const SizeProduct *p = at < sizes.size() ? &sizes[at] : nullptr;
    ++at;
    d = p && p->dynamic() ? productDim(*p) : kDynamic;
  }
  return shape;
}

std::vector<int> dynamicSizes(const std::vector<int64_t> &shape) {
  std::vector<int> symbols;
  for (int64_t d : shape) {
    if (!isDynamicDim(d))
      continue;
    SizeProduct p = productOf(d);
    for (int k = 0; k < kMaxSymbols; ++k)
      symbols.insert(symbols.end(), p.powers[k], k);
  }
  return symbols;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += shape[i] == kDynamic     ? "?"
         : isDynamicDim(shape[i]) ? productOf(shape[i]).text()
                                  : std::to_string(shape[i]);
  }
  return s + "]";
}

std::string formatMeta(const TensorMeta &meta) {
  return std::string(dtypeName(meta.dtype)) + formatShape(meta.shape);
}

Arg Arg::ofTensor(TensorMeta meta) {
  Arg a;
  a.kind = Kind::Tensor;
  a.tensor = std::move(meta);
  return a;
}
Arg Arg::none() { return Arg(); }
Arg Arg::ofBool(bool v) {
  Arg a;
  a.kind = Kind::Bool;
  a.boolValue = v;
  return a;
}
Arg Arg::ofInt(int64_t v) {
  Arg a;
  a.kind = Kind::Int;
  a.intValue = v;
  return a;
}
Arg Arg::ofFloat(double v) {
  Arg a;
  a.kind = Kind::Float;
  a.floatValue = v;
  return a;
}
Arg Arg::ofString(std::string v) {
  Arg a;
  a.kind = Kind::String;
  a.stringValue = std::move(v);
  return a;
}
Arg Arg::ofDType(DType v) {
  Arg a;
  a.kind = Kind::DType;
  a.dtypeValue = v;
  return a;
}
Arg Arg::list(std::vector<Arg> items) {
  Arg a;
  a.kind = Kind::List;
  a.items = std::move(items);
  return a;
}
Arg Arg::tuple(std::vector<Arg> items) {
  Arg a = list(std::move(items));
  a.kind = Kind::Tuple;
  return a;
}

Arg Arg::slice(Arg start, Arg stop, Arg step) {
  Arg a = list({std::move(start), std::move(stop), std::move(step)});
  a.kind = Kind::Slice;
  return a;
}
Arg Arg::ellipsis() {
  Arg a;
  a.kind = Kind::Ellipsis;
  return a;
}

std::string Arg::typeName() const {
  switch (kind) {
  case Kind::Tensor:
    return "Tensor";
  case Kind::None:
    return "NoneType";
  case Kind::Bool:
    return "bool";
  case Kind::Int:
    return "int";
  case Kind::Float:
    return "float";
  case Kind::String:
    return "str";
  case Kind::DType:
    return "dtype";
  case Kind::List:
    return "list";
  case Kind::Tuple:
    return "tuple";
  case Kind::Slice:
    return "slice";
  case Kind::Ellipsis:
    return "ellipsis";
  }
  return "object";
}

std::string Arg::repr() const {
  switch (kind) {
  case Kind::Tensor:
    return "Tensor(" + formatMeta(tensor) + ")";
  case Kind::None:
    return "None";
  case Kind::Bool:
    return boolValue ? "True" : "False";
  case Kind::Int:
    return std::to_string(intValue);
  case Kind::Float: {
    std::ostringstream s;
    s << floatValue;
    std::string text = s.str();
    if (text.find_first_of(".eEni") == std::string::npos)
      text += ".0";
    return text;
  }
  case Kind::String:
    return "'" + stringValue + "'";
  case Kind::DType:
    return dtypeName(dtypeValue);
  case Kind::List:
  case Kind::Tuple: {
    std::string s = kind == Kind::List ? "[" : "(";
    for (size_t i = 0; i < items.size(); ++i)
      s += (i ? ", " : "") + items[i].repr();
    if (kind == Kind::Tuple && items.size() == 1)
      s += ",";
    return s + (kind == Kind::List ? "]" : ")");
  }
  case Kind::Slice: {
    std::string s;
    for (size_t i = 0; i < items.size(); ++i)
      s += (i ? ":" : "") + (items[i].isNone() ? std::string() : items[i].repr());
    return s;
  }
  case Kind::Ellipsis:
    return "...";
  }
  return "?";
}

double Arg::scalar() const {
  return kind == Kind::Bool ? (boolValue ? 1 : 0) : kind == Kind::Int ? intValue : floatValue;
}

} // namespace sotc::ops
