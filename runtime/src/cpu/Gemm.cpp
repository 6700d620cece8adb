#include "runtime/src/cpu/Gemm.h"

#include "runtime/src/Error.h"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace sotc::runtime::cpu {
namespace {

/// The exported names a CBLAS library's functions may have: plain, or with the `scipy_` prefix
/// of PyPI's scipy-openblas32 (32-bit integers, as cblas.h declares; its 64-bit sibling's
/// names end in `64_` and so never match).
constexpr const char *kPrefixes[] = {"", "scipy_"};

/// One dlopen'ed CBLAS library and what it says of itself.
struct Library {
  void *handle = nullptr;
  std::string prefix;
  std::string config; // openblas_get_config(), "" for another CBLAS
  std::string family; // openblas_get_corename(), "" for another CBLAS
  std::string file;   // where the loader found it

  template <typename F> F symbol(const char *name) const {
    return reinterpret_cast<F>(dlsym(handle, (prefix + name).c_str()));
  }
};

/// Opens `name` (a path, or a file name for the dynamic loader's search), or explains why not.
bool openLibrary(const std::string &name, Library &library, std::string &why) {
  library = {};
  library.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library.handle) {
    why = dlerror();
    return false;
  }
  for (const char *prefix : kPrefixes)
    if (dlsym(library.handle, (std::string(prefix) + "cblas_sgemm").c_str())) {
      library.prefix = prefix;
      break;
    }
  using Text = char *(*)();
  auto config = library.symbol<Text>("openblas_get_config");
  auto core = library.symbol<Text>("openblas_get_corename");
  if (config && core) {
    library.config = config();
    library.family = core();
  }
  Dl_info info{};
  auto sgemm = library.symbol<void *>("cblas_sgemm");
  library.file = sgemm && dladdr(sgemm, &info) && info.dli_fname ? info.dli_fname : name;
  return true;
}

/// Reopens an OpenBLAS that picked a generic kernel family on a CPU with AVX2, told the family
/// the CPU's instructions allow (OPENBLAS_CORETYPE, which OpenBLAS reads when it loads; set for
/// the load only). Leaves a family the user chose with OPENBLAS_CORETYPE alone. Returns the
/// family it was corrected from, or "".
std::string correctFamily(const std::string &name, Library &library) {
  std::string wanted = familyForThisCpu();
  if (library.family.empty() || !genericFamily(library.family) || wanted.empty() ||
      std::getenv("OPENBLAS_CORETYPE"))
    return "";
  std::string from = library.family, why;
  dlclose(library.handle);
  // Once per process, before any GEMM runs: the environment is changed only for this load.
  setenv("OPENBLAS_CORETYPE", wanted.c_str(), 1);
  bool reopened = openLibrary(name, library, why);
  unsetenv("OPENBLAS_CORETYPE");
  if (!reopened)
    library = {};
  // Still generic where another part of the process holds the library (dlclose kept it).
  return reopened && !genericFamily(library.family) ? from : "";
}

} // namespace

bool genericFamily(const std::string &name) {
  std::string family = name;
  for (char &c : family)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char *old : {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom",
                          "generic", "katmai", "coppermine", "northwood", "banias", "sandybridge"})
    if (family == old)
      return true;
  return false;
}

std::string familyForThisCpu() {
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512cd"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
  return "";
}

Cblas openCblas(const std::vector<std::string> &candidates) {
  Cblas blas;
  Library library;
  std::string name, tried;
  for (const std::string &candidate : candidates) {
    std::string why;
    if (openLibrary(candidate, library, why)) {
      name = candidate;
      break;
    }
    tried += (tried.empty() ? "" : "; ") + why;
  }
  if (!library.handle) {
    blas.failure = "a GEMM step needs CBLAS and none loads (" + tried +
                   "; scripts/setup.sh installs OpenBLAS, or name a CBLAS library in SOTC_CBLAS)";
    return blas;
  }
  std::string correctedFrom = correctFamily(name, library);
  if (!library.handle) {
    blas.failure = name + " does not load again with OPENBLAS_CORETYPE=" + familyForThisCpu();
    return blas;
  }
  blas.handle = library.handle;
  blas.sgemm = library.symbol<decltype(&cblas_sgemm)>("cblas_sgemm");
  blas.dgemm = library.symbol<decltype(&cblas_dgemm)>("cblas_dgemm");
  if (!blas.sgemm || !blas.dgemm) {
    blas.failure = library.file + " has no cblas_sgemm/dgemm (with 32-bit integers)";
    return blas;
  }
  blas.family = library.family;
  if (library.config.empty()) {
    blas.implementation = "CBLAS (" + library.file + ")";
    return blas;
  }
  blas.implementation = library.config + " (" + library.file + "), " + library.family + " kernels";
  if (!correctedFrom.empty())
    blas.implementation += " (corrected from its generic " + correctedFrom + " kernels)";
  else if (genericFamily(library.family) && !familyForThisCpu().empty())
    blas.implementation += std::string("; warning: generic kernels on a CPU with AVX2, several "
                                       "times slower (") +
                           (std::getenv("OPENBLAS_CORETYPE")
                                ? "OPENBLAS_CORETYPE chose them"
                                : "an OpenBLAS that knows this CPU fixes it") +
                           ")";
  return blas;
}

std::vector<std::string> cblasCandidates() {
  if (const char *named = std::getenv("SOTC_CBLAS"))
    return {named};
  std::vector<std::string> candidates;
  Dl_info self{};
  if (dladdr(reinterpret_cast<void *>(&cblasCandidates), &self) && self.dli_fname &&
      std::strchr(self.dli_fname, '/')) {
    std::string here = self.dli_fname;
    candidates.push_back(here.substr(0, here.rfind('/') + 1) + kBundledOpenblas);
  }
  candidates.push_back(kBundledOpenblas);
  candidates.push_back("libopenblas.so.0");
  return candidates;
}

namespace {

/// The process's CBLAS, opened when the first GEMM step runs, so that the runtime has no
/// link-time BLAS dependency and artifacts without GEMM steps run where there is none.
const Cblas &processCblas() {
  static const Cblas blas = openCblas(cblasCandidates());
  return blas;
}

template <typename T> void run(const GemmPlan &s, T *c, const T *a, const T *b, const T *bias) {
  const Cblas &blas = processCblas();
  if (!blas.failure.empty())
    throw Error("E8003", blas.failure);
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
  const Cblas &blas = processCblas();
  return blas.failure.empty() ? blas.implementation : "none: " + blas.failure;
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
