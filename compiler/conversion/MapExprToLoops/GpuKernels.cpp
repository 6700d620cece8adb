//===- GpuKernels.cpp - A kernel as a gpu.func -------------------------------------------===//
//
// Shared memory (static, and dynamic for rows of dynamic sizes), the gpu.func with its
// blocks and threads, and the block-wide combination of threads' partial results.
//
//===-------------------------------------------------------------------------------------===//
#include "compiler/conversion/MapExprToLoops/KernelLowering.h"

#include "compiler/conversion/MapExprToLoops/Passes.h"
#include "compiler/conversion/MapExprToLoops/Scalars.h"
#include "compiler/support/MlirDiagnostics.h"

namespace sotc::mapexpr::loops {

mlir::LogicalResult KernelLowering::placeInSharedMemory() {
  int64_t bytes = 0;
  for (size_t t = 0; t < storage_.size(); ++t)
    if ((storage_[t].kind == StorageKind::Shared || storage_[t].kind == StorageKind::Scratch) &&
        !idx_.standIns.holdsBatch(storage_[t].elementsPerBlock)) // those are the call's (dynamic)
      bytes += storage_[t].elementsPerBlock * elementBytes(static_cast<int>(t));
  if (bytes > kSharedBytesPerBlock)
    return emitCodedError(op_.getLoc(), DiagCode::KernelUnsupported)
           << "kernel " << op_.getSymName() << " keeps " << bytes
           << " bytes per block between its statements, more than a block's shared memory ("
           << kSharedBytesPerBlock << "): run sotc-mapexpr-spill-rows first";
  for (Storage &st : storage_)
    if (st.kind == StorageKind::Scratch)
      st.kind = StorageKind::Shared;
  return mlir::success();
}

void KernelLowering::emitGpuFunction() {
  mlir::MLIRContext *ctx = b_.getContext();
  llvm::SmallVector<mlir::Type> args(sizes_.size(), b_.getIndexType()); // the call's sizes first
  for (int t : kernel_.outputs)
    args.push_back(memrefType(t));
  for (int t : kernel_.inputs)
    args.push_back(memrefType(t));
  for (size_t t = 0; t < kernel_.tensors.size(); ++t)
    if (storage_[t].kind == StorageKind::Shared)
      sharedRowDims_[t] = rows_ ? rowDims(kernel_, *rows_, static_cast<int>(t))
                                : std::vector<bool>(kernel_.tensors[t].shape.size(), false);
  llvm::SmallVector<mlir::Type> workgroup;
  std::vector<int> shared, sharedOfS0;
  auto space = mlir::gpu::AddressSpaceAttr::get(ctx, mlir::gpu::AddressSpace::Workgroup);
  for (size_t t = 0; t < kernel_.tensors.size(); ++t)
    if (storage_[t].kind == StorageKind::Shared &&
        idx_.standIns.holdsBatch(storage_[t].elementsPerBlock))
      sharedOfS0.push_back(static_cast<int>(t));
    else if (storage_[t].kind == StorageKind::Shared) {
      workgroup.push_back(mlir::MemRefType::get({storage_[t].elementsPerBlock},
                                                elementType(static_cast<int>(t)),
                                                mlir::MemRefLayoutAttrInterface(), space));
      shared.push_back(static_cast<int>(t));
    }
  int64_t blocks = 1, threads = 1;
  for (const sched::LoopDescriptor &l : kernel_.stmts.front().schedule->loops) {
    if (l.type == sched::LoopType::S0x)
      blocks = l.size;
    if (l.type == sched::LoopType::S1x)
      threads = l.size;
  }
  b_.setInsertionPointToEnd(gpuModule_.getBody());
  auto func = mlir::gpu::GPUFuncOp::create(b_, loc(), op_.getSymName(),
                                           b_.getFunctionType(args, {}), workgroup);
  func->setAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName(), b_.getUnitAttr());
  // The launch contract (the manifest's ABI): buffers are 16-byte aligned and never
  // overlap, so NVPTX may merge a thread's consecutive accesses into 128-bit ones.
  for (unsigned i = sizes_.size(); i < args.size(); ++i) {
    func.setArgAttr(i, "llvm.noalias", b_.getUnitAttr());
    func.setArgAttr(i, "llvm.align", b_.getI64IntegerAttr(16));
  }
  func.setKnownBlockSize(llvm::ArrayRef<int32_t>{static_cast<int32_t>(threads), 1, 1});
  if (takesRows_) // the grid is the call's, in s0
    func->setAttr(sched::kGridAttrName, sizeAttr(blocks));
  else
    func.setKnownGridSize(llvm::ArrayRef<int32_t>{static_cast<int32_t>(blocks), 1, 1});
  mlir::Block &entry = func.getBody().front();
  b_.setInsertionPointToStart(&entry);
  size_t arg = 0;
  for (int symbol : sizes_)
    idx_.sizes[symbol] = entry.getArgument(arg++);
  markSizes(func);
  for (int t : kernel_.outputs)
    buffers_[t] = entry.getArgument(arg++);
  for (int t : kernel_.inputs)
    buffers_[t] = entry.getArgument(arg++);
  for (size_t i = 0; i < shared.size(); ++i)
    buffers_[shared[i]] = func.getWorkgroupAttributions()[i];
  if (!sharedOfS0.empty())
    placeInDynamicSharedMemory(func, sharedOfS0);
  mlir::Value block = mlir::gpu::BlockIdOp::create(b_, loc(), mlir::gpu::Dimension::x);
  mlir::Value thread = mlir::gpu::ThreadIdOp::create(b_, loc(), mlir::gpu::Dimension::x);
  if (testingBreak_ == "index")
    thread = mlir::arith::AddIOp::create(b_, loc(), thread, idx_.c(1));
  for (size_t s = 0; s < kernel_.stmts.size(); ++s) {
    if (s > 0 && testingBreak_ != "barrier")
      mlir::gpu::BarrierOp::create(b_, loc());
    emitStatement(s, block, thread);
  }
  mlir::gpu::ReturnOp::create(b_, loc());
}

