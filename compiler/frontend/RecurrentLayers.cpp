//===- RecurrentLayers.cpp - torch.nn.LSTM/GRU/RNN and paddle.nn.LSTM/GRU/SimpleRNN -------===//
//
// A recurrent layer's forward written out as operator calls, unrolled over its (static)
// sequence length: per layer and direction, one GEMM projects every step's input, then each
// step adds the hidden state's projection and applies the cell's gates. Both frameworks keep
// the weights cuDNN's way (weight_ih_l{k}[_reverse] [gates*H, in], gates i f g o for LSTM,
// r z n for GRU) and compute the same cells; they differ in layout defaults (torch's
// [T, B, I] unless batch_first, paddle's [B, T, I] unless time_major), in argument names and
// in how the final states come back.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"

namespace sotc::frontend {
namespace {
using K = Variable::Kind;
} // namespace

VarPtr Executor::recurrentLayer(ExecState &state, StatementIR &sir, const VarPtr &layer,
                                const std::string &className, std::vector<VarPtr> args,
                                Kwargs kwargs) {
  Frame &f = state.frames.back();
  bool torch = className.rfind("torch.", 0) == 0;
  auto unsupported = [&](const std::string &what) {
    fail(DiagCode::FrontendUnsupportedCall,
         "the layer " + className + " with " + what + " is not supported yet", f);
  };
  // forward(input, hx) / forward(inputs, initial_states, sequence_length)
  std::vector<std::string> names =
      torch ? std::vector<std::string>{"input", "hx"}
            : std::vector<std::string>{"inputs", "initial_states", "sequence_length"};
  std::vector<VarPtr> bound(names.size());
  if (args.size() > names.size())
    fail(DiagCode::FrontendPythonError,
         "TypeError: " + className + ".forward takes " + std::to_string(names.size()) +
             " arguments",
         f);
  std::copy(args.begin(), args.end(), bound.begin());
  for (auto &[name, value] : kwargs) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end() || bound[it - names.begin()])
      fail(DiagCode::FrontendPythonError,
           "TypeError: " + className + ".forward got an unexpected or repeated argument '" + name +
               "'",
           f);
    bound[it - names.begin()] = value;
  }
  auto none = [](const VarPtr &v) {
    return !v || (v->isConstant() && v->constant.kind == PyConst::Kind::None);
  };
  auto attr = [&](const std::string &name) { return getAttr(f, sir, layer, name); };
  auto integer = [&](const std::string &name) {
    VarPtr v = attr(name);
    consume(v, locOf(f));
    if (!isInt(v))
      unsupported("a " + name + " that is not an int");
    return v->constant.intValue;
  };
  auto number = [](int64_t v) { return Variable::constant_(PyConst::ofInt(v)); };
  auto op = [&](const std::string &name, std::vector<VarPtr> a, Kwargs kw = {}) {
    return tensorCall(f, sir, "api", name, name, std::move(a), std::move(kw));
  };
  auto item = [&](const VarPtr &x, VarPtr key) {
    return tensorCall(f, sir, "operator", "__getitem__", "__getitem__", {x, std::move(key)}, {});
  };
  auto columns = [&](const VarPtr &x, int64_t from, int64_t to) { // x[..., from:to]
    VarPtr s = Variable::make(K::Slice, constTracker());
    s->items = {number(from), number(to), Variable::constant_(PyConst::none())};
    VarPtr key = Variable::make(K::Tuple, constTracker());
    key->items = {Variable::constant_(PyConst{PyConst::Kind::Ellipsis}), s};
    return item(x, key);
  };
  auto arith = [&](const char *name, const VarPtr &a, const VarPtr &b) {
    return binaryOp(f, sir, name, false, a, b);
  };
  std::string api = torch ? "torch." : "paddle.";
  std::string functional = api + "nn.functional.";
  auto sigmoid = [&](const VarPtr &x) {
    return op(torch ? "torch.sigmoid" : functional + "sigmoid", {x});
  };
  auto tanh = [&](const VarPtr &x) { return op(api + "tanh", {x}); };
  auto linear = [&](const VarPtr &x, const VarPtr &w, const VarPtr &b) {
    VarPtr y = torch ? op("torch.matmul", {x, op("torch.t", {w})})
                     : op("paddle.matmul", {x, w},
                          {{"transpose_y", Variable::constant_(PyConst::ofBool(true))}});
    return none(b) ? y : arith("add", y, b);
  };
  auto stack = [&](std::vector<VarPtr> xs, int64_t axis) {
    VarPtr list = Variable::make(K::List, constTracker());
    list->items = std::move(xs);
    return op(api + "stack", {list, number(axis)});
  };
  auto concat = [&](std::vector<VarPtr> xs, int64_t axis) {
    VarPtr list = Variable::make(K::List, constTracker());
    list->items = std::move(xs);
    return op(torch ? "torch.cat" : "paddle.concat", {list, number(axis)});
  };

  // 1. The layer's configuration.
  VarPtr modeVar = attr("mode");
  consume(modeVar, locOf(f));
  std::string mode = modeVar->isConstant() ? modeVar->constant.text : "";
  if (mode != "LSTM" && mode != "GRU" && mode != "RNN_TANH" && mode != "RNN_RELU")
    unsupported("mode " + modeVar->repr());
  int64_t hidden = integer("hidden_size"), layers = integer("num_layers");
  int64_t directions =
      torch ? (truthy(f, attr("bidirectional")) ? 2 : 1) : integer("num_directions");
  bool batchMajor = torch ? truthy(f, attr("batch_first")) : !truthy(f, attr("time_major"));
  if (torch && mode == "LSTM" && integer("proj_size") != 0)
    unsupported("proj_size");
  if (truthy(f, attr("training")) && truthy(f, attr("dropout")))
    unsupported("dropout in training mode");
  if (!torch && !none(bound[2]))
    unsupported("sequence_length");
  VarPtr x = bound[0];
  if (!x || !x->isTensor() || x->meta.rank() != 3)
    unsupported("an input that is not a [sequence, batch, features] tensor");
  auto swap01 = [&](const VarPtr &v) { // [B, T, ...] <-> [T, B, ...]
    if (torch)
      return op("torch.transpose", {v, number(0), number(1)});
    VarPtr perm = Variable::make(K::List, constTracker());
    perm->items = {number(1), number(0), number(2)};
    return op("paddle.transpose", {v, perm});
  };
  if (batchMajor)
    x = swap01(x);
  int64_t steps = x->meta.shape[0];
  if (ops::isDynamicDim(steps))
    unsupported("a dynamic sequence length");
  if (steps > options_.maxLoopIterations)
    fail(DiagCode::FrontendLoopLimit,
         "a sequence of " + std::to_string(steps) + " steps cannot be unrolled (the limit is " +
             std::to_string(options_.maxLoopIterations) + ")",
         f);
  // 2. The initial states: given ([L*D, B, H], LSTM's as a pair), or zeros.
  VarPtr h0, c0;
  if (!none(bound[1])) {
    const VarPtr &given = bound[1];
    if (mode == "LSTM") {
      if (!given->isSequence() || given->items.size() != 2)
        fail(DiagCode::FrontendPythonError,
             "TypeError: " + className + " takes its initial states as (h, c)", f);
      h0 = given->items[0], c0 = given->items[1];
    } else {
      h0 = given;
    }
  }
  std::vector<VarPtr> finalH, finalC;
  VarPtr input = x;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<VarPtr> outputs; // per direction, [T, B, H]
    for (int64_t d = 0; d < directions; ++d) {
      std::string suffix = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      VarPtr wih = attr("weight_ih" + suffix), whh = attr("weight_hh" + suffix);
      auto bias = [&](const std::string &name) { // none without biases (bias=False)
        bool held = std::any_of(layer->keys.begin(), layer->keys.end(),
                                [&](const VarPtr &k) { return k->constant.text == name; });
        return held ? attr(name) : Variable::constant_(PyConst::none());
      };
      VarPtr bih = bias("bias_ih" + suffix), bhh = bias("bias_hh" + suffix);
      // 3. Every step's input projection at once: [T, B, gates*H].
      VarPtr projected = linear(input, wih, bih);
      VarPtr first = item(projected, number(0));
      VarPtr zeros = op(api + "zeros_like", {columns(first, 0, hidden)});
      int64_t index = l * directions + d;
      VarPtr h = h0 ? item(h0, number(index)) : zeros;
      VarPtr c = c0 ? item(c0, number(index)) : zeros;
      std::vector<VarPtr> out(steps);
      for (int64_t s = 0; s < steps; ++s) {
        int64_t t = d ? steps - 1 - s : s;
        VarPtr xg = item(projected, number(t)), hg = linear(h, whh, bhh);
        auto gate = [&](const VarPtr &g, int64_t k) {
          return columns(g, k * hidden, (k + 1) * hidden);
        };
        // 4. The cell.
        if (mode == "LSTM") {
          VarPtr all = arith("add", xg, hg);
          VarPtr i = sigmoid(gate(all, 0)), fg = sigmoid(gate(all, 1)), g = tanh(gate(all, 2)),
                 o = sigmoid(gate(all, 3));
          c = arith("add", arith("mul", fg, c), arith("mul", i, g));
          h = arith("mul", o, tanh(c));
        } else if (mode == "GRU") {
          VarPtr r = sigmoid(arith("add", gate(xg, 0), gate(hg, 0)));
          VarPtr z = sigmoid(arith("add", gate(xg, 1), gate(hg, 1)));
          VarPtr n = tanh(arith("add", gate(xg, 2), arith("mul", r, gate(hg, 2))));
          h = arith("add", n, arith("mul", z, arith("sub", h, n))); // (1 - z) n + z h
        } else {
          VarPtr pre = arith("add", xg, hg);
          h = mode == "RNN_TANH" ? tanh(pre)
                                 : op(torch ? "torch.relu" : functional + "relu", {pre});
        }
        out[t] = h;
      }
      outputs.push_back(stack(out, 0));
      finalH.push_back(h);
      if (mode == "LSTM")
        finalC.push_back(c);
    }
    input = directions == 1 ? outputs[0] : concat(outputs, -1);
  }
  // 5. The results in the framework's layout.
  VarPtr output = batchMajor ? swap01(input) : input;
  VarPtr hn = stack(finalH, 0);
  VarPtr states = hn;
  if (mode == "LSTM") {
    states = Variable::make(K::Tuple, constTracker());
    states->items = {hn, stack(finalC, 0)};
  }
  VarPtr result = Variable::make(K::Tuple, constTracker());
  result->items = {output, states};
  return result;
}

} // namespace sotc::frontend
