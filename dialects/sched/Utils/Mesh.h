//===- Mesh.h - Schedule meshes and loop descriptors (CINN's schedule algebra) -----------===//
//
// A schedule mesh starts from one ScheduleDim per anchor dimension (injective or reduced,
// with its size) and is transformed by reshapes, transposes and paddings; its output
// dimensions become loops, each with a LoopDescriptor (S0x..S1z = blockIdx/threadIdx,
// Temporal, Vectorize, Unroll). Policies pick a mesh per target. No MLIR here: the sched
// dialect's attributes and the MapExpr builder use this algebra.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_DIALECT_SCHED_MESH_H
#define SOTC_DIALECT_SCHED_MESH_H

#include "compiler/support/Diagnostics.h"
#include "contract/SizeProduct.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sotc::sched {

/// The dynamic sizes s0, s1, ... (the inputs' `?` and the sizes they name,
/// sotc-sir-check-batch-dims: a batch, a sequence length) in a kernel's model, mesh and loops:
/// they are built for each size at its stand-in here, primes that divide no static dimension
/// of the module, so a size holds s_k exactly where it is a multiple of s_k's stand-in, and
/// holds s_k^d where it is a multiple of its d-th power (the T x T scores of an attention):
/// with the first stand-ins, 64*s0*s1^2 is 64 * 4099 * 4111^2. The code never uses them:
/// where a size holding one is needed (a stride, a division, a loop's bound), the kernel
/// computes it from the call's sizes, which it takes as arguments; the grid is the runtime's
/// to scale.
constexpr int kSizeSymbols = contract::kMaxSizeSymbols;

/// The stand-ins of one module's sizes: the first kSizeSymbols primes from 4099 that divide
/// none of its static dimensions (sotc-choose-stand-ins chooses them and writes them on
/// the module, as its sched.stand_ins, where they are not the first eight).
class SizeStandIns {
public:
  /// The first kSizeSymbols primes from 4099: 4099, 4111, 4127, ...
  SizeStandIns();
  /// The first primes from 4099 none of which divides a size of `staticSizes` (0 divides none).
  static SizeStandIns avoiding(const std::vector<int64_t> &staticSizes);
  /// `values` as stand-ins, if they are kSizeSymbols increasing primes from 4099.
  static std::optional<SizeStandIns> of(const std::vector<int64_t> &values);

  const contract::SizeValues &values() const { return values_; }
  int64_t rows() const { return values_[0]; } // s0's
  bool isFirst() const { return *this == SizeStandIns(); }
  bool operator==(const SizeStandIns &o) const { return values_ == o.values_; }

  /// A size of a model or mesh as the product it stands for (64 * 4099 * 4111^2: 64*s0*s1^2),
  /// and back (wrapping, as the model's arithmetic on sizes does).
  contract::SizeProduct sizeProduct(int64_t size) const;
  int64_t standInSize(const contract::SizeProduct &p) const;
  /// Whether a size of a model or mesh holds a dynamic size.
  bool holdsBatch(int64_t size) const { return sizeProduct(size).dynamic(); }
  /// The power of each dynamic size a size holds, s0 first (64*s0*s1^2: {1, 2}; trailing
  /// zeros dropped, {} for a static size).
  std::vector<int> sizePowers(int64_t size) const;
  /// The total power of the dynamic sizes a size holds (64*s0^2: 2), and its static factor (64).
  int batchDegree(int64_t size) const { return sizeProduct(size).degree(); }
  int64_t staticFactor(int64_t size) const { return sizeProduct(size).factor; }
  /// A size as the dumps print it: in a kernel over a dynamic size (`batch`), one that holds
  /// them as their powers times the rest ("s0", "64*s0", "4*s0^2", "8*s0*s1^2").
  std::string sizeText(int64_t size, bool batch) const;
  /// The size sizeText wrote, at the stand-ins ("4*s0^2" is 4 * rows()^2), or nullopt for
  /// text that is no contract::SizeProduct.
  std::optional<int64_t> sizeOfText(const std::string &text) const;

private:
  explicit SizeStandIns(const contract::SizeValues &values) : values_(values) {}
  contract::SizeValues values_;
};

/// `count` per row of the batch, as `symbol` times it: "s0", "64*s0" (the dumps), "64*?"
/// (sotc inspect), and per power `degree` of it: "64*s0^2".
std::string perRowText(int64_t count, const std::string &symbol = "s0", int degree = 1);

/// A misuse of the mesh algebra (a shrinking padding, a reshape that changes the element
/// count, ...). The message says which rule was broken.
class MeshError : public CodedError {
public:
  explicit MeshError(const std::string &message) : CodedError(DiagCode::ScheduleInvalid, message) {}
};

