#include "compiler/support/MlirDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

namespace sotc {

mlir::InFlightDiagnostic emitCodedError(mlir::Location loc, DiagCode code) {
  mlir::InFlightDiagnostic diag = mlir::emitError(loc);
  diag << diagInfo(code).id << ": ";
  return diag;
}

mlir::LogicalResult emitCodedError(mlir::Operation *op, const CodedError &error) {
  return emitCodedError(op->getLoc(), error.code()) << error.what();
}

std::string sourceLine(mlir::Location loc) {
  std::string found;
  loc->walk([&](mlir::Location l) {
    if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(l)) {
      found = file.getFilename().str() + ":" + std::to_string(file.getLine());
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return found;
}

/// The code a message starts with ("E2001: "), if it names a known one.
static std::optional<DiagCode> leadingCode(llvm::StringRef &message) {
  for (const DiagInfo &info : allDiagnostics()) {
    std::string prefix = std::string(info.id) + ": ";
    if (message.consume_front(prefix))
      return info.code;
  }
  return std::nullopt;
}

CodedDiagnosticCapture::CodedDiagnosticCapture(mlir::MLIRContext *ctx, DiagCode fallback)
    : handler_(ctx,
               [this](mlir::Diagnostic &diag) {
                 if (diag.getSeverity() != mlir::DiagnosticSeverity::Error || error_)
                   return mlir::success();
                 std::string text = diag.str();
                 llvm::StringRef message(text);
                 DiagCode code = leadingCode(message).value_or(fallback_);
                 std::string where = sourceLine(diag.getLocation());
                 error_.emplace(code, message.str() + (where.empty() ? "" : " (" + where + ")"));
                 return mlir::success();
               }),
      fallback_(fallback) {}

} // namespace sotc
