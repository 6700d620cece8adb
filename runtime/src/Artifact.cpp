#include "runtime/src/Artifact.h"

#include "contract/ArtifactFiles.h"
#include "runtime/src/PlanCheck.h"

#include "sotc/runtime.h"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include <elf.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace sotc::runtime {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ErrorCode::ArtifactUnreadable, path + ": cannot read");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {

using Json = nlohmann::json;

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

std::pair<int64_t, Powers> countOf(const Json &j);

Buffer bufferOf(const Json &j) {
  Buffer b;
  b.name = j.at("name").get<std::string>();
  b.dtype = dtypeIndex(j.at("dtype").get<std::string>());
  for (const Json &d : j.at("shape")) {
    if (!d.is_string()) {
      b.shape.push_back(d.get<int64_t>());
      if (b.shape.back() < -kMaxSizes)
        throw Error(ErrorCode::ArtifactUnreadable, "buffer " + b.name + " has a dimension of " + d.dump());
      continue;
    }
    b.shape.push_back(-kMaxSizes - 1 - static_cast<int64_t>(b.products.size()));
    b.products.push_back(countOf(d));
  }
  b.bytes = j.at("bytes").get<int64_t>();
  if (j.contains("offset"))
    b.offset = j.at("offset").get<int64_t>();
  if (j.contains("live"))
    b.live = {j.at("live").at(0).get<int64_t>(), j.at("live").at(1).get<int64_t>()};
  return b;
}

/// The tensors a value rebuilds, in order ({"tensor"}, nested tuples, lists, dicts, records).
void valueTensors(const Json &r, std::vector<std::string> &out) {
  if (r.contains("tensor"))
    out.push_back(r.at("tensor").get<std::string>());
  for (const char *key : {"tuple", "list"})
    if (r.contains(key))
      for (const Json &item : r.at(key))
        valueTensors(item, out);
  if (r.contains("dict"))
    for (const Json &pair : r.at("dict"))
      valueTensors(pair.at(1), out);
  if (r.contains("record"))
    for (const Json &field : r.at("record").at("fields"))
      valueTensors(field.at(1), out);
  if (r.contains("object"))
    for (const Json &attribute : r.at("object").at("attributes"))
      valueTensors(attribute.at(1), out);
}

/// A count of a plan: a number, or powers of the dynamic sizes times one ("64*s0", "4*s0^2",
/// "s1", "8*s0*s1^2"; the contract's SizeProduct text): the number at every size 1, and the
/// powers.
std::pair<int64_t, Powers> countOf(const Json &j) {
  if (j.is_number_integer())
    return {j.get<int64_t>(), Powers{}};
  std::optional<contract::SizeProduct> p =
      j.is_string() ? contract::SizeProduct::parse(j.get<std::string>()) : std::nullopt;
  if (!p)
    throw Error(ErrorCode::ArtifactUnreadable,
                "a count of " + j.dump() + " (a number or N*s0^P*s1^Q)");
  return {p->factor, p->powers};
}

/// `factor` times each size to its power; E8004 beyond kMaxBytes (a size too large for any
/// machine).
int64_t timesPowers(int64_t factor, const Sizes &sizes, const Powers &powers) {
  if (!anyPower(powers))
    return factor;
  if (std::optional<int64_t> out = contract::SizeProduct{factor, powers}.valueAt(sizes, kMaxBytes))
    return *out;
  int64_t largest = 0;
  for (int k = 0; k < kMaxSizes; ++k)
    if (powers[k])
      largest = std::max(largest, sizes[k]);
  throw Error(ErrorCode::InputsMismatch, "a dynamic size of " + std::to_string(largest) +
                                             " is beyond what a plan can hold (2^48 bytes a buffer)");
}

/// A convolution step (docs/manifest.md): its sizes, groups, window and epilogue.
Step convStepOf(const Json &j, Step s) {
  s.kind = Step::Kind::Conv;
  s.name = j.at("name").get<std::string>();
  if (j.at("dtype") != "float32")
    throw Error(ErrorCode::FormatUnsupported, "a convolution step of " + j.at("dtype").dump());
  ConvPlan &p = s.conv;
  for (auto [field, size] : {std::pair{"n", &p.n},
                             {"c", &p.c},
                             {"h", &p.h},
                             {"w", &p.w},
                             {"oc", &p.oc},
                             {"kh", &p.kh},
                             {"kw", &p.kw},
                             {"oh", &p.oh},
                             {"ow", &p.ow}})
    *size = j.at(field).get<int64_t>();
  auto list = [&](const char *field, auto &out) {
    const Json &v = j.at(field);
    if (!v.is_array() || v.size() != out.size())
      throw Error(ErrorCode::ArtifactUnreadable, "convolution step " + s.name + ": " + field + " needs " +
                               std::to_string(out.size()) + " values");
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = v[i].get<int64_t>();
  };
  list("strides", p.strides);
  list("dilations", p.dilations);
  list("pads", p.pads);
  p.groups = j.value("groups", int64_t{1});
  std::string compute = j.value("compute", std::string("float32"));
  if (compute != "float32" && compute != "bfloat16")
    throw Error(ErrorCode::FormatUnsupported, "a convolution step computed in " + compute);
  p.bf16 = compute == "bfloat16";
  const Json &epilogue = j.at("epilogue");
  p.bias = !epilogue.at("bias").is_null();
  p.residual = !epilogue.at("residual").is_null();
  static const std::map<std::string, ConvPlan::Activation> activations = {
      {"none", ConvPlan::Activation::None},
      {"relu", ConvPlan::Activation::Relu},
      {"relu6", ConvPlan::Activation::Relu6},
      {"hardswish", ConvPlan::Activation::Hardswish}};
  std::string activation = epilogue.at("activation").get<std::string>();
  if (!activations.count(activation))
    throw Error(ErrorCode::FormatUnsupported, "a convolution step with activation " + activation);
  p.activation = activations.at(activation);
  if (std::string why = validate(p); !why.empty())
    throw Error(ErrorCode::ArtifactUnreadable, "convolution step " + s.name + ": " + why);
  return s;
}

