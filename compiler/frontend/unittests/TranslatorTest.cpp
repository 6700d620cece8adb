// Variables, trackers, interpreter snapshots and guard selection.
#include "compiler/frontend/Executor.h"
#include "compiler/frontend/TraceReader.h"
#include "compiler/frontend/Translation.h"

#include <catch2/catch.hpp>

using namespace sotc;
using namespace sotc::frontend;

namespace {
Translation translateProgram(const std::string &name) {
  return translate(loadTrace("testdata/traces/" + name + ".pb"));
}

std::vector<std::string> guardConditions(const Translation &t) {
  std::vector<std::string> out;
  for (const Guard &g : t.guards)
    out.push_back(g.condition());
  return out;
}

VarPtr local(const std::string &name, PyConst value) {
  return Variable::constant_(value, Tracker{Tracker::Kind::Local, name, {}, {}, {}});
}
} // namespace

TEST_CASE("Python constants print as Python does", "[variables]") {
  CHECK(PyConst::ofFloat(1.0).repr() == "1.0");
  CHECK(PyConst::ofFloat(1e-5).repr() == "1e-05");
  CHECK(PyConst::ofFloat(0.1).repr() == "0.1");
  CHECK(PyConst::ofFloat(1e16).repr() == "1e16");
  CHECK(PyConst::ofInt(-3).repr() == "-3");
  CHECK(PyConst::ofBool(true).repr() == "True");
  CHECK(PyConst::none().repr() == "None");
  CHECK(PyConst::ofStr("it's").repr() == "\"it's\"");
  CHECK(PyConst::ofStr("a").repr() == "'a'");
  CHECK(PyConst::ofInt(1) == PyConst::ofFloat(1.0));
  CHECK_FALSE(PyConst::ofStr("1") == PyConst::ofInt(1));
  CHECK_FALSE(PyConst::none().truthy());
  CHECK(PyConst::ofStr("x").truthy());
}

TEST_CASE("trackers say where a value comes from", "[trackers]") {
  VarPtr sizes =
      Variable::make(Variable::Kind::List, Tracker{Tracker::Kind::Global, "SIZES", {}, {}, {}});
  Tracker item;
  item.kind = Tracker::Kind::GetItem;
  item.parent = sizes;
  item.key = PyConst::ofInt(1);
  CHECK(item.traceable());
  CHECK(item.expression() == "frame.f_globals['SIZES'][1]");
  CHECK(local("x", PyConst::ofInt(1))->tracker.expression() == "frame.f_locals['x']");
  Tracker computed = computedFrom({sizes});
  CHECK_FALSE(computed.traceable());
  item.parent = Variable::make(Variable::Kind::List, computed);
  CHECK_FALSE(item.traceable()); // an item of a computed list is computed too
}

TEST_CASE("snapshots share nothing mutable", "[executor]") {
  trace::Trace trace = loadTrace("testdata/traces/04_list.pb");
  Executor ex(trace, {});
  ExecState a = ex.start();
  // Give the entry frame a list, then copy the state and mutate the copy's list.
  VarPtr list = Variable::make(Variable::Kind::List);
  list->items.push_back(Variable::constant_(PyConst::ofInt(1)));
  a.frames.back().stack.push_back(list);
  a.frames.back().stack.push_back(list); // aliased twice
  ExecState b = Executor::clone(a);
  CHECK(Executor::signature(a) == Executor::signature(b));
  b.frames.back().stack.back()->items.push_back(Variable::constant_(PyConst::ofInt(2)));
  CHECK(list->items.size() == 1);
  // The aliasing survived the copy: both stack slots see the append.
  CHECK(b.frames.back().stack[b.frames.back().stack.size() - 2]->items.size() == 2);
  CHECK(Executor::signature(a) != Executor::signature(b));
  // Tensors are immutable and shared; the live tensors are the arguments, in order.
  std::vector<VarPtr> live = Executor::liveTensors(a);
  REQUIRE(live.size() == 2);
  CHECK(live[0]->tensorName == "var_0");
  CHECK(live[1]->tensorName == "var_1");
}

TEST_CASE("an input that feeds nothing is not guarded", "[guards]") {
  Translation t = translateProgram("33_guard_unused_input");
  CHECK(guardConditions(t) ==
        std::vector<std::string>{"MetaInfo.from_tensor(frame.f_locals['x']).guard_str() == '([2, "
                                 "3], paddle.float32, True)'",
                                 "MetaInfo.from_tensor(frame.f_locals['y']).guard_str() == '([2, "
                                 "3], paddle.float32, True)'",
                                 "frame.f_locals['n'] == 1"});
  CHECK(t.guards[2].loc.str() == "testdata/programs/33_guard_unused_input.py:7");
}

TEST_CASE("Python values that decide a branch are guarded; others are not", "[guards]") {
  Translation t = translateProgram("11_if_python");
  CHECK(
      guardConditions(t) ==
      std::vector<std::string>{
          "frame.f_locals['mode'] == 'scale'",
          "MetaInfo.from_tensor(frame.f_locals['x']).guard_str() == '([8], paddle.float32, True)'",
          "frame.f_locals['factor'] == 3"});
  // Container items: the container's type and length come first.
  t = translateProgram("10_globals");
  std::vector<std::string> g = guardConditions(t);
  REQUIRE(g.size() == 7);
  CHECK(g[2] == "isinstance(frame.f_globals['SCALES'], tuple)");
  CHECK(g[3] == "len(frame.f_globals['SCALES']) == 3");
  CHECK(g[4] == "frame.f_globals['SCALES'][0] == 1.0");
}

TEST_CASE("tensor branches compile both sides; loops become cycles", "[segments]") {
  Translation inlined = translateProgram("34_inlined_branch");
  REQUIRE(inlined.segments.size() == 3);
  CHECK(inlined.segments[0].end == Segment::End::Branch);
  CHECK(inlined.breaks ==
        std::vector<std::string>{
            "branch on a tensor value (testdata/programs/34_inlined_branch.py:6)"});

  Translation loop = translateProgram("29_tensor_while");
  REQUIRE(loop.segments.size() == 3);
  CHECK(loop.segments[1].onTrue == 1); // the loop body re-enters itself
  CHECK(loop.segments[1].onFalse == 2);
  CHECK(loop.segments[0].onFalse == 2); // both exits share the return segment

  Translation forIf = translateProgram("35_for_tensor_if");
  CHECK(forIf.segments.size() == 7); // merges at each loop head instead of 2^3 paths
}

TEST_CASE("mutations of lists and dicts show in the returned value", "[executor]") {
  Translation list = translateProgram("04_list");
  CHECK(list.segments[0].returnValue == "[var_3, var_1, var_2, var_2]");
  Translation dict = translateProgram("05_dict");
  CHECK(dict.segments[0].returnValue == "{'scale': 2.0, 'y': var_1, 'z': var_2}");
}

TEST_CASE("unsupported constructs are coded errors with the Python line", "[executor]") {
  try {
    translateProgram("32_big_constants");
    FAIL("expected an error");
  } catch (const CodedError &e) {
    CHECK(e.code() == DiagCode::FrontendUnsupportedConstruct);
    CHECK(std::string(e.what()) == "integer arithmetic beyond 64 bits is not supported "
                                   "(testdata/programs/32_big_constants.py:6)");
  }
}
