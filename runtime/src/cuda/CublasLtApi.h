//===- CublasLtApi.h - The cuBLASLt entry points the CUDA backend calls ---------------------===//
//
// cuBLASLt's ABI (cublasLt.h, cublas_api.h, library_types.h), declared here so that building
// the runtime needs no CUDA headers, and the table of the entry points the backend uses:
// resolved from libcublasLt with dlopen (cublasLt()), or the CUDA emulator's
// (emulator::emulatedCublasLt()).
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_CUDA_CUBLASLTAPI_H
#define SOTC_RUNTIME_CUDA_CUBLASLTAPI_H

#include "runtime/src/cuda/Driver.h"

#include <cstddef>
#include <cstdint>

namespace sotc::runtime::cuda::lt {

using Status = int;
using Handle = struct LtContext *;
using Desc = struct LtDesc *;
using Layout = struct LtLayout *;
using Preference = struct LtPreference *;
struct Algo {
  uint64_t data[8];
};
struct Heuristic {
  Algo algo;
  size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
};
enum : int { R32F = 0, R64F = 1, R16F = 2, R16BF = 14 }; // cudaDataType_t
enum : int { Compute32F = 68, Compute64F = 70 };         // cublasComputeType_t
enum : int { DescTransA = 3, DescTransB = 4, DescEpilogue = 7, DescBiasPointer = 8 };
enum : int { LayoutBatchCount = 5, LayoutBatchOffset = 6 }; // cublasLtMatrixLayoutAttribute_t
enum : int { PreferenceMaxWorkspace = 1 };                  // cublasLtMatmulPreferenceAttributes_t
enum : uint32_t { EpilogueDefault = 1, EpilogueRelu = 2, EpilogueBias = 4, EpilogueGelu = 32 };
enum : Status { StatusSuccess = 0, StatusNotInitialized = 1, StatusAllocFailed = 3,
                StatusInvalidValue = 7, StatusExecutionFailed = 13, StatusNotSupported = 15 };

struct Api {
  Status (*create)(Handle *);
  Status (*destroy)(Handle);
  Status (*descCreate)(Desc *, int, int);
  Status (*descDestroy)(Desc);
  Status (*descSet)(Desc, int, const void *, size_t);
  Status (*layoutCreate)(Layout *, int, uint64_t, uint64_t, int64_t);
  Status (*layoutDestroy)(Layout);
  Status (*layoutSet)(Layout, int, const void *, size_t);
  Status (*preferenceCreate)(Preference *);
  Status (*preferenceDestroy)(Preference);
  Status (*preferenceSet)(Preference, int, const void *, size_t);
  Status (*heuristic)(Handle, Desc, Layout, Layout, Layout, Layout, Preference, int, Heuristic *,
                      int *);
  Status (*matmul)(Handle, Desc, const void *, const void *, Layout, const void *, Layout,
                   const void *, const void *, Layout, void *, Layout, const Algo *, void *, size_t,
                   CUstream);
};

/// cuBLASLt loaded once per process (SOTC_CUBLASLT, else libcublasLt.so.13, .12, .11); E8003
/// without it.
const Api &cublasLt();

} // namespace sotc::runtime::cuda::lt

#endif // SOTC_RUNTIME_CUDA_CUBLASLTAPI_H
