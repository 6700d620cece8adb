// The CPU backend: the kernels of the artifact's shared library, each split over a fixed
// thread pool by its grid, and GEMM steps through CBLAS.
#include "runtime/src/Backend.h"
#include "runtime/src/cpu/Convolution.h"
#include "runtime/src/cpu/Gemm.h"
#include "runtime/src/cpu/OpenmpTeam.h"
#include "runtime/src/cpu/ThreadPool.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <utility>

namespace sotc::runtime {
namespace {

/// The C ABI of a kernel of K dynamic sizes and N buffers: void(int64_t begin, int64_t end,
/// int64_t size..., void *buffer...), the call's sizes (s0, s1, ... as it takes them) first.
template <size_t... S, size_t... I>
void callWith(void *fn, int64_t begin, int64_t end, const int64_t *sizes, void *const *buffers,
              std::index_sequence<S...>, std::index_sequence<I...>) {
  using Kernel = void (*)(int64_t, int64_t, decltype((void)S, int64_t{})...,
                          decltype((void)I, (void *)nullptr)...);
  reinterpret_cast<Kernel>(fn)(begin, end, sizes[S]..., buffers[I]...);
}

using Caller = void (*)(void *, int64_t, int64_t, const int64_t *, void *const *);

template <size_t K, size_t... N>
constexpr std::array<Caller, sizeof...(N)> callers(std::index_sequence<N...>) {
  return {[](void *fn, int64_t begin, int64_t end, const int64_t *sizes, void *const *buffers) {
    callWith(fn, begin, end, sizes, buffers, std::make_index_sequence<K>(),
             std::make_index_sequence<N>());
  }...};
}

/// An entry of the library's kernel table (compiler/target/cpu/CpuTarget.h).
struct KernelEntry {
  const char *name;
  int64_t grid, buffers;
  const int64_t *bufferBytes;
  void *function;
};

/// The bytes of the buffer `name` of `plan` (readManifest made sure there is one).
int64_t bytesOf(const Segment &plan, const std::string &name) {
  for (const std::vector<Buffer> *list : {&plan.inputs, &plan.outputs, &plan.arena})
    for (const Buffer &b : *list)
      if (b.name == name)
        return b.bytes;
  return -1;
}

/// Calls a kernel with exactly its sizes and buffers (outputs, then inputs).
constexpr size_t kMaxKernelBuffers = 64;
void call(void *fn, int64_t begin, int64_t end, const std::vector<int64_t> &sizes,
          const std::vector<void *> &buffers) {
  using Buffers = std::make_index_sequence<kMaxKernelBuffers + 1>;
  static constexpr std::array<std::array<Caller, kMaxKernelBuffers + 1>, kMaxKernelSizes + 1>
      tables = {callers<0>(Buffers()), callers<1>(Buffers()), callers<2>(Buffers()),
                callers<3>(Buffers()), callers<4>(Buffers())};
  tables[sizes.size()][buffers.size()](fn, begin, end, sizes.data(), buffers.data());
}

/// Convolutions that pass a tensor only to other convolutions (as their x or residual) keep it
/// in `layout` (the one oneDNN's kernels read and write) instead of reordering it to NCHW and
/// back between them: a ResNet's or MobileNet's blocks. A tensor anything else reads, or that
/// leaves the segment, stays NCHW.
void chainConvolutions(Segment &seg, ChainLayout layout) {
  std::set<std::string> plain; // read as NCHW
  for (const std::vector<Buffer> *list : {&seg.inputs, &seg.outputs})
    for (const Buffer &b : *list)
      plain.insert(b.name);
  for (const std::vector<std::string> *names :
       {&seg.results, &seg.trueArgs, &seg.falseArgs, &seg.callbackArgs, &seg.nextArgs})
    plain.insert(names->begin(), names->end());
  plain.insert(seg.condition);
  std::map<std::string, Step *> producer;
  for (Step &step : seg.steps) {
    bool conv = step.kind == Step::Kind::Conv;
    for (size_t i = 0; i < step.inputs.size(); ++i)
      if (!conv || (i != 0 && !(step.conv.residual && i + 1 == step.inputs.size())))
        plain.insert(step.inputs[i]);
    if (conv)
      producer[step.outputs[0]] = &step;
  }
  for (auto &[name, step] : producer)
    if (!plain.count(name) && holds(layout, step->conv.oc))
      step->conv.chainedOutput = true;
  auto chained = [&](const std::string &name) {
    auto it = producer.find(name);
    return it != producer.end() && it->second->conv.chainedOutput;
  };
  auto unchain = [&](const std::string &name) {
    auto it = producer.find(name);
    bool was = it != producer.end() && it->second->conv.chainedOutput;
    if (was)
      it->second->conv.chainedOutput = false;
    return was;
  };
  // A pointwise convolution runs on chained tensors only with all of them chained; otherwise it
  // is a GEMM on NCHW (runConv), so what it reads and writes stays NCHW (until nothing changes).
  for (bool changed = true; changed;) {
    changed = false;
    for (Step &step : seg.steps) {
      const ConvPlan &c = step.conv;
      if (step.kind != Step::Kind::Conv || !c.pointwise() ||
          (chained(step.inputs[0]) && c.chainedOutput &&
           (!c.residual || chained(step.inputs.back()))))
        continue;
      changed |= unchain(step.inputs[0]) | unchain(step.outputs[0]) |
                 (c.residual && unchain(step.inputs.back()));
    }
  }
  for (Step &step : seg.steps)
    if (step.kind == Step::Kind::Conv) {
      step.conv.chain = layout;
      step.conv.chainedInput = chained(step.inputs[0]);
      step.conv.chainedResidual = step.conv.residual && chained(step.inputs.back());
    }
}

/// Whether a step of any of `plans` is one `pred` takes.
template <class Pred> bool anyStep(const std::vector<Segment *> &plans, Pred pred) {
  return std::any_of(plans.begin(), plans.end(), [&](const Segment *seg) {
    return std::any_of(seg->steps.begin(), seg->steps.end(), pred);
  });
}

/// The bytes a kernel must touch to be split over the pool (about 20 us of memory traffic).
constexpr int64_t kParallelBytes = 256 * 1024;

class CpuBackend : public Backend {
public:
  CpuBackend(Artifact &artifact, unsigned threads) {
    // A name without a slash would send dlopen searching the library path, not the directory.
    const std::string &binary = artifact.binaryPath;
    library_.reset(dlopen((binary.find('/') == std::string::npos ? "./" + binary : binary).c_str(),
                          RTLD_NOW | RTLD_LOCAL));
    if (!library_)
      throw Error(ErrorCode::ArtifactUnreadable, binary + ": cannot load (" + dlerror() + ")");
    // The kernels as the library's own table lists them (never a symbol looked up by name:
    // that could be any function of its dependencies).
    // The table of the CPU whose kernels run here (Artifact::kernelCpu).
    auto *table = static_cast<const KernelEntry *>(
        dlsym(library_.get(), artifact.kernelTable.c_str()));
    auto *count = static_cast<const int64_t *>(dlsym(library_.get(), "sotc_kernel_count"));
    if (!table || !count || *count < 0)
      throw Error(ErrorCode::ArtifactUnreadable, binary + ": has no kernel table " + artifact.kernelTable +
                               " (written by an older sotc: recompile)");
    kernelCpu_ = artifact.kernelCpu;
    std::map<std::string, const KernelEntry *> kernels;
    for (int64_t i = 0; i < *count; ++i)
      kernels[table[i].name] = &table[i];
    // A convolution of an entry's first segment whose weight is the model's (or prepared from
    // it) reads the same weight in every call until the weights change: it keeps it packed.
    std::vector<Segment *> plans = artifact.plans();
    if (anyStep(plans, [](const Step &s) { return s.kind == Step::Kind::Conv; }))
      if (ChainLayout layout = cpu::convolutionChainLayout(); layout != ChainLayout::None)
        for (Segment *seg : plans)
          chainConvolutions(*seg, layout);
    for (const Entry &entry : artifact.entries) {
      std::set<std::string> weights;
      for (const auto &[weight, buffer] : entry.weightBuffers)
        weights.insert(buffer);
      for (const Buffer &prepared : entry.prepare.outputs)
        weights.insert(prepared.name);
      for (Step &step : artifact.segments.at(entry.first).steps)
        if (step.kind == Step::Kind::Conv)
          step.conv.constantWeight = weights.count(step.inputs[1]) > 0;
    }
    for (Segment *seg : artifact.plans())
      for (Step &step : seg->steps) {
        if (step.kind == Step::Kind::Gemm) {
          std::string why = cpu::unsupported(step.plan);
          if (!why.empty())
            throw Error(ErrorCode::FormatUnsupported, step.name + ": " + why);
          continue;
        }
        if (step.kind == Step::Kind::Conv || step.executorStep())
          continue;
        auto it = kernels.find(step.symbol);
        if (it == kernels.end())
          throw Error(ErrorCode::ArtifactUnreadable, binary + ": defines no kernel " + step.symbol);
        const KernelEntry &kernel = *it->second;
        size_t buffers = step.outputs.size() + step.inputs.size();
        if (step.grid != kernel.grid || static_cast<int64_t>(buffers) != kernel.buffers)
          throw Error(ErrorCode::ArtifactUnreadable, seg->name + " launches " + step.symbol + " over a grid of " +
                                   std::to_string(step.grid) + " with " + std::to_string(buffers) +
                                   " buffers; it was compiled for " + std::to_string(kernel.grid) +
                                   " and " + std::to_string(kernel.buffers));
        if (buffers > kMaxKernelBuffers)
          throw Error(ErrorCode::FormatUnsupported, step.symbol + ": a kernel of more than " +
                                   std::to_string(kMaxKernelBuffers) + " buffers");
        size_t b = 0;
        for (const std::vector<std::string> *names : {&step.outputs, &step.inputs})
          for (const std::string &name : *names)
            if (int64_t bytes = bytesOf(*seg, name); bytes != kernel.bufferBytes[b++])
              throw Error(ErrorCode::ArtifactUnreadable, seg->name + " gives " + step.symbol + " " + name + " of " +
                                       std::to_string(bytes) + " bytes; it was compiled for " +
                                       std::to_string(kernel.bufferBytes[b - 1]));
        step.function = kernel.function;
      }
    unsigned size = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
    // Kernels between oneDNN's steps run on oneDNN's own OpenMP threads (OpenmpTeam.h).
    bool library = anyStep(plans, [](const Step &s) {
      return s.kind == Step::Kind::Gemm || s.kind == Step::Kind::Conv;
    });
    if (library && cpu::processOnednn().sgemm)
      team_ = cpu::OpenmpTeam::of(cpu::processOnednn().handle, size);
    if (!team_)
      pool_ = std::make_unique<cpu::ThreadPool>(size);
  }
  ~CpuBackend() override { pool_.reset(); } // the workers stop before the library goes

