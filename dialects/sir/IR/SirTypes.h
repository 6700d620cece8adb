//===- SirTypes.h - Operator-library dtypes as MLIR element types -------------------------===//
#ifndef SOTC_DIALECT_SIR_IR_SIRTYPES_H
#define SOTC_DIALECT_SIR_IR_SIRTYPES_H

#include "compiler/ops/Types.h"

#include "mlir/IR/BuiltinTypes.h"

#include <optional>
#include <vector>

namespace sotc::sir {

/// float32 -> f32, int8 -> i8, uint8 -> ui8, bool -> i1, complex64 -> complex<f32>, ...
mlir::Type elementType(mlir::MLIRContext *ctx, ops::DType dtype);
/// The inverse; nullopt for element types the operator library has no dtype for.
std::optional<ops::DType> dtypeOf(mlir::Type type);

/// A shape's dynamic dimensions are `?`; where one is not s0, the type's encoding names the
/// symbol of each (`tensor<?x?x64xf32, #sir.dims<"s0", "s1">>`).
mlir::RankedTensorType tensorType(mlir::MLIRContext *ctx, const ops::TensorMeta &meta);
/// The symbol of each `?` of `type`, in order (0 for a type without an encoding).
std::vector<int> dynamicSymbols(mlir::RankedTensorType type);
/// `type`'s shape with each `?` as the size it is (ops::dynamicDim).
std::vector<int64_t> shapeWithSizes(mlir::RankedTensorType type);
/// nullopt when the element type has no dtype.
std::optional<ops::TensorMeta> metaOf(mlir::RankedTensorType type);

} // namespace sotc::sir

#endif // SOTC_DIALECT_SIR_IR_SIRTYPES_H
