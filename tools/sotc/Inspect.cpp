#include "Inspect.h"

#include "compiler/driver/Driver.h"
#include "compiler/ops/Types.h"
#include "compiler/support/Diagnostics.h"
#include "compiler/support/Safetensors.h"
#include "compiler/target/cuda/Fatbin.h"
#include "compiler/target/manifest/Manifest.h"
#include "contract/ArtifactFiles.h"
#include "contract/SizeProduct.h"

#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
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

/// A count of the manifest: a number, or a power of the dynamic size times one ("64*s0").
std::string count(const Json &c) {
  return c.is_string() ? c.get<std::string>() : std::to_string(c.get<int64_t>());
}

/// A manifest shape's dims (ops' codes): -1 - k for size s_k, text for a product of them.
std::vector<int64_t> dimsOf(const Json &tensor) {
  std::vector<int64_t> dims;
  for (const Json &d : tensor.at("shape")) {
    std::optional<ops::SizeProduct> p =
        d.is_string() ? ops::parseProduct(d.get<std::string>()) : std::nullopt;
    if (d.is_string() && !p)
      throw std::invalid_argument("a dimension of " + d.dump());
    dims.push_back(p ? ops::productDim(*p) : d.get<int64_t>());
  }
  return dims;
}

/// "float32[?, 128]", "int64[?, s1]", "float32[s0*s1, 8]".
std::string shape(const Json &tensor) {
  return tensor.at("dtype").get<std::string>() + ops::formatShape(dimsOf(tensor));
}

/// A tensor's bytes as the powers of its dynamic sizes times those at every size 1 ("8*s0*s1").
std::string bytesText(const Json &tensor) {
  contract::SizeProduct bytes = contract::SizeProduct::constant(tensor.at("bytes").get<int64_t>());
  for (int64_t d : dimsOf(tensor))
    if (ops::isDynamicDim(d)) { // its number is in the bytes already
      contract::SizeProduct sizes = ops::productOf(d);
      sizes.factor = 1;
      bytes = bytes * sizes;
    }
  return bytes.text();
}

std::string join(const Json &names) {
  std::string s;
  for (const Json &n : names)
    s += (s.empty() ? "" : ", ") + n.get<std::string>();
  return s;
}

/// ", registers sm_80 22, sm_90 27" (what ptxas allotted per thread), or nothing.
std::string registersText(const Json &registers) {
  std::string s;
  for (const auto &[arch, count] : registers.items())
    s += (s.empty() ? ", registers " : ", ") + arch + " " + std::to_string(count.get<int>());
  return s;
}

