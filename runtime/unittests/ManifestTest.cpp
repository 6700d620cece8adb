// readManifest on small hand-made manifests: what a model's weight preparation must hold
// (weights in, segment-0 inputs out), a CUDA manifest's plan read like a CPU one's, and the
// entries of an artifact of several traces (each its own segments, the same parameters).
#include "runtime/src/Artifact.h"
#include "runtime/src/PlanCheck.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

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

/// An entry of `inputs` whose segments start at `first`.
Json entry(Json inputs, int64_t first = 0) {
  return Json{
      {"trace",
       {{"file", "t" + std::to_string(first) + ".pb"}, {"sha256", "0"}, {"python", "3.11.7"}}},
      {"function", "f"},
      {"inputs", std::move(inputs)},
      {"guards", Json::array()},
      {"guard_lambda", ""},
      {"segment", first}};
}

/// y = f(x, prepared.w) where prepared.w is prepared from the weight w.
Json modelManifest(const std::string &target) {
  Json m{{"format", "sotc-manifest"},
         {"version", 3},
         {"target", {{"kind", target}, {"features", Json::array()}}},
         {"binary", {{"file", "k.so"}, {"sha256", "0"}}},
         {"entries",
          {entry({{{"name", "x"},
                   {"kind", "tensor"},
                   {"dtype", "float32"},
                   {"shape", {4}},
                   {"stop_gradient", true},
                   {"buffer", "x"}}})}}};
  m["segments"] = Json::array(
      {{{"name", "SIR_0"},
        {"inputs", {buffer("x", 4), buffer("w", 4), buffer("prepared.w", 4)}},
        {"outputs", {buffer("y", 4)}},
        {"arena", {{"bytes", 0}, {"buffers", Json::array()}}},
        {"steps", {kernel("k", "y", "prepared.w")}},
        {"end", {{"kind", "return"}, {"value", "y"}, {"result", {{"tensor", "y"}}}}}}});
  m["weights"] = {{"file", "k.weights.safetensors"},
                  {"sha256", "0"},
                  {"tensors", {{{"name", "w"}, {"dtype", "float32"}, {"shape", {4}}}}}};
  m["entries"][0]["weights"] = {{"tensors", {{{"name", "w"}, {"buffer", "w"}}}},
                                {"prepare",
                                 {{"inputs", {buffer("w", 4)}},
                                  {"outputs", {buffer("prepared.w", 4)}},
                                  {"arena", {{"bytes", 0}, {"buffers", Json::array()}}},
                                  {"steps", {kernel("prep", "prepared.w", "w")}}}}};
  if (target == "cuda")
    for (Json *step :
         {&m["segments"][0]["steps"][0], &m["entries"][0]["weights"]["prepare"]["steps"][0]})
      (*step)["block"] = 128, (*step)["shared_bytes"] = 0;
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

/// One edit of a manifest that readManifest must refuse, and the words it must refuse it with.
struct Probe {
  const char *what, *refusal;
  std::function<void(Json &)> edit;
};

/// Each probe's edit of `base` is refused with E8001 and its words.
void checkRefusals(const Json &base, const std::vector<Probe> &probes) {
  for (const Probe &p : probes) {
    INFO(p.what);
    Json m = base;
    p.edit(m);
    std::string why = refusal(m);
    CHECK(why.rfind("E8001: k.manifest.json: ", 0) == 0);
    CHECK(why.find(p.refusal) != std::string::npos);
  }
}

} // namespace

TEST_CASE("a model's weight preparation is read beside its segments", "[runtime][manifest]") {
  Artifact a = readManifest(modelManifest("cpu").dump(), "k.manifest.json");
  CHECK(*a.manifestText == modelManifest("cpu").dump()); // what sotc_manifest hands bindings
  const sotc::runtime::Segment &prepare = a.entries.at(0).prepare;
  REQUIRE(prepare.steps.size() == 1);
  CHECK(prepare.steps[0].symbol == "prep");
  CHECK(prepare.outputs[0].name == "prepared.w");
  CHECK(a.entries[0].weightBuffers == std::map<std::string, std::string>{{"w", "w"}});
  // Every plan the backends resolve kernels for: the segments, then the preparation.
  std::vector<sotc::runtime::Segment *> plans = a.plans();
  REQUIRE(plans.size() == 2);
  CHECK(plans[1] == &a.entries[0].prepare);
}

TEST_CASE("a preparation that reads no weight or writes what nothing reads is refused",
          "[runtime][manifest]") {
  Json readsInput = modelManifest("cpu");
  readsInput["entries"][0]["weights"]["prepare"]["inputs"][0]["name"] = "x";
  CHECK(refusal(readsInput).rfind("E8001", 0) == 0);
  CHECK(refusal(readsInput).find("reads x, which is no weight") != std::string::npos);
  Json writesElsewhere = modelManifest("cpu");
  writesElsewhere["entries"][0]["weights"]["prepare"]["outputs"][0]["name"] = "prepared.v";
  CHECK(refusal(writesElsewhere).find("writes prepared.v, which SIR_0 does not read") !=
        std::string::npos);
  Json outsideArena = modelManifest("cpu");
  Json &arena = outsideArena["entries"][0]["weights"]["prepare"]["arena"];
  arena["buffers"] = {buffer("t", 4)};
  arena["buffers"][0]["offset"] = 0;
  CHECK(refusal(outsideArena).find("has its arena buffer t outside its arena") !=
        std::string::npos);
}

