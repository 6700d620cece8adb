//===- Backend.h - Where an artifact's steps run: the CPU or a CUDA device -----------------===//
//
// The executor (Executor.h) walks the plan: parameters, segments, branches, host callbacks;
// a backend owns the memory the buffers live in and runs the steps on it. The CPU backend
// calls the kernels of a shared library on a thread pool and GEMMs through CBLAS; the CUDA
// backend launches the kernels of a fatbin and GEMMs through cuBLASLt, with the driver and
// cuBLASLt loaded at run time (no link-time CUDA dependency).
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_BACKEND_H
#define SOTC_RUNTIME_BACKEND_H

#include "runtime/src/Artifact.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace sotc::runtime {

class Backend {
public:
  virtual ~Backend() = default;
  /// Whether buffers live in device memory (else host memory the CPU addresses).
  virtual bool onDevice() const = 0;
  /// `bytes` of buffer memory (aligned for every step), or an E8005 error; release() frees.
  virtual void *allocate(size_t bytes) = 0;
  virtual void release(void *data) = 0;
  /// Runs a kernel step on its buffers (outputs, then inputs).
  virtual void kernel(const Step &step, const std::vector<void *> &buffers) = 0;
  /// Runs a GEMM step on C, A, B and the bias (when it has one).
  virtual void gemm(const Step &step, const std::vector<void *> &buffers) = 0;
  /// Runs a convolution step on its output, input, weight, then the bias and the residual
  /// where it has them (the CPU's; a CUDA plan has none).
  virtual void conv(const Step &step, const std::vector<void *> &buffers) = 0;
  /// The model's weights changed: what the backend derived from them is stale.
  virtual void weightsChanged() {}
  /// Copies between host memory and the backend's (host to host on the CPU).
  virtual void toHost(void *host, const void *data, size_t bytes) = 0;
  virtual void fromHost(void *data, const void *host, size_t bytes) = 0;
  virtual void copy(void *to, const void *from, size_t bytes) = 0;
  /// Waits for every step issued so far (profiling, copies to the host).
  virtual void synchronize() = 0;
  /// What GEMM steps run on ("OpenBLAS 0.3.21 ... SkylakeX kernels", "cuBLASLt"), with a
  /// warning when it runs generic kernels.
  virtual std::string gemmImplementation() const = 0;
  /// The CPU the kernels running here were compiled for (Artifact::kernelCpu); "" on CUDA.
  virtual std::string kernelCpu() const { return ""; }
  /// The stream the calling thread's steps are issued on (CUDA; ignored on the CPU).
  virtual void setStream(void *stream) { (void)stream; }
};

/// The CPU backend over the artifact's shared library: E8001 if it does not load or lacks a
/// kernel, E8002 for a step it cannot run. `threads` 0: every core.
std::unique_ptr<Backend> cpuBackend(Artifact &artifact, unsigned threads);
/// What the CPU backend's GEMM steps run on in this process (Backend::gemmImplementation's
/// text), loading the libraries if no artifact has yet.
std::string cpuGemmImplementation();

/// The CUDA backend on device `ordinal`: E8003 without a usable driver or device.
std::unique_ptr<Backend> cudaBackend(Artifact &artifact, int ordinal);

/// The CUDA backend on the CUDA emulator (docs/emulator.md): the same backend code against an
/// emulated driver and cuBLASLt, on any machine.
std::unique_ptr<Backend> emulatorBackend(Artifact &artifact);

} // namespace sotc::runtime

#endif // SOTC_RUNTIME_BACKEND_H
