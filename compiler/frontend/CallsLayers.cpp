// Calling a model's layers: a layer whose class (or a base before any layer-table leaf) has
// a forward runs it, the user's and a library's alike (torchvision's ResNet); a leaf
// (paddle.nn.Linear, torch.nn.GELU, Sequential) is the operator call the layer table
// (compiler/ops/LayerTable.h) gives for its class, with the layer's attributes as arguments,
// or, for a composite entry (multi-head attention, paddle's BatchNorm), the calls its forward
// makes. Layer containers (ModuleList, LayerList,
// Sequential) index and iterate over their sublayers; ModuleDict and LayerDict index by name
// and iterate over their names.
#include "compiler/frontend/Calls.h"
#include "compiler/ops/LayerTable.h"
#include "compiler/ops/OpTable.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace sotc::frontend {
namespace {
using K = Variable::Kind;

/// The value of a layer table literal: True, False, None, a number or a quoted string.
VarPtr literal(const std::string &text) {
  if (text == "True" || text == "False")
    return Variable::constant_(PyConst::ofBool(text == "True"), constTracker());
  if (text == "None")
    return Variable::constant_(PyConst::none(), constTracker());
  if (text.size() >= 2 && (text[0] == '\'' || text[0] == '"'))
    return Variable::constant_(PyConst::ofStr(text.substr(1, text.size() - 2)), constTracker());
  if (text.find_first_of(".e") != std::string::npos)
    return Variable::constant_(PyConst::ofFloat(std::strtod(text.c_str(), nullptr)),
                               constTracker());
  return Variable::constant_(PyConst::ofInt(std::strtoll(text.c_str(), nullptr, 10)),
                             constTracker());
}
} // namespace

const ops::LayerEntry *Executor::layerEntry(const VarPtr &layer) const {
  for (uint32_t c : trace_.classes(layer->classIndex).mro())
    if (const std::string &name = trace_.classes(c).library_name(); !name.empty())
      if (const ops::LayerEntry *entry = ops::lookupLayer(name))
        return entry;
  return nullptr;
}

bool Executor::isLayerDict(const VarPtr &layer) const {
  const ops::LayerEntry *entry = layerEntry(layer);
  return entry && entry->kind == ops::LayerEntry::Kind::Dict;
}

std::vector<VarPtr> Executor::sublayers(Frame &f, const VarPtr &layer) {
  const ops::LayerEntry *entry = layerEntry(layer);
  using LK = ops::LayerEntry::Kind;
  if (!entry || (entry->kind != LK::List && entry->kind != LK::Sequence && entry->kind != LK::Dict))
    fail(DiagCode::FrontendPythonError,
         "TypeError: '" + layer->name + "' object is not iterable or subscriptable", f);
  return childLayers(layer);
}

std::vector<VarPtr> Executor::childLayers(const VarPtr &layer) {
  std::vector<VarPtr> out;
  for (const std::string &child : layer->children)
    for (size_t i = 0; i < layer->keys.size(); ++i)
      if (layer->keys[i]->constant.text == child)
        out.push_back(layer->items[i]);
  return out;
}

VarPtr Executor::layerWalk(const VarPtr &layer, const std::string &what) {
  std::vector<std::pair<std::string, VarPtr>> modules;
  std::set<const Variable *> seen;
  std::function<void(const VarPtr &, const std::string &)> visit = [&](const VarPtr &m,
                                                                       const std::string &prefix) {
    if (!seen.insert(m.get()).second)
      return;
    modules.push_back({prefix, m});
    for (const std::string &child : m->children)
      for (size_t i = 0; i < m->keys.size(); ++i)
        if (m->keys[i]->constant.text == child && m->items[i]->kind == K::Object)
          visit(m->items[i], prefix.empty() ? child : prefix + "." + child);
  };
  visit(layer, "");
  VarPtr dict = Variable::make(K::Dict, computedFrom({layer}));
  auto add = [&](const std::string &name, const VarPtr &v) {
    dict->keys.push_back(makeConst(PyConst::ofStr(name), {layer}));
    dict->items.push_back(v);
  };
  bool wantModules = what == "modules" || what == "named_modules";
  bool wantBuffers = what == "buffers" || what == "named_buffers";
  for (const auto &[prefix, m] : modules) {
    if (wantModules) {
      add(prefix, m);
      continue;
    }
    for (size_t i = 0; i < m->keys.size(); ++i) {
      const VarPtr &v = m->items[i];
      if (v->isTensor() && !v->weight.empty() && buffers_.count(v->weight) == wantBuffers &&
          seen.insert(v.get()).second)
        add(prefix.empty() ? m->keys[i]->constant.text : prefix + "." + m->keys[i]->constant.text,
            v);
    }
  }
  return dict;
}

