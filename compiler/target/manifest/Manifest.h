//===- Manifest.h - The guard manifest beside a compiled binary ---------------------------===//
//
// NAME.manifest.json (docs/manifest.md, schema in manifest.schema.json) says when the kernels
// of a binary may run and how: the trace and binary it belongs to, the entry function's
// inputs, the guards with their Python lines, every segment's steps (kernel calls with their
// grid and buffers), the control flow between segments, and the memory plan; for a bundle of
// several traces, one entry each, tried in order. The same inputs give the same bytes.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_TARGET_MANIFEST_MANIFEST_H
#define SOTC_TARGET_MANIFEST_MANIFEST_H

#include "compiler/frontend/Translation.h"
#include "contract/SizeProduct.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>
#include <vector>

namespace sotc::manifest {

constexpr int kFormatVersion = 3;
constexpr int64_t kBufferAlignment = 64;

struct Target {
  std::string kind; // "cpu" or "cuda"
  std::string triple;
  std::string cpu;                   // CPU: the LLVM CPU name
  std::vector<std::string> features; // CPU: instruction-set extensions the code uses
  /// CPU: the kernels also compiled for another CPU, in a table of their own.
  struct Variant {
    std::string cpu, table;
    std::vector<std::string> features;
  };
  std::vector<Variant> variants;
  std::vector<std::string> archs; // CUDA: the architectures with SASS in the fatbin
  std::string ptx;                // CUDA: the architecture whose PTX the fatbin holds
  std::string abi;                // the kernels' calling convention, in C
  std::string gemm;               // the library GEMM steps call: "cblas" (OpenBLAS), "cublaslt"
};

/// How a kernel is launched: grid (CPU: the range [0, grid) of its rows), and on CUDA the
/// block's threads, its static shared memory, the dynamic shared memory a launch gives each
/// block (rows of s0 a block keeps; 0 otherwise) and the registers per thread ptxas allotted
/// on each architecture (with the shared memory, they bound how many blocks share a
/// multiprocessor).
/// Over dynamic sizes, the grid and the bytes are powers of them times a number (the manifest
/// writes their text), and the kernel takes the call's sizes (`takesRows`).
struct KernelLaunch {
  contract::SizeProduct grid = contract::SizeProduct::constant(0);
  int64_t block = 0, sharedBytes = 0;
  contract::SizeProduct dynamicSharedBytes = contract::SizeProduct::constant(0);
  bool takesRows = false;
  std::vector<int> sizes; // the dynamic sizes it takes when not s0 alone (`sizes`: s0, s1)
  std::vector<contract::SizeProduct> bufferBytes; // CPU: each buffer's, outputs then inputs
  std::map<std::string, int> registers;
};

struct Artifact {
  std::string file; // a base name: the manifest sits beside it
  std::string sha256;
};

/// One trace of a compiled artifact: `plan` is the pipeline's module with its sir.subgraph ops
/// (one per segment, in segment order) whose mapexpr.launch ops call the kernels.
struct Entry {
  const trace::Trace *trace;
  Artifact traceFile;
  const frontend::Translation *translation;
  mlir::ModuleOp plan;
};

/// The manifest of an artifact of one or more traces of a function (a bundle: the runtime runs
/// the first entry whose guards hold). `launches` says how to launch each kernel; `weights`
/// names a model's weights file, which every entry reads.
std::string writeManifest(const std::vector<Entry> &entries,
                          const std::map<std::string, KernelLaunch> &launches, const Target &target,
                          const Artifact &binary, const Artifact *weights = nullptr);

/// The bytes of one element as the kernels store it (bool: one; complex: its two parts); 0 for
/// a type that is no tensor element.
int64_t elementBytes(mlir::Type element);

/// Lower-case hex SHA-256 of `bytes`.
std::string sha256(std::string_view bytes);

/// A binary ends in kDigestMark and the 64 hex digits of its manifest's digest, then a newline:
/// a manifest edited since it was written no longer matches the binary it runs (the runtime's
/// E8003). The loaders read no further than their formats say (ELF program headers, the
/// fatbin's header size), so the trailer does not change what runs.
constexpr std::string_view kDigestMark = "SOTC-MANIFEST-SHA256 ";
constexpr size_t kDigestTrailerBytes = kDigestMark.size() + 64 + 1;

/// The manifest's digest: SHA-256 of its JSON with keys sorted, without spaces and without
/// binary.sha256 (which depends on the binary, which carries the digest).
std::string manifestDigest(std::string_view manifestText);

/// Appends the digest trailer of `manifestText` to `binary`, then records the sealed binary's
/// sha256 in the manifest.
void seal(std::string &manifestText, std::string &binary);

} // namespace sotc::manifest

#endif // SOTC_TARGET_MANIFEST_MANIFEST_H
