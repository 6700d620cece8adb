//===- Variables.h - Symbolic Python values and where they came from --------------------===//
//
// The executor simulates CPython on Variables (PaddleSOT's model): Python constants fold,
// containers keep their mutations, tensors carry metadata only. Every Variable has a Tracker
// saying how to find it again from the frame (an argument, a global, an item of another
// variable) or that it was computed from other variables; guards are read off the trackers.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_FRONTEND_VARIABLES_H
#define SOTC_FRONTEND_VARIABLES_H

#include "compiler/ops/Types.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sotc::frontend {

/// A Python constant: None, bool, int, float, complex, str, bytes, Ellipsis.
struct PyConst {
  enum class Kind { None, Bool, Int, BigInt, Float, Complex, Str, Bytes, Ellipsis };
  Kind kind = Kind::None;
  bool boolValue = false;
  int64_t intValue = 0;
  double floatValue = 0, imagValue = 0;
  std::string text; // Str, Bytes, BigInt (decimal)

  static PyConst none() { return {}; }
  static PyConst ofBool(bool v);
  static PyConst ofInt(int64_t v);
  static PyConst ofFloat(double v);
  static PyConst ofStr(std::string v);

  bool isNumber() const {
    return kind == Kind::Bool || kind == Kind::Int || kind == Kind::Float || kind == Kind::BigInt;
  }
  double number() const;
  /// Python truthiness.
  bool truthy() const;
  /// Python's repr(): 1, 1.5, 'text', None, True.
  std::string repr() const;
  /// Python's str().
  std::string str() const;
  /// The type's name as Python prints it: int, float, str, NoneType.
  std::string typeName() const;
  bool operator==(const PyConst &o) const;
};

/// A line of the traced program.
struct SourceLoc {
  std::string file;
  int line = 0;
  std::string str() const { return file + ":" + std::to_string(line); }
};

struct Variable;
using VarPtr = std::shared_ptr<Variable>;

/// One Python frame being executed: a function's, or a generator's, suspended between its
/// items in the generator object (Variable::suspended).
struct Frame {
  int codeIndex = -1;
  int namespaceIndex = -1;
  std::vector<VarPtr> localsplus; // co_varnames, then cell-only names, then co_freevars
  std::vector<VarPtr> stack;
  size_t pc = 0;      // instruction index
  size_t current = 0; // the instruction executing (a caller's: its call), for handlers
  VarPtr kwNames;
  bool generator = false; // a generator's body: a yield suspends it, its return ends it
  VarPtr yielded;         // the item its last YIELD_VALUE produced, until the resumer takes it
  /// Per loop instruction, for the unroll limit: the iterations that emitted statements, all
  /// of them, and the statement count when it last ran. A loop of Python alone (a walk over a
  /// model's thousand modules) compiles to nothing and may run longer.
  struct LoopCount {
    int emitting = 0, total = 0;
    size_t statements = 0;
  };
  std::map<size_t, LoopCount> loopCounts;
};

/// How a variable can be found again from the frame, or what it was computed from.
struct Tracker {
  enum class Kind {
    Local,   // frame.f_locals['name']: an argument of the entry function
    Global,  // frame.f_globals['name'] (of the function's module)
    Closure, // a closure cell of the entry function, by free-variable name
    Const,   // a literal in the code: never guarded
    GetItem, // parent[key]
    GetAttr, // parent.name
    Weight,  // a model's parameter or buffer, by state-dict name (guards: shape and dtype)
    Computed // derived from `inputs` (guard those instead)
  };
  Kind kind = Kind::Computed;
  std::string name;
  VarPtr parent;
  PyConst key;
  std::vector<VarPtr> inputs;

  /// Whether a guard can read the value back from a frame.
  bool traceable() const;
  /// "frame.f_locals['x']", "frame.f_globals['SCALES'][1]".
  std::string expression() const;
};

