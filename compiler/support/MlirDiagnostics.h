//===- MlirDiagnostics.h - Coded errors through MLIR's diagnostic engine -----------------===//
//
// The one bridge between sotc's coded errors and MLIR diagnostics. Passes report a failure
// with emitCodedError: the diagnostic's message starts with the stable code ("E2001: ...").
// The driver runs a pipeline under a CodedDiagnosticCapture, which keeps the first error
// and renders it as sotc's one line, with the Python file:line of the op's location:
//   error E2001: paddle.nope is not a supported operator (prog.py:7)
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_SUPPORT_MLIRDIAGNOSTICS_H
#define SOTC_SUPPORT_MLIRDIAGNOSTICS_H

#include "compiler/support/Diagnostics.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace sotc {

/// Emits "CODE: message" at `loc`; stream more text into the result.
mlir::InFlightDiagnostic emitCodedError(mlir::Location loc, DiagCode code);
/// Emits a library error (its code and message) at `op`; always returns failure.
mlir::LogicalResult emitCodedError(mlir::Operation *op, const CodedError &error);

/// "prog.py:7" of the first file location inside `loc`, or "".
std::string sourceLine(mlir::Location loc);

/// While alive, takes every diagnostic of `ctx` off the default handler and keeps the first
/// error. A message without a code gets `fallback`.
class CodedDiagnosticCapture {
public:
  CodedDiagnosticCapture(mlir::MLIRContext *ctx, DiagCode fallback);
  /// The first error as a CodedError (message + " (file:line)"), or nullopt when none came.
  std::optional<CodedError> error() const { return error_; }

private:
  mlir::ScopedDiagnosticHandler handler_;
  DiagCode fallback_;
  std::optional<CodedError> error_;
};

} // namespace sotc

#endif // SOTC_SUPPORT_MLIRDIAGNOSTICS_H