VarPtr Executor::constructibleLayerClass(const std::string &publicName) const {
  for (int c = 0; c < trace_.classes_size(); ++c) {
    const trace::ClassDef &def = trace_.classes(c);
    if (def.library_name() != publicName || !def.has_layer_constructor())
      continue;
    VarPtr cls = Variable::make(K::Class, constTracker());
    cls->classIndex = c;
    cls->name = def.qualname();
    return cls;
  }
  return nullptr;
}

VarPtr Executor::constructLayer(ExecState &state, const VarPtr &cls, std::vector<VarPtr> args,
                                Kwargs kwargs) {
  const trace::ClassDef &def = trace_.classes(cls->classIndex);
  VarPtr layer = Variable::make(K::Object, computedFrom(args));
  layer->classIndex = cls->classIndex;
  layer->name = def.qualname();
  layer->layer = true;
  layer->madeHere = true;
  const ops::LayerEntry *entry = layerEntry(layer);
  const std::string &className = def.library_name();
  auto refuse = [&](const std::string &why) {
    fail(DiagCode::FrontendUnsupportedConstruct,
         "constructing a " + className + " inside the traced code " + why +
             " (construct it in the model's __init__)",
         state.frames.back());
  };
  using LK = ops::LayerEntry::Kind;
  if (!entry || (entry->kind != LK::Call && entry->kind != LK::Identity))
    refuse("is not supported: it holds other layers");
  // The constructor's parameters, bound as Python binds them: its frame is pushed and popped,
  // never run.
  VarPtr init = fromTrace(def.layer_constructor(), constTracker());
  if (init->kind != K::Function)
    refuse("is not supported: its constructor was not recorded as a function");
  args.insert(args.begin(), layer);
  pushFrame(state, init, std::move(args), std::move(kwargs));
  Frame bound = std::move(state.frames.back());
  state.frames.pop_back();
  auto find = [&](const std::string &name) -> VarPtr {
    for (size_t i = 0; i < layer->keys.size(); ++i)
      if (layer->keys[i]->constant.text == name)
        return layer->items[i];
    return nullptr;
  };
  auto set = [&](const std::string &name, VarPtr value) {
    layer->keys.push_back(Variable::constant_(PyConst::ofStr(name), constTracker()));
    layer->items.push_back(std::move(value));
  };
  const trace::CodeObject &co = trace_.code_objects(init->codeIndex);
  for (size_t i = 1; i < co.argcount() + co.kwonlyargcount(); ++i)
    set(co.varnames(i), bound.localsplus[i]);
  set("training", Variable::constant_(PyConst::ofBool(true), constTracker())); // a new layer's
  // What the entry reads: parameters, under paddle's names for them (axis as ._axis); a
  // weight the constructor would draw anew at every call is refused.
  for (const ops::LayerArg &a : entry->args) {
    if (a.source != ops::LayerArg::Source::Attribute && a.source != ops::LayerArg::Source::Required)
      continue;
    const std::string &name = a.source == ops::LayerArg::Source::Required ? a.keyword : a.text;
    if (find(name))
      continue;
    if (VarPtr plain = name[0] == '_' ? find(name.substr(1)) : nullptr)
      set(name, plain);
    else
      refuse("is not supported: its ." + name + " would be made anew at every call");
  }
  return layer;
}

bool Executor::isLayerClass(int classIndex) const {
  if (classIndex < 0)
    return false;
  const auto &mro = trace_.classes(classIndex).mro();
  return std::any_of(mro.begin(), mro.end(), [&](uint32_t c) {
    const std::string &name = trace_.classes(c).library_name();
    return name == "torch.nn.Module" || name == "paddle.nn.Layer";
  });
}