Step stepOf(const Json &j) {
  Step s;
  s.outputs = j.at("outputs").get<std::vector<std::string>>();
  s.inputs = j.at("inputs").get<std::vector<std::string>>();
  if (j.at("kind") == "kernel") {
    s.symbol = s.name = j.at("symbol").get<std::string>();
    std::tie(s.grid, s.gridPowers) = countOf(j.at("grid"));
    if (j.value("takes_s0", false))
      s.sizes = {0};
    for (const Json &size : j.value("sizes", Json::array())) { // "s1": the sizes it takes
      std::pair<int64_t, Powers> one = countOf(size);
      auto k = std::find(one.second.begin(), one.second.end(), 1) - one.second.begin();
      if (one.first != 1 || k == kMaxSizes ||
          std::count(one.second.begin(), one.second.end(), 0) != kMaxSizes - 1)
        throw Error(ErrorCode::ArtifactUnreadable, "kernel " + s.symbol + " takes sizes " + j.at("sizes").dump());
      s.sizes.push_back(static_cast<int>(k));
    }
    if (s.sizes.size() > kMaxKernelSizes)
      throw Error(ErrorCode::FormatUnsupported, "kernel " + s.symbol + " takes more than " +
                               std::to_string(kMaxKernelSizes) + " dynamic sizes");
    if (j.contains("block"))
      s.block = j.at("block").get<int64_t>(), s.sharedBytes = j.at("shared_bytes").get<int64_t>();
    if (j.contains("dynamic_shared_bytes"))
      std::tie(s.dynamicShared, s.dynamicSharedPowers) = countOf(j.at("dynamic_shared_bytes"));
    return s;
  }
  if (j.at("kind") == "conv")
    return convStepOf(j, s);
  if (j.at("kind") == "index_copy") {
    s.kind = Step::Kind::IndexCopy;
    s.name = j.at("name").get<std::string>();
    s.indexCopy.axis = j.at("axis").get<int64_t>();
    s.indexCopy.inPlace = j.at("in_place").get<bool>();
    if (s.outputs.size() != 1 || s.inputs.size() != (s.indexCopy.inPlace ? 2u : 3u) ||
        s.indexCopy.axis < 0)
      throw Error(ErrorCode::ArtifactUnreadable,
                  "index_copy step " + s.name + ": its axis or buffers are not an index_copy's");
    return s;
  }
  if (j.at("kind") == "nonzero") {
    s.kind = Step::Kind::Nonzero;
    s.name = j.at("name").get<std::string>();
    s.fill = j.at("fill").get<int64_t>();
    if (s.outputs.size() != 1 || s.inputs.size() != 1)
      throw Error(ErrorCode::ArtifactUnreadable,
                  "nonzero step " + s.name + ": its buffers are not a nonzero's");
    return s;
  }
  if (j.at("kind") == "nms") {
    s.kind = Step::Kind::Nms;
    s.name = j.at("name").get<std::string>();
    s.iouThreshold = j.at("iou_threshold").get<double>();
    if (s.outputs.size() != 1 || s.inputs.size() != 2)
      throw Error(ErrorCode::ArtifactUnreadable,
                  "nms step " + s.name + ": its buffers are not an nms's");
    return s;
  }
  if (j.at("kind") == "argsort") {
    s.kind = Step::Kind::Argsort;
    s.name = j.at("name").get<std::string>();
    s.sortAxis = j.at("axis").get<int64_t>();
    s.descending = j.at("descending").get<bool>();
    if (s.outputs.size() != 1 || s.inputs.size() != 1 || s.sortAxis < 0)
      throw Error(ErrorCode::ArtifactUnreadable,
                  "argsort step " + s.name + ": its axis or buffers are not an argsort's");
    return s;
  }
  if (j.at("kind") != "gemm")
    throw Error(ErrorCode::FormatUnsupported, "unknown step kind " + j.at("kind").dump());
  s.kind = Step::Kind::Gemm;
  s.name = j.at("name").get<std::string>();
  GemmPlan &p = s.plan;
  static const std::map<std::string, GemmPlan::Type> types = {{"float16", GemmPlan::Type::F16},
                                                              {"bfloat16", GemmPlan::Type::BF16},
                                                              {"float32", GemmPlan::Type::F32},
                                                              {"float64", GemmPlan::Type::F64}};
  std::string dtype = j.at("dtype").get<std::string>();
  if (!types.count(dtype))
    throw Error(ErrorCode::FormatUnsupported, "a GEMM step of " + dtype);
  p.type = p.operands = types.at(dtype);
  if (j.contains("operand_dtype")) { // bfloat16 operands, a float32 C
    std::string operands = j.at("operand_dtype").get<std::string>();
    if (operands != "bfloat16" || p.type != GemmPlan::Type::F32)
      throw Error(ErrorCode::FormatUnsupported,
                  "a GEMM step of " + operands + " operands and a " + dtype + " result");
    p.operands = GemmPlan::Type::BF16;
  }
  p.transposeA = j.at("transpose_a"), p.transposeB = j.at("transpose_b");
  p.alpha = j.at("alpha"), p.beta = j.at("beta");
  const Json &strides = j.at("batch_strides");
  p.batch.resize(j.at("batch").size());
  p.strideA.resize(strides.at("a").size());
  p.strideB.resize(strides.at("b").size());
  p.strideC.resize(strides.at("c").size());
  // The counts in forEachCount's order, each with the power of s0 it holds.
  std::vector<const Json *> counts = {&j.at("m"),   &j.at("n"),   &j.at("k"),
                                      &j.at("lda"), &j.at("ldb"), &j.at("ldc")};
  for (const Json *list : {&j.at("batch"), &strides.at("a"), &strides.at("b"), &strides.at("c")})
    for (const Json &c : *list)
      counts.push_back(&c);
  size_t next = 0;
  bool dynamic = false;
  p.forEachCount([&](int64_t &count) {
    auto [factor, powers] = countOf(*counts[next++]);
    count = factor;
    p.powers.push_back(powers);
    dynamic |= anyPower(powers);
  });
  if (!dynamic)
    p.powers.clear();
  p.bias = !j.at("epilogue").at("bias").is_null();
  static const std::map<std::string, GemmPlan::Activation> activations = {
      {"none", GemmPlan::Activation::None},
      {"relu", GemmPlan::Activation::Relu},
      {"gelu_tanh", GemmPlan::Activation::GeluTanh},
      {"gelu_erf", GemmPlan::Activation::GeluErf}};
  std::string activation = j.at("epilogue").at("activation").get<std::string>();
  if (!activations.count(activation))
    throw Error(ErrorCode::FormatUnsupported, "a GEMM step with activation " + activation);
  p.activation = activations.at(activation);
  // Counts of dynamic sizes are checked once the call's sizes are known (atSizes).
  std::string why = p.powers.empty() ? validate(p) : "";
  if (!why.empty())
    throw Error(ErrorCode::ArtifactUnreadable, "GEMM step " + j.at("name").get<std::string>() + ": " + why);
  return s;
}

