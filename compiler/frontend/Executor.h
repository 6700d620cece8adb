//===- Executor.h - Symbolic execution of CPython 3.11-3.13 bytecode (internal) ----------===//
//
// An explicit frame stack, so that the whole interpreter state can be copied at a graph break
// and both continuations translated ahead of time. Opcode handlers live in Opcodes*.cpp
// (OpcodeStep.h; the table is OpcodeHandlers.def), calls (user functions, builtins, tensor
// operations) in Calls.cpp, and the segment graph and guards in Translator.cpp.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_FRONTEND_EXECUTOR_H
#define SOTC_FRONTEND_EXECUTOR_H

#include "compiler/frontend/Opcodes.h"
#include "compiler/frontend/Translation.h"
#include "compiler/ops/Primitives.h"
#include "compiler/support/Diagnostics.h"

#include <array>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace sotc::ops {
struct LayerEntry;
} // namespace sotc::ops

namespace sotc::frontend {

/// Why execution stopped before the entry function returned.
struct Break {
  enum class Kind { None, Branch, HostCallback, Size };
  Kind kind = Kind::None;
  VarPtr condition;                           // Branch: the tensor the jump reads
  size_t targetIfTrue = 0, targetIfFalse = 0; // Branch: instruction indices
  // JUMP_IF_*_OR_POP leave the condition on the stack when they jump and pop it otherwise
  // (POP_JUMP_* popped it already).
  bool popOnTrue = false, popOnFalse = false;
  // bool(x) as a value (not x, bool(x), operator.truth(x)): what each side continues with.
  VarPtr pushOnTrue, pushOnFalse;
  // A branch on an x.item() bool: each side continues with it replaced by its constant.
  VarPtr decided;
  std::string reason;
  SourceLoc loc;
  // HostCallback: what the host runs, on which values, and what it hands back.
  std::string callee;
  std::vector<VarPtr> callbackArgs;    // positional, then the keyword arguments' values
  std::vector<std::string> kwargNames; // the keyword arguments' names, in order
  VarPtr result;                       // HostCallback, Size: what the call returns
  // Size: a kernel counted `count` (an int64 0-d tensor, at most `bound`, a dimension), which
  // becomes size s_`symbol`; each of `bounded` (its rows at their bound) continues as its
  // `produced` tensor, its first s_symbol rows.
  int symbol = -1;
  VarPtr count;
  int64_t bound = 0;
  std::vector<VarPtr> bounded, produced;
};

/// A module global the program reads as a tensor input, or has assigned or deleted.
struct GlobalSlot {
  int namespaceIndex;
  std::string name;
  VarPtr value;         // null: deleted
  bool written = false; // assigned or deleted by the program: a side effect
};

/// An autocast block in force (`with torch.autocast(...)`, `paddle.amp.auto_cast()`): whose
/// operator lists apply, and the half type their GEMM-like operators run in (none: a block
/// that turns autocast off).
struct Autocast {
  std::string framework; // "torch" or "paddle"
  std::string device;    // torch's lists differ for "cuda" and "cpu"
  std::optional<ops::DType> dtype;
};

/// The mutable interpreter state; copyable for graph breaks.
struct ExecState {
  std::deque<Frame> frames; // a deque: a handler's Frame& stays valid while calls push more
  VarPtr returnValue;              // set when the entry frame returns
  std::vector<GlobalSlot> globals; // tensor globals (inputs) and every global written
  // The entry function's container arguments (lists, dicts), whose mutations are side effects.
  std::vector<std::pair<std::string, VarPtr>> arguments;
  // A model's weights as they are now, by name: one written in place is state.
  std::vector<std::pair<std::string, VarPtr>> weights;
  std::vector<Autocast> autocast; // innermost last
  VarPtr handling;                // the exception an `except` block handles (sys.exc_info)
  // Attributes the program assigned on objects passed in (a library's context variable set
  // and reset): what each held before, which it must hold again when the function returns.
  struct AssignedAttribute {
    VarPtr object;
    std::string name;
    VarPtr before; // null: the object had no such attribute
    SourceLoc loc;
  };
  std::vector<AssignedAttribute> assignedAttributes;
};

/// Walks every value slot of the state in a fixed order (State: ExecState or const ExecState).
template <typename State, typename Visit> void walkState(State &state, Visit &&visit) {
  for (auto &f : state.frames) {
    for (auto &v : f.localsplus)
      visit(v);
    for (auto &v : f.stack)
      visit(v);
  }
  visit(state.returnValue);
  for (auto &g : state.globals)
    visit(g.value);
}

/// A Python exception the program raises (`raise`, a missing dict key, a bad argument):
/// handlers of the bytecode's exception tables may catch it; uncaught, it is reported as
/// the error it carries.
struct PythonException : CodedError {
  explicit PythonException(VarPtr exception)
      : CodedError(exception->exceptionType == "AttributeError" ? DiagCode::FrontendAttributeError
                                                                : DiagCode::FrontendPythonError,
                   exception->exceptionMessage),
        exception(std::move(exception)) {}
  VarPtr exception; // Opaque, with its exceptionType and exceptionMessage
};

/// Whether `name` is a builtin exception class sotc knows (KeyError, ValueError).
bool isBuiltinException(const std::string &name);
/// An exception object of builtin class `type`, or of traced class `classIndex` (>= 0) that
/// derives from it, made by `name(*args)`.
VarPtr makeException(const std::string &type, int classIndex, const std::string &name,
                     std::vector<VarPtr> args);
/// Whether an exception of builtin type `type` is an instance of builtin class `base`.
bool exceptionIsA(const std::string &type, const std::string &base);

/// The name of the opaque value a dynamic dimension's size is (Tensor.shape of a `?`).
constexpr const char *kDynamicSize = "dynamic size of";

/// Whether `v` is a dynamic dimension's size (known at run time only).
inline bool isDynamicSize(const VarPtr &v) {
  return v->kind == Variable::Kind::Opaque && v->name.rfind(kDynamicSize, 0) == 0;
}
/// The size of a dimension `dim` (dynamic), computed from `from`.
VarPtr makeDynamicSize(int64_t dim, std::vector<VarPtr> from);
/// Whether `v` is the size of one symbol (s0 or a size an input named), not a product.
inline bool isSymbolSize(const VarPtr &v) {
  return isDynamicSize(v) && ops::isSymbolDim(v->sizeDim);
}

/// A call that needs two dynamic sizes to be one (ops::SizesMeet), by the names the inputs
/// gave them: translate() starts again with them as one size.
class SizesMet : public CodedError {
public:
  SizesMet(SizeRelation relation, const std::string &message)
      : CodedError(DiagCode::OpShapeMismatch, message), relation(std::move(relation)) {}
  SizeRelation relation;
};

/// A call that splits a dynamic size (ops::SizeNotWhole, T // 2 taken as a size):
/// translate() starts again with that size a multiple.
class SizeSplits : public CodedError {
public:
  SizeSplits(SizeMultiple multiple, const std::string &message)
      : CodedError(DiagCode::OpBadAttribute, message), multiple(std::move(multiple)) {}
  SizeMultiple multiple;
};

class Executor {
public:
  /// Which size a size end binds, and to at most what.
  /// What a count is of: the same each time is one size (a mask, or the row sizes a
  /// concatenation joins).
  using CountKey = std::variant<const Variable *, std::vector<int64_t>>;
  struct SizeEnd {
    std::optional<CountKey> key;  // what is counted: one size each time
    int symbol = -1;              // a size bound before (topk's k), not a new one
    std::optional<int64_t> bound; // where no tensor is bounded: the count's bound (a dim)
  };
  Executor(const trace::Trace &trace, const TranslateOptions &options);

