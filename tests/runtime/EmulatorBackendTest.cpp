// The CUDA backend end to end on the CUDA emulator: fatbins that `sotc compile --target cuda`
// built (the sotc_compile rule in testdata/BUILD.bazel) opened with sotc_open_device(path,
// "emulator"), run on random inputs and compared with double-precision loops; and the
// backend's failure paths, which only a driver that fails can reach: device memory running
// out, a kernel the fatbin lacks, a launch the driver refuses.
#include "sotc/runtime.h"

#include "runtime/src/Artifact.h"
#include "runtime/src/Backend.h"
#include "runtime/src/Executor.h"
#include "tests/runtime/TestArtifacts.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using sotc::testing::random;
using sotc::testing::slurp;
using sotc::testing::tensor;

/// An artifact opened on the emulator.
struct Emulated : sotc::testing::Opened {
  explicit Emulated(const std::string &path) : Opened(path, "emulator") {}
};

/// Result 0 of a run, copied from the (emulated) device.
std::vector<float> result(sotc_artifact *a, const sotc_value &out) {
  size_t count = 1;
  for (int d = 0; d < out.rank; ++d)
    count *= static_cast<size_t>(out.shape[d]);
  std::vector<float> host(count);
  sotc_error error{};
  REQUIRE(out.device == SOTC_DEVICE_CUDA);
  REQUIRE(sotc_copy_out(a, &out, host.data(), SOTC_DEVICE_CPU, &error) == 0);
  return host;
}

/// The softmax artifact's plan read past its digest, with `edit` applied to its manifest,
/// and run on the emulator: the error it ends with.
std::string runEdited(const std::string &what, const std::string &with) {
  std::string manifest = slurp("testdata/softmax_cuda.cuda.manifest.json");
  size_t at = manifest.find(what);
  REQUIRE(at != std::string::npos);
  manifest.replace(at, what.size(), with);
  try {
    sotc::runtime::Artifact plan =
        sotc::runtime::readManifest(manifest, "testdata/softmax_cuda.cuda.manifest.json");
    std::unique_ptr<sotc::runtime::Backend> backend = sotc::runtime::emulatorBackend(plan);
    sotc::runtime::Executor executor(std::move(plan), std::move(backend));
    std::vector<float> x(32 * 128, 0.5f);
    sotc_value in[] = {tensor(x, {32, 128})}, out[1];
    size_t n = 1;
    executor.run(in, 1, out, &n);
  } catch (const sotc::runtime::Error &e) {
    return e.code() + ": " + e.what();
  }
  return "no error";
}

} // namespace

TEST_CASE("a CUDA softmax runs on the emulator and matches", "[emulator]") {
  Emulated a("testdata/softmax_cuda.fatbin");
  INFO(a.error.code << ": " << a.error.message);
  REQUIRE(a.artifact);
  CHECK(std::string(sotc_target(a.artifact)) == "cuda");
  std::mt19937 rng(1);
  std::vector<float> x = random(32 * 128, rng);
  sotc_value in[] = {tensor(x, {32, 128})}, out[1];
  size_t n = 1;
  sotc_error error{};
  REQUIRE(sotc_run(a.artifact, in, 1, out, &n, &error) == 0);
  std::vector<float> y = result(a.artifact, out[0]);
  for (int r = 0; r < 32; ++r) {
    double max = -INFINITY, sum = 0;
    for (int c = 0; c < 128; ++c)
      max = std::max<double>(max, x[r * 128 + c]);
    for (int c = 0; c < 128; ++c)
      sum += std::exp(x[r * 128 + c] - max);
    for (int c = 0; c < 128; ++c) {
      double want = std::exp(x[r * 128 + c] - max) / sum;
      INFO("row " << r << " column " << c);
      CHECK(std::fabs(y[r * 128 + c] - want) <= 1e-6 * std::max(1.0, want));
    }
  }
}

TEST_CASE("a CUDA MLP: GEMM steps through the emulated cuBLASLt, the GELU kernel",
          "[emulator]") {
  Emulated a("testdata/gelu_mlp_cuda.fatbin");
  INFO(a.error.code << ": " << a.error.message);
  REQUIRE(a.artifact);
  std::mt19937 rng(2);
  sotc::testing::GeluMlp mlp(rng);
  std::vector<sotc_value> in = mlp.values();
  sotc_value out[1];
  size_t n = 1;
  sotc_error error{};
  REQUIRE(sotc_run(a.artifact, in.data(), in.size(), out, &n, &error) == 0);
  std::vector<float> y = result(a.artifact, out[0]);
  std::vector<double> want, magnitude;
  mlp.reference(want, magnitude);
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    // The emulated cuBLASLt rounds each product once; the hidden layer is float32.
    CHECK(std::fabs(y[i] - want[i]) <= 1e-6 * std::max(1.0, magnitude[i]));
  }
}

TEST_CASE("the CUDA backend's failures through the emulated driver", "[emulator]") {
  SECTION("device memory runs out: the allocation the run needs fails") {
    setenv("SOTC_EMULATOR_MEMORY", "4096", 1);
    Emulated a("testdata/softmax_cuda.fatbin");
    std::string opened = a.artifact ? "" : a.error.message;
    std::vector<float> x(32 * 128);
    sotc_value in[] = {tensor(x, {32, 128})}, out[1];
    size_t n = 1;
    sotc_error error{};
    int status = a.artifact ? sotc_run(a.artifact, in, 1, out, &n, &error) : 1;
    unsetenv("SOTC_EMULATOR_MEMORY");
    std::string message = a.artifact ? error.message : opened;
    INFO(message);
    CHECK(status == 1);
    CHECK(message.find("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (the emulated device has") !=
          std::string::npos);
  }
  SECTION("GEMM steps whose cuBLASLt workspace does not fit") {
    setenv("SOTC_EMULATOR_MEMORY", "1048576", 1);
    Emulated a("testdata/gelu_mlp_cuda.fatbin");
    unsetenv("SOTC_EMULATOR_MEMORY");
    CHECK(!a.artifact);
    CHECK(std::string(a.error.code) == "E8005");
    CHECK(std::string(a.error.message).find("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY") == 0);
  }
  SECTION("a kernel the fatbin does not have") {
    std::string why = runEdited("\"symbol\": \"reduce_max_0", "\"symbol\": \"reduce_maX_0");
    CHECK(why.find("E8001: testdata/softmax_cuda.fatbin: no kernel reduce_maX_0") == 0);
  }
  SECTION("a launch the driver refuses: more threads than the kernel was compiled for") {
    std::string why = runEdited("\"block\": 128", "\"block\": 256");
    INFO(why);
    CHECK(why.find("E8005: reduce_max_0_broadcast_to_1_subtract_2_exp_3_reduce_sum_4_broadcast_"
                   "to_5_divide_6 failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES") == 0);
  }
  SECTION("a device the emulator does not have") {
    sotc_artifact *a = nullptr;
    sotc_error error{};
    CHECK(sotc_open_device("testdata/softmax_cuda.fatbin", "emulator:1", &a, &error) == 1);
    CHECK(std::string(error.message) ==
          "unknown device 'emulator:1' (cpu, cuda, cuda:N or emulator)");
    CHECK(sotc_open_device("testdata/softmax_cpu.so", "emulator", &a, &error) == 1);
    CHECK(std::string(error.code) == "E8003");
  }
}
