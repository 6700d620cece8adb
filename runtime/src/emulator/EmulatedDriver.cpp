// The emulated CUDA driver: one sm_90 device whose memory is host memory, modules decoded from
// the PTX a fatbin carries, launches run by the interpreter.
#include "runtime/src/Error.h"
#include "runtime/src/emulator/EmulatedCuda.h"
#include "runtime/src/emulator/Interpreter.h"
#include "runtime/src/emulator/Ptx.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

namespace sotc::runtime::emulator {
namespace {

using cuda::CUcontext;
using cuda::CUdevice;
using cuda::CUdeviceptr;
using cuda::CUfunction;
using cuda::CUmodule;
using cuda::CUresult;
using cuda::CUstream;

enum : CUresult {
  Success = 0, InvalidValue = 1, OutOfMemory = 2, InvalidDevice = 101, InvalidImage = 200,
  NoBinaryForGpu = 209, InvalidPtx = 218, InvalidHandle = 400, NotFound = 500,
  LaunchOutOfResources = 701
};

/// What the last failing call on this thread knew beyond its code (cuGetErrorName adds it).
thread_local CUresult detailCode = Success;
thread_local std::string detail;

CUresult failWith(CUresult code, std::string why) {
  detailCode = code;
  detail = std::move(why);
  return code;
}

struct Loaded;

struct Function {
  const Kernel *kernel = nullptr;
  Loaded *module = nullptr;
  int maxDynamicShared = 0; // the kernel's opt-in (cuFuncSetAttribute); 0: 48 KiB in all
};

/// Shared memory per block: what any kernel has, and what one may opt in to (an sm_90's, or
/// SOTC_EMULATOR_SHARED_OPTIN's: another GPU's).
constexpr uint64_t kSharedBytes = 48 * 1024;
uint64_t sharedBytesOptin() {
  const char *bytes = std::getenv("SOTC_EMULATOR_SHARED_OPTIN");
  return bytes ? std::max<uint64_t>(std::strtoull(bytes, nullptr, 10), kSharedBytes) : 227 * 1024;
}

/// A loaded module: its PTX decoded, its variables in device memory.
struct Loaded {
  Module ptx;
  std::map<std::string, Function> functions;
  std::vector<CUdeviceptr> variables;
};

/// The device's memory: every allocation and module variable, by base address.
struct Device {
  std::mutex mutex;
  std::map<uint64_t, Region> regions;
  uint64_t used = 0;

  CUresult allocate(CUdeviceptr *p, size_t bytes, const std::string &what) {
    if (!p || bytes == 0)
      return failWith(InvalidValue, "cuMemAlloc of 0 bytes");
    // Read at every allocation, so that a test can shrink the device (0: the host's memory).
    const char *cap = std::getenv("SOTC_EMULATOR_MEMORY");
    uint64_t limit = cap ? std::strtoull(cap, nullptr, 10) : 0;
    std::lock_guard<std::mutex> lock(mutex);
    if (limit && used + bytes > limit)
      return failWith(OutOfMemory, "the emulated device has " +
                                       std::to_string(limit > used ? limit - used : 0) +
                                       " of its " + std::to_string(limit) +
                                       " bytes (SOTC_EMULATOR_MEMORY) left; " +
                                       std::to_string(bytes) + " asked");
    void *memory = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (!memory)
      return failWith(OutOfMemory, "the host has no " + std::to_string(bytes) + " bytes");
    uint64_t base = reinterpret_cast<uint64_t>(memory);
    regions[base] = Region{base, bytes, what};
    used += bytes;
    *p = base;
    return Success;
  }

  CUresult release(CUdeviceptr p) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = regions.find(p);
    if (it == regions.end())
      return failWith(InvalidValue, "cuMemFree of " + std::to_string(p) +
                                        ", which is no allocation's base");
    used -= it->second.bytes;
    regions.erase(it);
    std::free(reinterpret_cast<void *>(p));
    return Success;
  }

  bool contains(uint64_t a, uint64_t n, std::string *why) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = regions.upper_bound(a);
    if (it != regions.begin()) {
      --it;
      if (a + n <= it->second.base + it->second.bytes && a + n >= a)
        return true;
      if (why && a < it->second.base + it->second.bytes) {
        *why = std::to_string(a + n - (it->second.base + it->second.bytes)) +
               " bytes past the end of the " + std::to_string(it->second.bytes) + "-byte " +
               it->second.what;
        return false;
      }
    }
    if (why)
      *why = "not in any allocation of the emulated device";
    return false;
  }