TEST_CASE("a state weight's new value is kept by the runtime, not returned",
          "[runtime][manifest]") {
  // w is state (written in place): SIR_0 returns y and gives w's new value as y too.
  Json m = modelManifest("cpu");
  m["weights"]["tensors"][0]["state"] = true;
  m["segments"][0]["end"]["side_effects"] = {{{"state", "w"}, {"value", {{"tensor", "y"}}}}};
  Artifact a = readManifest(m.dump(), "k.manifest.json");
  CHECK(a.weights.at(0).state);
  CHECK(a.segments.at(0).results == std::vector<std::string>{"y"});
  CHECK(a.segments[0].stateUpdates == std::vector<std::pair<std::string, std::string>>{{"w", "y"}});
  checkRefusals(
      m,
      {
          {"a weight not marked state",
           "updates the state w with y, which is no "
           "buffer of the state's dtype and shape",
           [](Json &j) { j["weights"]["tensors"][0].erase("state"); }},
          {"no such buffer", "updates the state w with z",
           [](Json &j) { j["segments"][0]["end"]["side_effects"][0]["value"]["tensor"] = "z"; }},
          {"another shape", "which is no buffer of the state's dtype and shape",
           [](Json &j) {
             j["weights"]["tensors"][0]["shape"] = {2, 2};
           }},
          {"not one tensor", "updates the state w with a value that is not one tensor",
           [](Json &j) {
             j["segments"][0]["end"]["side_effects"][0]["value"] = {{"tuple", {{{"tensor", "y"}}}}};
           }},
      });
}

TEST_CASE("an index_copy step writes a cache in place only where the state is the entry's",
          "[runtime][manifest]") {
  // w: a state cache of 4 rows of 2, written at x's first element's row by an in-place step
  // (the rows of v, int64 positions in p), then read by the kernel.
  Json m = modelManifest("cpu");
  Json &tensors = m["weights"]["tensors"];
  tensors[0] = {{"name", "w"}, {"dtype", "float32"}, {"shape", {4, 2}}, {"state", true},
                {"cache_axis", 0}};
  Json &seg = m["segments"][0];
  seg["inputs"] = {buffer("x", 4), buffer("w", 8), buffer("prepared.w", 4),
                   {{"name", "p"}, {"dtype", "int64"}, {"shape", {1}}, {"bytes", 8}},
                   {{"name", "v"}, {"dtype", "float32"}, {"shape", {1, 2}}, {"bytes", 8}}};
  seg["inputs"][1]["shape"] = {4, 2};
  m["entries"][0]["weights"].erase("prepare"); // nothing is prepared from a state
  seg["inputs"].erase(2);
  seg["steps"] = Json::array();
  for (const auto &[name, dtype, shape] :
       {std::tuple{"p", "int64", Json{1}}, std::tuple{"v", "float32", Json{1, 2}}})
    m["entries"][0]["inputs"].push_back({{"name", name},
                                         {"kind", "tensor"},
                                         {"dtype", dtype},
                                         {"shape", shape},
                                         {"stop_gradient", true},
                                         {"buffer", name}});
  seg["steps"] = {{{"kind", "index_copy"}, {"name", "index_copy_0"}, {"dtype", "float32"},
                   {"axis", 0}, {"in_place", true}, {"outputs", {"w"}}, {"inputs", {"p", "v"}}},
                  kernel("k", "y", "w")};
  seg["end"]["side_effects"] = {{{"state", "w"}, {"value", {{"tensor", "w"}}}}};
  Artifact a = readManifest(m.dump(), "k.manifest.json");
  CHECK(a.weights.at(0).cacheAxis == 0);
  const sotc::runtime::Step &step = a.segments.at(0).steps.at(0);
  CHECK(step.kind == sotc::runtime::Step::Kind::IndexCopy);
  // [rows, n, inner] = [1, 4, 2]; one position of 4-byte elements; the bytes it moves: the
  // source read and written and the index, not the cache.
  CHECK(step.indexCopy.rows == 1);
  CHECK(step.indexCopy.n == 4);
  CHECK(step.indexCopy.m == 1);
  CHECK(step.indexCopy.inner == 2);
  CHECK(step.indexCopy.elementBytes == 4);
  CHECK(step.bytes == 2 * 8 + 8);
  checkRefusals(
      m, {
             {"in place into the caller's input", "writes x in place, which is no state weight",
              [](Json &j) { j["segments"][0]["steps"][0]["outputs"] = {"x"}; }},
             {"in place into a weight that is not state", "which is no state weight",
              [](Json &j) {
                j["weights"]["tensors"][0].erase("state");
                j["weights"]["tensors"][0].erase("cache_axis");
                j["segments"][0]["end"].erase("side_effects");
              }},
             {"a source of another shape", "not an index_copy's buffers",
              [](Json &j) {
                j["segments"][0]["inputs"][3]["shape"] = {1, 3};
                j["segments"][0]["inputs"][3]["bytes"] = 12;
                j["entries"][0]["inputs"][2]["shape"] = {1, 3};
              }},
             {"a float index", "not an index_copy's buffers",
              [](Json &j) {
                j["segments"][0]["inputs"][2]["dtype"] = "float64";
                j["entries"][0]["inputs"][1]["dtype"] = "float64";
              }},
             {"a cache axis past the shape", "is a cache along axis 2",
              [](Json &j) { j["weights"]["tensors"][0]["cache_axis"] = 2; }},
         });
  Json fewer = m; // read before any buffer is looked up
  fewer["segments"][0]["steps"][0]["inputs"] = {"v"};
  CHECK(refusal(fewer) ==
        "E8001: index_copy step index_copy_0: its axis or buffers are not an index_copy's");
}