  /// The initial state: the entry frame with its arguments bound from the trace's inputs.
  ExecState start();
  /// The entry function's parameters as start() bound them, in the trace's order, then the
  /// tensors it reads from module globals (Tracker::Kind::Global).
  const std::vector<VarPtr> &parameters() const { return parameters_; }
  const trace::Trace &trace() const { return trace_; }
  /// What the returning state changed besides its result: globals written, arguments mutated.
  /// Guards what a mutated argument held as passed.
  std::vector<SideEffect> sideEffects(const ExecState &state);
  /// Runs until the entry frame returns or a break; statements go to `sir`.
  Break run(ExecState &state, StatementIR &sir);
  /// A deep copy sharing nothing mutable with `state` (tensors and constants are shared).
  static ExecState clone(const ExecState &state);
  /// clone, with every reference to `decided` (an x.item() bool) replaced by `value`.
  static ExecState clone(const ExecState &state, const VarPtr &decided, const VarPtr &value);
  /// The tensor a jump on `v` branches on: v itself, the tensor an x.item() bool was read
  /// from, or null for a Python value.
  static VarPtr branchCondition(const VarPtr &v);
  /// x.item() of a one-element tensor: a Python number that is compared and decides branches.
  static VarPtr itemRead(const VarPtr &tensor);
  /// Tensors reachable from the frames, in a canonical order (outer frames first).
  static std::vector<VarPtr> liveTensors(const ExecState &state);
  /// A text that is equal for two states exactly when they may share a segment.
  static std::string signature(const ExecState &state);

