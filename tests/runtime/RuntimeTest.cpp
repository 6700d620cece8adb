// The runtime end to end on the CPU: artifacts that `sotc compile --target cpu` built (the
// sotc_compile rule in testdata/BUILD.bazel) opened through the C API, their parameters
// checked, run on random inputs, and compared with straightforward double-precision loops.
#include "sotc/runtime.h"

#include "runtime/src/Artifact.h"
#include "tests/runtime/TestArtifacts.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using sotc::testing::Opened;
using sotc::testing::random;
using sotc::testing::slurp;
using sotc::testing::spit;
using sotc::testing::tensor;

/// Each element within `tolerance` of its reference, relative to max(1, |want|) or, where
/// given, to `scale` (a dot product's sum of |terms|: what f32 rounding grows with).
void checkClose(const float *got, const std::vector<double> &want, double tolerance,
                const std::vector<double> &scale = {}) {
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": " << got[i] << " vs " << want[i]);
    double relativeTo = std::max(1.0, scale.empty() ? std::fabs(want[i]) : scale[i]);
    CHECK(std::fabs(got[i] - want[i]) <= tolerance * relativeTo);
  }
}



} // namespace

TEST_CASE("the C API parses a size as the manifest writes it", "[runtime]") {
  int64_t factor = 0;
  int32_t powers[8] = {};
  REQUIRE(sotc_parse_size("16*s0*s1^2", &factor, powers) == 0);
  CHECK(factor == 16);
  CHECK((powers[0] == 1 && powers[1] == 2 && powers[2] == 0));
  for (const char *bad : {"s0*s0", "s0+1", "2*s8", "", "s0^"})
    CHECK(sotc_parse_size(bad, &factor, powers) == 1);
  CHECK(sotc_parse_size(nullptr, &factor, powers) == 1);
}

TEST_CASE("softmax runs and matches", "[runtime]") {
  Opened a("testdata/softmax_cpu.so");
  INFO(a.error.code << ": " << a.error.message);
  REQUIRE(a.artifact);
  REQUIRE(sotc_num_parameters(a.artifact) == 1);
  CHECK(std::string(sotc_parameter_name(a.artifact, 0)) == "x");
  std::mt19937 rng(1);
  std::vector<float> x = random(32 * 128, rng);
  sotc_value in[] = {tensor(x, {32, 128})};
  sotc_value out[2];
  size_t n = 2;
  sotc_error error{};
  REQUIRE(sotc_run(a.artifact, in, 1, out, &n, &error) == 0);
  REQUIRE(n == 1);
  CHECK((out[0].rank == 2 && out[0].shape[0] == 32 && out[0].shape[1] == 128));
  std::vector<double> want(x.size());
  for (int r = 0; r < 32; ++r) {
    double max = -INFINITY, sum = 0;
    for (int c = 0; c < 128; ++c)
      max = std::max<double>(max, x[r * 128 + c]);
    for (int c = 0; c < 128; ++c)
      sum += std::exp(x[r * 128 + c] - max);
    for (int c = 0; c < 128; ++c)
      want[r * 128 + c] = std::exp(x[r * 128 + c] - max) / sum;
  }
  checkClose(static_cast<const float *>(out[0].data), want, 1e-5);
}

TEST_CASE("an MLP: GEMM steps through OpenBLAS and the GELU kernel", "[runtime]") {
  Opened a("testdata/gelu_mlp_cpu.so");
  INFO(a.error.code << ": " << a.error.message);
  REQUIRE(a.artifact);
  std::mt19937 rng(2);
  sotc::testing::GeluMlp mlp(rng);
  std::vector<sotc_value> in = mlp.values();
  sotc_value out[1];
  size_t n = 1;
  sotc_error error{};
  REQUIRE(sotc_run(a.artifact, in.data(), in.size(), out, &n, &error) == 0);
  std::vector<double> want, magnitude;
  mlp.reference(want, magnitude);
  // Two f32 dot products of 256 and 1024 terms of either sign, summed in whatever order the
  // BLAS's kernel for this CPU takes: 2e-6 of the second's sum of |terms| (about 32 roundings).
  checkClose(static_cast<const float *>(out[0].data), want, 2e-6, magnitude);
  // What an artifact's GEMM steps run on is what the process reports before any is opened
  // (sotc doctor's line).
  CHECK(std::string(sotc_gemm_implementation(a.artifact)) == sotc_cpu_gemm_implementation());
  CHECK(std::string(sotc_cpu_gemm_implementation()).rfind("none", 0) != 0);
}