TEST_CASE("a CUDA manifest's segments are read as a CPU manifest's are", "[runtime][manifest]") {
  Artifact a = readManifest(modelManifest("cuda").dump(), "k.manifest.json");
  REQUIRE(a.segments.size() == 1);
  REQUIRE(a.segments[0].steps.size() == 1);
  CHECK(a.segments[0].steps[0].block == 128);
  Json none = modelManifest("cuda");
  none["segments"] = Json::array();
  CHECK(refusal(none).find("entry 0 has no segments of its own") != std::string::npos);
}

namespace {

Json tensorInput(const std::string &name, std::vector<int64_t> shape) {
  return Json{{"name", name}, {"kind", "tensor"}, {"dtype", "float32"}, {"shape", shape},
              {"stop_gradient", true}, {"buffer", name}};
}

Json matrix(const std::string &name, int64_t rows, int64_t cols) {
  return Json{{"name", name}, {"dtype", "float32"}, {"shape", {rows, cols}},
              {"bytes", 4 * rows * cols}};
}

/// y = k2(k1(t), t) with t = a @ b: a GEMM into the arena, two kernels, two arena buffers.
Json functionManifest() {
  Json gemm{{"kind", "gemm"}, {"name", "matmul_0"}, {"dtype", "float32"}, {"m", 4}, {"n", 16},
            {"k", 8}, {"transpose_a", false}, {"transpose_b", false}, {"lda", 8}, {"ldb", 16},
            {"ldc", 16}, {"alpha", 1.0}, {"beta", 0.0}, {"batch", Json::array()},
            {"batch_strides", {{"a", Json::array()}, {"b", Json::array()}, {"c", Json::array()}}},
            {"epilogue", {{"bias", nullptr}, {"activation", "none"}}},
            {"outputs", {"t"}}, {"inputs", {"a", "b"}}};
  Json t = matrix("t", 4, 16), u = matrix("u", 4, 16);
  t["offset"] = 0, u["offset"] = 256;
  Json k2 = kernel("k2", "y", "u");
  k2["grid"] = 4, k2["inputs"].push_back("t");
  Json k1 = kernel("k1", "u", "t");
  k1["grid"] = 4;
  return Json{{"format", "sotc-manifest"},
              {"version", 3},
              {"target", {{"kind", "cpu"}, {"features", Json::array()}}},
              {"binary", {{"file", "k.so"}, {"sha256", "0"}}},
              {"entries", {entry({tensorInput("a", {4, 8}), tensorInput("b", {8, 16})})}},
              {"segments",
               {{{"name", "SIR_0"},
                 {"inputs", {matrix("a", 4, 8), matrix("b", 8, 16)}},
                 {"outputs", {matrix("y", 4, 16)}},
                 {"arena", {{"bytes", 512}, {"buffers", {t, u}}}},
                 {"steps", {gemm, k1, k2}},
                 {"end", {{"kind", "return"}, {"value", "y"}, {"result", {{"tensor", "y"}}}}}}}}};
}

} // namespace

TEST_CASE("an argsort step orders a real tensor's rows into int64 of its shape",
          "[runtime][manifest]") {
  Json m = functionManifest();
  Json order = matrix("order", 4, 8);
  order["dtype"] = "int64", order["bytes"] = 256;
  Json &segment = m["segments"][0];
  segment["outputs"] = {order};
  segment["arena"] = {{"bytes", 0}, {"buffers", Json::array()}};
  segment["steps"] = {{{"kind", "argsort"},
                       {"name", "argsort_0"},
                       {"axis", 1},
                       {"descending", true},
                       {"outputs", {"order"}},
                       {"inputs", {"a"}}}};
  segment["end"] = {{"kind", "return"}, {"value", "order"}, {"result", {{"tensor", "order"}}}};
  Artifact a = readManifest(m.dump(), "k.manifest.json");
  const sotc::runtime::Step &step = a.segments[0].steps[0];
  CHECK((step.kind == sotc::runtime::Step::Kind::Argsort && step.sortAxis == 1 && step.descending &&
         step.executorStep()));
  checkRefusals(m, {{"an axis past the input's rank", "sorts float32[4, 8] along dim 2",
                     [](Json &m) { m["segments"][0]["steps"][0]["axis"] = 2; }},
                    {"positions that are no int64", "into float32[4, 8]", [](Json &m) {
                       m["segments"][0]["outputs"][0]["dtype"] = "float32";
                       m["segments"][0]["outputs"][0]["bytes"] = 128;
                     }}});
  m["segments"][0]["steps"][0]["axis"] = -1;
  CHECK(refusal(m).find("are not an argsort's") != std::string::npos);
}