  /// Python values that decided something (jumps, constant arguments, subscripts), with the
  /// line that consumed them first.
  const std::vector<std::pair<VarPtr, SourceLoc>> &consumed() const { return consumed_; }
  /// A dynamic size of the inputs: `?` (every `?` is one size) or a name (`int64[B,T]`), in
  /// the order the inputs give them (symbol k is s<k>), with the bound an input gives it
  /// (`T<=512`; 0 for none).
  struct DynamicSymbol {
    std::string name;
    int64_t inputMax = 0;
    /// The inputs' dimensions of it are this many times it: T as 2*s1 where the program
    /// splits T in halves (TranslateOptions::sizeMultiples).
    int64_t factor = 1;
  };
  const std::vector<DynamicSymbol> &symbols() const { return symbols_; }
  /// The sizes the program derives from the inputs' by offsets (x[:, 1:] of T: T - 1), each
  /// a symbol after the inputs' (also in symbols(), named "T-1").
  const ops::DerivedSizes &derivedSizes() const { return derivedSizes_; }
  /// A decision taken on a dynamic size: what it keeps (`>= 2`, `!= 4`) and the line.
  struct SizeGuard {
    int symbol = 0;
    std::string expected;
    SourceLoc loc;
  };
  const std::vector<SizeGuard> &batchGuards() const { return batchGuards_; }
  /// Per size, the least bound a `<=` batch guard gives it (an input's T<=N, a slice of a
  /// static table to it; a derived size's is its base's plus its offset), 0 for none: what the
  /// code generators may assume of it.
  std::vector<int64_t> sizeMax() const;
  void consume(const VarPtr &v, const SourceLoc &loc);
  /// "paddle" or "torch": the framework whose tensor methods and dtype names apply.
  const std::string &framework() const { return framework_; }

  // Used by the opcode handlers and call dispatch.
  const trace::CodeObject &code(const Frame &f) const { return trace_.code_objects(f.codeIndex); }
  SourceLoc locOf(const Frame &f) const;
  [[noreturn]] void fail(DiagCode code, const std::string &message, const Frame &f) const;
  /// A call sotc cannot compile (E3004): recorded, and its result stands in for what the call
  /// would return, so one compile reports every such call it can reach.
  VarPtr unsupportedCall(const std::string &message, const Frame &f);
  /// unsupportedCall of a pure operator sotc refuses (Refusals.def): recorded only when its
  /// result is used (Variable::refusal).
  VarPtr refusedPureCall(const std::string &message, const Frame &f);
  /// The unsupported result of a call of `opName` that the operator table lacks ("`subject` is
  /// not in the operator table"): deferred for an operator it refuses by name.
  VarPtr refusal(const std::string &opName, const std::string &subject, const Frame &f);
  /// A stand-in for what an operation on an unsupported call's result computes.
  static VarPtr unsupportedResult();
  /// Whether `v` is an unsupported call's result; a use of it, which records a deferred refusal.
  bool usesUnsupported(const VarPtr &v);
  bool anyUnsupported(const VarPtr &a, const VarPtr &b = nullptr);
  /// Throws the unsupported calls recorded so far as one error (one line each), if any.
  void reportUnsupported() const;
  VarPtr fromTrace(const trace::Value &value, Tracker tracker);
  /// id(v): the same number for the same variable during the translation (id-keyed tables of
  /// library code: transformers' kernel registry), far from any address the trace recorded.
  int64_t objectId(const VarPtr &v);
  VarPtr newTensor(const ops::TensorMeta &meta, Tracker tracker);

private:
  std::vector<VarPtr> parameters_;
  std::vector<CodedError> unsupportedCalls_;
  /// id(x): a number per variable the program asked about, in the order it asked (each held,
  /// so no other variable reuses its address while the translation runs).
  std::map<const Variable *, std::pair<VarPtr, int64_t>> ids_;
  friend struct CallContext;
  friend struct OpcodeStep;

