// The artifact's naming rule, which the compiler writes by and the runtime reads by.
#include "contract/ArtifactFiles.h"

#include <catch2/catch.hpp>

using namespace sotc::contract;

TEST_CASE("the files of an artifact are named after its binary", "[contract]") {
  CHECK(manifestPathOf("out/k.so") == "out/k.manifest.json");
  CHECK(weightsPathOf("out/k.so") == "out/k.weights.safetensors");
  // A fatbin's say so: a CPU and a CUDA artifact of one name lie side by side.
  CHECK(manifestPathOf("k.fatbin") == "k.cuda.manifest.json");
  CHECK(weightsPathOf("k.fatbin") == "k.cuda.weights.safetensors");
  CHECK(manifestPathOf("k.bin") == "k.bin.manifest.json");
  CHECK(manifestPathOf(".so") == ".so.manifest.json"); // no name before the extension
  CHECK(isManifestPath("k.cuda.manifest.json"));
  CHECK_FALSE(isManifestPath("k.so"));
  CHECK_FALSE(isManifestPath(".json"));
}
