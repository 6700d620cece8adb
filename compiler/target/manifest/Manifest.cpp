#include "compiler/target/manifest/Manifest.h"

#include "compiler/conversion/SirToMapExpr/BuildKernel.h"
#include "compiler/support/Version.h"
#include "dialects/mapexpr/IR/MapExprDialect.h"
#include "dialects/sched/Utils/Mesh.h"
#include "dialects/sir/IR/SirDialect.h"
#include "dialects/sir/IR/SirTypes.h"

#include <openssl/evp.h>

#include <nlohmann/json.hpp>

#include <set>

namespace sotc::manifest {
namespace {

using Json = nlohmann::ordered_json;

const char *guardKind(frontend::Guard::Kind kind) {
  switch (kind) {
  case frontend::Guard::Kind::TensorMeta:
    return "tensor_meta";
  case frontend::Guard::Kind::Equal:
    return "equal";
  case frontend::Guard::Kind::Type:
    return "type";
  case frontend::Guard::Kind::Length:
    return "length";
  case frontend::Guard::Kind::Keys:
    return "keys";
  case frontend::Guard::Kind::Batch:
    return "batch";
  case frontend::Guard::Kind::Relation:
    return "relation";
  }
  return "?";
}

/// A shape as the manifest writes it: each dynamic dimension (sotc-sir-check-batch-dims) -1 - k
/// for size s_k (s0: -1), a product of them its text ("s0*s1", "16*s0", "2*s1").
Json shapeJson(const std::vector<int64_t> &dims) {
  Json shape = Json::array();
  for (int64_t d : dims) {
    bool product = ops::isDynamicDim(d) && !ops::isSymbolDim(d);
    shape.push_back(product ? Json(ops::productOf(d).text()) : Json(d));
  }
  return shape;
}

/// A tensor's name, dtype, shape (shapeJson) and bytes, those at every size 1.
Json tensorJson(const std::string &name, mlir::Type type) {
  auto tensor = mlir::cast<mlir::RankedTensorType>(type);
  std::optional<ops::TensorMeta> meta = sir::metaOf(tensor);
  int64_t bytes = elementBytes(tensor.getElementType());
  std::vector<int64_t> dims = sir::shapeWithSizes(tensor);
  for (int64_t d : dims)
    bytes *= ops::productOf(d).factor;
  return Json{{"name", name},
              {"dtype", meta ? ops::dtypeName(meta->dtype) : "unknown"},
              {"shape", shapeJson(dims)},
              {"bytes", bytes}};
}

/// The power of s0 a tensor's bytes hold: its dynamic dimensions (tensorJson).
int batchDegree(const Json &tensor) {
  const Json &shape = tensor["shape"];
  return static_cast<int>(std::count_if(shape.begin(), shape.end(), [](const Json &d) {
    return d.is_string() || d.get<int64_t>() < 0;
  }));
}

/// A count of a plan: a number, or the powers of the dynamic sizes it holds times one, as text
/// ("64*s0", "4*s0^2").
Json sizeJson(const contract::SizeProduct &size) {
  return size.dynamic() ? Json(size.text()) : Json(size.factor);
}

/// A GEMM step: the library call's shape (mapexpr/Utils/Gemm.h), row-major, and its epilogue.
Json gemmJson(mapexpr::GemmOp gemm, const std::string &library) {
  mapexpr::GemmPlan p = gemm.getPlan();
  auto count = [&](int64_t n) { return sizeJson(p.standIns.sizeProduct(n)); };
  auto counts = [&](const std::vector<int64_t> &sizes) {
    Json out = Json::array();
    for (int64_t n : sizes)
      out.push_back(count(n));
    return out;
  };
  Json inputs = {mapexpr::tensorName(gemm.getA()), mapexpr::tensorName(gemm.getB())};
  Json bias;
  if (gemm.getBias()) {
    bias = mapexpr::tensorName(gemm.getBias());
    inputs.push_back(bias);
  }
  Json json{
      {"kind", "gemm"},
      {"name", gemm.getName()},
      {"library", library},
      {"dtype", tensorJson("", gemm.getResult().getType())["dtype"]},
      {"m", count(p.m)},
      {"n", count(p.n)},
      {"k", count(p.k)},
      {"transpose_a", p.transposeA},
      {"transpose_b", p.transposeB},
      {"lda", count(p.lda)},
      {"ldb", count(p.ldb)},
      {"ldc", count(p.ldc)},
      {"alpha", 1.0},
      // With a bias the library accumulates onto C, which starts as the bias rows.
      {"beta", gemm.getBias() ? 1.0 : 0.0},
      {"batch", counts(p.batch)},
      {"batch_strides",
       Json{{"a", counts(p.strideA)}, {"b", counts(p.strideB)}, {"c", counts(p.strideC)}}},
      {"epilogue", Json{{"bias", bias}, {"activation", gemm.getActivation()}}},
      {"outputs", {mapexpr::tensorName(gemm.getResult())}},
      {"inputs", inputs}};
  if (gemm.getA().getType().getElementType() != gemm.getResult().getType().getElementType())
    json["operand_dtype"] = tensorJson("", gemm.getA().getType())["dtype"];
  return json;
}

/// A convolution step: its sizes (NCHW), its groups, its window and its epilogue.
Json convJson(mapexpr::ConvOp conv) {
  auto shape = [](mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
  };
  llvm::ArrayRef<int64_t> x = shape(conv.getX()), w = shape(conv.getWeight()),
                          y = shape(conv.getResult());
  Json inputs = {mapexpr::tensorName(conv.getX()), mapexpr::tensorName(conv.getWeight())};
  Json bias, residual;
  if (conv.getBias()) {
    bias = mapexpr::tensorName(conv.getBias());
    inputs.push_back(bias);
  }
  if (conv.getResidual()) {
    residual = mapexpr::tensorName(conv.getResidual());
    inputs.push_back(residual);
  }
  auto ints = [](llvm::ArrayRef<int64_t> v) {
    return Json(std::vector<int64_t>(v.begin(), v.end()));
  };
  return Json{{"kind", "conv"},
              {"name", conv.getName()},
              {"library", "onednn"},
              {"dtype", tensorJson("", conv.getResult().getType())["dtype"]},
              {"n", x[0]},
              {"c", x[1]},
              {"h", x[2]},
              {"w", x[3]},
              {"oc", w[0]},
              {"kh", w[2]},
              {"kw", w[3]},
              {"oh", y[2]},
              {"ow", y[3]},
              {"strides", ints(conv.getStrides())},
              {"dilations", ints(conv.getDilations())},
              {"pads", ints(conv.getPads())},
              {"groups", conv.getGroups()},
              {"compute", conv.getBf16() ? "bfloat16" : "float32"},
              {"epilogue",
               Json{{"bias", bias}, {"residual", residual}, {"activation", conv.getActivation()}}},
              {"outputs", {mapexpr::tensorName(conv.getResult())}},
              {"inputs", inputs}};
}

/// An index_copy step: the runtime copies the slices the index names into the output, after
/// copying x there unless the step writes x's own buffer in place.
Json indexCopyJson(mapexpr::IndexCopyOp copy) {
  Json inputs = {mapexpr::tensorName(copy.getIndex()), mapexpr::tensorName(copy.getSource())};
  if (!copy.getInPlace())
    inputs.insert(inputs.begin(), mapexpr::tensorName(copy.getX()));
  return Json{{"kind", "index_copy"},
              {"name", copy.getName()},
              {"dtype", tensorJson("", copy.getResult().getType())["dtype"]},
              {"axis", copy.getAxis()},
              {"in_place", copy.getInPlace()},
              {"outputs", {mapexpr::tensorName(copy.getResult())}},
              {"inputs", inputs}};
}

/// A nonzero step: the runtime writes the coordinates of the input's nonzeros, then `fill`.
Json nonzeroJson(mapexpr::NonzeroOp nonzero) {
  return Json{{"kind", "nonzero"},
              {"name", nonzero.getName()},
              {"fill", static_cast<int64_t>(nonzero.getFill().convertToDouble())},
              {"outputs", {mapexpr::tensorName(nonzero.getResult())}},
              {"inputs", {mapexpr::tensorName(nonzero.getX())}}};
}

/// An nms step: the runtime writes the kept boxes' indices in decreasing score order, then -1.
Json nmsJson(mapexpr::NmsOp nms) {
  return Json{
      {"kind", "nms"},
      {"name", nms.getName()},
      {"iou_threshold", nms.getIouThreshold().convertToDouble()},
      {"outputs", {mapexpr::tensorName(nms.getResult())}},
      {"inputs", {mapexpr::tensorName(nms.getBoxes()), mapexpr::tensorName(nms.getScores())}}};
}

/// An argsort step: the runtime writes the positions that sort each row of the input.
Json argsortJson(mapexpr::ArgsortOp sort) {
  return Json{{"kind", "argsort"},
              {"name", sort.getName()},
              {"axis", sort.getAxis()},
              {"descending", sort.getDescending()},
              {"outputs", {mapexpr::tensorName(sort.getResult())}},
              {"inputs", {mapexpr::tensorName(sort.getX())}}};
}

/// One segment's plan: its buffers by name, its steps (kernel launches and GEMM calls), and
/// the arena offsets of its intermediates (first fit over their live ranges, 64-byte aligned).
class SegmentPlan {
public:
  SegmentPlan(sir::SubgraphOp subgraph, const std::map<std::string, KernelLaunch> &launches,
              const std::string &gemmLibrary) {
    mlir::Block &body = subgraph.getBody().front();
    for (mlir::BlockArgument arg : body.getArguments()) {
      Json input = tensorJson(mapexpr::tensorName(arg), arg.getType());
      if (auto grad =
              subgraph.getArgAttrOfType<mlir::BoolAttr>(arg.getArgNumber(), "sir.stop_gradient"))
        input["stop_gradient"] = grad.getValue();
      inputs_.push_back(input);
    }
    std::map<std::string, std::pair<size_t, size_t>> live; // first and last step
    std::map<std::string, Json> intermediates;
    for (mlir::Operation &op : body.without_terminator()) {
      size_t step = steps_.size();
      Json json;
      if (auto launch = mlir::dyn_cast<mapexpr::LaunchOp>(op)) {
        std::string symbol = launch.getKernel().str();
        Json outs = Json::array(), ins = Json::array();
        for (mlir::Value v : launch.getResults())
          outs.push_back(mapexpr::tensorName(v));
        for (mlir::Value v : launch.getInputs())
          ins.push_back(mapexpr::tensorName(v));
        KernelLaunch how = launches.count(symbol) ? launches.at(symbol) : KernelLaunch();
        json = Json{{"kind", "kernel"}, {"symbol", symbol}, {"grid", sizeJson(how.grid)}};
        if (how.takesRows && how.sizes.empty())
          json["takes_s0"] = true;
        if (!how.sizes.empty()) { // the sizes it takes, in order
          json["sizes"] = Json::array();
          for (int symbol : how.sizes)
            json["sizes"].push_back("s" + std::to_string(symbol));
        }
        if (how.block) { // CUDA
          json["block"] = how.block;
          json["shared_bytes"] = how.sharedBytes;
          if (how.dynamicSharedBytes.factor)
            json["dynamic_shared_bytes"] = sizeJson(how.dynamicSharedBytes);
          json["registers"] = how.registers;
        }
        json["outputs"] = outs;
        json["inputs"] = ins;
      } else if (auto gemm = mlir::dyn_cast<mapexpr::GemmOp>(op)) {
        json = gemmJson(gemm, gemmLibrary);
      } else if (auto conv = mlir::dyn_cast<mapexpr::ConvOp>(op)) {
        json = convJson(conv);
      } else if (auto copy = mlir::dyn_cast<mapexpr::IndexCopyOp>(op)) {
        json = indexCopyJson(copy);
      } else if (auto nonzero = mlir::dyn_cast<mapexpr::NonzeroOp>(op)) {
        json = nonzeroJson(nonzero);
      } else if (auto nms = mlir::dyn_cast<mapexpr::NmsOp>(op)) {
        json = nmsJson(nms);
      } else if (auto sort = mlir::dyn_cast<mapexpr::ArgsortOp>(op)) {
        json = argsortJson(sort);
      } else {
        continue;
      }
      // An in-place step's result is the state's buffer, an input: no intermediate.
      bool inPlace = json["kind"] == "index_copy" && json["in_place"].get<bool>();
      for (mlir::Value v : op.getResults()) {
        if (inPlace)
          continue;
        std::string name = mapexpr::tensorName(v);
        live[name] = {step, step};
        intermediates[name] = tensorJson(name, v.getType());
      }
      for (const Json &in : json["inputs"])
        if (live.count(in.get<std::string>()))
          live[in.get<std::string>()].second = step;
      steps_.push_back(std::move(json));
    }
    for (mlir::Value v : body.getTerminator()->getOperands()) {
      std::string name = mapexpr::tensorName(v);
      outputs_.push_back(tensorJson(name, v.getType()));
      intermediates.erase(name); // segment outputs belong to the caller
    }
    // First fit: each intermediate takes the lowest aligned offset no live buffer overlaps.
    // One whose bytes hold the dynamic size s0 has no offset: the runtime places those after
    // these, the same way, at each call's sizes (docs/manifest.md#a-dynamic-size).
    std::vector<std::tuple<int64_t, int64_t, std::pair<size_t, size_t>>> placed;
    for (auto &[name, buffer] : intermediates) {
      auto range = live.at(name);
      buffer["live"] = {range.first, range.second};
      if (batchDegree(buffer) > 0) {
        arena_.push_back(buffer);
        continue;
      }
      int64_t bytes = (buffer["bytes"].get<int64_t>() + kBufferAlignment - 1) / kBufferAlignment *
                      kBufferAlignment;
      int64_t offset = 0;
      for (bool moved = true; moved;) {
        moved = false;
        for (auto &[start, size, other] : placed)
          if (other.first <= range.second && range.first <= other.second &&
              start < offset + bytes && offset < start + size) {
            offset = start + size;
            moved = true;
          }
      }
      placed.push_back({offset, bytes, range});
      arenaBytes_ = std::max(arenaBytes_, offset + bytes);
      buffer["offset"] = offset;
      arena_.push_back(buffer);
    }
  }