struct ScheduleDim {
  bool reduced = false;
  int64_t size = 1;

  static ScheduleDim injective(int64_t size) { return {false, size}; }
  static ScheduleDim reducedDim(int64_t size) { return {true, size}; }
  bool operator==(const ScheduleDim &o) const { return reduced == o.reduced && size == o.size; }
  std::string str() const; // I(64), R(128)
};

/// Whether any of `dims` holds a dynamic size.
bool anyHoldsBatch(const std::vector<ScheduleDim> &dims, const SizeStandIns &sizes);

class ScheduleMesh {
public:
  /// The base mesh: one dim per anchor dimension. Sizes must be positive.
  explicit ScheduleMesh(std::vector<ScheduleDim> dims);

  /// Static shape, one -1 allowed; the element count must not change.
  ScheduleMesh reshape(const std::vector<int64_t> &shape) const;
  /// `perm` must be a permutation of the output dimensions.
  ScheduleMesh transpose(const std::vector<int64_t> &perm) const;
  /// Pads each dimension to the given size; no dimension may shrink.
  ScheduleMesh padding(const std::vector<int64_t> &paddingTo) const;
  /// Rounds each dimension up to a multiple of its alignment (nullopt: leave it).
  ScheduleMesh roundUpPadding(const std::vector<std::optional<int64_t>> &align) const;

  const std::vector<ScheduleDim> &inputDims() const { return input_; }
  const std::vector<int64_t> &outputShape() const { return shape_; }
  size_t inputRank() const { return input_.size(); }
  size_t outputRank() const { return shape_.size(); }
  /// Whether output dim `i` holds only reduced input dims (a reduction loop).
  bool outputReduced(size_t i) const { return reduced_[i]; }
  /// Whether the last output dim is the last input dim, untouched: every step keeps it last
  /// and whole (a row-major reshape that keeps the last extent keeps its coordinate).
  bool keepsLastDim() const;
  int64_t inputNumElements() const;
  int64_t outputNumElements() const;
  /// "[I(64), R(128)].transpose([1, 0]).reshape([-1, 128])"
  std::string str() const;
  /// The input (anchor) coordinates of a point of the output (loop) space, or nullopt when
  /// the point lies in the padding.
  std::optional<std::vector<int64_t>> inputIndex(std::vector<int64_t> outputIndex) const;

  struct Step {
    enum class Kind { Reshape, Transpose, Padding } kind;
    std::vector<int64_t> before; // the shape the step starts from
    std::vector<int64_t> perm;   // Transpose
    std::vector<int64_t> after;  // the shape it produces
  };
  const std::vector<Step> &steps() const { return steps_; }

private:
  std::vector<Step> steps_;
  std::vector<ScheduleDim> input_;
  std::vector<int64_t> shape_;
  std::vector<bool> reduced_;
  std::string text_;
};

enum class LoopType { S0x, S0y, S0z, S1x, S1y, S1z, Temporal, Vectorize, Unroll };

/// "S0x", ..., "Temporal", "Vectorize", "Unroll"
const char *loopTypeName(LoopType type);
std::optional<LoopType> loopTypeByName(const std::string &name);

struct LoopDescriptor {
  LoopType type;
  int64_t size;
  std::string iterator; // Temporal/Vectorize/Unroll: the loop variable's name

  bool spatial() const { return type <= LoopType::S1z; }
  /// "blockIdx.x=0..4", "threadIdx.x=0..256", "t0=0..2"; "blockIdx.x=0..64*s0" in a kernel
  /// over dynamic sizes, given their stand-ins.
  std::string str(const SizeStandIns *sizes = nullptr) const;
};

/// Pairs each output dimension with a loop type; the counts must match, a spatial type may
/// appear once, and a reduced dimension may not be bound to blocks.
std::vector<LoopDescriptor> loopDescriptors(const ScheduleMesh &mesh,
                                            const std::vector<LoopType> &types);

/// A mesh and its loops, as a policy chose them.
struct Schedule {
  ScheduleMesh mesh;
  std::vector<LoopDescriptor> loops;
};

