#include "dialects/sir/IR/SirTypes.h"

#include "dialects/sir/IR/SirDialect.h"

#include "mlir/IR/Builders.h"

namespace sotc::sir {

mlir::Type elementType(mlir::MLIRContext *ctx, ops::DType d) {
  mlir::Builder b(ctx);
  switch (d) {
  case ops::DType::Bool:
    return b.getI1Type();
  case ops::DType::Int8:
    return b.getIntegerType(8);
  case ops::DType::UInt8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case ops::DType::Int16:
    return b.getIntegerType(16);
  case ops::DType::Int32:
    return b.getI32Type();
  case ops::DType::Int64:
    return b.getI64Type();
  case ops::DType::Float16:
    return b.getF16Type();
  case ops::DType::BFloat16:
    return b.getBF16Type();
  case ops::DType::Float32:
    return b.getF32Type();
  case ops::DType::Float64:
    return b.getF64Type();
  case ops::DType::Complex64:
    return mlir::ComplexType::get(b.getF32Type());
  case ops::DType::Complex128:
    return mlir::ComplexType::get(b.getF64Type());
  }
  return b.getF32Type();
}

std::optional<ops::DType> dtypeOf(mlir::Type t) {
  if (t.isF16())
    return ops::DType::Float16;
  if (t.isBF16())
    return ops::DType::BFloat16;
  if (t.isF32())
    return ops::DType::Float32;
  if (t.isF64())
    return ops::DType::Float64;
  if (auto i = mlir::dyn_cast<mlir::IntegerType>(t)) {
    if (i.getWidth() == 1)
      return ops::DType::Bool;
    if (i.getWidth() == 8)
      return i.isUnsigned() ? ops::DType::UInt8 : ops::DType::Int8;
    if (i.isUnsigned())
      return std::nullopt;
    if (i.getWidth() == 16)
      return ops::DType::Int16;
    if (i.getWidth() == 32)
      return ops::DType::Int32;
    if (i.getWidth() == 64)
      return ops::DType::Int64;
  }
  if (auto c = mlir::dyn_cast<mlir::ComplexType>(t)) {
    if (c.getElementType().isF32())
      return ops::DType::Complex64;
    if (c.getElementType().isF64())
      return ops::DType::Complex128;
  }
  return std::nullopt;
}

mlir::RankedTensorType tensorType(mlir::MLIRContext *ctx, const ops::TensorMeta &meta) {
  llvm::SmallVector<int64_t> shape;
  for (int64_t d : meta.shape)
    shape.push_back(ops::isDynamicDim(d) ? mlir::ShapedType::kDynamic : d);
  // Types of s0 alone stay plain: every `?` without an encoding is s0.
  std::vector<ops::SizeProduct> sizes = ops::dynamicDimSizes(meta.shape);
  mlir::Attribute encoding = sizes.empty() ? mlir::Attribute() : DimsAttr::get(ctx, sizes);
  return mlir::RankedTensorType::get(shape, elementType(ctx, meta.dtype), encoding);
}

std::vector<int64_t> shapeWithSizes(mlir::RankedTensorType type) {
  auto encoding = mlir::dyn_cast_or_null<DimsAttr>(type.getEncoding());
  return ops::withSizes({type.getShape().begin(), type.getShape().end()},
                        encoding ? std::vector<ops::SizeProduct>(encoding.getSizes().begin(),
                                                                 encoding.getSizes().end())
                                 : std::vector<ops::SizeProduct>{});
}

std::vector<int> dynamicSymbols(mlir::RankedTensorType type) {
  return ops::dynamicSizes(shapeWithSizes(type));
}

std::optional<ops::TensorMeta> metaOf(mlir::RankedTensorType type) {
  std::optional<ops::DType> d = dtypeOf(type.getElementType());
  if (!d)
    return std::nullopt;
  ops::TensorMeta meta;
  meta.dtype = *d;
  meta.shape = shapeWithSizes(type);
  return meta;
}

} // namespace sotc::sir
