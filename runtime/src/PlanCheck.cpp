#include "runtime/src/PlanCheck.h"

#include "sotc/runtime.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace sotc::runtime {
namespace {

using Wide = __int128; // products of manifest integers, which may be anything an int64 holds

std::string shapeText(const Buffer &b) {
  std::string s = (sotc_dtype_name(b.dtype) ? sotc_dtype_name(b.dtype) : "?") + std::string("[");
  for (size_t d = 0; d < b.shape.size(); ++d)
    s += (d ? ", " : "") + std::to_string(b.shape[d]);
  return s + "]";
}

/// The dtypes an argsort step orders: every real one but the halves (computed in float32).
bool sortable(int dtype) {
  return dtype == SOTC_BOOL || dtype == SOTC_INT8 || dtype == SOTC_UINT8 || dtype == SOTC_INT16 ||
         dtype == SOTC_INT32 || dtype == SOTC_INT64 || dtype == SOTC_FLOAT32 ||
         dtype == SOTC_FLOAT64;
}

bool sameTensor(const Buffer &a, const Buffer &b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.products == b.products;
}

/// The checks of one plan (a segment, or the weights' preparation), failing with its name.
class PlanChecker {
public:
  PlanChecker(const Artifact &artifact, const Segment &plan) : artifact_(artifact), plan_(plan) {}

  void check() {
    for (const Buffer &b : plan_.inputs)
      add(b, "input");
    for (const Buffer &b : plan_.outputs)
      add(b, "output");
    for (const Buffer &b : plan_.arena)
      add(b, "arena buffer");
    for (const Buffer &b : plan_.callbackResults)
      checkBytes(b, "host call result");
    if (plan_.arenaBytes < 0 || plan_.arenaBytes > kMaxBytes)
      fail("has an arena of " + std::to_string(plan_.arenaBytes) + " bytes");
    for (const Buffer &b : plan_.arena)
      if (b.offset < 0 || b.offset > plan_.arenaBytes - b.bytes)
        fail("has its arena buffer " + b.name + " outside its arena");
    for (size_t i = 0; i < plan_.steps.size(); ++i)
      checkStep(plan_.steps[i], i);
  }

  /// The buffer `name` of this plan (an input, output or arena buffer; with `callbackResults`,
  /// also what a host call returned), or null.
  const Buffer *find(const std::string &name, bool callbackResults = false) const {
    auto it = buffers_.find(name);
    if (it != buffers_.end())
      return it->second;
    if (callbackResults)
      for (const Buffer &b : plan_.callbackResults)
        if (b.name == name)
          return &b;
    return nullptr;
  }

  [[noreturn]] void fail(const std::string &what) const {
    throw Error(ErrorCode::ArtifactUnreadable, artifact_.manifestPath + ": " + plan_.name + " " + what);
  }

private:
  void checkBytes(const Buffer &b, const std::string &kind) const {
    int64_t bytes = tensorBytes(b.dtype, b.shape);
    if (bytes < 0)
      fail("has the " + kind + " " + b.name + " of " + shapeText(b) +
           ", no dtype and shape this runtime holds");
    if (bytes != b.bytes)
      fail("says its " + kind + " " + b.name + " (" + shapeText(b) + ") has " +
           std::to_string(b.bytes) + " bytes; that shape has " + std::to_string(bytes));
  }

  void add(const Buffer &b, const std::string &kind) {
    checkBytes(b, kind);
    auto [it, added] = buffers_.try_emplace(b.name, &b);
    // An output may be an input passed on, or an arena buffer given memory of its own.
    if (!added && !sameTensor(*it->second, b))
      fail("names two different buffers " + b.name);
    if (kind == "input")
      inputs_.insert(b.name);
    if (kind == "output")
      outputs_.insert(b.name);
  }

  const Buffer &operand(const std::string &name, size_t step) const {
    const Buffer *b = find(name);
    if (!b)
      fail("step " + std::to_string(step) + " names " + name + ", which is no buffer of it");
    return *b;
  }

