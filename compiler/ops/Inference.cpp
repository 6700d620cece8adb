#include "compiler/ops/Inference.h"

#include "compiler/support/Diagnostics.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace sotc::ops {

void throwSizesMeet(int64_t a, int64_t b, const std::string &message) {
  if (isSymbolDim(a) && isSymbolDim(b))
    throw SizesMeet(symbolOf(a), symbolOf(b), message);
  throw CodedError(DiagCode::OpShapeMismatch,
                   message + " (a product of dynamic sizes against another size is not "
                             "compiled yet)");
}

std::vector<int64_t> broadcastShapes(const std::string &op, const std::vector<int64_t> &a,
                                     const std::vector<int64_t> &b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else if (isDynamicDim(da) != isDynamicDim(db))
      out[i] = isDynamicDim(da) ? db : da; // the static size; a guard will pin the dynamic one
    else if (isDynamicDim(da))
      throwSizesMeet(da, db,
                     op + "(): shapes " + formatShape(a) + " and " + formatShape(b) +
                         " broadcast two dynamic sizes together");
    else
      throw CodedError(DiagCode::OpShapeMismatch, op + "(): shapes " + formatShape(a) + " and " +
                                                      formatShape(b) +
                                                      " cannot be broadcast together");
  }
  return out;
}

namespace {
int rankOf(DType d) {
  // Within a category, the wider type wins; float16 and bfloat16 meet at float32.
  switch (d) {
  case DType::Bool:
    return 0;
  case DType::UInt8:
  case DType::Int8:
    return 1;
  case DType::Int16:
    return 2;
  case DType::Int32:
    return 3;
  case DType::Int64:
    return 4;
  case DType::Float16:
  case DType::BFloat16:
    return 5;
  case DType::Float32:
    return 6;
  case DType::Float64:
    return 7;
  case DType::Complex64:
    return 8;
  case DType::Complex128:
    return 9;
  }
  return 0;
}
} // namespace

DType promoteTypes(DType a, DType b) {
  if (a == b)
    return a;
  if ((a == DType::Float16 && b == DType::BFloat16) ||
      (a == DType::BFloat16 && b == DType::Float16))
    return DType::Float32;
  if ((a == DType::Int8 && b == DType::UInt8) || (a == DType::UInt8 && b == DType::Int8))
    return DType::Int16;
  if (a == DType::Complex64 && b == DType::Float64)
    return DType::Complex128;
  if (b == DType::Complex64 && a == DType::Float64)
    return DType::Complex128;
  return rankOf(a) >= rankOf(b) ? a : b;
}

DType promoteWithScalar(DType tensor, const Arg &scalar) {
  // A Python scalar only changes the category: float scalars make integer tensors float32
  // (the default dtype); int scalars make bool tensors int64.
  if (scalar.kind == Arg::Kind::Float && (isIntegral(tensor) || tensor == DType::Bool))
    return DType::Float32;
  if (scalar.kind == Arg::Kind::Int && tensor == DType::Bool)
    return DType::Int64;
  return tensor;
}

DType floatingResult(DType dtype) {
  return isFloating(dtype) || isComplex(dtype) ? dtype : DType::Float32;
}

int64_t normalizeAxis(const std::string &op, int64_t axis, int64_t rank) {
  int64_t bound = std::max<int64_t>(rank, 1);
  if (axis < -bound || axis >= bound)
    throw CodedError(DiagCode::OpBadAttribute,
                     op + "(): axis " + std::to_string(axis) + " is out of range for a " +
                         std::to_string(rank) + "-D tensor (expected " + std::to_string(-bound) +
                         " to " + std::to_string(bound - 1) + ")");
  return axis < 0 ? axis + bound : axis;
}

int64_t normalizeDim(const std::string &op, int64_t axis, int64_t rank) {
  if (rank == 0)
    throw CodedError(DiagCode::OpBadAttribute, op + "(): dimension " + std::to_string(axis) +
                                                   " of a 0-d tensor (it needs at least one)");
  return normalizeAxis(op, axis, rank);
}

std::vector<int64_t> normalizeAxes(const std::string &op, const std::vector<int64_t> &axes,
                                   int64_t rank) {
  std::set<int64_t> out;
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      out.insert(i);
  // A 0-d tensor takes axis 0 or -1, as paddle and torch allow, and has no axis to reduce.
  if (rank == 0) {
    for (int64_t axis : axes)
      normalizeAxis(op, axis, rank);
    return {};
  }
  for (int64_t axis : axes)
    if (!out.insert(normalizeAxis(op, axis, rank)).second)
      throw CodedError(DiagCode::OpBadAttribute,
                       op + "(): axis " + std::to_string(axis) + " appears twice");
  return {out.begin(), out.end()};
}