TEST_CASE("a branch on a tensor value takes the side the data says", "[runtime]") {
  Opened a("testdata/tensor_branch_cpu.so");
  INFO(a.error.code << ": " << a.error.message);
  REQUIRE(a.artifact);
  for (float sign : {1.0f, -1.0f}) {
    std::vector<float> x = {1, 2, 3, 4, -1, -2, 0.5f, 0.25f};
    for (float &v : x)
      v *= sign;
    sotc_value in[] = {tensor(x, {8})};
    sotc_value out[1];
    size_t n = 1;
    sotc_error error{};
    REQUIRE(sotc_run(a.artifact, in, 1, out, &n, &error) == 0);
    std::vector<double> want;
    for (float v : x) // if x.sum() > 0: x * 2 + 1 else -x + 1
      want.push_back(sign > 0 ? v * 2.0 + 1 : -v + 1.0);
    checkClose(static_cast<const float *>(out[0].data), want, 1e-6);
  }
}

TEST_CASE("inputs that do not match what was compiled never reach a kernel", "[runtime]") {
  Opened a("testdata/softmax_cpu.so");
  REQUIRE(a.artifact);
  std::vector<float> x(32 * 64);
  sotc_value in[] = {tensor(x, {32, 64})};
  sotc_value out[1];
  size_t n = 1;
  sotc_error error{};
  REQUIRE(sotc_run(a.artifact, in, 1, out, &n, &error) == 1);
  CHECK(std::string(error.code) == "E8004");
  CHECK(std::string(error.message) ==
        "the inputs do not match what was compiled: x: expected float32[32, 128], got "
        "float32[32, 64] (guard g0 (testdata/programs/23_softmax.py:6))");
  CHECK(sotc_run(a.artifact, in, 0, out, &n, &error) == 1);
  CHECK(std::string(error.message) == "expected 1 parameters, got 0");

  // The kernels' ABI wants element-aligned, host memory.
  std::vector<float> storage(32 * 128 + 1);
  sotc_value misaligned = tensor(storage, {32, 128});
  misaligned.data = reinterpret_cast<char *>(storage.data()) + 2;
  REQUIRE(sotc_run(a.artifact, &misaligned, 1, out, &n, &error) == 1);
  CHECK(std::string(error.message)
            .find("x: expected float32[32, 128], got float32[32, 128] at "
                  "an address not 4-byte aligned") != std::string::npos);
  sotc_value device = tensor(storage, {32, 128});
  device.device = SOTC_DEVICE_CUDA;
  REQUIRE(sotc_run(a.artifact, &device, 1, out, &n, &error) == 1);
  CHECK(std::string(error.message).find("on a CUDA device (this artifact runs on the CPU)") !=
        std::string::npos);
}

