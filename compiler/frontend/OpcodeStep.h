//===- OpcodeStep.h - One instruction as the opcode handlers see it (internal) -----------===//
//
// Executor::stepUnchecked looks an instruction's opcode up in the handler table and runs its
// handler on an OpcodeStep: the frame, the instruction and its argument, and where execution
// goes next. A handler returns nothing to go on at `next`, or a Break (a graph break, or
// an empty one after it has moved the frames itself: a call, a return). The handlers live in
// OpcodesNamesAndCalls.cpp, OpcodesValues.cpp and OpcodesControl.cpp, one per opcode or per
// family of opcodes that differ only in their names; the table is OpcodeHandlers.def.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_FRONTEND_OPCODESTEP_H
#define SOTC_FRONTEND_OPCODESTEP_H

#include "compiler/frontend/Executor.h"

#include <optional>

namespace sotc::frontend {

/// Thrown by the stack helpers on bytecode no CPython compiler emits (a crafted trace);
/// Executor::step turns it into a coded error with the location.
struct MalformedBytecode {
  std::string what;
};

/// The value stack and the frame's slots, refusing what no CPython compiler emits.
void need(const Frame &f, size_t n);
VarPtr pop(Frame &f);
std::vector<VarPtr> popN(Frame &f, size_t n);
/// The stack slot `depth` from the top (1 = top).
VarPtr &peek(Frame &f, size_t depth);
VarPtr &slot(Frame &f, size_t index);
/// A tuple, list, set or slice of `items`, computed from them.
VarPtr sequence(Variable::Kind kind, std::vector<VarPtr> items);

struct OpcodeStep {
  Executor &ex;
  ExecState &state;
  StatementIR &sir;
  Frame &f; // the frame the instruction runs in (a call may grow the frames and move it)
  const trace::CodeObject &co;
  const trace::Instruction &ins;
  const OpcodeInfo &info;
  Opcode op;
  unsigned arg;
  size_t next; // where execution goes on: the next instruction, or a jump's target
  SourceLoc loc;

  using Handler = std::optional<Break> (OpcodeStep::*)();
  /// The handler of `op`; null for an opcode sotc does not run.
  static Handler handlerOf(Opcode op);

  /// The instruction index the jump leads to.
  size_t jumpIndex() const;
  VarPtr constant(PyConst c) const;
  /// A local's value; UnboundLocalError where it has none.
  VarPtr loadLocal(unsigned index);
  /// Where an unconditional jump at `index` leads, so that a branch's sides start where the
  /// code continues: 3.12 closes a `while` with POP_JUMP_IF_FALSE over a JUMP_BACKWARD where
  /// 3.11 has one POP_JUMP_BACKWARD_IF_TRUE, and both must give the same segments.
  size_t pastJumps(size_t index) const;
  /// A value CALL will call, with the NULL that says it has no self where the version puts
  /// it. Onto the current frame: a property's getter run in between may have moved `f`.
  void pushForCall(VarPtr value, bool withNull);