TEST_CASE("a plan that does not hold together is refused, check by check", "[runtime][manifest]") {
  REQUIRE(refusal(functionManifest()) == "read");
  const std::vector<Probe> probes = {
      {"overlapping live buffers", "places t and u, which are live at the same time",
       [](Json &m) { m["segments"][0]["arena"]["buffers"][1]["offset"] = 0; }},
      {"an arena offset that overflows", "has its arena buffer t outside its arena",
       [](Json &m) { m["segments"][0]["arena"]["buffers"][0]["offset"] = INT64_MAX - 4096; }},
      {"understated bytes", "says its arena buffer u (float32[4, 16]) has 200 bytes",
       [](Json &m) { m["segments"][0]["arena"]["buffers"][1]["bytes"] = 200; }},
      {"a GEMM's m raised", "step 0 (matmul_0) reaches past its C t",
       [](Json &m) { m["segments"][0]["steps"][0]["m"] = 3200; }},
      {"a batch that is not there", "step 0 (matmul_0) reaches past its C t",
       [](Json &m) {
         Json &g = m["segments"][0]["steps"][0];
         g["batch"] = {4000};
         g["batch_strides"] = {{"a", {0}}, {"b", {0}}, {"c", {64}}};
       }},
      {"swapped GEMM inputs", "step 0 (matmul_0) reaches past its B a",
       [](Json &m) {
         m["segments"][0]["steps"][0]["inputs"] = {"b", "a"};
       }},
      {"a GEMM operand of another dtype", "step 0 (matmul_0)'s B b is int32[8, 16]",
       [](Json &m) { m["segments"][0]["inputs"][1]["dtype"] = "int32"; }},
      {"a step writing a caller's input", "step 1 (k1) writes its input a",
       [](Json &m) { m["segments"][0]["steps"][1]["outputs"] = {"a"}; }},
      {"a step naming nothing", "step 2 names v, which is no buffer of it",
       [](Json &m) { m["segments"][0]["steps"][2]["inputs"][0] = "v"; }},
      {"a zero grid", "step 1 (k1) has a grid of 0",
       [](Json &m) { m["segments"][0]["steps"][1]["grid"] = 0; }},
      {"a negative grid", "step 2 (k2) has a grid of -3",
       [](Json &m) { m["segments"][0]["steps"][2]["grid"] = -3; }},
      {"a segment shape larger than the entry's", "SIR_0's input a is float32[4, 9]",
       [](Json &m) { m["segments"][0]["inputs"][0] = matrix("a", 4, 9); }},
      {"an entry shape of -9 (no dynamic size's)", "input a has a dimension of -9",
       [](Json &m) {
         m["entries"][0]["inputs"][0]["shape"] = {-9, 8};
       }},
      {"an entry shape of 2^62", "the entry's input b is float32[4611686018427387904, 16]",
       [](Json &m) {
         m["entries"][0]["inputs"][1]["shape"] = {int64_t(1) << 62, 16};
       }},
      {"an unknown dtype", "the entry's input a is ?[4, 8]",
       [](Json &m) { m["entries"][0]["inputs"][0]["dtype"] = "float99"; }},
      {"a result from the arena", "returns t, which is none of its inputs or outputs",
       [](Json &m) {
         m["segments"][0]["end"]["result"] = {{"tensor", "t"}};
       }},
  };
  checkRefusals(functionManifest(), probes);
}

TEST_CASE("a CPU manifest's kernel variants are read; a table name that is no symbol is refused",
          "[runtime][manifest]") {
  Json m = modelManifest("cpu");
  m["target"]["cpu"] = "x86-64-v3";
  m["target"]["variants"] = Json::array({{{"cpu", "x86-64-v4"},
                                          {"features", {"avx512f"}},
                                          {"kernel_table", "sotc_kernels_x86_64_v4"}}});
  Artifact a = readManifest(m.dump(), "k.manifest.json");
  REQUIRE(a.variants.size() == 1);
  CHECK(a.cpu == "x86-64-v3");
  CHECK(a.variants[0].cpu == "x86-64-v4");
  CHECK(a.variants[0].table == "sotc_kernels_x86_64_v4");
  CHECK(a.variants[0].features == std::vector<std::string>{"avx512f"});
  for (const char *table : {"printf", "sotc_kernels_x; rm", "sotc_kernels_"}) {
    m["target"]["variants"][0]["kernel_table"] = table;
    INFO(table);
    CHECK(refusal(m).rfind("E8001: k.manifest.json: ", 0) == 0);
  }
}

