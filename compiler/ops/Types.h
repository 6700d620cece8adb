//===- Types.h - dtypes, tensor metadata and call arguments of the operator library ------===//
//
// What the frontend knows about a value when it asks the operator library about a call:
// tensors by metadata only (shape, dtype), Python values by value.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_OPS_TYPES_H
#define SOTC_OPS_TYPES_H

#include "compiler/support/Format.h"
#include "contract/SizeProduct.h"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace sotc::ops {

enum class DType {
  Bool,
  Int8,
  UInt8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,
  Complex128,
};

/// "float32"
const char *dtypeName(DType dtype);
/// Accepts "float32", "paddle.float32", "torch.float32" and the short forms ("f32", "int").
std::optional<DType> parseDType(const std::string &name);
bool isFloating(DType dtype);
bool isIntegral(DType dtype); // bool excluded
bool isComplex(DType dtype);

/// A dimension of -1 is dynamic: the size s0 that every `?` of the inputs is.
constexpr int64_t kDynamic = -1;
/// The dynamic sizes a trace may have: s0 and the sizes its inputs name (`int64[B,T]`: B is
/// s0, T s1), numbered in the order the inputs give them.
constexpr int kMaxSymbols = 8;
/// Symbol k's dimension in a shape: -1 - k (s0 is kDynamic).
constexpr int64_t dynamicDim(int symbol) { return -1 - symbol; }
/// Below the symbols' dimensions, products of them (SizeProduct, productDim) down to this.
constexpr int64_t kMinDynamicDim = -(int64_t{1} << 62);
constexpr bool isDynamicDim(int64_t d) { return d < 0 && d >= kMinDynamicDim; }
/// A dynamic dimension that is one symbol alone (s_k, not a product).
constexpr bool isSymbolDim(int64_t d) { return d < 0 && d >= -kMaxSymbols; }
/// The symbol a dimension of one symbol is.
constexpr int symbolOf(int64_t d) { return static_cast<int>(-1 - d); }

/// A dimension's size as a static factor times powers of the dynamic sizes (the artifact
/// contract's encoding): s0*s1 where x.view(-1, C) merges [B, T, C]'s B and T, 16*s0 where
/// [?, 16, 64] is viewed as (-1, 64), 2*s0 for x.reshape(B * 2, -1).
using contract::SizeProduct;
static_assert(contract::kMaxSizeSymbols == kMaxSymbols);
/// The product a dimension is: a static one its size without powers.
SizeProduct productOf(int64_t dim);
/// The product of a shape's dimensions.
SizeProduct productOf(const std::vector<int64_t> &shape);
/// The dimension of `p`: its factor where it has no powers, dynamicDim(k) for s_k alone, a
/// code below -kMaxSymbols otherwise. E2010 (a CodedError) where a power passes 7 or the
/// factor 2^37.
int64_t productDim(const SizeProduct &p);
using contract::quotient;
/// The product SizeProduct::text wrote; nullopt for other text and for what productDim
/// refuses.
std::optional<SizeProduct> parseProduct(const std::string &text);

/// A dynamic size that is another one plus a number, with a symbol of its own: x[:, 1:] of T
/// positions has T - 1 (s2 = s1 - 1), a pad of one more T + 1. The kernels take it as they
/// take the inputs' sizes; the runtime computes it from its base.
struct SizeOffset {
  int symbol = 0; // s_symbol
  int base = 0;   // s_base, a size the inputs give
  int64_t offset = 0;

  /// "s1-1", "s0+2"
  std::string text() const;
  /// "s2=s1-1" (DerivedSizes::parse reads it)
  std::string definition() const { return "s" + std::to_string(symbol) + "=" + text(); }
};

/// The sizes a program derives from its inputs' by offsets, numbered after the inputs' in the
/// order the program makes them. The operator library makes them as it infers shapes (the
/// frontend's table); the SIR module lists them (`sir.derived_sizes`) for the passes that
/// lower calls again.
class DerivedSizes {
public:
  DerivedSizes() = default;
  explicit DerivedSizes(std::vector<SizeOffset> sizes) : sizes_(std::move(sizes)) {}