/// One step, without its buffers: "kernel NAME  grid 8" (CUDA: "grid 8 x block 256, 520 B
/// shared", "+ 8*s0 B" where a launch adds dynamic shared memory) or
/// "gemm matmul_0  m=32 n=256 k=1024, transpose_b, bias b2" or
/// "conv conv2d_3  8x64x56x56 -> 64x56x56, kernel 3x3, strides 1,1, pads 1,1,1,1, relu" or
/// "index_copy index_copy_4  axis 2, in place" or "nonzero nonzero_2  fill 0" or
/// "argsort argsort_1  axis 0, descending".
std::string stepText(const Json &step) {
  if (step.at("kind") == "argsort")
    return "argsort " + step.at("name").get<std::string>() + "  axis " +
           std::to_string(step.at("axis").get<int64_t>()) +
           (step.at("descending").get<bool>() ? ", descending" : "");
  if (step.at("kind") == "nms")
    return "nms " + step.at("name").get<std::string>() + "  iou_threshold " +
           Json(step.at("iou_threshold").get<double>()).dump();
  if (step.at("kind") == "nonzero")
    return "nonzero " + step.at("name").get<std::string>() + "  fill " +
           std::to_string(step.at("fill").get<int64_t>());
  if (step.at("kind") == "index_copy")
    return "index_copy " + step.at("name").get<std::string>() + "  axis " +
           std::to_string(step.at("axis").get<int64_t>()) +
           (step.at("in_place").get<bool>() ? ", in place" : "");
  if (step.at("kind") == "kernel")
    return "kernel " + step.at("symbol").get<std::string>() + "  grid " + count(step.at("grid")) +
           (step.contains("block")
                ? " x block " + std::to_string(step.at("block").get<int64_t>()) + ", " +
                      std::to_string(step.at("shared_bytes").get<int64_t>()) +
                      (step.contains("dynamic_shared_bytes")
                           ? " + " + count(step.at("dynamic_shared_bytes"))
                           : "") +
                      " B shared" + registersText(step.at("registers"))
                : "");
  if (step.at("kind") == "conv") {
    auto ints = [](const Json &v) {
      std::string s;
      for (const Json &x : v)
        s += (s.empty() ? "" : ",") + std::to_string(x.get<int64_t>());
      return s;
    };
    std::string s = "conv " + step.at("name").get<std::string>() + "  " +
                    std::to_string(step.at("n").get<int64_t>()) + "x" +
                    std::to_string(step.at("c").get<int64_t>()) + "x" +
                    std::to_string(step.at("h").get<int64_t>()) + "x" +
                    std::to_string(step.at("w").get<int64_t>()) + " -> " +
                    std::to_string(step.at("oc").get<int64_t>()) + "x" +
                    std::to_string(step.at("oh").get<int64_t>()) + "x" +
                    std::to_string(step.at("ow").get<int64_t>()) + ", kernel " +
                    std::to_string(step.at("kh").get<int64_t>()) + "x" +
                    std::to_string(step.at("kw").get<int64_t>()) + ", strides " +
                    ints(step.at("strides")) + ", pads " + ints(step.at("pads"));
    if (step.value("groups", int64_t{1}) != 1)
      s += ", groups " + std::to_string(step.at("groups").get<int64_t>());
    const Json &epilogue = step.at("epilogue");
    if (!epilogue.at("bias").is_null())
      s += ", bias " + epilogue.at("bias").get<std::string>();
    if (!epilogue.at("residual").is_null())
      s += ", residual " + epilogue.at("residual").get<std::string>();
    if (epilogue.at("activation") != "none")
      s += ", " + epilogue.at("activation").get<std::string>();
    if (step.value("compute", std::string("float32")) == "bfloat16")
      s += ", computed in bfloat16";
    return s;
  }
  std::string s = "gemm " + step.at("name").get<std::string>() + "  m=" + count(step.at("m")) +
                  " n=" + count(step.at("n")) + " k=" + count(step.at("k"));
  for (const char *flag : {"transpose_a", "transpose_b"})
    if (step[flag].get<bool>())
      s += std::string(", ") + flag;
  if (!step.at("batch").empty()) {
    s += ", batch [";
    for (size_t d = 0; d < step.at("batch").size(); ++d)
      s += (d ? ", " : "") + count(step.at("batch")[d]);
    s += "]";
  }
  if (!step.at("epilogue").at("bias").is_null())
    s += ", bias " + step.at("epilogue").at("bias").get<std::string>();
  if (step.at("epilogue").at("activation") != "none")
    s += ", " + step.at("epilogue").at("activation").get<std::string>();
  return s;
}

