#include "Inspect.h"

#include "compiler/driver/Driver.h"
#include "compiler/support/Diagnostics.h"
#include "compiler/target/manifest/Manifest.h"

#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <set>
#include <sstream>

namespace sotc::inspect {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string &message) {
  throw CodedError(DiagCode::InspectMismatch, message);
}

std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    throw CodedError(DiagCode::TraceUnreadable,
                     path + ": cannot read (" + buffer.getError().message() + ")");
  return std::string((*buffer)->getBuffer());
}

std::string shape(const Json &tensor) {
  std::string s = tensor["dtype"].get<std::string>() + "[";
  for (size_t i = 0; i < tensor["shape"].size(); ++i)
    s += (i ? ", " : "") + std::to_string(tensor["shape"][i].get<int64_t>());
  return s + "]";
}

std::string join(const Json &names) {
  std::string s;
  for (const Json &n : names)
    s += (s.empty() ? "" : ", ") + n.get<std::string>();
  return s;
}

/// One step, without its buffers: "kernel NAME  grid 8" or
/// "gemm matmul_0  m=32 n=256 k=1024, transpose_b, bias b2".
std::string stepText(const Json &step) {
  if (step["kind"] == "kernel")
    return "kernel " + step["symbol"].get<std::string>() + "  grid " +
           std::to_string(step["grid"].get<int64_t>());
  std::string s = "gemm " + step["name"].get<std::string>() +
                  "  m=" + std::to_string(step["m"].get<int64_t>()) +
                  " n=" + std::to_string(step["n"].get<int64_t>()) +
                  " k=" + std::to_string(step["k"].get<int64_t>());
  for (const char *flag : {"transpose_a", "transpose_b"})
    if (step[flag].get<bool>())
      s += std::string(", ") + flag;
  if (!step["batch"].empty())
    s += ", batch " + step["batch"].dump();
  if (!step["epilogue"]["bias"].is_null())
    s += ", bias " + step["epilogue"]["bias"].get<std::string>();
  return s;
}

/// The exported function names of an ELF shared library.
std::set<std::string> exportedSymbols(const std::string &bytes, const std::string &path) {
  auto object = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(bytes, path));
  if (!object)
    bad(path + ": not an object file (" + llvm::toString(object.takeError()) + ")");
  std::set<std::string> names;
  auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(object->get());
  if (!elf)
    bad(path + ": not an ELF shared library");
  for (const llvm::object::ELFSymbolRef &sym : elf->getDynamicSymbolIterators()) {
    llvm::Expected<llvm::StringRef> name = sym.getName();
    llvm::Expected<uint32_t> flags = sym.getFlags();
    bool defined = flags && !(*flags & llvm::object::SymbolRef::SF_Undefined);
    if (!flags)
      llvm::consumeError(flags.takeError());
    if (name && defined && sym.getELFType() == llvm::ELF::STT_FUNC)
      names.insert(name->str());
    else if (!name)
      llvm::consumeError(name.takeError());
  }
  return names;
}

std::string text(const Json &m) {
  std::ostringstream s;
  const Json &t = m["target"];
  s << "manifest: " << m["format"].get<std::string>() << " v" << m["version"].get<int>()
    << " (sotc " << m["sotc"].get<std::string>() << ")\n";
  s << "target: " << t["kind"].get<std::string>() << " " << t["triple"].get<std::string>()
    << ", cpu " << t["cpu"].get<std::string>() << " (" << join(t["features"]) << ")\n";
  s << "abi: " << t["abi"].get<std::string>() << "\n";
  s << "binary: " << m["binary"]["file"].get<std::string>() << " (sha256 "
    << m["binary"]["sha256"].get<std::string>().substr(0, 16) << "...)\n";
  s << "trace: " << m["trace"]["file"].get<std::string>() << ", CPython "
    << m["trace"]["python"].get<std::string>() << "\n";
  s << "entry: " << m["entry"]["function"].get<std::string>() << "(";
  bool first = true;
  for (const Json &in : m["entry"]["inputs"]) {
    s << (first ? "" : ", ") << in["name"].get<std::string>()
      << (in["kind"] == "tensor" ? ": " + shape(in) : "=" + in["value"].get<std::string>());
    first = false;
  }
  s << ")\n";
  s << "guards: " << m["guards"].size() << "\n";
  for (const Json &g : m["guards"])
    s << "  " << g["id"].get<std::string>() << "  " << g["kind"].get<std::string>() << "  "
      << g["condition"].get<std::string>() << "    # " << g["source"].get<std::string>() << "\n";
  s << "segments: " << m["segments"].size() << "\n";
  for (size_t i = 0; i < m["segments"].size(); ++i) {
    const Json &seg = m["segments"][i];
    s << "  [" << i << "] " << seg["name"].get<std::string>() << "(";
    first = true;
    for (const Json &in : seg["inputs"]) {
      s << (first ? "" : ", ") << in["name"].get<std::string>() << ": " << shape(in);
      first = false;
    }
    s << ")\n";
    for (const Json &step : seg["steps"])
      s << "    " << stepText(step) << "  " << join(step["outputs"]) << " <- "
        << join(step["inputs"]) << "\n";
    for (const Json &b : seg["arena"]["buffers"])
      s << "    arena +" << b["offset"].get<int64_t>() << "  " << b["name"].get<std::string>()
        << ": " << shape(b) << ", " << b["bytes"].get<int64_t>() << " bytes, steps "
        << b["live"][0].get<int64_t>() << ".." << b["live"][1].get<int64_t>() << "\n";
    const Json &end = seg["end"];
    std::string kind = end["kind"].get<std::string>();
    if (kind == "return")
      s << "    return " << end["value"].get<std::string>() << "\n";
    else if (kind == "branch")
      s << "    branch on " << end["condition"].get<std::string>() << ": true -> ["
        << end["on_true"].get<int>() << "](" << join(end["true_args"]) << "), false -> ["
        << end["on_false"].get<int>() << "](" << join(end["false_args"]) << ")    # "
        << end["source"].get<std::string>() << "\n";
    else
      s << "    host callback " << end["callee"].get<std::string>() << "(" << join(end["args"])
        << ") -> [" << end["next"].get<int>() << "]    # " << end["source"].get<std::string>()
        << "\n";
  }
  s << "arena: " << m["arena"]["bytes"].get<int64_t>() << " bytes, "
    << m["arena"]["alignment"].get<int64_t>() << "-byte aligned buffers\n";
  return s.str();
}

