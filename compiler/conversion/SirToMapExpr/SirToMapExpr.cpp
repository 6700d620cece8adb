//===- SirToMapExpr.cpp - sir.group fusion groups to mapexpr.kernel ops ------------------===//
//
// 1. Build the kernel model of each group (BuildKernel.h).
// 2. Emit it: inputs as block arguments named by the frontend, the other tensors as
//    mapexpr.tensor, one mapexpr.anchored per AnchoredMapStmt with its schedule dims and
//    its statements with their index expressions, and mapexpr.return of the outputs.
// 3. Replace the group with a mapexpr.launch of the kernel.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/conversion/SirToMapExpr/Passes.h"

#include "compiler/conversion/SirToMapExpr/BuildKernel.h"
#include "dialects/sir/IR/SirDialect.h"

#include <map>
#include <set>

namespace sotc {

#define GEN_PASS_DEF_CONVERTSIRTOMAPEXPR
#include "compiler/conversion/SirToMapExpr/Passes.h.inc"

using namespace mapexpr;

namespace {

KernelOp emitKernel(mlir::OpBuilder &b, mlir::Location loc, const std::string &symbol,
                    const Kernel &k, const std::vector<mlir::Value> &values) {
  mlir::MLIRContext *ctx = b.getContext();
  llvm::SmallVector<mlir::Type> inputs, outputs;
  for (int t : k.inputs)
    inputs.push_back(values[t].getType());
  for (int t : k.outputs)
    outputs.push_back(values[t].getType());
  auto kernel = KernelOp::create(b, loc, symbol, b.getFunctionType(inputs, outputs), nullptr,
                                 nullptr, nullptr);
  llvm::SmallVector<mlir::Attribute> argAttrs;
  for (int t : k.inputs)
    argAttrs.push_back(
        b.getDictionaryAttr({b.getNamedAttr("mapexpr.name", b.getStringAttr(k.tensors[t].name))}));
  kernel.setArgAttrsAttr(b.getArrayAttr(argAttrs));
  mlir::Block *body = b.createBlock(&kernel.getBody());
  mlir::OpBuilder kb = mlir::OpBuilder::atBlockEnd(body);
  std::map<int, mlir::Value> mapped;
  for (int t : k.inputs)
    mapped[t] = body->addArgument(values[t].getType(), loc);
  for (size_t t = 0; t < k.tensors.size(); ++t)
    if (!mapped.count(static_cast<int>(t)))
      mapped[t] =
          TensorOp::create(kb, loc, values[t].getType(), kb.getStringAttr(k.tensors[t].name));
  for (const AnchoredMapStmt &a : k.stmts) {
    // The space is written out only when it extends the anchor (a matmul's contraction).
    mlir::DenseI64ArrayAttr space =
        a.space == k.tensors[a.anchor].shape ? nullptr : kb.getDenseI64ArrayAttr(a.space);
    auto anchored = AnchoredOp::create(kb, loc, mapped[a.anchor], sched::dimsAttr(ctx, a.dims),
                                       space, nullptr, nullptr);
    mlir::OpBuilder ab = mlir::OpBuilder::atBlockEnd(&anchored.getBody().emplaceBlock());
    for (const OpStmt &s : a.stmts) {
      llvm::SmallVector<mlir::Value> outs, ins;
      llvm::SmallVector<mlir::Attribute> indices;
      auto index = [&](int t) { indices.push_back(IndexAttr::get(ctx, a.index.at(t))); };
      for (int t : s.outs) {
        outs.push_back(mapped[t]);
        index(t);
      }
      for (int t : s.ins) {
        ins.push_back(mapped[t]);
        index(t);
      }
      OpStmtOp::create(ab, loc, ab.getStringAttr(s.name()), outs, ins, ab.getArrayAttr(indices),
                       s.value ? ab.getF64FloatAttr(*s.value) : nullptr);
    }
  }
  llvm::SmallVector<mlir::Value> results;
  for (int t : k.outputs)
    results.push_back(mapped[t]);
  ReturnOp::create(kb, loc, results);
  return kernel;
}

struct ConvertSirToMapExprPass : impl::ConvertSirToMapExprBase<ConvertSirToMapExprPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    llvm::SmallVector<sir::GroupOp> groups;
    module.walk([&](sir::GroupOp g) { groups.push_back(g); });
    std::set<std::string> used;
    for (sir::GroupOp group : groups) {
      std::vector<mlir::Value> values;
      mlir::FailureOr<Kernel> kernel = buildKernel(group, &values);
      if (mlir::failed(kernel))
        return signalPassFailure();
      // Group names repeat across subgraphs; kernel symbols may not.
      std::string symbol = kernel->name;
      for (int n = 1; used.count(symbol); ++n)
        symbol = kernel->name + "__" + std::to_string(n);
      used.insert(symbol);
      mlir::OpBuilder b(module.getBodyRegion());
      b.setInsertionPointToEnd(module.getBody());
      emitKernel(b, group.getLoc(), symbol, *kernel, values);
      b.setInsertionPoint(group);
      // Later kernels that read these results name them as this kernel did.
      llvm::SmallVector<mlir::Attribute> names;
      for (int t : kernel->outputs)
        names.push_back(b.getStringAttr(kernel->tensors[t].name));
      auto launch = LaunchOp::create(b, group.getLoc(), group.getResultTypes(),
                                     mlir::FlatSymbolRefAttr::get(b.getContext(), symbol),
                                     group.getInputs(), b.getArrayAttr(names));
      group.replaceAllUsesWith(launch.getResults());
      group.erase();
    }
  }
};

} // namespace
} // namespace sotc
