#include "runtime/src/Executor.h"
#include "runtime/src/PlanCheck.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace sotc::runtime {
namespace {

/// A segment's buffer by name; E8001 when the manifest names one that nothing provides.
void *lookup(const std::map<std::string, void *> &buffers, const Segment &seg,
             const std::string &name) {
  auto it = buffers.find(name);
  if (it == buffers.end())
    throw Error(ErrorCode::ArtifactUnreadable, seg.name + " names " + name + ", which no step or input provides");
  return it->second;
}

/// The buffer `name` of segment `seg` among its outputs, inputs, host call results and (with
/// `arena`) intermediates; E8001 when it has none.
const Buffer &specOf(const Segment &seg, const std::string &name, bool arena) {
  for (const std::vector<Buffer> *list : {&seg.outputs, &seg.inputs, &seg.callbackResults})
    for (const Buffer &b : *list)
      if (b.name == name)
        return b;
  for (const Buffer &b : seg.arena)
    if (arena && b.name == name)
      return b;
  throw Error(ErrorCode::ArtifactUnreadable,
              seg.name + " names " + name + ", which it has no buffer for");
}

/// The buffer `name` of segment `seg` (an output, input or host call result) as a tensor value.
sotc_value tensorValue(const Segment &seg, const std::string &name, void *data, bool onDevice) {
  const Buffer *spec = &specOf(seg, name, false);
  sotc_value v;
  std::memset(&v, 0, sizeof(v));
  v.name = spec->name.c_str();
  v.is_tensor = 1;
  v.dtype = static_cast<sotc_dtype>(spec->dtype);
  v.rank = static_cast<int32_t>(std::min<size_t>(spec->shape.size(), SOTC_MAX_RANK));
  for (int32_t d = 0; d < v.rank; ++d)
    v.shape[d] = spec->shape[d];
  v.data = data;
  v.device = onDevice ? SOTC_DEVICE_CUDA : SOTC_DEVICE_CPU;
  return v;
}

size_t bytesOf(const sotc_value &v) {
  size_t n = sotc_dtype_size(v.dtype);
  for (int32_t d = 0; d < v.rank && d < SOTC_MAX_RANK; ++d)
    n *= static_cast<size_t>(v.shape[d]);
  return n;
}

} // namespace

std::string formatTensor(int dtype, const int64_t *shape, int rank) {
  const char *name = sotc_dtype_name(dtype);
  std::string s = name ? name : "?";
  s += "[";
  for (int i = 0; i < rank; ++i) // -1 - k: dynamic size s_k
    s += (i ? ", " : "") +
         (sizeOfDim(shape[i]) >= 0 ? sizeName(sizeOfDim(shape[i])) : std::to_string(shape[i]));
  return s + "]";
}

std::string formatTensor(const sotc_value &v) {
  return formatTensor(v.dtype, v.shape, std::clamp<int32_t>(v.rank, 0, SOTC_MAX_RANK));
}

bool sameMeta(const sotc_value &v, int dtype, const int64_t *shape, size_t rank) {
  if (!v.is_tensor || v.dtype != dtype || v.rank != static_cast<int32_t>(rank))
    return false;
  // A tensor of no elements may have no data (numpy's and the frameworks' empty arrays).
  bool empty = std::any_of(v.shape, v.shape + v.rank, [](int64_t d) { return d == 0; });
  return (v.data || empty) && std::equal(shape, shape + rank, v.shape);
}

Memory::~Memory() { release(); }

void Memory::release() {
  if (data_ && backend_)
    backend_->release(data_);
  else if (data_)
    std::free(data_);
  data_ = nullptr, bytes_ = 0;
}

void *Memory::reserve(Backend *backend, size_t bytes) {
  if (bytes <= bytes_ && backend == backend_)
    return data_;
  release();
  backend_ = backend;
  size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  data_ = backend ? backend->allocate(rounded) : std::aligned_alloc(64, rounded);
  if (!data_)
    throw Error(ErrorCode::RunFailed, "cannot allocate " + std::to_string(bytes) + " bytes");
  bytes_ = rounded;
  return data_;
}

namespace {
/// The contexts this thread holds, given back to their pools when it ends (a pool that is gone
/// is skipped: its executor closed).
struct HeldContexts {
  std::vector<std::pair<std::weak_ptr<ContextPool>, RunContext *>> held;
  /// Remembers `context` of `pool`, forgetting those of closed executors.
  void hold(const std::shared_ptr<ContextPool> &pool, RunContext *context) {
    held.erase(std::remove_if(held.begin(), held.end(),
                              [](const auto &h) { return h.first.expired(); }),
               held.end());
    held.push_back({pool, context});
  }
  ~HeldContexts() {
    for (auto &[pool, context] : held)
      if (std::shared_ptr<ContextPool> alive = pool.lock())
        alive->giveBack(context);
  }
};
thread_local HeldContexts heldContexts;
} // namespace

RunContext &ContextPool::acquire(bool &fresh) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, added] = held_.try_emplace(std::this_thread::get_id(), nullptr);
  fresh = added;
  if (!added)
    return *it->second;
  if (!free_.empty()) {
    it->second = free_.back();
    free_.pop_back();
  } else {
    all_.push_back(std::make_unique<RunContext>(parameters_));
    it->second = all_.back().get();
  }
  return *it->second;
}

const RunContext *ContextPool::current() const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = held_.find(std::this_thread::get_id());
  return it == held_.end() ? nullptr : it->second;
}

void ContextPool::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  held_.clear();
  free_.clear();
  all_.clear();
}

void ContextPool::forget(const SequenceState *state) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::unique_ptr<RunContext> &context : all_)
    if (context->state == state)
      context->state = nullptr;
}

