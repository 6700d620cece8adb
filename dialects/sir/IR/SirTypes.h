//===- SirTypes.h - Operator-library dtypes as MLIR element types -------------------------===//
#ifndef SOTC_DIALECT_SIR_IR_SIRTYPES_H
#define SOTC_DIALECT_SIR_IR_SIRTYPES_H

#include "compiler/ops/Types.h"

#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace sotc::sir {

/// float32 -> f32, int8 -> i8, uint8 -> ui8, bool -> i1, complex64 -> complex<f32>, ...
mlir::Type elementType(mlir::MLIRContext *ctx, ops::DType dtype);
/// The inverse; nullopt for element types the operator library has no dtype for.
std::optional<ops::DType> dtypeOf(mlir::Type type);

mlir::RankedTensorType tensorType(mlir::MLIRContext *ctx, const ops::TensorMeta &meta);
/// nullopt when the element type has no dtype.
std::optional<ops::TensorMeta> metaOf(mlir::RankedTensorType type);

} // namespace sotc::sir

#endif // SOTC_DIALECT_SIR_IR_SIRTYPES_H
