// A stand-in for an OpenBLAS that does not know the CPU: it reports the generic Prescott
// kernel family unless OPENBLAS_CORETYPE names one when it loads (OpenBLAS reads it then
// too); its GEMMs do nothing. Built twice: plain names, and scipy-openblas32's
// `scipy_`-prefixed ones (FAKE_PREFIX).
#include <cstdlib>

#define FAKE_CAT2(a, b) a##b
#define FAKE_CAT(a, b) FAKE_CAT2(a, b)
#define FAKE_NAME(name) FAKE_CAT(FAKE_PREFIX, name)

// Plain C data: a C++ object with a destructor could keep dlclose from unloading it.
namespace {
const char *family = "Prescott";
__attribute__((constructor)) void readCoretype() {
  if (const char *named = std::getenv("OPENBLAS_CORETYPE"))
    family = named;
}
} // namespace

extern "C" {
const char *FAKE_NAME(openblas_get_config)() { return "OpenBLAS 0.0 fake"; }
const char *FAKE_NAME(openblas_get_corename)() { return family; }
void FAKE_NAME(cblas_sgemm)() {}
void FAKE_NAME(cblas_dgemm)() {}
}
