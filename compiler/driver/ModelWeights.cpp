#include "compiler/driver/ModelWeights.h"
#include "compiler/support/Diagnostics.h"
#include "compiler/support/Safetensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <map>

namespace sotc::driver {
namespace {
/// safetensors' name for a dtype ("float32" -> "F32"); empty for one it cannot hold.
std::string safetensorsDType(ops::DType dtype) {
  static const std::map<std::string, std::string> names = {
      {"float64", "F64"}, {"float32", "F32"}, {"float16", "F16"}, {"bfloat16", "BF16"},
      {"int64", "I64"},   {"int32", "I32"},   {"int16", "I16"},   {"int8", "I8"},
      {"uint8", "U8"},    {"bool", "BOOL"}};
  auto it = names.find(ops::dtypeName(dtype));
  return it == names.end() ? "" : it->second;
}
} // namespace

std::string artifactWeights(const std::string &tracePath, const trace::Trace &trace,
                            const frontend::Translation &translation) {
  if (trace.weights_file().empty())
    throw CodedError(DiagCode::TraceBadWeights,
                     tracePath + ": the model's trace names no weights file (save the trace "
                                 "with Trace.save, which writes the weights beside it)");
  llvm::SmallString<256> path = llvm::sys::path::parent_path(tracePath);
  llvm::sys::path::append(path, trace.weights_file());
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    throw CodedError(DiagCode::TraceBadWeights, std::string(path) + ": cannot read the model's "
                                                                    "weights: " +
                                                    file.getError().message());
  std::string what(path);
  std::string_view bytes((*file)->getBufferStart(), (*file)->getBufferSize());
  std::map<std::string, SafetensorsTensor> traced = parseSafetensors(bytes, what), used;
  for (const frontend::VarPtr &p : translation.parameters) {
    if (p->weight.empty())
      continue;
    auto it = traced.find(p->weight);
    if (it == traced.end())
      throw CodedError(DiagCode::TraceBadWeights, what + ": has no weight '" + p->weight + "'");
    auto text = [](const std::string &dtype, const std::vector<int64_t> &shape) {
      std::string s = dtype + "[";
      for (size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
      return s + "]";
    };
    std::string dtype = safetensorsDType(p->meta.dtype);
    if (it->second.dtype != dtype || it->second.shape != p->meta.shape)
      throw CodedError(DiagCode::TraceBadWeights,
                       what + ": weight '" + p->weight + "' is " +
                           text(it->second.dtype, it->second.shape) + ", traced as " +
                           text(dtype, p->meta.shape));
    used.insert(*it);
  }
  return writeSafetensors(used);
}

} // namespace sotc::driver