  // OpcodeExecutor.cpp
  Break step(ExecState &state, StatementIR &sir);
  Break stepUnchecked(ExecState &state, StatementIR &sir);
  Break takePendingBreak();
  /// Unwinds `state` to the innermost handler, above the frames callNow runs from, that covers
  /// where `e` was raised: true if one does (execution goes on there), else false with the
  /// frames above that floor popped.
  bool unwindToHandler(ExecState &state, const PythonException &e);
  /// The builtin exception class a traced class derives from ("KeyError" for class
  /// NotFound(KeyError)), or "" for a class that is not an exception.
  std::string builtinExceptionBase(int classIndex) const;
  /// Raises `exception` (an exception object); `message` is what it reports uncaught.
  [[noreturn]] void raise(const VarPtr &exception, const std::string &message,
                          const Frame &f) const;
  /// A branch on the truth of a one-element tensor whose sides both continue at `next` with
  /// the bool (negated for `not`) on the stack: PaddleSOT's graph break at bool(tensor).
  /// `value` is the tensor or an x.item() bool (branchCondition).
  Break truthBranch(Frame &f, const VarPtr &value, bool negate, size_t next);
  VarPtr formatValue(Frame &f, const VarPtr &value, unsigned conversion, const VarPtr &spec);
  // Calls.cpp
  void call(ExecState &state, StatementIR &sir, VarPtr callable, std::vector<VarPtr> args,
            std::vector<std::pair<std::string, VarPtr>> kwargs);
  /// call(), then run what it started until it returns; its result.
  VarPtr callNow(ExecState &state, StatementIR &sir, VarPtr callable, std::vector<VarPtr> args,
                 std::vector<std::pair<std::string, VarPtr>> kwargs);
  /// While alive, handlers of the frames below `depth` run only once an exception reaches
  /// their instruction (a nested run's exception goes through its C++ caller first).
  struct HandlerFloor {
    HandlerFloor(size_t &floor, size_t depth) : floor(floor), saved(floor) { floor = depth; }
    ~HandlerFloor() { floor = saved; }
    size_t &floor, saved;
  };
  /// Steps the frames above `depth` (what a builtin called, or a resumed generator) until they
  /// return or the generator's frame yields; a graph break among them is E3002 naming `what`.
  void runNested(ExecState &state, StatementIR &sir, size_t depth, const std::string &what);
  // Generators.cpp
  /// The next item of iterator `it`, or nothing once it is exhausted. A generator's body runs
  /// from where it was suspended to its next yield, as CPython pulls it, so what it reads
  /// (the list `y.extend(m(y[-1]) for m in ms)` grows) is as the consumer left it.
  std::optional<VarPtr> nextItem(ExecState &state, StatementIR &sir, const VarPtr &it);
  // CallsLayers.cpp
  // ComplexTensors.cpp
  /// An operation that makes, reads or computes complex tensors, on their (real, imaginary)
  /// pairs; null when none of that is involved. Refuses the operations it does not map.
  VarPtr complexCall(Frame &f, StatementIR &sir, const std::string &opName,
                     std::vector<VarPtr> &args, std::vector<std::pair<std::string, VarPtr>> &kwargs);
  /// Whether a value is or holds a complex tensor.
  bool holdsComplex(const VarPtr &v) const;
  // SpectralTransforms.cpp
  /// torch.stft (a real signal to a complex spectrum) or torch.istft (back), as GEMMs with a
  /// windowed Fourier bank (and an overlap-add for istft).
  VarPtr spectralTransform(Frame &f, StatementIR &sir, const std::string &opName,
                           std::vector<VarPtr> &args,
                           std::vector<std::pair<std::string, VarPtr>> &kwargs);
  /// The result the trace recorded for this call of a constant function with these constant
  /// arguments (Function.constant_calls), or null.
  VarPtr recordedConstantCall(const VarPtr &function, const std::vector<VarPtr> &args,
                              const std::vector<std::pair<std::string, VarPtr>> &kwargs);
  /// layer(...) of a layer with forward hooks: its pre-hooks (which may replace the
  /// arguments), its forward, then its forward hooks (which may replace the result).
  void callHookedLayer(ExecState &state, StatementIR &sir, const VarPtr &layer,
                       std::vector<VarPtr> args, std::vector<std::pair<std::string, VarPtr>> kwargs);
  /// layer(...): its class's forward, or the layer table's call for a built-in layer.
  void callLayer(ExecState &state, StatementIR &sir, const VarPtr &layer, std::vector<VarPtr> args,
                 std::vector<std::pair<std::string, VarPtr>> kwargs);
  /// The layer table's entry of the first built-in class in the layer's MRO, or null.
  const ops::LayerEntry *layerEntry(const VarPtr &layer) const;
  /// Cls(...) of a layer-table leaf the traced code constructs (ClassDef.layer_constructor):
  /// a new layer whose attributes are the constructor's parameters.
  VarPtr constructLayer(ExecState &state, const VarPtr &cls, std::vector<VarPtr> args,
                        std::vector<std::pair<std::string, VarPtr>> kwargs);
  /// The recorded leaf class of that public name with a constructor (what code names through
  /// its module: nn.Softmax), or null.
  VarPtr constructibleLayerClass(const std::string &publicName) const;
  /// Calls `layer` as the layer-table entry says (its class or a base of it is the leaf).
  void callLayerEntry(ExecState &state, StatementIR &sir, const VarPtr &layer,
                      const ops::LayerEntry *entry, std::vector<VarPtr> args,
                      std::vector<std::pair<std::string, VarPtr>> kwargs);
  /// paddle.nn.BatchNorm's forward: batch_norm, then its `act`.
  VarPtr activatedBatchNorm(ExecState &state, StatementIR &sir, const VarPtr &layer,
                            std::vector<VarPtr> args,
                            std::vector<std::pair<std::string, VarPtr>> kwargs);
  /// torch.nn.MultiheadAttention / paddle.nn.MultiHeadAttention's forward, as operator calls.
  VarPtr multiHeadAttention(ExecState &state, StatementIR &sir, const VarPtr &layer,
                            const std::string &className, std::vector<VarPtr> args,
                            std::vector<std::pair<std::string, VarPtr>> kwargs);
  // RecurrentLayers.cpp
  /// torch.nn.LSTM/GRU/RNN and paddle.nn.LSTM/GRU/SimpleRNN's forward, unrolled over the steps.
  VarPtr recurrentLayer(ExecState &state, StatementIR &sir, const VarPtr &layer,
                        const std::string &className, std::vector<VarPtr> args,
                        std::vector<std::pair<std::string, VarPtr>> kwargs);
  /// A layer container's sublayers in order (TypeError for other layers).
  std::vector<VarPtr> sublayers(Frame &f, const VarPtr &layer);
  /// Any layer's sublayers, in registration order (children()).
  static std::vector<VarPtr> childLayers(const VarPtr &layer);
  /// layer.modules(), .parameters(), .buffers() or a named_ form ("modules", ...), as torch
  /// walks them: the layer, then its children's, each module and tensor once; names as the
  /// state dict spells them.
  VarPtr layerWalk(const VarPtr &layer, const std::string &what);
  /// Whether the layer is a ModuleDict / LayerDict (indexed by name, iterated over names).
  bool isLayerDict(const VarPtr &layer) const;
  VarPtr tensorCall(Frame &f, StatementIR &sir, const std::string &kind, const std::string &callee,
                    const std::string &opName, std::vector<VarPtr> args,
                    std::vector<std::pair<std::string, VarPtr>> kwargs);
  /// A dynamic size (x.shape[d] of a `?` dimension, or a product of them: B * T) passed to a
  /// call: a reshape, an expand and arange(n) take it as the dimension it is
  /// (ops::sizeOfDim); anywhere else it is E3005.
  /// x[key] where the key or x holds the dynamic size s0: a slice up to it (mask[:T]) takes
  /// the first s0 elements (the end becomes ops::kBatchSize, `<= N` guarded on a static dim);
  /// static positions of a dim of s0 (x[:, 0], x[:, :4]) guard s0 to reach them (`>= end`).
  void indexWithDynamicSize(Frame &f, std::vector<VarPtr> &args);
  /// A guard of kind batch on a dynamic size, `s<symbol> relation k` (`>= 2`, `<= 64`,
  /// `!= 1`), once per expectation; `<=` bounds the size (sizeMax).
  void guardBatch(const char *relation, int64_t k, const SourceLoc &loc, int symbol = 0);
  /// The symbol of the dynamic size named `name` (`?` or T) an input gives, a new one the
  /// first time; E3005 past ops::kMaxSymbols.
  int symbolOf(const std::string &name);
  void passBatchSizes(Frame &f, const std::string &opName, std::vector<VarPtr> &args,
                      const std::vector<std::pair<std::string, VarPtr>> &kwargs);
  /// A dynamic size passed to a method or API where a signature takes a tensor (a step
  /// counter's count.add_(T)): the size's tensor (sizeTensor), as the operators take it.
  void sizesAsTensors(Frame &f, StatementIR &sir, const std::string &opName,
                      std::vector<VarPtr> &args,
                      std::vector<std::pair<std::string, VarPtr>> &kwargs);
  /// E3005 when `v` is the dynamic batch's size, which is known at run time only.
  void failOnDynamicSize(const VarPtr &v, Frame &f);
  /// E3005 when a size computed from the dynamic one (Variable::ofDynamicSize) is passed as a
  /// size, shape or slice bound.
  void refuseComputedSizes(Frame &f, const std::string &opName, const std::vector<VarPtr> &args);
  /// The dynamic size `size` as a 0-d int64 tensor of the call's value (the sum of ones over
  /// arange(size)), for arithmetic with tensors and numbers.
  VarPtr sizeTensor(Frame &f, StatementIR &sir, const VarPtr &size);
  /// Names the sizes derived since the last call (symbols_), and guards each that a tensor
  /// of `graph` holds to be at least 1 (T - 1: T >= 2) with `loc`.
  void noteDerivedSizes(const ops::PrimGraph &graph, const SourceLoc &loc);
  /// `v` (a dynamic size) plus `k`, a size derived from it (T - 1); nullptr for a product.
  VarPtr offsetSize(const VarPtr &v, int64_t k, std::vector<VarPtr> from);
  /// Marks a call's result that holds its batch coordinates (Variable::batchIota).
  void markBatchIota(const std::string &opName, const std::vector<VarPtr> &args,
                     const std::vector<VarPtr> &outputs);
  /// `a op b` where one is the dynamic batch's size: decided the way that keeps the most
  /// sizes, and guarded (batchGuards).
  VarPtr compareBatchSize(Frame &f, const std::string &op, VarPtr a, VarPtr b);
  // Autocast.cpp
  /// The operator's tensor arguments cast as the innermost autocast block says (its
  /// framework's lists: half for GEMM-like operators, float32 for precision-sensitive ones).
  void applyAutocast(Frame &f, StatementIR &sir, const std::string &opName,
                     std::vector<VarPtr> &args,
                     std::vector<std::pair<std::string, VarPtr>> &kwargs);
  /// The object whose next attribute lookup skips its class's __getattribute__ (plainGetAttr).
  const Variable *plainLookup_ = nullptr;
  ExecState *running_ = nullptr; // the state run() steps (its autocast blocks, generators)
  /// The coded error for computing with a value only the host knows (isHostValue); nothing
  /// for any other value.
  void refuseHostValue(const VarPtr &v, const Frame &f);
  /// a < b (and the other comparisons) where one side is an x.item() number and the other
  /// one too or a Python number: an x.item() bool computed in the graph.
  VarPtr compareItems(Frame &f, StatementIR &sir, const std::string &op, VarPtr a, VarPtr b);
  VarPtr binaryOp(Frame &f, StatementIR &sir, const std::string &op, bool inplace, VarPtr a,
                  VarPtr b);
  /// Python's printf-style `format % values`.
  VarPtr percentFormat(Frame &f, const VarPtr &format, const VarPtr &values);
  /// -a, +a, ~a by dunder name ("__neg__", "__pos__", "__invert__").
  VarPtr unaryOp(Frame &f, StatementIR &sir, const std::string &dunder, VarPtr a);
  VarPtr getAttr(Frame &f, StatementIR &sir, VarPtr obj, const std::string &name);
  /// object.__getattribute__(obj, name): the lookup without the class's own __getattribute__
  /// (what that override reaches through super()).
  VarPtr plainGetAttr(Frame &f, StatementIR &sir, const VarPtr &obj, const std::string &name);
  /// `callable(args)` run now from inside an operation (an attribute hook, a property): if it
  /// fails, the frames it pushed are dropped before the error goes on (getattr's default).
  VarPtr callFromOperation(StatementIR &sir, const VarPtr &callable, std::vector<VarPtr> args);
  /// A user class's member through `receiver` (an object: methods bound to it; a class), or
  /// null; *isProperty says whether it is a property's getter (bound, to be called).
  VarPtr classMember(const VarPtr &receiver, const std::string &name, const SourceLoc &loc,
                     bool *isProperty = nullptr, int after = -1);
  // AutogradFunctions.cpp: custom operators (torch.autograd.Function, paddle's PyLayer).
  /// Whether the class derives from one of the frameworks' custom-operator bases.
  bool isAutogradFunction(int classIndex) const;
  // CallsLayers.cpp
  /// Whether the class derives from torch.nn.Module or paddle.nn.Layer.
  bool isLayerClass(int classIndex) const;
  /// Op.apply of such a class, or a recording method of the context its forward gets; null
  /// for anything else.
  VarPtr autogradAttr(const VarPtr &obj, const std::string &name);
  /// Runs a call of what autogradAttr returned (Op.apply: its forward, with a context unless
  /// the class sets one up itself); false for any other callable.
  bool callAutograd(ExecState &state, const VarPtr &callable, std::vector<VarPtr> &args,
                    std::vector<std::pair<std::string, VarPtr>> &kwargs);
  /// super(cls, obj): what attribute lookups on it see (the MRO of obj's class after cls).
  VarPtr makeSuper(Frame &f, const VarPtr &cls, const VarPtr &obj);
  /// super().name: a member of a class after the super object's one, or, for `forward` of a
  /// layer-table leaf, the leaf's operator call on the object.
  VarPtr superAttr(Frame &f, const VarPtr &super, const std::string &name);
  /// The forward of layer-table leaf `leafClass` bound to `layer`, or unbound for a null layer
  /// (called with the layer first); calling it runs the leaf's table entry.
  static VarPtr leafForward(const VarPtr &layer, int leafClass);
  /// The first class of classIndex's MRO that the layer table names, or -1.
  int leafClassOf(int classIndex) const;
  VarPtr getItem(Frame &f, StatementIR &sir, VarPtr obj, VarPtr key);
  // Records.cpp: dataclasses that are dicts (transformers' ModelOutput).
  /// Whether `v` is an object of a record class (ClassDef.record_fields).
  bool isRecord(const VarPtr &v) const;
  /// Record(...): its fields from the arguments, None where not given.
  VarPtr makeRecord(Frame &f, const VarPtr &cls, const std::vector<VarPtr> &args,
                    const std::vector<std::pair<std::string, VarPtr>> &kwargs);
  /// The record's items: its fields that are not None, in order.
  static VarPtr recordItems(const VarPtr &record);
  /// record["name"] (an item), record[i] and record[a:b] (of the tuple of the items' values).
  VarPtr recordGetItem(Frame &f, StatementIR &sir, const VarPtr &record, const VarPtr &key);
  /// keys, values, items, get, to_tuple of a record, or null.
  static VarPtr recordMethod(const VarPtr &record, const std::string &name);
  /// x[index] for an integer tensor index: the rows it names.
  VarPtr indexRows(Frame &f, StatementIR &sir, const VarPtr &x, const VarPtr &index);
  /// x[i, j, ...] for integer tensors or ints naming x's leading dimensions' elements.
  /// x[b, ...] where b indexes x's dynamic batch with its own coordinates (batchIota): the
  /// rows picked per batch row, or null when the indices are not of that form.
  VarPtr indexBatchRows(Frame &f, StatementIR &sir, const VarPtr &x,
                        const std::vector<VarPtr> &indices);
  VarPtr indexPoints(Frame &f, StatementIR &sir, const VarPtr &x,
                     const std::vector<VarPtr> &indices);
  /// obj[key] = value and del obj[key] on Python lists and dicts; on a tensor, the new tensor
  /// replaces the old one throughout `state` (TensorUpdate.cpp).
  void setItem(ExecState &state, StatementIR &sir, const VarPtr &obj, const VarPtr &key,
               const VarPtr &value);
  VarPtr tensorSetItem(Frame &f, StatementIR &sir, const VarPtr &x, const VarPtr &key,
                       const VarPtr &value);
  /// x.fill_(value), x.zero_(): every element of x becomes `value`; x may be one indexing of
  /// a tensor (qkv_bias[a:b].zero_()), which is written through it. Returns the new x.
  VarPtr fillInPlace(ExecState &state, StatementIR &sir, const VarPtr &x, const VarPtr &value);
  /// x.resize_as_(t): `resized` takes x's place everywhere (x may not share memory with a view).
  VarPtr resizeInPlace(ExecState &state, const VarPtr &x, const VarPtr &resized);
  /// Every reference to `from` in the state (frames, containers, cells, globals) becomes `to`.
  static void replaceEverywhere(ExecState &state, const VarPtr &from, const VarPtr &to);
  /// Whether a tensor the state holds (other than `except`) is a view of `base`.
  static bool viewed(const ExecState &state, const VarPtr &base, const VarPtr &except = nullptr);
  void deleteItem(Frame &f, const VarPtr &obj, const VarPtr &key);
  /// `a is b` (`is not` when negated): identity of variables, or of None and bools.
  VarPtr identical(Frame &f, const VarPtr &a, const VarPtr &b, bool negate);
  /// A constant slice's start, stop and step over n items, as CPython's slice.indices clamps
  /// them (a negative step's stop may be -1: before the first item).
  std::array<int64_t, 3> sliceBounds(Frame &f, const VarPtr &key, int64_t n);
  VarPtr compare(Frame &f, StatementIR &sir, const std::string &op, VarPtr a, VarPtr b);
  bool truthy(Frame &f, const VarPtr &v);
  std::vector<VarPtr> iterate(Frame &f, StatementIR &sir, const VarPtr &v);
  /// One more iteration of the loop at f.pc: E3008 past the unroll limit.
  void countIteration(Frame &f, const StatementIR &sir);
  /// How many times longer a loop that emits no statement may run.
  static constexpr int kPythonLoopFactor = 16;
  void pushFrame(ExecState &state, const VarPtr &function, std::vector<VarPtr> args,
                 std::vector<std::pair<std::string, VarPtr>> kwargs);
  VarPtr global(int namespaceIndex, const std::string &name, Frame &f);
  /// The state's slot for a global, or null.
  static GlobalSlot *slotOf(ExecState &state, int namespaceIndex, const std::string &name);