  /// Sizes 0 .. n - 1 are the inputs' own; derived ones are numbered from n on.
  void setInputSizes(int n) { inputs_ = n; }
  /// The dimension `dim` + `offset`: a static one's sum, a size itself where the offsets cancel
  /// (T - 1 + 1 is T), else the size so derived from its base, made the first time it is
  /// asked for. E2010 for a product of sizes (B*T - 1) and past kMaxSymbols sizes.
  int64_t offsetDim(int64_t dim, int64_t offset);
  /// `a` - `b` where that is a number: two static dims, or sizes of one base (T - 1 and T).
  std::optional<int64_t> difference(int64_t a, int64_t b) const;
  /// A new size that no input gives and no other derives from: one a kernel computes
  /// (nonzero's count), numbered after every size so far. E2010 past kMaxSymbols.
  int produce();
  /// Whether s_k (or the base a derived s_k has) is one `produce` made.
  bool produced(int symbol) const;
  /// Symbol k's base and offset: {k, k, 0} for a size of the inputs (or a produced one).
  SizeOffset of(int symbol) const;
  const std::vector<SizeOffset> &sizes() const { return sizes_; }
  const std::vector<int> &producedSizes() const { return produced_; }
  /// "s2=s1-1" and back (nullopt for other text).
  static std::optional<SizeOffset> parse(const std::string &text);

private:
  /// The next symbol no size has yet.
  int nextSymbol() const;

  int inputs_ = 0;
  std::vector<SizeOffset> sizes_;
  std::vector<int> produced_;
};

/// In a list of sizes the frontend passes: a dynamic size (x.shape[d] of a `?` dimension,
/// known at run time only; B * T), which a reshape or expand makes a dimension of the result
/// and arange(n) the length of its range: kBatchSize - 1 - dim for dimension `dim`.
constexpr int64_t kBatchSize = std::numeric_limits<int64_t>::min(); // no Python size or index
constexpr int64_t sizeOfDim(int64_t dim) { return kBatchSize + (-1 - dim); }
constexpr int64_t symbolSize(int symbol) { return sizeOfDim(dynamicDim(symbol)); }
constexpr bool isSymbolSize(int64_t v) { return v >= kBatchSize && v <= sizeOfDim(kMinDynamicDim); }
/// The dimension a size of sizeOfDim stands for.
constexpr int64_t dimOfSymbolSize(int64_t v) { return -1 - (v - kBatchSize); }
/// The sizes of a shape's dynamic dims in order, as a tensor type names them (its encoding,
/// #sir.dims<"s0*s1", "s1">); none when every one is s0 (such types stay plain).
std::vector<SizeProduct> dynamicDimSizes(const std::vector<int64_t> &shape);
/// `shape` of a tensor type (any negative dim dynamic) with its dynamic dims as the sizes its
/// encoding names (dynamicDim(k), productDim); s0 where it names none.
std::vector<int64_t> withSizes(std::vector<int64_t> shape, const std::vector<SizeProduct> &sizes);
/// The symbols of `shape`'s dynamic dims, in order, each as often as its power (s0*s1^2 is
/// 0, 1, 1).
std::vector<int> dynamicSizes(const std::vector<int64_t> &shape);

struct TensorMeta {
  std::vector<int64_t> shape;
  DType dtype = DType::Float32;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  /// Element count, or kDynamic when any dimension is dynamic.
  int64_t numElements() const;
  bool operator==(const TensorMeta &o) const { return shape == o.shape && dtype == o.dtype; }
  bool operator!=(const TensorMeta &o) const { return !(*this == o); }
};

/// "[2, -1]": a list of ints as the user wrote it (targets of reshape, permutations, axes).
using sotc::formatInts;
/// "[2, 3]" ("?" for s0, "s1" for another dynamic size)
std::string formatShape(const std::vector<int64_t> &shape);
/// "float32[2, 3]"
std::string formatMeta(const TensorMeta &meta);

/// One argument of a call as the frontend sees it: a tensor (by metadata) or a Python value.
struct Arg {
  enum class Kind { Tensor, None, Bool, Int, Float, String, DType, List, Tuple, Slice, Ellipsis };
  Kind kind = Kind::None;
  TensorMeta tensor;
  bool boolValue = false;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string stringValue;
  DType dtypeValue = DType::Float32;
  std::vector<Arg> items; // List, Tuple; Slice: start, stop, step (each None or Int)

  static Arg ofTensor(TensorMeta meta);
  static Arg none();
  static Arg ofBool(bool v);
  static Arg ofInt(int64_t v);
  static Arg ofFloat(double v);
  static Arg ofString(std::string v);
  static Arg ofDType(DType v);
  static Arg list(std::vector<Arg> items);
  static Arg tuple(std::vector<Arg> items);
  static Arg slice(Arg start, Arg stop, Arg step);
  static Arg ellipsis();

  bool isTensor() const { return kind == Kind::Tensor; }
  bool isNone() const { return kind == Kind::None; }
  bool isSequence() const { return kind == Kind::List || kind == Kind::Tuple; }
  /// Python's name for the argument's type: "Tensor", "int", "float", "list", "NoneType".
  std::string typeName() const;
  /// The value as Python would print it; tensors print as their metadata.
  std::string repr() const;
  /// int, float or bool, as a double.
  double scalar() const;
};

} // namespace sotc::ops

#endif // SOTC_OPS_TYPES_H