void ContextPool::giveBack(RunContext *context) {
  std::lock_guard<std::mutex> lock(mutex_);
  context->state = nullptr; // the next thread's runs start on the artifact's own
  for (auto it = held_.begin(); it != held_.end(); ++it)
    if (it->second == context) {
      held_.erase(it);
      free_.push_back(context);
      return;
    }
}

Executor::Executor(Artifact artifact, std::unique_ptr<Backend> backend)
    : artifact_(std::move(artifact)), backend_(std::move(backend)),
      contexts_(std::make_shared<ContextPool>(artifact_.entries.front().parameters.size())),
      weights_(artifact_.weights.size()), prepareArenas_(artifact_.entries.size()),
      prepared_(artifact_.entries.size()),
      preparedVersion_(std::make_unique<std::atomic<uint64_t>[]>(artifact_.entries.size())) {
  if (artifact_.weights.empty())
    return;
  for (size_t i = 0; i < artifact_.weights.size(); ++i)
    weightIndex_[artifact_.weights[i].name] = i;
  std::string file = readFile(artifact_.weightsPath);
  std::vector<std::string_view> bytes = readWeights(artifact_, file);
  for (size_t i = 0; i < bytes.size(); ++i)
    backend_->fromHost(weights_[i].reserve(backend_.get(), bytes[i].size()), bytes[i].data(),
                       bytes[i].size());
  if (std::any_of(artifact_.weights.begin(), artifact_.weights.end(),
                  [](const Weight &w) { return w.state; }))
    ownState_ = newState();
}

std::unique_ptr<SequenceState> Executor::newState() {
  auto state = std::make_unique<SequenceState>();
  state->values = std::vector<Memory>(artifact_.weights.size());
  for (size_t i = 0; i < artifact_.weights.size(); ++i)
    if (artifact_.weights[i].state)
      state->values[i].reserve(backend_.get(),
                               static_cast<size_t>(artifact_.weights[i].spec.bytes));
  resetState(state.get());
  return state;
}

void Executor::resetState(SequenceState *state) {
  SequenceState &s = state ? *state : *ownState_;
  std::shared_lock<std::shared_mutex> weightsShared(weightsMutex_);
  std::lock_guard<std::mutex> lock(s.mutex);
  backend_->setStream(threadContext().stream);
  for (size_t i = 0; i < artifact_.weights.size(); ++i)
    if (artifact_.weights[i].state && artifact_.weights[i].spec.bytes)
      backend_->copy(s.values[i].data(), weights_[i].data(),
                     static_cast<size_t>(artifact_.weights[i].spec.bytes));
  backend_->synchronize(); // ready for a run on any stream
}

void Executor::useState(SequenceState *state) { threadContext().state = state; }

void Executor::forgetState(const SequenceState *state) { contexts_->forget(state); }

Executor::~Executor() { contexts_->clear(); } // their memory goes before the backend

RunContext &Executor::threadContext() {
  bool fresh = false;
  RunContext &context = contexts_->acquire(fresh);
  if (fresh) // given back when the thread ends
    heldContexts.hold(contexts_, &context);
  return context;
}

void Executor::setStream(void *stream) {
  RunContext &context = threadContext();
  if (stream == context.stream)
    return;
  backend_->setStream(context.stream); // its memory is reused on the new stream: drain the old
  backend_->synchronize();
  context.stream = stream;
  backend_->setStream(stream);
}

void Executor::synchronize() {
  backend_->setStream(threadContext().stream);
  backend_->synchronize();
}

void Executor::setHostHandler(sotc_host_handler handler, void *user) {
  std::lock_guard<std::mutex> lock(handlerMutex_);
  hostHandler_ = handler, hostUser_ = user;
}

const std::vector<Mismatch> &Executor::mismatches() const {
  static const std::vector<Mismatch> none;
  const RunContext *context = contexts_->current();
  return context ? context->mismatches : none;
}

int32_t Executor::lastSegment() const {
  const RunContext *context = contexts_->current();
  return context ? context->lastSegment : -1;
}

int32_t Executor::lastEntry() const {
  const RunContext *context = contexts_->current();
  return context ? context->lastEntry : -1;
}

void Executor::allowEntries(std::vector<bool> allowed) {
  threadContext().allowed = std::move(allowed);
}

void Executor::setWeight(const std::string &name, const sotc_value &value) {
  std::unique_lock<std::shared_mutex> exclusive(weightsMutex_);
  for (size_t i = 0; i < artifact_.weights.size(); ++i) {
    const Buffer &spec = artifact_.weights[i].spec;
    if (artifact_.weights[i].name != name)
      continue;
    if (!sameMeta(value, spec.dtype, spec.shape.data(), spec.shape.size()))
      throw Error(ErrorCode::InputsMismatch, "weight " + name + ": expected " +
                               formatTensor(spec.dtype, spec.shape.data(),
                                            static_cast<int>(spec.shape.size())) +
                               ", got " + formatTensor(value) + (value.data ? "" : " without data"));
    if (value.device == SOTC_DEVICE_CUDA && !backend_->onDevice())
      throw Error(ErrorCode::InputsMismatch, "weight " + name + " is on a CUDA device; this artifact runs on the CPU");
    if (value.device == SOTC_DEVICE_CUDA)
      backend_->copy(weights_[i].data(), value.data, static_cast<size_t>(spec.bytes));
    else
      backend_->fromHost(weights_[i].data(), value.data, static_cast<size_t>(spec.bytes));
    ++weightsVersion_; // every entry prepares them again
    backend_->weightsChanged();
    return;
  }
  throw Error(ErrorCode::RunFailed, "the model has no weight " + name);
}

