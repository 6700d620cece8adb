// The manifests of real artifacts with one value changed (a number, a name, a shape), as a
// corruption or a careless edit would: opened as a user opens them, every one is refused with
// a code (the digest the binary carries: E8003) or computes exactly the unchanged artifact's
// result; read past the digest (readManifest and the executor directly), every one is refused
// with a code or runs its kernels without a fault (scripts/test.sh --full runs this under
// AddressSanitizer). SOTC_FUZZ_MUTATIONS (default 250 per artifact) and SOTC_FUZZ_SEED set
// a longer or another run.
#include "sotc/runtime.h"

#include "runtime/src/Artifact.h"
#include "runtime/src/Backend.h"
#include "runtime/src/Executor.h"
#include "tests/runtime/TestArtifacts.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using Json = nlohmann::ordered_json;

namespace {

using sotc::testing::slurp;
using sotc::testing::spit;



/// Every scalar or array-of-integers inside `j`, as a JSON pointer.
void leaves(const Json &j, const Json::json_pointer &at, std::vector<Json::json_pointer> &out) {
  bool integers = j.is_array() && !j.empty() &&
                  std::all_of(j.begin(), j.end(), [](const Json &x) { return x.is_number(); });
  if (j.is_primitive() || integers)
    out.push_back(at);
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it)
      leaves(it.value(), at / it.key(), out);
  else if (j.is_array() && !integers)
    for (size_t i = 0; i < j.size(); ++i)
      leaves(j[i], at / i, out);
}

/// One value of `m` changed, the way `rng` picks.
Json mutate(const Json &m, const std::vector<Json::json_pointer> &at, std::mt19937 &rng,
            const std::vector<std::string> &names) {
  Json out = m;
  Json &v = out[at[rng() % at.size()]];
  const int64_t numbers[] = {0, -1, 1, 2, 3, 63, 64, 4096, int64_t(1) << 31, int64_t(1) << 62,
                             INT64_MAX - 4096, INT64_MIN};
  if (v.is_number_integer()) {
    int64_t x = v.get<int64_t>();
    switch (rng() % 4) {
    case 0: v = numbers[rng() % std::size(numbers)]; break;
    case 1: v = x + 1; break;
    case 2: v = x - 1; break;
    default: v = x * 2 + 1; break;
    }
  } else if (v.is_number()) {
    v = v.get<double>() * 2 + 1;
  } else if (v.is_boolean()) {
    v = !v.get<bool>();
  } else if (v.is_string()) {
    std::string pick = names[rng() % names.size()];
    v = rng() % 5 ? pick : std::string(rng() % 2 ? "abort" : "");
  } else if (v.is_array()) { // a shape, batch or strides
    if (rng() % 2 && !v.empty())
      v.erase(v.size() - 1);
    else if (rng() % 2)
      v.push_back(numbers[rng() % std::size(numbers)]);
    else
      v[rng() % v.size()] = numbers[rng() % std::size(numbers)];
  } else {
    v = 1;
  }
  return out;
}

/// float32 inputs of the entry's shapes (ints 0..3 for others), fixed by `seed`.
struct Inputs {
  std::vector<std::vector<char>> data;
  std::vector<sotc_value> values;
  explicit Inputs(const Json &manifest) {
    std::mt19937 rng(7);
    for (const Json &p : manifest.at("entries").at(0).at("inputs")) {
      sotc_value v{};
      v.is_tensor = 1;
      v.dtype = static_cast<sotc_dtype>(sotc::runtime::dtypeIndex(p.at("dtype")));
      size_t n = 1;
      for (const Json &d : p.at("shape"))
        v.shape[v.rank++] = d.get<int64_t>(), n *= d.get<size_t>();
      data.emplace_back(n * sotc_dtype_size(v.dtype));
      if (v.dtype == SOTC_FLOAT32)
        for (size_t i = 0; i < n; ++i)
          reinterpret_cast<float *>(data.back().data())[i] =
              std::uniform_real_distribution<float>(-1, 1)(rng);
      values.push_back(v);
    }
    for (size_t i = 0; i < values.size(); ++i)
      values[i].data = data[i].data();
  }
};