  Json json(const std::string &segmentName) const {
    Json arena{{"bytes", arenaBytes_}, {"buffers", arena_}};
    return Json{{"name", segmentName},
                {"inputs", inputs_},
                {"steps", steps_},
                {"outputs", outputs_},
                {"arena", arena}};
  }
  int64_t arenaBytes() const { return arenaBytes_; }

private:
  Json inputs_ = Json::array(), steps_ = Json::array(), outputs_ = Json::array(),
       arena_ = Json::array();
  int64_t arenaBytes_ = 0; // the static buffers'; the runtime places those of s0 after them
};

/// The names of tensors the frontend passes between segments, as segment `seg`'s plan
/// names them: its inputs and outputs by position (a call that decomposes to nothing, such
/// as dropout in inference, leaves its input's name on the output), the rest by statement
/// result.
Json names(const std::vector<frontend::VarPtr> &vars, const frontend::Segment &seg,
           const Json &plan) {
  Json out = Json::array();
  for (const frontend::VarPtr &v : vars) {
    auto input = std::find(seg.sir.inputs.begin(), seg.sir.inputs.end(), v);
    auto output = std::find(seg.sir.outputs.begin(), seg.sir.outputs.end(), v);
    out.push_back(input != seg.sir.inputs.end()
                      ? plan["inputs"][input - seg.sir.inputs.begin()]["name"].get<std::string>()
                  : output != seg.sir.outputs.end()
                      ? plan["outputs"][output - seg.sir.outputs.begin()]["name"].get<std::string>()
                      : v->tensorName);
  }
  return out;
}

/// A Python value as the runtime rebuilds it (a return value, a host call's arguments):
/// tensors by buffer name, constants by their Python repr, tuples, lists and dicts nested, an
/// object of a class by its class and attributes (a DynamicCache in a model's output), and
/// the result of an earlier host callback by the index of the segment whose end called it (the
/// entry's segments start at `first` in the manifest's list).
Json valueJson(const frontend::VarPtr &v, const frontend::Segment &seg, const Json &plan,
               const frontend::Translation &translation, const trace::Trace &trace, int64_t first) {
  using K = frontend::Variable::Kind;
  auto recurse = [&](const frontend::VarPtr &item) {
    return valueJson(item, seg, plan, translation, trace, first);
  };
  auto items = [&](const std::vector<frontend::VarPtr> &vars) {
    Json out = Json::array();
    for (const frontend::VarPtr &item : vars)
      out.push_back(recurse(item));
    return out;
  };
  switch (v->kind) {
  case K::Tensor:
    return Json{{"tensor", names({v}, seg, plan)[0]}};
  case K::Constant:
    return Json{{"constant", v->repr()}};
  case K::Tuple:
    return Json{{"tuple", items(v->items)}};
  case K::List:
    return Json{{"list", items(v->items)}};
  case K::Dict: {
    Json pairs = Json::array();
    for (size_t i = 0; i < v->keys.size() && i < v->items.size(); ++i)
      pairs.push_back(Json::array({recurse(v->keys[i]), recurse(v->items[i])}));
    return Json{{"dict", pairs}};
  }
  case K::Object:
    if (!v->recordClass.empty()) { // a ModelOutput: its class and fields
      Json fields = Json::array();
      for (size_t i = 0; i < v->keys.size(); ++i)
        fields.push_back(Json::array({v->keys[i]->constant.text, recurse(v->items[i])}));
      return Json{{"record", Json{{"class", v->recordClass}, {"fields", fields}}}};
    }
    if (v->classIndex >= 0 && !v->layer) { // an object of a class: its attributes
      const trace::ClassDef &c = trace.classes(v->classIndex);
      Json attributes = Json::array();
      for (size_t i = 0; i < v->keys.size() && i < v->items.size(); ++i)
        attributes.push_back(Json::array({v->keys[i]->constant.text, recurse(v->items[i])}));
      return Json{
          {"object", Json{{"class", c.module() + ":" + c.qualname()}, {"attributes", attributes}}}};
    }
    [[fallthrough]];
  default: {
    // A value only the host has: a host callback's result (else the host cannot rebuild it).
    Json host{{"host", v->repr()}};
    for (auto [i, s] : llvm::enumerate(translation.segments))
      if (s.end == frontend::Segment::End::HostCallback && s.callbackResult == v)
        host["callback"] = first + static_cast<int64_t>(i);
    return host;
  }
  }
}

/// The tensors inside a host callback's result (a --break-on API's outputs): the runtime
/// allocates them and the callback fills them.
Json callbackTensorsJson(const frontend::VarPtr &result, mlir::MLIRContext *ctx) {
  std::vector<frontend::VarPtr> tensors;
  std::set<const frontend::Variable *> seen;
  frontend::collectTensors(result, tensors, seen);
  Json out = Json::array();
  for (const frontend::VarPtr &t : tensors)
    out.push_back(tensorJson(t->tensorName, sir::tensorType(ctx, t->meta)));
  return out;
}

/// The segment-0 buffer a tensor parameter is passed as (null when no kernel reads it).
Json bufferOf(const frontend::Translation &translation, const Json &segments,
              const frontend::VarPtr &p) {
  if (translation.segments.empty())
    return nullptr;
  const auto &inputs = translation.segments[0].sir.inputs;
  auto it = std::find(inputs.begin(), inputs.end(), p);
  return it == inputs.end() ? Json() : segments[0]["inputs"][it - inputs.begin()]["name"];
}

/// The entry function's parameters, in the trace's order: a tensor with its meta and the
/// segment-0 buffer it is passed as, or any other Python value as the repr it was traced with
/// (tensors inside a container print as their names). A model's weights are not among them.
Json parametersJson(const frontend::Translation &translation, const Json &segments) {
  Json out = Json::array();
  for (const frontend::VarPtr &p : translation.parameters) {
    if (!p->weight.empty())
      continue;
    if (!p->isTensor()) {
      std::vector<frontend::VarPtr> inside;
      std::set<const frontend::Variable *> seen;
      frontend::collectTensors(p, inside, seen);
      // An object's guards read its attributes: the caller that has it checks them.
      out.push_back(Json{{"name", p->parameter},
                         {"kind", p->kind == frontend::Variable::Kind::Object ? "object"
                                  : inside.empty()                             ? "constant"
                                                                               : "structure"},
                         {"value", p->passedRepr.empty() ? p->repr() : p->passedRepr}});
      continue;
    }
    Json param{{"name", p->parameter},
               {"kind", "tensor"},
               {"dtype", ops::dtypeName(p->meta.dtype)},
               {"shape", shapeJson(p->meta.shape)},
               {"stop_gradient", p->stopGradient},
               {"buffer", bufferOf(translation, segments, p)}};
    if (!p->global.empty())
      param["global"] = p->global; // read from the function's module at each call
    out.push_back(param);
  }
  return out;
}

/// A model's weights: the file beside the artifact that holds them and each one's meta, in
/// the order the model holds them (every entry of a bundle reads the same weights); `state`
/// where some entry writes it in place (the file holds its initial value).
Json weightsJson(const std::vector<Entry> &entries, const Artifact &file) {
  std::set<std::string> state;
  for (const Entry &entry : entries)
    state.merge(entry.translation->stateWeights());
  Json tensors = Json::array();
  for (const frontend::VarPtr &p : entries.front().translation->parameters)
    if (!p->weight.empty()) {
      tensors.push_back(Json{
          {"name", p->weight}, {"dtype", ops::dtypeName(p->meta.dtype)}, {"shape", p->meta.shape}});
      if (state.count(p->weight))
        tensors.back()["state"] = true;
    }
  return Json{{"file", file.file}, {"sha256", file.sha256}, {"tensors", tensors}};
}

/// Where one entry reads the weights: each weight's segment-0 buffer, and the plan of its
/// @prepare_weights (its inputs the weights by name, its outputs segment 0's inputs of the
/// same names).
Json weightBindingsJson(const frontend::Translation &translation, const Json &segments,
                        const std::optional<SegmentPlan> &prepare) {
  Json buffers = Json::array();
  for (const frontend::VarPtr &p : translation.parameters)
    if (!p->weight.empty())
      buffers.push_back(Json{{"name", p->weight}, {"buffer", bufferOf(translation, segments, p)}});
  Json out{{"tensors", buffers}};
  if (prepare) {
    Json plan = prepare->json(sir::kPrepareWeights.str());
    plan.erase("name");
    out["prepare"] = plan;
  }
  return out;
}

} // namespace

// OpenSSL's, as the runtime's: LLVM's SHA256 counts bytes in 32 bits and hashes inputs of
// 512 MiB and more wrongly (a VGG-16's weights).
std::string sha256(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr);
  static const char *hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < size; ++i)
    out += {hex[digest[i] >> 4], hex[digest[i] & 15]};
  return out;
}