/// Each step's bytes (what it reads and writes, each buffer once) and an index_copy's
/// geometry, from its buffers at the plan's sizes (a dynamic plan's are placeholders until
/// resolveSizes).
void sizeSteps(Segment &s) {
  std::map<std::string, int64_t> bytes;
  std::map<std::string, const Buffer *> buffers;
  for (const std::vector<Buffer> *list : {&s.inputs, &s.outputs, &s.arena})
    for (const Buffer &b : *list) {
      bytes[b.name] = b.bytes;
      buffers.emplace(b.name, &b);
    }
  for (Step &step : s.steps) {
    if (step.kind == Step::Kind::IndexCopy && buffers.count(step.outputs.at(0)) &&
        buffers.count(step.inputs.back())) {
      IndexCopyPlan &p = step.indexCopy;
      const Buffer &out = *buffers.at(step.outputs[0]), &source = *buffers.at(step.inputs.back());
      p.rows = p.inner = 1;
      for (int64_t d = 0; d < int64_t(out.shape.size()); ++d)
        if (d != p.axis)
          (d < p.axis ? p.rows : p.inner) *= out.shape[d];
      p.n = p.axis < int64_t(out.shape.size()) ? out.shape[p.axis] : 0;
      p.m = p.axis < int64_t(source.shape.size()) ? source.shape[p.axis] : 0;
      p.elementBytes = static_cast<int64_t>(sotc_dtype_size(out.dtype));
      // The slices read and written and the index; x read and written unless in place.
      step.bytes = 2 * source.bytes + p.m * static_cast<int64_t>(sizeof(int64_t)) +
                   (p.inPlace ? 0 : 2 * out.bytes);
      continue;
    }
    step.bytes = 0;
    std::set<std::string> touched(step.outputs.begin(), step.outputs.end());
    touched.insert(step.inputs.begin(), step.inputs.end());
    for (const std::string &name : touched) // sizes beyond kMaxBytes are refused later
      if (bytes.count(name) && bytes[name] > 0 && bytes[name] <= kMaxBytes)
        step.bytes += bytes[name];
  }
}

/// A plan's buffers and steps, each step with the bytes it touches.
void readPlan(const Json &j, Segment &s) {
  for (const Json &b : j.at("inputs"))
    s.inputs.push_back(bufferOf(b));
  for (const Json &b : j.at("outputs"))
    s.outputs.push_back(bufferOf(b));
  for (const Json &b : j.at("arena").at("buffers"))
    s.arena.push_back(bufferOf(b));
  s.arenaBytes = j.at("arena").at("bytes").get<int64_t>();
  for (const Json &step : j.at("steps"))
    s.steps.push_back(stepOf(step));
  // A kernel of a tensor of the dynamic size takes the call's s0 (as one over it inside).
  // sotc writes `takes_s0` (or `sizes`) on every such kernel; artifacts from before the flag
  // existed say it only through their buffers, and a kernel called without its s0 would crash.
  std::set<std::string> dynamic;
  for (const std::vector<Buffer> *list : {&s.inputs, &s.outputs, &s.arena})
    for (const Buffer &b : *list)
      if (b.perBatchRow())
        dynamic.insert(b.name);
  for (Step &step : s.steps)
    for (const std::vector<std::string> *names : {&step.outputs, &step.inputs})
      for (const std::string &name : *names)
        if (step.kind == Step::Kind::Kernel && step.sizes.empty() && dynamic.count(name))
          step.sizes = {0};
  sizeSteps(s);
}

void resolveBuffer(Buffer &b, const Sizes &sizes) {
  Powers powers{};
  for (int64_t &d : b.shape)
    if (int k = sizeOfDim(d); k >= 0) {
      d = sizes[k];
      ++powers[k];
    } else if (b.isProduct(d)) {
      auto [factor, its] = b.products[productOfDim(d)];
      d = timesPowers(factor, sizes, its);
      for (int s = 0; s < kMaxSizes; ++s)
        powers[s] += its[s];
    }
  b.bytes = timesPowers(b.bytes, sizes, powers);
}

/// The first of `sizes` (a call's) that is not 1, for E8004's text.
int64_t named(const Sizes &sizes) {
  for (int64_t s : sizes)
    if (s > 1)
      return s;
  return sizes[0];
}

/// Every size of entry `e` at 1, but its counted sizes at 0 as they are planned before they
/// are counted: the sizes a manifest's plan is checked at on load.
Sizes plannedAtOne(const Entry &e) {
  Sizes sizes;
  sizes.fill(1);
  for (int k : e.producedSizes)
    sizes[static_cast<size_t>(k)] = 0;
  return sizes;
}

/// Entry `entry`'s plans with its dynamic sizes as `sizes` (unchecked: see atSizes).
/// Whether any of `step`'s outputs has elements in `plan` (at its sizes).
bool writesElements(const Segment &plan, const Step &step) {
  for (const std::vector<Buffer> *buffers : {&plan.outputs, &plan.arena})
    for (const Buffer &b : *buffers)
      if (b.bytes > 0 &&
          std::find(step.outputs.begin(), step.outputs.end(), b.name) != step.outputs.end())
        return true;
  return false;
}

void resolveSizes(Artifact &a, size_t entry, const Sizes &sizes) {
  Entry &e = a.entries.at(entry);
  // A size a segment counted may be 0 (nothing selected): steps over it then write nothing.
  bool countedNone = false;
  for (int k : e.producedSizes) {
    countedNone |= sizes[static_cast<size_t>(k)] == 0;
    for (const Entry::DerivedSize &d : e.derivedSizes)
      countedNone |= d.base == k && sizes[static_cast<size_t>(d.size)] == 0;
  }
  for (Parameter &p : e.parameters) {
    p.spec = p.boundSpec();
    p.multiples.clear();
    resolveBuffer(p.spec, sizes);
  }
  for (size_t i = e.first; i < e.end; ++i) {
    Segment &s = a.segments[i];
    for (std::vector<Buffer> *list : {&s.inputs, &s.outputs, &s.callbackResults})
      for (Buffer &b : *list)
        resolveBuffer(b, sizes);
    s.bound = timesPowers(s.bound, sizes, s.boundPowers);
    s.boundPowers = {};
    // The buffers of dynamic sizes follow the static ones, first fit over their live ranges at the
    // call's sizes (as the compiler placed the static ones), each 64-byte aligned.
    constexpr int64_t kAlignment = 64;
    auto aligned = [&](int64_t bytes) {
      if (bytes > kMaxBytes)
        throw Error(ErrorCode::InputsMismatch, "a dynamic size of " + std::to_string(named(sizes)) +
                                 " is beyond what a plan can hold (2^48 bytes a buffer)");
      return (bytes + kAlignment - 1) / kAlignment * kAlignment;
    };
    int64_t base = aligned(s.arenaBytes), end = base;
    std::vector<const Buffer *> placed;
    for (Buffer &b : s.arena) {
      if (!b.perBatchRow())
        continue;
      resolveBuffer(b, sizes);
      int64_t bytes = aligned(b.bytes);
      b.offset = base;
      for (bool moved = true; moved;) {
        moved = false;
        for (const Buffer *o : placed)
          if (o->live.first <= b.live.second && b.live.first <= o->live.second &&
              o->offset < b.offset + bytes && b.offset < o->offset + aligned(o->bytes)) {
            b.offset = o->offset + aligned(o->bytes);
            moved = true;
          }
      }
      placed.push_back(&b);
      end = std::max(end, aligned(b.offset + bytes));
    }
    if (!placed.empty())
      s.arenaBytes = end;
    for (Step &step : s.steps) {
      step.grid = timesPowers(step.grid, sizes, step.gridPowers);
      step.gridPowers = {};
      step.dynamicShared = timesPowers(step.dynamicShared, sizes, step.dynamicSharedPowers);
      step.dynamicSharedPowers = {};
      if (step.sharedBytes + step.dynamicShared > a.sharedBytesPerBlock)
        throw Error(ErrorCode::InputsMismatch, "a dynamic size of " + std::to_string(named(sizes)) +
                                 " is beyond what kernel " + step.symbol +
                                 " can hold: its blocks would keep " +
                                 std::to_string(step.sharedBytes + step.dynamicShared) +
                                 " bytes in shared memory, more than a block's " +
                                 std::to_string(a.sharedBytesPerBlock));
      step.sizeArgs.clear();
      for (int k : step.sizes)
        step.sizeArgs.push_back(sizes[k]);
      GemmPlan &p = step.plan;
      size_t next = 0;
      if (!p.powers.empty())
        p.forEachCount(
            [&](int64_t &count) { count = timesPowers(count, sizes, p.powers[next++]); });
      p.powers.clear();
      step.empty = countedNone && (step.kind == Step::Kind::Gemm
                                       ? p.m == 0 || p.n == 0 || p.batchCount() == 0
                                       : step.kind == Step::Kind::Kernel && step.grid == 0);
      step.sumsNone = countedNone && step.kind == Step::Kind::Gemm && !step.empty && p.k == 0;
      // A kernel over no rows that still has elements to write (a sum over the counted rows
      // fused with work on them) cannot write them: refused where it runs, not left unwritten.
      if (step.empty && writesElements(s, step))
        step.empty = false, step.sumsNone = true;
      if (std::string why =
              step.kind == Step::Kind::Gemm && !step.empty && !step.sumsNone ? validate(p) : "";
          !why.empty())
        throw Error(ErrorCode::ArtifactUnreadable, "GEMM step " + step.name + ": " + why);
    }
    sizeSteps(s);
  }
  e.batched = false;
}