void Executor::callHookedLayer(ExecState &state, StatementIR &sir, const VarPtr &layer,
                               std::vector<VarPtr> args, Kwargs kwargs) {
  // Hooks change what a layer's call computes (transformers' hidden-state capture, a user's
  // output scaling): running the forward without them would be a different program.
  if (layer->forwardHooks.empty())
    fail(DiagCode::FrontendUnsupportedConstruct,
         "calling a " + layer->typeName() + " that has " + layer->hooks.front() +
             " hooks registered, which the trace does not hold (trace it again with this "
             "sotc)",
         state.frames.back());
  auto isNone = [](const VarPtr &v) {
    return v->isConstant() && v->constant.kind == PyConst::Kind::None;
  };
  auto keywords = [&]() {
    VarPtr d = Variable::make(K::Dict, computedFrom({}));
    for (const auto &[name, value] : kwargs) {
      d->keys.push_back(makeConst(PyConst::ofStr(name), {}));
      d->items.push_back(value);
    }
    return d;
  };
  auto withKeywords = [&](const Variable::ForwardHook &h, std::vector<VarPtr> call) {
    if (h.withKwargs)
      call.insert(call.begin() + 2, keywords());
    return call;
  };
  const char *what = "a layer with hooks (its pre-hooks, forward or forward hooks)";
  for (const Variable::ForwardHook &h : layer->forwardHooks) {
    if (h.after)
      continue;
    VarPtr got = callNow(state, sir, h.function,
                         withKeywords(h, {layer, makeSequence(K::Tuple, args, {})}), {});
    if (isNone(got))
      continue;
    if (!h.withKwargs) { // new positional arguments: a tuple, or the one argument
      args = got->kind == K::Tuple ? got->items : std::vector<VarPtr>{got};
      continue;
    }
    if (got->kind != K::Tuple || got->items.size() != 2 || got->items[1]->kind != K::Dict ||
        !got->items[0]->isSequence())
      fail(DiagCode::FrontendPythonError,
           "RuntimeError: forward pre-hook must return None or a tuple of (new_args, "
           "new_kwargs)",
           state.frames.back());
    args = got->items[0]->items;
    kwargs.clear();
    for (size_t i = 0; i < got->items[1]->keys.size(); ++i)
      kwargs.push_back({got->items[1]->keys[i]->constant.text, got->items[1]->items[i]});
  }
  size_t depth = state.frames.size();
  {
    HandlerFloor floor(handlerFloor_, depth);
    callLayer(state, sir, layer, args, kwargs);
    runNested(state, sir, depth, what);
  }
  VarPtr result = state.frames.back().stack.back();
  state.frames.back().stack.pop_back();
  for (const Variable::ForwardHook &h : layer->forwardHooks) {
    if (!h.after)
      continue;
    VarPtr got = callNow(state, sir, h.function,
                         withKeywords(h, {layer, makeSequence(K::Tuple, args, {}), result}), {});
    if (!isNone(got))
      result = got;
  }
  state.frames.back().stack.push_back(result);
}

void Executor::callLayer(ExecState &state, StatementIR &sir, const VarPtr &layer,
                         std::vector<VarPtr> args, Kwargs kwargs) {
  Frame &f = state.frames.back();
  SourceLoc loc = locOf(f);
  // Layer.__call__ runs the hooks (a traced model has none) and then self.forward: the
  // instance's own where it has one (timm's FasterNet sets self.forward =
  // self.forward_split_cat), else the first class of the MRO with a forward of its own or a
  // layer-table entry (a leaf's library bases have forwards too: torch.nn.BatchNorm2d's
  // _BatchNorm).
  for (size_t i = 0; i < layer->keys.size(); ++i)
    if (layer->keys[i]->isConstant() && layer->keys[i]->constant.text == "forward") {
      call(state, sir, layer->items[i], std::move(args), std::move(kwargs));
      return;
    }
  const ops::LayerEntry *entry = nullptr;
  for (uint32_t c : trace_.classes(layer->classIndex).mro()) {
    const trace::ClassDef &cls = trace_.classes(c);
    if (std::any_of(cls.members().begin(), cls.members().end(),
                    [](const trace::ClassMember &m) { return m.name() == "forward"; })) {
      call(state, sir, classMember(layer, "forward", loc), std::move(args), std::move(kwargs));
      return;
    }
    if ((entry = ops::lookupLayer(cls.library_name())))
      break;
  }
  callLayerEntry(state, sir, layer, entry, std::move(args), std::move(kwargs));
}