void Executor::setProfiling(bool on) {
  std::lock_guard<std::mutex> lock(profileMutex_);
  profiling_ = on;
  profile_.clear();
  profileIndex_.clear();
}

std::vector<std::pair<const Step *, std::vector<double>>> Executor::profile() const {
  std::lock_guard<std::mutex> lock(profileMutex_);
  return profile_;
}

std::vector<Mismatch> Executor::mismatchesOf(size_t entry, const sotc_value *in, size_t n,
                                             Sizes &sizes) const {
  // Every run checks every parameter: the texts are made only for what does not match.
  std::vector<Mismatch> found;
  sizes.fill(0); // dynamic sizes: the first tensor of each binds it, the others must agree
  std::array<std::string, kMaxSizes> bound;
  std::array<size_t, kMaxSizes> boundIndex{};
  for (size_t i = 0; i < n; ++i) {
    const Parameter &p = artifact_.entries[entry].parameters[i];
    std::string guard = p.guard;
    auto mismatch = [&](std::string expected, std::string got) {
      found.push_back(
          {p.name, std::move(expected), std::move(got), guard, static_cast<int32_t>(entry)});
    };
    if (!p.tensor) {
      if (!p.guard.empty() && (in[i].is_tensor || !in[i].repr || p.value != in[i].repr))
        mismatch(p.value, in[i].is_tensor ? "a tensor" : in[i].repr ? in[i].repr : "nothing");
      continue;
    }
    const Buffer &s = p.spec;
    auto expected = [&] {
      return formatTensor(s.dtype, s.shape.data(), static_cast<int>(s.shape.size()));
    };
    if (!in[i].is_tensor) {
      mismatch(expected(), in[i].repr ? in[i].repr : "a non-tensor");
      continue;
    }
    // The kernels' ABI: elements aligned, and on CUDA 16-byte aligned buffers (vector accesses).
    bool cuda = in[i].device == SOTC_DEVICE_CUDA;
    size_t alignment = cuda ? 16 : std::max<size_t>(1, sotc_dtype_size(in[i].dtype));
    bool misaligned = in[i].data && reinterpret_cast<uintptr_t>(in[i].data) % alignment;
    bool elsewhere = in[i].data && !misaligned && cuda && !backend_->onDevice();
    bool matches = sameMeta(in[i], s.dtype, s.shape.data(), s.shape.size());
    std::string batchNote;
    if (s.perBatchRow() && static_cast<size_t>(in[i].rank) == s.shape.size() &&
        in[i].rank <= SOTC_MAX_RANK) {
      // Each dynamic dimension is its size: the first tensor of it binds it, the others agree.
      std::vector<int64_t> shape = s.shape;
      Sizes given = sizes;
      matches = true;
      for (size_t d = 0; d < shape.size() && matches; ++d) {
        int k = sizeOfDim(shape[d]);
        if (k < 0)
          continue;
        int64_t times = p.multipleOf(d), size = in[i].shape[d];
        if (size < 1) {
          batchNote = " with " + sizeName(k) + " >= 1";
          matches = false;
        } else if (size % times) { // T split in halves: a multiple of 2
          batchNote =
              " with dimension " + std::to_string(d) + " a multiple of " + std::to_string(times);
          guard = artifact_.entries[entry].sizeGuards[k].multipleGuards;
          matches = false;
        } else if (given[k] && size / times != given[k]) {
          batchNote = " with " + sizeName(k) + " = " + std::to_string(given[k] * times) +
                      (bound[k].empty()
                           ? ""
                           : (k ? ", the " + sizeName(k) + " of " : ", the batch of ") + bound[k]);
          if (!p.relation.empty()) // its size is another input's because the program said so
            guard = p.relation;
          matches = false;
        }
        given[k] = size / times;
        shape[d] = size;
      }
      matches = matches && sameMeta(in[i], s.dtype, shape.data(), shape.size());
      if (matches)
        for (int k = 0; k < kMaxSizes; ++k)
          if (!sizes[k] && given[k])
            sizes[k] = given[k], bound[k] = p.name, boundIndex[k] = i;
    }
    if (matches && !misaligned && !elsewhere)
      continue;
    std::string got = formatTensor(in[i]);
    if (!in[i].data && !std::any_of(in[i].shape, in[i].shape + in[i].rank,
                                    [](int64_t d) { return d == 0; }))
      got += " without data";
    else if (misaligned)
      got += " at an address not " + std::to_string(alignment) + "-byte aligned";
    else if (elsewhere)
      got += " on a CUDA device (this artifact runs on the CPU)";
    mismatch(expected() + batchNote, got);
  }
  // What the program decided on each size (its batch guards) holds for the bound ones.
  const Entry &e = artifact_.entries[entry];
  // Sizes derived from the bound ones (T - 1); the guards on their bases keep them >= 1.
  for (const Entry::DerivedSize &d : e.derivedSizes)
    if (sizes[d.base] > 0)
      sizes[d.size] = std::max<int64_t>(0, sizes[d.base] + d.offset);
  for (int k = 0; k < kMaxSizes; ++k) {
    const Entry::SizeGuards &g = e.sizeGuards[k];
    int64_t size = sizes[k];
    bool excluded = std::find(g.excluded.begin(), g.excluded.end(), size) != g.excluded.end();
    bool beyond = g.max && size > g.max;
    if (size > 0 && (size < g.min || excluded || beyond)) {
      const Buffer &s = e.parameters[boundIndex[k]].spec;
      std::string name = sizeName(k);
      found.push_back(
          {bound[k],
           formatTensor(s.dtype, s.shape.data(), static_cast<int>(s.shape.size())) +
               (excluded ? " with " + name + " != " + std::to_string(size * g.multiple)
                : beyond ? " with " + name + " <= " + std::to_string(g.max * g.multiple)
                         : " with " + name + " >= " + std::to_string(g.min * g.multiple)),
           formatTensor(in[boundIndex[k]]), g.guards, static_cast<int32_t>(entry)});
    }
  }
  return found;
}

