// The digests the manifest records (binary, trace, weights) are the runtime's: SHA-256 of any
// size, a model's weights of 512 MiB and more included.
#include "compiler/target/manifest/Manifest.h"

#include <catch2/catch.hpp>

#include <string>

using sotc::manifest::sha256;

TEST_CASE("sha256 gives the standard digests", "[manifest]") {
  CHECK(sha256("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("sha256 of 512 MiB and more (a VGG-16's weights)", "[manifest]") {
  // 2^29 + 3 zero bytes, as Python's hashlib digests them.
  std::string bytes((size_t{1} << 29) + 3, '\0');
  CHECK(sha256(bytes) == "403a955183d83bd37bd31dde74eb3b713fcf99b6ba1a87fa91aa5befe4f51280");
}
