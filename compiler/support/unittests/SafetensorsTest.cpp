#include "compiler/support/Diagnostics.h"
#include "compiler/support/Safetensors.h"

#include <catch2/catch.hpp>

using namespace sotc;

namespace {
std::string codeOf(std::string_view bytes) {
  try {
    parseSafetensors(bytes, "w.safetensors");
  } catch (const CodedError &e) {
    return std::string(diagInfo(e.code()).id) + " " + e.what();
  }
  return "ok";
}
} // namespace

TEST_CASE("safetensors files round-trip byte for byte", "[safetensors]") {
  std::string a(4 * 6, '\1'), b(8 * 2, '\2');
  std::map<std::string, SafetensorsTensor> tensors = {{"fc.weight", {"F32", {2, 3}, a}},
                                                      {"emb", {"I64", {2}, b}}};
  std::string file = writeSafetensors(tensors);
  CHECK(file == writeSafetensors(tensors)); // deterministic
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i)
    header = header << 8 | static_cast<uint8_t>(file[i]);
  CHECK(header % 8 == 0); // the data is aligned
  auto back = parseSafetensors(file, "w.safetensors");
  REQUIRE(back.size() == 2);
  CHECK(back.at("fc.weight").dtype == "F32");
  CHECK(back.at("fc.weight").shape == std::vector<int64_t>{2, 3});
  CHECK(back.at("fc.weight").bytes == a);
  CHECK(back.at("emb").bytes == b);
}

TEST_CASE("corrupt safetensors files are E1015 with the reason", "[safetensors]") {
  CHECK(codeOf("abc").find("E1015 w.safetensors: not a safetensors file") == 0);
  std::string huge(8, '\xff');
  CHECK(codeOf(huge).find("runs past the end") != std::string::npos);
  std::string file = writeSafetensors({{"w", {"F32", {4}, std::string(16, '\0')}}});
  CHECK(codeOf(file.substr(0, file.size() - 4)).find("do not fit") != std::string::npos);
  std::string text = "{\"w\": {\"dtype\": \"Q9\", \"shape\": [1], \"data_offsets\": [0, 1]}}";
  std::string odd(8, '\0');
  odd[0] = static_cast<char>(text.size());
  CHECK(codeOf(odd + text + "x").find("unknown dtype Q9") != std::string::npos);
}