size_t Executor::chooseEntry(RunContext &context, const sotc_value *in, size_t n, Sizes &sizes) {
  std::vector<Mismatch> &found = context.mismatches;
  found.clear();
  const std::vector<Entry> &entries = artifact_.entries;
  if (n != entries.front().parameters.size())
    throw Error(ErrorCode::InputsMismatch, "expected " + std::to_string(entries.front().parameters.size()) +
                             " parameters, got " + std::to_string(n));
  bool bundle = entries.size() > 1;
  std::string text = bundle ? "the inputs match no entry of the artifact: "
                            : "the inputs do not match what was compiled: ";
  for (size_t e = 0; e < entries.size(); ++e) {
    if (e < context.allowed.size() && !context.allowed[e])
      continue; // the caller's own guards do not hold for it
    std::vector<Mismatch> mismatches = mismatchesOf(e, in, n, sizes);
    if (mismatches.empty()) {
      found.clear();
      return e;
    }
    if (bundle)
      text += std::string(found.empty() ? "" : "; ") + "entry " + std::to_string(e) + " (" +
              entries[e].trace + "): ";
    for (size_t i = 0; i < mismatches.size(); ++i) {
      const Mismatch &m = mismatches[i];
      text += std::string(i ? (bundle ? ", " : "; ") : "") + m.parameter + ": expected " +
              m.expected + ", got " + m.got + (m.guard.empty() ? "" : " (guard " + m.guard + ")");
    }
    found.insert(found.end(), mismatches.begin(), mismatches.end());
  }
  if (found.empty())
    throw Error(ErrorCode::InputsMismatch, "the caller's guards hold for no entry of the artifact");
  throw Error(ErrorCode::InputsMismatch, text);
}

void Executor::callHost(RunContext &context, const Segment &seg, size_t index,
                        std::map<std::string, void *> &buffers) {
  std::string what = seg.callee + " (" + seg.source + ")";
  sotc_host_handler handler;
  void *user;
  {
    std::lock_guard<std::mutex> lock(handlerMutex_);
    handler = hostHandler_, user = hostUser_;
  }
  if (!handler)
    throw Error(ErrorCode::RunFailed, seg.name + " ends in a host callback, " + what +
                             ", and no handler is registered (sotc_set_host_handler)");
  // The handler reads and writes host memory: device tensors travel through host copies.
  bool device = backend_->onDevice();
  auto hostSide = [&](const std::string &name, void *data, size_t bytes) {
    if (!device)
      return data;
    void *copy = context.hostCopies[std::to_string(index) + "/" + name].reserve(nullptr, bytes);
    return copy;
  };
  std::vector<sotc_value> args, results;
  for (const std::string &name : seg.callbackArgs) {
    sotc_value v = tensorValue(seg, name, lookup(buffers, seg, name), false);
    void *data = v.data;
    v.data = hostSide(name, data, bytesOf(v));
    if (device)
      backend_->toHost(v.data, data, bytesOf(v));
    args.push_back(v);
  }
  for (const Buffer &b : seg.callbackResults) {
    void *data =
        context.outputs[std::to_string(index) + "/" + b.name].reserve(backend_.get(), b.bytes);
    buffers[b.name] = data;
    results.push_back(tensorValue(seg, b.name, hostSide(b.name, data, b.bytes), false));
  }
  sotc_host_call call{static_cast<int32_t>(index),
                      seg.callee.c_str(),
                      seg.source.c_str(),
                      args.size(),
                      args.data(),
                      results.size(),
                      results.data()};
  sotc_error error{};
  if (handler(user, &call, &error) != 0)
    throw Error(ErrorCode::HostCallbackFailed, "the host callback " + what + " failed" +
                             (error.message[0] ? std::string(": ") + error.message : ""));
  if (device)
    for (size_t r = 0; r < results.size(); ++r)
      backend_->fromHost(buffers[seg.callbackResults[r].name], results[r].data,
                         static_cast<size_t>(seg.callbackResults[r].bytes));
}

bool Executor::fitsDirectly(const Segment &seg, size_t r, const sotc_value &buffer,
                            const sotc_value *in, size_t n) const {
  const std::string &name = seg.results[r];
  if (std::find(seg.results.begin(), seg.results.begin() + static_cast<long>(r), name) !=
      seg.results.begin() + static_cast<long>(r))
    return false; // returned twice: the first buffer holds it
  auto output = std::find_if(seg.outputs.begin(), seg.outputs.end(),
                             [&](const Buffer &b) { return b.name == name; });
  auto input = std::find_if(seg.inputs.begin(), seg.inputs.end(),
                            [&](const Buffer &b) { return b.name == name; });
  if (output == seg.outputs.end() || input != seg.inputs.end() ||
      !sameMeta(buffer, output->dtype, output->shape.data(), output->shape.size()) ||
      (buffer.device == SOTC_DEVICE_CUDA) != backend_->onDevice())
    return false;
  if (reinterpret_cast<uintptr_t>(buffer.data) %
      (backend_->onDevice() ? 16 : std::max<size_t>(1, sotc_dtype_size(buffer.dtype))))
    return false; // the kernels' alignment (the ABI's, as for parameters)
  // A kernel may read its inputs after writing its outputs: never write over a parameter.
  auto begin = static_cast<const char *>(buffer.data), end = begin + output->bytes;
  for (size_t i = 0; i < n; ++i)
    if (in[i].is_tensor && in[i].data) {
      auto b = static_cast<const char *>(in[i].data), e = b + bytesOf(in[i]);
      if (begin < e && b < end)
        return false;
    }
  return true;
}

