// Calling a model's layers: a user layer runs its forward; a built-in one (paddle.nn.Linear,
// torch.nn.GELU, Sequential) is the operator call the layer table (compiler/ops/LayerTable.h)
// gives for its class, with the layer's attributes as arguments. Layer containers (ModuleList,
// LayerList, Sequential) index and iterate over their sublayers.
#include "compiler/frontend/Calls.h"
#include "compiler/ops/LayerTable.h"

#include <cstdlib>

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

std::vector<VarPtr> Executor::sublayers(Frame &f, const VarPtr &layer) {
  const ops::LayerEntry *entry = layerEntry(layer);
  if (!entry ||
      (entry->kind != ops::LayerEntry::Kind::List && entry->kind != ops::LayerEntry::Kind::Sequence))
    fail(DiagCode::FrontendPythonError,
         "TypeError: '" + layer->name + "' object is not iterable or subscriptable", f);
  std::vector<VarPtr> out;
  for (const std::string &child : layer->children)
    for (size_t i = 0; i < layer->keys.size(); ++i)
      if (layer->keys[i]->constant.text == child)
        out.push_back(layer->items[i]);
  return out;
}

void Executor::callLayer(ExecState &state, StatementIR &sir, const VarPtr &layer,
                         std::vector<VarPtr> args, Kwargs kwargs) {
  Frame &f = state.frames.back();
  SourceLoc loc = locOf(f);
  // Layer.__call__ runs the hooks (a traced model has none) and then forward.
  if (VarPtr forward = classMember(layer, "forward", loc)) {
    call(state, sir, forward, std::move(args), std::move(kwargs));
    return;
  }
  const ops::LayerEntry *entry = layerEntry(layer);
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

} // namespace sotc::frontend