void KernelLowering::placeInDynamicSharedMemory(mlir::gpu::GPUFuncOp func,
                                                std::vector<int> tensors) {
  std::stable_sort(tensors.begin(), tensors.end(),
                   [&](int x, int y) { return elementBytes(x) > elementBytes(y); });
  auto space =
      mlir::gpu::AddressSpaceAttr::get(b_.getContext(), mlir::gpu::AddressSpace::Workgroup);
  mlir::Value base = mlir::gpu::DynamicSharedMemoryOp::create(
      b_, loc(),
      mlir::MemRefType::get({mlir::ShapedType::kDynamic}, b_.getI8Type(),
                            mlir::MemRefLayoutAttrInterface(), space));
  mlir::Value offset = idx_.c(0);
  int64_t bytes = 0; // at the proxy: every buffer holds the same power of s0
  for (int t : tensors) {
    mlir::Value count = idx_.size(storage_[t].elementsPerBlock);
    buffers_[t] = mlir::memref::ViewOp::create(
        b_, loc(),
        mlir::MemRefType::get({mlir::ShapedType::kDynamic}, elementType(t),
                              mlir::MemRefLayoutAttrInterface(), space),
        base, offset, mlir::ValueRange{count});
    offset =
        idx_.add(offset, mlir::arith::MulIOp::create(b_, loc(), count, idx_.c(elementBytes(t))));
    bytes += storage_[t].elementsPerBlock * elementBytes(t);
  }
  func->setAttr(sched::kDynamicSharedAttrName, sizeAttr(bytes));
}

mlir::Value KernelLowering::sharedOffset(int t, const std::vector<mlir::Value> &index) {
  const std::vector<int64_t> &shape = kernel_.tensors[t].shape;
  const std::vector<bool> &rowDim = sharedRowDims_.at(t);
  llvm::SmallVector<mlir::Value> coords;
  llvm::SmallVector<int64_t> dims;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!rowDim[d]) {
      coords.push_back(index[d]);
      dims.push_back(shape[d]);
    }
  return idx_.flat(coords, dims);
}

bool KernelLowering::reducesAcrossThreads(const AnchoredMapStmt &a) {
  for (size_t i = 0; i < a.schedule->loops.size(); ++i)
    if (a.schedule->loops[i].type == sched::LoopType::S1x && a.schedule->mesh.outputReduced(i))
      return true;
  return false;
}

mlir::gpu::AllReduceOperation KernelLowering::allReduceKind(ops::Prim reduction, mlir::Type t) {
  using K = mlir::gpu::AllReduceOperation;
  bool f = mlir::isa<mlir::FloatType>(t), bit = t.isInteger(1);
  if (reduction == ops::Prim::ReduceMax)
    return f ? K::MAXIMUMF : bit ? K::OR : K::MAXSI;
  if (reduction == ops::Prim::ReduceMin)
    return f ? K::MINIMUMF : bit ? K::AND : K::MINSI;
  if (reduction == ops::Prim::ReduceProd)
    return K::MUL;
  return K::ADD; // reduce_sum, matmul
}

} // namespace sotc::mapexpr::loops