TEST_CASE("the entries of a bundle: each its own segments, the same parameters",
          "[runtime][manifest]") {
  // Two entries: the second a copy of the first's plan, at segment 1.
  auto bundle = [] {
    Json m = functionManifest();
    m["segments"].push_back(m["segments"][0]);
    m["entries"].push_back(entry(m["entries"][0]["inputs"], 1));
    return m;
  };
  Artifact a = readManifest(bundle().dump(), "k.manifest.json");
  REQUIRE(a.entries.size() == 2);
  CHECK((a.entries[0].first == 0 && a.entries[0].end == 1));
  CHECK((a.entries[1].first == 1 && a.entries[1].end == 2));
  CHECK(a.entries[1].trace == "t1.pb");
  const std::vector<Probe> probes = {
      {"an entry without segments", "entry 1 has no segments of its own",
       [](Json &m) { m["entries"][1]["segment"] = 2; }},
      {"entries out of order", "entry 0 has no segments of its own",
       [](Json &m) { m["entries"][1]["segment"] = 0; }},
      {"other parameters", "the entry of t1.pb takes other parameters than the entry of t0.pb",
       [](Json &m) { m["entries"][1]["inputs"][1]["name"] = "c"; }},
      {"a branch into another entry", "SIR_0 branches to no segment of its entry",
       [](Json &m) {
         m["segments"][1]["end"] = {{"kind", "branch"}, {"condition", "y"},
                                    {"on_true", 0},     {"true_args", Json::array()},
                                    {"on_false", 1},    {"false_args", Json::array()},
                                    {"reason", ""},     {"source", ""}};
       }},
      {"no entries", "no entries", [](Json &m) { m["entries"] = Json::array(); }},
  };
  checkRefusals(bundle(), probes);
}

namespace {

/// functionManifest with a dynamic size s0: a [?, 8] @ b, its rows s0, the kernels' grids s0,
/// the arena's buffers of s0 without offsets (the runtime places them per call).
Json batchManifest() {
  Json m = functionManifest();
  m["entries"][0]["inputs"][0]["shape"] = {-1, 8};
  Json &seg = m["segments"][0];
  for (Json *t : {&seg["inputs"][0], &seg["outputs"][0], &seg["arena"]["buffers"][0],
                  &seg["arena"]["buffers"][1]}) {
    (*t)["shape"][0] = -1;
    (*t)["bytes"] = (*t)["bytes"].get<int64_t>() / 4;
  }
  seg["arena"]["bytes"] = 0;
  for (Json &b : seg["arena"]["buffers"])
    b.erase("offset");
  seg["steps"][0]["m"] = "s0";
  for (int s : {1, 2})
    seg["steps"][s]["grid"] = "s0";
  return m;
}

} // namespace

TEST_CASE("a dynamic size's plan is resolved for a call's s0", "[runtime][manifest]") {
  Artifact a = readManifest(batchManifest().dump(), "k.manifest.json");
  REQUIRE(a.entries[0].batched);
  const sotc::runtime::Segment &perRow = a.segments[0];
  CHECK(perRow.arenaBytes == 0);
  CHECK((perRow.steps[1].gridPowers[0] == 1 && perRow.steps[1].sizes == std::vector<int>{0}));
  CHECK((perRow.steps[0].plan.m == 1 && perRow.steps[0].plan.powers.at(0)[0] == 1));

  Artifact three = sotc::runtime::atSizes(a, 0, {3});
  CHECK(!three.entries[0].batched);
  CHECK(three.entries[0].parameters[0].spec.shape == std::vector<int64_t>{3, 8});
  CHECK(three.entries[0].parameters[0].spec.bytes == 96);
  const sotc::runtime::Segment &seg = three.segments[0];
  CHECK((seg.inputs[0].shape == std::vector<int64_t>{3, 8} && seg.inputs[0].bytes == 96));
  CHECK(seg.inputs[1].shape == std::vector<int64_t>{8, 16}); // static: as it was
  CHECK((seg.outputs[0].shape == std::vector<int64_t>{3, 16} && seg.outputs[0].bytes == 192));
  // Placed first fit at these sizes, 64-byte aligned: t (steps 0..1), then u (1..2) beside it.
  CHECK(seg.arenaBytes == 384);
  CHECK((seg.arena[0].offset == 0 && seg.arena[1].offset == 192 && seg.arena[1].bytes == 192));
  CHECK((seg.steps[0].plan.m == 3 && seg.steps[1].grid == 3 && seg.steps[2].grid == 3));
  CHECK((seg.steps[1].sizeArgs == std::vector<int64_t>{3} && seg.steps[0].plan.powers.empty()));
  CHECK(seg.steps[1].bytes == 2 * 192); // what it touches, at these rows

  // A batch beyond what any buffer can hold is refused before anything is allocated.
  CHECK_THROWS_WITH(sotc::runtime::atSizes(a, 0, {int64_t(1) << 46}),
                    Catch::Contains("is beyond what a plan can hold"));
}

