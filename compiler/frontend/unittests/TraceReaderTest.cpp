#include "compiler/frontend/TraceReader.h"
#include "compiler/support/Diagnostics.h"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <google/protobuf/text_format.h>
#include <random>

using namespace sotc;
using namespace sotc::frontend;

namespace {

/// def f(x): return x   — as CPython 3.11 compiles it.
trace::Trace minimalTrace() {
  trace::Trace t;
  t.set_format_version(kTraceFormatVersion);
  t.mutable_python()->set_major(3);
  t.mutable_python()->set_minor(11);
  t.mutable_python()->set_implementation("cpython");
  trace::CodeObject *code = t.add_code_objects();
  code->set_name("f");
  code->set_qualname("f");
  code->set_filename("prog.py");
  code->set_firstlineno(1);
  code->set_argcount(1);
  code->add_varnames("x");
  code->add_consts()->mutable_none();
  code->set_code(std::string("\x97\x00\x7c\x00\x53\x00", 6));
  auto addIns = [&](unsigned offset, unsigned opcode, const char *name, int arg) {
    trace::Instruction *ins = code->add_instructions();
    ins->set_offset(offset);
    ins->set_opcode(opcode);
    ins->set_opname(name);
    if (arg >= 0) {
      ins->set_has_arg(true);
      ins->set_arg(arg);
    }
    return ins;
  };
  addIns(0, 151, "RESUME", 0);
  addIns(2, 124, "LOAD_FAST", 0);
  addIns(4, 83, "RETURN_VALUE", -1);
  trace::Function *fn = t.add_functions();
  fn->set_code(0);
  fn->set_namespace_(0);
  fn->set_qualname("f");
  t.add_namespaces()->set_module("prog");
  trace::Input *input = t.add_inputs();
  input->set_name("x");
  trace::TensorSpec *spec = input->mutable_value()->mutable_tensor();
  spec->set_dtype(trace::FLOAT32);
  spec->add_dims()->set_size(4);
  return t;
}

/// Runs validation and returns the code plus message it failed with.
std::pair<DiagCode, std::string> failure(const trace::Trace &t) {
  try {
    validateTrace(t, "t.pb");
  } catch (const CodedError &e) {
    return {e.code(), e.what()};
  }
  FAIL("validation passed but should have failed");
  return {};
}

trace::Instruction &ins(trace::Trace &t, int i) {
  return *t.mutable_code_objects(0)->mutable_instructions(i);
}

} // namespace

TEST_CASE("a well-formed trace validates", "[reader]") {
  CHECK_NOTHROW(validateTrace(minimalTrace(), "t.pb"));
}

TEST_CASE("versions are checked first", "[reader]") {
  trace::Trace t = minimalTrace();
  t.set_format_version(7);
  auto [code, msg] = failure(t);
  CHECK(code == DiagCode::TraceFormatVersion);
  CHECK(msg == "t.pb: trace format version 7 is not supported (this sotc reads version 1; "
               "re-trace with the matching tracer)");

  t = minimalTrace();
  t.mutable_python()->set_minor(14);
  std::tie(code, msg) = failure(t);
  CHECK(code == DiagCode::TracePythonVersion);
  CHECK(msg == "t.pb: traces from cpython 3.14 are not supported (supported: CPython 3.11, "
               "3.12, 3.13)");

  t = minimalTrace();
  t.mutable_python()->set_implementation("pypy");
  CHECK(failure(t).first == DiagCode::TracePythonVersion);
}

TEST_CASE("a trace's framework is torch, paddle or unnamed", "[reader]") {
  trace::Trace t = minimalTrace();
  for (const char *framework : {"", "torch", "paddle"}) {
    t.set_framework(framework);
    CHECK_NOTHROW(validateTrace(t, "t.pb"));
  }
  t.set_framework("jax");
  auto [code, msg] = failure(t);
  CHECK(code == DiagCode::TraceFramework);
  CHECK(msg == "t.pb: unknown framework 'jax' (the trace's methods are torch's or paddle's)");
}

