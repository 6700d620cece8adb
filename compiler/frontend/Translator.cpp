//===- Translator.cpp - Segment graph, guards, and the text forms of a translation ------===//
//
// Graph breaks are compiled ahead of time: at a branch on a tensor the interpreter state is
// copied and both continuations run. A continuation whose entry state equals an earlier
// segment's re-uses that segment, so tensor-dependent loops become cycles.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Executor.h"

#include <deque>
#include <functional>
#include <optional>
#include <sstream>

namespace sotc::frontend {
namespace {

std::string names(const std::vector<VarPtr> &vars) {
  std::string s = "[";
  for (size_t i = 0; i < vars.size(); ++i)
    s += (i ? ", '" : "'") + vars[i]->tensorName + "'";
  return s + "]";
}

/// "(var_3, var_4)": the tensors an edge passes to the next segment's inputs, in order.
std::string callArgs(const std::vector<VarPtr> &vars, bool values = false) {
  std::string s = "(";
  for (size_t i = 0; i < vars.size(); ++i)
    s += (i ? ", " : "") + (values ? vars[i]->repr() : vars[i]->tensorName);
  return s + ")";
}

std::string argsRepr(const Statement &st) {
  std::string s = "(";
  for (size_t i = 0; i < st.args.size(); ++i)
    s += (i ? ", " : "") + st.args[i]->repr();
  if (st.args.size() == 1)
    s += ",";
  s += "), {";
  for (size_t i = 0; i < st.kwargs.size(); ++i)
    s += (i ? ", '" : "'") + st.kwargs[i].first + "': " + st.kwargs[i].second->repr();
  return s + "}";
}

} // namespace

std::string StatementIR::str() const {
  std::ostringstream s;
  s << "StatementIR: " << name << "\n";
  s << "  inputs: " << names(inputs) << "\n";
  s << "  outputs: " << names(outputs) << "\n";
  s << "  statements:\n";
  for (const Statement &st : statements) {
    std::string kind = st.kind == "api" ? "api" : "method"; // PaddleSOT prints operators as methods
    std::string outs = st.outputs.size() == 1 && !st.listResult ? st.outputs[0]->tensorName : "";
    if (outs.empty()) {
      outs = "[";
      for (size_t i = 0; i < st.outputs.size(); ++i)
        outs += (i ? ", " : "") + st.outputs[i]->tensorName;
      outs += "]";
    }
    kind.resize(10, ' ');
    s << "    " << kind << " || " << outs << " = " << st.callee << " (" << argsRepr(st) << ")\n";
  }
  return s.str();
}

const char *Guard::kindName() const {
  switch (kind) {
  case Kind::TensorMeta:
    return "tensor";
  case Kind::Equal:
    return "value";
  case Kind::Type:
    return "type";
  case Kind::Length:
    return "length";
  case Kind::Keys:
    return "keys";
  case Kind::Batch:
    return "batch";
  case Kind::Relation:
    return "relation";
  }
  return "?";
}

std::string Guard::condition() const {
  switch (kind) {
  case Kind::TensorMeta:
    return "MetaInfo.from_tensor(" + expression + ").guard_str() == '" + expected + "'";
  case Kind::Equal:
    return expression + " == " + expected;
  case Kind::Type:
    return "isinstance(" + expression + ", " + expected + ")";
  case Kind::Length:
    return "len(" + expression + ") == " + expected;
  case Kind::Keys:
    return "list(" + expression + ".keys()) == " + expected;
  case Kind::Batch:
  case Kind::Relation:
    return expression + " " + expected;
  }
  return "True";
}

std::set<std::string> Translation::stateWeights() const {
  std::set<std::string> out;
  for (const Segment &seg : segments)
    for (const SideEffect &e : seg.sideEffects)
      if (e.kind == SideEffect::Kind::State)
        out.insert(e.name);
  return out;
}

std::string Translation::sirText() const {
  std::string s;
  for (size_t i = 0; i < segments.size(); ++i)
    s += (i ? "\n" : "") + segments[i].sir.str();
  return s;
}

std::string Translation::guardTable() const {
  std::ostringstream s;
  s << "guards: " << guards.size() << "\n";
  for (const Guard &g : guards) {
    std::string kind = g.kindName();
    kind.resize(std::max<size_t>(8, kind.size() + 1), ' ');
    s << "  " << kind << g.condition() << "    # " << g.loc.str() << "\n";
  }
  return s.str();
}

std::string Translation::guardLambda() const {
  std::string s = "lambda frame: ";
  if (guards.empty())
    return s + "True";
  for (size_t i = 0; i < guards.size(); ++i)
    s += (i ? " and " : "") + guards[i].condition();
  return s;
}

std::string Translation::explain() const {
  std::ostringstream s;
  size_t statements = 0;
  for (const Segment &seg : segments)
    statements += seg.sir.statements.size();
  s << "function: " << entry << "\n";
  size_t weights = 0;
  int64_t values = 0;
  for (const VarPtr &p : parameters)
    if (!p->weight.empty())
      ++weights, values += p->meta.numElements();
  if (weights) // a model's parameters and buffers, inputs the artifact carries
    s << "weights: " << weights << " tensors, " << values << " values\n";
  s << "graphs: " << segments.size() << "\n";
  s << "graph breaks: " << breaks.size() << "\n";
  for (size_t i = 0; i < breaks.size(); ++i)
    s << "  " << i + 1 << ". " << breaks[i] << "\n";
  s << "statements: " << statements << "\n";
  for (const Segment &seg : segments) {
    s << "  " << seg.sir.name << ": " << seg.sir.statements.size() << " statements, ";
    switch (seg.end) {
    case Segment::End::Return:
      s << "returns " << seg.returnValue;
      for (const SideEffect &e : seg.sideEffects)
        s << (e.kind == SideEffect::Kind::Argument ? "; mutates argument "
              : e.kind == SideEffect::Kind::State  ? "; updates state "
                                                   : "; sets global ")
          << e.name << (e.value ? " = " + e.value->repr() : std::string(" (deleted)"));
      s << "\n";
      break;
    case Segment::End::Branch:
      s << "branches on " << seg.sir.outputs[0]->tensorName << " (" << seg.endLoc.str()
        << "): true -> " << segments[seg.onTrue].sir.name << callArgs(seg.trueArgs) << ", false -> "
        << segments[seg.onFalse].sir.name << callArgs(seg.falseArgs) << "\n";
      break;
    case Segment::End::HostCallback: {
      s << "calls the host: " << seg.callee << callArgs(seg.callbackArgs, true) << " ("
        << seg.endLoc.str() << ") -> " << segments[seg.next].sir.name << callArgs(seg.nextArgs)
        << "\n";
      break;
    }
    case Segment::End::Size:
      s << "counts size s" << seg.sizeSymbol << " in " << seg.sir.outputs[0]->tensorName << " ("
        << seg.endLoc.str() << ") -> " << segments[seg.next].sir.name << callArgs(seg.nextArgs)
        << "\n";
      break;
    case Segment::End::Raise:
      s << "raises " << seg.exceptionClass << ": " << seg.exceptionMessage << " ("
        << seg.endLoc.str() << ")\n";
      break;
    }
  }
  s << guardTable();
  s << guardLambda() << "\n";
  return s.str();
}

namespace {
Translation translateOnce(const trace::Trace &trace, const TranslateOptions &options);

/// Where an input's dimension of the size named `name` is read: the first input that has one
/// (frame.f_locals['y'].shape[0]).
std::string sizeExpression(const trace::Trace &trace, const std::string &name) {
  for (const trace::Input &input : trace.inputs()) {
    if (!input.value().has_tensor())
      continue;
    const auto &dims = input.value().tensor().dims();
    for (int d = 0; d < dims.size(); ++d)
      if (dims[d].dynamic() && (dims[d].symbol().empty() ? "?" : dims[d].symbol()) == name)
        return "frame.f_locals['" + input.name() + "'].shape[" + std::to_string(d) + "]";
  }
  return "";
}
} // namespace

Translation translate(const trace::Trace &trace, const TranslateOptions &options) {
  // Two sizes the inputs named apart that the program needs equal are one size: translated
  // again with the later name as the earlier (each attempt merges two), and guarded.
  TranslateOptions attempt = options;
  for (;;) {
    try {
      Translation t = translateOnce(trace, attempt);
      for (const SizeRelation &r : attempt.sameSizes)
        t.guards.push_back({Guard::Kind::Relation, sizeExpression(trace, r.merged),
                            "== " + sizeExpression(trace, r.kept), r.loc});
      for (const SizeMultiple &m : attempt.sizeMultiples)
        t.guards.push_back({Guard::Kind::Batch, sizeExpression(trace, m.name),
                            "% " + std::to_string(m.factor) + " == 0", m.loc});
      return t;
    } catch (const SizeSplits &e) {
      // T // 2 as a size: T a multiple of 2 (T is 2*s1 from its inputs on), guarded.
      if (e.multiple.factor < 2 || attempt.sizeMultiples.size() >= 16)
        throw CodedError(e.code(), e.what());
      auto same = std::find_if(attempt.sizeMultiples.begin(), attempt.sizeMultiples.end(),
                               [&](const SizeMultiple &m) { return m.name == e.multiple.name; });
      if (same == attempt.sizeMultiples.end())
        attempt.sizeMultiples.push_back(e.multiple);
      else
        same->factor *= e.multiple.factor;
    } catch (const SizesMet &e) {
      if (e.relation.kept == e.relation.merged ||
          attempt.sameSizes.size() >= static_cast<size_t>(ops::kMaxSymbols))
        throw CodedError(e.code(), e.what());
      attempt.sameSizes.push_back(e.relation);
    }
  }
}

namespace {
Translation translateOnce(const trace::Trace &trace, const TranslateOptions &options) {
  VariableArena arena; // destroyed last: after the guards are built, it breaks the cycles
  Executor ex(trace, options);
  Translation t;
  t.entry = trace.code_objects(trace.functions(trace.entry_function()).code()).qualname();
  struct Pending {
    ExecState state;
    int segment;
  };
  std::deque<Pending> work;
  std::map<std::string, int> bySignature;
  auto segmentFor = [&](ExecState state, const SourceLoc &loc) {
    std::string sig = Executor::signature(state);
    auto it = bySignature.find(sig);
    if (it != bySignature.end())
      return it->second;
    if (static_cast<int>(t.segments.size()) >= options.maxSegments)
      throw CodedError(DiagCode::FrontendSegmentLimit, "graph breaks produced more than " +
                                                           std::to_string(options.maxSegments) +
                                                           " segments (" + loc.str() + ")");
    int id = static_cast<int>(t.segments.size());
    t.segments.emplace_back();
    t.segments[id].sir.name = "SIR_" + std::to_string(id);
    t.segments[id].sir.inputs = Executor::liveTensors(state);
    bySignature[sig] = id;
    work.push_back({std::move(state), id});
    return id;
  };
  segmentFor(ex.start(), {});
  t.parameters = ex.parameters();

  // A Python value computed from the inputs is part of what the caller sees (a result, a side
  // effect, an exception's message): guard what it read.
  std::function<void(const VarPtr &)> consumeComputed = [&](const VarPtr &v) {
    ex.usesUnsupported(v); // returned: a refused operator's result is used
    if (v->isConstant() && v->tracker.kind == Tracker::Kind::Computed)
      ex.consume(
          v, {trace.code_objects(trace.functions(trace.entry_function()).code()).filename(), 0});
    for (const VarPtr &i : v->items)
      consumeComputed(i);
  };

  // `first`'s tensors, then every other live tensor of `state`, leave the segment's subgraph.
  auto leaveWith = [](Segment &seg, const std::vector<VarPtr> &first, const ExecState &state) {
    std::set<const Variable *> seen;
    for (const VarPtr &v : first)
      collectTensors(v, seg.sir.outputs, seen);
    for (const VarPtr &v : Executor::liveTensors(state))
      if (seen.insert(v.get()).second)
        seg.sir.outputs.push_back(v);
  };
  // The one segment after a call that ended this one (a host callback's, a count's): it starts
  // with the call's result on the stack; its inputs are passed the live tensors, or what
  // `passedAs` names for them.
  auto continueAfter = [&](const Pending &p, const Break &b,
                           const std::map<const Variable *, VarPtr> &passedAs) {
    ExecState after = Executor::clone(p.state);
    after.frames.back().stack.push_back(b.result);
    std::vector<VarPtr> args = Executor::liveTensors(after);
    for (VarPtr &a : args)
      if (auto it = passedAs.find(a.get()); it != passedAs.end())
        a = it->second;
    t.segments[p.segment].nextArgs = args;
    int nextId = segmentFor(std::move(after), b.loc);
    t.segments[p.segment].next = nextId;
  };

  while (!work.empty()) {
    Pending p = std::move(work.front());
    work.pop_front();
    std::optional<Break> ran;
    try {
      ran = ex.run(p.state, t.segments[p.segment].sir);
    } catch (const PythonException &e) {
      // The program's own `raise`, uncaught, on a side that a tensor's value chose: the run
      // raises it there, as the program would. Elsewhere it raises for every input the guards
      // admit, which is an error now.
      if (p.segment == 0 || e.exception->raisedAt.file.empty()) {
        ex.reportUnsupported();
        throw;
      }
      Segment &seg = t.segments[p.segment];
      seg.end = Segment::End::Raise;
      seg.sir.statements.clear(); // nothing they computed is seen
      seg.exceptionType = e.exception->exceptionType;
      seg.exceptionClass = e.exception->classIndex >= 0
                               ? trace.classes(e.exception->classIndex).qualname()
                               : e.exception->exceptionType;
      seg.exceptionMessage = e.exception->str();
      seg.endLoc = e.exception->raisedAt;
      consumeComputed(e.exception);
      continue;
    } catch (const CodedError &) {
      ex.reportUnsupported(); // what failed may have been an unsupported call's result
      throw;
    }
    Break &b = *ran;
    if (b.kind == Break::Kind::None) {
      Segment &seg = t.segments[p.segment];
      seg.end = Segment::End::Return;
      std::set<const Variable *> seen;
      collectTensors(p.state.returnValue, seg.sir.outputs, seen);
      seg.returnValue = p.state.returnValue->repr();
      seg.result = p.state.returnValue;
      seg.sideEffects = ex.sideEffects(p.state);
      for (const SideEffect &e : seg.sideEffects)
        if (e.value)
          collectTensors(e.value, seg.sir.outputs, seen);
      consumeComputed(p.state.returnValue);
      for (const SideEffect &e : seg.sideEffects)
        if (e.value)
          consumeComputed(e.value);
      continue;
    }
    t.breaks.push_back(b.reason + " (" + b.loc.str() + ")");
    if (b.kind == Break::Kind::HostCallback) {
      // The callback's tensors and every live tensor leave the subgraph; the next segment
      // starts after the call with its result on the stack.
      Segment &seg = t.segments[p.segment];
      seg.end = Segment::End::HostCallback;
      seg.reason = b.reason;
      seg.endLoc = b.loc;
      seg.callee = b.callee;
      seg.callbackArgs = b.callbackArgs;
      seg.callbackKwargs = b.kwargNames;
      seg.callbackResult = b.result;
      leaveWith(seg, b.callbackArgs, p.state);
      continueAfter(p, b, {});
      continue;
    }
    if (b.kind == Break::Kind::Size) {
      // The count and the bounded tensors leave the subgraph with every live tensor; the
      // next segment starts after the call, its result made of their first s_k rows.
      ex.consume(b.count, b.loc);
      Segment &seg = t.segments[p.segment];
      seg.end = Segment::End::Size;
      seg.reason = b.reason;
      seg.endLoc = b.loc;
      seg.sizeSymbol = b.symbol;
      seg.sizeBound = b.bound;
      std::vector<VarPtr> leaving = {b.count};
      leaving.insert(leaving.end(), b.bounded.begin(), b.bounded.end());
      // Tensors of the call's result that are no rows of the count (unique's inverse) were
      // made by the call: live only in its result, they leave too.
      std::vector<VarPtr> inResult;
      std::set<const Variable *> producedSet;
      for (const VarPtr &v : b.produced)
        producedSet.insert(v.get());
      collectTensors(b.result, inResult, producedSet);
      leaving.insert(leaving.end(), inResult.begin(), inResult.end());
      leaveWith(seg, leaving, p.state);
      // Each produced tensor is passed as the bounded one it is the first rows of.
      std::map<const Variable *, VarPtr> passedAs;
      for (size_t i = 0; i < b.produced.size(); ++i)
        passedAs[b.produced[i].get()] = b.bounded[i];
      continueAfter(p, b, passedAs);
      continue;
    }
    // A branch on a tensor: the condition and every live tensor leave the subgraph.
    ex.consume(b.condition, b.loc);
    // A bool read by x.item() is a constant on each side (LED tests one in every layer).
    auto constantOn = [&](bool side) {
      return b.decided ? Variable::constant_(PyConst::ofBool(side), computedFrom({b.condition}))
                       : nullptr;
    };
    ExecState onTrue = Executor::clone(p.state, b.decided, constantOn(true));
    ExecState onFalse = Executor::clone(p.state, b.decided, constantOn(false));
    onTrue.frames.back().pc = b.targetIfTrue;
    onFalse.frames.back().pc = b.targetIfFalse;
    if (b.popOnTrue)
      onTrue.frames.back().stack.pop_back();
    if (b.popOnFalse)
      onFalse.frames.back().stack.pop_back();
    if (b.pushOnTrue)
      onTrue.frames.back().stack.push_back(b.pushOnTrue);
    if (b.pushOnFalse)
      onFalse.frames.back().stack.push_back(b.pushOnFalse);
    {
      Segment &seg = t.segments[p.segment];
      seg.end = Segment::End::Branch;
      seg.reason = b.reason;
      seg.endLoc = b.loc;
      seg.sir.outputs.push_back(b.condition);
      for (const VarPtr &v : Executor::liveTensors(p.state))
        if (v != b.condition)
          seg.sir.outputs.push_back(v);
    }
    t.segments[p.segment].trueArgs = Executor::liveTensors(onTrue);
    t.segments[p.segment].falseArgs = Executor::liveTensors(onFalse);
    int trueId = segmentFor(std::move(onTrue), b.loc);
    int falseId = segmentFor(std::move(onFalse), b.loc);
    t.segments[p.segment].onTrue = trueId;
    t.segments[p.segment].onFalse = falseId;
  }
  ex.reportUnsupported(); // every call sotc cannot compile, one line each

  // Guards: walk from what decided something back to what the frame can provide.
  const std::string &prefix = ex.framework();
  std::set<const Variable *> visited;
  std::set<std::string> expressions;
  std::function<void(const VarPtr &, const SourceLoc &)> guard = [&](const VarPtr &v,
                                                                     const SourceLoc &loc) {
    if (!v || !visited.insert(v.get()).second)
      return;
    if (!v->tracker.traceable()) {
      if (v->tracker.kind == Tracker::Kind::Computed)
        for (const VarPtr &in : v->tracker.inputs)
          guard(in, loc);
      return;
    }
    auto addFor = [&](const VarPtr &of, Guard::Kind kind, std::string expected) {
      std::string expr = of->tracker.expression();
      if (expressions.insert(expr + "|" + std::to_string(static_cast<int>(kind))).second)
        t.guards.push_back({kind, expr, std::move(expected), loc});
    };
    auto add = [&](Guard::Kind kind, std::string expected) {
      addFor(v, kind, std::move(expected));
    };
    // Reading an item is only safe once the container's type and length are known.
    std::vector<VarPtr> parents; // outermost first
    for (VarPtr p = v->tracker.kind == Tracker::Kind::GetItem ? v->tracker.parent : nullptr; p;
         p = p->tracker.kind == Tracker::Kind::GetItem ? p->tracker.parent : nullptr)
      parents.insert(parents.begin(), p);
    // A container's length as passed, not after the program appended to it.
    auto length = [](const VarPtr &c) {
      return std::to_string(c->tracedLength >= 0              ? static_cast<size_t>(c->tracedLength)
                            : c->kind == Variable::Kind::Dict ? c->keys.size()
                                                              : c->items.size());
    };
    for (const VarPtr &p : parents)
      if (p->isSequence() || p->kind == Variable::Kind::Dict) {
        addFor(p, Guard::Kind::Type, p->typeName());
        addFor(p, Guard::Kind::Length, length(p));
      }
    switch (v->kind) {
    case Variable::Kind::Tensor: {
      std::string shape = "[";
      for (size_t i = 0; i < v->meta.shape.size(); ++i)
        shape += (i ? ", " : "") +
                 (ops::isSymbolDim(v->meta.shape[i]) || !ops::isDynamicDim(v->meta.shape[i])
                      ? std::to_string(v->meta.shape[i])
                      : ops::productOf(v->meta.shape[i]).text());
      add(Guard::Kind::TensorMeta, "(" + shape + "], " + prefix + "." +
                                       ops::dtypeName(v->meta.dtype) + ", " +
                                       (v->stopGradient ? "True" : "False") + ")");
      break;
    }
    case Variable::Kind::Constant:
      add(Guard::Kind::Equal, v->constant.repr());
      break;
    case Variable::Kind::Range: // its repr is its value: range(0, 3)
      add(Guard::Kind::Equal, v->repr());
      break;
    case Variable::Kind::Object: // its class decides its methods: type(obj).__name__
      add(Guard::Kind::Type, v->name.substr(v->name.rfind('.') + 1));
      break;
    case Variable::Kind::Tuple:
    case Variable::Kind::List:
    case Variable::Kind::Dict:
      add(Guard::Kind::Type, v->typeName());
      add(Guard::Kind::Length, length(v));
      // A dict the program read as a whole (a lookup that missed, `in`, iteration) depends
      // on its keys, not only on their number: those it holds now, unless the program
      // changed how many (then only the number as passed is known).
      if (v->kind == Variable::Kind::Dict &&
          v->tracedLength == static_cast<int64_t>(v->keys.size())) {
        std::string keys = "[";
        for (size_t i = 0; i < v->keys.size(); ++i)
          keys += (i ? ", " : "") + v->keys[i]->repr();
        add(Guard::Kind::Keys, keys + "]");
      }
      break;
    default:
      break; // functions and modules: identity is not checked
    }
  };
  for (const auto &[v, loc] : ex.consumed())
    guard(v, loc);
  // Decisions on a dynamic size: read from the first parameter that has it, as that
  // dimension's size (`>= 3` of s1 is `>= 6` of a dimension of 2*s1).
  for (const Executor::SizeGuard &g : ex.batchGuards())
    for (const VarPtr &p : ex.parameters()) {
      const std::vector<int64_t> &shape = p->isTensor() ? p->meta.shape : std::vector<int64_t>{};
      auto d = std::find_if(shape.begin(), shape.end(), [&](int64_t dim) {
        ops::SizeProduct one = ops::productOf(dim);
        one.factor = 1;
        return ops::isDynamicDim(dim) && ops::productDim(one) == ops::dynamicDim(g.symbol);
      });
      if (d != shape.end()) {
        size_t space = g.expected.find(' ');
        int64_t times = ops::productOf(*d).factor;
        t.guards.push_back(
            {Guard::Kind::Batch,
             p->tracker.expression() + ".shape[" + std::to_string(d - shape.begin()) + "]",
             g.expected.substr(0, space + 1) +
                 std::to_string(std::stoll(g.expected.substr(space + 1)) * times),
             g.loc});
        break;
      }
    }
  t.sizeMax = ex.sizeMax();
  t.derivedSizes = ex.derivedSizes().sizes();
  t.producedSizes = ex.derivedSizes().producedSizes();
  return t;
}
} // namespace

} // namespace sotc::frontend
