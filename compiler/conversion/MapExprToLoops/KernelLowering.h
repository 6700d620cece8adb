//===- KernelLowering.h - One scheduled mapexpr.kernel as loops --------------------------===//
//
// One kernel's lowering, for both targets: KernelLowering.cpp opens the grid and emits
// each statement's loops and ops; GpuKernels.cpp places what a block keeps in shared memory
// and combines threads' partial results; CpuLanes.cpp emits the CPU's vector lanes.
//
//===-------------------------------------------------------------------------------------===//
#ifndef SOTC_CONVERSION_MAPEXPRTOLOOPS_KERNELLOWERING_H
#define SOTC_CONVERSION_MAPEXPRTOLOOPS_KERNELLOWERING_H

#include "compiler/conversion/MapExprToLoops/Indices.h"
#include "dialects/mapexpr/IR/MapExprDialect.h"
#include "dialects/sched/IR/SchedDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <functional>
#include <map>
#include <optional>

namespace sotc::mapexpr::loops {

/// One kernel's lowering.
class KernelLowering {
public:
  /// `kernels`: where GPU kernels go (null for the CPU); `testingBreak`: the pass option.
  KernelLowering(KernelOp op, mlir::gpu::GPUModuleOp kernels, llvm::StringRef testingBreak)
      : op_(op), gpuModule_(kernels), b_(op), idx_{b_, op.getLoc(), sched::standInsOf(op)},
        testingBreak_(testingBreak) {}

  mlir::LogicalResult run();

private:
  mlir::Location loc() { return op_.getLoc(); }

  /// A kernel over the dynamic size s0 takes the call's s0 (takesRows_): its statements share
  /// one grid (which the runtime scales). A CPU kernel allocates its scratch at the call's
  /// size and never pads a dim that holds s0 (a GPU kernel has no scratch of s0: spilled). A GPU
  /// block may loop over a row that holds s0 in its threads: the row padded to a multiple of them
  /// and split [trips, threads] (the call's trips are tripCount's), and what it keeps of such a row
  /// is in dynamic shared memory.
  mlir::LogicalResult checkBatch();

  /// The sequential loop's trip count: `inner` (the call's where it holds s0), or for a
  /// padded GPU row the call's ceil(row / threads) (the proxy's count means nothing then).
  mlir::Value tripCount(const AnchoredMapStmt &a, int64_t inner);

  mlir::Type elementType(int t);
  int64_t elementBytes(int t);
  /// A tensor whose batch is not its first dimension: its strides hold the batch, so the
  /// kernel addresses it by the flat index it computes from the call's rows.
  bool flatBuffer(int t);
  /// The buffer's type (bufferShape): a batch as its stand-in's rows.
  mlir::MemRefType memrefType(int t);
  /// The index of an element of tensor `t` in its buffer (Input, Output, Scratch).
  llvm::SmallVector<mlir::Value> bufferIndex(int t, llvm::ArrayRef<mlir::Value> index);

  /// A kernel that takes sizes other than s0 alone says which (sched.sizes).
  void markSizes(mlir::Operation *func);
  /// A count of the model (a grid, bytes) as the #sched.size it holds.
  mlir::Attribute sizeAttr(int64_t size);

  void emitFunction();

  /// A scratch tensor of the whole kernel (CPU): one heap buffer per call, of the call's size
  /// where a dim holds s0 (its buffer shape's, which the accesses address).
  mlir::Value allocateScratch(int t);

  /// GPU: what a block keeps between statements lives in its shared memory (48 KiB
  /// statically), counted in the tensors' own element sizes.
  mlir::LogicalResult placeInSharedMemory();

  /// The GPU kernel: a gpu.func of the kernel's name in the module's gpu.module, taking its
  /// outputs, then its inputs (over a dynamic batch, the call's rows of it first); one block per
  /// S0x index, one thread per S1x index (the block size is known to the function); shared tensors
  /// are workgroup buffers; statements are separated by barriers, since a later one reads what
  /// other threads wrote.
  void emitGpuFunction();

  /// What a block keeps of rows of dynamic sizes (checkBatch: all of one monomial) is in the
  /// launch's dynamic shared memory, one buffer after the other, wider elements first (each then
  /// starts aligned to its own). The launch's bytes, in the sizes, are the function's attribute.
  void placeInDynamicSharedMemory(mlir::gpu::GPUFuncOp func, std::vector<int> tensors);

  /// The position of element `index` of a shared tensor inside its block's buffer: the flat
  /// index over the tensor dims that do not carry a row coordinate.
  mlir::Value sharedOffset(int t, const std::vector<mlir::Value> &index);

  mlir::Value load(int t, const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters);

  void store(int t, const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters, mlir::Value v);

  /// Loop coordinates of statement `a` in mesh output order: the block for its S0x dim, the
  /// thread for S1x (GPU), the given inner value for the sequential one.
  std::vector<mlir::Value> loopCoords(const AnchoredMapStmt &a, mlir::Value block,
                                      mlir::Value thread, mlir::Value inner);

  /// Whether statement `a`'s threads split its reduced dims, so that a reduction combines
  /// the threads' partial results.
  bool reducesAcrossThreads(const AnchoredMapStmt &a);

  /// Statement `s` at `block` (and `thread` on the GPU): its sequential loop, then, for a
  /// reduction, the combination of the threads' partial results and the stores of the row's
  /// results.
  void emitStatement(size_t s, mlir::Value block, mlir::Value thread);