int64_t elementBytes(mlir::Type element) {
  if (element.isIntOrFloat())
    return std::max<int64_t>(element.getIntOrFloatBitWidth(), 8) / 8;
  if (auto complex = mlir::dyn_cast<mlir::ComplexType>(element))
    return 2 * complex.getElementType().getIntOrFloatBitWidth() / 8;
  return 0;
}

std::string manifestDigest(std::string_view manifestText) {
  nlohmann::json m = nlohmann::json::parse(manifestText); // std::map: keys sorted
  m["binary"].erase("sha256");
  return sha256(m.dump());
}

void seal(std::string &manifestText, std::string &binary) {
  binary += std::string(kDigestMark) + manifestDigest(manifestText) + "\n";
  Json m = Json::parse(manifestText);
  m["binary"]["sha256"] = sha256(binary);
  manifestText = m.dump(2) + "\n";
}

namespace {
/// One entry's part of the manifest: its trace, parameters, guards and weights' bindings, and
/// its segments, numbered from `first` (the segments of the entries before it) in the
/// manifest's one list.
Json entryJson(const Entry &entry, const std::map<std::string, KernelLaunch> &launches,
               const Target &target, bool model, Json &allSegments, int64_t &arena) {
  const frontend::Translation &translation = *entry.translation;
  mlir::ModuleOp plan = entry.plan;
  int64_t first = static_cast<int64_t>(allSegments.size());
  const trace::PythonVersion &py = entry.trace->python();
  Json out;
  out["trace"] = Json{{"file", entry.traceFile.file},
                      {"sha256", entry.traceFile.sha256},
                      {"python", std::to_string(py.major()) + "." + std::to_string(py.minor()) +
                                     "." + std::to_string(py.micro())}};
  Json guards = Json::array();
  for (auto [i, g] : llvm::enumerate(translation.guards))
    guards.push_back(Json{{"id", "g" + std::to_string(i)},
                          {"kind", guardKind(g.kind)},
                          {"expression", g.expression},
                          {"expected", g.expected},
                          {"condition", g.condition()},
                          {"source", g.loc.str()}});
  // The frontend's segments in order, then what prepares the weights.
  llvm::SmallVector<sir::SubgraphOp> subgraphs;
  std::optional<SegmentPlan> prepare;
  for (sir::SubgraphOp subgraph : plan.getOps<sir::SubgraphOp>()) {
    if (subgraph.getSymName() == sir::kPrepareWeights)
      prepare.emplace(subgraph, launches, target.gemm);
    else
      subgraphs.push_back(subgraph);
  }
  Json segments = Json::array();
  for (auto [i, seg] : llvm::enumerate(translation.segments)) {
    SegmentPlan segmentPlan(subgraphs[i], launches, target.gemm);
    Json s = segmentPlan.json(seg.sir.name);
    arena = std::max(arena, segmentPlan.arenaBytes());
    Json end;
    switch (seg.end) {
    case frontend::Segment::End::Return:
      end = Json{{"kind", "return"}, {"value", seg.returnValue}};
      if (seg.result)
        end["result"] = valueJson(seg.result, seg, s, translation, *entry.trace, first);
      if (!seg.sideEffects.empty()) {
        Json effects = Json::array();
        for (const frontend::SideEffect &e : seg.sideEffects) {
          using Kind = frontend::SideEffect::Kind;
          Json effect{{e.kind == Kind::Argument ? "argument"
                       : e.kind == Kind::State  ? "state"
                                                : "global",
                       e.name}};
          if (e.value)
            effect["value"] = valueJson(e.value, seg, s, translation, *entry.trace, first);
          else
            effect["deleted"] = true;
          effects.push_back(effect);
        }
        end["side_effects"] = effects;
      }
      break;
    case frontend::Segment::End::Branch:
      end = Json{{"kind", "branch"},
                 {"condition", s["outputs"].empty() ? Json() : s["outputs"][0]["name"]},
                 {"on_true", first + seg.onTrue},
                 {"true_args", names(seg.trueArgs, seg, s)},
                 {"on_false", first + seg.onFalse},
                 {"false_args", names(seg.falseArgs, seg, s)},
                 {"reason", seg.reason},
                 {"source", seg.endLoc.str()}};
      break;
    case frontend::Segment::End::HostCallback: {
      size_t positional = seg.callbackArgs.size() - seg.callbackKwargs.size();
      Json args = Json::array(), kwargs = Json::array();
      for (auto [k, arg] : llvm::enumerate(seg.callbackArgs)) {
        Json value = valueJson(arg, seg, s, translation, *entry.trace, first);
        if (k < positional)
          args.push_back(value);
        else
          kwargs.push_back(Json::array({seg.callbackKwargs[k - positional], value}));
      }
      end =
          Json{{"kind", "host_callback"},
               {"callee", seg.callee},
               {"args", args},
               {"kwargs", kwargs},
               {"result", valueJson(seg.callbackResult, seg, s, translation, *entry.trace, first)},
               {"result_tensors", callbackTensorsJson(seg.callbackResult, plan.getContext())},
               {"next", first + seg.next},
               {"next_args", names(seg.nextArgs, seg, s)},
               {"source", seg.endLoc.str()}};
      break;
    }
    case frontend::Segment::End::Size:
      end = Json{{"kind", "size"},
                 {"size", "s" + std::to_string(seg.sizeSymbol)},
                 {"count", s["outputs"].empty() ? Json() : s["outputs"][0]["name"]},
                 {"bound", sizeJson(ops::productOf(seg.sizeBound))},
                 {"next", first + seg.next},
                 {"next_args", names(seg.nextArgs, seg, s)},
                 {"reason", seg.reason},
                 {"source", seg.endLoc.str()}};
      break;
    case frontend::Segment::End::Raise:
      end = Json{{"kind", "raise"},
                 {"exception", seg.exceptionType},
                 {"class", seg.exceptionClass},
                 {"message", seg.exceptionMessage},
                 {"source", seg.endLoc.str()}};
      break;
    }
    s["end"] = end;
    segments.push_back(s);
  }
  if (prepare)
    arena = std::max(arena, prepare->arenaBytes());
  out["function"] = translation.entry;
  out["inputs"] = parametersJson(translation, segments);
  if (model)
    out["weights"] = weightBindingsJson(translation, segments, prepare);
  out["guards"] = guards;
  out["guard_lambda"] = translation.guardLambda();
  if (!translation.derivedSizes.empty()) {
    Json derived = Json::array();
    for (const ops::SizeOffset &d : translation.derivedSizes)
      derived.push_back(Json{{"size", "s" + std::to_string(d.symbol)},
                             {"base", "s" + std::to_string(d.base)},
                             {"offset", d.offset}});
    out["derived_sizes"] = derived;
  }
  if (!translation.producedSizes.empty()) { // each counted where a segment ends
    Json produced = Json::array();
    for (int k : translation.producedSizes)
      for (auto [i, seg] : llvm::enumerate(translation.segments))
        if (seg.end == frontend::Segment::End::Size && seg.sizeSymbol == k)
          produced.push_back(Json{{"size", "s" + std::to_string(k)},
                                  {"segment", first + static_cast<int64_t>(i)},
                                  {"source", seg.endLoc.str()}});
    out["produced_sizes"] = produced;
  }
  out["segment"] = first;
  for (Json &s : segments)
    allSegments.push_back(std::move(s));
  return out;
}
} // namespace

