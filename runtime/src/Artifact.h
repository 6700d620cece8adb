//===- Artifact.h - A compiled artifact as the runtime sees it ----------------------------===//
//
// The manifest (docs/manifest.md) read into a plan: the parameters, the segments with their
// steps, buffers and ends, and the binary beside it, checked (format, version, sha256, the
// machine's instruction set) before anything runs.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_ARTIFACT_H
#define SOTC_RUNTIME_ARTIFACT_H

#include "runtime/src/ConvPlan.h"
#include "runtime/src/Error.h"
#include "runtime/src/GemmPlan.h"
#include "runtime/src/Sizes.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sotc::runtime {

/// What a binary ends in (docs/manifest.md): the mark, the 64 hex digits of its manifest's
/// digest, a newline.
constexpr std::string_view kDigestMark = "SOTC-MANIFEST-SHA256 ";
constexpr size_t kDigestTrailerBytes = kDigestMark.size() + 64 + 1;

/// The sotc_dtype a manifest's dtype name ("float32") stands for, or -1.
int dtypeIndex(const std::string &name);

/// A tensor of a plan. One of dynamic sizes (-1 - k in its manifest shape for each dimension
/// of s_k) has its bytes at every size 1, and in an arena no offset until atSizes places it
/// for a call's sizes.
struct Buffer {
  std::string name;
  int dtype = 0;
  std::vector<int64_t> shape;
  int64_t bytes = 0, offset = -1; // offset: in the segment's arena, for intermediates
  std::pair<int64_t, int64_t> live{0, 0}; // arena buffers: the first and last step using it
  /// The dims that are products of the sizes (productOfDim): a factor and powers each.
  std::vector<std::pair<int64_t, Powers>> products;

  /// Whether a dimension is a dynamic size.
  bool perBatchRow() const {
    return std::any_of(shape.begin(), shape.end(),
                       [&](int64_t d) { return isProduct(d) || sizeOfDim(d) >= 0; });
  }
  /// Whether a dimension is one of `products`.
  bool isProduct(int64_t d) const {
    int i = productOfDim(d);
    return i >= 0 && static_cast<size_t>(i) < products.size();
  }
};

struct Parameter {
  std::string name;
  bool tensor = false;
  Buffer spec; // tensors
  bool stopGradient = true;
  std::string buffer; // tensors: the segment-0 input it is passed as ("" when unused)
  std::string value;  // other values: the repr it was traced with
  std::string guard;  // "g3 (prog.py:7)": the guard that made the program depend on it
  std::string relation; // tensors: the relation guard that made its dynamic size another's
  /// Tensors: per dimension, the multiple of its size it is (2 where the program splits T in
  /// halves: the manifest's "2*s1", spec.shape's -2); empty when every one is 1.
  std::vector<int64_t> multiples;
  int64_t multipleOf(size_t d) const { return d < multiples.size() ? multiples[d] : 1; }
  /// `spec` with each multiple of a size as the product the segments write (2*s1).
  Buffer boundSpec() const;
};

/// A model's parameter or buffer: bound by the runtime from the weights file, not passed.
struct Weight {
  std::string name; // its state-dict name, the key in the weights file
  Buffer spec;
  /// The program writes it in place (a KV cache, a step counter): the file holds its initial
  /// value, and each sequence state (sotc_state) a value of its own that runs update.
  bool state = false;
  /// A KV cache's: the axis of its positions, which an in-place index_copy step writes
  /// (-1: none).
  int64_t cacheAxis = -1;
};

/// An index_copy step (docs/manifest.md) at its plan's sizes: the output (and x) as [rows, n,
/// inner] elements of `elementBytes`, the source as [rows, m, inner], the index m int64s.
struct IndexCopyPlan {
  int64_t axis = 0;
  bool inPlace = false; // the output is x's own buffer: a state the entry binds
  int64_t rows = 0, n = 0, m = 0, inner = 0, elementBytes = 0;
};