struct Variable {
  enum class Kind {
    Constant,
    Tensor,
    Tuple,
    List,
    Dict,
    Range,
    Slice,
    Module,   // by dotted name
    External, // a library object by qualified name (paddle.add, paddle.float32)
    Builtin,  // a builtins function or type by name
    Function, // a user function (trace function index, or a function made by MAKE_FUNCTION)
    Method,   // a bound method: self + name
    Null,     // CPython's NULL stack marker
    Cell,
    Iterator,
    Object, // an instance of a user class: attributes in keys (names) and items
    Class,  // a user class
    Opaque
  };
  Kind kind = Kind::Opaque;
  Tracker tracker;

  PyConst constant;          // Constant
  ops::TensorMeta meta;      // Tensor
  bool stopGradient = true;  // Tensor
  // Tensor: a complex tensor as its (real, imaginary) pairs in a last dimension of 2
  // (ComplexTensors.cpp); Python sees the complex shape and dtype.
  bool complexPair = false;
  std::string tensorName;    // Tensor: var_N
  std::string parameter;     // the entry function's parameter it was passed as
  std::string global;        // a tensor input read from this module global
  std::string weight;        // a model's parameter or buffer: its state-dict name
  int64_t tracedLength = -1; // a container from the trace: its length as passed (guards)
  std::string passedRepr;    // a parameter: its value as passed, before the program mutated it
  VarPtr viewOf; // a tensor indexed or reshaped from this one (the frameworks share memory)
  VarPtr viewKey; // a view made by viewOf[viewKey]: the key, as it was then
  /// Tensor: arange(B) of a dynamic batch, reshaped or indexed with None only: its value at
  /// every point is the point's batch coordinate (as an index it names the batch's own rows).
  bool batchIota = false;
  /// Tensor: 0-d, the dynamic size or Python arithmetic on it (B * 2), computed at run time:
  /// no shape, slice bound or size may take it.
  bool ofDynamicSize = false;
  /// Tensor of ofDynamicSize: a quotient of a size that is not whole (T // 2 of T): the
  /// size's dimension and the divisor, which a shape taking it makes the size a multiple of.
  int64_t quotientOfDim = 0, quotientBy = 0;
  /// Opaque, a dynamic size (isDynamicSize): the dimension it is (ops::dynamicDim of s0, s1,
  /// ...; a product such as B * T, ops::productDim).
  int64_t sizeDim = ops::kDynamic;
  std::vector<VarPtr> items;             // Tuple, List, Slice (start, stop, step), Iterator source
  std::vector<VarPtr> keys;              // Dict (values in `items`)
  // Object, a layer: the kinds of hooks it registered, and the hooks its call runs around its
  // forward (trace.proto ForwardHook); kinds without functions are refused at the call.
  struct ForwardHook {
    bool after = false;
    VarPtr function;
    bool withKwargs = false;
  };
  std::vector<std::string> hooks;
  std::vector<ForwardHook> forwardHooks;
  VarPtr attributes; // Dict of a subclass: its instance's own attributes (an Object), or null
  std::vector<std::string> fields;       // Tuple: a named tuple's field names (values, indices)
  int64_t start = 0, stop = 0, step = 1; // Range
  std::string name;                      // Module, External, Builtin, Method, Opaque type, Function
  VarPtr self;                           // Method; Cell contents; itemRead: its tensor
  // Opaque: the Python number x.item() reads from the one-element tensor in `self`. It is
  // compared (a bool read the same way) and decides branches (a jump on a bool branches on
  // its tensor; each side continues with it as a constant), and nothing else.
  bool itemRead = false;
  /// A value only the host knows: a host callback's result or an x.item() bool.
  bool isHostValue() const { return kind == Kind::Opaque && name.rfind("host value of ", 0) == 0; }
  /// time.time() and the other clocks read in the program (CallsModules.cpp clockReading);
  /// `constant` says int (the _ns clocks) or float.
  bool isClockReading() const {
    return kind == Kind::Opaque && name.rfind("clock reading of ", 0) == 0;
  }
  // Function
  int functionIndex = -1; // a function of the trace (Trace.functions): its identity, however
                          // many variables (bound, unbound, read twice) stand for it
  int codeIndex = -1;
  int namespaceIndex = -1;
  std::vector<VarPtr> defaults;
  std::vector<std::pair<std::string, VarPtr>> kwdefaults;
  std::vector<VarPtr> closure; // Cell variables
  // Iterator
  size_t position = 0;
  // Iterator of a generator (a generator expression or function), pulled item by item as
  // CPython does: its frame, suspended after its last yield; null once it has returned.
  bool generator = false;
  std::shared_ptr<Frame> suspended;
  // Object, Class: the class (Trace.classes); an object made by the function may be changed
  int classIndex = -1;
  bool madeHere = false;
  bool layer = false;                // Object: a paddle.nn.Layer or torch.nn.Module
  std::string recordClass;           // Object of a record class: "module:qualname"
  // Opaque: the result of a call sotc cannot compile, standing in so that the translation goes
  // on to find the program's other unsupported calls; whatever uses it is unsupported too.
  bool unsupported = false;
  // An unsupported result of a refused pure operator (torch.rand, nonzero): its error, recorded
  // when something uses it; never used, the call is dead code and no error (wav2vec2's LayerDrop
  // draws torch.rand([]) that only training reads).
  std::string refusal;
  // Opaque: an exception object of this builtin class (KeyError), and the error it reports
  // if no handler catches it.
  std::string exceptionType, exceptionMessage;
  // ... and where the program's own `raise` statement raised it (file:line); empty for the
  // errors sotc finds itself (a missing key, a bad argument), which may be sotc's limits.
  SourceLoc raisedAt;
  std::vector<std::string> children; // a layer's sublayers (attribute names), in order

