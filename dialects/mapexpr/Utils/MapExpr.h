//===- MapExpr.h - Fused kernels in CINN's MapExpr model ----------------------------------===//
//
//   Kernel(outputs, inputs) { AnchoredMapStmt(anchor) { MapStmt(loops) { OpStmt; ... } } ... }
//
// One Kernel per fusion group. A kernel runs one or more AnchoredMapStmts in order (a new one
// starts where a reduction's result is needed whole); each has an anchor tensor whose
// iterators i0..iN index every tensor it touches, and a schedule mesh that maps the anchor
// space onto blocks, threads and loops. Reductions are an init and an accumulate statement.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_MAPEXPR_MAPEXPR_H
#define SOTC_MAPEXPR_MAPEXPR_H

#include "compiler/ops/Primitives.h"
#include "compiler/support/Expected.h"
#include "dialects/mapexpr/Utils/IndexExpr.h"
#include "dialects/sched/Utils/Mesh.h"
#include "dialects/sched/Utils/Target.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sotc::mapexpr {

/// A dimension as the model holds it: a static one as it is, a dynamic one (ops::dynamicDim,
/// ops::productDim) as its product at the sizes' stand-ins (s0*s1 is 4099 * 4111 at the
/// first).
int64_t modelDim(int64_t dim, const sched::SizeStandIns &sizes);
/// A shape with its dynamic dims as their sizes (ops::withSizes) as the model holds it: each
/// dynamic dimension as the stand-in of its size.
std::vector<int64_t> modelShape(const std::vector<int64_t> &shape,
                                const sched::SizeStandIns &sizes);
/// The shape of a lowered kernel's buffer of a tensor: its modelShape, or, when a dim after the
/// first is dynamic (its strides hold s0), one flat dimension that the kernel indexes with the
/// call's s0.
std::vector<int64_t> bufferShape(const std::vector<int64_t> &shape,
                                 const sched::SizeStandIns &sizes);

struct Tensor {
  std::string name; // printed as t_<name>
  std::vector<int64_t> shape;
  int64_t elementBytes = 4; // the width of one element in memory (vector widths follow it)
};

/// The attributes of the primitive a statement computes, so that it can be evaluated on its
/// own (the model's property test does).
struct PrimAttrs {
  std::vector<int64_t> perm;                // transpose
  std::vector<int64_t> axes, starts, steps; // reductions (axes), slice
  bool keepdim = false;                     // reductions
  int64_t axis = 0;                         // concat
};

/// One primitive (or one step of a reduction) writing `outs` from `ins` (tensor ids).
struct OpStmt {
  /// A reduction (and matmul's accumulation) is two statements: its start (`_init`, the
  /// identity) and one point combined in (`_acc`); any other primitive computes at once.
  enum class Step { Compute, Init, Acc };

  ops::Prim prim = ops::Prim::FillConstant;
  Step step = Step::Compute;
  std::vector<int> outs, ins;
  PrimAttrs attrs;
  std::optional<double> value; // fill_constant's; a window's pad value

  bool isInit() const { return step == Step::Init; }
  bool isAcc() const { return step == Step::Acc; }
  /// Its name in a mapexpr.op and the dumps: "sin", "reduce_sum_init", "matmul_acc".
  std::string name() const;
  /// The statement a name says (its primitive and step); nullopt for a name that is no
  /// primitive, nor a reduction's or matmul's `_init` or `_acc`.
  static std::optional<OpStmt> named(std::string_view name);
};

struct AnchoredMapStmt {
  int anchor;                              // tensor id
  std::vector<int64_t> space;              // the anchor iteration space (i0..iN sizes)
  std::vector<sched::ScheduleDim> dims;    // injective / reduced, per anchor iterator
  std::optional<sched::Schedule> schedule; // the loops of the MapStmt
  std::vector<OpStmt> stmts;
  /// Per tensor id used here: one index expression per tensor dimension.
  std::map<int, std::vector<Expr>> index;
};

struct Kernel {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<int> outputs, inputs;
  std::vector<AnchoredMapStmt> stmts;
  bool batch = false; // over dynamic sizes: sizes holding their stand-ins print as s0, s1, ...
  sched::SizeStandIns standIns; // its module's

  /// CINN's text form; `indexDetail` puts each argument on its own line with its index.
  std::string str(bool indexDetail = false) const;
};

/// Where a tensor lives while its kernel runs.
enum class StorageKind {
  Input,    // a kernel input, in global memory
  Output,   // a kernel output, in global memory
  Register, // an intermediate one statement writes and reads at the same point: computed
            // where it is used (inlined), never stored
  Shared,   // written by one statement and read by a later one of the same block: the block's
            // shared memory on a GPU, the row's scratch on a CPU
  Scratch,  // as Shared, but too large for a block: a temporary in global memory
};
const char *storageKindName(StorageKind kind); // "input", "output", "register", ...

struct Storage {
  StorageKind kind = StorageKind::Register;
  int64_t elementsPerBlock = 0; // Shared and Scratch: what one block (one row) holds
};

/// A block's shared memory holds at most this many elements (48 KiB of 8-byte elements).
constexpr int64_t kSharedElementsPerBlock = 6144;
/// The static shared memory a CUDA block may use.
constexpr int64_t kSharedBytesPerBlock = 48 * 1024;

/// Where each tensor of a scheduled kernel lives (indexed by tensor id).
std::vector<Storage> tensorStorage(const Kernel &k);

using sched::Target;

/// The mesh and loops the target's policy chooses for `dims`: GPU injective or reduction,
/// or the CPU parallel + vector loops (E4001 when the dims do not fit the policy).
/// `vector`: the elements a GPU thread moves at once (sched::gpuVectorElements); `cpu`: what
/// the statement asks of the CPU policy (sched::CpuHints).
Expected<sched::Schedule> scheduleFor(const std::vector<sched::ScheduleDim> &dims, Target target,
                                      const sched::SizeStandIns &sizes, int64_t vector = 4,
                                      const sched::CpuHints &cpu = {});

/// The rows a kernel with a reduction runs on: per AnchoredMapStmt, the anchor iterators that
/// count rows (in row order), and how many rows; no iterators and one row when its statements
/// cannot share rows. nullopt for a kernel without a reduction.
struct KernelRows {
  std::vector<std::vector<int>> iterators;
  int64_t count = 1;
};
std::optional<KernelRows> kernelRows(const Kernel &k);

/// Whether statement `a` reads windows (a `window` op): the CPU runs it as rows down to 4
/// lanes and peels those lanes at the windows' borders.
bool readsWindows(const AnchoredMapStmt &a);

/// The AnchoredMapStmt that writes each tensor (by tensor id); inputs are absent.
std::map<int, size_t> writers(const Kernel &k);

/// The dimensions of tensor `t` that carry a row coordinate (its writer indexes them with one
/// of its row iterators): within a row, the tensor's other dimensions address its elements.
std::vector<bool> rowDims(const Kernel &k, const KernelRows &rows, int t);

/// Schedules every AnchoredMapStmt of `k`. A kernel is one launch: with a reduction, its
/// first reduction's rows decide the grid (GPU: a block per row; CPU: one parallel-loop
/// iteration per row) and every statement runs on those rows, each reading only what its own
/// row wrote before (checked on the index expressions). A kernel whose statements cannot
/// (reductions over different axes fused together) runs as one row: correct, one block.
/// E4001 only for dims the mesh algebra refuses.
Expected<std::monostate> scheduleKernel(Kernel &k, Target target);

} // namespace sotc::mapexpr

#endif // SOTC_MAPEXPR_MAPEXPR_H