  void checkStep(const Step &step, size_t index) {
    std::string which = "step " + std::to_string(index) + " (" + step.name + ")";
    std::set<std::string> written;
    for (const std::string &name : step.outputs) {
      operand(name, index);
      // An in-place index_copy writes a state the entry binds (checked with the entry's).
      if (inputs_.count(name) && !(step.kind == Step::Kind::IndexCopy && step.indexCopy.inPlace))
        fail(which + " writes its input " + name);
      if (!written.insert(name).second)
        fail(which + " writes " + name + " twice");
    }
    for (const std::string &name : step.inputs)
      if (written.count(operand(name, index).name))
        fail(which + " reads " + name + ", which it writes");
    for (const std::vector<std::string> *names : {&step.outputs, &step.inputs})
      for (const std::string &name : *names)
        use(name, index);
    if (step.empty || step.sumsNone) // over a counted size of 0: it does not run
      return;
    if (step.kind == Step::Kind::Gemm)
      return checkGemm(step, which);
    if (step.kind == Step::Kind::Conv)
      return checkConv(step, which);
    if (step.kind == Step::Kind::IndexCopy)
      return checkIndexCopy(step, index, which);
    if (step.kind == Step::Kind::Nonzero) {
      const Buffer &out = operand(step.outputs[0], index), &x = operand(step.inputs[0], index);
      if (out.dtype != SOTC_INT64 || out.shape.size() != 2 ||
          out.shape[1] != static_cast<int64_t>(x.shape.size()))
        fail(which + " writes the nonzeros of " + shapeText(x) + " to " + shapeText(out) +
             ", not int64 [size, " + std::to_string(x.shape.size()) + "]");
      return;
    }
    if (step.kind == Step::Kind::Nms) {
      const Buffer &out = operand(step.outputs[0], index), &boxes = operand(step.inputs[0], index),
                   &scores = operand(step.inputs[1], index);
      bool floating = boxes.dtype == SOTC_FLOAT32 || boxes.dtype == SOTC_FLOAT64;
      if (!floating || scores.dtype != boxes.dtype || boxes.shape.size() != 2 ||
          boxes.shape[1] != 4 || scores.shape.size() != 1 || scores.shape[0] != boxes.shape[0] ||
          out.dtype != SOTC_INT64 || out.shape != scores.shape)
        fail(which + " suppresses boxes " + shapeText(boxes) + " by scores " + shapeText(scores) +
             " into " + shapeText(out) + ", not float32 or float64 [N, 4] and [N] into int64 [N]");
      return;
    }
    if (step.kind == Step::Kind::Argsort) {
      const Buffer &out = operand(step.outputs[0], index), &x = operand(step.inputs[0], index);
      if (out.dtype != SOTC_INT64 || out.shape != x.shape || !sortable(x.dtype) ||
          step.sortAxis >= static_cast<int64_t>(x.shape.size()))
        fail(which + " sorts " + shapeText(x) + " along dim " + std::to_string(step.sortAxis) +
             " into " + shapeText(out) +
             ", not a real tensor along one of its dims into int64 "
             "of its shape");
      return;
    }
    if (step.symbol.empty() || step.outputs.empty())
      fail(which + " is a kernel without a symbol or an output");
    if (step.grid < 1 || step.grid > 0x7fffffff)
      fail(which + " has a grid of " + std::to_string(step.grid));
    if (artifact_.target == "cuda" &&
        (step.block < 1 || step.block > 1024 || step.sharedBytes < 0 ||
         step.sharedBytes > 228 * 1024))
      fail(which + " has a block of " + std::to_string(step.block) + " threads and " +
           std::to_string(step.sharedBytes) + " bytes of shared memory");
  }

  /// x and the output alike, an int64 index [m], the source x's with m at the axis.
  void checkIndexCopy(const Step &step, size_t index, const std::string &which) const {
    const IndexCopyPlan &p = step.indexCopy;
    const Buffer &out = operand(step.outputs[0], index),
                 &x = p.inPlace ? out : operand(step.inputs[0], index),
                 &at = operand(step.inputs[p.inPlace ? 0 : 1], index),
                 &source = operand(step.inputs.back(), index);
    std::vector<int64_t> expected = out.shape;
    if (p.axis < int64_t(expected.size()) && at.shape.size() == 1)
      expected[p.axis] = at.shape[0];
    if (!sameTensor(x, out) || at.dtype != SOTC_INT64 || at.shape.size() != 1 ||
        p.axis >= int64_t(out.shape.size()) || source.dtype != out.dtype ||
        source.shape != expected)
      fail(which + " copies " + shapeText(source) + " at an index " + shapeText(at) +
           " along axis " + std::to_string(p.axis) + " into " + shapeText(out) +
           ", not an index_copy's buffers");
  }