Segment segmentOf(const Json &j) {
  Segment s;
  s.name = j.at("name").get<std::string>();
  readPlan(j, s);
  const Json &end = j.at("end");
  std::string kind = end.at("kind").get<std::string>();
  if (kind == "return") {
    if (end.contains("result"))
      valueTensors(end.at("result"), s.results);
    // The tensors of the side effects (new values of globals and arguments) follow, once each.
    // A state's new value stays in the runtime (Segment::stateUpdates).
    if (end.contains("side_effects")) {
      for (const Json &effect : end.at("side_effects")) {
        if (effect.contains("state")) { // "" for a value that is not one tensor (refused)
          s.stateUpdates.push_back({effect.at("state").get<std::string>(),
                                    effect.at("value").value("tensor", std::string())});
        } else if (effect.contains("value")) {
          std::vector<std::string> more;
          valueTensors(effect.at("value"), more);
          for (std::string &name : more)
            if (std::find(s.results.begin(), s.results.end(), name) == s.results.end())
              s.results.push_back(std::move(name));
        }
      }
    }
  } else if (kind == "branch") {
    s.end = Segment::End::Branch;
    s.condition = end.at("condition").get<std::string>();
    s.onTrue = end.at("on_true"), s.onFalse = end.at("on_false");
    s.trueArgs = end.at("true_args").get<std::vector<std::string>>();
    s.falseArgs = end.at("false_args").get<std::vector<std::string>>();
    s.source = end.at("source").get<std::string>();
  } else if (kind == "size") {
    s.end = Segment::End::Size;
    std::string size = end.at("size").get<std::string>();
    if (size.size() != 2 || size[0] != 's' || size[1] < '0' || size[1] >= '0' + kMaxSizes)
      throw Error(ErrorCode::ArtifactUnreadable, s.name + " counts a size " + size +
                                                     ", not s0 to s" +
                                                     std::to_string(kMaxSizes - 1));
    s.size = size[1] - '0';
    s.condition = end.at("count").get<std::string>();
    std::tie(s.bound, s.boundPowers) = countOf(end.at("bound"));
    if (s.bound < 0 || s.bound > kMaxBytes)
      throw Error(ErrorCode::ArtifactUnreadable,
                  s.name + " counts at most " + std::to_string(s.bound));
    s.next = end.at("next").get<int>();
    s.nextArgs = end.at("next_args").get<std::vector<std::string>>();
    s.source = end.at("source").get<std::string>();
  } else if (kind == "raise") {
    s.end = Segment::End::Raise;
    s.exception = end.at("exception").get<std::string>();
    s.exceptionClass = end.at("class").get<std::string>();
    s.message = end.at("message").get<std::string>();
    s.source = end.at("source").get<std::string>();
  } else {
    s.end = Segment::End::HostCallback;
    s.callee = end.at("callee").get<std::string>();
    s.source = end.at("source").get<std::string>();
    s.next = end.at("next").get<int>();
    for (const Json &arg : end.at("args"))
      valueTensors(arg, s.callbackArgs);
    for (const Json &kwarg : end.at("kwargs"))
      valueTensors(kwarg.at(1), s.callbackArgs);
    for (const Json &b : end.at("result_tensors"))
      s.callbackResults.push_back(bufferOf(b));
    s.nextArgs = end.at("next_args").get<std::vector<std::string>>();
  }
  return s;
}

/// Whether this machine's CPU has an instruction-set extension (GCC's names match LLVM's
/// for the ones manifests list).
bool cpuHas(const std::string &feature) {
#define SOTC_FEATURE(name)                                                                         \
  if (feature == name)                                                                             \
    return __builtin_cpu_supports(name);
  SOTC_FEATURE("sse4.2")
  SOTC_FEATURE("popcnt")
  SOTC_FEATURE("avx")
  SOTC_FEATURE("avx2")
  SOTC_FEATURE("fma")
  SOTC_FEATURE("bmi2")
  SOTC_FEATURE("avx512f")
  SOTC_FEATURE("avx512bw")
  SOTC_FEATURE("avx512dq")
  SOTC_FEATURE("avx512vl")
#undef SOTC_FEATURE
  if (feature == "f16c")
    return __builtin_cpu_supports("avx2"); // every AVX2 CPU has F16C
  return false;
}

bool cpuHasAll(const std::vector<std::string> &features) {
  return std::all_of(features.begin(), features.end(), cpuHas);
}