TEST_CASE("two dynamic sizes resolve each from its own value", "[runtime][manifest]") {
  // a: [s0, 8] as before, its GEMM's rows s0; the kernels over [s0, s1] and [s1, 16]-shaped
  // work: a grid of 2*s0*s1 taking both, one of s1 taking s1 alone.
  Json m = batchManifest();
  Json &seg = m["segments"][0];
  seg["steps"][1]["grid"] = "2*s0*s1";
  seg["steps"][1]["sizes"] = {"s0", "s1"};
  seg["steps"][2]["grid"] = "s1";
  seg["steps"][2]["sizes"] = {"s1"};
  Artifact a = readManifest(m.dump(), "k.manifest.json");
  const sotc::runtime::Step &both = a.segments[0].steps[1];
  CHECK((both.grid == 2 && both.gridPowers[0] == 1 && both.gridPowers[1] == 1));
  CHECK(both.sizes == std::vector<int>{0, 1});
  Artifact at = sotc::runtime::atSizes(a, 0, {3, 5});
  const sotc::runtime::Segment &resolved = at.segments[0];
  CHECK((resolved.steps[1].grid == 30 && resolved.steps[1].sizeArgs == std::vector<int64_t>{3, 5}));
  CHECK((resolved.steps[2].grid == 5 && resolved.steps[2].sizeArgs == std::vector<int64_t>{5}));
  CHECK(resolved.steps[0].plan.m == 3);
  // A kernel's sizes are sizes, each once.
  for (const Json &bad : {Json{"s0", "s9"}, Json{"2*s1"}, Json{"s1^2"}}) {
    Json wrong = m;
    wrong["segments"][0]["steps"][1]["sizes"] = bad;
    CHECK(refusal(wrong).rfind("E8001: ", 0) == 0);
  }
  Json many = m;
  many["segments"][0]["steps"][1]["sizes"] = {"s0", "s1", "s2", "s3", "s4"};
  CHECK(refusal(many) == "E8002: kernel " + seg["steps"][1]["symbol"].get<std::string>() +
                             " takes more than 4 dynamic sizes");
}

TEST_CASE("a dimension that is a product of sizes resolves to their product",
          "[runtime][manifest]") {
  // u: [s0, 16] as [2*s0, 8] (rows merged with the dims after them), the same bytes.
  Json m = batchManifest();
  Json &u = m["segments"][0]["arena"]["buffers"][1];
  u["shape"] = {"2*s0", 8};
  Artifact a = readManifest(m.dump(), "k.manifest.json");
  const sotc::runtime::Buffer &merged = a.segments[0].arena[1];
  CHECK((merged.isProduct(merged.shape[0]) && merged.products.at(0).first == 2 &&
         merged.products.at(0).second[0] == 1));
  Artifact three = sotc::runtime::atSizes(a, 0, {3});
  CHECK(three.segments[0].arena[1].shape == std::vector<int64_t>{6, 8});
  CHECK(three.segments[0].arena[1].bytes == 192);
  for (const Json &bad : {Json("2*s9"), Json("s0*"), Json(-9)}) {
    Json wrong = m;
    wrong["segments"][0]["arena"]["buffers"][1]["shape"][0] = bad;
    CHECK(refusal(wrong).rfind("E8001: ", 0) == 0);
  }
}

TEST_CASE("a dynamic batch's manifest that does not hold together is refused",
          "[runtime][manifest]") {
  REQUIRE(refusal(batchManifest()) == "read");
  for (const char *bad : {"n", "2*s8", "2*s0^", "s0*2", "2*s0^x", "*s0", "-2*s0", "0*s0", "s0^0",
                          "99999999999999999999*s0", "s0*s0", "2*s0*", "s1s0"}) {
    Json m = batchManifest();
    m["segments"][0]["steps"][0]["m"] = bad;
    CHECK(refusal(m) == std::string("E8001: a count of \"") + bad + "\" (a number or N*s0^P*s1^Q)");
  }
  checkRefusals(
      batchManifest(),
      {
          {"a batch buffer in an entry without a batch",
           "SIR_0 has the input a of float32[-1, 8], no dtype and shape this runtime holds",
           [](Json &m) {
             m["entries"][0]["inputs"][0]["shape"] = {4, 8};
           }},
          {"a GEMM whose rows outgrow C", "step 0 (matmul_0) reaches past its C t",
           [](Json &m) { m["segments"][0]["steps"][0]["m"] = "2*s0"; }},
      });
  Json cuda = batchManifest(); // the same plan on CUDA: the kernels' blocks as given
  cuda["target"]["kind"] = "cuda";
  for (int s : {1, 2})
    cuda["segments"][0]["steps"][s]["block"] = 32,
    cuda["segments"][0]["steps"][s]["shared_bytes"] = 0;
  CHECK(refusal(cuda) == "read");
}