void Executor::run(const sotc_value *in, size_t n, sotc_value *out, size_t *numOut,
                   const sotc_value *into, size_t numInto) {
  RunContext &context = threadContext();
  backend_->setStream(context.stream);
  context.lastSegment = context.lastEntry = -1;
  Sizes sizes{};
  // Sizes a segment counts no input gives: they stay 0 (planned so) until it counted them.
  size_t chosen = chooseEntry(context, in, n, sizes);
  // Dynamic sizes run the entry's plan of the call's sizes.
  std::shared_ptr<const Artifact> batchPlan;
  if (artifact_.entries[chosen].batched)
    batchPlan = planOfSizes(chosen, sizes);
  const Artifact *planned = batchPlan ? batchPlan.get() : &artifact_;
  std::shared_ptr<const Artifact> countedPlan; // at the sizes segments counted so far
  const Artifact &plan = *planned;
  const Entry &entry = plan.entries[chosen];
  std::shared_lock<std::shared_mutex> weightsShared(weightsMutex_);
  // The sequence state the run reads and updates: one run at a time on it.
  SequenceState *state = context.state ? context.state : ownState_.get();
  std::unique_lock<std::mutex> stateLock;
  if (state)
    stateLock = std::unique_lock<std::mutex>(state->mutex);
  Backend &backend = *backend_;
  std::map<std::string, void *> buffers; // the current segment's, by name
  for (size_t i = 0; i < entry.parameters.size(); ++i) {
    const Parameter &p = entry.parameters[i];
    if (!p.tensor || p.buffer.empty())
      continue;
    void *data = in[i].data;
    if (backend.onDevice() && in[i].device != SOTC_DEVICE_CUDA) { // a host tensor: copied over
      void *staged = context.staged[i].reserve(&backend, p.spec.bytes);
      backend.fromHost(staged, data, p.spec.bytes);
      data = staged;
    }
    buffers[p.buffer] = data;
  }
  prepareWeights(chosen);
  for (size_t index = entry.first, hops = 0;; ++hops) {
    if (hops > 100000)
      throw Error(ErrorCode::RunFailed, "more than 100000 segments in one run (a loop that does not end?)");
    const Segment &seg = planned->segments.at(index);
    if (index == entry.first)
      bindWeights(chosen, buffers, state);
    char *arena = static_cast<char *>(context.arena.reserve(&backend, seg.arenaBytes));
    for (const Buffer &b : seg.arena)
      buffers[b.name] = arena + b.offset;
    for (const Buffer &b : seg.outputs)
      if (!buffers.count(b.name) ||
          std::find_if(seg.arena.begin(), seg.arena.end(),
                       [&](const Buffer &x) { return x.name == b.name; }) != seg.arena.end())
        buffers[b.name] =
            context.outputs[std::to_string(index) + "/" + b.name].reserve(&backend, b.bytes);
    if (seg.end == Segment::End::Return)
      for (size_t r = 0; r < seg.results.size() && r < numInto; ++r)
        if (fitsDirectly(seg, r, into[r], in, n))
          buffers[seg.results[r]] = into[r].data;
    runSteps(seg, buffers);
    // Continues in segment `next`, its inputs bound to `args` by position.
    auto jump = [&](int next, const std::vector<std::string> &args) {
      const Segment &target = planned->segments.at(static_cast<size_t>(next));
      std::map<std::string, void *> passed;
      for (size_t i = 0; i < args.size() && i < target.inputs.size(); ++i)
        passed[target.inputs[i].name] = lookup(buffers, seg, args[i]);
      buffers = std::move(passed);
      index = static_cast<size_t>(next);
    };
    if (seg.end == Segment::End::HostCallback) {
      callHost(context, seg, index, buffers);
      jump(seg.next, seg.nextArgs);
      continue;
    }
    if (seg.end == Segment::End::Size) {
      // The count a kernel made is the size from here on: the rest runs at the plan of it,
      // each tensor of that many rows the first rows of the one passed.
      int64_t count = -1;
      backend.toHost(&count, lookup(buffers, seg, seg.condition), sizeof count);
      if (count < 0 || count > seg.bound)
        throw Error(ErrorCode::RunFailed, seg.name + " counted " + std::to_string(count) +
                                              " rows where at most " + std::to_string(seg.bound) +
                                              " fit (" + seg.source + ")");
      sizes[static_cast<size_t>(seg.size)] = count;
      for (const Entry::DerivedSize &d : artifact_.entries[chosen].derivedSizes)
        if (d.base == seg.size)
          sizes[static_cast<size_t>(d.size)] = std::max<int64_t>(0, count + d.offset);
      std::shared_ptr<const Artifact> next = planOfSizes(chosen, sizes);
      checkCountedJump(*planned, index, *next);
      jump(seg.next, seg.nextArgs);  // the names are the same in every plan
      countedPlan = std::move(next); // `seg` is not read after this
      planned = countedPlan.get();
      continue;
    }
    if (seg.end == Segment::End::Raise) { // the call ends as the program's would
      context.lastSegment = static_cast<int32_t>(index);
      context.lastEntry = static_cast<int32_t>(chosen);
      throw Error(ErrorCode::ProgramRaised,
                  seg.exceptionClass + (seg.message.empty() ? "" : ": " + seg.message) + " (" +
                      seg.source + ")");
    }
    if (seg.end == Segment::End::Branch) {
      unsigned char taken = 0;
      backend.toHost(&taken, lookup(buffers, seg, seg.condition), 1);
      jump(taken ? seg.onTrue : seg.onFalse, taken ? seg.trueArgs : seg.falseArgs);
      continue;
    }
    // Return: the state's new values kept for the next run, then the result's tensors. An
    // output of this context that is no result becomes the state's value and the state's old
    // bytes its buffer (the next run overwrites them); others are copied.
    for (const auto &[weight, tensor] : seg.stateUpdates) {
      size_t w = weightIndex_.at(weight);
      void *from = lookup(buffers, seg, tensor);
      auto output = context.outputs.find(std::to_string(index) + "/" + tensor);
      if (output != context.outputs.end() && output->second.data() == from &&
          std::find(seg.results.begin(), seg.results.end(), tensor) == seg.results.end())
        state->values[w].swap(output->second);
      else if (from != state->values[w].data() && artifact_.weights[w].spec.bytes)
        backend.copy(state->values[w].data(), from,
                     static_cast<size_t>(artifact_.weights[w].spec.bytes));
    }
    if (!seg.stateUpdates.empty() && backend.onDevice())
      backend.synchronize(); // the next run on the state may be on another stream
    if (*numOut < seg.results.size())
      throw Error(ErrorCode::RunFailed, "the result has " + std::to_string(seg.results.size()) +
                               " tensors; room was given for " + std::to_string(*numOut));
    for (size_t r = 0; r < seg.results.size(); ++r)
      out[r] = tensorValue(seg, seg.results[r], lookup(buffers, seg, seg.results[r]),
                           backend.onDevice());
    *numOut = seg.results.size();
    context.lastSegment = static_cast<int32_t>(index);
    context.lastEntry = static_cast<int32_t>(chosen);
    return;
  }
}

