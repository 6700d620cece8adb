//===- SpillRows.cpp - Kept rows beyond a block's shared memory become kernel outputs ----===//
//
// 1. Per scheduled kernel, the tensors a block keeps between statements (tensorStorage's
//    Shared and Scratch) and their bytes per block. Rows of dynamic sizes stay the launch's
//    dynamic shared memory only where the bounds on their sizes keep them (with the static
//    ones) within what a kernel may opt in to; else they all become outputs.
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

/// The most shared memory a CUDA kernel may opt in to (an sm_90's), for rows of sizes.
constexpr int64_t kSharedBytesOptin = 227 * 1024;

/// The tensors of `kernel` to return instead of keeping in shared memory: rows of dynamic
/// sizes unless `sizeMax` (s0 first) bounds them within kSharedBytesOptin, then the largest
/// static ones while they exceed kSharedBytesPerBlock.
std::vector<int> spilled(KernelOp kernel, std::vector<mlir::Value> &values,
                         const std::vector<int64_t> &sizeMax) {
  Kernel k = kernelFromIR(kernel, &values);
  if (std::any_of(k.stmts.begin(), k.stmts.end(),
                  [](const AnchoredMapStmt &a) { return !a.schedule; }))
    return {};
  std::vector<Storage> storage = tensorStorage(k);
  std::vector<std::pair<int64_t, int>> kept, rowsOfSizes; // bytes per block (at the bounds)
  int64_t total = 0, dynamicTotal = 0;
  for (size_t t = 0; t < storage.size(); ++t) {
    if (storage[t].kind != StorageKind::Shared && storage[t].kind != StorageKind::Scratch)
      continue;
    auto type = mlir::cast<mlir::RankedTensorType>(values[t].getType());
    if (!type.getElementType().isIntOrFloat()) // complex: refused when lowered
      continue;
    int64_t bytes = std::max<int64_t>(type.getElementTypeBitWidth() / 8, 1);
    int64_t elements = storage[t].elementsPerBlock;
    if (k.standIns.holdsBatch(elements)) {
      if (storage[t].kind == StorageKind::Scratch) // rows of several s0: refused when lowered
        continue;
      // At the bounds of its sizes (an unbounded one past any).
      int64_t atMax = k.standIns.staticFactor(elements) * bytes;
      std::vector<int> powers = k.standIns.sizePowers(elements);
      for (size_t k = 0; k < powers.size(); ++k)
        for (int d = powers[k]; d > 0 && atMax <= kSharedBytesOptin; --d)
          atMax *= k < sizeMax.size() && sizeMax[k] > 0 ? sizeMax[k] : kSharedBytesOptin + 1;
      rowsOfSizes.push_back({atMax, static_cast<int>(t)});
      dynamicTotal += std::min(atMax, kSharedBytesOptin + 1);
      continue;
    }
    kept.push_back({elements * bytes, static_cast<int>(t)});
    total += elements * bytes;
  }
  std::vector<int> out;
  if (!rowsOfSizes.empty() && total + dynamicTotal > kSharedBytesOptin)
    for (const auto &[bytes, t] : rowsOfSizes)
      out.push_back(t);
  std::stable_sort(kept.begin(), kept.end(),
                   [](const auto &x, const auto &y) { return x.first > y.first; });
  for (const auto &[bytes, t] : kept) {
    if (total <= kSharedBytesPerBlock)
      break;
    out.push_back(t);
    total -= bytes;
  }
  return out;
}

struct MapExprSpillRowsPass : impl::MapExprSpillRowsBase<MapExprSpillRowsPass> {
  using MapExprSpillRowsBase::MapExprSpillRowsBase;

  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    for (KernelOp kernel : module.getOps<KernelOp>()) {
      std::vector<mlir::Value> values;
      std::vector<int> tensors =
          spilled(kernel, values, std::vector<int64_t>(sizeMax.begin(), sizeMax.end()));
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