void Executor::callLayerEntry(ExecState &state, StatementIR &sir, const VarPtr &layer,
                              const ops::LayerEntry *entry, std::vector<VarPtr> args,
                              Kwargs kwargs) {
  Frame &f = state.frames.back();
  SourceLoc loc = locOf(f);
  const std::string &className = trace_.classes(layer->classIndex).library_name().empty()
                                     ? layer->name
                                     : trace_.classes(layer->classIndex).library_name();
  if (!entry)
    fail(DiagCode::FrontendUnsupportedCall,
         "cannot compile a call to the layer " + className +
             ": it has no forward of its own and its class is not in the layer table "
             "(docs/models.md lists the built-in layers sotc compiles)",
         f);
  if (entry->kind == ops::LayerEntry::Kind::List)
    fail(DiagCode::FrontendPythonError,
         "TypeError: a " + className + " is not callable (call the layers it holds)", f);
  if (entry->kind == ops::LayerEntry::Kind::Composite) {
    const std::string &name = entry->className;
    bool recurrent = name.find("LSTM") != std::string::npos ||
                     name.find("GRU") != std::string::npos || name.find("RNN") != std::string::npos;
    VarPtr result =
        name == "paddle.nn.BatchNorm"
            ? activatedBatchNorm(state, sir, layer, std::move(args), std::move(kwargs))
        : recurrent
            ? recurrentLayer(state, sir, layer, name, std::move(args), std::move(kwargs))
            : multiHeadAttention(state, sir, layer, name, std::move(args), std::move(kwargs));
    state.frames.back().stack.push_back(result);
    return;
  }
  if (args.size() != 1 || !kwargs.empty())
    fail(DiagCode::FrontendUnsupportedCall,
         "the built-in layer " + className + " is called with one tensor here, not " +
             std::to_string(args.size()) + " arguments" +
             (kwargs.empty() ? "" : " and keywords"),
         f);
  VarPtr input = args[0];
  switch (entry->kind) {
  case ops::LayerEntry::Kind::Identity:
    state.frames.back().stack.push_back(input);
    return;
  case ops::LayerEntry::Kind::Sequence:
    for (const VarPtr &child : sublayers(f, layer))
      input = callNow(state, sir, child, {input}, {});
    state.frames.back().stack.push_back(input);
    return;
  default:
    break;
  }
  std::vector<VarPtr> callArgs;
  Kwargs callKwargs;
  for (const ops::LayerArg &a : entry->args) {
    if (a.source == ops::LayerArg::Source::Required) {
      VarPtr have = getAttr(f, sir, layer, a.keyword), want = literal(a.text);
      consume(have, loc);
      if (!have->isConstant() || !(have->constant == want->constant))
        fail(DiagCode::FrontendUnsupportedCall,
             "the layer " + className + " with " + a.keyword + "=" + have->repr() +
                 " is not supported (only " + a.keyword + "=" + a.text + ")",
             f);
      continue;
    }
    VarPtr value = a.source == ops::LayerArg::Source::Input ? input
                   : a.source == ops::LayerArg::Source::Literal
                       ? literal(a.text)
                       : getAttr(f, sir, layer, a.text);
    if (a.keyword.empty())
      callArgs.push_back(value);
    else
      callKwargs.push_back({a.keyword, value});
  }
  VarPtr callee = Variable::make(K::External, constTracker());
  callee->name = entry->callee;
  call(state, sir, callee, std::move(callArgs), std::move(callKwargs));
}

VarPtr Executor::activatedBatchNorm(ExecState &state, StatementIR &sir, const VarPtr &layer,
                                    std::vector<VarPtr> args, Kwargs kwargs) {
  // paddle.nn.BatchNorm (the fluid-era layer): batch_norm, then the activation `act` names.
  Frame &f = state.frames.back();
  if (args.size() != 1 || !kwargs.empty())
    fail(DiagCode::FrontendPythonError, "TypeError: paddle.nn.BatchNorm.forward takes one input",
         f);
  auto attr = [&](const std::string &name) { return getAttr(f, sir, layer, name); };
  VarPtr y = tensorCall(f, sir, "api", "paddle.nn.functional.batch_norm",
                        "paddle.nn.functional.batch_norm",
                        {args[0], attr("_mean"), attr("_variance"), attr("weight"), attr("bias")},
                        {{"training", attr("training")},
                         {"epsilon", attr("_epsilon")},
                         {"data_format", attr("_data_layout")},
                         {"use_global_stats", attr("_use_global_stats")}});
  VarPtr act = attr("_act");
  consume(act, locOf(f));
  if (act->isConstant() && act->constant.kind == PyConst::Kind::None)
    return y;
  std::string activation = "paddle.nn.functional." + (act->isConstant() ? act->constant.text : "");
  if (!act->isConstant() || act->constant.kind != PyConst::Kind::Str ||
      !ops::OpTable::get().lookup(activation))
    fail(DiagCode::FrontendUnsupportedCall,
         "paddle.nn.BatchNorm with act=" + act->repr() + " is not supported", f);
  return tensorCall(f, sir, "api", activation, activation, {y}, {});
}