std::shared_ptr<const Artifact> Executor::planOfSizes(size_t entry, const Sizes &sizes) {
  std::lock_guard<std::mutex> lock(batchMutex_);
  auto key = std::make_pair(entry, sizes);
  if (auto it = batchPlans_.find(key); it != batchPlans_.end())
    return it->second;
  auto plan = std::make_shared<const Artifact>(atSizes(artifact_, entry, sizes));
  // Kept for later calls of the size, up to a bound; while profiling, always (the profile
  // points at their steps).
  if (batchPlans_.size() < kMaxBatchPlans || profiling_)
    batchPlans_.emplace(key, plan);
  return plan;
}

void Executor::runSteps(const Segment &plan, const std::map<std::string, void *> &buffers) {
  Backend &backend = *backend_;
  bool profiling = profiling_;
  for (const Step &step : plan.steps) {
    if (step.empty)
      continue;
    if (step.sumsNone)
      throw Error(ErrorCode::InputsMismatch,
                  std::string(step.kind == Step::Kind::Gemm ? "GEMM step " : "kernel ") +
                      step.name +
                      " sums over rows a segment counted, and it counted none (not supported "
                      "yet)");
    std::vector<void *> args;
    for (const std::vector<std::string> *names : {&step.outputs, &step.inputs})
      for (const std::string &name : *names)
        args.push_back(lookup(buffers, plan, name));
    if (profiling)
      backend.synchronize();
    auto start = std::chrono::steady_clock::now();
    if (step.kind == Step::Kind::Gemm)
      backend.gemm(step, args);
    else if (step.kind == Step::Kind::Conv)
      backend.conv(step, args);
    else if (step.kind == Step::Kind::IndexCopy)
      indexCopy(step, args);
    else if (step.kind == Step::Kind::Nonzero)
      nonzero(step, plan, args);
    else if (step.kind == Step::Kind::Nms)
      nms(step, plan, args);
    else if (step.kind == Step::Kind::Argsort)
      argsort(step, plan, args);
    else
      backend.kernel(step, args);
    if (profiling) {
      backend.synchronize();
      std::lock_guard<std::mutex> lock(profileMutex_);
      auto [it, added] = profileIndex_.try_emplace(&step, profile_.size());
      if (added)
        profile_.push_back({&step, {}});
      profile_[it->second].second.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
}

void Executor::nonzero(const Step &step, const Segment &plan, const std::vector<void *> &buffers) {
  const Buffer &out = specOf(plan, step.outputs[0], true), &x = specOf(plan, step.inputs[0], true);
  Backend &backend = *backend_;
  size_t width = sotc_dtype_size(x.dtype), count = static_cast<size_t>(x.bytes) / width;
  // The CPU's buffers are read and written where they are; a device's through host copies.
  std::vector<unsigned char> copied(backend.onDevice() ? static_cast<size_t>(x.bytes) : 0);
  if (!copied.empty())
    backend.toHost(copied.data(), buffers[1], copied.size());
  const unsigned char *elements =
      backend.onDevice() ? copied.data() : static_cast<const unsigned char *>(buffers[1]);
  // An element is zero when its bits are, a float's sign bit aside (-0.0 is zero).
  bool floating = x.dtype == SOTC_FLOAT16 || x.dtype == SOTC_BFLOAT16 || x.dtype == SOTC_FLOAT32 ||
                  x.dtype == SOTC_FLOAT64 || x.dtype == SOTC_COMPLEX64 ||
                  x.dtype == SOTC_COMPLEX128;
  size_t part = x.dtype == SOTC_COMPLEX64 ? 4 : x.dtype == SOTC_COMPLEX128 ? 8 : width;
  auto isZero = [&](const unsigned char *e) {
    for (size_t at = 0; at < width; at += part) // a complex number's parts each
      for (size_t k = 0; k < part; ++k) {
        unsigned char b = e[at + k];
        if (floating && k == part - 1) // little-endian: the sign bit is the last byte's top
          b &= 0x7f;
        if (b)
          return false;
      }
    return true;
  };
  size_t rows = static_cast<size_t>(out.shape[0]), rank = x.shape.size();
  std::vector<int64_t> staged(backend.onDevice() ? rows * rank : 0);
  int64_t *coords = backend.onDevice() ? staged.data() : static_cast<int64_t *>(buffers[0]);
  size_t found = 0;
  for (size_t i = 0; i < count && found < rows; ++i) {
    if (isZero(elements + i * width))
      continue;
    for (size_t d = rank, rest = i; d-- > 0;) { // row-major: the last dimension fastest
      coords[found * rank + d] = static_cast<int64_t>(rest % static_cast<size_t>(x.shape[d]));
      rest /= static_cast<size_t>(x.shape[d]);
    }
    ++found;
  }
  std::fill(coords + found * rank, coords + rows * rank, step.fill);
  if (!staged.empty())
    backend.fromHost(buffers[0], staged.data(), staged.size() * sizeof(int64_t));
}

namespace {
/// torchvision's CPU nms on n boxes (x1, y1, x2, y2) and their scores: the kept indices.
/// The boxes are laid out by decreasing score first, so that the overlaps of one kept box
/// with all later ones are one loop over contiguous columns (marking a box already dropped
/// again changes nothing).
template <class T>
size_t suppress(const T *boxes, const T *scores, size_t n, double threshold, int64_t *keep) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  std::vector<T> x1(n), y1(n), x2(n), y2(n), areas(n);
  for (size_t a = 0; a < n; ++a) {
    const T *box = boxes + 4 * order[a];
    x1[a] = box[0], y1[a] = box[1], x2[a] = box[2], y2[a] = box[3];
    areas[a] = (x2[a] - x1[a]) * (y2[a] - y1[a]);
  }
  std::vector<unsigned char> dropped(n, 0);
  size_t kept = 0;
  for (size_t a = 0; a < n; ++a) {
    if (dropped[a])
      continue;
    keep[kept++] = static_cast<int64_t>(order[a]);
    for (size_t b = a + 1; b < n; ++b) { // the IoU in T, compared with the double threshold
      T w = std::max(T(0), std::min(x2[a], x2[b]) - std::max(x1[a], x1[b]));
      T h = std::max(T(0), std::min(y2[a], y2[b]) - std::max(y1[a], y1[b]));
      T inter = w * h;
      dropped[b] |= static_cast<unsigned char>(inter / (areas[a] + areas[b] - inter) > threshold);
    }
  }
  return kept;
}
} // namespace

void Executor::nms(const Step &step, const Segment &plan, const std::vector<void *> &buffers) {
  const Buffer &boxes = specOf(plan, step.inputs[0], true),
               &scores = specOf(plan, step.inputs[1], true);
  Backend &backend = *backend_;
  size_t n = static_cast<size_t>(scores.shape[0]);
  // A device's buffers through host copies; the CPU's where they are.
  std::vector<unsigned char> host(
      backend.onDevice() ? static_cast<size_t>(boxes.bytes + scores.bytes) : 0);
  const void *b = buffers[1], *s = buffers[2];
  if (backend.onDevice()) {
    backend.toHost(host.data(), buffers[1], static_cast<size_t>(boxes.bytes));
    backend.toHost(host.data() + boxes.bytes, buffers[2], static_cast<size_t>(scores.bytes));
    b = host.data(), s = host.data() + boxes.bytes;
  }
  std::vector<int64_t> keep(n, -1);
  if (boxes.dtype == SOTC_FLOAT64)
    suppress(static_cast<const double *>(b), static_cast<const double *>(s), n, step.iouThreshold,
             keep.data());
  else
    suppress(static_cast<const float *>(b), static_cast<const float *>(s), n, step.iouThreshold,
             keep.data());
  if (!keep.empty())
    backend.fromHost(buffers[0], keep.data(), keep.size() * sizeof(int64_t));
}

namespace {
/// An element as an unsigned key in the order torch.sort gives: NaN above every number, the
/// two zeros equal.
template <class T> uint64_t orderKey(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    constexpr Bits sign = Bits(1) << (8 * sizeof(T) - 1);
    if (v != v)
      return ~uint64_t(0);
    if (v == T(0))
      v = T(0);
    Bits bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (bits & sign) ? Bits(~bits) : Bits(bits | sign);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v)) ^ (uint64_t(1) << 63);
  } else {
    return static_cast<uint64_t>(v);
  }
}

