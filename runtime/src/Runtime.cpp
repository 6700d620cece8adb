// The C API (include/sotc/runtime.h) over the executor: every entry point catches what the
// C++ inside throws and returns it as a coded sotc_error.
#include "sotc/runtime.h"

#include "contract/ArtifactFiles.h"
#include "contract/SizeProduct.h"
#include "runtime/src/Artifact.h"
#include "runtime/src/Backend.h"
#include "runtime/src/Executor.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

using namespace sotc::runtime;

struct sotc_artifact {
  std::unique_ptr<Executor> executor;
  std::string target;
  std::string gemm; // what its GEMM steps run on ("" without any)
  std::string kernelCpu; // the CPU its kernels were compiled for ("" on CUDA)
  // Calls in flight, which sotc_close waits for.
  std::mutex mutex;
  std::condition_variable idle;
  size_t inFlight = 0;
  std::set<sotc_state *> states; // made by sotc_state_new, not freed yet (guarded by mutex)
};

struct sotc_state {
  sotc_artifact *artifact; // null once the artifact is closed
  std::unique_ptr<SequenceState> state;
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

/// Runs `body`, turning what it throws into a coded error (`fallback`: the code of anything
/// that is not a runtime Error); returns 0 or 1 as the C API does.
template <typename Body> int guarded(sotc_error *error, ErrorCode fallback, Body &&body) {
  try {
    body();
    return 0;
  } catch (const Error &e) {
    fill(error, e.code(), e.what());
  } catch (const std::exception &e) {
    fill(error, errorId(fallback), e.what());
  }
  return 1;
}

/// The artifacts open now: a call with a handle that sotc_close has begun to close (or
/// closed) finds it missing and fails with E8005 instead of touching freed memory.
/// (Never destroyed: an artifact may be closed from another static's destructor at exit.)
std::mutex &openMutex = *new std::mutex;
std::set<const sotc_artifact *> &openArtifacts = *new std::set<const sotc_artifact *>;

/// A call on an open artifact, counted while it lasts so that sotc_close waits for it.
class InFlight {
public:
  explicit InFlight(sotc_artifact *artifact, const char *what) : artifact_(artifact) {
    std::lock_guard<std::mutex> open(openMutex);
    if (!openArtifacts.count(artifact))
      throw Error(ErrorCode::RunFailed, std::string(what) + " on an artifact that is closed");
    std::lock_guard<std::mutex> lock(artifact_->mutex);
    ++artifact_->inFlight;
  }
  ~InFlight() {
    std::lock_guard<std::mutex> lock(artifact_->mutex);
    if (--artifact_->inFlight == 0)
      artifact_->idle.notify_all();
  }
  InFlight(const InFlight &) = delete;
  InFlight &operator=(const InFlight &) = delete;

private:
  sotc_artifact *artifact_;
};

/// E8005 unless the artifact's model keeps state between runs.
void requireState(const sotc_artifact *artifact) {
  if (!artifact->executor->hasState())
    throw Error(ErrorCode::RunFailed,
                "the model keeps no state between runs (no weight is written in place)");
}

/// `spec` for a parameter or weight: its name and, for a tensor, its dtype and shape.
void describe(const std::string &name, const Buffer *tensor, sotc_value *spec) {
  std::memset(spec, 0, sizeof(*spec));
  spec->name = name.c_str();
  spec->is_tensor = tensor != nullptr;
  if (!tensor)
    return;
  spec->dtype = static_cast<sotc_dtype>(tensor->dtype);
  spec->rank = static_cast<int32_t>(std::min<size_t>(tensor->shape.size(), SOTC_MAX_RANK));
  for (int32_t d = 0; d < spec->rank; ++d)
    spec->shape[d] = tensor->shape[d];
}

} // namespace