/// Which of the library's kernel tables runs here (Artifact::kernelCpu): E8003 where
/// SOTC_KERNEL_CPU names a CPU the artifact has no kernels for, or one this machine is not.
void chooseKernels(Artifact &a) {
  // The base kernels (whose extensions readArtifact found on this machine), then the variants.
  std::vector<Artifact::Variant> tables = {{a.cpu, "sotc_kernels", a.features}};
  tables.insert(tables.end(), a.variants.begin(), a.variants.end());
  const Artifact::Variant *chosen = &tables.front();
  for (const Artifact::Variant &v : tables)
    if (cpuHasAll(v.features))
      chosen = &v;
  if (const char *pinned = std::getenv("SOTC_KERNEL_CPU"); pinned && *pinned) {
    auto named = std::find_if(tables.begin(), tables.end(),
                              [&](const Artifact::Variant &v) { return v.cpu == pinned; });
    std::string has = a.cpu;
    for (const Artifact::Variant &v : a.variants)
      has += ", " + v.cpu;
    if (named == tables.end())
      throw Error(ErrorCode::CannotRunHere, std::string("SOTC_KERNEL_CPU=") + pinned + ": " + a.binaryPath +
                               " has kernels for " + has + " only");
    if (!cpuHasAll(named->features))
      throw Error(ErrorCode::CannotRunHere, "SOTC_KERNEL_CPU=" + named->cpu + ": this machine lacks an "
                           "extension of that CPU");
    chosen = &*named;
  }
  a.kernelCpu = chosen->cpu;
  a.kernelTable = chosen->table;
}

/// Why the dynamic loader would not survive `bytes` as a shared library ("" when it would):
/// an x86-64 ELF shared object whose headers and loaded segments lie inside the file (a
/// truncated library whose sha256 was updated would otherwise fault inside dlopen).
std::string elfProblem(const std::string &bytes) {
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
    return "not an ELF file";
  Elf64_Ehdr h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB ||
      h.e_machine != EM_X86_64 || h.e_type != ET_DYN)
    return "not an x86-64 shared library";
  auto inside = [&](uint64_t offset, uint64_t size) {
    return offset <= bytes.size() && size <= bytes.size() - offset;
  };
  if (h.e_phentsize != sizeof(Elf64_Phdr) ||
      !inside(h.e_phoff, uint64_t(h.e_phnum) * sizeof(Elf64_Phdr)) ||
      (h.e_shoff && (h.e_shentsize != sizeof(Elf64_Shdr) ||
                     !inside(h.e_shoff, uint64_t(h.e_shnum) * sizeof(Elf64_Shdr)))))
    return "its ELF headers reach past its end (truncated?)";
  for (uint16_t i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr p;
    std::memcpy(&p, bytes.data() + h.e_phoff + i * sizeof(Elf64_Phdr), sizeof(p));
    if (p.p_type != PT_NULL && !inside(p.p_offset, p.p_filesz))
      return "its ELF segment " + std::to_string(i) + " reaches past its end (truncated?)";
  }
  return "";
}

/// The same for a fatbin given to the CUDA driver: its magic, and the size its header gives
/// inside the file.
std::string fatbinProblem(const std::string &bytes) {
  uint32_t magic = 0;
  uint16_t headerBytes = 0;
  uint64_t entryBytes = 0;
  if (bytes.size() < 16)
    return "not a fatbin";
  std::memcpy(&magic, bytes.data(), 4);
  std::memcpy(&headerBytes, bytes.data() + 6, 2);
  std::memcpy(&entryBytes, bytes.data() + 8, 8);
  if (magic != 0xBA55ED50u)
    return "not a fatbin (no 0xBA55ED50 magic)";
  uint64_t available = bytes.size() - kDigestTrailerBytes; // loadArtifact saw the trailer
  if (headerBytes > available || entryBytes > available - headerBytes)
    return "its fatbin header promises more bytes than it has (truncated?)";
  return "";
}