TEST_CASE("results into the caller's buffers", "[runtime]") {
  Opened a("testdata/softmax_cpu.so");
  REQUIRE(a.artifact);
  CHECK(std::string(sotc_target(a.artifact)) == "cpu");
  std::mt19937 rng(3);
  std::vector<float> x = random(32 * 128, rng), mine(32 * 128, -1), theirs(32 * 128);
  sotc_value in[] = {tensor(x, {32, 128})}, into[] = {tensor(mine, {32, 128})};
  sotc_error error{};
  REQUIRE(sotc_run_into(a.artifact, in, 1, into, 1, &error) == 0);
  sotc_value out[1];
  size_t n = 1;
  REQUIRE(sotc_run(a.artifact, in, 1, out, &n, &error) == 0);
  REQUIRE(sotc_copy_out(a.artifact, &out[0], theirs.data(), SOTC_DEVICE_CPU, &error) == 0);
  CHECK(mine == theirs);
  CHECK(mine == std::vector<float>(static_cast<const float *>(out[0].data),
                                   static_cast<const float *>(out[0].data) + mine.size()));
  sotc_value wrong[] = {tensor(mine, {128, 32})};
  CHECK(sotc_run_into(a.artifact, in, 1, wrong, 1, &error) == 1);
  CHECK(std::string(error.code) == "E8005");
  sotc_value two[] = {into[0], into[0]};
  CHECK(sotc_run_into(a.artifact, in, 1, two, 2, &error) == 1);
  CHECK(std::string(error.message) == "the result has 1 tensors; 2 buffers were given");
}

TEST_CASE("a binary that is not its manifest's, a newer manifest, nothing at all", "[runtime]") {
  std::string dir = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp");
  std::string library = slurp("testdata/softmax_cpu.so"),
              manifest = slurp("testdata/softmax_cpu.manifest.json");
  library[library.size() / 2] ^= 1;
  spit(dir + "/softmax_cpu.so", library);
  spit(dir + "/softmax_cpu.manifest.json", manifest);
  Opened tampered(dir + "/softmax_cpu.so");
  CHECK(!tampered.artifact);
  CHECK(std::string(tampered.error.code) == "E8003");
  CHECK(std::string(tampered.error.message).find("its sha256 differs") != std::string::npos);

  std::string newer = manifest;
  newer.replace(newer.find("\"version\": 3"), 12, "\"version\": 4");
  spit(dir + "/newer.manifest.json", newer);
  Opened future(dir + "/newer.manifest.json");
  CHECK(std::string(future.error.code) == "E8002");

  Opened missing(dir + "/nothing.so");
  CHECK(std::string(missing.error.code) == "E8001");
  CHECK(std::string(missing.error.message) == dir + "/nothing.manifest.json: cannot read");
}

TEST_CASE("a manifest edited since sotc wrote it, a truncated library: E8003", "[runtime]") {
  using sotc::runtime::kDigestTrailerBytes;
  using sotc::runtime::sha256Hex;
  std::string dir = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp");
  const std::string library = slurp("testdata/softmax_cpu.so"),
                    manifest = slurp("testdata/softmax_cpu.manifest.json");
  auto open = [&](const std::string &so, const std::string &json) {
    spit(dir + "/probe.so", so);
    spit(dir + "/probe.manifest.json", json);
    Opened a(dir + "/probe.so");
    CHECK(!a.artifact);
    return std::string(a.error.code) + ": " + a.error.message;
  };
  // With its binary's sha256 set to match, so that only the digest tells.
  auto withSha = [](std::string json, const std::string &so) {
    size_t at = json.find("\"sha256\": \"") + 11;
    return json.replace(at, 64, sha256Hex(so));
  };
  std::string grid = manifest;
  size_t at = grid.find("\"grid\": ");
  REQUIRE(at != std::string::npos);
  grid.insert(at + 8, "9"); // grid g -> 9g: valid JSON, a valid plan, the wrong kernel launch
  CHECK(open(library, grid).find("E8003: " + dir +
                                 "/probe.manifest.json: is not the manifest sotc wrote") == 0);

  std::string bare = library.substr(0, library.size() - kDigestTrailerBytes);
  CHECK(open(bare, withSha(manifest, bare)).find("carries no manifest digest") !=
        std::string::npos);

  // Truncated, its trailer put back and its sha256 updated: refused before dlopen.
  std::string truncated = library.substr(0, library.size() / 2) +
                          library.substr(library.size() - kDigestTrailerBytes);
  std::string why = open(truncated, withSha(manifest, truncated));
  INFO(why);
  CHECK(why.find("past its end (truncated?)") != std::string::npos);
}