  void checkGemm(const Step &step, const std::string &which) const {
    const GemmPlan &p = step.plan;
    static const std::map<GemmPlan::Type, int> dtypes = {{GemmPlan::Type::F16, SOTC_FLOAT16},
                                                         {GemmPlan::Type::BF16, SOTC_BFLOAT16},
                                                         {GemmPlan::Type::F32, SOTC_FLOAT32},
                                                         {GemmPlan::Type::F64, SOTC_FLOAT64}};
    int dtype = dtypes.at(p.type), operandDtype = p.bf16Operands() ? SOTC_BFLOAT16 : dtype;
    // The last element an operand's products reach: (rows - 1) * ld + cols, plus the largest
    // batch offset, in elements.
    auto reach = [&](Wide rows, Wide cols, Wide ld, const std::vector<int64_t> &strides) {
      Wide last = (rows - 1) * ld + cols;
      for (size_t d = 0; d < p.batch.size(); ++d)
        last += Wide(p.batch[d] - 1) * strides[d];
      return last;
    };
    auto fits = [&](const std::string &name, Wide elements, const char *role, int type) {
      const Buffer &b = *find(name);
      if (b.dtype != type)
        fail(which + "'s " + role + " " + name + " is " + shapeText(b) + "; the GEMM's is " +
             sotc_dtype_name(type));
      if (elements > Wide(b.bytes / static_cast<int64_t>(sotc_dtype_size(type))))
        fail(which + " reaches past its " + role + " " + name + " (" + shapeText(b) + ")");
    };
    fits(step.outputs[0], reach(p.m, p.n, p.ldc, p.strideC), "C", dtype);
    fits(step.inputs[0],
         p.transposeA ? reach(p.k, p.m, p.lda, p.strideA) : reach(p.m, p.k, p.lda, p.strideA), "A",
         operandDtype);
    fits(step.inputs[1],
         p.transposeB ? reach(p.n, p.k, p.ldb, p.strideB) : reach(p.k, p.n, p.ldb, p.strideB), "B",
         operandDtype);
    if (p.bias)
      fits(step.inputs[2], p.n, "bias", dtype);
  }

  void checkConv(const Step &step, const std::string &which) const {
    const ConvPlan &p = step.conv;
    auto fits = [&](const std::string &name, Wide elements, const char *role) {
      const Buffer &b = *find(name);
      if (b.dtype != SOTC_FLOAT32)
        fail(which + "'s " + role + " " + name + " is " + shapeText(b) +
             "; the convolution is of float32");
      if (elements > Wide(b.bytes / static_cast<int64_t>(sizeof(float))))
        fail(which + " reaches past its " + role + " " + name + " (" + shapeText(b) + ")");
    };
    fits(step.outputs[0], p.outputElements(), "output");
    fits(step.inputs[0], p.inputElements(), "input");
    fits(step.inputs[1], p.weightElements(), "weight");
    size_t next = 2;
    if (p.bias)
      fits(step.inputs[next++], p.oc, "bias");
    if (p.residual)
      fits(step.inputs[next], p.outputElements(), "residual");
  }

  /// Marks an arena buffer as live at step `index` (the end is steps.size()).
  void use(const std::string &name, size_t index) {
    auto [it, added] = live_.try_emplace(name, index, index);
    it->second.first = std::min(it->second.first, index);
    it->second.second = std::max(it->second.second, index);
  }

public:
  /// What the plan's end reads after its last step: live until then.
  void usedAtEnd(const std::string &name) { use(name, plan_.steps.size()); }

