//===- Safetensors.h - The safetensors weight format ------------------------------------===//
//
// A model's weights travel in safetensors files (the ecosystem's format): an 8-byte
// little-endian header size, a JSON header naming each tensor's dtype ("F32"), shape and byte
// range, then the bytes. The tracer writes one beside a model's trace; `sotc compile` writes
// the weights an artifact needs beside the artifact.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_SUPPORT_SAFETENSORS_H
#define SOTC_SUPPORT_SAFETENSORS_H

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sotc {

struct SafetensorsTensor {
  std::string dtype; // safetensors' name: F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL
  std::vector<int64_t> shape;
  std::string_view bytes; // into the parsed file's bytes, or what to write
};

/// The tensors of a safetensors file's `bytes` (which must outlive the result), by name;
/// throws CodedError (E1015) naming what is wrong with the file `what`.
std::map<std::string, SafetensorsTensor> parseSafetensors(std::string_view bytes,
                                                          const std::string &what);

/// A safetensors file holding `tensors` in name order (the same tensors give the same bytes).
std::string writeSafetensors(const std::map<std::string, SafetensorsTensor> &tensors);

/// Bytes per element of a safetensors dtype; 0 when it is not one.
size_t safetensorsDTypeSize(const std::string &dtype);

} // namespace sotc

#endif // SOTC_SUPPORT_SAFETENSORS_H