/// The bytes of every result of a run, or "" when it fails.
std::string run(sotc_artifact *a, Inputs &in) {
  sotc_value out[8];
  size_t n = 8;
  sotc_error error{};
  if (sotc_run(a, in.values.data(), in.values.size(), out, &n, &error))
    return "";
  std::string bytes;
  for (size_t i = 0; i < n; ++i) {
    size_t size = sotc_dtype_size(out[i].dtype);
    for (int32_t d = 0; d < out[i].rank; ++d)
      size *= static_cast<size_t>(out[i].shape[d]);
    bytes.append(static_cast<const char *>(out[i].data), size);
  }
  return bytes;
}

bool coded(const std::string &code) {
  return code == "E8001" || code == "E8002" || code == "E8003";
}

} // namespace

TEST_CASE("manifests with one value changed are refused or compute the same", "[runtime][fuzz]") {
  std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const int mutations = std::getenv("SOTC_FUZZ_MUTATIONS")
                            ? std::atoi(std::getenv("SOTC_FUZZ_MUTATIONS"))
                            : 250;
  for (const char *stem : {"softmax_cpu", "gelu_mlp_cpu", "tensor_branch_cpu", "cnn_torch_cpu"}) {
    INFO(stem);
    Json manifest = Json::parse(slurp(std::string("testdata/") + stem + ".manifest.json"));
    std::string library = slurp(std::string("testdata/") + stem + ".so");
    std::string so = dir + "/" + stem + ".so", json = dir + "/" + stem + ".manifest.json";
    spit(so, library);
    if (manifest.contains("weights")) { // a model's (the CNN's convolution steps): beside it
      std::string file = manifest["weights"]["file"].get<std::string>();
      spit(dir + "/" + file, slurp("testdata/" + file));
    }
    Inputs in(manifest);
    sotc_artifact *original = nullptr;
    sotc_error error{};
    spit(json, manifest.dump(2));
    REQUIRE(sotc_open(so.c_str(), &original, &error) == 0);
    std::string want = run(original, in);
    REQUIRE(!want.empty());
    sotc_close(original);

    std::vector<Json::json_pointer> at;
    leaves(manifest, Json::json_pointer(), at);
    std::vector<std::string> names;
    for (const Json::json_pointer &p : at)
      if (manifest[p].is_string())
        names.push_back(manifest[p].get<std::string>());
    std::mt19937 rng(std::getenv("SOTC_FUZZ_SEED") ? std::atoi(std::getenv("SOTC_FUZZ_SEED")) : 11);
    int refused = 0, same = 0, ranPastDigest = 0;
    for (int i = 0; i < mutations; ++i) {
      Json m = mutate(manifest, at, rng, names);
      std::string text = m.dump(2);
      INFO("mutation " << i << ": " << text);
      spit(json, text);
      // As users open it: refused with a code, or the same numbers.
      sotc_artifact *a = nullptr;
      if (sotc_open(so.c_str(), &a, &error)) {
        CHECK(coded(error.code));
        ++refused;
      } else {
        CHECK(run(a, in) == want);
        sotc_close(a);
        ++same;
      }
      // Past the digest: the plan's own checks, and the kernels run if they pass.
      try {
        sotc::runtime::Artifact plan = sotc::runtime::readManifest(text, json);
        // The base kernels (loadArtifact picks the table; readManifest leaves it unset).
        plan.kernelTable = "sotc_kernels";
        std::unique_ptr<sotc::runtime::Backend> backend = sotc::runtime::cpuBackend(plan, 1);
        sotc::runtime::Executor executor(std::move(plan), std::move(backend));
        sotc_value out[8];
        size_t n = 8;
        executor.run(in.values.data(), in.values.size(), out, &n);
        ++ranPastDigest;
      } catch (const sotc::runtime::Error &e) {
        CHECK((e.code() == "E8001" || e.code() == "E8002" || e.code() == "E8003" ||
               e.code() == "E8004" || e.code() == "E8005"));
      }
    }
    CHECK(refused > 0);
    WARN(stem << ": " << refused << " refused, " << same << " unchanged results; " << ranPastDigest
              << " ran past the digest");
  }
}
