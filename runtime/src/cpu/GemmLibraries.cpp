#include "runtime/src/cpu/GemmLibraries.h"

#include "runtime/src/cpu/OnednnPrimitives.h"

#include <dlfcn.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace sotc::runtime::cpu {
namespace {

/// The exported names a CBLAS library's functions may have: plain, or with the `scipy_` prefix
/// of PyPI's scipy-openblas32 (32-bit integers, as cblas.h declares; its 64-bit sibling's
/// names end in `64_` and so never match).
constexpr const char *kPrefixes[] = {"", "scipy_"};

/// Sets an environment variable the library about to load reads when it loads, and removes it
/// again: once per process, before any GEMM runs, and never one the user set.
class LoadTimeVariable {
public:
  LoadTimeVariable(const char *name, const std::string &value) : name_(name) {
    setenv(name, value.c_str(), 1);
  }
  ~LoadTimeVariable() { unsetenv(name_); }
  LoadTimeVariable(const LoadTimeVariable &) = delete;
  LoadTimeVariable &operator=(const LoadTimeVariable &) = delete;

private:
  const char *name_;
};

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

/// The first of `candidates` (paths, or file names for the dynamic loader's search) that
/// loads, and its name; why each one before it did not, in `tried`.
void *openFirst(const std::vector<std::string> &candidates, std::string &name,
                std::string &tried) {
  for (const std::string &candidate : candidates) {
    if (void *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      name = candidate;
      return handle;
    }
    tried += (tried.empty() ? "" : "; ") + std::string(dlerror());
  }
  return nullptr;
}

/// The file the loader found `symbol`'s library in, else `name`.
std::string fileOf(void *symbol, const std::string &name) {
  Dl_info info{};
  return symbol && dladdr(symbol, &info) && info.dli_fname ? info.dli_fname : name;
}

/// What the CBLAS library `handle`, opened as `name`, says of itself.
Library describe(void *handle, const std::string &name) {
  Library library;
  library.handle = handle;
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
  library.file = fileOf(library.symbol<void *>("cblas_sgemm"), name);
  return library;
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
  std::string from = library.family;
  dlclose(library.handle);
  void *reopened;
  {
    LoadTimeVariable coretype("OPENBLAS_CORETYPE", wanted);
    reopened = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  library = reopened ? describe(reopened, name) : Library{};
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
  std::string name, tried;
  void *handle = openFirst(candidates, name, tried);
  if (!handle) {
    blas.failure = "a GEMM step needs CBLAS and none loads (" + tried +
                   "; scripts/setup.sh installs OpenBLAS, or name a CBLAS library in SOTC_CBLAS)";
    return blas;
  }
  Library library = describe(handle, name);
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
    // The folder of a path ending in '/' or a file name, with its '/'.
    auto folder = [](const std::string &path) {
      size_t slash = path.find_last_of('/', path.size() >= 2 ? path.size() - 2 : 0);
      return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
    };
    std::string dir = folder(self.dli_fname);
    candidates.push_back(dir + kBundledOpenblas);
    // Installed by pip: the sotc wheels require scipy-openblas32, whose package sits in the
    // site-packages above sotc/libsotc_runtime.so and sotc_compiler/bin/sotc.
    std::string one = folder(dir), two = folder(one);
    for (const std::string &up : {one, two})
      if (!up.empty())
        candidates.push_back(up + "scipy_openblas32/lib/" + kBundledOpenblas);
  }
  candidates.push_back(kBundledOpenblas);
  candidates.push_back("libopenblas.so.0");
  return candidates;
}

namespace {

/// oneDNN's names for the instruction sets dnnl_get_effective_cpu_isa reports (bit sets: each
/// includes the ones it extends), widest first.
struct IsaName {
  unsigned bits;
  const char *name;
};
constexpr IsaName kIsas[] = {{0x3e7, "avx512_core_amx"}, {0xe7, "avx512_core_bf16"},
                             {0x67, "avx512_core_vnni"}, {0x27, "avx512_core"},
                             {0x407, "avx2_vnni"},        {0x7, "avx2"},
                             {0x3, "avx"},                {0x1, "sse41"}};

} // namespace

Onednn openOnednn(const std::vector<std::string> &candidates) {
  Onednn onednn;
  void *handle;
  std::string name, tried;
  {
    // OpenMP threads wait for the next parallel region by spinning briefly, then sleep.
    // libgomp's default spin (300000 rounds, milliseconds) takes the cores from the kernels
    // and batched GEMMs that run on sotc's own threads in between (the transformer block
    // ran 15% slower so); sleeping at once (OMP_WAIT_POLICY=PASSIVE) makes every oneDNN step
    // wake its threads, tens of microseconds each on a VM: a CNN's back-to-back convolutions
    // ran 2x slower so (MobileNetV2 at batch 1 on a 2-core Xeon: 9.2-10.2 ms against
    // 4.6-5.2 with a short spin; BERT, GPT and the transformer block the same within noise).
    // Only where libgomp is not loaded yet: its variables are read when it loads.
    std::optional<LoadTimeVariable> shortSpin;
    if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT"))
      shortSpin.emplace("GOMP_SPINCOUNT", "30000");
    handle = openFirst(candidates, name, tried);
  }
  if (!handle) {
    onednn.failure = "no oneDNN loads (" + tried + ")";
    return onednn;
  }
  struct Version {
    int major, minor, patch;
    const char *hash;
    unsigned cpuRuntime, gpuRuntime;
  };
  auto version = reinterpret_cast<const Version *(*)()>(dlsym(handle, "dnnl_version"));
  auto isa = reinterpret_cast<int (*)()>(dlsym(handle, "dnnl_get_effective_cpu_isa"));
  onednn.sgemm = reinterpret_cast<decltype(onednn.sgemm)>(dlsym(handle, "dnnl_sgemm"));
  if (!version || !isa || !onednn.sgemm) {
    dlclose(handle);
    onednn = {};
    onednn.failure =
        "the oneDNN loaded has no dnnl_sgemm, dnnl_version or dnnl_get_effective_cpu_isa";
    return onednn;
  }
  // dlsym on the handle searches oneDNN's dependencies too: its OpenMP runtime.
  onednn.setThreads = reinterpret_cast<void (*)(int)>(dlsym(handle, "omp_set_num_threads"));
  onednn.maxThreads = reinterpret_cast<int (*)()>(dlsym(handle, "omp_get_max_threads"));
  onednn.handle = handle;
  const Version *v = version();
  unsigned bits = static_cast<unsigned>(isa());
  onednn.isa = "0x" + [&] {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%x", bits);
    return std::string(hex);
  }();
  for (const IsaName &known : kIsas)
    if ((bits & known.bits) == known.bits) {
      onednn.isa = known.name;
      break;
    }
  std::string file = fileOf(reinterpret_cast<void *>(onednn.sgemm), name);
  onednn.implementation = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) +
                          "." + std::to_string(v->patch) + " " +
                          (whyNoPrimitives(onednn).empty() ? "matmul primitives and " : "") +
                          "dnnl_sgemm (" + file + "), " + onednn.isa + " kernels";
  bool usesAvx2 = (bits & 0x7) == 0x7;
  if (!usesAvx2 && !familyForThisCpu().empty())
    onednn.implementation += "; warning: no AVX2 kernels on a CPU with AVX2, several times slower "
                             "(DNNL_MAX_CPU_ISA or ONEDNN_MAX_CPU_ISA may limit them)";
  return onednn;
}

} // namespace sotc::runtime::cpu