extern "C" {

int sotc_open_device(const char *path, const char *device, sotc_artifact **artifact,
                     sotc_error *error) {
  return guarded(error, ErrorCode::ArtifactUnreadable, [&] {
    if (!artifact)
      throw Error(ErrorCode::RunFailed, "sotc_open needs somewhere to put the artifact");
    // "cpu", "cuda", "cuda:N" or "emulator" (a CUDA artifact on the CUDA emulator).
    std::string kind = device && *device ? device : "", ordinal = "0";
    if (size_t colon = kind.find(':'); colon != std::string::npos)
      ordinal = kind.substr(colon + 1), kind.resize(colon);
    if ((kind != "" && kind != "cpu" && kind != "cuda" && kind != "emulator") ||
        ordinal.empty() || ordinal.size() > 4 ||
        ordinal.find_first_not_of("0123456789") != std::string::npos ||
        (kind != "cuda" && ordinal != "0"))
      throw Error(ErrorCode::RunFailed,
                  std::string("unknown device '") + device + "' (cpu, cuda, cuda:N or emulator)");
    Artifact a = loadArtifact(path ? path : "");
    std::string target = a.target;
    if (!kind.empty() && kind != target && !(kind == "emulator" && target == "cuda"))
      throw Error(ErrorCode::CannotRunHere,
                  a.binaryPath + " is a " + target + " artifact; it cannot run on " + device);
    std::unique_ptr<Backend> backend;
    if (kind == "emulator") {
      backend = emulatorBackend(a);
    } else if (target == "cuda") {
      backend = cudaBackend(a, std::stoi(ordinal));
    } else {
      const char *threads = std::getenv("SOTC_NUM_THREADS");
      backend = cpuBackend(a, threads ? static_cast<unsigned>(std::atoi(threads)) : 0);
    }
    auto s = std::make_unique<sotc_artifact>();
    s->target = target;
    s->executor = std::make_unique<Executor>(std::move(a), std::move(backend));
    const Artifact &opened = s->executor->artifact();
    s->kernelCpu = s->executor->kernelCpu();
    // GEMM and convolution steps run on the GEMM libraries (convolutions on oneDNN's).
    auto callsLibrary = [](const Segment &plan) {
      return std::any_of(plan.steps.begin(), plan.steps.end(), [](const Step &x) {
        return x.kind == Step::Kind::Gemm || x.kind == Step::Kind::Conv;
      });
    };
    std::vector<const Segment *> plans = opened.plans();
    if (std::any_of(plans.begin(), plans.end(), [&](const Segment *p) { return callsLibrary(*p); }))
      s->gemm = s->executor->gemmImplementation();
    std::lock_guard<std::mutex> open(openMutex);
    openArtifacts.insert(s.get());
    *artifact = s.release();
  });
}

size_t sotc_manifest_path(const char *path, char *out, size_t size) {
  namespace contract = sotc::contract;
  std::string manifest = contract::isManifestPath(path) ? path : contract::manifestPathOf(path);
  if (out && manifest.size() < size)
    std::memcpy(out, manifest.c_str(), manifest.size() + 1);
  return manifest.size();
}

int sotc_open(const char *path, sotc_artifact **artifact, sotc_error *error) {
  return sotc_open_device(path, nullptr, artifact, error);
}

void sotc_close(sotc_artifact *artifact) {
  {
    std::lock_guard<std::mutex> open(openMutex);
    if (!openArtifacts.erase(artifact))
      return; // null, or closed already
  }
  {
    std::unique_lock<std::mutex> lock(artifact->mutex);
    artifact->idle.wait(lock, [&] { return artifact->inFlight == 0; });
  }
  {
    // States not freed yet: their memory goes with the backend's (sotc_state_free, under the
    // same lock, then frees only the handle).
    std::lock_guard<std::mutex> open(openMutex);
    for (sotc_state *state : artifact->states) {
      state->state.reset();
      state->artifact = nullptr;
    }
  }
  delete artifact;
}

const char *sotc_target(const sotc_artifact *artifact) {
  return artifact ? artifact->target.c_str() : nullptr;
}

int sotc_parse_size(const char *text, int64_t *factor, int32_t powers[8]) {
  std::optional<sotc::contract::SizeProduct> p =
      text ? sotc::contract::SizeProduct::parse(text) : std::nullopt;
  if (!p || !factor || !powers)
    return 1;
  *factor = p->factor;
  std::copy(p->powers.begin(), p->powers.end(), powers);
  return 0;
}

const char *sotc_manifest(const sotc_artifact *artifact) {
  return artifact ? artifact->executor->artifact().manifestText->c_str() : nullptr;
}

const char *sotc_gemm_implementation(const sotc_artifact *artifact) {
  return artifact ? artifact->gemm.c_str() : nullptr;
}

const char *sotc_cpu_gemm_implementation(void) {
  static const std::string described = [] {
    try {
      return cpuGemmImplementation();
    } catch (const std::exception &e) { // nothing throws across the C API
      return std::string("none: ") + e.what();
    }
  }();
  return described.c_str();
}

const char *sotc_kernel_cpu(const sotc_artifact *artifact) {
  return artifact ? artifact->kernelCpu.c_str() : nullptr;
}

void sotc_set_stream(sotc_artifact *artifact, void *stream) {
  if (artifact)
    artifact->executor->setStream(stream);
}

void sotc_set_host_handler(sotc_artifact *artifact, sotc_host_handler handler, void *user) {
  if (artifact)
    artifact->executor->setHostHandler(handler, user);
}

size_t sotc_num_parameters(const sotc_artifact *artifact) {
  return artifact ? artifact->executor->artifact().entries.front().parameters.size() : 0;
}

const char *sotc_parameter_name(const sotc_artifact *artifact, size_t i) {
  if (!artifact || i >= sotc_num_parameters(artifact))
    return nullptr;
  return artifact->executor->artifact().entries.front().parameters[i].name.c_str();
}

int sotc_parameter_spec(const sotc_artifact *artifact, size_t i, sotc_value *spec) {
  return sotc_entry_parameter_spec(artifact, 0, i, spec);
}

size_t sotc_num_entries(const sotc_artifact *artifact) {
  return artifact ? artifact->executor->artifact().entries.size() : 0;
}

const char *sotc_entry_trace(const sotc_artifact *artifact, size_t entry) {
  if (!artifact || entry >= sotc_num_entries(artifact))
    return nullptr;
  return artifact->executor->artifact().entries[entry].trace.c_str();
}

int sotc_entry_parameter_spec(const sotc_artifact *artifact, size_t entry, size_t i,
                              sotc_value *spec) {
  if (!artifact || !spec || entry >= sotc_num_entries(artifact) ||
      i >= sotc_num_parameters(artifact))
    return 1;
  const Parameter &p = artifact->executor->artifact().entries[entry].parameters[i];
  describe(p.name, p.tensor ? &p.spec : nullptr, spec);
  if (!p.tensor)
    spec->repr = p.value.c_str();
  return 0;
}

void sotc_allow_entries(sotc_artifact *artifact, const int *allowed, size_t num_allowed) {
  if (!artifact)
    return;
  std::vector<bool> mask;
  for (size_t e = 0; allowed && e < num_allowed; ++e)
    mask.push_back(allowed[e] != 0);
  artifact->executor->allowEntries(std::move(mask));
}

int32_t sotc_last_entry(const sotc_artifact *artifact) {
  return artifact ? artifact->executor->lastEntry() : -1;
}

size_t sotc_num_weights(const sotc_artifact *artifact) {
  return artifact ? artifact->executor->artifact().weights.size() : 0;
}

int sotc_weight_spec(const sotc_artifact *artifact, size_t i, sotc_value *spec) {
  if (!artifact || !spec || i >= sotc_num_weights(artifact))
    return 1;
  const Weight &w = artifact->executor->artifact().weights[i];
  describe(w.name, &w.spec, spec);
  return 0;
}

int sotc_set_weight(sotc_artifact *artifact, const char *name, const sotc_value *value,
                    sotc_error *error) {
  return guarded(error, ErrorCode::RunFailed, [&] {
    if (!artifact || !name || !value)
      throw Error(ErrorCode::RunFailed, "sotc_set_weight needs an artifact, a weight's name and its value");
    InFlight call(artifact, "sotc_set_weight");
    artifact->executor->setWeight(name, *value);
  });
}

int64_t sotc_cache_positions(const sotc_artifact *artifact) {
  if (!artifact)
    return 0;
  int64_t positions = 0;
  for (const Weight &w : artifact->executor->artifact().weights)
    if (w.cacheAxis >= 0) {
      int64_t n = w.spec.shape[static_cast<size_t>(w.cacheAxis)];
      positions = positions ? std::min(positions, n) : n;
    }
  return positions;
}

int sotc_state_new(sotc_artifact *artifact, sotc_state **state, sotc_error *error) {
  return guarded(error, ErrorCode::RunFailed, [&] {
    if (!artifact || !state)
      throw Error(ErrorCode::RunFailed,
                  "sotc_state_new needs an artifact and where to put the state");
    InFlight call(artifact, "sotc_state_new");
    requireState(artifact);
    auto made = std::make_unique<sotc_state>(sotc_state{artifact, artifact->executor->newState()});
    std::lock_guard<std::mutex> open(openMutex); // as sotc_close and sotc_state_free take them
    std::lock_guard<std::mutex> lock(artifact->mutex);
    artifact->states.insert(made.get());
    *state = made.release();
  });
}

int sotc_state_reset(sotc_artifact *artifact, sotc_state *state, sotc_error *error) {
  return guarded(error, ErrorCode::RunFailed, [&] {
    if (!artifact || (state && state->artifact != artifact))
      throw Error(ErrorCode::RunFailed,
                  "sotc_state_reset needs an artifact and a state of it (or NULL)");
    InFlight call(artifact, "sotc_state_reset");
    requireState(artifact);
    artifact->executor->resetState(state ? state->state.get() : nullptr);
  });
}

int sotc_use_state(sotc_artifact *artifact, sotc_state *state, sotc_error *error) {
  return guarded(error, ErrorCode::RunFailed, [&] {
    if (!artifact || (state && state->artifact != artifact))
      throw Error(ErrorCode::RunFailed,
                  "sotc_use_state needs an artifact and a state of it (or NULL)");
    InFlight call(artifact, "sotc_use_state");
    artifact->executor->useState(state ? state->state.get() : nullptr);
  });
}

void sotc_state_free(sotc_state *state) {
  if (!state)
    return;
  {
    std::lock_guard<std::mutex> open(openMutex);
    if (sotc_artifact *artifact = state->artifact) { // not closed: sotc_close nulls it first
      artifact->executor->forgetState(state->state.get());
      std::lock_guard<std::mutex> lock(artifact->mutex);
      artifact->states.erase(state);
    }
  }
  delete state;
}

int sotc_run(sotc_artifact *artifact, const sotc_value *inputs, size_t num_inputs,
             sotc_value *outputs, size_t *num_outputs, sotc_error *error) {
  return guarded(error, ErrorCode::RunFailed, [&] {
    if (!artifact || !num_outputs || (num_inputs && !inputs) || (*num_outputs && !outputs))
      throw Error(ErrorCode::RunFailed, "sotc_run needs an artifact, its inputs and room for the outputs");
    InFlight call(artifact, "sotc_run");
    artifact->executor->run(inputs, num_inputs, outputs, num_outputs);
  });
}

int sotc_run_into(sotc_artifact *artifact, const sotc_value *inputs, size_t num_inputs,
                  const sotc_value *outputs, size_t num_outputs, sotc_error *error) {
  return guarded(error, ErrorCode::RunFailed, [&] {
    if (!artifact || (num_inputs && !inputs) || (num_outputs && !outputs))
      throw Error(ErrorCode::RunFailed, "sotc_run_into needs an artifact, its inputs and the output buffers");
    InFlight call(artifact, "sotc_run_into");
    std::vector<sotc_value> results(num_outputs + 1);
    size_t count = results.size();
    artifact->executor->run(inputs, num_inputs, results.data(), &count, outputs, num_outputs);
    if (count != num_outputs)
      throw Error(ErrorCode::RunFailed, "the result has " + std::to_string(count) + " tensors; " +
                               std::to_string(num_outputs) + " buffers were given");
    for (size_t i = 0; i < count; ++i) {
      const sotc_value &r = results[i], &o = outputs[i];
      if (!sameMeta(o, r.dtype, r.shape, static_cast<size_t>(r.rank)))
        throw Error(ErrorCode::RunFailed, std::string("output buffer ") + std::to_string(i) + " is " +
                                 formatTensor(o) + (o.data ? "" : " without data") + "; result " +
                                 r.name + " is " + formatTensor(r));
      if (r.data != o.data) // not computed in place
        artifact->executor->copyOut(r, o.data, o.device == SOTC_DEVICE_CUDA);
    }
  });
}

int sotc_copy_out(sotc_artifact *artifact, const sotc_value *value, void *dest,
                  sotc_device dest_device, sotc_error *error) {
  return guarded(error, ErrorCode::RunFailed, [&] {
    if (!artifact || !value || !dest)
      throw Error(ErrorCode::RunFailed, "sotc_copy_out needs an artifact, a value and a destination");
    InFlight call(artifact, "sotc_copy_out");
    artifact->executor->copyOut(*value, dest, dest_device == SOTC_DEVICE_CUDA);
  });
}

int sotc_synchronize(sotc_artifact *artifact, sotc_error *error) {
  return guarded(error, ErrorCode::RunFailed, [&] {
    if (!artifact)
      throw Error(ErrorCode::RunFailed, "sotc_synchronize needs an artifact");
    InFlight call(artifact, "sotc_synchronize");
    artifact->executor->synchronize();
  });
}

void sotc_set_profiling(sotc_artifact *artifact, int on) {
  if (artifact)
    artifact->executor->setProfiling(on != 0);
}

size_t sotc_num_profiled_steps(const sotc_artifact *artifact) {
  return artifact ? artifact->executor->profile().size() : 0;
}

int sotc_profiled_step(const sotc_artifact *artifact, size_t i, sotc_step_profile *profile) {
  if (!artifact || !profile)
    return 1;
  auto steps = artifact->executor->profile();
  if (i >= steps.size())
    return 1;
  auto [step, sorted] = steps[i];
  std::sort(sorted.begin(), sorted.end());
  double flops = 0;
  const char *kind = "kernel";
  if (step->kind == Step::Kind::Gemm) {
    kind = "gemm";
    flops = 2.0 * static_cast<double>(step->plan.m) * static_cast<double>(step->plan.n) *
            static_cast<double>(step->plan.k) * static_cast<double>(step->plan.batchCount());
  } else if (step->kind == Step::Kind::Conv) {
    const ConvPlan &c = step->conv;
    kind = "conv";
    flops = 2.0 * static_cast<double>(c.outputElements()) *
            static_cast<double>(c.c / c.groups * c.kh * c.kw);
  } else if (step->kind == Step::Kind::IndexCopy) {
    kind = "index_copy";
  } else if (step->kind == Step::Kind::Nonzero) {
    kind = "nonzero";
  } else if (step->kind == Step::Kind::Nms) {
    kind = "nms";
  } else if (step->kind == Step::Kind::Argsort) {
    kind = "argsort";
  }
  *profile = {step->name.c_str(),        kind,        sorted.size(), sorted.front(),
              sorted[sorted.size() / 2], step->bytes, flops};
  return 0;
}

size_t sotc_num_mismatches(const sotc_artifact *artifact) {
  return artifact ? artifact->executor->mismatches().size() : 0;
}

int sotc_mismatch(const sotc_artifact *artifact, size_t i, sotc_parameter_mismatch *mismatch) {
  if (!artifact || !mismatch || i >= sotc_num_mismatches(artifact))
    return 1;
  const Mismatch &m = artifact->executor->mismatches()[i];
  *mismatch = {m.parameter.c_str(), m.expected.c_str(), m.got.c_str(), m.guard.c_str(), m.entry};
  return 0;
}

int32_t sotc_last_segment(const sotc_artifact *artifact) {
  return artifact ? artifact->executor->lastSegment() : -1;
}

} // extern "C"