  void checkArenaOverlaps() const {
    std::vector<const Buffer *> placed;
    for (const Buffer &b : plan_.arena)
      if (b.bytes > 0 && live_.count(b.name) && !outputs_.count(b.name))
        placed.push_back(&b);
    for (size_t i = 0; i < placed.size(); ++i)
      for (size_t j = i + 1; j < placed.size(); ++j) {
        const Buffer &a = *placed[i], &b = *placed[j];
        auto la = live_.at(a.name), lb = live_.at(b.name);
        if (la.first <= lb.second && lb.first <= la.second && a.offset < b.offset + b.bytes &&
            b.offset < a.offset + a.bytes)
          fail("places " + a.name + " and " + b.name +
               ", which are live at the same time, on the same bytes of its arena");
      }
  }

private:
  const Artifact &artifact_;
  const Segment &plan_;
  std::map<std::string, const Buffer *> buffers_;
  std::set<std::string> inputs_, outputs_;
  std::map<std::string, std::pair<size_t, size_t>> live_; // first and last step
};

/// Whether `passed` may be given for `input` after a size end: its first rows (the input's
/// first dimension at most the passed one's where `rows`, the others the same).
bool firstRowsOf(const Buffer &passed, const Buffer &input, bool rows) {
  return passed.dtype == input.dtype && passed.shape.size() == input.shape.size() &&
         !input.shape.empty() && (!rows || input.shape[0] <= passed.shape[0]) &&
         std::equal(input.shape.begin() + 1, input.shape.end(), passed.shape.begin() + 1);
}

/// `args` of `from` passed to the inputs of segment `to`, in order.
void checkJump(const Artifact &a, const PlanChecker &from, const std::vector<std::string> &args,
               int to, bool callbackResults, bool firstRows = false) {
  const Segment &target = a.segments[static_cast<size_t>(to)];
  if (args.size() != target.inputs.size())
    from.fail("passes " + std::to_string(args.size()) + " tensors to " + target.name +
              ", which has " + std::to_string(target.inputs.size()) + " inputs");
  for (size_t i = 0; i < args.size(); ++i) {
    const Buffer *b = from.find(args[i], callbackResults);
    if (!b)
      from.fail("passes " + args[i] + ", which is no buffer of it");
    // A size end's rows are checked where it jumps (checkCountedJump): a later end may count
    // a size again, which this plan has at an earlier count.
    if (!sameTensor(*b, target.inputs[i]) &&
        !(firstRows && firstRowsOf(*b, target.inputs[i], false)))
      from.fail("passes " + args[i] + " (" + shapeText(*b) + ") to " + target.name + "'s input " +
                target.inputs[i].name + " (" + shapeText(target.inputs[i]) + ")");
  }
}

} // namespace

void checkCountedJump(const Artifact &from, size_t segment, const Artifact &to) {
  const Segment &seg = from.segments.at(segment);
  const Segment &target = to.segments.at(static_cast<size_t>(seg.next));
  auto buffer = [&](const std::string &name) -> const Buffer * {
    for (const std::vector<Buffer> *list : {&seg.inputs, &seg.outputs, &seg.arena})
      for (const Buffer &b : *list)
        if (b.name == name)
          return &b;
    return nullptr;
  };
  for (size_t i = 0; i < seg.nextArgs.size() && i < target.inputs.size(); ++i) {
    const Buffer *b = buffer(seg.nextArgs[i]);
    if (!b || (!sameTensor(*b, target.inputs[i]) && !firstRowsOf(*b, target.inputs[i], true)))
      throw Error(ErrorCode::ArtifactUnreadable,
                  seg.name + " passes " + seg.nextArgs[i] + " to " + target.name + "'s input " +
                      target.inputs[i].name + " (" + shapeText(target.inputs[i]) +
                      "), which it does not hold");
  }
}

int64_t tensorBytes(int dtype, const std::vector<int64_t> &shape) {
  if (!sotc_dtype_name(dtype) || shape.size() > SOTC_MAX_RANK)
    return -1;
  Wide bytes = static_cast<Wide>(sotc_dtype_size(dtype));
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxBytes)
      return -1;
    bytes *= d;
    if (bytes > kMaxBytes)
      return -1;
  }
  return static_cast<int64_t>(bytes);
}