/// GPU policy for an all-injective space: flatten, pad to a multiple of the block size,
/// reshape to [-1, T] -> blockIdx.x x threadIdx.x (+ Vectorize `vector` when every thread's
/// share divides evenly). T follows the problem: up to 1024 elements take one block of the
/// element count rounded up to a warp; larger problems use 256 threads per block.
Schedule gpuInjectiveSchedule(const std::vector<ScheduleDim> &dims, int64_t vector = 4);
/// The elements one GPU thread moves at once when the widest element a kernel loads or stores
/// is `widestBytes`: 128 bits of it (8 halves), at least 4 (two 128-bit accesses of float64).
int64_t gpuVectorElements(int64_t widestBytes);
/// The dims in order, one that holds a dynamic batch first: a grid over it then finds a block's
/// batch coordinate as a quotient by static sizes.
std::vector<int64_t> batchFirst(const std::vector<ScheduleDim> &dims, const SizeStandIns &sizes);
/// A space split into rows: `perm` lists the injective dims (in order, a batch first), then
/// the reduced ones; `rows` and `reduce` are their element counts.
struct RowSplit {
  std::vector<int64_t> perm;
  int64_t rows = 1, reduce = 1;
};
RowSplit rowSplit(const std::vector<ScheduleDim> &dims, const SizeStandIns &sizes);

/// GPU block size for rows of `reduce` elements: a power of two, 32 to 256.
int64_t gpuRowThreads(int64_t reduce);
/// The space, permuted by `perm`, as `rows` rows: each row on one block (blockIdx.x), its
/// elements across `threads` threads with a per-thread Temporal loop. Every AnchoredMapStmt of
/// a kernel with a reduction runs on this grid, so a block never needs another block's row.
Schedule gpuRowSchedule(const std::vector<ScheduleDim> &dims, const std::vector<int64_t> &perm,
                        int64_t rows, int64_t threads);
/// GPU policy with reduced dims: gpuRowSchedule with the reduced axes innermost.
Schedule gpuReductionSchedule(const std::vector<ScheduleDim> &dims, const SizeStandIns &sizes);
/// CPU: rows on the outer parallel loop; within a row a serial (reduction) or vector loop.
Schedule cpuRowSchedule(const std::vector<ScheduleDim> &dims, const std::vector<int64_t> &perm,
                        int64_t rows);
/// CPU policy for a reduction whose innermost dimension is injective (a depthwise
/// convolution's or a pooling's taps [N, C, KH, KW, OH, OW], `x.sum(1)` of [B, T, C]): rows of
/// the other injective dims on the parallel loop, the reduced dims a serial loop, and inside
/// it a vector loop over the innermost dim, [rows, reduce, inner] -> S0x, Temporal, Vectorize.
/// Each row's results are a vector accumulated in place, read and written contiguously, where
/// cpuSchedule's rows would walk the reduced dims with a stride. Nullopt where it does not
/// apply: the innermost dim reduced, shorter than 4 or holding s0, or s0 reduced.
std::optional<Schedule> cpuLaneReductionSchedule(const std::vector<ScheduleDim> &dims,
                                                 const SizeStandIns &sizes);
/// CPU policy: an injective space runs its innermost dimension as the inner vector loop
/// (contiguous elements) and the rest on the outer parallel loop (S0x), or, when the innermost
/// dimension is shorter than a vector and the space holds no batch, flat chunks of 8; with
/// reduced dims, rows run in parallel and each row's reduction is a serial Temporal loop.
/// What a statement asks of cpuSchedule: `minRow`, the shortest innermost dimension that runs
/// as rows (a statement that reads windows gives 4, since flat chunks would compute every
/// element's window coordinates); `order`, the dims outermost first (the order the statement
/// writes its output in, so that its stores are contiguous), empty for the anchor's. A space
/// that holds a batch keeps its own order.
struct CpuHints {
  int64_t minRow = 8;
  std::vector<int64_t> order;
};
Schedule cpuSchedule(const std::vector<ScheduleDim> &dims, const SizeStandIns &sizes,
                     const CpuHints &hints = {});

/// Whether a step of `mesh` pads a dim that holds s0 (its mask would compare with the
/// stand-in, not the call's s0).
bool padsBatch(const ScheduleMesh &mesh, const SizeStandIns &sizes);

/// A GPU row that holds s0 (gpuRowSchedule's), padded to a multiple of the block's threads and
/// split [trips, threads]: the row's size and the threads. Its trips at a call are
/// ceil(row / threads) of the call's s0, not the stand-in's. Nullopt for any other schedule.
struct PaddedRow {
  int64_t size, threads;
};
std::optional<PaddedRow> paddedBatchRow(const Schedule &schedule, const SizeStandIns &sizes);

/// The loop's text (LoopDescriptor::str), a padded row's trips as `ceil(s0/256)`.
std::string loopText(const Schedule &schedule, size_t loop, const SizeStandIns *sizes);

} // namespace sotc::sched

#endif // SOTC_DIALECT_SCHED_MESH_H
