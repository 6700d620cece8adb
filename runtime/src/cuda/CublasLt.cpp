#include "runtime/src/cuda/CublasLt.h"
#include "runtime/src/cuda/CublasLtApi.h"
#include "runtime/src/cuda/LoadOnce.h"

#include "runtime/src/Artifact.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>

namespace sotc::runtime::cuda {
namespace {

using namespace lt;
constexpr size_t kWorkspaceBytes = 32 << 20;

Api load() {
  void *library = nullptr;
  std::string tried;
  const char *path = std::getenv("SOTC_CUBLASLT");
  for (const char *name : {path, "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"})
    if (name && !library) {
      library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      tried += (tried.empty() ? "" : ", ") + std::string(name);
    }
  if (!library)
    throw Error(ErrorCode::CannotRunHere, "the artifact has GEMM steps and cuBLASLt is not found (tried " + tried +
                             "; SOTC_CUBLASLT names the library)");
  Api api{};
  auto bind = [&](auto &entry, const char *name) {
    if (!(*reinterpret_cast<void **>(&entry) = dlsym(library, name)))
      throw Error(ErrorCode::CannotRunHere, std::string("cuBLASLt lacks ") + name);
  };
  bind(api.create, "cublasLtCreate");
  bind(api.destroy, "cublasLtDestroy");
  bind(api.descCreate, "cublasLtMatmulDescCreate");
  bind(api.descDestroy, "cublasLtMatmulDescDestroy");
  bind(api.descSet, "cublasLtMatmulDescSetAttribute");
  bind(api.layoutCreate, "cublasLtMatrixLayoutCreate");
  bind(api.layoutDestroy, "cublasLtMatrixLayoutDestroy");
  bind(api.layoutSet, "cublasLtMatrixLayoutSetAttribute");
  bind(api.preferenceCreate, "cublasLtMatmulPreferenceCreate");
  bind(api.preferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  bind(api.preferenceSet, "cublasLtMatmulPreferenceSetAttribute");
  bind(api.heuristic, "cublasLtMatmulAlgoGetHeuristic");
  bind(api.matmul, "cublasLtMatmul");
  return api;
}

void check(Status status, const char *what) {
  if (status != 0)
    throw Error(ErrorCode::RunFailed, std::string("cuBLASLt ") + what + " failed (status " +
                             std::to_string(status) + ")");
}

int dataType(GemmPlan::Type t) {
  switch (t) {
  case GemmPlan::Type::F16:
    return R16F;
  case GemmPlan::Type::BF16:
    return R16BF;
  case GemmPlan::Type::F32:
    return R32F;
  case GemmPlan::Type::F64:
    return R64F;
  }
  return R32F;
}

size_t elementBytes(GemmPlan::Type t) {
  return t == GemmPlan::Type::F64 ? 8 : t == GemmPlan::Type::F32 ? 4 : 2;
}

} // namespace

const Api &lt::cublasLt() { return loadOnce<Api, load>(); }

/// One planned matmul: C^T (n x m) = op(B^T) (n x k) * op(A^T) (k x m), column-major.
struct Planned {
  const GemmPlan *plan = nullptr;
  Desc desc = nullptr;
  Layout a = nullptr, b = nullptr, c = nullptr;
  Algo algo{};
  bool strided = false; // one call over the batch (else one call per product)
};

/// What the plans hold; freed by its destructor, also when planning fails half way.
struct Matmuls::Impl {
  const Driver &driver;
  const Api &api;
  Handle handle = nullptr;
  CUdeviceptr workspace = 0;
  Preference preference = nullptr;
  std::vector<Planned> planned;