struct Step {
  enum class Kind { Kernel, Gemm, Conv, IndexCopy, Nonzero, Nms, Argsort } kind = Kind::Kernel;
  std::string name;   // the kernel's symbol, or the GEMM's or convolution's group name
  std::string symbol; // kernels
  int64_t bytes = 0;  // what it reads and writes, counting each buffer once
  int64_t grid = 0;
  Powers gridPowers{};                // kernels: the grid is `grid` times these powers of sizes
  std::vector<int> sizes;             // kernels over dynamic sizes: those they take, in order
  std::vector<int64_t> sizeArgs;      // such kernels, resolved: the call's sizes, arguments
  int64_t block = 0, sharedBytes = 0; // CUDA kernels: threads per block, static shared memory
  int64_t dynamicShared = 0;          // CUDA kernels: a launch's shared bytes per block, times
  Powers dynamicSharedPowers{};       // these powers (rows of s0 a block keeps)
  GemmPlan plan;                      // GEMM steps
  ConvPlan conv;                      // convolution steps
  IndexCopyPlan indexCopy;            // index_copy steps
  int64_t fill = 0;                   // nonzero steps: the rows past the nonzeros
  double iouThreshold = 0;            // nms steps
  int64_t sortAxis = 0;               // argsort steps: the axis each row runs along,
  bool descending = false;            // and the order
  std::vector<std::string> outputs, inputs;
  void *function = nullptr; // kernels, once the backend has loaded the binary
  /// Resolved at sizes where a size a segment counted is 0: the step has nothing to write
  /// (a grid, m or n of 0) and does not run; or it is a GEMM that would sum over none of
  /// the rows (k of 0), or a kernel of no blocks with elements to write (a sum over the rows
  /// fused with work on them), which fails the run where it runs (not supported yet).
  bool empty = false, sumsNone = false;
  /// Whether the executor runs the step itself (on the host where buffers are a device's),
  /// not a backend's kernel or library.
  bool executorStep() const {
    return kind == Kind::IndexCopy || kind == Kind::Nonzero || kind == Kind::Nms ||
           kind == Kind::Argsort;
  }
};

struct Segment {
  std::string name;
  std::vector<Buffer> inputs, outputs, arena;
  int64_t arenaBytes = 0; // the static buffers'; atSizes places the dynamic ones after them
  std::vector<Step> steps;
  /// Size: the segment counted a size (nonzero's rows): `condition` holds it (int64), at most
  /// `bound`; the run binds it as size `size` and goes on in `next` at the plan of that size.
  enum class End { Return, Branch, HostCallback, Raise, Size } end = End::Return;
  std::vector<std::string> results; // Return: the result's tensors, in order
  /// Return: the new values of state weights, (weight name, tensor), copied into the run's
  /// sequence state after it (not among the results).
  std::vector<std::pair<std::string, std::string>> stateUpdates;
  std::string condition; // Branch; Size: the count
  int size = -1;         // Size
  int64_t bound = 0;     // Size: times these powers of the sizes (4*s1: the rows
  Powers boundPowers{};  // of a mask of s1 x 4 elements)
  int onTrue = -1, onFalse = -1;
  std::vector<std::string> trueArgs, falseArgs;
  std::string source;                    // Branch, HostCallback, Raise: the Python line
  std::string callee;                    // HostCallback
  int next = -1;                         // HostCallback, Size: the segment after it
  std::vector<std::string> callbackArgs; // HostCallback: the tensors the call reads
  std::vector<Buffer> callbackResults;   // HostCallback: the tensors the call returns
  std::vector<std::string> nextArgs;     // HostCallback, Size: passed to `next`'s inputs
  std::string exception, exceptionClass, message; // Raise: what the program raises
};

/// One trace of the function (a bundle has several; a run takes the first whose parameters
/// match): its parameters, its segments (a range of the artifact's), where the weights bind to
/// its first segment and what it prepares of them.
struct Entry {
  std::string trace; // the trace's file name
  std::vector<Parameter> parameters;
  bool batched = false; // dynamic sizes: dimensions of -1 - k in its tensors, bound per call
  /// What the program decided on a dynamic size and so needs of it (guards of kind batch):
  /// at least `min`, at most `max` (a bound the input spec gave), none of `excluded`;
  /// `guards` names them.
  struct SizeGuards {
    int64_t min = 1;
    int64_t max = 0; // 0: no bound
    std::vector<int64_t> excluded;
    std::string guards;
    int64_t multiple = 1;       // the inputs' dimensions of it are this many times it
    std::string multipleGuards; // the guards (`% 2 == 0`) that made it so
  };
  std::array<SizeGuards, kMaxSizes> sizeGuards;
  /// Sizes the program derives from a size the inputs give, by a number (x[:, 1:] of T:
  /// s2 = s1 - 1): computed once the inputs have bound their bases.
  struct DerivedSize {
    int size = 0, base = 0;
    int64_t offset = 0;
  };
  std::vector<DerivedSize> derivedSizes;
  /// Sizes a segment counts (Segment::End::Size), bound when it ends; the plan before that
  /// has them at 0 (the steps after it do not run before it).
  std::vector<int> producedSizes;
  size_t first = 0, end = 0; // its segments: [first, end) of Artifact::segments
  std::map<std::string, std::string> weightBuffers; // weight -> first segment's input
  // What the kernels read of the weights, computed from them (inputs: weights by name;
  // outputs: the first segment's inputs of the same names); no steps when there is nothing.
  Segment prepare;
};