VarPtr Executor::multiHeadAttention(ExecState &state, StatementIR &sir, const VarPtr &layer,
                                    const std::string &className, std::vector<VarPtr> args,
                                    Kwargs kwargs) {
  Frame &f = state.frames.back();
  bool torch = className.rfind("torch.", 0) == 0;
  // forward's parameters, bound as Python binds them (None where not given).
  std::vector<std::string> names =
      torch ? std::vector<std::string>{"query", "key", "value", "key_padding_mask", "need_weights",
                                       "attn_mask", "average_attn_weights", "is_causal"}
            : std::vector<std::string>{"query", "key", "value", "attn_mask", "cache"};
  std::map<std::string, VarPtr> bound;
  if (args.size() > names.size())
    fail(DiagCode::FrontendPythonError,
         "TypeError: " + className + ".forward takes " + std::to_string(names.size()) +
             " arguments, " + std::to_string(args.size()) + " given",
         f);
  for (size_t i = 0; i < args.size(); ++i)
    bound[names[i]] = args[i];
  for (auto &[name, value] : kwargs) {
    if (std::find(names.begin(), names.end(), name) == names.end() || bound.count(name))
      fail(DiagCode::FrontendPythonError,
           "TypeError: " + className + ".forward got an unexpected or repeated argument '" +
               name + "'",
           f);
    bound[name] = value;
  }
  auto given = [&](const std::string &name) {
    auto it = bound.find(name);
    return it != bound.end() && !(it->second->isConstant() &&
                                  it->second->constant.kind == PyConst::Kind::None);
  };
  auto flag = [&](const std::string &name, bool dflt) {
    if (!given(name))
      return dflt;
    consume(bound[name], locOf(f));
    return truthy(f, bound[name]);
  };
  auto attr = [&](const std::string &name) { return getAttr(f, sir, layer, name); };
  auto integer = [&](const std::string &name) {
    VarPtr v = attr(name);
    if (!isInt(v))
      fail(DiagCode::FrontendUnsupportedCall, className + "." + name + " is not an int", f);
    return v->constant.intValue;
  };
  auto unsupported = [&](const std::string &what) {
    fail(DiagCode::FrontendUnsupportedCall, "the layer " + className + " with " + what +
                                                " is not supported yet",
         f);
  };
  std::string api = torch ? "torch." : "paddle.";
  auto op = [&](const std::string &name, std::vector<VarPtr> a, Kwargs kw = {}) {
    return tensorCall(f, sir, "api", name, name, std::move(a), std::move(kw));
  };
  auto num = [](int64_t v) { return makeConst(PyConst::ofInt(v), {}); };
  auto ints = [&](std::vector<int64_t> v) {
    std::vector<VarPtr> items;
    for (int64_t i : v)
      items.push_back(num(i));
    return makeSequence(K::List, items, {});
  };
  VarPtr query = bound.at("query");
  VarPtr key = given("key") ? bound.at("key") : query, value = given("value") ? bound.at("value") : key;
  if (!query->isTensor() || !key->isTensor() || !value->isTensor() || query->meta.rank() != 3)
    unsupported("inputs that are not [batch, seq, embed] tensors");
  if (!torch && given("cache"))
    unsupported("a cache");
  // torch's is_causal is a hint that attn_mask is causal: the mask is what is applied.
  if (torch && flag("is_causal", false) && !given("attn_mask"))
    fail(DiagCode::FrontendPythonError,
         "RuntimeError: Need attn_mask if specifying the is_causal hint", f);
  int64_t heads = integer("num_heads"), embed = integer("embed_dim");
  int64_t headDim = embed / heads;
  bool batchFirst = !torch || truthy(f, attr("batch_first"));
  auto swap01 = [&](VarPtr x) {
    return op("torch.transpose", {x, num(0), num(1)});
  };
  if (!batchFirst) // torch's default layout is [seq, batch, embed]
    query = swap01(query), key = swap01(key), value = swap01(value);
  // Projections: torch packs them in in_proj_weight ([3E, E], q k v), paddle has sublayers.
  VarPtr q, k, v;
  if (torch) {
    if (!truthy(f, attr("_qkv_same_embed_dim")) || !attr("bias_k")->isConstant() ||
        truthy(f, attr("add_zero_attn")))
      unsupported("separate key/value dimensions, bias_k/bias_v or add_zero_attn");
    VarPtr w = attr("in_proj_weight"), b = attr("in_proj_bias");
    auto part = [&](const VarPtr &t, int64_t i) {
      VarPtr s = Variable::make(K::Slice, constTracker());
      s->items = {num(i * embed), num((i + 1) * embed), Variable::constant_(PyConst::none())};
      return tensorCall(f, sir, "operator", "__getitem__", "__getitem__", {t, s}, {});
    };
    auto project = [&](const VarPtr &x, int64_t i) {
      return op("torch.nn.functional.linear",
                {x, part(w, i), b->isTensor() ? part(b, i) : Variable::constant_(PyConst::none())});
    };
    q = project(query, 0), k = project(key, 1), v = project(value, 2);
  } else {
    q = callNow(state, sir, attr("q_proj"), {query}, {});
    k = callNow(state, sir, attr("k_proj"), {key}, {});
    v = callNow(state, sir, attr("v_proj"), {value}, {});
  }
  // [batch, seq, embed] -> [batch, heads, seq, head_dim]
  auto split = [&](const VarPtr &x) {
    VarPtr r = op(api + "reshape", {x, ints({x->meta.shape[0], x->meta.shape[1], heads, headDim})});
    return torch ? op("torch.permute", {r, ints({0, 2, 1, 3})})
                 : op("paddle.transpose", {r, ints({0, 2, 1, 3})});
  };
  q = split(q), k = split(k), v = split(v);
  VarPtr scores = op(api + "matmul", {q, op(api + "transpose", torch ? std::vector<VarPtr>{k, num(-2), num(-1)}
                                                                      : std::vector<VarPtr>{k, ints({0, 1, 3, 2})})});
  scores = op(torch ? "torch.mul" : "paddle.multiply",
              {scores, makeConst(PyConst::ofFloat(1.0 / std::sqrt(double(headDim))), {})});
  // A mask over [.., seq, key] scores: bool (torch: true is masked out; paddle: kept) or
  // added (float).
  auto masked = [&](VarPtr scores, VarPtr mask) {
    if (!mask->isTensor())
      unsupported("a mask that is not a tensor");
    if (mask->meta.dtype == ops::DType::Bool)
      return op(api + "where", {torch ? op("torch.logical_not", {mask}) : mask, scores,
                                makeConst(PyConst::ofFloat(-INFINITY), {})});
    if (!ops::isFloating(mask->meta.dtype))
      unsupported("an integer mask");
    return op(torch ? "torch.add" : "paddle.add", {scores, mask});
  };
  if (given("attn_mask"))
    scores = masked(scores, bound.at("attn_mask"));
  if (torch && given("key_padding_mask")) { // [batch, key]: the same keys for every query
    VarPtr padding = bound.at("key_padding_mask");
    if (!padding->isTensor() || padding->meta.rank() != 2)
      unsupported("a key_padding_mask that is not a [batch, key] tensor");
    scores = masked(scores, op("torch.reshape", {padding, ints({padding->meta.shape[0], 1, 1,
                                                               padding->meta.shape[1]})}));
  }
  VarPtr probs = torch ? op("torch.nn.functional.softmax", {scores}, {{"dim", num(-1)}})
                       : op("paddle.nn.functional.softmax", {scores}, {{"axis", num(-1)}});
  VarPtr out = op(api + "matmul", {probs, v});
  out = torch ? op("torch.permute", {out, ints({0, 2, 1, 3})})
              : op("paddle.transpose", {out, ints({0, 2, 1, 3})});
  out = op(api + "reshape", {out, ints({out->meta.shape[0], out->meta.shape[1], embed})});
  out = callNow(state, sir, attr("out_proj"), {out}, {});
  if (!batchFirst)
    out = swap01(out);
  bool needWeights = torch ? flag("need_weights", true) : truthy(f, attr("need_weights"));
  if (!needWeights)
    return torch ? makeSequence(K::Tuple, {out, Variable::constant_(PyConst::none())}, {}) : out;
  VarPtr weights = probs;
  if (torch && flag("average_attn_weights", true))
    weights = op("torch.mean", {probs}, {{"dim", num(1)}});
  return makeSequence(K::Tuple, {out, weights}, {});
}

} // namespace sotc::frontend
