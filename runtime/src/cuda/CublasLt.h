//===- CublasLt.h - GEMM steps on a CUDA device, through cuBLASLt loaded at run time --------===//
//
// Each GEMM step becomes one cuBLASLt matmul, planned once when the artifact opens (layouts,
// transposes, epilogue, the heuristic's algorithm) and issued on the run's stream. Row-major
// C = A * B is computed as the column-major C^T = B^T * A^T, which makes the bias a vector
// over the rows of cuBLASLt's D, as its BIAS epilogues want.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_CUDA_CUBLASLT_H
#define SOTC_RUNTIME_CUDA_CUBLASLT_H

#include "runtime/src/GemmPlan.h"
#include "runtime/src/cuda/CublasLtApi.h"
#include "runtime/src/cuda/Driver.h"

#include <memory>
#include <vector>

namespace sotc::runtime::cuda {

class Matmuls {
public:
  /// Plans `plans` with `api` (E8002 when cuBLASLt has no algorithm for one); the workspace
  /// comes from `driver`.
  Matmuls(const std::vector<const GemmPlan *> &plans, const Driver &driver, const lt::Api &api);
  ~Matmuls();
  /// Runs plan `index` (its position in the constructor's list).
  void run(size_t index, CUdeviceptr c, CUdeviceptr a, CUdeviceptr b, CUdeviceptr bias,
           CUstream stream);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace sotc::runtime::cuda

#endif // SOTC_RUNTIME_CUDA_CUBLASLT_H