  // OpcodesNamesAndCalls.cpp
  std::optional<Break> nothing();   // NOP, RESUME, PRECALL, EXTENDED_ARG, CACHE
  std::optional<Break> popTop();    // POP_TOP
  std::optional<Break> pushNull();  // PUSH_NULL
  std::optional<Break> copy();      // COPY
  std::optional<Break> swap();      // SWAP
  std::optional<Break> loadConst(); // LOAD_CONST
  std::optional<Break> loadFast();  // LOAD_FAST, LOAD_FAST_CHECK, LOAD_FAST_LOAD_FAST, LOAD_CLOSURE
  std::optional<Break> loadFastAndClear();     // LOAD_FAST_AND_CLEAR
  std::optional<Break> storeFast();            // STORE_FAST, STORE_FAST_STORE_FAST
  std::optional<Break> storeFastLoadFast();    // STORE_FAST_LOAD_FAST
  std::optional<Break> deleteFast();           // DELETE_FAST
  std::optional<Break> makeCell();             // MAKE_CELL
  std::optional<Break> copyFreeVars();         // COPY_FREE_VARS
  std::optional<Break> loadDeref();            // LOAD_DEREF
  std::optional<Break> storeDeref();           // STORE_DEREF
  std::optional<Break> loadGlobal();           // LOAD_GLOBAL
  std::optional<Break> loadAttr();             // LOAD_ATTR
  std::optional<Break> loadSuperAttr();        // LOAD_SUPER_ATTR
  std::optional<Break> loadMethod();           // LOAD_METHOD
  std::optional<Break> keywordNames();         // KW_NAMES
  std::optional<Break> callWithArguments();    // CALL, CALL_KW
  std::optional<Break> callFunctionEx();       // CALL_FUNCTION_EX
  std::optional<Break> makeFunction();         // MAKE_FUNCTION
  std::optional<Break> setFunctionAttribute(); // SET_FUNCTION_ATTRIBUTE
  std::optional<Break> importName();           // IMPORT_NAME
  std::optional<Break> importFrom();           // IMPORT_FROM
  std::optional<Break> storeGlobal();          // STORE_GLOBAL, DELETE_GLOBAL
  std::optional<Break> storeAttr();            // STORE_ATTR
  std::optional<Break> deleteAttr();           // DELETE_ATTR
  // OpcodesValues.cpp
  std::optional<Break> binaryOperator();       // BINARY_OP
  std::optional<Break> unaryOperator();        // UNARY_NEGATIVE, UNARY_POSITIVE, UNARY_INVERT
  std::optional<Break> callIntrinsic();        // CALL_INTRINSIC_1
  std::optional<Break> unaryNot();             // UNARY_NOT
  std::optional<Break> toBool();               // TO_BOOL
  std::optional<Break> comparison();           // COMPARE_OP
  std::optional<Break> identity();             // IS_OP
  std::optional<Break> membership();           // CONTAINS_OP
  std::optional<Break> binarySubscr();         // BINARY_SUBSCR
  std::optional<Break> binarySlice();          // BINARY_SLICE
  std::optional<Break> storeSubscr();          // STORE_SUBSCR, STORE_SLICE
  std::optional<Break> deleteSubscr();         // DELETE_SUBSCR
  std::optional<Break> buildSequence();        // BUILD_TUPLE, BUILD_LIST
  std::optional<Break> buildMap();             // BUILD_MAP
  std::optional<Break> buildConstKeyMap();     // BUILD_CONST_KEY_MAP
  std::optional<Break> buildString();          // BUILD_STRING
  std::optional<Break> buildSlice();           // BUILD_SLICE
  std::optional<Break> buildSet();             // BUILD_SET
  std::optional<Break> setAdd();               // SET_ADD, SET_UPDATE
  std::optional<Break> listAppend();           // LIST_APPEND
  std::optional<Break> listExtend();           // LIST_EXTEND
  std::optional<Break> listToTuple();          // LIST_TO_TUPLE
  std::optional<Break> dictUpdate();           // DICT_UPDATE, DICT_MERGE
  std::optional<Break> mapAdd();               // MAP_ADD
  std::optional<Break> unpackSequence();       // UNPACK_SEQUENCE
  std::optional<Break> unpackEx();             // UNPACK_EX
  std::optional<Break> formatWithConversion(); // FORMAT_VALUE
  std::optional<Break> convertValue();         // CONVERT_VALUE
  std::optional<Break> formatSimple();         // FORMAT_SIMPLE
  std::optional<Break> formatWithSpec();       // FORMAT_WITH_SPEC
  // OpcodesControl.cpp
  std::optional<Break> jump();            // JUMP_FORWARD, JUMP_BACKWARD, JUMP_BACKWARD_NO_INTERRUPT
  std::optional<Break> conditionalJump(); // POP_JUMP_IF_*, JUMP_IF_*_OR_POP
  std::optional<Break> getIter();         // GET_ITER
  std::optional<Break> forIter();         // FOR_ITER
  std::optional<Break> endFor();          // END_FOR
  std::optional<Break> loadAssertionError(); // LOAD_ASSERTION_ERROR
  std::optional<Break> returnGenerator();    // RETURN_GENERATOR
  std::optional<Break> yieldValue();         // YIELD_VALUE
  std::optional<Break> returnValue();        // RETURN_VALUE, RETURN_CONST
  std::optional<Break> raiseVarargs();       // RAISE_VARARGS
  std::optional<Break> reraise();            // RERAISE
  std::optional<Break> pushExcInfo();        // PUSH_EXC_INFO
  std::optional<Break> popExcept();          // POP_EXCEPT
  std::optional<Break> checkExcMatch();      // CHECK_EXC_MATCH
  std::optional<Break> beforeWith();         // BEFORE_WITH
  std::optional<Break> getYieldFromIter();   // GET_YIELD_FROM_ITER
  std::optional<Break> setupAnnotations();   // SETUP_ANNOTATIONS
};

} // namespace sotc::frontend

#endif // SOTC_FRONTEND_OPCODESTEP_H
