//===- KernelLowering.cpp - One scheduled mapexpr.kernel as loops ------------------------===//
//
// What a kernel's lowering does on both targets: its checks, the function and its grid,
// each statement's loops and ops, windows, concatenations and gathers.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/conversion/MapExprToLoops/KernelLowering.h"

#include "compiler/conversion/MapExprToLoops/Passes.h"
#include "compiler/conversion/MapExprToLoops/Scalars.h"
#include "compiler/support/MlirDiagnostics.h"

#include <set>

namespace sotc::mapexpr::loops {

mlir::LogicalResult KernelLowering::run() {
  kernel_ = kernelFromIR(op_, &values_);
  for (const AnchoredMapStmt &a : kernel_.stmts)
    if (!a.schedule)
      return op_.emitOpError("is not scheduled: run sotc-mapexpr-schedule first");
  for (const AnchoredMapStmt &a : kernel_.stmts) {
    int sequential = 0;
    for (const sched::LoopDescriptor &l : a.schedule->loops) {
      bool threads = l.type == sched::LoopType::S1x;
      sequential += l.type == sched::LoopType::Temporal || l.type == sched::LoopType::Vectorize;
      if (threads && !gpuModule_)
        return emitCodedError(op_.getLoc(), DiagCode::CliNotImplemented)
               << "kernel " << op_.getSymName() << " maps " << l.str()
               << ": thread-level loops lower to the GPU (target=cuda); schedule for the CPU "
                  "(target=cpu)";
      if (!threads && l.type != sched::LoopType::S0x && l.type != sched::LoopType::Temporal &&
          l.type != sched::LoopType::Vectorize)
        return emitCodedError(op_.getLoc(), DiagCode::CliNotImplemented)
               << "kernel " << op_.getSymName() << " maps " << l.str()
               << ": multi-dimensional grids and blocks are not lowered yet";
    }
    if (sequential > 1 && !laneReduction(a))
      return emitCodedError(op_.getLoc(), DiagCode::CliNotImplemented)
             << "kernel " << op_.getSymName() << ": more than one sequential loop per "
             << "statement is not lowered yet";
    // A reduction keeps one accumulator per row: every loop inside the block must run over
    // reduced elements only, or rows would mix.
    bool reduces =
        std::any_of(a.stmts.begin(), a.stmts.end(), [](const OpStmt &op) { return op.isAcc(); });
    for (size_t i = 0; reduces && !laneReduction(a) && i < a.schedule->loops.size(); ++i)
      if (a.schedule->loops[i].type != sched::LoopType::S0x && a.schedule->loops[i].size > 1 &&
          !a.schedule->mesh.outputReduced(i))
        return emitCodedError(op_.getLoc(), DiagCode::KernelUnsupported)
               << "kernel " << op_.getSymName() << ": a reduction whose block loops also "
               << "run over rows (" << a.schedule->loops[i].str() << ") is not lowered yet";
  }
  for (mlir::Value v : values_) {
    mlir::Type t = mlir::cast<mlir::RankedTensorType>(v.getType()).getElementType();
    if (!mlir::isa<mlir::FloatType>(t) && !(t.isSignlessInteger()))
      return emitCodedError(op_.getLoc(), DiagCode::KernelUnsupported)
             << "kernel " << op_.getSymName() << ": element type " << t
             << " is not lowered yet (floats, signless integers and bool are)";
  }
  storage_ = tensorStorage(kernel_);
  for (const AnchoredMapStmt &a : kernel_.stmts)
    for (const OpStmt &op : a.stmts)
      if (laneReduction(a) && op.isInit() && storage_[op.outs[0]].kind != StorageKind::Output)
        return emitCodedError(op_.getLoc(), DiagCode::KernelUnsupported)
               << "kernel " << op_.getSymName() << ": a lane reduction accumulates in its "
               << "outputs, and " << kernel_.tensors[op.outs[0]].name << " is "
               << storageKindName(storage_[op.outs[0]].kind);
  rows_ = kernelRows(kernel_);
  if (mlir::failed(checkBatch()))
    return mlir::failure();
  if (gpuModule_ && mlir::failed(placeInSharedMemory()))
    return mlir::failure();
  emitFunction();
  return failed_ ? mlir::failure() : mlir::success();
}

mlir::LogicalResult KernelLowering::checkBatch() {
  std::set<int> taken;
  for (mlir::Value v : values_)
    for (int symbol : sir::dynamicSymbols(mlir::cast<mlir::RankedTensorType>(v.getType())))
      taken.insert(symbol);
  sizes_.assign(taken.begin(), taken.end());
  takesRows_ = !sizes_.empty();
  if (!takesRows_)
    return mlir::success();
  auto refuse = [&](const std::string &why) {
    return emitCodedError(op_.getLoc(), DiagCode::KernelUnsupported)
           << "kernel " << op_.getSymName() << " over a dynamic size: " << why;
  };
  if (sizes_.size() > kMaxKernelSizes) {
    std::string names;
    for (int symbol : sizes_)
      names += (names.empty() ? "s" : ", s") + std::to_string(symbol);
    return refuse("it would take " + std::to_string(sizes_.size()) + " dynamic sizes (" + names +
                  "), more than the " + std::to_string(kMaxKernelSizes) + " a kernel takes");
  }
  std::vector<int> sharedPowers; // of the rows of dynamic sizes a block keeps
  for (size_t t = 0; t < values_.size(); ++t) {
    if (gpuModule_ && storage_[t].kind == StorageKind::Scratch &&
        !mlir::cast<mlir::RankedTensorType>(values_[t].getType()).hasStaticShape())
      return refuse("a scratch buffer of the whole batch is not supported yet");
    std::vector<int> powers = idx_.standIns.sizePowers(storage_[t].elementsPerBlock);
    if (gpuModule_ && storage_[t].kind == StorageKind::Shared && !powers.empty()) {
      if (!sharedPowers.empty() && powers != sharedPowers)
        return refuse("its blocks would keep rows of " +
                      idx_.standIns.sizeText(storage_[t].elementsPerBlock, true) +
                      " and of other sizes in shared memory, which CUDA kernels do not do yet");
      sharedPowers = powers;
    }
  }
  for (const AnchoredMapStmt &a : kernel_.stmts) {
    const sched::ScheduleMesh &mesh = a.schedule->mesh;
    if (sched::padsBatch(mesh, idx_.standIns) &&
        !(gpuModule_ && sched::paddedBatchRow(*a.schedule, idx_.standIns)))
      return refuse("its schedule (" + mesh.str() + ") pads the dynamic size");
    const std::vector<int64_t> &shape = mesh.outputShape();
    if (gpuModule_ && (shape.empty() || std::any_of(shape.begin() + 1, shape.end(), [&](int64_t d) {
                         return idx_.standIns.holdsBatch(d);
                       })))
      return refuse("its schedule (" + mesh.str() +
                    ") loops over the dynamic size outside its grid and a padded row of its "
                    "threads, which CUDA kernels do not do yet (the CPU's do)");
  }
  return mlir::success();
}

mlir::Value KernelLowering::tripCount(const AnchoredMapStmt &a, int64_t inner) {
  std::optional<sched::PaddedRow> row =
      gpuModule_ && takesRows_ ? sched::paddedBatchRow(*a.schedule, idx_.standIns) : std::nullopt;
  if (!row)
    return idx_.size(inner);
  mlir::Value padded = idx_.add(idx_.size(row->size), idx_.c(row->threads - 1));
  return mlir::arith::DivUIOp::create(b_, loc(), padded, idx_.c(row->threads));
}

mlir::Type KernelLowering::elementType(int t) {
  return mlir::cast<mlir::RankedTensorType>(values_[t].getType()).getElementType();
}

int64_t KernelLowering::elementBytes(int t) {
  return std::max<int64_t>(elementType(t).getIntOrFloatBitWidth() / 8, 1);
}

bool KernelLowering::flatBuffer(int t) {
  return memrefType(t).getRank() != static_cast<int64_t>(kernel_.tensors[t].shape.size());
}

mlir::MemRefType KernelLowering::memrefType(int t) {
  auto type = mlir::cast<mlir::RankedTensorType>(values_[t].getType());
  return mlir::MemRefType::get(bufferShapeOf(type, idx_.standIns), type.getElementType());
}

llvm::SmallVector<mlir::Value> KernelLowering::bufferIndex(int t,
                                                           llvm::ArrayRef<mlir::Value> index) {
  if (flatBuffer(t))
    return {idx_.flat(index, kernel_.tensors[t].shape)};
  return llvm::SmallVector<mlir::Value>(index.begin(), index.end());
}

void KernelLowering::markSizes(mlir::Operation *func) {
  if (sizes_.empty() || sizes_ == std::vector<int>{0})
    return;
  func->setAttr(sched::kSizesAttrName,
                b_.getDenseI64ArrayAttr(std::vector<int64_t>(sizes_.begin(), sizes_.end())));
}

mlir::Attribute KernelLowering::sizeAttr(int64_t size) {
  return sched::SizeAttr::get(b_.getContext(), idx_.standIns.sizeProduct(size));
}

void KernelLowering::emitFunction() {
  if (gpuModule_)
    return emitGpuFunction();
  llvm::SmallVector<mlir::Type> args(sizes_.size(), b_.getIndexType()); // the call's sizes first
  for (int t : kernel_.outputs)
    args.push_back(memrefType(t));
  for (int t : kernel_.inputs)
    args.push_back(memrefType(t));
  b_.setInsertionPoint(op_);
  auto func = mlir::func::FuncOp::create(b_, loc(), op_.getSymName(), b_.getFunctionType(args, {}));
  mlir::Block *entry = func.addEntryBlock();
  b_.setInsertionPointToStart(entry);
  size_t arg = 0;
  for (int symbol : sizes_)
    idx_.sizes[symbol] = entry->getArgument(arg++);
  markSizes(func);
  for (int t : kernel_.outputs)
    buffers_[t] = entry->getArgument(arg++);
  for (int t : kernel_.inputs)
    buffers_[t] = entry->getArgument(arg++);
  // Arguments are named by the tensors they hold, for the reader of the IR.
  for (size_t t = 0; t < kernel_.tensors.size(); ++t)
    if (storage_[t].kind == StorageKind::Scratch)
      buffers_[t] = allocateScratch(static_cast<int>(t));
  // The grid: the blocks every statement shares (its S0x loop).
  const sched::Schedule &first = *kernel_.stmts.front().schedule;
  int64_t blocks = 1;
  for (const sched::LoopDescriptor &l : first.loops)
    if (l.type == sched::LoopType::S0x)
      blocks = l.size;
  if (takesRows_) // the launch's grid, in s0
    func->setAttr(sched::kGridAttrName, sizeAttr(blocks));
  // What a block keeps of a row of s0 (a softmax over a sequence): one heap buffer of the
  // call's row, reused by the blocks of this call (the stack may not hold a long row).
  auto rowOfS0 = [&](size_t t) {
    return storage_[t].kind == StorageKind::Shared &&
           idx_.standIns.holdsBatch(storage_[t].elementsPerBlock);
  };
  for (size_t t = 0; t < kernel_.tensors.size(); ++t)
    if (rowOfS0(t))
      buffers_[t] = mlir::memref::AllocOp::create(
          b_, loc(), mlir::MemRefType::get({mlir::ShapedType::kDynamic}, elementType(t)),
          mlir::ValueRange{idx_.size(storage_[t].elementsPerBlock)});
  auto grid = mlir::scf::ForallOp::create(
      b_, loc(), llvm::ArrayRef<mlir::OpFoldResult>{b_.getIndexAttr(blocks)}, mlir::ValueRange{},
      b_.getArrayAttr(
          {mlir::gpu::GPUBlockMappingAttr::get(b_.getContext(), mlir::gpu::MappingId::DimX)}));
  b_.setInsertionPointToStart(grid.getBody());
  mlir::Value block = grid.getInductionVar(0);
  for (size_t t = 0; t < kernel_.tensors.size(); ++t)
    if (storage_[t].kind == StorageKind::Shared)
      sharedRowDims_[t] = rows_ ? rowDims(kernel_, *rows_, static_cast<int>(t))
                                : std::vector<bool>(kernel_.tensors[t].shape.size(), false);
  for (size_t t = 0; t < kernel_.tensors.size(); ++t)
    if (storage_[t].kind == StorageKind::Shared && !rowOfS0(t))
      buffers_[t] = mlir::memref::AllocaOp::create(
          b_, loc(), mlir::MemRefType::get({storage_[t].elementsPerBlock}, elementType(t)));
  for (size_t s = 0; s < kernel_.stmts.size(); ++s)
    emitStatement(s, block, nullptr);
  b_.setInsertionPointAfter(grid);
  for (size_t t = 0; t < kernel_.tensors.size(); ++t)
    if (storage_[t].kind == StorageKind::Scratch || rowOfS0(t))
      mlir::memref::DeallocOp::create(b_, loc(), buffers_[t]);
  mlir::func::ReturnOp::create(b_, loc());
}

mlir::Value KernelLowering::allocateScratch(int t) {
  mlir::MemRefType type = memrefType(t);
  llvm::SmallVector<int64_t> shape(type.getShape());
  llvm::SmallVector<mlir::Value> sizes;
  for (int64_t &d : shape)
    if (idx_.standIns.holdsBatch(d)) {
      sizes.push_back(idx_.size(d));
      d = mlir::ShapedType::kDynamic;
    }
  return mlir::memref::AllocOp::create(b_, loc(),
                                       mlir::MemRefType::get(shape, type.getElementType()), sizes);
}

mlir::Value KernelLowering::load(int t, const AnchoredMapStmt &a,
                                 llvm::ArrayRef<mlir::Value> iters) {
  std::vector<mlir::Value> index;
  for (const Expr &e : a.index.at(t))
    index.push_back(idx_.expr(e, iters));
  if (storage_[t].kind == StorageKind::Shared)
    return mlir::memref::LoadOp::create(b_, loc(), buffers_[t],
                                        mlir::ValueRange{sharedOffset(t, index)});
  return mlir::memref::LoadOp::create(b_, loc(), buffers_[t], bufferIndex(t, index));
}

void KernelLowering::store(int t, const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters,
                           mlir::Value v) {
  if (storage_[t].kind == StorageKind::Register)
    return;
  std::vector<mlir::Value> index;
  for (const Expr &e : a.index.at(t))
    index.push_back(idx_.expr(e, iters));
  if (storage_[t].kind == StorageKind::Shared)
    mlir::memref::StoreOp::create(b_, loc(), v, buffers_[t],
                                  mlir::ValueRange{sharedOffset(t, index)});
  else
    mlir::memref::StoreOp::create(b_, loc(), v, buffers_[t], bufferIndex(t, index));
}

std::vector<mlir::Value> KernelLowering::loopCoords(const AnchoredMapStmt &a, mlir::Value block,
                                                    mlir::Value thread, mlir::Value inner) {
  std::vector<mlir::Value> coords;
  for (const sched::LoopDescriptor &l : a.schedule->loops)
    coords.push_back(l.type == sched::LoopType::S0x   ? block
                     : l.type == sched::LoopType::S1x ? thread
                                                      : inner);
  return coords;
}

void KernelLowering::emitStatement(size_t s, mlir::Value block, mlir::Value thread) {
  const AnchoredMapStmt &a = kernel_.stmts[s];
  if (laneReduction(a))
    return emitLaneReduction(a, block);
  if (injectiveLanes(a))
    return emitInjectiveLanes(a, block);
  int64_t inner = 1;
  for (const sched::LoopDescriptor &l : a.schedule->loops)
    if (l.type == sched::LoopType::Temporal || l.type == sched::LoopType::Vectorize)
      inner = l.size;
  // Reductions: one loop-carried accumulator per reduced tensor.
  std::vector<int> reduced;
  llvm::SmallVector<mlir::Value> inits;
  Scalars scalars(b_, loc());
  for (const OpStmt &op : a.stmts)
    if (op.isInit()) {
      reduced.push_back(op.outs[0]);
      inits.push_back(scalars.identity(op.prim, elementType(op.outs[0])));
    }
  auto loop = mlir::scf::ForOp::create(b_, loc(), idx_.c(0), tripCount(a, inner), idx_.c(1), inits);
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToStart(loop.getBody());
  llvm::SmallVector<mlir::Value> accs(loop.getRegionIterArgs().begin(),
                                      loop.getRegionIterArgs().end());
  mlir::Value inBounds;
  std::vector<mlir::Value> iters =
      idx_.anchor(a.schedule->mesh, loopCoords(a, block, thread, loop.getInductionVar()), inBounds);
  // Padding points do nothing: they read nothing and leave the accumulators as they are.
  mlir::scf::IfOp padding;
  if (inBounds) {
    padding = mlir::scf::IfOp::create(b_, loc(), mlir::ValueRange(accs).getTypes(), inBounds,
                                      /*withElseRegion=*/!accs.empty());
    if (!accs.empty()) {
      b_.setInsertionPointToStart(padding.elseBlock());
      mlir::scf::YieldOp::create(b_, loc(), accs);
    }
    b_.setInsertionPointToStart(padding.thenBlock());
  }
  emitPoint(a, iters, [&](int t) -> mlir::Value & {
    return accs[std::find(reduced.begin(), reduced.end(), t) - reduced.begin()];
  });
  if (failed_ || reduced.empty())
    return;
  if (padding) {
    mlir::scf::YieldOp::create(b_, loc(), accs);
    b_.setInsertionPointAfter(padding);
    accs.assign(padding.getResults().begin(), padding.getResults().end());
  }
  mlir::scf::YieldOp::create(b_, loc(), accs);
  // After the reduced loop: each row's results, stored where their readers find them.
  b_.setInsertionPointAfter(loop);
  llvm::SmallVector<mlir::Value> results(loop.getResults().begin(), loop.getResults().end());
  if (thread && reducesAcrossThreads(a)) {
    // Every thread of the block takes part (uniform), and every one gets the row's result.
    for (size_t r = 0; r < reduced.size() && testingBreak_ != "reduction"; ++r) {
      // Warp shuffles move 32-bit words: narrower values (any()'s bools) widen for it.
      mlir::Type t = results[r].getType();
      mlir::Value v = results[r];
      bool narrowInt = t.isInteger() && t.getIntOrFloatBitWidth() < 32;
      bool narrowFloat = mlir::isa<mlir::FloatType>(t) && t.getIntOrFloatBitWidth() < 32;
      if (narrowInt)
        v = t.isInteger(1)
                ? mlir::arith::ExtUIOp::create(b_, loc(), b_.getI32Type(), v).getResult()
                : mlir::arith::ExtSIOp::create(b_, loc(), b_.getI32Type(), v).getResult();
      else if (narrowFloat)
        v = mlir::arith::ExtFOp::create(b_, loc(), b_.getF32Type(), v);
      v = mlir::gpu::AllReduceOp::create(
          b_, loc(), v,
          mlir::gpu::AllReduceOperationAttr::get(b_.getContext(),
                                                 allReduceKind(reductionInto(a, reduced[r]), t)),
          /*uniform=*/true);
      if (narrowInt)
        v = mlir::arith::TruncIOp::create(b_, loc(), t, v);
      else if (narrowFloat)
        v = mlir::arith::TruncFOp::create(b_, loc(), t, v);
      results[r] = v;
    }
    // One thread stores what all of them hold.
    mlir::Value first =
        mlir::arith::CmpIOp::create(b_, loc(), mlir::arith::CmpIPredicate::eq, thread, idx_.c(0));
    auto only = mlir::scf::IfOp::create(b_, loc(), first, /*withElseRegion=*/false);
    b_.setInsertionPointToStart(only.thenBlock());
  }
  mlir::Value unused;
  std::vector<mlir::Value> rowIters = idx_.anchor(
      a.schedule->mesh, loopCoords(a, block, thread ? idx_.c(0) : nullptr, idx_.c(0)), unused);
  for (size_t r = 0; r < reduced.size(); ++r)
    store(reduced[r], a, rowIters, results[r]);
}

mlir::Value KernelLowering::compute(const OpStmt &op, const AnchoredMapStmt &a,
                                    llvm::ArrayRef<mlir::Value> iters,
                                    llvm::ArrayRef<mlir::Value> args) {
  Scalars scalars(b_, loc());
  int out = op.outs[0];
  mlir::Value v;
  switch (op.prim) {
  case ops::Prim::FillConstant:
    v = scalars.constant(elementType(out), *op.value);
    break;
  case ops::Prim::Iota: // its value is its position
    v = mlir::arith::IndexCastOp::create(b_, loc(), b_.getI64Type(),
                                         idx_.expr(a.index.at(out)[0], iters));
    break;
  case ops::Prim::Concat:
    v = concat(op, a, iters);
    break;
  case ops::Prim::Window:
    v = window(op, a, iters);
    break;
  case ops::Prim::Gather:
    v = gather(op, a, iters);
    break;
  case ops::Prim::Conv2d:    // a step of its own (mapexpr.conv), or expanded before
  case ops::Prim::IndexCopy: // a step of its own (mapexpr.index_copy)
  case ops::Prim::Nonzero:   // steps of their own (mapexpr.nonzero, mapexpr.nms,
  case ops::Prim::Nms:       // mapexpr.argsort)
  case ops::Prim::Argsort:
    break;
  default:
    v = scalars.apply(op.prim, args, elementType(out));
  }
  if (!v) {
    failed_ = true;
    emitCodedError(op_.getLoc(), DiagCode::KernelUnsupported)
        << "kernel " << op_.getSymName() << ": " << op.name() << " on "
        << (args.empty() ? elementType(out) : args[0].getType()) << " is not lowered yet";
    return nullptr;
  }
  return scalars.cast(v, elementType(out));
}

void KernelLowering::emitPoint(const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters,
                               const std::function<mlir::Value &(int)> &acc, bool fuse) {
  Scalars scalars(b_, loc());
  std::map<int, mlir::Value> values;
  auto read = [&](int t) {
    auto it = values.find(t);
    return it != values.end() ? it->second : load(t, a, iters);
  };
  for (const OpStmt &op : a.stmts) {
    if (op.isInit())
      continue;
    llvm::SmallVector<mlir::Value> args;
    if (op.prim != ops::Prim::Window && op.prim != ops::Prim::Gather) // read as they say
      for (int t : op.ins)
        args.push_back(read(t));
    int out = op.outs[0];
    if (op.isAcc()) {
      acc(out) = scalars.accumulate(op.prim, acc(out), args, fuse);
      continue;
    }
    mlir::Value v = compute(op, a, iters, args);
    if (!v)
      return;
    values[out] = v;
    store(out, a, iters, v);
  }
}

ops::Prim KernelLowering::reductionInto(const AnchoredMapStmt &a, int t) {
  for (const OpStmt &op : a.stmts)
    if (op.isAcc() && op.outs[0] == t)
      return op.prim;
  return ops::Prim::ReduceSum;
}

mlir::Value KernelLowering::concat(const OpStmt &op, const AnchoredMapStmt &a,
                                   llvm::ArrayRef<mlir::Value> iters) {
  const std::vector<Expr> &out = a.index.at(op.outs[0]);
  size_t axis = 0;
  for (int in : op.ins)
    for (size_t d = 0; d < out.size(); ++d)
      if (a.index.at(in)[d]->str() != out[d]->str())
        axis = d;
  mlir::Value along = idx_.expr(a.index.at(op.outs[0])[axis], iters);
  mlir::Type t = elementType(op.outs[0]);
  // Nested ifs from the last input back: if along < end_k then input k else the rest.
  std::function<mlir::Value(size_t, int64_t)> pick = [&](size_t k, int64_t offset) {
    int t_in = op.ins[k];
    if (k + 1 == op.ins.size())
      return load(t_in, a, iters);
    int64_t end = offset + kernel_.tensors[t_in].shape[axis]; // static, or a product of sizes
    mlir::Value inside = mlir::arith::CmpIOp::create(b_, loc(), mlir::arith::CmpIPredicate::ult,
                                                     along, idx_.size(end));
    auto ifOp = mlir::scf::IfOp::create(b_, loc(), mlir::TypeRange{t}, inside,
                                        /*withElseRegion=*/true);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(ifOp.thenBlock());
    mlir::scf::YieldOp::create(b_, loc(), load(t_in, a, iters));
    b_.setInsertionPointToStart(ifOp.elseBlock());
    mlir::scf::YieldOp::create(b_, loc(), pick(k + 1, end));
    return ifOp.getResult(0);
  };
  return pick(0, 0);
}

mlir::Value KernelLowering::window(const OpStmt &op, const AnchoredMapStmt &a,
                                   llvm::ArrayRef<mlir::Value> iters) {
  int x = op.ins[0];
  const std::vector<Expr> &exprs = a.index.at(x);
  std::vector<mlir::Value> index;
  mlir::Value inside;
  for (size_t d = 0; d < exprs.size(); ++d) {
    mlir::Value i = idx_.expr(exprs[d], iters);
    // A spatial index that cannot leave the input (no padding on that side, or a lane of
    // the interior: interiorLanes) is read directly: contiguous taps stay vector loads.
    if (windowMayLeave(a, x, d, exprs[d]) &&
        !(uncheckedLane_ >= 0 && linearCoefficient(exprs[d], uncheckedLane_).value_or(0) > 0)) {
      mlir::Value size = idx_.c(kernel_.tensors[x].shape[d]);
      // A negative index is a huge unsigned one: one unsigned compare checks both ends.
      mlir::Value ok =
          mlir::arith::CmpIOp::create(b_, loc(), mlir::arith::CmpIPredicate::ult, i, size);
      inside = inside ? mlir::arith::AndIOp::create(b_, loc(), inside, ok).getResult() : ok;
      i = mlir::arith::MinSIOp::create(b_, loc(),
                                       mlir::arith::MaxSIOp::create(b_, loc(), i, idx_.c(0)),
                                       idx_.c(kernel_.tensors[x].shape[d] - 1));
    }
    index.push_back(i);
  }
  mlir::Value loaded = mlir::memref::LoadOp::create(b_, loc(), buffers_[x], index);
  if (!inside)
    return loaded;
  return mlir::arith::SelectOp::create(
      b_, loc(), inside, loaded, Scalars(b_, loc()).constant(elementType(op.outs[0]), *op.value));
}

mlir::Value KernelLowering::gather(const OpStmt &op, const AnchoredMapStmt &a,
                                   llvm::ArrayRef<mlir::Value> iters) {
  int table = op.ins[0];
  mlir::Value row =
      mlir::arith::IndexCastOp::create(b_, loc(), b_.getIndexType(), load(op.ins[1], a, iters));
  // Clamped to the table's rows (a product of sizes where the table has a dynamic size).
  mlir::Value last =
      mlir::arith::SubIOp::create(b_, loc(), idx_.size(kernel_.tensors[table].shape[0]), idx_.c(1));
  row = mlir::arith::MinSIOp::create(b_, loc(),
                                     mlir::arith::MaxSIOp::create(b_, loc(), row, idx_.c(0)), last);
  std::vector<mlir::Value> index = {row};
  const std::vector<Expr> &exprs = a.index.at(table);
  for (size_t d = 1; d < exprs.size(); ++d)
    index.push_back(idx_.expr(exprs[d], iters));
  return mlir::memref::LoadOp::create(b_, loc(), buffers_[table], bufferIndex(table, index));
}

} // namespace sotc::mapexpr::loops
