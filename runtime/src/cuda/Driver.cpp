#include "runtime/src/cuda/Driver.h"

#include "runtime/src/Artifact.h"
#include "runtime/src/cuda/LoadOnce.h"

#include <dlfcn.h>

#include <cstdlib>

namespace sotc::runtime::cuda {

/// The driver's name for an error, or (a stub library names none) ours for the ones that
/// mean "no usable GPU here".
std::string errorName(const Driver &d, CUresult r) {
  const char *name = nullptr;
  if (d.cuGetErrorName && d.cuGetErrorName(r, &name) == 0 && name)
    return name;
  switch (r) {
  case 34:
    return "CUDA_ERROR_STUB_LIBRARY (the toolkit's stub, not a driver)";
  case 35:
    return "CUDA_ERROR_INSUFFICIENT_DRIVER";
  case 100:
    return "CUDA_ERROR_NO_DEVICE";
  }
  return "CUDA error " + std::to_string(r);
}

namespace {

/// Resolves every entry point (by its versioned ABI name) and initializes the driver.
Driver load() {
  const char *path = std::getenv("SOTC_CUDA_DRIVER");
  void *library = dlopen(path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    throw Error(ErrorCode::CannotRunHere, std::string("no CUDA driver on this machine (") + dlerror() + ")");
  Driver d{};
  auto bind = [&](auto &entry, const char *name) {
    if (!(*reinterpret_cast<void **>(&entry) = dlsym(library, name)))
      throw Error(ErrorCode::CannotRunHere, std::string("the CUDA driver lacks ") + name + " (too old?)");
  };
  bind(d.cuInit, "cuInit");
  bind(d.cuGetErrorName, "cuGetErrorName");
  bind(d.cuDeviceGetCount, "cuDeviceGetCount");
  bind(d.cuDeviceGet, "cuDeviceGet");
  bind(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  bind(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  bind(d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  bind(d.cuCtxPushCurrent, "cuCtxPushCurrent_v2");
  bind(d.cuCtxPopCurrent, "cuCtxPopCurrent_v2");
  bind(d.cuModuleLoadData, "cuModuleLoadData");
  bind(d.cuModuleUnload, "cuModuleUnload");
  bind(d.cuModuleGetFunction, "cuModuleGetFunction");
  bind(d.cuMemAlloc, "cuMemAlloc_v2");
  bind(d.cuMemFree, "cuMemFree_v2");
  bind(d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  bind(d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  bind(d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  bind(d.cuStreamSynchronize, "cuStreamSynchronize");
  bind(d.cuLaunchKernel, "cuLaunchKernel");
  bind(d.cuFuncSetAttribute, "cuFuncSetAttribute");
  if (CUresult r = d.cuInit(0))
    throw Error(ErrorCode::CannotRunHere, "the CUDA driver does not initialize (cuInit: " + errorName(d, r) + ")");
  return d; // the library stays loaded for the process
}

} // namespace

void Driver::check(CUresult result, const char *what) const {
  if (result == 0)
    return;
  throw Error(ErrorCode::RunFailed, std::string(what) + " failed: " + errorName(*this, result));
}

const Driver &driver() { return loadOnce<Driver, load>(); }

} // namespace sotc::runtime::cuda