  /// The value of the point `iters` of `op` (not a reduction's), of its output's element
  /// type; `args`: what it reads, for the ops that do not read where and as they say. Null
  /// (and the kernel failed) for an op on a type the lowering does not take.
  mlir::Value compute(const OpStmt &op, const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters,
                      llvm::ArrayRef<mlir::Value> args);

  /// Whether statement `a` is a lane reduction (sched::cpuLaneReductionSchedule): a CPU row
  /// whose serial loop runs over the reduced dims (a static count) and whose vector loop
  /// inside it over the anchor's last dim, each lane a result of its own.
  bool laneReduction(const AnchoredMapStmt &a) const;

  /// Whether statement `a` is CPU elementwise work that reads windows with its vector loop
  /// over the anchor's last dim, unpadded: its lanes are peeled (lanesPeeled).
  bool injectiveLanes(const AnchoredMapStmt &a) const;

  /// Statement `a` at one point `iters`: its ops in order, each value stored where its tensor
  /// lives; an `_acc` op combines into `acc(tensor)`, the accumulator its caller keeps (`fuse`:
  /// sums of products as fused multiply-adds, Scalars::accumulate).
  void emitPoint(const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters,
                 const std::function<mlir::Value &(int)> &acc, bool fuse = false);

  /// A loop over lanes [begin, end), running `body` on each lane's index.
  void forLanes(mlir::Value begin, mlir::Value end, const std::function<void(mlir::Value)> &body);

  /// The `lanes` lanes of statement `a` (its anchor's last dim), peeled: the lanes whose
  /// windows stay inside their inputs at every point of `atZero` (lane-0 anchor coordinates)
  /// read them unchecked, contiguous vector loads; only those at the borders check, where a
  /// clamped index would make every load a gather.
  void lanesPeeled(const AnchoredMapStmt &a, llvm::ArrayRef<std::vector<mlir::Value>> atZero,
                   mlir::Value lanes, const std::function<void(mlir::Value)> &body);

  /// Elementwise statement `a` at `block` (injectiveLanes): its lanes, peeled.
  void emitInjectiveLanes(const AnchoredMapStmt &a, mlir::Value block);

  /// A lane reduction at `block`, each lane's results accumulated over the reduced points
  /// and stored once. A short reduction (a convolution's or a pooling's taps, up to
  /// kUnrolledReduction points) runs inside the lane loop, unrolled, its accumulators in
  /// registers: every tap's loads are contiguous in the lanes, which LLVM vectorizes. A long
  /// one runs around the lane loop, the results accumulated in the output buffers in place
  /// (scheduleKernel picks the schedule only where they are outputs).
  void emitLaneReduction(const AnchoredMapStmt &a, mlir::Value block);

  /// Whether dim `d` of a window's input may be read outside it (its index expression `e`
  /// ranges beyond the dim over statement `a`'s space): such a read checks, the padding value
  /// outside. The batch and channels never leave.
  bool windowMayLeave(const AnchoredMapStmt &a, int x, size_t d, const Expr &e);

  /// The lanes [begin, end) of statement `a` (its anchor iterator `lane`, `lanes` of them)
  /// where no window of it reads outside its input at any of the points whose lane-0 anchor
  /// coordinates are `atZero`; nullopt when its windows do not move with the lane, or not
  /// linearly.
  std::optional<std::pair<mlir::Value, mlir::Value>>
  interiorLanes(const AnchoredMapStmt &a, int lane, llvm::ArrayRef<std::vector<mlir::Value>> atZero,
                mlir::Value lanes);

  /// The reduction (or matmul) whose `_acc` statement of `a` accumulates into tensor `t`.
  ops::Prim reductionInto(const AnchoredMapStmt &a, int t);

  /// The block-wide combination of partial results of `reduction`.
  static mlir::gpu::AllReduceOperation allReduceKind(ops::Prim reduction, mlir::Type t);

  /// concat: input k holds the elements whose index along the axis falls in its range; its
  /// index expression is already shifted by the offset, so the axis is the dimension where
  /// an input's index differs from the output's.
  mlir::Value concat(const OpStmt &op, const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters);

  /// window: the input at the window's position plus its tap, or the pad value where that
  /// falls outside the input (the index expressions of the spatial dims leave it there).
  /// Branch-free, so that the loop vectorizes: the load reads at the index clamped into the
  /// input, and a select keeps it where the index was inside.
  mlir::Value window(const OpStmt &op, const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters);

  /// gather: the table's row that the index tensor names (clamped into the table), at the
  /// index expressions of the other dims.
  mlir::Value gather(const OpStmt &op, const AnchoredMapStmt &a, llvm::ArrayRef<mlir::Value> iters);

  KernelOp op_;
  mlir::gpu::GPUModuleOp gpuModule_;
  mlir::OpBuilder b_;
  Indices idx_;
  Kernel kernel_;
  std::vector<mlir::Value> values_;
  std::vector<Storage> storage_;
  std::optional<KernelRows> rows_;
  bool takesRows_ = false; // a kernel over dynamic sizes
  std::vector<int> sizes_; // the symbols of those sizes, which it takes in this order
  std::map<int, mlir::Value> buffers_;
  std::map<int, std::vector<bool>> sharedRowDims_; // shared tensors: which dims are the row
  llvm::StringRef testingBreak_;
  bool failed_ = false;
  /// The anchor iterator of the lanes being emitted whose windows stay inside their inputs
  /// (interiorLanes), -1 outside such a loop.
  int uncheckedLane_ = -1;
};

} // namespace sotc::mapexpr::loops

#endif // SOTC_CONVERSION_MAPEXPRTOLOOPS_KERNELLOWERING_H
