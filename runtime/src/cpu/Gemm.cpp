#include "runtime/src/cpu/Gemm.h"

#include "runtime/src/Error.h"

#include <cblas.h> // the types only: the functions come from dlopen

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace sotc::runtime::cpu {
namespace {

/// CBLAS, loaded when the first GEMM step runs (SOTC_CBLAS names the library, else OpenBLAS),
/// so that the runtime has no link-time BLAS dependency and artifacts without GEMM steps run
/// where there is none.
struct Cblas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  std::string implementation; // gemmImplementation()
};

/// OpenBLAS's kernel families that use no AVX2 (its generic fallbacks on CPUs it predates).
bool generic(std::string family) {
  for (char &c : family)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char *old : {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom",
                          "generic", "katmai", "coppermine", "northwood", "banias", "sandybridge"})
    if (family == old)
      return true;
  return false;
}

/// "OpenBLAS <config> (libopenblas.so.0), SkylakeX kernels" for the library loaded as `name`.
std::string describe(void *library, const std::string &name) {
  using Text = char *(*)();
  auto config = reinterpret_cast<Text>(dlsym(library, "openblas_get_config"));
  auto core = reinterpret_cast<Text>(dlsym(library, "openblas_get_corename"));
  if (!config || !core)
    return "CBLAS (" + name + ")";
  std::string family = core();
  std::string text = std::string(config()) + " (" + name + "), " + family + " kernels";
  if (generic(family) && __builtin_cpu_supports("avx2"))
    text += "; warning: generic kernels on a CPU with AVX2, several times slower (an OpenBLAS "
            "that knows this CPU, or OPENBLAS_CORETYPE=Haswell or SkylakeX, fixes it)";
  return text;
}

Cblas &loadCblas(std::string &failure) {
  static std::once_flag once;
  static Cblas loaded;
  static std::string why;
  std::call_once(once, [] {
    const char *path = std::getenv("SOTC_CBLAS");
    void *library = dlopen(path ? path : "libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      why = std::string("a GEMM step needs CBLAS and none loads (") + dlerror() +
            "; install OpenBLAS or name a CBLAS library in SOTC_CBLAS)";
      return;
    }
    loaded.implementation = describe(library, path ? path : "libopenblas.so.0");
    loaded.sgemm = reinterpret_cast<decltype(&cblas_sgemm)>(dlsym(library, "cblas_sgemm"));
    loaded.dgemm = reinterpret_cast<decltype(&cblas_dgemm)>(dlsym(library, "cblas_dgemm"));
    if (!loaded.sgemm || !loaded.dgemm)
      why = std::string(path ? path : "libopenblas.so.0") + " has no cblas_sgemm/dgemm";
  });
  failure = why;
  return loaded;
}

const Cblas &cblas() {
  std::string failure;
  const Cblas &loaded = loadCblas(failure);
  if (!failure.empty())
    throw Error("E8003", failure);
  return loaded;
}

template <typename T> void run(const GemmPlan &s, T *c, const T *a, const T *b, const T *bias) {
  const Cblas &blas = cblas();
  CBLAS_TRANSPOSE ta = s.transposeA ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE tb = s.transposeB ? CblasTrans : CblasNoTrans;
  for (int64_t i = 0, count = s.batchCount(); i < count; ++i) {
    int64_t offA, offB, offC;
    s.offsets(i, offA, offB, offC);
    T *out = c + offC;
    if (bias)
      for (int64_t row = 0; row < s.m; ++row)
        std::memcpy(out + row * s.ldc, bias, sizeof(T) * s.n);
    if constexpr (std::is_same_v<T, float>)
      blas.sgemm(CblasRowMajor, ta, tb, s.m, s.n, s.k, static_cast<float>(s.alpha), a + offA,
                  s.lda, b + offB, s.ldb, static_cast<float>(s.beta), out, s.ldc);
    else
      blas.dgemm(CblasRowMajor, ta, tb, s.m, s.n, s.k, s.alpha, a + offA, s.lda, b + offB, s.ldb,
                  s.beta, out, s.ldc);
  }
}

} // namespace

std::string gemmImplementation() {
  std::string failure;
  const Cblas &loaded = loadCblas(failure);
  return failure.empty() ? loaded.implementation : "none: " + failure;
}

std::string unsupported(const GemmPlan &s) {
  if (s.type != GemmPlan::Type::F32 && s.type != GemmPlan::Type::F64)
    return "a CPU GEMM step of float16 or bfloat16 (float32 and float64 are run)";
  if (s.activation != GemmPlan::Activation::None)
    return "a CPU GEMM step with an activation epilogue (cuBLASLt's; CUDA only)";
  return "";
}

void runGemm(const GemmPlan &s, void *c, const void *a, const void *b, const void *bias) {
  if (s.type == GemmPlan::Type::F32)
    run(s, static_cast<float *>(c), static_cast<const float *>(a), static_cast<const float *>(b),
        static_cast<const float *>(bias));
  else
    run(s, static_cast<double *>(c), static_cast<const double *>(a), static_cast<const double *>(b),
        static_cast<const double *>(bias));
}

} // namespace sotc::runtime::cpu