  /// Ends the segment where a call's result has as many rows as a kernel counts (nonzero,
  /// x[mask]; ProducedSizes.cpp): `count` becomes a new size s_k, each of `bounded` continues
  /// as its first s_k rows, and `result` builds what the call returns from those and k.
  void produceSize(Frame &f, const std::string &what, const VarPtr &count,
                   const std::vector<VarPtr> &bounded,
                   const std::function<VarPtr(const std::vector<VarPtr> &, int)> &result,
                   const SizeEnd &end);

  /// tensorCall of API `callee` (the statements the data-dependent calls are made of).
  VarPtr apiCall(Frame &f, StatementIR &sir, const std::string &callee, std::vector<VarPtr> args,
                 std::vector<std::pair<std::string, VarPtr>> kwargs = {});
  /// The rows of `rows` a 1-d bool `mask` of as many elements selects, at their bound (the
  /// mask's element count; row 0 past the count), and how many it selects.
  struct SelectedRows {
    VarPtr rows, count;
  };
  SelectedRows selectRows(Frame &f, StatementIR &sir, const VarPtr &mask, const VarPtr &rows);

public:
  /// x[mask] with a bool tensor `mask` over x's leading dimensions: the rows it selects, a
  /// produced size; false for any other key.
  bool countedSubscript(Frame &f, StatementIR &sir, const VarPtr &x, const VarPtr &key);
  /// x[:n] (x[:-n], x[:k]) of rows a kernel counted: its first rows, a size of their own;
  /// false for another slice.
  bool firstRows(Frame &f, StatementIR &sir, const VarPtr &x, const VarPtr &key);
  /// The data-dependent operators (nonzero, argwhere, masked_select, where(cond)) called as
  /// `name` (torch.nonzero, or a tensor method's name): false when `name` is none of them.
  bool producedSizeCall(Frame &f, StatementIR &sir, const std::string &name, VarPtr self,
                        std::vector<VarPtr> args,
                        const std::vector<std::pair<std::string, VarPtr>> &kwargs);
  /// min() / max() (`builtin`) of ints where one is a size a kernel counted: a size of its own,
  /// counted from theirs (torchvision's min(1000, len(scores))); false where none is counted.
  bool countedExtreme(Frame &f, StatementIR &sir, const std::string &builtin,
                      const std::vector<VarPtr> &items);
  /// Whether size `v` is one a kernel counted (or derived from one).
  bool isCountedSize(const VarPtr &v) const;
  /// A counted size no value the program holds (nor `bounded`) has: one a new count may
  /// bind again, once every symbol is taken; -1 where each is live.
  int deadCountedSize(const std::vector<VarPtr> &bounded) const;
  /// torch.cat / paddle.concat of rows of sizes a kernel counted (a detector's levels): each
  /// part copied after the ones before it into rows at their bounds, the rows so filled a
  /// size of their own; false for other concatenations.
  bool countedConcat(Frame &f, StatementIR &sir, const std::vector<VarPtr> &args,
                     const std::vector<std::pair<std::string, VarPtr>> &kwargs);
  /// The static bound of size `size` (g * a counted size's bound, or the number it is).
  std::optional<int64_t> boundOf(int64_t size) const;
  /// topk(x, k) with k a size known at run time (a counted one): x's rows sorted, their first
  /// k; false where k is a number.
  bool countedTopk(Frame &f, StatementIR &sir, const std::vector<VarPtr> &args,
                   const std::vector<std::pair<std::string, VarPtr>> &kwargs);
  /// unique / unique_consecutive (`op`: torch's or paddle's, no dim): the values at the
  /// starts of x's runs of equal elements (sorted first for unique), a size counted at their
  /// starts; the inverse, the counts (and paddle's first indices) as each framework returns
  /// them.
  void countedUnique(Frame &f, StatementIR &sir, const std::string &op,
                     const std::vector<VarPtr> &args,
                     const std::vector<std::pair<std::string, VarPtr>> &kwargs);

private:
  /// Ends the segment at a call the host must run (--allow-host-callbacks); false when
  /// host callbacks are off.
  bool hostCallback(Frame &f, const std::string &callee, const std::vector<VarPtr> &args,
                    const std::vector<std::pair<std::string, VarPtr>> &kwargs, VarPtr result);