/// The positions that sort each of x's rows of n elements (`inner` apart, rows of
/// outer x inner) into out, stable: (key, position) pairs sorted whole.
template <class T>
void sortRows(const T *x, int64_t *out, int64_t outer, int64_t n, int64_t inner, bool descending) {
  std::vector<std::pair<uint64_t, int64_t>> row(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T *first = x + o * n * inner + i;
      for (int64_t p = 0; p < n; ++p) {
        uint64_t key = orderKey(first[p * inner]);
        row[static_cast<size_t>(p)] = {descending ? ~key : key, p};
      }
      std::sort(row.begin(), row.end());
      int64_t *to = out + o * n * inner + i;
      for (int64_t p = 0; p < n; ++p)
        to[p * inner] = row[static_cast<size_t>(p)].second;
    }
}
} // namespace

void Executor::argsort(const Step &step, const Segment &plan, const std::vector<void *> &buffers) {
  const Buffer &x = specOf(plan, step.inputs[0], true);
  Backend &backend = *backend_;
  size_t axis = static_cast<size_t>(step.sortAxis);
  int64_t outer = 1, n = x.shape[axis], inner = 1;
  for (size_t d = 0; d < axis; ++d)
    outer *= x.shape[d];
  for (size_t d = axis + 1; d < x.shape.size(); ++d)
    inner *= x.shape[d];
  size_t elements = static_cast<size_t>(outer * n * inner);
  // A device's buffers through host copies; the CPU's where they are.
  std::vector<unsigned char> host(backend.onDevice() ? static_cast<size_t>(x.bytes) : 0);
  std::vector<int64_t> staged(backend.onDevice() ? elements : 0);
  const void *in = buffers[1];
  int64_t *out = backend.onDevice() ? staged.data() : static_cast<int64_t *>(buffers[0]);
  if (backend.onDevice()) {
    backend.toHost(host.data(), buffers[1], host.size());
    in = host.data();
  }
  switch (x.dtype) {
#define SOTC_SORT_ROWS(DTYPE, T)                                                                   \
  case DTYPE:                                                                                      \
    sortRows(static_cast<const T *>(in), out, outer, n, inner, step.descending);                   \
    break;
    SOTC_SORT_ROWS(SOTC_BOOL, uint8_t)
    SOTC_SORT_ROWS(SOTC_INT8, int8_t)
    SOTC_SORT_ROWS(SOTC_UINT8, uint8_t)
    SOTC_SORT_ROWS(SOTC_INT16, int16_t)
    SOTC_SORT_ROWS(SOTC_INT32, int32_t)
    SOTC_SORT_ROWS(SOTC_INT64, int64_t)
    SOTC_SORT_ROWS(SOTC_FLOAT32, float)
    SOTC_SORT_ROWS(SOTC_FLOAT64, double)
#undef SOTC_SORT_ROWS
  default: // PlanCheck refuses the others at load
    break;
  }
  if (!staged.empty())
    backend.fromHost(buffers[0], staged.data(), staged.size() * sizeof(int64_t));
}