TEST_CASE("references must resolve", "[reader]") {
  trace::Trace t = minimalTrace();
  t.set_entry_function(3);
  CHECK(failure(t) == std::make_pair(DiagCode::TraceBadReference,
                                     std::string("t.pb: entry function 3 does not exist "
                                                 "(1 functions)")));
  t = minimalTrace();
  t.mutable_functions(0)->set_code(9);
  CHECK(failure(t).second == "t.pb: function 0 'f': code object 9 does not exist (the trace "
                             "has 1)");
  t = minimalTrace();
  t.mutable_code_objects(0)->mutable_consts(0)->set_code(5);
  CHECK(failure(t).first == DiagCode::TraceBadReference);
  t = minimalTrace();
  t.mutable_namespaces(0)->add_globals()->mutable_value()->set_function(2);
  CHECK(failure(t).second == "t.pb: global '' of module 'prog': function 2 does not exist "
                             "(the trace has 1)");
}

TEST_CASE("code objects may not contain themselves", "[reader]") {
  trace::Trace t = minimalTrace();
  t.mutable_code_objects(0)->add_consts()->set_code(0);
  CHECK(failure(t) == std::make_pair(DiagCode::TraceBadReference,
                                     std::string("t.pb: code object 'f' (prog.py:1) contains "
                                                 "itself through its constants")));
}

TEST_CASE("functions must fit their code", "[reader]") {
  trace::Trace t = minimalTrace();
  t.mutable_functions(0)->add_closure()->mutable_none();
  CHECK(failure(t) == std::make_pair(DiagCode::TraceBadFunction,
                                     std::string("t.pb: function 0 'f': 1 closure cells for 0 "
                                                 "free variables")));
  t = minimalTrace();
  t.mutable_functions(0)->add_defaults()->mutable_none();
  t.mutable_functions(0)->add_defaults()->mutable_none();
  CHECK(failure(t).first == DiagCode::TraceBadFunction);
}

TEST_CASE("instructions are checked against the opcode table", "[reader]") {
  trace::Trace t = minimalTrace();
  ins(t, 1).set_opcode(255);
  CHECK(failure(t).second == "t.pb: code object 'f' (prog.py:1) offset 2: opcode 255 "
                             "('LOAD_FAST') does not exist in CPython 3.11");
  CHECK(failure(t).first == DiagCode::TraceUnknownOpcode);

  t = minimalTrace();
  ins(t, 1).set_opname("LOAD_CONST");
  CHECK(failure(t).second == "t.pb: code object 'f' (prog.py:1) offset 2: opname "
                             "'LOAD_CONST' does not match opcode 124 (LOAD_FAST)");

  t = minimalTrace();
  ins(t, 1).set_arg(3);
  CHECK(failure(t).first == DiagCode::TraceBadInstruction); // disagrees with co_code
  t.mutable_code_objects(0)->clear_code();
  CHECK(failure(t) == std::make_pair(DiagCode::TraceArgOutOfRange,
                                     std::string("t.pb: code object 'f' (prog.py:1) offset 2: "
                                                 "LOAD_FAST argument 3 indexes the local "
                                                 "variables entry 3, but it has 1")));

  t = minimalTrace();
  ins(t, 2).set_offset(3);
  CHECK(failure(t).first == DiagCode::TraceBadInstruction);

  t = minimalTrace();
  ins(t, 2).set_has_arg(true);
  CHECK(failure(t).second == "t.pb: code object 'f' (prog.py:1) offset 4: RETURN_VALUE takes "
                             "no argument");
}

TEST_CASE("jump targets land on instruction boundaries", "[reader]") {
  trace::Trace t = minimalTrace();
  trace::CodeObject &code = *t.mutable_code_objects(0);
  // JUMP_FORWARD 0 at offset 2: jumps to 4, the RETURN_VALUE.
  code.set_code(std::string("\x97\x00\x6e\x00\x53\x00", 6));
  ins(t, 1).set_opcode(110);
  ins(t, 1).set_opname("JUMP_FORWARD");
  ins(t, 1).set_has_jump_target(true);
  ins(t, 1).set_jump_target(4);
  CHECK_NOTHROW(validateTrace(t, "t.pb"));

  ins(t, 1).set_jump_target(5);
  CHECK(failure(t) == std::make_pair(DiagCode::TraceBadJumpTarget,
                                     std::string("t.pb: code object 'f' (prog.py:1) offset 2: "
                                                 "JUMP_FORWARD argument 0 does not agree with "
                                                 "its recorded jump target 5")));
  ins(t, 1).set_jump_target(4);
  code.set_code(std::string("\x97\x00\x6e\x07\x53\x00", 6));
  ins(t, 1).set_arg(7);
  CHECK(failure(t).first == DiagCode::TraceBadJumpTarget);

  t = minimalTrace();
  trace::ExceptionEntry *e = t.mutable_code_objects(0)->add_exception_entries();
  e->set_start(0);
  e->set_end(4);
  e->set_target(3);
  CHECK(failure(t).first == DiagCode::TraceBadJumpTarget);
}

