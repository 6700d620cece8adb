//===- Generators.cpp - Iterators pulled item by item, generators resumed -----------------===//
//
// A generator (a generator expression or a function with `yield`) is an Iterator holding its
// suspended frame. Each pull pushes the frame back onto the frame stack and steps it to its
// next yield, as CPython does: the body sees every effect its consumer had before the pull
// (`y.extend(m(y[-1]) for m in ms)` chains the layers through the growing list).
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Executor.h"

namespace sotc::frontend {

std::optional<VarPtr> Executor::nextItem(ExecState &state, StatementIR &sir, const VarPtr &it) {
  if (!it->generator && !it->name.empty()) { // enumerate/zip/map/filter over a generator
    if (it->name == "filter") {
      bool identity = it->self->isConstant() && it->self->constant.kind == PyConst::Kind::None;
      while (std::optional<VarPtr> item = nextItem(state, sir, it->items[0]))
        if (truthy(state.frames.back(),
                   identity ? *item : callNow(state, sir, it->self, {*item}, {})))
          return item;
      return std::nullopt;
    }
    std::vector<VarPtr> parts;
    if (it->name == "enumerate")
      parts.push_back(Variable::constant_(PyConst::ofInt(it->start++), computedFrom({it})));
    for (const VarPtr &source : it->items) {
      std::optional<VarPtr> item = nextItem(state, sir, source);
      if (!item)
        return std::nullopt;
      parts.push_back(*item);
    }
    if (it->name == "map")
      return callNow(state, sir, it->self, parts, {});
    VarPtr tuple = Variable::make(Variable::Kind::Tuple, computedFrom({it}));
    tuple->items = std::move(parts);
    return tuple;
  }
  if (!it->generator) {
    if (it->position < it->items.size())
      return it->items[it->position++];
    return std::nullopt;
  }
  if (!it->suspended) // returned, or running: next() of a generator inside its own body
    return std::nullopt;
  size_t depth = state.frames.size();
  // An exception the body does not handle ends the generator and reaches the consumer.
  HandlerFloor floor(handlerFloor_, depth);
  std::shared_ptr<Frame> frame = std::move(it->suspended);
  state.frames.push_back(std::move(*frame));
  runNested(state, sir, depth, "a generator's body");
  if (state.frames.size() == depth)
    return std::nullopt; // it returned
  Frame &suspended = state.frames.back();
  VarPtr item = std::move(suspended.yielded);
  suspended.yielded = nullptr;
  *frame = std::move(suspended);
  it->suspended = std::move(frame);
  state.frames.pop_back();
  return item;
}

} // namespace sotc::frontend
