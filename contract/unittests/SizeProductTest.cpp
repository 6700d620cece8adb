// The one text form of a size that holds dynamic sizes: what the manifest writer prints and the
// runtime, the compiler's dumps and `sotc inspect` read back.
#include "contract/SizeProduct.h"

#include <catch2/catch.hpp>

using namespace sotc::contract;

TEST_CASE("a size product prints and parses as one text", "[contract]") {
  SizeProduct p{64, {1, 2}};
  CHECK(p.text() == "64*s0*s1^2");
  CHECK(SizeProduct::parse("64*s0*s1^2") == p);
  CHECK(SizeProduct::symbol(3).text() == "s3");
  CHECK(SizeProduct::constant(8).text() == "8");
  CHECK(SizeProduct::parse("8") == SizeProduct::constant(8));
  CHECK(SizeProduct::parse("s0^9") == SizeProduct{1, {9}});
  // Every product of up to two sizes at powers 1 to 9 with a few factors round-trips.
  for (int64_t factor : {1, 2, 48, 1 << 30})
    for (int a = 0; a <= kMaxSizePower; ++a)
      for (int b = 0; b <= kMaxSizePower; ++b) {
        SizeProduct q{factor, {a, 0, 0, 0, 0, 0, 0, b}};
        CHECK(SizeProduct::parse(q.text()) == q);
      }
}

TEST_CASE("text that is no size product is refused", "[contract]") {
  for (const char *bad : {"",
                          "n",
                          "2*s8",
                          "2*s0^",
                          "s0*2",
                          "2*s0^x",
                          "*s0",
                          "-2*s0",
                          "0*s0",
                          "0",
                          "s0^0",
                          "s0^10",
                          "99999999999999999999*s0",
                          "s0*s0",
                          "2*s0*",
                          "s1s0",
                          "2**s0",
                          "s",
                          "s0 ",
                          " 2"})
    CHECK_FALSE(SizeProduct::parse(bad));
}

TEST_CASE("a size product's value at sizes stops at its limit", "[contract]") {
  SizeValues sizes{3, 5};
  CHECK(SizeProduct{2, {1, 2}}.valueAt(sizes) == 150);
  CHECK(SizeProduct{2, {1, 2}}.valueAt(sizes, 149) == std::nullopt);
  CHECK(SizeProduct::constant(7).valueAt(sizes) == 7);
  SizeValues huge{int64_t{1} << 40};
  CHECK(SizeProduct{1, {2}}.valueAt(huge) == std::nullopt); // 2^80 overflows
  CHECK(quotient(SizeProduct{64, {1, 2}}, SizeProduct{8, {0, 1}}) == SizeProduct{8, {1, 1}});
  CHECK(quotient(SizeProduct{64, {1}}, SizeProduct{3, {}}) == std::nullopt);
  CHECK(quotient(SizeProduct{64, {1}}, SizeProduct{1, {0, 1}}) == std::nullopt);
  CHECK(SizeProduct{64, {1, 2}}.degree() == 3);
  CHECK((SizeProduct{2, {1}} * SizeProduct{3, {0, 1}}) == SizeProduct{6, {1, 1}});
}