TEST_CASE("code-object constants are limited to marshal's kinds", "[reader]") {
  trace::Trace t = minimalTrace();
  t.mutable_code_objects(0)->mutable_consts(0)->mutable_list_value();
  CHECK(failure(t) == std::make_pair(DiagCode::TraceBadConstant,
                                     std::string("t.pb: code object 'f' (prog.py:1) constant "
                                                 "0: a constant cannot be a list_value")));
}

TEST_CASE("inputs need a dtype, sizes and unique names", "[reader]") {
  trace::Trace t = minimalTrace();
  t.mutable_inputs(0)->mutable_value()->mutable_tensor()->set_dtype(trace::DTYPE_UNSPECIFIED);
  CHECK(failure(t).second == "t.pb: input 'x': tensor has no valid dtype");
  t = minimalTrace();
  t.mutable_inputs(0)->mutable_value()->mutable_tensor()->mutable_dims(0)->set_size(-2);
  CHECK(failure(t).first == DiagCode::TraceBadInput);
  t = minimalTrace();
  *t.add_inputs() = t.inputs(0);
  CHECK(failure(t).second == "t.pb: input 'x' appears twice");
}

TEST_CASE("encodings follow the file extension", "[reader]") {
  CHECK(encodingForPath("a.pb") == TraceEncoding::Binary);
  CHECK(encodingForPath("dir.pb/a.pbtxt") == TraceEncoding::Text);
  CHECK_THROWS_AS(encodingForPath("a.json"), CodedError);
}

TEST_CASE("text traces parse, and their errors have a position", "[reader]") {
  std::string text;
  REQUIRE(google::protobuf::TextFormat::PrintToString(minimalTrace(), &text));
  trace::Trace parsed = parseTrace(text, TraceEncoding::Text, "t.pbtxt");
  CHECK(parsed.code_objects(0).instructions_size() == 3);
  try {
    parseTrace("format_version: 1\npython { major: }\n", TraceEncoding::Text, "t.pbtxt");
    FAIL("expected a parse error");
  } catch (const CodedError &e) {
    CHECK(e.code() == DiagCode::TraceTextMalformed);
    CHECK(std::string(e.what()).rfind("t.pbtxt: not a valid text trace: line 2:", 0) == 0);
  }
}

TEST_CASE("every truncation and corruption gives a coded error or a valid trace",
          "[reader][robustness]") {
  std::string bytes = minimalTrace().SerializeAsString();
  auto check = [](const std::string &data) {
    try {
      validateTrace(parseTrace(data, TraceEncoding::Binary, "t.pb"), "t.pb");
    } catch (const CodedError &) {
    }
  };
  for (size_t n = 0; n < bytes.size(); ++n)
    CHECK_NOTHROW(check(bytes.substr(0, n)));
  std::mt19937 rng(1234);
  for (int round = 0; round < 5000; ++round) {
    std::string corrupt = bytes;
    for (int flips = 1 + round % 4; flips > 0; --flips)
      corrupt[rng() % corrupt.size()] = static_cast<char>(rng());
    CHECK_NOTHROW(check(corrupt));
  }
  CHECK_THROWS_AS(parseTrace("", TraceEncoding::Binary, "t.pb"), CodedError);
}

TEST_CASE("every committed testdata trace validates", "[reader][testdata]") {
  DIR *dir = opendir("testdata/traces");
  REQUIRE(dir);
  int count = 0;
  while (dirent *entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name.size() < 3 || name.substr(name.size() - 3) != ".pb")
      continue;
    INFO(name);
    CHECK_NOTHROW(loadTrace("testdata/traces/" + name));
    ++count;
  }
  closedir(dir);
  CHECK(count >= 25);
}