  ~Impl() {
    for (Planned &m : planned) {
      for (Layout layout : {m.a, m.b, m.c})
        if (layout)
          api.layoutDestroy(layout);
      if (m.desc)
        api.descDestroy(m.desc);
    }
    if (preference)
      api.preferenceDestroy(preference);
    if (workspace)
      driver.cuMemFree(workspace);
    if (handle)
      api.destroy(handle);
  }
};

Matmuls::Matmuls(const std::vector<const GemmPlan *> &plans, const Driver &driver, const Api &api)
    : impl_(new Impl{driver, api}) {
  check(api.create(&impl_->handle), "create");
  driver.check(driver.cuMemAlloc(&impl_->workspace, kWorkspaceBytes), "cuMemAlloc");
  Preference &preference = impl_->preference;
  check(api.preferenceCreate(&preference), "preference");
  uint64_t workspace = kWorkspaceBytes;
  check(api.preferenceSet(preference, PreferenceMaxWorkspace, &workspace, sizeof(workspace)),
        "preference");
  for (const GemmPlan *p : plans) {
    if (p->activation == GemmPlan::Activation::GeluErf)
      throw Error(ErrorCode::FormatUnsupported, "a CUDA GEMM step with an erf-GELU epilogue (cuBLASLt's GELU is the "
                           "tanh form; sotc folds erf-GELU on the CPU only)");
    Planned &m = impl_->planned.emplace_back();
    m.plan = p;
    bool f64 = p->type == GemmPlan::Type::F64;
    int type = dataType(p->type);
    check(api.descCreate(&m.desc, f64 ? Compute64F : Compute32F, f64 ? R64F : R32F), "desc");
    // Swapped operands: cuBLASLt's A is our B, its B our A.
    int32_t opA = p->transposeB ? 1 : 0, opB = p->transposeA ? 1 : 0;
    check(api.descSet(m.desc, DescTransA, &opA, sizeof(opA)), "transa");
    check(api.descSet(m.desc, DescTransB, &opB, sizeof(opB)), "transb");
    uint32_t epilogue = (p->bias ? EpilogueBias : 0) |
                        (p->activation == GemmPlan::Activation::Relu       ? EpilogueRelu
                         : p->activation == GemmPlan::Activation::GeluTanh ? EpilogueGelu
                                                                           : 0);
    if (!epilogue)
      epilogue = EpilogueDefault;
    check(api.descSet(m.desc, DescEpilogue, &epilogue, sizeof(epilogue)), "epilogue");
    check(api.layoutCreate(&m.a, type, opA ? p->k : p->n, opA ? p->n : p->k, p->ldb), "layout");
    check(api.layoutCreate(&m.b, type, opB ? p->m : p->k, opB ? p->k : p->m, p->lda), "layout");
    check(api.layoutCreate(&m.c, type, p->n, p->m, p->ldc), "layout");
    m.strided = p->batch.size() == 1 && p->strideA[0] > 0 && p->strideB[0] > 0;
    if (m.strided) {
      int32_t count = static_cast<int32_t>(p->batch[0]);
      for (auto [layout, stride] : {std::pair{m.a, p->strideB[0]}, std::pair{m.b, p->strideA[0]},
                                    std::pair{m.c, p->strideC[0]}}) {
        int64_t offset = stride;
        check(api.layoutSet(layout, LayoutBatchCount, &count, sizeof(count)), "batch");
        check(api.layoutSet(layout, LayoutBatchOffset, &offset, sizeof(offset)), "batch");
      }
    }
    Heuristic result{};
    int found = 0;
    check(api.heuristic(impl_->handle, m.desc, m.a, m.b, m.c, m.c, preference, 1, &result, &found),
          "heuristic");
    if (found < 1)
      throw Error(ErrorCode::FormatUnsupported,
                  "cuBLASLt has no algorithm for a GEMM step of m=" + std::to_string(p->m) +
                      " n=" + std::to_string(p->n) + " k=" + std::to_string(p->k));
    m.algo = result.algo;
  }
}

Matmuls::~Matmuls() = default;

void Matmuls::run(size_t index, CUdeviceptr c, CUdeviceptr a, CUdeviceptr b, CUdeviceptr bias,
                  CUstream stream) {
  const Api &api = impl_->api;
  Planned &m = impl_->planned.at(index);
  const GemmPlan &p = *m.plan;
  if (p.bias) {
    void *pointer = reinterpret_cast<void *>(bias);
    check(api.descSet(m.desc, DescBiasPointer, &pointer, sizeof(pointer)), "bias");
  }
  // The epilogue adds the bias, where the CPU plan pre-fills C with it (beta 1).
  double alpha64 = p.alpha, beta64 = p.bias ? 0 : p.beta;
  float alpha32 = static_cast<float>(alpha64), beta32 = static_cast<float>(beta64);
  bool f64 = p.type == GemmPlan::Type::F64;
  const void *alpha = f64 ? static_cast<const void *>(&alpha64) : &alpha32;
  const void *beta = f64 ? static_cast<const void *>(&beta64) : &beta32;
  size_t bytes = elementBytes(p.type);
  int64_t calls = m.strided ? 1 : p.batchCount();
  for (int64_t i = 0; i < calls; ++i) {
    int64_t offA = 0, offB = 0, offC = 0;
    if (!m.strided)
      p.offsets(i, offA, offB, offC);
    auto at = [&](CUdeviceptr base, int64_t offset) {
      return reinterpret_cast<void *>(base + static_cast<CUdeviceptr>(offset) * bytes);
    };
    check(api.matmul(impl_->handle, m.desc, alpha, at(b, offB), m.a, at(a, offA), m.b, beta,
                     at(c, offC), m.c, at(c, offC), m.c, &m.algo,
                     reinterpret_cast<void *>(impl_->workspace), kWorkspaceBytes, stream),
          "matmul");
  }
}

} // namespace sotc::runtime::cuda