std::vector<int64_t> reducedShape(const std::vector<int64_t> &shape,
                                  const std::vector<int64_t> &axes, bool keepdim) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (!reduced)
      out.push_back(shape[i]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

std::vector<int64_t> reshapeShape(const std::string &op, const std::vector<int64_t> &in,
                                  const std::vector<int64_t> &target, bool zeroCopies) {
  // Sizes as products of the dynamic ones: a -1 is what the others leave of the input's
  // (x.view(-1, C) of [B, T, C] is [B*T, C]; x.view(B, -1) of [B, 16, 64] is [B, 1024]).
  std::vector<int64_t> out(target);
  int inferred = -1;
  SizeProduct known;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && zeroCopies) {
      if (i >= in.size())
        throw CodedError(DiagCode::OpBadAttribute,
                         op + "(): shape entry 0 at position " + std::to_string(i) +
                             " has no input dimension to copy (input " + formatShape(in) + ")");
      out[i] = in[i];
    }
    if (out[i] == -1 && target[i] == -1) {
      if (inferred >= 0)
        throw CodedError(DiagCode::OpBadAttribute,
                         op + "(): only one dimension can be -1 in " + formatInts(target));
      inferred = static_cast<int>(i);
      continue;
    }
    if (isSymbolSize(out[i])) // a dynamic size the frontend passed (x.view(B * T, C))
      out[i] = dimOfSymbolSize(out[i]);
    else if (out[i] < 0 && !isDynamicDim(out[i]))
      throw CodedError(DiagCode::OpBadAttribute, op + "(): invalid size " + std::to_string(out[i]) +
                                                     " in shape " + formatInts(target));
    known = known * productOf(out[i]);
  }
  SizeProduct total = productOf(in);
  auto targetText = [&] { // as given, the sizes passed as what they are
    std::string text = "[";
    for (size_t i = 0; i < out.size(); ++i)
      text += (i ? ", " : "") + (static_cast<int>(i) == inferred ? std::string("-1")
                                 : isDynamicDim(out[i])          ? productOf(out[i]).text()
                                                                 : std::to_string(out[i]));
    return text + "]";
  };
  if (inferred >= 0) {
    std::optional<SizeProduct> rest = known.factor ? quotient(total, known) : std::nullopt;
    if (rest) {
      out[inferred] = productDim(*rest);
      return out;
    }
    // B * 6 into rows of 4: whole for even B only, which the frontend may take B to be (the
    // last size left in the quotient, a multiple of what the factors lack).
    int left = -1;
    for (int k = 0; k < kMaxSymbols; ++k)
      left = total.powers[k] > known.powers[k] ? k : left;
    bool powers = std::all_of(known.powers.begin(), known.powers.end(),
                              [&, k = 0](int p) mutable { return p <= total.powers[k++]; });
    if (known.factor > 0 && powers && left >= 0) {
      int64_t factor = known.factor / std::gcd(total.factor, known.factor);
      throw SizeNotWhole(left, factor,
                         op + "(): a -1 that splits a dynamic size (" + formatShape(in) + " into " +
                             targetText() + ") needs s" + std::to_string(left) +
                             " to be a multiple of " + std::to_string(factor));
    }
    throw CodedError(DiagCode::OpShapeMismatch, op + "(): cannot reshape a tensor of shape " +
                                                    formatShape(in) + " into " + targetText());
  }
  if (known != total)
    throw CodedError(DiagCode::OpShapeMismatch, op + "(): cannot reshape a tensor of shape " +
                                                    formatShape(in) + " (" + total.text() +
                                                    " elements) into " + targetText() + " (" +
                                                    known.text() + " elements)");
  return out;
}

std::vector<int64_t> matmulShape(const std::string &op, std::vector<int64_t> x,
                                 std::vector<int64_t> y, bool transposeX, bool transposeY) {
  if (x.empty() || y.empty())
    throw CodedError(DiagCode::OpShapeMismatch, op + "(): operands must be at least 1-D, got " +
                                                    formatShape(x) + " and " + formatShape(y));
  std::vector<int64_t> origX = x, origY = y;
  bool vecX = x.size() == 1, vecY = y.size() == 1;
  if (vecX)
    x.insert(x.begin(), 1); // [k] -> [1, k]
  if (vecY)
    y.push_back(1); // [k] -> [k, 1]
  if (transposeX && !vecX)
    std::swap(x[x.size() - 1], x[x.size() - 2]);
  if (transposeY && !vecY)
    std::swap(y[y.size() - 1], y[y.size() - 2]);
  int64_t kx = x.back(), ky = y[y.size() - 2];
  if (kx != ky && isDynamicDim(kx) && isDynamicDim(ky))
    throwSizesMeet(kx, ky,
                   op + "(): " + formatShape(origX) + " and " + formatShape(origY) +
                       " contract two dynamic sizes");
  if (kx != ky && !isDynamicDim(kx) && !isDynamicDim(ky))
    throw CodedError(DiagCode::OpShapeMismatch,
                     op + "(): contraction dimensions differ: " + formatShape(origX) + " and " +
                         formatShape(origY) + " (" + std::to_string(kx) + " vs " +
                         std::to_string(ky) + ")");
  std::vector<int64_t> batch = broadcastShapes(op, std::vector<int64_t>(x.begin(), x.end() - 2),
                                               std::vector<int64_t>(y.begin(), y.end() - 2));
  if (!vecX)
    batch.push_back(x[x.size() - 2]);
  if (!vecY)
    batch.push_back(y.back());
  return batch;
}

} // namespace sotc::ops
