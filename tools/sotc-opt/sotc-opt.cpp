//===- sotc-opt.cpp - The mlir-opt-style driver for sotc's dialects and passes -----------===//
//
// lit tests run sotc's dialects, passes and pipeline through this tool; what it knows comes
// from the pipeline library's registrations.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/pipelines/Pipelines.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  sotc::pipelines::registerAllPasses();
  mlir::DialectRegistry registry;
  sotc::pipelines::registerAllDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "sotc optimizer driver\n", registry));
}