TEST_CASE("a dynamic batch's guards are what decisions on its size kept", "[runtime][manifest]") {
  Json m = batchManifest();
  auto guard = [](const std::string &id, const std::string &expected) {
    return Json{{"id", id},
                {"kind", "batch"},
                {"expression", "frame.f_locals['a'].shape[0]"},
                {"expected", expected},
                {"condition", ""},
                {"source", "p.py:3"}};
  };
  m["entries"][0]["guards"] = {guard("g0", ">= 4"), guard("g1", "!= 6"), guard("g2", ">= 2"),
                               guard("g3", "<= 64"), guard("g4", "<= 4096")};
  Artifact a = readManifest(m.dump(), "k.manifest.json");
  const sotc::runtime::Entry::SizeGuards &s0 = a.entries[0].sizeGuards[0];
  CHECK(s0.min == 4);
  CHECK(s0.max == 64);
  CHECK(s0.excluded == std::vector<int64_t>{6});
  CHECK(s0.guards == "g0 (p.py:3), g1 (p.py:3), g2 (p.py:3), g3 (p.py:3), g4 (p.py:3)");
  for (const char *bad : {"> 4", ">= four", "!= 3 rows", "< 5", "", "% 1 == 0", "% 2 == 1"}) {
    INFO(bad);
    m["entries"][0]["guards"] = {guard("g0", bad)};
    CHECK(refusal(m).find("a batch guard expects '>= N', '<= N', '!= N' or '% N == 0'") !=
          std::string::npos);
  }
}

TEST_CASE("sizes derived from the inputs' are read as their base plus a number",
          "[runtime][manifest]") {
  Json m = batchManifest();
  m["entries"][0]["derived_sizes"] = {{{"size", "s1"}, {"base", "s0"}, {"offset", -1}},
                                      {{"size", "s2"}, {"base", "s0"}, {"offset", 1}}};
  Artifact a = readManifest(m.dump(), "k.manifest.json");
  REQUIRE(a.entries[0].derivedSizes.size() == 2);
  const sotc::runtime::Entry::DerivedSize &d = a.entries[0].derivedSizes[0];
  CHECK((d.size == 1 && d.base == 0 && d.offset == -1));
  for (const Json &bad : {Json{{{"size", "s9"}, {"base", "s0"}, {"offset", -1}}},
                          Json{{{"size", "s1"}, {"base", "s1"}, {"offset", -1}}},
                          Json{{{"size", "s1"}, {"base", "s0"}, {"offset", -1}},
                               {{"size", "s2"}, {"base", "s1"}, {"offset", -1}}},
                          Json{{{"size", "s1"}, {"base", "s0"}, {"offset", -1}},
                               {{"size", "s1"}, {"base", "s0"}, {"offset", 1}}}}) {
    Json wrong = m;
    wrong["entries"][0]["derived_sizes"] = bad;
    CHECK(refusal(wrong).rfind("E8001: ", 0) == 0);
  }
}

TEST_CASE("an input dimension that is a multiple of a size binds the size as its part",
          "[runtime][manifest]") {
  // a: [2*s0, 8] where the program splits the batch in pairs; its guards read the dimension.
  Json m = batchManifest();
  m["entries"][0]["inputs"][0]["shape"] = {"2*s0", 8};
  for (Json *in : {&m["segments"][0]["inputs"][0]})
    (*in)["shape"] = {"2*s0", 8}, (*in)["bytes"] = 64;
  auto guard = [](const std::string &id, const std::string &expected) {
    return Json{{"id", id},
                {"kind", "batch"},
                {"expression", "frame.f_locals['a'].shape[0]"},
                {"expected", expected},
                {"condition", "frame.f_locals['a'].shape[0] " + expected},
                {"source", "p.py:3"}};
  };
  m["entries"][0]["guards"] = {guard("g0", "% 2 == 0"), guard("g1", ">= 10"), guard("g2", "<= 64"),
                               guard("g3", "!= 7")};
  REQUIRE(refusal(m) == "read");
  Artifact a = readManifest(m.dump(), "k.manifest.json");
  const sotc::runtime::Parameter &p = a.entries[0].parameters[0];
  CHECK(p.spec.shape == std::vector<int64_t>{-1, 8});
  CHECK(p.multipleOf(0) == 2);
  CHECK(p.boundSpec().isProduct(p.boundSpec().shape[0]));
  const sotc::runtime::Entry::SizeGuards &s0 = a.entries[0].sizeGuards[0];
  CHECK((s0.multiple == 2 && s0.min == 5 && s0.max == 32 && s0.excluded.empty()));
  CHECK(s0.multipleGuards == "g0 (p.py:3)");
  Json product = m;
  product["entries"][0]["inputs"][0]["shape"] = {"s0*s1", 8};
  CHECK(refusal(product).find("input a has a dimension of \"s0*s1\", not a multiple of one size") !=
        std::string::npos);
}