/// The shared memory a CUDA block may use without the kernel's opting in to more: its static
/// buffers and what a launch adds.
constexpr int64_t kSharedBytesPerBlock = 48 * 1024;

struct Artifact {
  std::string manifestPath, binaryPath, binarySha256;
  /// The manifest's text as read and checked (sotc_manifest): what bindings describe the
  /// artifact by, so that none opens the file again. Shared: the plans of each call's sizes
  /// (atSizes) copy the artifact, not the text.
  std::shared_ptr<const std::string> manifestText;
  std::string digest; // the manifest's (docs/manifest.md#digest), which the binary must carry
  std::string target; // "cpu" or "cuda"
  std::vector<std::string> features;
  /// CPU: the base CPU the kernels were compiled for, the variants the library also carries
  /// them for (each its own kernel table), and the CPU whose kernels run here with its table:
  /// the last variant this machine has every extension of (else the base), or the one
  /// SOTC_KERNEL_CPU names.
  struct Variant {
    std::string cpu, table;
    std::vector<std::string> features;
  };
  std::string cpu;
  std::vector<Variant> variants;
  std::string kernelCpu, kernelTable;
  std::vector<Entry> entries;             // at least one
  std::vector<Segment> segments;          // every entry's, in entry order
  std::string weightsPath, weightsSha256; // a model's weights file ("" for a function)
  std::vector<Weight> weights;
  /// CUDA: the shared memory a block of a kernel with dynamic shared memory may use, which
  /// the backend sets at load (the device's opt-in maximum); atSizes refuses a call beyond it.
  int64_t sharedBytesPerBlock = kSharedBytesPerBlock;

  /// Every plan of steps: the segments, then each entry's preparation of the weights.
  std::vector<Segment *> plans();
  std::vector<const Segment *> plans() const;
};

/// The manifest `text` as a plan, checked for consistency (every field present and typed,
/// branches to segments, buffers inside their arena), without touching the binary; E8001 or
/// E8002 otherwise. The fuzzed entry point.
Artifact readManifest(const std::string &text, const std::string &manifestPath);

/// The artifact with entry `entry`'s dynamic sizes (Entry::batched) resolved to `sizes`: its
/// parameters' and segments' shapes, bytes and arena offsets, its kernels' grids and size
/// arguments and its GEMM steps' counts as a static plan of those sizes, checked as
/// readManifest checks a plan. E8004 when a plan of such sizes would exceed kMaxBytes; E8001
/// when it does not hold together.
Artifact atSizes(const Artifact &artifact, size_t entry, const Sizes &sizes);

/// Reads and checks the artifact at `path` (the binary or its manifest). E8001 unreadable or
/// malformed, E8002 a format or version this runtime does not read, E8003 a binary that is
/// not the manifest's (its sha256), a manifest that is not the binary's (the digest the binary
/// carries), a binary its loader would not survive (an ELF or fatbin whose headers reach past
/// its end), or a machine that cannot run it.
Artifact loadArtifact(const std::string &path);

/// A file's bytes; E8001 when it cannot be read.
std::string readFile(const std::string &path);

/// Lower-case hex SHA-256 of a file's bytes.
std::string sha256Hex(const std::string &bytes);

/// The weights file's bytes, checked against the manifest (its sha256: E8003) and parsed
/// (each weight's bytes present with its dtype and shape: E8001), as one slice per weight in
/// `artifact.weights` order; the slices point into `file`.
std::vector<std::string_view> readWeights(const Artifact &artifact, const std::string &file);

} // namespace sotc::runtime

#endif // SOTC_RUNTIME_ARTIFACT_H
