// The CUDA backend: the fatbin loaded into device `ordinal`'s primary context (the one
// frameworks such as torch use, so their tensors are addressable as they are), each kernel
// launched with the grid and block the manifest gives on the caller's stream, GEMM steps
// through cuBLASLt. The same code drives the CUDA emulator: only the driver and cuBLASLt
// tables differ (runtime/src/emulator).
#include "runtime/src/Backend.h"
#include "runtime/src/cuda/CublasLt.h"
#include "runtime/src/cuda/Driver.h"
#include "runtime/src/emulator/EmulatedCuda.h"

#include <map>
#include <mutex>
#include <sstream>

namespace sotc::runtime {
namespace {

using namespace cuda;

CUdeviceptr device(const void *p) { return reinterpret_cast<CUdeviceptr>(p); }

/// The stream the calling thread issues its steps on (the executor sets it from the thread's
/// run context before each run; null: the legacy default stream).
thread_local CUstream threadStream = nullptr;

class CudaBackend : public Backend {
public:
  /// `emulated`: the driver and cuBLASLt are the emulator's.
  CudaBackend(Artifact &artifact, int ordinal, bool emulated)
      : d_(emulated ? emulator::emulatedDriver() : driver()), emulated_(emulated) {
    int count = 0;
    d_.check(d_.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal < 0 || ordinal >= count)
      throw Error(ErrorCode::CannotRunHere, "no CUDA device " + std::to_string(ordinal) + " (this machine has " +
                               std::to_string(count) + ")");
    d_.check(d_.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
    int major = 0, minor = 0;
    d_.cuDeviceGetAttribute(&major, kComputeCapabilityMajor, device_);
    d_.cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, device_);
    arch_ = "sm_" + std::to_string(major * 10 + minor);
    d_.check(d_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    try {
      load(artifact, ordinal);
    } catch (...) {
      unload(); // a constructor that throws runs no destructor
      throw;
    }
  }

  ~CudaBackend() override { unload(); }

private:
  /// The fatbin, its kernels and the GEMM plans, in the retained context.
  void load(Artifact &artifact, int ordinal) {
    Current current(*this);
    std::string image = readFile(artifact.binaryPath);
    image.resize(image.size() - kDigestTrailerBytes); // the fatbin without the manifest's digest
    if (CUresult r = d_.cuModuleLoadData(&module_, image.data())) {
      module_ = nullptr;
      if (emulated_)
        throw Error(ErrorCode::CannotRunHere, artifact.binaryPath + ": the CUDA emulator cannot load the fatbin: " +
                                 errorName(d_, r));
      throw Error(ErrorCode::CannotRunHere, artifact.binaryPath + ": the fatbin does not load on device " +
                               std::to_string(ordinal) + " (" + arch_ + "): " + errorName(d_, r) +
                               " (recompile with --gpu-arch " + arch_ + ")");
    }
    // Kernels whose launches add dynamic shared memory opt in to the device's largest.
    int optin = 0;
    d_.cuDeviceGetAttribute(&optin, kMaxSharedBytesPerBlockOptin, device_);
    artifact.sharedBytesPerBlock = std::max<int64_t>(optin, kSharedBytesPerBlock);
    std::vector<const GemmPlan *> plans;
    for (Segment *seg : artifact.plans())
      for (Step &step : seg->steps) {
        if (step.executorStep())
          continue;
        if (step.kind == Step::Kind::Conv)
          throw Error(ErrorCode::FormatUnsupported, step.name + ": a convolution step (sotc writes those for the "
                                           "CPU only)");
        if (step.kind == Step::Kind::Gemm) {
          if (step.plan.bf16Operands())
            throw Error(ErrorCode::FormatUnsupported,
                        step.name + ": a GEMM step of bfloat16 operands and a float32 result "
                                    "(sotc writes those for the CPU only)");
          gemmIndex_[&step] = plans.size();
          plans.push_back(&step.plan);
          continue;
        }
        CUfunction fn = nullptr;
        if (d_.cuModuleGetFunction(&fn, module_, step.symbol.c_str()))
          throw Error(ErrorCode::ArtifactUnreadable, artifact.binaryPath + ": no kernel " + step.symbol);
        if (step.block < 1)
          throw Error(ErrorCode::ArtifactUnreadable, step.symbol + ": a CUDA kernel step without a block size");
        step.function = fn;
        if ((step.dynamicShared || anyPower(step.dynamicSharedPowers)) &&
            artifact.sharedBytesPerBlock > kSharedBytesPerBlock)
          d_.check(d_.cuFuncSetAttribute(
                       fn, kFuncMaxDynamicSharedBytes,
                       static_cast<int>(artifact.sharedBytesPerBlock - step.sharedBytes)),
                   "cuFuncSetAttribute");
      }
    if (!plans.empty())
      matmuls_ = std::make_unique<Matmuls>(plans, d_, cublasLt());
  }

  /// Everything load() made, and the context; never throws (destructors call it).
  void unload() noexcept {
    if (d_.cuCtxPushCurrent(context_) == 0) {
      matmuls_.reset();
      batchMatmuls_.clear();
      if (module_)
        d_.cuModuleUnload(module_);
      CUcontext popped;
      d_.cuCtxPopCurrent(&popped);
    }
    module_ = nullptr;
    d_.cuDevicePrimaryCtxRelease(device_);
  }

public:
  bool onDevice() const override { return true; }
  void *allocate(size_t bytes) override {
    Current current(*this);
    CUdeviceptr p = 0;
    d_.check(d_.cuMemAlloc(&p, bytes), "cuMemAlloc");
    return reinterpret_cast<void *>(p);
  }
  void release(void *data) override { // from destructors: never throws
    if (d_.cuCtxPushCurrent(context_) == 0) {
      d_.cuMemFree(device(data));
      CUcontext popped;
      d_.cuCtxPopCurrent(&popped);
    }
  }
  void kernel(const Step &step, const std::vector<void *> &buffers) override {
    Current current(*this);
    std::vector<CUdeviceptr> pointers;
    for (void *b : buffers)
      pointers.push_back(device(b));
    std::vector<void *> params;
    // A kernel over dynamic sizes takes the call's first, in the order its step names them.
    std::vector<int64_t> sizes = step.sizeArgs;
    for (int64_t &size : sizes)
      params.push_back(&size);
    for (CUdeviceptr &p : pointers)
      params.push_back(&p);
    // Shared memory is static (in the cubin) but for rows of s0 a block keeps (atSizes
    // resolved their bytes and checked they fit).
    d_.check(d_.cuLaunchKernel(
                 static_cast<CUfunction>(step.function), static_cast<unsigned>(step.grid), 1, 1,
                 static_cast<unsigned>(step.block), 1, 1, static_cast<unsigned>(step.dynamicShared),
                 threadStream, params.data(), nullptr),
             step.symbol.c_str());
  }
  void gemm(const Step &step, const std::vector<void *> &b) override {
    Current current(*this);
    auto run = [&](Matmuls &matmuls, size_t index) {
      matmuls.run(index, device(b[0]), device(b[1]), device(b[2]),
                  step.plan.bias ? device(b[3]) : 0, threadStream);
    };
    if (auto it = gemmIndex_.find(&step); it != gemmIndex_.end())
      return run(*matmuls_, it->second);
    // A step of a dynamic batch's plan at a call's rows (Artifact's atSizes): planned once per
    // shape, up to a bound (then per call).
    std::unique_lock<std::mutex> lock(batchMutex_);
    std::string key = gemmKey(step.plan);
    auto it = batchMatmuls_.find(key);
    if (it == batchMatmuls_.end()) {
      auto planned = std::make_unique<BatchGemm>();
      planned->plan = step.plan;
      planned->matmuls =
          std::make_unique<Matmuls>(std::vector<const GemmPlan *>{&planned->plan}, d_, cublasLt());
      if (batchMatmuls_.size() >= kMaxBatchGemms) {
        lock.unlock();
        return run(*planned->matmuls, 0);
      }
      it = batchMatmuls_.emplace(key, std::move(planned)).first;
    }
    Matmuls &matmuls = *it->second->matmuls;
    lock.unlock();
    run(matmuls, 0);
  }
  void conv(const Step &step, const std::vector<void *> &) override {
    throw Error(ErrorCode::FormatUnsupported, step.name + ": a convolution step on CUDA"); // refused at load
  }
  void toHost(void *host, const void *data, size_t bytes) override {
    Current current(*this);
    d_.check(d_.cuMemcpyDtoHAsync(host, device(data), bytes, threadStream), "cuMemcpyDtoHAsync");
    d_.check(d_.cuStreamSynchronize(threadStream), "cuStreamSynchronize");
  }
  void fromHost(void *data, const void *host, size_t bytes) override {
    Current current(*this);
    // From pageable memory the call returns once the bytes are staged: `host` may go.
    d_.check(d_.cuMemcpyHtoDAsync(device(data), host, bytes, threadStream), "cuMemcpyHtoDAsync");
  }
  void copy(void *to, const void *from, size_t bytes) override {
    Current current(*this);
    d_.check(d_.cuMemcpyDtoDAsync(device(to), device(from), bytes, threadStream),
             "cuMemcpyDtoDAsync");
  }
  void synchronize() override {
    Current current(*this);
    d_.check(d_.cuStreamSynchronize(threadStream), "cuStreamSynchronize");
  }
  std::string gemmImplementation() const override {
    return emulated_ ? "cuBLASLt (the CUDA emulator's)" : "cuBLASLt";
  }
  void setStream(void *stream) override { threadStream = static_cast<CUstream>(stream); }

private:
  /// The device's primary context, current while a call lasts (the caller's is restored).
  struct Current {
    const CudaBackend &b;
    explicit Current(const CudaBackend &backend) : b(backend) {
      b.d_.check(b.d_.cuCtxPushCurrent(b.context_), "cuCtxPushCurrent");
    }
    ~Current() {
      CUcontext popped;
      b.d_.cuCtxPopCurrent(&popped);
    }
  };

  const Driver &d_;
  bool emulated_ = false;
  CUdevice device_ = 0;
  std::string arch_;
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  std::unique_ptr<Matmuls> matmuls_;
  std::map<const Step *, size_t> gemmIndex_;
  /// GEMMs of a dynamic batch's plans, by their shape (gemmKey).
  struct BatchGemm {
    GemmPlan plan;
    std::unique_ptr<Matmuls> matmuls;
  };
  static constexpr size_t kMaxBatchGemms = 1024;
  std::mutex batchMutex_;
  std::map<std::string, std::unique_ptr<BatchGemm>> batchMatmuls_;

  const lt::Api &cublasLt() const {
    return emulated_ ? emulator::emulatedCublasLt() : lt::cublasLt();
  }

  /// Every field of a plan, as text: equal for plans cuBLASLt runs alike.
  static std::string gemmKey(const GemmPlan &p) {
    std::ostringstream s;
    s << static_cast<int>(p.type) << ' ' << static_cast<int>(p.activation) << ' ' << p.m << ' '
      << p.n << ' ' << p.k << ' ' << p.transposeA << p.transposeB << ' ' << p.lda << ' ' << p.ldb
      << ' ' << p.ldc << ' ' << p.alpha << ' ' << p.beta << ' ' << p.bias;
    for (const std::vector<int64_t> *v : {&p.batch, &p.strideA, &p.strideB, &p.strideC}) {
      s << " [";
      for (int64_t x : *v)
        s << x << ',';
      s << ']';
    }
    return s.str();
  }
};

} // namespace

std::unique_ptr<Backend> cudaBackend(Artifact &artifact, int ordinal) {
  return std::make_unique<CudaBackend>(artifact, ordinal, false);
}

std::unique_ptr<Backend> emulatorBackend(Artifact &artifact) {
  return std::make_unique<CudaBackend>(artifact, 0, true);
}

} // namespace sotc::runtime