namespace {
/// y = 2 * x[nonzero(x)]: segment 0 computes the coordinates of x's nonzeros at their bound (5)
/// and their count n, which its size end binds as s0; segment 1 doubles the first s0 rows.
Json countedManifest() {
  auto tensor = [](const std::string &name, const char *dtype, Json shape, int64_t bytes) {
    return Json{{"name", name}, {"dtype", dtype}, {"shape", std::move(shape)}, {"bytes", bytes}};
  };
  Json m{{"format", "sotc-manifest"},
         {"version", 3},
         {"target", {{"kind", "cpu"}, {"features", Json::array()}}},
         {"binary", {{"file", "k.so"}, {"sha256", "0"}}},
         {"entries",
          {entry({{{"name", "x"},
                   {"kind", "tensor"},
                   {"dtype", "float32"},
                   {"shape", {5}},
                   {"stop_gradient", true},
                   {"buffer", "x"}}})}}};
  m["entries"][0]["produced_sizes"] = {{{"size", "s0"}, {"segment", 0}, {"source", "p.py:3"}}};
  Json kernelOfRows = kernel("twice", "y", "rows");
  kernelOfRows["grid"] = "s0";
  m["segments"] = Json::array(
      {{{"name", "SIR_0"},
        {"inputs", {buffer("x", 5)}},
        {"outputs", {tensor("rows", "int64", {5, 1}, 40), tensor("n", "int64", Json::array(), 8)}},
        {"arena", {{"bytes", 0}, {"buffers", Json::array()}}},
        {"steps",
         {{{"kind", "nonzero"},
           {"name", "nonzero_0"},
           {"fill", 0},
           {"outputs", {"rows"}},
           {"inputs", {"x"}}},
          kernel("count", "n", "x")}},
        {"end",
         {{"kind", "size"},
          {"size", "s0"},
          {"count", "n"},
          {"bound", 5},
          {"next", 1},
          {"next_args", {"rows"}},
          {"reason", "the rows of nonzero() (size s0)"},
          {"source", "p.py:3"}}}},
       {{"name", "SIR_1"},
        {"inputs", {tensor("rows", "int64", {-1, 1}, 8)}},
        {"outputs", {tensor("y", "int64", {-1, 1}, 8)}},
        {"arena", {{"bytes", 0}, {"buffers", Json::array()}}},
        {"steps", {kernelOfRows}},
        {"end", {{"kind", "return"}, {"value", "y"}, {"result", {{"tensor", "y"}}}}}}});
  return m;
}
} // namespace

TEST_CASE("a size a segment counts is bound where it ends; steps over none do not run",
          "[runtime][manifest]") {
  Artifact a = readManifest(countedManifest().dump(), "k.manifest.json");
  REQUIRE(a.entries[0].batched); // its inputs are static, its plan is made per count
  CHECK(a.entries[0].producedSizes == std::vector<int>{0});
  const sotc::runtime::Segment &counting = a.segments[0];
  CHECK((counting.end == sotc::runtime::Segment::End::Size && counting.size == 0 &&
         counting.condition == "n" && counting.bound == 5 && counting.next == 1));
  CHECK(counting.steps[0].kind == sotc::runtime::Step::Kind::Nonzero);

  Artifact three = sotc::runtime::atSizes(a, 0, {3});
  CHECK(three.segments[1].inputs[0].shape == std::vector<int64_t>{3, 1});
  CHECK((three.segments[1].steps[0].grid == 3 && !three.segments[1].steps[0].empty));
  Artifact none = sotc::runtime::atSizes(a, 0, {0});
  CHECK((none.segments[1].steps[0].grid == 0 && none.segments[1].steps[0].empty));
  CHECK(none.segments[1].outputs[0].bytes == 0);
  // A kernel over the rows that also writes a 0-d sum of them has no block to write it with
  // at a count of 0: it fails where it runs instead of leaving the sum unwritten.
  Json summed = countedManifest();
  summed["segments"][1]["outputs"].push_back(
      {{"name", "total"}, {"dtype", "int64"}, {"shape", Json::array()}, {"bytes", 8}});
  summed["segments"][1]["steps"][0]["outputs"].push_back("total");
  Artifact noneSummed =
      sotc::runtime::atSizes(readManifest(summed.dump(), "k.manifest.json"), 0, {0});
  CHECK((noneSummed.segments[1].steps[0].sumsNone && !noneSummed.segments[1].steps[0].empty));
  // Passed on as the first rows: more rows than were computed do not fit, checked where the
  // end jumps (a plan has a size a later end counts again at an older count).
  Artifact six = sotc::runtime::atSizes(a, 0, {6});
  CHECK_THROWS_WITH(sotc::runtime::checkCountedJump(three, 0, six),
                    Catch::Contains("does not hold"));
  CHECK_NOTHROW(sotc::runtime::checkCountedJump(three, 0, none));

  // A tensor without elements counts at most 0: its plan holds (counted sizes are planned
  // at 0 until counted).
  Json empty = countedManifest();
  empty["segments"][0]["end"]["bound"] = 0;
  empty["segments"][0]["outputs"][0]["shape"] = {0, 1};
  empty["segments"][0]["outputs"][0]["bytes"] = 0;
  CHECK(refusal(empty) == "read");

  checkRefusals(
      countedManifest(),
      {{"a count that is no int64 scalar", "counts a size in rows, which is no int64 scalar",
        [](Json &m) { m["segments"][0]["end"]["count"] = "rows"; }},
       {"a size end to no segment", "continues in no segment of its entry",
        [](Json &m) { m["segments"][0]["end"]["next"] = 7; }},
       {"a nonzero step whose output is no int64 [size, rank]",
        "writes the nonzeros of float32[5] to", [](Json &m) {
          m["segments"][0]["outputs"][0]["shape"] = {5, 2};
          m["segments"][0]["outputs"][0]["bytes"] = 80;
        }}});
  Json beyond = countedManifest();
  beyond["segments"][0]["end"]["size"] = "s9";
  CHECK(refusal(beyond).find("SIR_0 counts a size s9, not s0 to s7") != std::string::npos);
}