void checkPlan(const Artifact &a) {
  auto fail = [&](const std::string &what) {
    throw Error(ErrorCode::ArtifactUnreadable, a.manifestPath + ": " + what);
  };
  for (const Entry &e : a.entries)
    for (const Parameter &p : e.parameters)
      if (p.tensor && tensorBytes(p.spec.dtype, p.spec.shape) < 0)
        fail("the entry's input " + p.name + " is " + shapeText(p.spec) +
             ", no dtype and shape this runtime holds");
  for (const Weight &w : a.weights)
    if (tensorBytes(w.spec.dtype, w.spec.shape) < 0)
      fail("weight " + w.name + " is " + shapeText(w.spec) +
           ", no dtype and shape this runtime holds");

  for (const Segment *plan : a.plans()) {
    const Segment &s = *plan;
    PlanChecker checker(a, s);
    checker.check();
    auto resolves = [&](const std::string &name, bool callbackResults) {
      if (!checker.find(name, callbackResults))
        checker.fail("ends with " + name + ", which is no buffer of it");
      checker.usedAtEnd(name);
    };
    switch (s.end) {
    case Segment::End::Return:
      for (const std::string &name : s.results)
        if (std::none_of(s.outputs.begin(), s.outputs.end(),
                         [&](const Buffer &b) { return b.name == name; }) &&
            std::none_of(s.inputs.begin(), s.inputs.end(),
                         [&](const Buffer &b) { return b.name == name; }))
          checker.fail("returns " + name + ", which is none of its inputs or outputs");
      break;
    case Segment::End::Branch:
      resolves(s.condition, false);
      if (checker.find(s.condition)->bytes < 1)
        checker.fail("branches on " + s.condition + ", which has no element");
      for (const std::string &name : s.trueArgs)
        resolves(name, false);
      for (const std::string &name : s.falseArgs)
        resolves(name, false);
      checkJump(a, checker, s.trueArgs, s.onTrue, false);
      checkJump(a, checker, s.falseArgs, s.onFalse, false);
      break;
    case Segment::End::HostCallback:
      for (const std::string &name : s.callbackArgs)
        resolves(name, true);
      for (const std::string &name : s.nextArgs)
        resolves(name, true);
      checkJump(a, checker, s.nextArgs, s.next, true);
      break;
    case Segment::End::Size:
      resolves(s.condition, false);
      if (const Buffer *count = checker.find(s.condition);
          count->dtype != SOTC_INT64 || count->bytes != 8)
        checker.fail("counts a size in " + s.condition + ", which is no int64 scalar");
      for (const std::string &name : s.nextArgs)
        resolves(name, false);
      checkJump(a, checker, s.nextArgs, s.next, false, true);
      break;
    case Segment::End::Raise: // reads nothing: its exception is the manifest's text
      break;
    }
    checker.checkArenaOverlaps(); // with what the end reads
  }

  for (const Entry &e : a.entries) {
    // The entry's first segment's inputs: each bound by a parameter, a weight or what was
    // prepared of them, of its dtype and shape.
    const Segment &first = a.segments[e.first];
    std::map<std::string, Buffer> bound;
    for (const Parameter &p : e.parameters)
      if (p.tensor && !p.buffer.empty())
        bound[p.buffer] = p.boundSpec();
    for (const auto &[name, buffer] : e.weightBuffers) {
      auto w = std::find_if(a.weights.begin(), a.weights.end(),
                            [&](const Weight &x) { return x.name == name; });
      if (w == a.weights.end())
        fail(first.name + "'s input " + buffer + " is bound to " + name + ", which is no weight");
      bound[buffer] = w->spec;
    }
    for (const Buffer &b : e.prepare.outputs)
      bound[b.name] = b;
    for (const Buffer &in : first.inputs) {
      auto it = bound.find(in.name);
      if (it == bound.end())
        fail(first.name + "'s input " + in.name + " is bound by no parameter or weight");
      if (!sameTensor(it->second, in))
        fail(first.name + "'s input " + in.name + " is " + shapeText(in) + "; what binds it is " +
             shapeText(it->second));
    }
    for (const auto &[name, spec] : bound)
      if (std::none_of(first.inputs.begin(), first.inputs.end(),
                       [&](const Buffer &b) { return b.name == name; }))
        fail(name + " is bound to " + first.name + ", which has no such input");
    // The preparation reads each weight as it is.
    for (const Buffer &in : e.prepare.inputs) {
      auto w = std::find_if(a.weights.begin(), a.weights.end(),
                            [&](const Weight &x) { return x.name == in.name; });
      if (w != a.weights.end() && !sameTensor(w->spec, in))
        fail("the weights' preparation reads " + in.name + " as " + shapeText(in) + "; it is " +
             shapeText(w->spec));
    }
    // Every entry is called the same way: the same parameters, in order.
    const Entry &e0 = a.entries.front();
    bool same = e.parameters.size() == e0.parameters.size();
    for (size_t i = 0; same && i < e.parameters.size(); ++i)
      same = e.parameters[i].name == e0.parameters[i].name;
    if (!same)
      fail("the entry of " + e.trace + " takes other parameters than the entry of " + e0.trace);
  }
}

} // namespace sotc::runtime
