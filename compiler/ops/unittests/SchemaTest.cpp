#include "compiler/ops/Schema.h"
#include "compiler/ops/OpTable.h"

#include <catch2/catch.hpp>

using namespace sotc::ops;

TEST_CASE("signatures parse and print canonically", "[schema]") {
  Signature s = parseSignature("Tensor (Tensor x, Tensor y, *, Scalar alpha=1)");
  REQUIRE(s.params.size() == 3);
  CHECK(s.params[2].keywordOnly);
  CHECK(s.params[2].defaultValue->intValue == 1);
  CHECK(s.str() == "Tensor (Tensor x, Tensor y, *, Scalar alpha=1)");

  s = parseSignature("TensorList(Tensor x,IntList[1]? axis=None,Bool keepdim=False,"
                     "DataType? dtype=float16, String mode=\"up\", Float eps=1e-05, "
                     "IntList shape=[2, -1])");
  CHECK(s.returnType == ParamType::TensorList);
  CHECK(s.params[1].acceptsSingle);
  CHECK(s.params[1].optional);
  CHECK(s.params[3].defaultValue->dtypeValue == DType::Float16);
  CHECK(s.params[5].defaultValue->floatValue == Approx(1e-5));
  CHECK(s.str() == "TensorList (Tensor x, IntList[1]? axis=None, Bool keepdim=False, "
                   "DataType? dtype=float16, String mode=\"up\", Float eps=1e-05, "
                   "IntList shape=[2, -1])");
  CHECK(parseSignature("Tensor ()").params.empty());

  s = parseSignature("(Tensor values,Tensor  indices)(Tensor input, Int dim)");
  CHECK(s.returnType == ParamType::TensorList);
  CHECK(s.returnNames == std::vector<std::string>{"values", "indices"});
  CHECK(s.str() == "(Tensor values, Tensor indices) (Tensor input, Int dim)");
}

TEST_CASE("malformed signatures say where and why", "[schema]") {
  auto error = [](const std::string &text) {
    try {
      parseSignature(text);
    } catch (const SchemaError &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("Tensor (Tensr x)") == "column 9: unknown type 'Tensr'");
  CHECK(error("Tensor (Tensor)") == "column 15: expected a name");
  CHECK(error("Scalar (Tensor x)") == "column 7: the return type must be Tensor, TensorList or "
                                      "a tuple of tensors");
  CHECK(error("(Int a) (Tensor x)") == "column 5: a returned tuple holds tensors only");
  CHECK(error("(Tensor a (Tensor x)") == "column 11: expected ')'");
  CHECK(error("Tensor (Tensor x, Int y=None)") == "column 25: default None needs an optional "
                                                  "type ('Int?')");
  CHECK(error("Tensor (Tensor x, Bool y=3)") == "column 26: default 3 is not a Bool");
  CHECK(error("Tensor (Tensor x=None)") == "column 18: default None needs an optional type "
                                           "('Tensor?')");
  CHECK(error("Tensor (Int a=1, Int b)") == "column 23: parameter 'b' without a default "
                                            "follows one with a default");
  CHECK(error("Tensor (Tensor x, Tensor x)") == "column 27: parameter 'x' appears twice");
  CHECK(error("Tensor (Tensor x, *, *, Int y=1)") == "column 22: '*' appears twice");
  CHECK(error("Tensor (String s=\"abc)") == "column 18: unterminated string");
  CHECK(error("Tensor (Tensor x) extra") == "column 19: unexpected text after the parameter list");
  CHECK(error("Tensor (Int[1] x)") == "column 12: only IntList and FloatList take a size");
  CHECK(error("Tensor (Tensor x") == "column 17: expected ')'");
}

TEST_CASE("argument types follow the schema", "[schema]") {
  Signature s = parseSignature("Tensor (Tensor t, Scalar s, Int i, Float f, Bool b, IntList l, "
                               "IntList[1] l1, DataType d, String str, TensorList ts, Index ix, "
                               "FloatList[1] f1, FloatList fl)");
  auto p = [&](size_t i) { return s.params[i]; };
  Arg tensor = Arg::ofTensor({{2}, DType::Float32});
  CHECK(argMatches(p(0), tensor));
  CHECK_FALSE(argMatches(p(0), Arg::ofInt(1)));
  CHECK(argMatches(p(1), Arg::ofBool(true)));
  CHECK(argMatches(p(1), Arg::ofFloat(1.5)));
  CHECK_FALSE(argMatches(p(1), tensor));
  CHECK(argMatches(p(2), Arg::ofInt(3)));
  CHECK_FALSE(argMatches(p(2), Arg::ofBool(true)));
  CHECK(argMatches(p(3), Arg::ofInt(3)));
  CHECK_FALSE(argMatches(p(4), Arg::ofInt(1)));
  CHECK(argMatches(p(5), Arg::tuple({Arg::ofInt(1), Arg::ofInt(2)})));
  CHECK_FALSE(argMatches(p(5), Arg::ofInt(1)));
  CHECK(argMatches(p(6), Arg::ofInt(1)));
  CHECK_FALSE(argMatches(p(6), Arg::list({Arg::ofFloat(1)})));
  CHECK(argMatches(p(7), Arg::ofString("paddle.float16")));
  CHECK_FALSE(argMatches(p(7), Arg::ofString("float33")));
  CHECK(argMatches(p(8), Arg::ofString("x")));
  CHECK(argMatches(p(9), Arg::list({tensor, tensor})));
  CHECK_FALSE(argMatches(p(9), Arg::list({tensor, Arg::ofInt(1)})));
  CHECK(argMatches(p(10), Arg::tuple({Arg::ofInt(0), Arg::ellipsis(), Arg::none()})));
  CHECK_FALSE(argMatches(p(10), tensor));
  CHECK(argMatches(p(11), Arg::ofFloat(2.5)));
  CHECK(argMatches(p(11), Arg::tuple({Arg::ofInt(2), Arg::ofFloat(1.5)})));
  CHECK_FALSE(argMatches(p(11), Arg::list({Arg::ofString("2")})));
  CHECK_FALSE(argMatches(p(12), Arg::ofFloat(2.5)));
  CHECK(argMatches(p(12), Arg::list({Arg::ofFloat(2.5)})));
}

TEST_CASE("the operator table parses, and every signature prints back to itself",
          "[schema][table]") {
  const OpTable &table = OpTable::get();
  CHECK(table.entries().size() > 200);
  for (const auto &entry : table.entries())
    for (const Signature &s : entry->signatures) {
      INFO(entry->name << ": " << s.str());
      CHECK(parseSignature(s.str()).str() == s.str());
    }
  CHECK(table.lookup("paddle.tensor.math.add") == table.lookup("paddle.add"));
  CHECK(table.lookup("torch.nn.functional.sigmoid") == table.lookup("torch.sigmoid"));
  CHECK(table.lookup("__iadd__") == table.lookup("__add__"));
  CHECK(table.lookup("paddle.nonexistent") == nullptr);
}