/// A plan's step with its buffers, as the text listing prints it.
std::string stepLine(const Json &step) {
  return stepText(step) + "  " + join(step.at("outputs")) + " <- " + join(step.at("inputs"));
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

/// The fatbin's images, one line each: "SASS sm_90: 3 kernels" / "PTX sm_90 (compressed)".
std::string fatbinText(const std::vector<cuda::FatbinEntry> &entries) {
  std::string s = "fatbin: " + std::to_string(entries.size()) + " images\n";
  for (const cuda::FatbinEntry &e : entries)
    s += std::string("  ") + (e.kind == cuda::FatbinEntry::Kind::Sass ? "SASS " : "PTX  ") +
         e.arch + ", " + std::to_string(e.payload.size()) + " bytes" +
         (e.compressed ? ", compressed" : "") +
         (e.kind == cuda::FatbinEntry::Kind::Sass
              ? ", " + std::to_string(e.kernels.size()) + " kernels"
              : "") +
         "\n";
  return s;
}

/// `AssertionError("n too large")`: a raise end's exception, as Python shows it.
std::string raisedText(const Json &end) {
  std::string message = end.at("message").get<std::string>();
  return end.at("class").get<std::string>() + "(" + (message.empty() ? "" : Json(message).dump()) +
         ")";
}

/// One segment: its inputs, steps, arena and end; `index` is its place in the manifest.
std::string segmentText(const Json &seg, size_t index) {
  std::ostringstream s;
  s << "  [" << index << "] " << seg.at("name").get<std::string>() << "(";
  bool first = true;
  for (const Json &in : seg.at("inputs")) {
    s << (first ? "" : ", ") << in.at("name").get<std::string>() << ": " << shape(in);
    first = false;
  }
  s << ")\n";
  for (const Json &step : seg.at("steps"))
    s << "    " << stepLine(step) << "\n";
  // A buffer of s0 has no offset: the runtime places it after the static ones at each call.
  for (const Json &b : seg.at("arena").at("buffers")) {
    bool dynamic = !b.contains("offset");
    s << "    arena " << (dynamic ? "+?" : "+" + std::to_string(b.at("offset").get<int64_t>()))
      << "  " << b.at("name").get<std::string>() << ": " << shape(b) << ", " << bytesText(b)
      << " bytes, steps " << b.at("live").at(0).get<int64_t>() << ".."
      << b.at("live").at(1).get<int64_t>() << "\n";
  }
  const Json &end = seg.at("end");
  std::string kind = end.at("kind").get<std::string>();
  if (kind == "return") {
    s << "    return " << end.at("value").get<std::string>() << "\n";
    for (const Json &effect : end.value("side_effects", Json::array()))
      if (effect.contains("state"))
        s << "    state " << effect.at("state").get<std::string>() << " <- "
          << effect.at("value").at("tensor").get<std::string>() << "\n";
  } else if (kind == "branch")
    s << "    branch on " << end.at("condition").get<std::string>() << ": true -> ["
      << end.at("on_true").get<int>() << "](" << join(end.at("true_args")) << "), false -> ["
      << end.at("on_false").get<int>() << "](" << join(end.at("false_args")) << ")    # "
      << end.at("source").get<std::string>() << "\n";
  else if (kind == "raise")
    s << "    raise " << raisedText(end) << "    # " << end.at("source").get<std::string>() << "\n";
  else if (kind == "size")
    s << "    size " << end.at("size").get<std::string>() << " = "
      << end.at("count").get<std::string>() << " (at most " << count(end.at("bound")) << ") -> ["
      << end.at("next").get<int>() << "](" << join(end.at("next_args")) << ")    # "
      << end.at("source").get<std::string>() << "\n";
  else
    s << "    host callback " << end.at("callee").get<std::string>() << "(" << join(end.at("args"))
      << ") -> [" << end.at("next").get<int>() << "]    # " << end.at("source").get<std::string>()
      << "\n";
  return s.str();
}

std::string text(const Json &m) {
  std::ostringstream s;
  const Json &t = m.at("target");
  s << "manifest: " << m.at("format").get<std::string>() << " v" << m.at("version").get<int>()
    << " (sotc " << m.at("sotc").get<std::string>() << ")\n";
  s << "target: " << t.at("kind").get<std::string>() << " " << t.at("triple").get<std::string>();
  if (t.at("kind") == "cpu") {
    s << ", cpu " << t.at("cpu").get<std::string>() << " (" << join(t.at("features")) << ")\n";
    for (const Json &v : t.value("variants", Json::array()))
      s << "  kernels also for " << v.at("cpu").get<std::string>() << " (" << join(v.at("features"))
        << "): " << v.at("kernel_table").get<std::string>() << "\n";
  } else
    s << ", SASS for " << join(t.at("archs")) << ", PTX for " << t.at("ptx").get<std::string>()
      << "\n";
  s << "abi: " << t.at("abi").get<std::string>() << "\n";
  s << "binary: " << m.at("binary").at("file").get<std::string>() << " (sha256 "
    << m.at("binary").at("sha256").get<std::string>().substr(0, 16) << "...)\n";
  const Json &entries = m.at("entries"), &segments = m.at("segments");
  for (size_t e = 0; e < entries.size(); ++e) {
    const Json &entry = entries[e];
    if (entries.size() > 1) // a bundle: the runtime takes the first entry that matches
      s << "entry " << e << " of " << entries.size() << ":\n";
    s << "trace: " << entry.at("trace").at("file").get<std::string>() << ", CPython "
      << entry.at("trace").at("python").get<std::string>() << "\n";
    s << "entry: " << entry.at("function").get<std::string>() << "(";
    bool first = true;
    for (const Json &in : entry.at("inputs")) {
      s << (first ? "" : ", ") << in.at("name").get<std::string>()
        << (in.at("kind") == "tensor" ? ": " + shape(in) : "=" + in.at("value").get<std::string>());
      first = false;
    }
    s << ")\n";
    if (entry.contains("derived_sizes")) { // computed from their bases at each call
      s << "derived sizes:";
      for (const Json &d : entry.at("derived_sizes")) {
        int64_t offset = d.at("offset").get<int64_t>();
        s << " " << d.at("size").get<std::string>() << " = " << d.at("base").get<std::string>()
          << (offset < 0 ? " - " : " + ") << std::llabs(offset);
      }
      s << "\n";
    }
    if (entry.contains("produced_sizes")) { // counted by a segment, bound where it ends
      s << "counted sizes:";
      for (const Json &p : entry.at("produced_sizes"))
        s << " " << p.at("size").get<std::string>() << " (segment " << p.at("segment").get<int>()
          << ", " << p.at("source").get<std::string>() << ")";
      s << "\n";
    }
    if (e == 0 && m.contains("weights")) {
      const Json &w = m.at("weights");
      s << "weights: " << w.at("file").get<std::string>() << ", " << w.at("tensors").size()
        << " tensors (sha256 " << w.at("sha256").get<std::string>().substr(0, 16) << "...)\n";
      for (const Json &t : w.at("tensors")) // state: written in place, kept per sequence
        s << "  " << t.at("name").get<std::string>() << ": " << shape(t)
          << (t.contains("cache_axis")
                  ? " (state, a cache of " +
                        std::to_string(
                            t.at("shape").at(t.at("cache_axis").get<size_t>()).get<int64_t>()) +
                        " positions along axis " +
                        std::to_string(t.at("cache_axis").get<int64_t>()) + ")"
              : t.value("state", false) ? " (state)"
                                        : "")
          << "\n";
    }
    if (entry.contains("weights") && entry.at("weights").contains("prepare")) {
      const Json &p = entry.at("weights").at("prepare"); // run at load and after rebinding
      s << "prepared from them: " << p.at("outputs").size() << " tensors, " << p.at("steps").size()
        << " steps at load and after rebinding\n";
      for (const Json &step : p.at("steps"))
        s << "    " << stepLine(step) << "\n";
    }
    s << "guards: " << entry.at("guards").size() << "\n";
    for (const Json &g : entry.at("guards"))
      s << "  " << g.at("id").get<std::string>() << "  " << g.at("kind").get<std::string>() << "  "
        << g.at("condition").get<std::string>() << "    # " << g.at("source").get<std::string>()
        << "\n";
    size_t begin = entry.at("segment").get<size_t>(),
           end = e + 1 < entries.size() ? entries[e + 1].at("segment").get<size_t>()
                                        : segments.size();
    s << "segments: " << end - begin << "\n";
    for (size_t i = begin; i < end; ++i)
      s << segmentText(segments[i], i);
  }
  s << "arena: " << m.at("arena").at("bytes").get<int64_t>() << " bytes, "
    << m.at("arena").at("alignment").get<int64_t>() << "-byte aligned buffers\n";
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
  for (size_t i = 0; i < m.at("segments").size(); ++i) {
    const Json &seg = m.at("segments")[i];
    std::string id = "s" + std::to_string(i);
    s << "  subgraph cluster_" << i << " {\n    label=" << quote(seg.at("name").get<std::string>())
      << ";\n";
    s << "    " << id << "_in [shape=oval, label="
      << quote("in: " +
               [&] {
                 std::string names;
                 for (const Json &in : seg.at("inputs"))
                   names += (names.empty() ? "" : ", ") + in.at("name").get<std::string>();
                 return names;
               }())
      << "];\n";
    std::string previous = id + "_in";
    for (size_t k = 0; k < seg.at("steps").size(); ++k) {
      const Json &step = seg.at("steps")[k];
      std::string node = id + "_k" + std::to_string(k);
      s << "    " << node << " [label="
        << quote(stepText(step) + "\n" + join(step.at("outputs")) + " <- " +
                 join(step.at("inputs")))
        << "];\n    " << previous << " -> " << node << ";\n";
      previous = node;
    }
    const Json &end = seg.at("end");
    std::string kind = end.at("kind").get<std::string>();
    std::string label = kind == "return"   ? "return " + end.at("value").get<std::string>()
                        : kind == "branch" ? "branch on " + end.at("condition").get<std::string>()
                        : kind == "raise"  ? "raise " + raisedText(end)
                        : kind == "size"   ? end.at("size").get<std::string>() + " = " +
                                               end.at("count").get<std::string>()
                                         : "host: " + end.at("callee").get<std::string>();
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

namespace {
/// The checks and the rendering, on a manifest of the right format and version.
std::string inspectManifest(const std::string &path, const Json &m, bool isManifest, bool asDot) {
  // The files the manifest describes sit beside it (and the binary): their bytes must be the
  // ones compiled.
  auto beside = [&](const Json &file) {
    llvm::StringRef dir = llvm::sys::path::parent_path(path);
    return (dir.empty() ? std::string() : dir.str() + "/") + file.get<std::string>();
  };
  std::string binaryPath = isManifest ? beside(m.at("binary").at("file")) : path;
  std::string binary = readFile(binaryPath);
  if (manifest::sha256(binary) != m.at("binary").at("sha256").get<std::string>())
    bad(binaryPath + ": its sha256 differs from the manifest's: rebuilt or replaced since");
  // Checked once the manifest has rendered (a malformed one says what is missing first).
  auto sealed = [&](std::string rendered) {
    llvm::StringRef trailer = llvm::StringRef(binary).take_back(manifest::kDigestTrailerBytes);
    if (!trailer.starts_with(manifest::kDigestMark) ||
        trailer.drop_front(manifest::kDigestMark.size()).drop_back() !=
            manifest::manifestDigest(m.dump()))
      bad(binaryPath + ": does not carry this manifest's digest: the manifest was edited since, "
                       "or sotc did not write the pair");
    return rendered;
  };
  if (m.contains("weights")) { // a model's, with every weight the manifest lists
    std::string weightsPath = beside(m.at("weights").at("file"));
    std::string weights = readFile(weightsPath);
    if (manifest::sha256(weights) != m.at("weights").at("sha256").get<std::string>())
      bad(weightsPath + ": its sha256 differs from the manifest's: rebuilt or replaced since");
    std::map<std::string, SafetensorsTensor> stored;
    try {
      stored = parseSafetensors(weights, weightsPath);
    } catch (const CodedError &e) {
      bad(e.what());
    }
    for (const Json &w : m.at("weights").at("tensors")) {
      auto it = stored.find(w.at("name").get<std::string>());
      if (it == stored.end() || it->second.shape != w.at("shape").get<std::vector<int64_t>>())
        bad(weightsPath + ": has no weight " + w.at("name").get<std::string>() + " of shape " +
            shape(w));
    }
  }
  auto kernels = [&] {
    std::vector<std::string> names;
    auto add = [&](const Json &plan) {
      for (const Json &step : plan.at("steps"))
        if (step.at("kind") == "kernel")
          names.push_back(step.at("symbol").get<std::string>());
    };
    for (const Json &seg : m.at("segments"))
      add(seg);
    for (const Json &entry : m.at("entries")) // what each prepares of the weights
      if (entry.contains("weights") && entry.at("weights").contains("prepare"))
        add(entry.at("weights").at("prepare"));
    return names;
  };
  if (m.at("target").at("kind") == "cpu") {
    std::set<std::string> exported = exportedSymbols(binary, binaryPath);
    for (const std::string &kernel : kernels())
      if (!exported.count(kernel))
        bad(binaryPath + ": does not export kernel " + kernel);
    return sealed(asDot ? dot(m) : text(m));
  }
  // CUDA: SASS for every architecture the manifest names, each defining every kernel, and
  // the PTX of the newest.
  Expected<std::vector<cuda::FatbinEntry>> entries = cuda::readFatbin(binary);
  if (!entries)
    bad(binaryPath + ": " + entries.error().what());
  std::set<std::string> sass, ptx;
  for (const cuda::FatbinEntry &e : *entries) {
    (e.kind == cuda::FatbinEntry::Kind::Sass ? sass : ptx).insert(e.arch);
    if (e.kind == cuda::FatbinEntry::Kind::Sass && !e.compressed)
      for (const std::string &kernel : kernels())
        if (std::find(e.kernels.begin(), e.kernels.end(), kernel) == e.kernels.end())
          bad(binaryPath + ": its " + e.arch + " SASS does not define kernel " + kernel);
  }
  for (const Json &arch : m.at("target").at("archs"))
    if (!sass.count(arch.get<std::string>()))
      bad(binaryPath + ": holds no SASS for " + arch.get<std::string>());
  if (!ptx.count(m.at("target").at("ptx").get<std::string>()))
    bad(binaryPath + ": holds no PTX for " + m.at("target").at("ptx").get<std::string>());
  return sealed(asDot ? dot(m) : text(m) + fatbinText(*entries));
}
} // namespace

std::string inspect(const std::string &path, bool asDot) {
  bool isManifest = contract::isManifestPath(path);
  std::string manifestPath = isManifest ? path : contract::manifestPathOf(path);
  Json m = Json::parse(readFile(manifestPath), nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded() || m.value("format", "") != "sotc-manifest")
    bad(manifestPath + ": not a sotc manifest");
  if (m.value("version", 0) != manifest::kFormatVersion)
    bad(manifestPath + ": manifest version " + std::to_string(m.value("version", 0)) +
        ", this sotc reads version " + std::to_string(manifest::kFormatVersion));
  try {
    return inspectManifest(path, m, isManifest, asDot);
  } catch (const Json::exception &e) { // a field missing, or of the wrong type
    bad(manifestPath + ": malformed manifest (" + e.what() + ")");
  } catch (const std::invalid_argument &e) { // a dimension that is no size
    bad(manifestPath + ": malformed manifest (" + e.what() + ")");
  }
}

} // namespace sotc::inspect