void Executor::indexCopy(const Step &step, const std::vector<void *> &buffers) {
  const IndexCopyPlan &p = step.indexCopy;
  Backend &backend = *backend_;
  char *out = static_cast<char *>(buffers[0]);
  const char *source = static_cast<const char *>(buffers.back());
  std::vector<int64_t> at(static_cast<size_t>(p.m));
  if (p.m)
    backend.toHost(at.data(), buffers[buffers.size() - 2], at.size() * sizeof(int64_t));
  for (int64_t &i : at) {
    if (i < -p.n || i >= p.n)
      throw Error(ErrorCode::InputsMismatch,
                  step.name + ": position " + std::to_string(i) + " is outside the " +
                      std::to_string(p.n) +
                      " positions it writes (a KV cache written past its end); nothing was "
                      "written");
    i += i < 0 ? p.n : 0;
  }
  size_t slice = static_cast<size_t>(p.inner * p.elementBytes);
  if (!p.inPlace && buffers[1] != out)
    backend.copy(out, buffers[1], static_cast<size_t>(p.rows * p.n) * slice);
  // Runs of consecutive positions (a prompt's) are one copy per row.
  for (int64_t j = 0; j < p.m;) {
    int64_t run = 1;
    while (j + run < p.m && at[j + run] == at[j] + run)
      ++run;
    for (int64_t r = 0; r < p.rows; ++r)
      backend.copy(out + static_cast<size_t>(r * p.n + at[j]) * slice,
                   source + static_cast<size_t>(r * p.m + j) * slice,
                   static_cast<size_t>(run) * slice);
    j += run;
  }
}

void Executor::prepareWeights(size_t entry) {
  uint64_t version = weightsVersion_;
  if (preparedVersion_[entry] == version) // the common case, without the lock runs queue on
    return;
  std::lock_guard<std::mutex> lock(prepareMutex_);
  if (preparedVersion_[entry] == version)
    return;
  const Segment &plan = artifact_.entries[entry].prepare;
  std::map<std::string, void *> buffers;
  for (size_t i = 0; i < artifact_.weights.size(); ++i)
    buffers[artifact_.weights[i].name] = weights_[i].data();
  char *arena = static_cast<char *>(prepareArenas_[entry].reserve(backend_.get(), plan.arenaBytes));
  for (const Buffer &b : plan.arena)
    buffers[b.name] = arena + b.offset;
  for (const Buffer &b : plan.outputs)
    buffers[b.name] = prepared_[entry][b.name].reserve(backend_.get(), b.bytes);
  runSteps(plan, buffers);
  preparedVersion_[entry] = version;
}

void Executor::bindWeights(size_t entry, std::map<std::string, void *> &buffers,
                           const SequenceState *state) {
  const std::map<std::string, std::string> &bindings = artifact_.entries[entry].weightBuffers;
  for (size_t i = 0; i < artifact_.weights.size(); ++i)
    if (auto it = bindings.find(artifact_.weights[i].name); it != bindings.end())
      buffers[it->second] =
          artifact_.weights[i].state ? state->values[i].data() : weights_[i].data();
  for (auto &[name, memory] : prepared_[entry])
    buffers[name] = memory.data();
}

void Executor::copyOut(const sotc_value &result, void *dest, bool destOnDevice) {
  backend_->setStream(threadContext().stream);
  size_t bytes = bytesOf(result);
  if (!bytes)
    return;
  if (destOnDevice && !backend_->onDevice())
    throw Error(ErrorCode::RunFailed, "a CUDA buffer for the result of a CPU artifact");
  if (backend_->onDevice() && !destOnDevice)
    backend_->toHost(dest, result.data, bytes);
  else
    backend_->copy(dest, result.data, bytes);
}

} // namespace sotc::runtime
