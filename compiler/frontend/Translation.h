//===- Translation.h - What the frontend produces from a trace ----------------------------===//
//
// A translation is a segment graph: each segment is one StatementIR subgraph (SIR_N) that runs
// from an entry state to a return, a branch on a tensor value (a decision node reading one
// scalar), a host callback, or a `raise` that a tensor's value chose. Guards say when the whole
// translation is valid.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_FRONTEND_TRANSLATION_H
#define SOTC_FRONTEND_TRANSLATION_H

#include "compiler/frontend/Variables.h"
#include "compiler/frontend/trace.pb.h"

#include <set>
#include <string>
#include <vector>

namespace sotc::frontend {

/// One Python-level call on tensors, as PaddleSOT records it.
struct Statement {
  std::string kind;   // "api", "method", "operator"
  std::string callee; // printed name: "paddle.add", "sum", "__add__"
  std::string opName; // the operator-table entry: "paddle.add", "Tensor.sum", "__add__"
  std::vector<VarPtr> args;
  std::vector<std::pair<std::string, VarPtr>> kwargs;
  std::vector<VarPtr> outputs; // tensors
  bool listResult = false;     // the call returns a list (split)
  SourceLoc loc;
};

struct StatementIR {
  std::string name; // SIR_0
  std::vector<VarPtr> inputs;
  std::vector<VarPtr> outputs;
  std::vector<Statement> statements;

  /// PaddleSOT's text form.
  std::string str() const;
};

struct Guard {
  // Keys: a dict's keys in order (a lookup that missed, or `in`, depends on all of them).
  /// Batch: a decision on the dynamic batch's size, which it keeps: `>= 2` or `!= 4`.
  /// Relation: two named sizes the program needs equal: `== frame.f_locals['x'].shape[0]`.
  enum class Kind { TensorMeta, Equal, Type, Length, Keys, Batch, Relation };
  Kind kind;
  std::string expression; // where the value is read: frame.f_locals['x']
  std::string expected;   // '([2, 3], paddle.float32, True)', 1, list, 3, ['a', 'b']
  SourceLoc loc;          // the line that made the program depend on it

  /// One clause of the guard lambda.
  std::string condition() const;
  const char *kindName() const;
};

/// A change the traced function makes outside its result: a module global it assigns or
/// deletes, or an argument (list or dict) it mutates, applied by the host after the call; or
/// a model's weight it writes in place (a KV cache, a step counter): state, which the runtime
/// keeps for the next call.
struct SideEffect {
  enum class Kind { Global, DeleteGlobal, Argument, State };
  Kind kind;
  std::string name; // the global's, the parameter's or the weight's
  VarPtr value;     // the new value (null when deleted)
};

struct Segment {
  // Size: a kernel counted a size (nonzero's); the runtime reads it (output 0) and goes on.
  enum class End { Return, Branch, HostCallback, Raise, Size };
  StatementIR sir;
  End end = End::Return;
  std::string reason; // why the segment ends (branch/host callback), for explain
  SourceLoc endLoc;
  int onTrue = -1, onFalse = -1; // Branch: successor segments (the condition is output 0)
  // Branch: the tensors passed to each successor's inputs, position by position.
  std::vector<VarPtr> trueArgs, falseArgs;
  int next = -1;         // HostCallback, Size: the segment after it
  int sizeSymbol = -1;   // Size: the size s_k output 0 counts
  int64_t sizeBound = 0; // Size: the rows it counts at most (a dimension: dynamic where the
                         // rows selected from are)
  std::string callee;                      // HostCallback: what the host runs (print, Tensor.numpy)
  std::vector<VarPtr> callbackArgs;        // HostCallback: the values the host call reads
  std::vector<std::string> callbackKwargs; // HostCallback: names of callbackArgs' keyword tail
  VarPtr callbackResult;                   // HostCallback: what the call returns
  std::vector<VarPtr> nextArgs;            // HostCallback, Size: tensors passed to `next`
  std::string returnValue;                 // Return: the Python value's structure, e.g. (var_3, 2)
  VarPtr result; // Return: the value itself (tensors, constants, containers)
  // Return: what the call changed besides its result, for the caller to apply after it.
  std::vector<SideEffect> sideEffects;
  // Raise: the program's exception, uncaught, on a side a tensor's value chose (`assert
  // x.max().item() <= n`): its builtin class (a traced subclass: the builtin it derives from),
  // its class's own name, and its str().
  std::string exceptionType, exceptionClass, exceptionMessage;
};

struct Translation {
  std::string entry;              // the entry function's qualname
  std::vector<VarPtr> parameters; // its parameters, as traced (Variable::parameter names them)
  std::vector<Segment> segments;  // segment 0 is the entry
  std::vector<Guard> guards;
  std::vector<std::string> breaks; // "reason (file:line)" per graph break, in order
  std::vector<int64_t> sizeMax;    // per size, the least `<= N` guard's N (0: unbounded)
  std::vector<ops::SizeOffset> derivedSizes; // sizes derived from the inputs' (T - 1)
  std::vector<int> producedSizes;            // sizes kernels count (nonzero's), each a Size end's

  /// The weights the program writes in place (SideEffect::Kind::State), by name.
  std::set<std::string> stateWeights() const;

  std::string sirText() const; // every segment's StatementIR
  std::string guardTable() const;
  std::string guardLambda() const; // lambda frame: ... and ...
  std::string explain() const;
};

/// Two dynamic sizes the inputs name apart (f32[B,4] and f32[N,4]) that the program needs to
/// be one (x + y, `if B == N`): the later name is the earlier size, guarded.
struct SizeRelation {
  std::string kept, merged; // the names (`?` for the unnamed size)
  SourceLoc loc;            // the line that needs them equal
};

/// A size the inputs name that the program splits (x.view(B, T // 2, 2, C), [?, 6] viewed as
/// (-1, 4)): a multiple of `factor`, guarded.
struct SizeMultiple {
  std::string name;
  int64_t factor = 1;
  SourceLoc loc; // the line that splits it
};

struct TranslateOptions {
  bool allowHostCallbacks = false;  // print(tensor), x.numpy(), --break-on: host callbacks
  std::vector<std::string> breakOn; // API names that force a boundary
  int maxInlineDepth = 64; // library code nests deep: model, layer, hub wrapper, config hooks
  int maxLoopIterations = 1024; // per loop instruction, per segment
  int maxSegments = 64;
  std::vector<SizeRelation> sameSizes;     // found by earlier attempts of translate()
  std::vector<SizeMultiple> sizeMultiples; // the same
};

/// Translates a validated trace. Unsupported constructs throw CodedError (E3xxx).
Translation translate(const trace::Trace &trace, const TranslateOptions &options = {});

} // namespace sotc::frontend

#endif // SOTC_FRONTEND_TRANSLATION_H
