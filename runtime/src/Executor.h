//===- Executor.h - One opened artifact and its runs ---------------------------------------===//
//
// What a sotc_artifact is: the plan, the backend it runs on, and per calling thread the memory
// its runs reuse (an arena, the segments' outputs, staging copies). A run checks the parameters
// against what was compiled, then walks the segments: steps on the backend, branches on one
// element read back to the host, host callbacks handed to the embedder's handler, until a
// segment returns.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_EXECUTOR_H
#define SOTC_RUNTIME_EXECUTOR_H

#include "sotc/runtime.h"

#include "runtime/src/Artifact.h"
#include "runtime/src/Backend.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sotc::runtime {

/// Bytes that grow on demand and are reused: a backend's memory, or the host's when `backend`
/// is null.
class Memory {
public:
  Memory() = default;
  Memory(const Memory &) = delete;
  Memory &operator=(const Memory &) = delete;
  ~Memory();
  void *reserve(Backend *backend, size_t bytes);
  void *data() const { return data_; }
  void release();
  /// Exchanges the bytes of two (a state's value and the output that computed its next one).
  void swap(Memory &other) {
    std::swap(backend_, other.backend_);
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
  }

private:
  Backend *backend_ = nullptr;
  void *data_ = nullptr;
  size_t bytes_ = 0;
};

/// A sequence's state (sotc_state): its own value of each state weight (Weight::state), which
/// the runs that use it read and update, one run at a time.
struct SequenceState {
  std::mutex mutex;
  std::vector<Memory> values; // per weight of the artifact; only state weights' hold bytes
};

/// One parameter that does not match what an entry was compiled for.
struct Mismatch {
  std::string parameter, expected, got, guard;
  int32_t entry = 0;
};

/// What one run works in and leaves behind: the arena, the segments' outputs, staging copies,
/// and the run's mismatches and last segment. A thread's runs reuse its context, so its
/// results stay valid until that thread runs again, and steady-state runs allocate nothing.
struct RunContext {
  explicit RunContext(size_t parameters) : staged(parameters) {}
  Memory arena;
  std::map<std::string, Memory> outputs, hostCopies; // by segment and buffer name
  std::vector<Memory> staged; // per parameter: a host tensor copied to the device
  std::vector<Mismatch> mismatches;
  int32_t lastSegment = -1, lastEntry = -1;
  std::vector<bool> allowed; // the entries this thread's runs may take (empty: all)
  void *stream = nullptr; // CUDA: what this context's runs are issued on
  SequenceState *state =
      nullptr; // what this thread's runs read and update (null: the artifact's own)
};

/// The run contexts of one executor: each thread that runs holds one until it ends (then the
/// context goes back for other threads), so any number of threads may run at once.
class ContextPool {
public:
  explicit ContextPool(size_t parameters) : parameters_(parameters) {}
  /// The calling thread's context, made or taken from those ended threads gave back; `fresh`
  /// says whether it was assigned to the thread just now.
  RunContext &acquire(bool &fresh);
  /// The calling thread's context, or null when it has not run.
  const RunContext *current() const;
  /// Releases every context's memory (before the backend goes).
  void clear();
  /// What a thread that ends gives back.
  void giveBack(RunContext *context);
  /// Unbinds a state about to be freed from every context that uses it.
  void forget(const SequenceState *state);

private:
  mutable std::mutex mutex_;
  size_t parameters_;
  std::vector<std::unique_ptr<RunContext>> all_;
  std::vector<RunContext *> free_;
  std::map<std::thread::id, RunContext *> held_;
};

class Executor {
public:
  Executor(Artifact artifact, std::unique_ptr<Backend> backend);
  ~Executor();

  const Artifact &artifact() const { return artifact_; }
  bool onDevice() const { return backend_->onDevice(); }
  std::string gemmImplementation() const { return backend_->gemmImplementation(); }
  std::string kernelCpu() const { return backend_->kernelCpu(); }
  /// The stream the calling thread's runs are issued on (its run context's: one context per
  /// stream); the work of its earlier runs, on another stream, is waited for first.
  void setStream(void *stream);
  /// Waits for the calling thread's runs.
  void synchronize();
  void setHostHandler(sotc_host_handler handler, void *user);

  /// Runs on `n` parameters; the results go to `out`, whose room is *numOut, and their count
  /// to *numOut. E8004 (and mismatches()) for parameters that do not match; E8005, E8006 when
  /// a run fails. A result lives in a buffer of the calling thread's context (valid until the
  /// thread runs again), or, where `into` (the caller's buffers for the results, `numInto` of
  /// them) has a fitting one that overlaps no parameter, is computed there directly. Safe to
  /// call from any number of threads at once.
  void run(const sotc_value *in, size_t n, sotc_value *out, size_t *numOut,
           const sotc_value *into = nullptr, size_t numInto = 0);
  /// Copies a result of the last run (or any tensor value on this executor's side) into
  /// `dest`, which is host memory or, with `destOnDevice`, the backend's.
  void copyOut(const sotc_value &result, void *dest, bool destOnDevice);

  /// Replaces a model's weight with a copy of `value` (E8004 unless it has the weight's dtype
  /// and shape; E8005 for a name the model has no weight of); waits for runs in flight.
  void setWeight(const std::string &name, const sotc_value &value);

  /// Sequence states: a new one (each state weight at its initial value, the weights file's
  /// or the last setWeight's), one set back to that, and the state the calling thread's later
  /// runs read and update (null: the artifact's own, made when it opens).
  bool hasState() const { return ownState_ != nullptr; }
  std::unique_ptr<SequenceState> newState();
  void resetState(SequenceState *state);
  void useState(SequenceState *state);
  void forgetState(const SequenceState *state);

