//===- EmulatedCuda.h - A CUDA driver and cuBLASLt that run on the CPU ----------------------===//
//
// The CUDA emulator as the CUDA backend sees it: the same driver and cuBLASLt entry points it
// calls on a GPU (cuda::Driver, cuda::lt::Api), implemented on host memory. One emulated
// device (sm_90): allocations are host memory the emulator tracks, copies are memcpy, a
// module is the PTX of a fatbin (or PTX text) decoded by parsePtx, a launch runs the kernel
// through the interpreter on the calling thread, synchronously, and a matmul runs the
// column-major cuBLASLt semantics with float (or double) accumulation.
//
// Failures are the driver's own result codes (cuGetErrorName adds what the emulator knows);
// a fault a kernel commits (out of bounds, a race, a barrier or shuffle misuse) is thrown as
// E8007 from the launch, where a GPU would report CUDA_ERROR_ILLEGAL_ADDRESS at a later
// synchronization. SOTC_EMULATOR_MEMORY caps the device's memory (bytes), and
// SOTC_EMULATOR_THREADS the host threads that run a launch's blocks.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_EMULATOR_EMULATEDCUDA_H
#define SOTC_RUNTIME_EMULATOR_EMULATEDCUDA_H

#include "runtime/src/cuda/CublasLtApi.h"
#include "runtime/src/cuda/Driver.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace sotc::runtime::emulator {

const cuda::Driver &emulatedDriver();
const cuda::lt::Api &emulatedCublasLt();

/// Whether [address, address + bytes) lies in one live allocation of the emulated device;
/// else why not ("12 bytes past the end of the 512-byte allocation at 0x...").
bool deviceRange(uint64_t address, uint64_t bytes, std::string *why);

} // namespace sotc::runtime::emulator

#endif // SOTC_RUNTIME_EMULATOR_EMULATEDCUDA_H