/// Graphviz: a cluster per segment with its steps in order; control flow between segments.
std::string dot(const Json &m) {
  auto quote = [](std::string s) {
    std::string out = "\"";
    for (char c : s)
      out += c == '"' ? std::string("\\\"") : c == '\n' ? std::string("\\n") : std::string(1, c);
    return out + "\"";
  };
  std::ostringstream s;
  s << "digraph sotc {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t i = 0; i < m["segments"].size(); ++i) {
    const Json &seg = m["segments"][i];
    std::string id = "s" + std::to_string(i);
    s << "  subgraph cluster_" << i << " {\n    label=" << quote(seg["name"].get<std::string>())
      << ";\n";
    s << "    " << id << "_in [shape=oval, label="
      << quote("in: " +
               [&] {
                 std::string names;
                 for (const Json &in : seg["inputs"])
                   names += (names.empty() ? "" : ", ") + in["name"].get<std::string>();
                 return names;
               }())
      << "];\n";
    std::string previous = id + "_in";
    for (size_t k = 0; k < seg["steps"].size(); ++k) {
      const Json &step = seg["steps"][k];
      std::string node = id + "_k" + std::to_string(k);
      s << "    " << node << " [label="
        << quote(stepText(step) + "\n" + join(step["outputs"]) + " <- " +
                 join(step["inputs"]))
        << "];\n    " << previous << " -> " << node << ";\n";
      previous = node;
    }
    const Json &end = seg["end"];
    std::string kind = end["kind"].get<std::string>();
    std::string label = kind == "return"   ? "return " + end["value"].get<std::string>()
                        : kind == "branch" ? "branch on " + end["condition"].get<std::string>()
                                           : "host: " + end["callee"].get<std::string>();
    s << "    " << id << "_end [shape=" << (kind == "branch" ? "diamond" : "oval")
      << ", label=" << quote(label) << "];\n    " << previous << " -> " << id << "_end;\n  }\n";
    auto edge = [&](const char *key, const char *text) {
      if (end.contains(key))
        s << "  " << id << "_end -> s" << end[key].get<int>() << "_in [label=" << quote(text)
          << "];\n";
    };
    edge("on_true", "true");
    edge("on_false", "false");
    edge("next", "after the host call");
  }
  s << "}\n";
  return s.str();
}

} // namespace

std::string inspect(const std::string &path, bool asDot) {
  bool isManifest = llvm::StringRef(path).ends_with(".json");
  std::string manifestPath = isManifest ? path : driver::manifestPath(path);
  Json m = Json::parse(readFile(manifestPath), nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded() || m.value("format", "") != "sotc-manifest")
    bad(manifestPath + ": not a sotc manifest");
  if (m.value("version", 0) != manifest::kFormatVersion)
    bad(manifestPath + ": manifest version " + std::to_string(m.value("version", 0)) +
        ", this sotc reads version " + std::to_string(manifest::kFormatVersion));
  // The binary the manifest describes, beside it: its bytes must be the ones compiled.
  std::string binaryPath = isManifest ? (llvm::sys::path::parent_path(path).empty()
                                             ? std::string()
                                             : llvm::sys::path::parent_path(path).str() + "/") +
                                            m["binary"]["file"].get<std::string>()
                                      : path;
  std::string binary = readFile(binaryPath);
  if (manifest::sha256(binary) != m["binary"]["sha256"].get<std::string>())
    bad(binaryPath + ": its sha256 differs from the manifest's: rebuilt or replaced since");
  if (m["target"]["kind"] == "cpu") {
    std::set<std::string> exported = exportedSymbols(binary, binaryPath);
    for (const Json &seg : m["segments"])
      for (const Json &step : seg["steps"])
        if (step["kind"] == "kernel" && !exported.count(step["symbol"].get<std::string>()))
          bad(binaryPath + ": does not export kernel " + step["symbol"].get<std::string>());
  }
  return asDot ? dot(m) : text(m);
}

} // namespace sotc::inspect
