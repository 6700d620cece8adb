//===- AutogradFunctions.cpp - Custom operators: torch.autograd.Function, PyLayer -------===//
//
// Model code defines operators of its own as subclasses of torch.autograd.Function (Bloom's
// GeLUFunction) or paddle.autograd.PyLayer and calls them as `Op.apply(x)`. What the compiled
// function computes is the static `forward(ctx, *args)`; the context records what backward
// would need, which inference never runs, so its recording methods do nothing (but for
// paddle's saved_tensor(), which reads back in forward what it saved). A torch
// subclass with its own `setup_context` has a forward without the context.
//
//===--------------------------------------------------------------------------------------===//

#include "compiler/frontend/Calls.h"
#include "compiler/frontend/Executor.h"

namespace sotc::frontend {

using K = Variable::Kind;

namespace {
constexpr const char *kApply = "autograd apply";
constexpr const char *kContext = "autograd context";
constexpr const char *kContextMethod = "autograd context.";
// The context's methods that record for backward: nothing to compile.
const std::set<std::string> kRecordingMethods = {
    "save_for_backward",       "save_for_forward",      "mark_dirty",
    "mark_non_differentiable", "set_materialize_grads", "mark_not_inplace"};
} // namespace

bool Executor::isAutogradFunction(int classIndex) const {
  if (classIndex < 0)
    return false;
  for (uint32_t c : trace_.classes(classIndex).mro()) {
    const std::string &name = trace_.classes(c).library_name();
    if (name == "torch.autograd.Function" || name == "paddle.autograd.PyLayer")
      return true;
  }
  return false;
}

VarPtr Executor::autogradAttr(const VarPtr &obj, const std::string &name) {
  if (obj->kind == K::Class && name == "apply" && isAutogradFunction(obj->classIndex)) {
    VarPtr apply = Variable::make(K::Builtin, computedFrom({obj}));
    apply->name = kApply;
    apply->self = obj;
    return apply;
  }
  if (obj->kind != K::Object || obj->name != kContext)
    return nullptr;
  if (kRecordingMethods.count(name) || name == "saved_tensor") {
    VarPtr method = Variable::make(K::Builtin, computedFrom({obj}));
    method->name = kContextMethod + name;
    method->self = obj;
    return method;
  }
  return nullptr;
}

bool Executor::callAutograd(ExecState &state, const VarPtr &callable, std::vector<VarPtr> &args,
                            Kwargs &kwargs) {
  if (callable->kind != K::Builtin || !callable->self)
    return false;
  Frame &f = state.frames.back();
  SourceLoc loc = locOf(f);
  if (callable->name == kApply) {
    const VarPtr &cls = callable->self;
    VarPtr forward = classMember(cls, "forward", loc);
    if (!forward || forward->kind != K::Function)
      fail(DiagCode::FrontendUnsupportedConstruct,
           cls->name + ".apply: the class has no forward of its own to compile", f);
    if (!classMember(cls, "setup_context", loc)) {
      VarPtr context = Variable::make(K::Object, computedFrom({}));
      context->classIndex = cls->classIndex;
      context->name = kContext;
      context->madeHere = true;
      // Inference: no input needs a gradient (what forward may branch on).
      std::vector<VarPtr> needs;
      for (size_t i = 0; i < args.size(); ++i)
        needs.push_back(makeConst(PyConst::ofBool(false), {}));
      context->keys = {makeConst(PyConst::ofStr("needs_input_grad"), {}),
                       makeConst(PyConst::ofStr("saved_tensors"), {})};
      context->items = {makeSequence(K::Tuple, needs, {}), makeSequence(K::Tuple, {}, {})};
      args.insert(args.begin(), context);
    }
    pushFrame(state, forward, std::move(args), std::move(kwargs));
    return true;
  }
  if (callable->name.rfind(kContextMethod, 0) != 0)
    return false;
  const VarPtr &context = callable->self;
  std::string method = callable->name.substr(std::string(kContextMethod).size());
  // The context's keys are its attributes, the two it starts with always among them.
  VarPtr &saved = context->items[std::find_if(context->keys.begin(), context->keys.end(),
                                              [](const VarPtr &k) {
                                                return k->constant.text == "saved_tensors";
                                              }) -
                                 context->keys.begin()];
  if (method == "saved_tensor") { // paddle's: a list of what save_for_backward saved
    f.stack.push_back(makeSequence(K::List, saved->items, {context}));
    return true;
  }
  // What paddle's forward saved it reads back; torch's ctx.saved_tensors stays empty until
  // forward returns.
  if (method == "save_for_backward" && framework_ == "paddle")
    saved = makeSequence(K::Tuple, args, {context});
  f.stack.push_back(none());
  return true;
}

} // namespace sotc::frontend