/// One entry: its trace, its parameters (each with the guard that made the program depend on
/// it, for the mismatch message), its first segment, and how it binds and prepares the weights.
Entry entryOf(const Json &e, const std::string &manifestPath) {
  Entry entry;
  entry.trace = e.at("trace").at("file").get<std::string>();
  std::map<std::string, std::string> guardOf, relationOf;
  std::vector<const Json *> batchGuards;
  for (const Json &g : e.at("guards")) {
    if (g.at("kind") == "relation") { // frame.f_locals['y'].shape[0] == ...: y's size is x's
      std::string x = g.at("expression").get<std::string>(), prefix = "frame.f_locals['";
      size_t end = x.find("']", prefix.size());
      if (x.rfind(prefix, 0) == 0 && end != std::string::npos)
        relationOf[x.substr(prefix.size(), end - prefix.size())] =
            g.at("id").get<std::string>() + " (" + g.at("source").get<std::string>() + ")";
      continue;
    }
    if (g.at("kind") == "batch") { // ">= 2", "!= 4": what a decision on the size kept;
      std::string expected = g.at("expected").get<std::string>(); // "% 2 == 0": a split
      bool multiple = expected.rfind("% ", 0) == 0 && expected.size() > 7 &&
                      expected.compare(expected.size() - 5, 5, " == 0") == 0;
      std::string number = multiple              ? expected.substr(2, expected.size() - 7)
                           : expected.size() > 3 ? expected.substr(3)
                                                 : "";
      size_t used = 0;
      int64_t k = 0;
      try {
        k = std::stoll(number, &used);
      } catch (const std::exception &) {
      }
      if (expected.size() < 4 || used != number.size() || (multiple && k < 2) ||
          (!multiple && expected.rfind(">= ", 0) != 0 && expected.rfind("!= ", 0) != 0 &&
           expected.rfind("<= ", 0) != 0))
        throw Error(ErrorCode::ArtifactUnreadable, manifestPath +
                                 ": a batch guard expects '>= N', '<= N', '!= N' or '% N == 0', "
                                 "not '" +
                                 expected + "'");
      batchGuards.push_back(&g); // applied to the size it reads once the parameters are known
      continue;
    }
    std::string x = g.at("expression").get<std::string>(), prefix = "frame.f_locals['";
    if (x.rfind(prefix, 0) == 0 && x.size() > prefix.size() + 2 &&
        x.compare(x.size() - 2, 2, "']") == 0)
      guardOf[x.substr(prefix.size(), x.size() - prefix.size() - 2)] =
          g.at("id").get<std::string>() + " (" + g.at("source").get<std::string>() + ")";
  }
  for (const Json &p : e.at("inputs")) {
    Parameter param;
    param.name = p.at("name").get<std::string>();
    param.tensor = p.at("kind") == "tensor";
    if (param.tensor) {
      param.spec.name = param.name;
      param.spec.dtype = dtypeIndex(p.at("dtype").get<std::string>());
      // A dimension that is a multiple of a size (the program splits it: "2*s1") is that
      // size's, 2 its multiple.
      for (const Json &d : p.at("shape")) {
        std::pair<int64_t, Powers> count = countOf(d);
        int k = static_cast<int>(std::find(count.second.begin(), count.second.end(), 1) -
                                 count.second.begin());
        bool multiple = d.is_string() && k < kMaxSizes &&
                        std::count(count.second.begin(), count.second.end(), 0) == kMaxSizes - 1;
        if (d.is_string() && !multiple)
          throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": input " + param.name + " has a dimension of " +
                                   d.dump() + ", not a multiple of one size");
        if (!d.is_string() && count.first < -kMaxSizes)
          throw Error(ErrorCode::ArtifactUnreadable,
                      manifestPath + ": input " + param.name + " has a dimension of " + d.dump());
        param.spec.shape.push_back(multiple ? -1 - k : count.first);
        param.multiples.push_back(multiple ? count.first : 1);
      }
      // Dynamic sizes: the bytes at every size 1.
      std::vector<int64_t> one = param.spec.shape;
      for (size_t d = 0; d < one.size(); ++d)
        if (int k = sizeOfDim(one[d]); k >= 0) {
          one[d] = param.multiples[d];
          if (one[d] > 1)
            entry.sizeGuards[k].multiple = one[d];
        }
      param.spec.bytes = tensorBytes(param.spec.dtype, one);
      entry.batched |= param.spec.perBatchRow();
      param.stopGradient = p.at("stop_gradient").get<bool>();
      if (!p.at("buffer").is_null())
        param.buffer = p.at("buffer").get<std::string>();
    } else {
      param.value = p.at("value").get<std::string>();
    }
    // An object's guards read its attributes; the caller that has the object checks them.
    if (guardOf.count(param.name) && p.at("kind") != "object")
      param.guard = guardOf[param.name];
    if (relationOf.count(param.name))
      param.relation = relationOf[param.name];
    entry.parameters.push_back(std::move(param));
  }
  // A batch guard reads frame.f_locals['x'].shape[d]: the size of that dimension (s0 in
  // artifacts whose guards name no parameter of theirs).
  for (const Json *g : batchGuards) {
    std::string x = g->at("expression").get<std::string>(), expected = g->at("expected");
    int64_t k = std::stoll(expected.substr(expected[0] == '%' ? 2 : 3));
    int size = 0;
    int64_t times = 1; // the dimension is this many times its size: guards convert
    for (const Parameter &p : entry.parameters) {
      std::string prefix = "frame.f_locals['" + p.name + "'].shape[";
      if (p.tensor && x.rfind(prefix, 0) == 0) {
        size_t d = std::strtoull(x.c_str() + prefix.size(), nullptr, 10);
        if (d < p.spec.shape.size() && sizeOfDim(p.spec.shape[d]) >= 0)
          size = sizeOfDim(p.spec.shape[d]), times = p.multipleOf(d);
      }
    }
    if (k < 0 || times < 1)
      throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": guard " + g->at("id").get<std::string>() +
                               " expects " + expected);
    Entry::SizeGuards &on = entry.sizeGuards[size];
    std::string id =
        g->at("id").get<std::string>() + " (" + g->at("source").get<std::string>() + ")";
    if (expected[0] == '%') { // the binding checks the multiple
      on.multipleGuards += (on.multipleGuards.empty() ? "" : ", ") + id;
      continue;
    }
    if (expected[0] == '>')
      on.min = std::max(on.min, (k + times - 1) / times);
    else if (expected[0] == '<')
      on.max = on.max ? std::min(on.max, k / times) : k / times;
    else if (k % times == 0)
      on.excluded.push_back(k / times);
    on.guards += (on.guards.empty() ? "" : ", ") + id;
  }
  if (e.contains("derived_sizes")) {
    auto size = [&](const Json &name) {
      std::string t = name.get<std::string>();
      if (t.size() != 2 || t[0] != 's' || t[1] < '0' || t[1] >= '0' + kMaxSizes)
        throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": a derived size of " + t + ", not s0 to s" +
                                 std::to_string(kMaxSizes - 1));
      return t[1] - '0';
    };
    for (const Json &d : e.at("derived_sizes")) {
      Entry::DerivedSize derived{size(d.at("size")), size(d.at("base")),
                                 d.at("offset").get<int64_t>()};
      for (const Entry::DerivedSize &o : entry.derivedSizes)
        if (o.size == derived.size || o.size == derived.base || o.base == derived.size)
          throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": derived size s" + std::to_string(derived.size) +
                                   " is derived twice or from a derived size");
      if (derived.size == derived.base || std::abs(derived.offset) > kMaxBytes)
        throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": derived size s" + std::to_string(derived.size) +
                                 " is not a size plus a number");
      entry.derivedSizes.push_back(derived);
    }
  }
  if (e.contains("produced_sizes")) // bound where a segment ends: the plan is made per call
    for (const Json &p : e.at("produced_sizes")) {
      std::string t = p.at("size").get<std::string>();
      if (t.size() != 2 || t[0] != 's' || t[1] < '0' || t[1] >= '0' + kMaxSizes)
        throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": a produced size of " + t);
      entry.producedSizes.push_back(t[1] - '0');
      entry.batched = true;
    }
  int64_t first = e.at("segment").get<int64_t>();
  if (first < 0)
    throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": an entry starts at segment " + std::to_string(first));
  entry.first = static_cast<size_t>(first);
  entry.prepare.name = "prepare_weights";
  if (e.contains("weights")) {
    const Json &w = e.at("weights");
    for (const Json &t : w.at("tensors"))
      if (!t.at("buffer").is_null())
        entry.weightBuffers[t.at("name").get<std::string>()] = t.at("buffer").get<std::string>();
    if (w.contains("prepare"))
      readPlan(w.at("prepare"), entry.prepare);
  }
  return entry;
}

} // namespace

Buffer Parameter::boundSpec() const {
  Buffer b = spec;
  for (size_t d = 0; d < b.shape.size(); ++d)
    if (int k = sizeOfDim(b.shape[d]); k >= 0 && multipleOf(d) > 1) {
      Powers powers{};
      powers[k] = 1;
      b.shape[d] = -kMaxSizes - 1 - static_cast<int64_t>(b.products.size());
      b.products.push_back({multipleOf(d), powers});
    }
  return b;
}

int dtypeIndex(const std::string &name) {
  for (int i = 0; sotc_dtype_name(i); ++i)
    if (name == sotc_dtype_name(i))
      return i;
  return -1;
}

std::string sha256Hex(const std::string &bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr);
  static const char *hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < size; ++i)
    out += {hex[digest[i] >> 4], hex[digest[i] & 15]};
  return out;
}

namespace {
/// The plans of `a` (an Artifact, const or not): the segments, then each entry's preparation.
template <class A> auto plansOf(A &a) {
  std::vector<decltype(&a.segments.front())> out;
  for (auto &s : a.segments)
    out.push_back(&s);
  for (auto &e : a.entries)
    out.push_back(&e.prepare);
  return out;
}
} // namespace