  bool onDevice() const override { return false; }
  void *allocate(size_t bytes) override {
    void *data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!data)
      throw Error(ErrorCode::RunFailed, "cannot allocate " + std::to_string(bytes) + " bytes");
    return data;
  }
  void release(void *data) override { std::free(data); }
  void kernel(const Step &step, const std::vector<void *> &buffers) override {
    auto body = [&](int64_t begin, int64_t end) {
      call(step.function, begin, end, step.sizeArgs, buffers);
    };
    // Waking a worker costs more than a small kernel takes (tens of microseconds; more on a
    // virtual machine whose idle vCPU halts): those run on the calling thread.
    if (step.bytes < kParallelBytes)
      return body(0, step.grid);
    parallel().run(step.grid, body);
  }
  void gemm(const Step &step, const std::vector<void *> &b) override {
    cpu::runGemm(step.plan, b[0], b[1], b[2], step.plan.bias ? b[3] : nullptr, parallel());
  }
  void conv(const Step &step, const std::vector<void *> &b) override {
    size_t next = 3;
    auto *bias = step.conv.bias ? static_cast<const float *>(b[next++]) : nullptr;
    auto *residual = step.conv.residual ? static_cast<const float *>(b[next]) : nullptr;
    cpu::runConv(step.conv, static_cast<float *>(b[0]), static_cast<const float *>(b[1]),
                 static_cast<const float *>(b[2]), bias, residual, packedWeights_, parallel());
  }
  void weightsChanged() override { packedWeights_.clear(); }
  void toHost(void *host, const void *data, size_t bytes) override {
    std::memcpy(host, data, bytes);
  }
  void fromHost(void *data, const void *host, size_t bytes) override {
    std::memcpy(data, host, bytes);
  }
  void copy(void *to, const void *from, size_t bytes) override { std::memcpy(to, from, bytes); }
  std::string gemmImplementation() const override { return cpu::gemmImplementation(); }
  std::string kernelCpu() const override { return kernelCpu_; }
  void synchronize() override {}

private:
  /// The threads kernels and batched GEMMs split their work over: oneDNN's OpenMP team, or
  /// sotc's own pool.
  cpu::ParallelFor parallel() {
    if (team_)
      return {team_->size(), [this](int64_t n, const auto &body) { team_->parallelFor(n, body); }};
    return {pool_->size(), [this](int64_t n, const auto &body) { pool_->parallelFor(n, body); }};
  }

  std::unique_ptr<void, int (*)(void *)> library_{nullptr, dlclose};
  std::unique_ptr<cpu::OpenmpTeam> team_;
  std::unique_ptr<cpu::ThreadPool> pool_;
  std::string kernelCpu_;
  cpu::PackedWeights packedWeights_;
};

} // namespace

std::string cpuGemmImplementation() { return cpu::gemmImplementation(); }

std::unique_ptr<Backend> cpuBackend(Artifact &artifact, unsigned threads) {
  return std::make_unique<CpuBackend>(artifact, threads);
}

} // namespace sotc::runtime