  static VarPtr constant_(PyConst c, Tracker t = {});
  static VarPtr make(Kind kind, Tracker t = {});

  bool isConstant() const { return kind == Kind::Constant; }
  bool isTensor() const { return kind == Kind::Tensor; }
  bool isSequence() const { return kind == Kind::Tuple || kind == Kind::List; }
  /// The Python type name: "int", "Tensor", "list", "module".
  std::string typeName() const;
  /// repr() of Python values; tensors print as their var name.
  std::string repr() const;
  /// str(): a constant's text, an exception's message, else repr().
  std::string str() const;
};

/// Appends the tensors reachable from `v` (through items, keys, cells, bound selves,
/// closures and defaults) to `out` in first-seen order; `seen` spans several calls.
void collectTensors(const VarPtr &v, std::vector<VarPtr> &out, std::set<const Variable *> &seen);

/// A computed variable's tracker.
Tracker computedFrom(std::vector<VarPtr> inputs);

/// Trackers point from an item back to its container, so Variables form reference cycles.
/// While an arena is active (one per translation) every new Variable is recorded, and the
/// arena's destructor clears all trackers, which breaks the cycles once guards are built.
class VariableArena {
public:
  VariableArena();
  ~VariableArena();
  VariableArena(const VariableArena &) = delete;
  VariableArena &operator=(const VariableArena &) = delete;

  static void record(const VarPtr &v);

private:
  std::vector<std::weak_ptr<Variable>> variables_;
  VariableArena *previous_;
};

/// Calls `fn` on every variable slot `v` holds: items, keys, self, defaults, keyword
/// defaults, closure cells, a suspended generator's locals and stack (const or mutable, as
/// `v` is).
template <typename V, typename F> void forEachChild(V &v, F &&fn) {
  for (auto &item : v.items)
    fn(item);
  for (auto &key : v.keys)
    fn(key);
  fn(v.self);
  fn(v.attributes);
  for (auto &d : v.defaults)
    fn(d);
  for (auto &kv : v.kwdefaults)
    fn(kv.second);
  for (auto &cell : v.closure)
    fn(cell);
  if (v.suspended) {
    for (auto &local : v.suspended->localsplus)
      fn(local);
    for (auto &item : v.suspended->stack)
      fn(item);
    fn(v.suspended->kwNames);
  }
}

} // namespace sotc::frontend

#endif // SOTC_FRONTEND_VARIABLES_H
