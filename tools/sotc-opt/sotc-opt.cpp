//===- sotc-opt.cpp - The mlir-opt-style driver for sotc's dialects and passes -----------===//
//
// lit tests run sotc's dialects and passes through this tool. Each dialect library adds its
// registration here as it lands; upstream dialects the pipeline builds on are registered too.
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/mapexpr/IR/MapExprDialect.h"
#include "dialects/mapexpr/Transforms/Passes.h"
#include "dialects/sched/IR/SchedDialect.h"
#include "dialects/sir/IR/SirDialect.h"
#include "dialects/sir/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  sotc::sir::registerSirPasses();
  sotc::mapexpr::registerMapExprPasses();
  mlir::DialectRegistry registry;
  registry
      .insert<sotc::sir::SirDialect, sotc::sched::SchedDialect, sotc::mapexpr::MapExprDialect>();
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "sotc optimizer driver\n", registry));
}
