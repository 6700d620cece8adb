// The C API (include/sotc/runtime.h) over the artifact loader and the CPU executor: check the
// parameters, then run the segments in order, following branches, on a fixed thread pool.
#include "sotc/runtime.h"

#include "runtime/src/Artifact.h"
#include "runtime/src/cpu/Gemm.h"
#include "runtime/src/cpu/ThreadPool.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <utility>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

using namespace sotc::runtime;

namespace {

/// 64-byte aligned bytes that the artifact reuses from run to run.
struct Storage {
  void *data = nullptr;
  size_t bytes = 0;
  ~Storage() { std::free(data); }
  void *reserve(size_t n) {
    if (n > bytes) {
      std::free(data);
      bytes = (n + 63) / 64 * 64;
      data = std::aligned_alloc(64, bytes);
      if (!data) {
        bytes = 0;
        throw Error("E8005", "cannot allocate " + std::to_string(n) + " bytes");
      }
    }
    return data;
  }
};

std::string formatTensor(int dtype, const int64_t *shape, int rank) {
  static const char *names[] = {"bool",    "int8",    "uint8",     "int16",
                                "int32",   "int64",   "float16",   "bfloat16",
                                "float32", "float64", "complex64", "complex128"};
  std::string s = dtype >= 0 && dtype <= SOTC_COMPLEX128 ? names[dtype] : "?";
  s += "[";
  for (int i = 0; i < rank; ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// One parameter that does not match what was compiled.
struct Mismatch {
  std::string parameter, expected, got, guard;
};

} // namespace

struct sotc_artifact {
  Artifact artifact;
  void *library = nullptr;
  std::unique_ptr<sotc::runtime::cpu::ThreadPool> pool;
  Storage arena;
  std::map<std::string, Storage> outputs; // segment outputs, by segment and name
  int32_t lastSegment = -1;
  std::vector<Mismatch> mismatches; // of the last run
  sotc_host_handler hostHandler = nullptr;
  void *hostUser = nullptr;
  bool profiling = false;
  /// Per step that ran while profiling, in first-run order: the step and its times.
  std::vector<std::pair<const Step *, std::vector<double>>> profile;
  std::map<const Step *, size_t> profileIndex;
  ~sotc_artifact() {
    if (library)
      dlclose(library);
  }
};

namespace {

void fill(sotc_error *error, const std::string &code, const std::string &message) {
  if (!error)
    return;
  std::snprintf(error->code, sizeof(error->code), "%s", code.c_str());
  std::string line = message;
  for (char &c : line)
    if (c == '\n')
      c = ' ';
  std::snprintf(error->message, sizeof(error->message), "%s", line.c_str());
}

/// The C ABI of a kernel of N buffers: void(int64_t begin, int64_t end, void *...).
template <size_t... I>
void callWith(void *fn, int64_t begin, int64_t end, void *const *buffers,
              std::index_sequence<I...>) {
  using Kernel = void (*)(int64_t, int64_t, decltype((void)I, (void *)nullptr)...);
  reinterpret_cast<Kernel>(fn)(begin, end, buffers[I]...);
}

template <size_t... N> constexpr auto callers(std::index_sequence<N...>) {
  using Caller = void (*)(void *, int64_t, int64_t, void *const *);
  return std::array<Caller, sizeof...(N)>{
      [](void *fn, int64_t begin, int64_t end, void *const *buffers) {
        callWith(fn, begin, end, buffers, std::make_index_sequence<N>());
      }...};
}

/// Calls a kernel with exactly its buffers (outputs, then inputs).
constexpr size_t kMaxKernelBuffers = 64;
void call(void *fn, int64_t begin, int64_t end, const std::vector<void *> &buffers) {
  static constexpr auto table = callers(std::make_index_sequence<kMaxKernelBuffers + 1>());
  if (buffers.size() > kMaxKernelBuffers)
    throw Error("E8005", "a kernel of " + std::to_string(buffers.size()) +
                             " buffers (the CPU runtime calls kernels of up to 64)");
  table[buffers.size()](fn, begin, end, buffers.data());
}

/// The parameters against what the trace was compiled for: every mismatch, in `found` and as
/// one line of E8004.
void checkParameters(const Artifact &a, const sotc_value *in, size_t n,
                     std::vector<Mismatch> &found) {
  found.clear();
  if (n != a.parameters.size())
    throw Error("E8004", "expected " + std::to_string(a.parameters.size()) + " parameters, got " +
                             std::to_string(n));
  for (size_t i = 0; i < n; ++i) {
    const Parameter &p = a.parameters[i];
    if (p.tensor) {
      const Buffer &s = p.spec;
      std::string expected =
          formatTensor(s.dtype, s.shape.data(), static_cast<int>(s.shape.size()));
      if (!in[i].is_tensor) {
        found.push_back({p.name, expected, in[i].repr ? in[i].repr : "a non-tensor", p.guard});
        continue;
      }
      bool same = in[i].dtype == s.dtype && in[i].rank == static_cast<int32_t>(s.shape.size()) &&
                  in[i].data != nullptr;
      for (size_t d = 0; same && d < s.shape.size(); ++d)
        same = in[i].shape[d] == s.shape[d];
      if (!same)
        found.push_back(
            {p.name, expected,
             formatTensor(in[i].dtype, in[i].shape, std::min<int32_t>(in[i].rank, SOTC_MAX_RANK)) +
                 (in[i].data ? "" : " without data"),
             p.guard});
    } else if (!p.guard.empty() && (in[i].is_tensor || !in[i].repr || p.value != in[i].repr)) {
      found.push_back({p.name, p.value,
                       in[i].is_tensor ? "a tensor"
                       : in[i].repr    ? in[i].repr
                                       : "nothing",
                       p.guard});
    }
  }
  if (!found.empty()) {
    std::string text = "the inputs do not match what was compiled: ";
    for (size_t i = 0; i < found.size(); ++i)
      text += (i ? "; " : "") + found[i].parameter + ": expected " + found[i].expected + ", got " +
              found[i].got + (found[i].guard.empty() ? "" : " (guard " + found[i].guard + ")");
    throw Error("E8004", text);
  }
}

/// A segment's buffer by name; E8001 when the manifest names one that nothing provides.
void *lookup(const std::map<std::string, void *> &buffers, const Segment &seg,
             const std::string &name) {
  auto it = buffers.find(name);
  if (it == buffers.end())
    throw Error("E8001", seg.name + " names " + name + ", which no step or input provides");
  return it->second;
}

/// The buffer `name` of segment `seg` (an output, input or host call result) as a tensor value.
sotc_value tensorValue(const Segment &seg, const std::string &name, void *data) {
  const Buffer *spec = nullptr;
  for (const std::vector<Buffer> *list : {&seg.outputs, &seg.inputs, &seg.callbackResults})
    for (const Buffer &b : *list)
      if (!spec && b.name == name)
        spec = &b;
  if (!spec)
    throw Error("E8001", seg.name + " names " + name + ", which it has no buffer for");
  sotc_value v;
  std::memset(&v, 0, sizeof(v));
  v.name = spec->name.c_str();
  v.is_tensor = 1;
  v.dtype = static_cast<sotc_dtype>(spec->dtype);
  v.rank = static_cast<int32_t>(std::min<size_t>(spec->shape.size(), SOTC_MAX_RANK));
  for (int32_t d = 0; d < v.rank; ++d)
    v.shape[d] = spec->shape[d];
  v.data = data;
  return v;
}

/// The host call that ends segment `index`: its tensors to the embedder's handler, and the
/// tensors it returns into buffers the artifact owns.
void callHost(sotc_artifact &s, size_t index, std::map<std::string, void *> &buffers) {
  const Segment &seg = s.artifact.segments[index];
  std::string what = seg.callee + " (" + seg.source + ")";
  if (!s.hostHandler)
    throw Error("E8005", seg.name + " ends in a host callback, " + what +
                             ", and no handler is registered (sotc_set_host_handler)");
  std::vector<sotc_value> args, results;
  for (const std::string &name : seg.callbackArgs)
    args.push_back(tensorValue(seg, name, lookup(buffers, seg, name)));
  for (const Buffer &b : seg.callbackResults) {
    void *data = s.outputs[seg.name + "/" + b.name].reserve(static_cast<size_t>(b.bytes));
    buffers[b.name] = data;
    results.push_back(tensorValue(seg, b.name, data));
  }
  sotc_host_call call{static_cast<int32_t>(index),
                      seg.callee.c_str(),
                      seg.source.c_str(),
                      args.size(),
                      args.data(),
                      results.size(),
                      results.data()};
  sotc_error error{};
  if (s.hostHandler(s.hostUser, &call, &error) != 0)
    throw Error("E8006", "the host callback " + what + " failed" +
                             (error.message[0] ? std::string(": ") + error.message : ""));
}

void run(sotc_artifact &s, const sotc_value *in, sotc_value *out, size_t *numOut) {
  const Artifact &a = s.artifact;
  checkParameters(a, in, a.parameters.size(), s.mismatches);
  std::map<std::string, void *> buffers; // the current segment's, by name
  for (size_t i = 0; i < a.parameters.size(); ++i)
    if (a.parameters[i].tensor && !a.parameters[i].buffer.empty())
      buffers[a.parameters[i].buffer] = in[i].data;
  for (size_t index = 0, hops = 0;; ++hops) {
    if (hops > 100000)
      throw Error("E8005", "more than 100000 segments in one run (a loop that does not end?)");
    const Segment &seg = a.segments.at(index);
    char *arena = static_cast<char *>(s.arena.reserve(static_cast<size_t>(seg.arenaBytes)));
    for (const Buffer &b : seg.arena)
      buffers[b.name] = arena + b.offset;
    for (const Buffer &b : seg.outputs)
      if (!buffers.count(b.name) ||
          std::find_if(seg.arena.begin(), seg.arena.end(),
                       [&](const Buffer &x) { return x.name == b.name; }) != seg.arena.end())
        buffers[b.name] = s.outputs[seg.name + "/" + b.name].reserve(static_cast<size_t>(b.bytes));
    for (const Step &step : seg.steps) {
      std::vector<void *> args;
      for (const std::vector<std::string> *names : {&step.outputs, &step.inputs})
        for (const std::string &name : *names)
          args.push_back(lookup(buffers, seg, name));
      auto start = std::chrono::steady_clock::now();
      if (step.gemm)
        sotc::runtime::cpu::runGemm(step.plan, args[0], args[1], args[2],
                                    step.bias.empty() ? nullptr : args[3]);
      else
        s.pool->parallelFor(
            step.grid, [&](int64_t begin, int64_t end) { call(step.function, begin, end, args); });
      if (s.profiling) {
        auto [it, added] = s.profileIndex.try_emplace(&step, s.profile.size());
        if (added)
          s.profile.push_back({&step, {}});
        s.profile[it->second].second.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    }
    // Continues in segment `next`, its inputs bound to `args` by position.
    auto jump = [&](int next, const std::vector<std::string> &args) {
      const Segment &target = a.segments.at(static_cast<size_t>(next));
      std::map<std::string, void *> passed;
      for (size_t i = 0; i < args.size() && i < target.inputs.size(); ++i)
        passed[target.inputs[i].name] = lookup(buffers, seg, args[i]);
      buffers = std::move(passed);
      index = static_cast<size_t>(next);
    };
    if (seg.end == Segment::End::HostCallback) {
      callHost(s, index, buffers);
      jump(seg.next, seg.nextArgs);
      continue;
    }
    if (seg.end == Segment::End::Branch) {
      void *condition = lookup(buffers, seg, seg.condition);
      bool taken = *static_cast<const unsigned char *>(condition) != 0;
      jump(taken ? seg.onTrue : seg.onFalse, taken ? seg.trueArgs : seg.falseArgs);
      continue;
    }
    // Return: the result's tensors, in order.
    if (*numOut < seg.results.size())
      throw Error("E8005", "the result has " + std::to_string(seg.results.size()) +
                               " tensors; room was given for " + std::to_string(*numOut));
    for (size_t r = 0; r < seg.results.size(); ++r)
      out[r] = tensorValue(seg, seg.results[r], lookup(buffers, seg, seg.results[r]));
    *numOut = seg.results.size();
    s.lastSegment = static_cast<int32_t>(index);
    return;
  }
}

} // namespace

extern "C" {

int sotc_open(const char *path, sotc_artifact **artifact, sotc_error *error) {
  try {
    auto s = std::make_unique<sotc_artifact>();
    s->artifact = loadArtifact(path ? path : "");
    // A name without a slash would send dlopen searching the library path, not the directory.
    const std::string &binary = s->artifact.binaryPath;
    s->library = dlopen((binary.find('/') == std::string::npos ? "./" + binary : binary).c_str(),
                        RTLD_NOW | RTLD_LOCAL);
    if (!s->library)
      throw Error("E8001", s->artifact.binaryPath + ": cannot load (" + dlerror() + ")");
    for (Segment &seg : s->artifact.segments)
      for (Step &step : seg.steps)
        if (!step.gemm && !(step.function = dlsym(s->library, step.symbol.c_str())))
          throw Error("E8001", s->artifact.binaryPath + ": no kernel " + step.symbol);
    const char *threads = std::getenv("SOTC_NUM_THREADS");
    unsigned n = threads ? static_cast<unsigned>(std::atoi(threads))
                         : std::max(1u, std::thread::hardware_concurrency());
    s->pool = std::make_unique<sotc::runtime::cpu::ThreadPool>(n);
    *artifact = s.release();
    return 0;
  } catch (const Error &e) {
    fill(error, e.code(), e.what());
  } catch (const std::exception &e) {
    fill(error, "E8001", e.what());
  }
  return 1;
}

void sotc_close(sotc_artifact *artifact) { delete artifact; }

void sotc_set_host_handler(sotc_artifact *artifact, sotc_host_handler handler, void *user) {
  if (!artifact)
    return;
  artifact->hostHandler = handler;
  artifact->hostUser = user;
}

size_t sotc_num_parameters(const sotc_artifact *artifact) {
  return artifact ? artifact->artifact.parameters.size() : 0;
}

const char *sotc_parameter_name(const sotc_artifact *artifact, size_t i) {
  if (!artifact || i >= artifact->artifact.parameters.size())
    return nullptr;
  return artifact->artifact.parameters[i].name.c_str();
}

void sotc_set_profiling(sotc_artifact *artifact, int on) {
  if (!artifact)
    return;
  artifact->profiling = on != 0;
  artifact->profile.clear();
  artifact->profileIndex.clear();
}

size_t sotc_num_profiled_steps(const sotc_artifact *artifact) {
  return artifact ? artifact->profile.size() : 0;
}

int sotc_profiled_step(const sotc_artifact *artifact, size_t i, sotc_step_profile *profile) {
  if (!artifact || !profile || i >= artifact->profile.size())
    return 1;
  const auto &[step, times] = artifact->profile[i];
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  *profile = {step->name.c_str(), step->gemm ? "gemm" : "kernel", sorted.size(),
              sorted.front(),     sorted[sorted.size() / 2],      step->bytes};
  return 0;
}

size_t sotc_num_mismatches(const sotc_artifact *artifact) {
  return artifact ? artifact->mismatches.size() : 0;
}

int sotc_mismatch(const sotc_artifact *artifact, size_t i, sotc_parameter_mismatch *mismatch) {
  if (!artifact || !mismatch || i >= artifact->mismatches.size())
    return 1;
  const Mismatch &m = artifact->mismatches[i];
  *mismatch = {m.parameter.c_str(), m.expected.c_str(), m.got.c_str(), m.guard.c_str()};
  return 0;
}

int32_t sotc_last_segment(const sotc_artifact *artifact) {
  return artifact ? artifact->lastSegment : -1;
}

int sotc_parameter_spec(const sotc_artifact *artifact, size_t i, sotc_value *spec) {
  if (!artifact || !spec || i >= artifact->artifact.parameters.size())
    return 1;
  const Parameter &p = artifact->artifact.parameters[i];
  std::memset(spec, 0, sizeof(*spec));
  spec->name = p.name.c_str();
  spec->is_tensor = p.tensor;
  if (p.tensor) {
    spec->dtype = static_cast<sotc_dtype>(p.spec.dtype);
    spec->rank = static_cast<int32_t>(std::min<size_t>(p.spec.shape.size(), SOTC_MAX_RANK));
    for (int32_t d = 0; d < spec->rank; ++d)
      spec->shape[d] = p.spec.shape[d];
  } else {
    spec->repr = p.value.c_str();
  }
  return 0;
}

int sotc_run(sotc_artifact *artifact, const sotc_value *inputs, size_t num_inputs,
             sotc_value *outputs, size_t *num_outputs, sotc_error *error) {
  try {
    if (!artifact || !num_outputs || (num_inputs && !inputs))
      throw Error("E8005", "sotc_run needs an artifact, its inputs and room for the outputs");
    artifact->lastSegment = -1;
    checkParameters(artifact->artifact, inputs, num_inputs, artifact->mismatches);
    run(*artifact, inputs, outputs, num_outputs);
    return 0;
  } catch (const Error &e) {
    fill(error, e.code(), e.what());
  } catch (const std::exception &e) {
    fill(error, "E8005", e.what());
  }
  return 1;
}

} // extern "C"
