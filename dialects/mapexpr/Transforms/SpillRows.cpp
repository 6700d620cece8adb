//===- SpillRows.cpp - Kept rows beyond a block's shared memory become kernel outputs ----===//
//
// 1. Per scheduled kernel, the tensors a block keeps between statements (tensorStorage's
//    Shared and Scratch) and their bytes per block; rows of the dynamic size are the launch's
//    dynamic shared memory and stay.
// 2. While the static ones exceed kSharedBytesPerBlock, the largest becomes an output: the
//    kernel returns it, and every launch of the kernel gets one more result (named as the
//    tensor) that nothing reads, which the host plan's arena places like any other.
//
//===--------------------------------------------------------------------------------------===//
#include "dialects/mapexpr/Transforms/Passes.h"

#include "dialects/mapexpr/Utils/MapExpr.h"

#include "mlir/IR/Builders.h"

#include <algorithm>

namespace sotc::mapexpr {

#define GEN_PASS_DEF_MAPEXPRSPILLROWS
#include "dialects/mapexpr/Transforms/Passes.h.inc"

namespace {

/// The tensors of `kernel` to return instead of keeping in shared memory, largest first.
std::vector<int> spilled(KernelOp kernel, std::vector<mlir::Value> &values) {
  Kernel k = kernelFromIR(kernel, &values);
  if (std::any_of(k.stmts.begin(), k.stmts.end(),
                  [](const AnchoredMapStmt &a) { return !a.schedule; }))
    return {};
  std::vector<Storage> storage = tensorStorage(k);
  std::vector<std::pair<int64_t, int>> kept; // bytes per block, tensor
  int64_t total = 0;
  for (size_t t = 0; t < storage.size(); ++t) {
    if ((storage[t].kind != StorageKind::Shared && storage[t].kind != StorageKind::Scratch) ||
        sched::holdsBatch(storage[t].elementsPerBlock))
      continue;
    auto type = mlir::cast<mlir::RankedTensorType>(values[t].getType());
    // A scratch buffer of s0 rows, a complex one: refused when lowered.
    if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      continue;
    int64_t bytes =
        storage[t].elementsPerBlock * std::max<int64_t>(type.getElementTypeBitWidth() / 8, 1);
    kept.push_back({bytes, static_cast<int>(t)});
    total += bytes;
  }
  std::stable_sort(kept.begin(), kept.end(),
                   [](const auto &x, const auto &y) { return x.first > y.first; });
  std::vector<int> out;
  for (const auto &[bytes, t] : kept) {
    if (total <= kSharedBytesPerBlock)
      break;
    out.push_back(t);
    total -= bytes;
  }
  return out;
}

struct MapExprSpillRowsPass : impl::MapExprSpillRowsBase<MapExprSpillRowsPass> {
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    for (KernelOp kernel : module.getOps<KernelOp>()) {
      std::vector<mlir::Value> values;
      std::vector<int> tensors = spilled(kernel, values);
      if (tensors.empty())
        continue;
      auto ret = mlir::cast<ReturnOp>(kernel.getBody().front().getTerminator());
      llvm::SmallVector<mlir::Value> results(ret.getResults());
      llvm::SmallVector<mlir::Type> types(kernel.getResultTypes());
      llvm::SmallVector<mlir::Attribute> names;
      for (int t : tensors) {
        results.push_back(values[t]);
        types.push_back(values[t].getType());
        names.push_back(mlir::cast<TensorOp>(values[t].getDefiningOp()).getNameAttr());
      }
      ret->setOperands(results);
      kernel.setFunctionTypeAttr(mlir::TypeAttr::get(
          mlir::FunctionType::get(&getContext(), kernel.getArgumentTypes(), types)));
      llvm::SmallVector<LaunchOp> launches;
      module.walk([&](LaunchOp l) {
        if (l.getKernel() == kernel.getSymName())
          launches.push_back(l);
      });
      for (LaunchOp launch : launches) {
        mlir::OpBuilder b(launch);
        llvm::SmallVector<mlir::Attribute> launchNames;
        if (auto given = launch.getNamesAttr())
          launchNames.assign(given.begin(), given.end());
        launchNames.resize(launch.getNumResults(), b.getStringAttr(""));
        launchNames.append(names.begin(), names.end());
        auto spilledLaunch = LaunchOp::create(b, launch.getLoc(), types, launch.getKernelAttr(),
                                              launch.getInputs(), b.getArrayAttr(launchNames));
        for (auto [old, now] : llvm::zip(launch.getResults(), spilledLaunch.getResults()))
          old.replaceAllUsesWith(now);
        launch.erase();
      }
    }
  }
};

} // namespace
} // namespace sotc::mapexpr
