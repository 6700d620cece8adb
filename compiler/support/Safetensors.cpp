#include "compiler/support/Safetensors.h"
#include "compiler/support/Diagnostics.h"

#include <nlohmann/json.hpp>

namespace sotc {
namespace {
using Json = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string &what, const std::string &why) {
  throw CodedError(DiagCode::TraceBadWeights, what + ": " + why);
}
} // namespace

size_t safetensorsDTypeSize(const std::string &dtype) {
  static const std::map<std::string, size_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

std::map<std::string, SafetensorsTensor> parseSafetensors(std::string_view bytes,
                                                          const std::string &what) {
  if (bytes.size() < 8)
    bad(what, "not a safetensors file (" + std::to_string(bytes.size()) + " bytes)");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = headerSize << 8 | static_cast<uint8_t>(bytes[i]);
  if (headerSize > bytes.size() - 8)
    bad(what, "its header runs past the end of the file");
  Json header = Json::parse(bytes.substr(8, headerSize), nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    bad(what, "its header is not a JSON object");
  std::string_view data = bytes.substr(8 + headerSize);
  std::map<std::string, SafetensorsTensor> out;
  for (auto &[name, entry] : header.items()) {
    if (name == "__metadata__")
      continue;
    SafetensorsTensor t;
    try {
      t.dtype = entry.at("dtype").get<std::string>();
      t.shape = entry.at("shape").get<std::vector<int64_t>>();
      auto offsets = entry.at("data_offsets").get<std::vector<uint64_t>>();
      size_t elements = 1, size = safetensorsDTypeSize(t.dtype);
      for (int64_t d : t.shape) {
        if (d < 0)
          bad(what, "tensor '" + name + "' has a negative dimension");
        elements *= static_cast<size_t>(d);
      }
      if (!size)
        bad(what, "tensor '" + name + "' has the unknown dtype " + t.dtype);
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data.size() ||
          offsets[1] - offsets[0] != elements * size)
        bad(what, "tensor '" + name + "' has byte offsets that do not fit its shape or the file");
      t.bytes = data.substr(offsets[0], offsets[1] - offsets[0]);
    } catch (const Json::exception &e) {
      bad(what, "tensor '" + name + "' is malformed (" + e.what() + ")");
    }
    out.emplace(name, std::move(t));
  }
  return out;
}

std::string writeSafetensors(const std::map<std::string, SafetensorsTensor> &tensors) {
  Json header = Json::object();
  uint64_t offset = 0;
  for (const auto &[name, t] : tensors) {
    header[name] = Json{{"dtype", t.dtype},
                        {"shape", t.shape},
                        {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' '); // the data starts 8-byte aligned
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>(static_cast<uint64_t>(text.size()) >> (8 * i) & 0xff);
  out += text;
  for (const auto &[name, t] : tensors)
    out.append(t.bytes);
  return out;
}

} // namespace sotc