  std::vector<Region> snapshot() {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<Region> out;
    out.reserve(regions.size());
    for (const auto &[base, r] : regions)
      out.push_back(r);
    return out;
  }
};

Device &device() {
  static Device d;
  return d;
}

template <typename T> T readAt(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

/// The PTX a fatbin carries (its newest), or the image itself when it is PTX text.
CUresult ptxOf(const void *image, std::string &ptx) {
  const auto *bytes = static_cast<const uint8_t *>(image);
  if (readAt<uint32_t>(bytes) != 0xBA55ED50u) {
    ptx = static_cast<const char *>(image);
    if (ptx.find(".version") == std::string::npos)
      return failWith(InvalidImage, "neither a fatbin nor PTX text");
    return Success;
  }
  size_t offset = readAt<uint16_t>(bytes + 6);
  uint64_t end = offset + readAt<uint64_t>(bytes + 8);
  bool compressed = false;
  uint32_t newest = 0;
  while (offset + 64 <= end) {
    const uint8_t *e = bytes + offset;
    uint16_t kind = readAt<uint16_t>(e);
    uint32_t headerSize = readAt<uint32_t>(e + 4);
    uint64_t payloadSize = readAt<uint64_t>(e + 8);
    uint32_t arch = readAt<uint32_t>(e + 28);
    uint64_t flags = readAt<uint64_t>(e + 40);
    if (headerSize < 64 || offset + headerSize + payloadSize > end)
      return failWith(InvalidImage, "a malformed fatbin entry at byte " + std::to_string(offset));
    if (kind == 1 && arch >= newest) {
      if (flags & 0xa000) {
        compressed = true;
      } else {
        const char *text = reinterpret_cast<const char *>(e + headerSize);
        ptx.assign(text, strnlen(text, payloadSize));
        newest = arch;
      }
    }
    offset += headerSize + payloadSize;
  }
  if (ptx.empty())
    return failWith(NoBinaryForGpu,
                    compressed ? "the fatbin's PTX is compressed (written by an older sotc: "
                                 "recompile; the emulator reads uncompressed PTX)"
                               : "the fatbin carries no PTX (the emulator runs PTX)");
  return Success;
}

// --- the driver entry points -------------------------------------------------------------

int contextToken;
CUcontext const theContext = reinterpret_cast<CUcontext>(&contextToken);

CUresult cuInit(unsigned) { return Success; }

CUresult cuGetErrorName(CUresult r, const char **name) {
  static const std::map<CUresult, const char *> names = {
      {Success, "CUDA_SUCCESS"},
      {InvalidValue, "CUDA_ERROR_INVALID_VALUE"},
      {OutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY"},
      {InvalidDevice, "CUDA_ERROR_INVALID_DEVICE"},
      {InvalidImage, "CUDA_ERROR_INVALID_IMAGE"},
      {NoBinaryForGpu, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
      {InvalidPtx, "CUDA_ERROR_INVALID_PTX"},
      {InvalidHandle, "CUDA_ERROR_INVALID_HANDLE"},
      {NotFound, "CUDA_ERROR_NOT_FOUND"},
      {LaunchOutOfResources, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"}};
  auto it = names.find(r);
  if (!name || it == names.end())
    return InvalidValue;
  thread_local std::string composed;
  composed = it->second;
  if (r == detailCode && !detail.empty())
    composed += " (" + detail + ")";
  *name = composed.c_str();
  return Success;
}

CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return Success;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  if (ordinal != 0)
    return failWith(InvalidDevice, "the emulator has one device, 0");
  *d = 0;
  return Success;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice) {
  if (attribute == cuda::kComputeCapabilityMajor)
    *value = 9;
  else if (attribute == cuda::kComputeCapabilityMinor)
    *value = 0;
  else if (attribute == cuda::kMaxSharedBytesPerBlockOptin)
    *value = static_cast<int>(sharedBytesOptin());
  else
    return failWith(InvalidValue, "the emulator knows no device attribute " +
                                      std::to_string(attribute));
  return Success;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice) {
  *c = theContext;
  return Success;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice) { return Success; }
CUresult cuCtxPushCurrent(CUcontext c) { return c == theContext ? Success : InvalidValue; }
CUresult cuCtxPopCurrent(CUcontext *c) {
  if (c)
    *c = theContext;
  return Success;
}

CUresult cuModuleUnload(CUmodule m);

CUresult cuModuleLoadData(CUmodule *m, const void *image) {
  if (!m || !image)
    return failWith(InvalidValue, "cuModuleLoadData without an image");
  std::string text;
  if (CUresult r = ptxOf(image, text))
    return r;
  auto loaded = std::make_unique<Loaded>();
  try {
    loaded->ptx = parsePtx(text);
  } catch (const std::exception &e) {
    return failWith(InvalidPtx, std::string("PTX ") + e.what());
  }
  // Module variables live in device memory, initialized; kernels read their addresses.
  std::map<std::string, CUdeviceptr> addresses;
  for (const GlobalVariable &g : loaded->ptx.globals) {
    CUdeviceptr p = 0;
    if (CUresult r = device().allocate(&p, std::max<uint64_t>(g.bytes, 1), "module variable " + g.name)) {
      cuModuleUnload(reinterpret_cast<CUmodule>(loaded.release()));
      return r;
    }
    loaded->variables.push_back(p);
    std::memset(reinterpret_cast<void *>(p), 0, g.bytes);
    std::memcpy(reinterpret_cast<void *>(p), g.init.data(), g.init.size());
    addresses[g.name] = p;
  }
  for (auto &[name, kernel] : loaded->ptx.kernels) {
    for (const auto &[reg, variable] : kernel.globals)
      kernel.constants.push_back({reg, addresses.at(variable)});
    loaded->functions[name] = Function{&kernel, loaded.get()};
  }
  *m = reinterpret_cast<CUmodule>(loaded.release());
  return Success;
}

CUresult cuModuleUnload(CUmodule m) {
  std::unique_ptr<Loaded> loaded(reinterpret_cast<Loaded *>(m));
  if (!loaded)
    return failWith(InvalidHandle, "cuModuleUnload of no module");
  for (CUdeviceptr p : loaded->variables)
    device().release(p);
  return Success;
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  auto *loaded = reinterpret_cast<Loaded *>(m);
  if (!f || !loaded || !name)
    return failWith(InvalidValue, "cuModuleGetFunction without a module or name");
  auto it = loaded->functions.find(name);
  if (it == loaded->functions.end())
    return failWith(NotFound, std::string("the module has no kernel ") + name);
  *f = reinterpret_cast<CUfunction>(&it->second);
  return Success;
}

CUresult cuFuncSetAttribute(CUfunction f, int attribute, int value) {
  auto *fn = reinterpret_cast<Function *>(f);
  if (!fn || !fn->kernel)
    return failWith(InvalidHandle, "cuFuncSetAttribute of no kernel");
  if (attribute != cuda::kFuncMaxDynamicSharedBytes)
    return failWith(InvalidValue,
                    "the emulator knows no function attribute " + std::to_string(attribute));
  if (value < 0 || fn->kernel->sharedBytes + uint64_t(value) > sharedBytesOptin())
    return failWith(InvalidValue, fn->kernel->name + ": " + std::to_string(value) +
                                      " bytes of dynamic shared memory (a block has at most " +
                                      std::to_string(sharedBytesOptin()) + ")");
  fn->maxDynamicShared = value;
  return Success;
}

CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes) { return device().allocate(p, bytes, "allocation"); }
CUresult cuMemFree(CUdeviceptr p) { return device().release(p); }

CUresult copyCheck(uint64_t address, size_t bytes, const char *what) {
  std::string why;
  if (bytes && !device().contains(address, bytes, &why))
    return failWith(InvalidValue, std::string(what) + " of " + std::to_string(bytes) +
                                      " bytes: " + why);
  return Success;
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr to, const void *from, size_t bytes, CUstream) {
  if (CUresult r = copyCheck(to, bytes, "a copy to the device"))
    return r;
  std::memcpy(reinterpret_cast<void *>(to), from, bytes);
  return Success;
}

CUresult cuMemcpyDtoHAsync(void *to, CUdeviceptr from, size_t bytes, CUstream) {
  if (CUresult r = copyCheck(from, bytes, "a copy from the device"))
    return r;
  std::memcpy(to, reinterpret_cast<const void *>(from), bytes);
  return Success;
}

CUresult cuMemcpyDtoDAsync(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUstream) {
  if (CUresult r = copyCheck(from, bytes, "a device-to-device copy's source"))
    return r;
  if (CUresult r = copyCheck(to, bytes, "a device-to-device copy's destination"))
    return r;
  std::memmove(reinterpret_cast<void *>(to), reinterpret_cast<const void *>(from), bytes);
  return Success;
}

CUresult cuStreamSynchronize(CUstream) { return Success; } // launches and copies are synchronous

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned sharedBytes, CUstream, void **params,
                        void **extra) {
  auto *fn = reinterpret_cast<Function *>(f);
  if (!fn || !fn->kernel)
    return failWith(InvalidHandle, "cuLaunchKernel of no kernel");
  const Kernel &k = *fn->kernel;
  uint64_t threads = uint64_t(bx) * by * bz;
  if (extra)
    return failWith(InvalidValue, "the emulator takes kernel parameters only as kernelParams");
  if (!params && !k.paramSizes.empty())
    return failWith(InvalidValue, k.name + " takes " + std::to_string(k.paramSizes.size()) +
                                      " parameters and the launch gives none");
  if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535 || bx > 1024 ||
      by > 1024 || bz > 64)
    return failWith(InvalidValue, "grid (" + std::to_string(gx) + "," + std::to_string(gy) +
                                      "," + std::to_string(gz) + ") or block (" +
                                      std::to_string(bx) + "," + std::to_string(by) + "," +
                                      std::to_string(bz) + ") out of CUDA's range");
  uint64_t maxThreads = uint64_t(k.maxThreads[0]) * k.maxThreads[1] * k.maxThreads[2];
  if (threads > 1024 || (maxThreads && (bx > k.maxThreads[0] || by > k.maxThreads[1] ||
                                         bz > k.maxThreads[2])))
    return failWith(LaunchOutOfResources,
                    k.name + ": a block of " + std::to_string(threads) + " threads (at most " +
                        std::to_string(maxThreads ? maxThreads : 1024) + ")");
  // Beyond 48 KiB only as far as the kernel opted in (as CUDA: an invalid value).
  if (k.sharedBytes + sharedBytes > kSharedBytes && sharedBytes > uint64_t(fn->maxDynamicShared))
    return failWith(InvalidValue, k.name + " needs " + std::to_string(k.sharedBytes + sharedBytes) +
                                      " shared bytes per block (at most " +
                                      std::to_string(kSharedBytes) + ", or " +
                                      std::to_string(k.sharedBytes + fn->maxDynamicShared) +
                                      " as it opted in)");
  LaunchConfig config;
  config.grid = {gx, gy, gz};
  config.block = {bx, by, bz};
  config.dynamicSharedBytes = sharedBytes;
  config.params = params;
  try {
    const char *threads = std::getenv("SOTC_EMULATOR_THREADS");
    runKernel(k, config, device().snapshot(),
              threads ? static_cast<unsigned>(std::strtoul(threads, nullptr, 10)) : 0);
  } catch (const Fault &fault) {
    throw Error(ErrorCode::EmulatorFault, std::string("CUDA emulator: ") + fault.what());
  }
  return Success;
}

} // namespace

const cuda::Driver &emulatedDriver() {
  static const cuda::Driver table{cuInit,
                                  cuGetErrorName,
                                  cuDeviceGetCount,
                                  cuDeviceGet,
                                  cuDeviceGetAttribute,
                                  cuDevicePrimaryCtxRetain,
                                  cuDevicePrimaryCtxRelease,
                                  cuCtxPushCurrent,
                                  cuCtxPopCurrent,
                                  cuModuleLoadData,
                                  cuModuleUnload,
                                  cuModuleGetFunction,
                                  cuMemAlloc,
                                  cuMemFree,
                                  cuMemcpyHtoDAsync,
                                  cuMemcpyDtoHAsync,
                                  cuMemcpyDtoDAsync,
                                  cuStreamSynchronize,
                                  cuLaunchKernel,
                                  cuFuncSetAttribute};
  return table;
}

bool deviceRange(uint64_t address, uint64_t bytes, std::string *why) {
  return device().contains(address, bytes, why);
}

} // namespace sotc::runtime::emulator