  const trace::Trace &trace_;
  const OpcodeTable *opcodes_; // the trace's CPython version
  TranslateOptions options_;
  std::optional<Break> pendingBreak_; // set by a call that ends the segment
  size_t handlerFloor_ = 0;           // frames below it belong to a callNow's caller
  std::string framework_;             // "paddle" or "torch": which tensor methods apply
  int tensorCounter_ = 0;
  std::map<std::pair<int, std::string>, VarPtr> globals_;
  std::map<uint32_t, VarPtr> identities_; // Value.identity: one variable per recorded object
  bool loweringComplex_ = false;           // complexCall's own calls are on the pairs
  std::map<int, VarPtr> functions_;
  std::map<std::string, VarPtr> weights_; // a model's parameters and buffers by name
  std::set<std::string> buffers_;          // which of them are buffers
  std::vector<VarPtr> weightOrder_;        // the same, in the order they were read
  std::vector<std::pair<VarPtr, SourceLoc>> consumed_;
  std::vector<SizeGuard> batchGuards_;
  std::vector<DynamicSymbol> symbols_;
  ops::DerivedSizes derivedSizes_;
  std::set<int> guardedSizes_; // derived sizes guarded to be at least 1
  std::map<CountKey, int> countedSizes_;      // the size each count made (produceSize)
  std::map<int, int64_t> producedBounds_;     // a counted size's static bound, where it has one
  std::array<int64_t, ops::kMaxSymbols> sizeMax_{}; // the inputs' sizes' (sizeMax)
  std::set<const Variable *> consumedSet_;
  std::vector<std::map<uint32_t, size_t>> offsetIndex_; // per code object
  // Each argument the program may change (tensor, list, dict) and its items and keys as
  // passed, to tell whether it did.
  struct Passed {
    VarPtr value;
    std::vector<VarPtr> items, keys;
  };
  std::map<std::string, Passed> argumentsAsPassed_;
};

/// `index` of the instruction at byte `offset` in code object `codeIndex`.
size_t instructionAt(const trace::Trace &trace, int codeIndex, uint32_t offset);

} // namespace sotc::frontend

#endif // SOTC_FRONTEND_EXECUTOR_H