std::string writeManifest(const std::vector<Entry> &entries,
                          const std::map<std::string, KernelLaunch> &launches, const Target &target,
                          const Artifact &binary, const Artifact *weights) {
  Json m;
  m["format"] = "sotc-manifest";
  m["version"] = kFormatVersion;
  m["sotc"] = kSotcVersion;
  if (target.kind == "cpu") {
    Json variants = Json::array();
    for (const Target::Variant &v : target.variants)
      variants.push_back(Json{{"cpu", v.cpu}, {"features", v.features}, {"kernel_table", v.table}});
    m["target"] =
        Json{{"kind", target.kind},         {"triple", target.triple}, {"cpu", target.cpu},
             {"features", target.features}, {"variants", variants},    {"abi", target.abi},
             {"gemm", target.gemm}};
  } else
    m["target"] = Json{{"kind", target.kind}, {"triple", target.triple}, {"archs", target.archs},
                       {"ptx", target.ptx},   {"abi", target.abi},       {"gemm", target.gemm}};
  m["binary"] = Json{{"file", binary.file}, {"sha256", binary.sha256}};
  if (weights)
    m["weights"] = weightsJson(entries, *weights);
  Json list = Json::array(), segments = Json::array();
  int64_t arena = 0;
  for (const Entry &entry : entries)
    list.push_back(entryJson(entry, launches, target, weights != nullptr, segments, arena));
  if (weights) { // a KV cache: a state weight an in-place index_copy writes, along its axis
    std::map<std::string, int64_t> cacheAxes;
    for (const Json &entry : list)
      for (const Json &step : segments[entry["segment"].get<size_t>()]["steps"])
        if (step["kind"] == "index_copy" && step["in_place"].get<bool>())
          for (const Json &w : entry["weights"]["tensors"])
            if (w["buffer"] == step["outputs"][0])
              cacheAxes[w["name"].get<std::string>()] = step["axis"].get<int64_t>();
    for (Json &t : m["weights"]["tensors"])
      if (auto it = cacheAxes.find(t["name"].get<std::string>()); it != cacheAxes.end())
        t["cache_axis"] = it->second;
  }
  m["entries"] = list;
  m["segments"] = segments;
  m["arena"] = Json{{"bytes", arena}, {"alignment", kBufferAlignment}};
  return m.dump(2) + "\n";
}

} // namespace sotc::manifest