std::vector<Segment *> Artifact::plans() { return plansOf(*this); }
std::vector<const Segment *> Artifact::plans() const { return plansOf(*this); }

Artifact readManifest(const std::string &text, const std::string &manifestPath) {
  Artifact a;
  a.manifestPath = manifestPath;
  a.manifestText = std::make_shared<const std::string>(text);
  Json m = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  try {
    if (m.is_discarded() || !m.is_object() || !m.contains("format") ||
        m.at("format") != "sotc-manifest")
      throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": not a sotc manifest");
    if (!m.contains("version") || m.at("version") != 3)
      throw Error(ErrorCode::FormatUnsupported, manifestPath + ": manifest version " +
                               (m.contains("version") ? m.at("version").dump() : "missing") +
                               "; this runtime reads version 3 (recompile the trace)");
    a.target = m.at("target").at("kind").get<std::string>();
    a.binaryPath = directoryOf(manifestPath) + m.at("binary").at("file").get<std::string>();
    a.binarySha256 = m.at("binary").at("sha256").get<std::string>();
    Json canonical = m;
    canonical["binary"].erase("sha256");
    a.digest = sha256Hex(canonical.dump());
    if (a.target == "cpu") {
      const Json &t = m.at("target");
      a.features = t.at("features").get<std::vector<std::string>>();
      a.cpu = t.value("cpu", std::string());
      for (const Json &v : t.value("variants", Json::array())) {
        a.variants.push_back({v.at("cpu").get<std::string>(),
                              v.at("kernel_table").get<std::string>(),
                              v.at("features").get<std::vector<std::string>>()});
        const std::string &table = a.variants.back().table;
        auto symbolChar = [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        };
        const std::string prefix = "sotc_kernels_";
        if (table.size() <= prefix.size() || table.rfind(prefix, 0) != 0 ||
            !std::all_of(table.begin(), table.end(), symbolChar))
          throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": " + table + " is not a kernel table's name");
      }
    } else if (a.target != "cuda")
      throw Error(ErrorCode::FormatUnsupported, manifestPath + ": unknown target " + a.target);
    for (const Json &s : m.at("segments"))
      a.segments.push_back(segmentOf(s));
    if (m.contains("weights")) {
      const Json &w = m.at("weights");
      a.weightsPath = directoryOf(manifestPath) + w.at("file").get<std::string>();
      a.weightsSha256 = w.at("sha256").get<std::string>();
      for (const Json &t : w.at("tensors")) {
        Weight weight;
        weight.name = weight.spec.name = t.at("name").get<std::string>();
        weight.spec.dtype = dtypeIndex(t.at("dtype").get<std::string>());
        weight.spec.shape = t.at("shape").get<std::vector<int64_t>>();
        weight.spec.bytes = tensorBytes(weight.spec.dtype, weight.spec.shape);
        weight.state = t.value("state", false);
        weight.cacheAxis = t.value("cache_axis", int64_t{-1});
        if (weight.cacheAxis != -1 &&
            (!weight.state || weight.cacheAxis < 0 ||
             weight.cacheAxis >= static_cast<int64_t>(weight.spec.shape.size())))
          throw Error(ErrorCode::ArtifactUnreadable,
                      manifestPath + ": weight " + weight.name + " is a cache along axis " +
                          std::to_string(weight.cacheAxis) + ", not a state weight's axis");
        a.weights.push_back(std::move(weight));
      }
    }
    const Json &entries = m.at("entries");
    if (!entries.is_array() || entries.empty())
      throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": no entries");
    for (const Json &e : entries)
      a.entries.push_back(entryOf(e, manifestPath));
    // Each entry's segments run from its first to the next entry's, and the last entry's to
    // the end.
    for (size_t i = 0; i < a.entries.size(); ++i) {
      Entry &e = a.entries[i];
      e.end = i + 1 < a.entries.size() ? a.entries[i + 1].first : a.segments.size();
      if (e.first >= e.end || (i == 0 && e.first != 0))
        throw Error(ErrorCode::ArtifactUnreadable,
                    manifestPath + ": entry " + std::to_string(i) + " has no segments of its own");
    }
    for (const Json &e : entries)
      if (e.contains("weights") != m.contains("weights"))
        throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": weights without an entry's bindings, or bindings "
                                            "without weights");
  } catch (const Json::exception &e) {
    throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": malformed manifest (" + e.what() + ")");
  }
  // The plan must hold together: branches lead to segments of their entry, names resolve.
  for (const Entry &e : a.entries) {
    // The preparation reads weights and writes what the first segment reads.
    const Segment &first = a.segments[e.first];
    for (const Buffer &in : e.prepare.inputs)
      if (std::none_of(a.weights.begin(), a.weights.end(),
                       [&](const Weight &w) { return w.name == in.name; }))
        throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": the weights' preparation reads " + in.name +
                                 ", which is no weight");
    for (const Buffer &out : e.prepare.outputs)
      if (std::none_of(first.inputs.begin(), first.inputs.end(),
                       [&](const Buffer &b) { return b.name == out.name; }))
        throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": the weights' preparation writes " + out.name +
                                 ", which " + first.name + " does not read");
    auto outside = [&](int to) {
      return to < 0 || static_cast<size_t>(to) < e.first || static_cast<size_t>(to) >= e.end;
    };
    for (size_t i = e.first; i < e.end; ++i) {
      const Segment &s = a.segments[i];
      // A step that writes in place writes a state weight the entry binds, never a caller's
      // tensor or a weight threads share.
      for (const Step &step : s.steps)
        if (step.kind == Step::Kind::IndexCopy && step.indexCopy.inPlace &&
            (i != e.first || std::none_of(a.weights.begin(), a.weights.end(), [&](const Weight &w) {
               auto bound = e.weightBuffers.find(w.name);
               return w.state && bound != e.weightBuffers.end() && bound->second == step.outputs[0];
             })))
          throw Error(ErrorCode::ArtifactUnreadable,
                      manifestPath + ": " + s.name + " writes " + step.outputs[0] +
                          " in place, which is no state weight its entry binds");
      for (const auto &[weight, tensor] : s.stateUpdates) {
        auto w = std::find_if(a.weights.begin(), a.weights.end(),
                              [&](const Weight &x) { return x.name == weight; });
        const Buffer *b = nullptr; // an output, or an input computed in an earlier segment
        for (const std::vector<Buffer> *list : {&s.outputs, &s.inputs})
          for (const Buffer &x : *list)
            b = b ? b : x.name == tensor ? &x : nullptr;
        if (w == a.weights.end() || !w->state || !b || b->dtype != w->spec.dtype ||
            b->shape != w->spec.shape)
          throw Error(ErrorCode::ArtifactUnreadable,
                      manifestPath + ": " + s.name + " updates the state " + weight + " with " +
                          (tensor.empty() ? "a value that is not one tensor"
                                          : tensor + ", which is no buffer of the state's "
                                                     "dtype and shape"));
      }
      if (s.end == Segment::End::Branch && (outside(s.onTrue) || outside(s.onFalse)))
        throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": " + s.name + " branches to no segment of its entry");
      if ((s.end == Segment::End::HostCallback || s.end == Segment::End::Size) && outside(s.next))
        throw Error(ErrorCode::ArtifactUnreadable,
                    manifestPath + ": " + s.name + " continues in no segment of its entry");
    }
  }
  for (const Segment *plan : a.plans())
    for (const Step &step : plan->steps)
      if ((step.kind == Step::Kind::Gemm &&
           (step.outputs.size() != 1 || step.inputs.size() != (step.plan.bias ? 3u : 2u))) ||
          (step.kind == Step::Kind::Conv &&
           (step.outputs.size() != 1 ||
            step.inputs.size() != 2u + step.conv.bias + step.conv.residual)))
        throw Error(ErrorCode::ArtifactUnreadable, manifestPath + ": a " +
                                 (step.kind == Step::Kind::Gemm ? "GEMM" : "convolution") +
                                 " step's buffers do not match its epilogue");
  // A dynamic batch is checked as a plan of one row (every call's plan is checked again).
  if (std::none_of(a.entries.begin(), a.entries.end(), [](const Entry &e) { return e.batched; })) {
    checkPlan(a);
    return a;
  }
  Artifact oneRow = a;
  for (size_t e = 0; e < a.entries.size(); ++e)
    if (a.entries[e].batched)
      resolveSizes(oneRow, e, plannedAtOne(a.entries[e]));
  checkPlan(oneRow);
  return a;
}

