// readManifest on small hand-made manifests: what a model's weight preparation must hold
// (weights in, segment-0 inputs out), and a CUDA manifest's plan read like a CPU one's.
#include "runtime/src/Artifact.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using Json = nlohmann::ordered_json;
using sotc::runtime::Artifact;
using sotc::runtime::Error;
using sotc::runtime::readManifest;

namespace {

Json buffer(const std::string &name, int64_t elements) {
  return Json{{"name", name}, {"dtype", "float32"}, {"shape", {elements}}, {"bytes", 4 * elements}};
}

Json kernel(const std::string &symbol, const std::string &out, const std::string &in) {
  return Json{{"kind", "kernel"}, {"symbol", symbol}, {"grid", 1}, {"outputs", {out}},
              {"inputs", {in}}};
}

/// y = f(x, prepared.w) where prepared.w is prepared from the weight w.
Json modelManifest(const std::string &target) {
  Json m{{"format", "sotc-manifest"},
         {"version", 1},
         {"target", {{"kind", target}, {"features", Json::array()}}},
         {"binary", {{"file", "k.so"}, {"sha256", "0"}}},
         {"guards", Json::array()},
         {"entry", {{"inputs", Json::array()}}}};
  m["segments"] = Json::array(
      {{{"name", "SIR_0"},
        {"inputs", {buffer("x", 4), buffer("w", 4), buffer("prepared.w", 4)}},
        {"outputs", {buffer("y", 4)}},
        {"arena", {{"bytes", 0}, {"buffers", Json::array()}}},
        {"steps", {kernel("k", "y", "prepared.w")}},
        {"end", {{"kind", "return"}, {"value", "y"}, {"result", {{"tensor", "y"}}}}}}});
  if (target == "cuda")
    m["segments"][0]["steps"][0]["block"] = 128, m["segments"][0]["steps"][0]["shared_bytes"] = 0;
  m["weights"] = {{"file", "k.weights.safetensors"},
                  {"sha256", "0"},
                  {"tensors", {{{"name", "w"}, {"dtype", "float32"}, {"shape", {4}}, {"buffer", "w"}}}},
                  {"prepare",
                   {{"inputs", {buffer("w", 4)}},
                    {"outputs", {buffer("prepared.w", 4)}},
                    {"arena", {{"bytes", 0}, {"buffers", Json::array()}}},
                    {"steps", {kernel("prep", "prepared.w", "w")}}}}};
  return m;
}

std::string refusal(const Json &m) {
  try {
    readManifest(m.dump(), "k.manifest.json");
  } catch (const Error &e) {
    return e.code() + std::string(": ") + e.what();
  }
  return "read";
}

} // namespace

TEST_CASE("a model's weight preparation is read beside its segments", "[runtime][manifest]") {
  Artifact a = readManifest(modelManifest("cpu").dump(), "k.manifest.json");
  REQUIRE(a.prepare.steps.size() == 1);
  CHECK(a.prepare.steps[0].symbol == "prep");
  CHECK(a.prepare.outputs[0].name == "prepared.w");
  // Every plan the backends resolve kernels for: the segments, then the preparation.
  std::vector<sotc::runtime::Segment *> plans = a.plans();
  REQUIRE(plans.size() == 2);
  CHECK(plans[1] == &a.prepare);
}

TEST_CASE("a preparation that reads no weight or writes what nothing reads is refused",
          "[runtime][manifest]") {
  Json readsInput = modelManifest("cpu");
  readsInput["weights"]["prepare"]["inputs"][0]["name"] = "x";
  CHECK(refusal(readsInput).rfind("E8001", 0) == 0);
  CHECK(refusal(readsInput).find("reads x, which is no weight") != std::string::npos);
  Json writesElsewhere = modelManifest("cpu");
  writesElsewhere["weights"]["prepare"]["outputs"][0]["name"] = "prepared.v";
  CHECK(refusal(writesElsewhere).find("writes prepared.v, which the first segment does not "
                                      "read") != std::string::npos);
  Json outsideArena = modelManifest("cpu");
  outsideArena["weights"]["prepare"]["arena"]["buffers"] = {buffer("t", 4)};
  outsideArena["weights"]["prepare"]["arena"]["buffers"][0]["offset"] = 0;
  CHECK(refusal(outsideArena).find("lies outside its arena") != std::string::npos);
}

TEST_CASE("a CUDA manifest's segments are read as a CPU manifest's are", "[runtime][manifest]") {
  Artifact a = readManifest(modelManifest("cuda").dump(), "k.manifest.json");
  REQUIRE(a.segments.size() == 1);
  REQUIRE(a.segments[0].steps.size() == 1);
  CHECK(a.segments[0].steps[0].block == 128);
  Json none = modelManifest("cuda");
  none["segments"] = Json::array();
  CHECK(refusal(none).find("no segments") != std::string::npos);
}