  /// The calling thread's last run: its mismatches and the segment that returned (-1: none).
  const std::vector<Mismatch> &mismatches() const;
  /// The calling thread's run context, remembered for it (given back when it ends).
  RunContext &threadContext();
  int32_t lastSegment() const;
  /// The entry the calling thread's last run took (-1: none).
  int32_t lastEntry() const;
  /// The entries the calling thread's later runs may take, by index (empty: every entry): what
  /// a caller that checks guards of its own (on globals, on objects) leaves to the runtime.
  void allowEntries(std::vector<bool> allowed);

  /// Step profiling: each step that ran while on, in first-run order, with its times.
  void setProfiling(bool on);
  std::vector<std::pair<const Step *, std::vector<double>>> profile() const;

private:
  /// The parameters that do not match what `entry` was compiled for.
  /// `sizes`: the entry's dynamic sizes the parameters bind (0 for those it has not).
  std::vector<Mismatch> mismatchesOf(size_t entry, const sotc_value *in, size_t n,
                                     Sizes &sizes) const;
  /// The first entry the calling thread may take whose parameters match, with its batch's
  /// `sizes`; E8004 with every entry's mismatches (the context's) when none does.
  size_t chooseEntry(RunContext &context, const sotc_value *in, size_t n, Sizes &sizes);
  /// The artifact with `entry`'s dynamic sizes as `sizes` (atSizes), made once per sizes.
  std::shared_ptr<const Artifact> planOfSizes(size_t entry, const Sizes &sizes);
  /// Whether result `r` of `seg` can be computed directly in the caller's `buffer`.
  bool fitsDirectly(const Segment &seg, size_t r, const sotc_value &buffer, const sotc_value *in,
                    size_t n) const;
  void callHost(RunContext &context, const Segment &seg, size_t index,
                std::map<std::string, void *> &buffers);
  /// Runs the steps of `plan` on `buffers` (each step's buffers by name), timing them when
  /// profiling.
  void runSteps(const Segment &plan, const std::map<std::string, void *> &buffers);
  /// An index_copy step on its buffers (output, then x unless in place, the index, the
  /// source): E8004 for a position outside the tensor, before anything is written.
  void indexCopy(const Step &step, const std::vector<void *> &buffers);
  /// A nonzero step of `plan` on its buffers (output, input): the coordinates of the input's
  /// nonzeros in one pass (on the host: a CUDA input is copied over and the result back).
  void nonzero(const Step &step, const Segment &plan, const std::vector<void *> &buffers);
  /// An nms step of `plan` on its buffers (output, boxes, scores), as torchvision's CPU kernel
  /// runs it: boxes in decreasing score order, each kept unless a kept one overlaps it by more
  /// than the threshold (on the host).
  void nms(const Step &step, const Segment &plan, const std::vector<void *> &buffers);
  /// An argsort step of `plan` on its buffers (output, input): the positions that sort each
  /// row along the step's axis, stable, NaN the largest (on the host).
  void argsort(const Step &step, const Segment &plan, const std::vector<void *> &buffers);
  /// Computes what an entry's kernels read of the weights (its `prepare`) into its prepared_,
  /// once after the weights change.
  void prepareWeights(size_t entry);
  /// Binds the weights (state weights: `state`'s values) and what was prepared of them to the
  /// entry's first segment's inputs.
  void bindWeights(size_t entry, std::map<std::string, void *> &buffers,
                   const SequenceState *state);

  Artifact artifact_;
  std::unique_ptr<Backend> backend_; // before every Memory: released after them
  std::shared_ptr<ContextPool> contexts_; // shared with the threads that hold its contexts
  std::shared_mutex weightsMutex_; // runs share it; replacing a weight takes it alone
  std::vector<Memory> weights_; // a model's weights, in the backend's memory
  std::unique_ptr<SequenceState> ownState_;   // where the model has state weights
  std::map<std::string, size_t> weightIndex_; // by name
  std::mutex prepareMutex_;
  std::vector<Memory> prepareArenas_;                   // per entry
  std::vector<std::map<std::string, Memory>> prepared_; // per entry: computed from them, by name
  std::atomic<uint64_t> weightsVersion_{1};             // counts the changes of the weights
  std::unique_ptr<std::atomic<uint64_t>[]> preparedVersion_; // per entry: what it prepared
  static constexpr size_t kMaxBatchPlans = 256;
  std::mutex batchMutex_;
  std::map<std::pair<size_t, Sizes>, std::shared_ptr<const Artifact>> batchPlans_;
  std::mutex handlerMutex_;
  sotc_host_handler hostHandler_ = nullptr;
  void *hostUser_ = nullptr;
  mutable std::mutex profileMutex_; // guards profile_ and profileIndex_
  std::atomic<bool> profiling_{false};
  std::vector<std::pair<const Step *, std::vector<double>>> profile_;
  std::map<const Step *, size_t> profileIndex_;
};

/// "float32[2, 3]"
std::string formatTensor(int dtype, const int64_t *shape, int rank);
/// The same for a value's tensor (its rank clamped to what sotc_value holds).
std::string formatTensor(const sotc_value &v);

/// Whether `v` is a tensor with data of exactly this dtype and shape.
bool sameMeta(const sotc_value &v, int dtype, const int64_t *shape, size_t rank);

} // namespace sotc::runtime

#endif // SOTC_RUNTIME_EXECUTOR_H