Artifact atSizes(const Artifact &artifact, size_t entry, const Sizes &sizes) {
  Artifact a = artifact;
  // The other entries of a bundle with sizes of their own are checked as at load.
  for (size_t e = 0; e < a.entries.size(); ++e)
    if (a.entries[e].batched)
      resolveSizes(a, e, e == entry ? sizes : plannedAtOne(a.entries[e]));
  checkPlan(a);
  return a;
}

Artifact loadArtifact(const std::string &path) {
  bool isManifest = contract::isManifestPath(path);
  std::string manifestPath = isManifest ? path : contract::manifestPathOf(path);
  Artifact a = readManifest(readFile(manifestPath), manifestPath);
  if (!isManifest)
    a.binaryPath = path;
  std::string binary = readFile(a.binaryPath);
  if (sha256Hex(binary) != a.binarySha256)
    throw Error(ErrorCode::CannotRunHere, a.binaryPath + ": its sha256 differs from the manifest's (rebuilt or "
                                        "replaced since)");
  std::string_view trailer =
      std::string_view(binary).substr(binary.size() - std::min(binary.size(), kDigestTrailerBytes));
  if (trailer.size() != kDigestTrailerBytes ||
      trailer.substr(0, kDigestMark.size()) != kDigestMark ||
      trailer.back() != '\n')
    throw Error(ErrorCode::CannotRunHere, a.binaryPath + ": carries no manifest digest (written by an older sotc, "
                                        "or not by sotc: recompile)");
  if (trailer.substr(kDigestMark.size(), 64) != a.digest)
    throw Error(ErrorCode::CannotRunHere, manifestPath + ": is not the manifest sotc wrote for " + a.binaryPath +
                             " (edited since: its digest differs from the one the binary carries)");
  std::string why = a.target == "cpu" ? elfProblem(binary) : fatbinProblem(binary);
  if (!why.empty())
    throw Error(ErrorCode::CannotRunHere, a.binaryPath + ": " + why);
  for (const std::string &f : a.features)
    if (!cpuHas(f))
      throw Error(ErrorCode::CannotRunHere, a.binaryPath + ": compiled for CPUs with " + f +
                               ", which this machine lacks (recompile with --cpu native)");
  if (a.target == "cpu")
    chooseKernels(a);
  return a;
}

std::vector<std::string_view> readWeights(const Artifact &a, const std::string &file) {
  if (sha256Hex(file) != a.weightsSha256)
    throw Error(ErrorCode::CannotRunHere, a.weightsPath + ": its sha256 differs from the manifest's (rebuilt or "
                                         "replaced since)");
  // safetensors: an 8-byte little-endian header size, a JSON header, the tensors' bytes.
  auto bad = [&](const std::string &why) { return Error(ErrorCode::ArtifactUnreadable, a.weightsPath + ": " + why); };
  uint64_t size = 0;
  for (int i = 7; i >= 0 && file.size() >= 8; --i)
    size = size << 8 | static_cast<uint8_t>(file[i]);
  if (file.size() < 8 || size > file.size() - 8)
    throw bad("not a safetensors file");
  Json header = Json::parse(file.substr(8, size), nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    throw bad("its header is not a JSON object");
  std::string_view data = std::string_view(file).substr(8 + size);
  std::vector<std::string_view> out;
  for (const Weight &w : a.weights) {
    if (!header.contains(w.name))
      throw bad("it has no weight " + w.name);
    try {
      const Json &t = header.at(w.name);
      auto offsets = t.at("data_offsets").get<std::vector<uint64_t>>();
      // safetensors' dtype names, in sotc_dtype order.
      static const char *stored[] = {"BOOL", "I8",  "U8",  "I16", "I32", "I64",
                                     "F16",  "BF16", "F32", "F64", "C64", "C128"};
      if (t.at("dtype").get<std::string>() != stored[w.spec.dtype])
        throw bad("weight " + w.name + " is stored as " + t.at("dtype").get<std::string>() +
                  "; the manifest compiled it as " + sotc_dtype_name(w.spec.dtype));
      if (t.at("shape").get<std::vector<int64_t>>() != w.spec.shape || offsets.size() != 2 ||
          offsets[0] > offsets[1] || offsets[1] > data.size() ||
          offsets[1] - offsets[0] != static_cast<uint64_t>(w.spec.bytes))
        throw bad("weight " + w.name + " is not the manifest's shape or lies outside the file");
      out.push_back(data.substr(offsets[0], offsets[1] - offsets[0]));
    } catch (const Json::exception &e) {
      throw bad("weight " + w.name + " is malformed (" + e.what() + ")");
    }
  }
  return out;
}

} // namespace sotc::runtime

extern "C" {

const char *sotc_dtype_name(int dtype) {
  static const char *names[] = {"bool",    "int8",    "uint8",     "int16",
                                "int32",   "int64",   "float16",   "bfloat16",
                                "float32", "float64", "complex64", "complex128"};
  return dtype >= 0 && dtype <= SOTC_COMPLEX128 ? names[dtype] : nullptr;
}

size_t sotc_dtype_size(int dtype) {
  static const size_t bytes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  return dtype >= 0 && dtype <= SOTC_COMPLEX128 ? bytes[dtype] : 0;
}

} // extern "C"
