//===- Driver.h - The CUDA driver API, loaded at run time -----------------------------------===//
//
// The few driver entry points the CUDA backend calls, resolved from libcuda.so.1 with dlopen
// (SOTC_CUDA_DRIVER names another file) so that the runtime has no link-time CUDA dependency:
// a machine without a GPU runs CPU artifacts and gets E8003 for CUDA ones. The types are the
// driver ABI's (cuda.h), declared here so that building the runtime needs no CUDA headers.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_CUDA_DRIVER_H
#define SOTC_RUNTIME_CUDA_DRIVER_H

#include <cstddef>
#include <string>

namespace sotc::runtime::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;

constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76; // CUdevice_attribute
/// CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: what a kernel may opt in to.
constexpr int kMaxSharedBytesPerBlockOptin = 97;
/// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: a kernel's opt-in beyond 48 KiB.
constexpr int kFuncMaxDynamicSharedBytes = 8;

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);

  /// Throws E8005 naming `what` and the driver's error name unless `result` is success.
  void check(CUresult result, const char *what) const;
};

/// The driver's name for a result code ("CUDA_ERROR_NO_DEVICE").
std::string errorName(const Driver &driver, CUresult result);

/// The driver, loaded and initialized once per process; E8003 when there is none, or when it
/// cannot initialize (no device, a stub library, a driver too old).
const Driver &driver();

} // namespace sotc::runtime::cuda

#endif // SOTC_RUNTIME_CUDA_DRIVER_H
