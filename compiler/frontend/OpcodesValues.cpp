//===- OpcodesValues.cpp - Opcode handlers: operators, subscripts, containers ---------===//
//
// The instructions that compute a value from values on the stack: Python's operators (a
// tensor's become operator-library calls), subscripts, building and unpacking containers,
// and formatting.
//
//===-----------------------------------------------------------------------------------===//
#include "compiler/frontend/OpcodeStep.h"

#include <algorithm>

namespace sotc::frontend {

namespace {
using K = Variable::Kind;

// BINARY_OP's argument (opcode._nb_ops): the operator and its dunder name.
struct NbOp {
  const char *symbol;
  const char *dunder;
};
constexpr NbOp kNbOps[] = {
    {"+", "add"}, {"&", "and"},     {"//", "floordiv"}, {"<<", "lshift"}, {"@", "matmul"},
    {"*", "mul"}, {"%", "mod"},     {"|", "or"},        {"**", "pow"},    {">>", "rshift"},
    {"-", "sub"}, {"/", "truediv"}, {"^", "xor"},
};
constexpr const char *kCompareOps[] = {"<", "<=", "==", "!=", ">", ">="};
} // namespace

// BINARY_OP
std::optional<Break> OpcodeStep::binaryOperator() {
  VarPtr b = pop(f), a = pop(f);
  if (arg >= 2 * std::size(kNbOps))
    throw MalformedBytecode{"BINARY_OP argument " + std::to_string(arg) + " names no operator"};
  bool inplace = arg >= 13;
  f.stack.push_back(ex.binaryOp(f, sir, kNbOps[inplace ? arg - 13 : arg].dunder, inplace, a, b));
  return std::nullopt;
}

// UNARY_NEGATIVE, UNARY_POSITIVE, UNARY_INVERT
std::optional<Break> OpcodeStep::unaryOperator() {
  f.stack.push_back(ex.unaryOp(f, sir,
                               op == Opcode::UNARY_NEGATIVE   ? "__neg__"
                               : op == Opcode::UNARY_POSITIVE ? "__pos__"
                                                              : "__invert__",
                               pop(f)));
  return std::nullopt;
}

// CALL_INTRINSIC_1 (3.12)
std::optional<Break> OpcodeStep::callIntrinsic() {
  // CPython's Include/internal/pycore_intrinsics.h numbers.
  constexpr unsigned kStopIterationError = 3, kUnaryPositive = 5, kListToTuple = 6;
  VarPtr v = pop(f);
  if (arg == kStopIterationError) // a generator's handler: StopIteration may not leave it
    f.stack.push_back(
        v->exceptionType == "StopIteration"
            ? makeException("RuntimeError", -1, "RuntimeError",
                            {constant(PyConst::ofStr("generator raised StopIteration"))})
            : v);
  else if (arg == kUnaryPositive)
    f.stack.push_back(ex.unaryOp(f, sir, "__pos__", v));
  else if (arg == kListToTuple)
    f.stack.push_back(sequence(K::Tuple, v->items));
  else
    ex.fail(DiagCode::FrontendUnsupportedOpcode,
            "CALL_INTRINSIC_1 " + std::to_string(arg) + " (" + ins.argrepr() + ") is not supported",
            f);
  return std::nullopt;
}

// UNARY_NOT
std::optional<Break> OpcodeStep::unaryNot() {
  VarPtr a = pop(f);
  if (ex.branchCondition(a))
    return ex.truthBranch(f, a, /*negate=*/true, next);
  bool value = ex.truthy(f, a);
  f.stack.push_back(Variable::constant_(PyConst::ofBool(!value), computedFrom({a})));
  return std::nullopt;
}

// TO_BOOL (3.13: before every conditional jump on a value that may not be bool)
std::optional<Break> OpcodeStep::toBool() {
  // A tensor (or an x.item() bool) stays itself: the jump that reads it is where the graph
  // branches.
  VarPtr a = pop(f);
  f.stack.push_back(ex.branchCondition(a)
                        ? a
                        : Variable::constant_(PyConst::ofBool(ex.truthy(f, a)), computedFrom({a})));
  return std::nullopt;
}

// COMPARE_OP
std::optional<Break> OpcodeStep::comparison() {
  VarPtr b = pop(f), a = pop(f);
  unsigned index = ex.opcodes_->compareIndex(arg);
  if (index >= std::size(kCompareOps))
    throw MalformedBytecode{"COMPARE_OP argument " + std::to_string(arg) + " names no comparison"};
  f.stack.push_back(ex.compare(f, sir, kCompareOps[index], a, b));
  return std::nullopt;
}

// IS_OP
std::optional<Break> OpcodeStep::identity() {
  VarPtr b = pop(f), a = pop(f);
  f.stack.push_back(ex.identical(f, a, b, arg != 0));
  return std::nullopt;
}

// CONTAINS_OP
std::optional<Break> OpcodeStep::membership() {
  VarPtr container = pop(f), item = pop(f);
  // An object whose class defines __contains__ (a Mapping's: a lookup that may fail).
  if (VarPtr method = container->kind == K::Object && !ex.isRecord(container)
                          ? ex.classMember(container, "__contains__", ex.locOf(f))
                          : nullptr) {
    f.pc = next;
    VarPtr found = ex.callNow(state, sir, method, {item}, {});
    Frame &caller = state.frames.back(); // `f` moved if the call grew the frame stack
    if (!found->isConstant())
      ex.fail(DiagCode::FrontendUnsupportedConstruct,
              "'in' on a " + container->typeName() + " that does not answer with a bool", caller);
    caller.stack.push_back(
        constant(PyConst::ofBool(found->constant.truthy() != static_cast<bool>(arg))));
    return Break{};
  }
  if (ex.isRecord(container))
    container = ex.recordItems(container);
  VarPtr r = ex.compare(f, sir, "in", item, container);
  if (arg)
    r = Variable::constant_(PyConst::ofBool(!r->constant.boolValue), computedFrom({r}));
  f.stack.push_back(r);
  return std::nullopt;
}

// BINARY_SUBSCR
std::optional<Break> OpcodeStep::binarySubscr() {
  VarPtr key = pop(f), obj = pop(f);
  // An object whose class defines __getitem__ (a library's registry), or a dict subclass
  // that does (transformers' ACT2FN makes the activation it names): a call of it.
  bool ownItems = (obj->kind == K::Object && !ex.isRecord(obj)) ||
                  (obj->kind == K::Dict && obj->classIndex >= 0);
  if (VarPtr method = ownItems ? ex.classMember(obj, "__getitem__", ex.locOf(f)) : nullptr) {
    f.pc = next;
    ex.call(state, sir, method, {key}, {});
    return ex.takePendingBreak();
  }
  // x[mask], keep[:100]: as many rows as a kernel counts
  if (ex.countedSubscript(f, sir, obj, key)) {
    f.pc = next;
    return ex.takePendingBreak();
  }
  f.stack.push_back(ex.getItem(f, sir, obj, key));
  return std::nullopt;
}

// BINARY_SLICE (3.12: obj[start:end])
std::optional<Break> OpcodeStep::binarySlice() {
  VarPtr end = pop(f), start = pop(f), obj = pop(f);
  VarPtr key = sequence(K::Slice, {start, end, constant(PyConst::none())});
  if (ex.countedSubscript(f, sir, obj, key)) {
    f.pc = next;
    return ex.takePendingBreak();
  }
  f.stack.push_back(ex.getItem(f, sir, obj, key));
  return std::nullopt;
}

// STORE_SUBSCR, STORE_SLICE (3.12: obj[start:end] = value)
std::optional<Break> OpcodeStep::storeSubscr() {
  VarPtr key;
  if (op == Opcode::STORE_SLICE) {
    VarPtr end = pop(f), start = pop(f);
    key = sequence(K::Slice, {start, end, constant(PyConst::none())});
  } else {
    key = pop(f);
  }
  VarPtr obj = pop(f), value = pop(f);
  ex.setItem(state, sir, obj, key, value);
  return std::nullopt;
}

// DELETE_SUBSCR
std::optional<Break> OpcodeStep::deleteSubscr() {
  VarPtr key = pop(f), obj = pop(f);
  ex.deleteItem(f, obj, key);
  return std::nullopt;
}

// BUILD_TUPLE, BUILD_LIST
std::optional<Break> OpcodeStep::buildSequence() {
  f.stack.push_back(sequence(op == Opcode::BUILD_TUPLE ? K::Tuple : K::List, popN(f, arg)));
  return std::nullopt;
}

// BUILD_MAP
std::optional<Break> OpcodeStep::buildMap() {
  std::vector<VarPtr> kv = popN(f, 2 * arg);
  VarPtr d = Variable::make(K::Dict, computedFrom(kv));
  for (unsigned i = 0; i < arg; ++i) {
    d->keys.push_back(kv[2 * i]);
    d->items.push_back(kv[2 * i + 1]);
  }
  f.stack.push_back(d);
  return std::nullopt;
}

// BUILD_CONST_KEY_MAP
std::optional<Break> OpcodeStep::buildConstKeyMap() {
  VarPtr keys = pop(f);
  std::vector<VarPtr> values = popN(f, arg);
  VarPtr d = Variable::make(K::Dict, computedFrom(values));
  d->keys = keys->items;
  d->items = values;
  f.stack.push_back(d);
  return std::nullopt;
}

// BUILD_STRING
std::optional<Break> OpcodeStep::buildString() {
  std::vector<VarPtr> parts = popN(f, arg);
  std::string s;
  for (const VarPtr &p : parts)
    s += p->constant.text;
  f.stack.push_back(Variable::constant_(PyConst::ofStr(s), computedFrom(parts)));
  return std::nullopt;
}

// BUILD_SLICE
std::optional<Break> OpcodeStep::buildSlice() {
  std::vector<VarPtr> parts = popN(f, arg);
  if (parts.size() == 2)
    parts.push_back(constant(PyConst::none()));
  f.stack.push_back(sequence(K::Slice, parts));
  return std::nullopt;
}

// BUILD_SET
std::optional<Break> OpcodeStep::buildSet() {
  // Sets keep their items in first-seen order without duplicates (constants compare).
  VarPtr set = sequence(K::Tuple, {});
  set->name = "set";
  for (VarPtr &item : popN(f, arg))
    if (std::none_of(set->items.begin(), set->items.end(), [&](const VarPtr &x) {
          return x.get() == item.get() ||
                 (x->isConstant() && item->isConstant() && x->constant == item->constant);
        }))
      set->items.push_back(item);
  f.stack.push_back(set);
  return std::nullopt;
}

// SET_ADD, SET_UPDATE
std::optional<Break> OpcodeStep::setAdd() {
  VarPtr v = pop(f);
  VarPtr &set = peek(f, arg);
  for (const VarPtr &item : op == Opcode::SET_ADD ? std::vector<VarPtr>{v} : ex.iterate(f, sir, v))
    if (std::none_of(set->items.begin(), set->items.end(), [&](const VarPtr &x) {
          return x.get() == item.get() ||
                 (x->isConstant() && item->isConstant() && x->constant == item->constant);
        }))
      set->items.push_back(item);
  return std::nullopt;
}

// LIST_APPEND
std::optional<Break> OpcodeStep::listAppend() {
  VarPtr v = pop(f);
  peek(f, arg)->items.push_back(v);
  return std::nullopt;
}

// LIST_EXTEND
std::optional<Break> OpcodeStep::listExtend() {
  VarPtr v = pop(f);
  std::vector<VarPtr> items = ex.iterate(f, sir, v);
  VarPtr &list = peek(f, arg);
  list->items.insert(list->items.end(), items.begin(), items.end());
  return std::nullopt;
}

// LIST_TO_TUPLE
std::optional<Break> OpcodeStep::listToTuple() {
  VarPtr list = pop(f);
  f.stack.push_back(sequence(K::Tuple, list->items));
  return std::nullopt;
}

// DICT_UPDATE, DICT_MERGE
std::optional<Break> OpcodeStep::dictUpdate() {
  VarPtr src = pop(f);
  if (ex.isRecord(src)) // **outputs of a ModelOutput: its fields set to something
    src = ex.recordItems(src);
  else if (VarPtr keys =
               src->kind == K::Object ? ex.classMember(src, "keys", ex.locOf(f)) : nullptr) {
    // A Mapping of the program's: CPython reads keys(), then each item by __getitem__.
    VarPtr getitem = ex.classMember(src, "__getitem__", ex.locOf(f));
    if (!getitem)
      ex.fail(DiagCode::FrontendPythonError,
              "TypeError: '" + src->typeName() + "' object is not subscriptable", f);
    VarPtr mapping = Variable::make(K::Dict, computedFrom({src}));
    for (const VarPtr &key : ex.iterate(f, sir, ex.callNow(state, sir, keys, {}, {}))) {
      mapping->keys.push_back(key);
      mapping->items.push_back(ex.callNow(state, sir, getitem, {key}, {}));
    }
    src = mapping;
  }
  VarPtr &dst = peek(f, arg);
  if (src->kind != K::Dict)
    ex.fail(DiagCode::FrontendUnsupportedConstruct, "** on a " + src->typeName(), f);
  for (size_t i = 0; i < src->keys.size(); ++i) {
    size_t j = 0;
    while (j < dst->keys.size() && !(dst->keys[j]->constant == src->keys[i]->constant))
      ++j;
    if (j < dst->keys.size() && op == Opcode::DICT_MERGE)
      ex.fail(DiagCode::FrontendPythonError,
              "TypeError: got multiple values for keyword argument " + src->keys[i]->repr(), f);
    if (j < dst->keys.size())
      dst->items[j] = src->items[i];
    else {
      dst->keys.push_back(src->keys[i]);
      dst->items.push_back(src->items[i]);
    }
  }
  return std::nullopt;
}

// MAP_ADD
std::optional<Break> OpcodeStep::mapAdd() {
  VarPtr value = pop(f), key = pop(f);
  VarPtr &d = peek(f, arg);
  d->keys.push_back(key);
  d->items.push_back(value);
  return std::nullopt;
}

// UNPACK_SEQUENCE
std::optional<Break> OpcodeStep::unpackSequence() {
  VarPtr seq = pop(f);
  std::vector<VarPtr> items = ex.iterate(f, sir, seq);
  if (items.size() != arg)
    ex.fail(DiagCode::FrontendPythonError,
            "ValueError: expected " + std::to_string(arg) + " values to unpack, got " +
                std::to_string(items.size()),
            f);
  for (auto it = items.rbegin(); it != items.rend(); ++it)
    f.stack.push_back(*it);
  return std::nullopt;
}

// UNPACK_EX
std::optional<Break> OpcodeStep::unpackEx() {
  VarPtr seq = pop(f);
  std::vector<VarPtr> items = ex.iterate(f, sir, seq);
  size_t before = arg & 0xff, after = arg >> 8;
  if (items.size() < before + after)
    ex.fail(DiagCode::FrontendPythonError, "ValueError: not enough values to unpack", f);
  std::vector<VarPtr> middle(items.begin() + before, items.end() - after);
  for (size_t i = 0; i < after; ++i)
    f.stack.push_back(items[items.size() - 1 - i]);
  f.stack.push_back(sequence(K::List, middle));
  for (size_t i = before; i-- > 0;)
    f.stack.push_back(items[i]);
  return std::nullopt;
}

// FORMAT_VALUE (3.11, 3.12: conversion and spec in one instruction)
std::optional<Break> OpcodeStep::formatWithConversion() {
  VarPtr spec = (arg & 0x04) ? pop(f) : nullptr;
  VarPtr value = pop(f);
  f.stack.push_back(ex.formatValue(f, value, arg & 0x03, spec));
  return std::nullopt;
}

// CONVERT_VALUE (3.13: !s, !r, !a)
std::optional<Break> OpcodeStep::convertValue() {
  f.stack.push_back(ex.formatValue(f, pop(f), arg, nullptr));
  return std::nullopt;
}

// FORMAT_SIMPLE (3.13)
std::optional<Break> OpcodeStep::formatSimple() {
  f.stack.push_back(ex.formatValue(f, pop(f), 0, nullptr));
  return std::nullopt;
}

// FORMAT_WITH_SPEC (3.13)
std::optional<Break> OpcodeStep::formatWithSpec() {
  VarPtr spec = pop(f), value = pop(f);
  f.stack.push_back(ex.formatValue(f, value, 0, spec));
  return std::nullopt;
}

} // namespace sotc::frontend
